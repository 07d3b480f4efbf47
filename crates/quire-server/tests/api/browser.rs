//! The reader site in a real browser: headless Chromium, driven through chromedriver
//! (WebDriver, with fantoccini), against a test server. Each test starts its own chromedriver
//! on a port it picks (`--port=0`), so tests run in parallel, and keeps screenshots under
//! `target/tmp/browser/` (`CARGO_TARGET_TMPDIR`).
//!
//! Without chromedriver on the PATH these tests say so on stderr and pass, unless
//! `QUIRE_TEST_BROWSER=required` (set by `.ci/run`, which installs Debian's `chromium` and
//! `chromium-driver`): then a missing browser fails them.

use std::future::Future;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use crate::search::{new_space, write_main};
use crate::support::site::{SiteBuilder, handbook_pages, id, page, visitor_key, visitor_token};
use crate::support::{TestApp, TestUser};

/// How long a page or an element may take to appear: generous, as CI runs these beside
/// every other test on two cores.
const PATIENCE: Duration = Duration::from_secs(30);

/// A chromedriver process of one test, stopped when dropped (also when the test panics).
struct Chromedriver {
    child: Child,
    url: String,
}

impl Drop for Chromedriver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn browser_required() -> bool {
    std::env::var("QUIRE_TEST_BROWSER").is_ok_and(|v| v == "required")
}

/// Starts chromedriver on a free port; `None` (with a note) when it is not installed and the
/// browser is not required. A chromedriver that exits before it says its port (seen once in
/// CI, with several starting at once) is started again, three times at most.
fn chromedriver() -> Option<Chromedriver> {
    let bin = std::env::var("QUIRE_TEST_CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
    for attempt in 1..=3 {
        match start_chromedriver(&bin) {
            Started::Yes(driver) => return Some(driver),
            Started::NotInstalled => return None,
            Started::Exited(said) if attempt == 3 => {
                panic!("{bin} stopped before saying its port, three times: {said:?}")
            }
            Started::Exited(_) => {}
        }
    }
    None
}

enum Started {
    Yes(Chromedriver),
    NotInstalled,
    Exited(Option<std::io::Result<String>>),
}

fn start_chromedriver(bin: &str) -> Started {
    let mut child = match Command::new(bin)
        .arg("--port=0")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !browser_required() => {
            eprintln!(
                "browser test skipped: no `{bin}` (apt-get install chromium chromium-driver; \
                 QUIRE_TEST_BROWSER=required makes this a failure)"
            );
            return Started::NotInstalled;
        }
        Err(e) => panic!("cannot start {bin}: {e}"),
    };
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let port = loop {
        let line = match lines.next() {
            Some(Ok(line)) => line,
            other => {
                let _ = child.kill();
                let _ = child.wait();
                return Started::Exited(other);
            }
        };
        if let Some(rest) = line.split("started successfully on port ").nth(1) {
            break rest.trim_end_matches('.').trim().to_string();
        }
    };
    // Keep reading, so that chromedriver never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Started::Yes(Chromedriver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    })
}

/// The browsers a test opens.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// 1280 x 900.
    Desktop,
    /// A 360 x 740 phone (Chromium's mobile emulation: touch, device pixel ratio 2).
    Phone,
    /// A desktop browser with JavaScript turned off.
    NoScript,
}

/// Chromium's options for a kind of browser, headless.
fn capabilities(kind: Kind) -> serde_json::Map<String, Value> {
    let mut args = vec![
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--force-device-scale-factor=1",
    ];
    if kind != Kind::Phone {
        args.push("--window-size=1280,900");
    }
    let mut options = json!({"args": args});
    match kind {
        Kind::Desktop => {}
        Kind::Phone => {
            options["mobileEmulation"] = json!({
                "deviceMetrics": {"width": 360, "height": 740, "pixelRatio": 2.0, "touch": true}
            });
        }
        Kind::NoScript => {
            options["prefs"] = json!({"profile.managed_default_content_settings.javascript": 2});
        }
    }
    if let Ok(binary) = std::env::var("QUIRE_TEST_CHROMIUM") {
        options["binary"] = json!(binary);
    }
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".into(), options);
    caps
}

/// A browser session on the chromedriver at `url`.
async fn open(url: &str, kind: Kind) -> Client {
    ClientBuilder::rustls()
        .expect("rustls")
        .capabilities(capabilities(kind))
        .connect(url)
        .await
        .expect("a Chromium session")
}

/// Runs `body` with a desktop browser session, then ends every session it opened (also when
/// `body` panics, so that no Chromium outlives the test) and passes the panic on.
async fn with_browser<F, Fut>(body: F)
where
    F: FnOnce(Client, Browsers) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Some(driver) = chromedriver() else {
        return;
    };
    let client = open(&driver.url, Kind::Desktop).await;
    let browsers = Browsers {
        driver_url: driver.url.clone(),
        opened: Default::default(),
    };
    let opened = browsers.opened.clone();
    let outcome = tokio::spawn(body(client.clone(), browsers)).await;
    let _ = client.close().await;
    let others: Vec<Client> = std::mem::take(&mut *opened.lock().expect("the sessions"));
    for other in others {
        let _ = other.close().await;
    }
    drop(driver);
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// What a test's body may open besides its first browser, and where it keeps screenshots.
struct Browsers {
    driver_url: String,
    opened: std::sync::Arc<std::sync::Mutex<Vec<Client>>>,
}

impl Browsers {
    async fn shot(&self, client: &Client, name: &str) {
        let png = client.screenshot().await.expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG"), "{name}: not a PNG");
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser");
        std::fs::create_dir_all(&dir).expect("the screenshot folder");
        std::fs::write(dir.join(format!("{name}.png")), png).expect("a screenshot file");
    }

    /// Another session, closed with the test's.
    async fn open(&self, kind: Kind) -> Client {
        let client = open(&self.driver_url, kind).await;
        self.opened.lock().expect("the sessions").push(client.clone());
        client
    }
}

/// The engine in screenshot names, as both test runs write the same folder.
fn engine(app: &TestApp) -> &'static str {
    if app.is_postgres() { "pg" } else { "sqlite" }
}

async fn wait_for(client: &Client, css: &str) -> fantoccini::elements::Element {
    client
        .wait()
        .at_most(PATIENCE)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no `{css}` appeared: {e}"))
}

async fn text_of(client: &Client, css: &str) -> String {
    wait_for(client, css).await.text().await.expect("text")
}

async fn script(client: &Client, js: &str) -> Value {
    client
        .execute(js, vec![])
        .await
        .unwrap_or_else(|e| panic!("{js}: {e}"))
}

async fn path_of(client: &Client) -> String {
    let url = client.current_url().await.expect("the current URL");
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}

/// Clicks what `css` finds and waits for the page at `path`.
async fn follow(client: &Client, css: &str, path: &str) {
    wait_for(client, css).await.click().await.expect("a click");
    let page = format!("{}{path}", origin(client).await);
    client
        .wait()
        .at_most(PATIENCE)
        .for_url(&url::Url::parse(&page).expect("a URL"))
        .await
        .unwrap_or_else(|e| panic!("{css} did not lead to {path}: {e}"));
}

async fn origin(client: &Client) -> String {
    let url = client.current_url().await.expect("the current URL");
    url.origin().ascii_serialization()
}

/// Every resource the page loaded came from quire, and every image loaded.
async fn assert_self_contained(client: &Client, what: &str) {
    let origin = origin(client).await;
    let loaded = script(
        client,
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; });",
    )
    .await;
    for name in loaded.as_array().expect("a list") {
        let name = name.as_str().unwrap_or_default();
        assert!(name.starts_with(&origin), "{what}: {name} is not from {origin}");
    }
    let broken = script(
        client,
        "return Array.from(document.images).filter(function (i) { return !i.complete || i.naturalWidth === 0; }).map(function (i) { return i.src; });",
    )
    .await;
    assert_eq!(broken, json!([]), "{what}: images that did not load");
}

/// A space with the handbook's pages ([`handbook_pages`]: a home page with an image, a code
/// block and a link, a group with a nested page with two headings) and a reference page with a
/// table and an expandable, and a second space for the variant switcher; a public site
/// `handbook` showing both. Answers (org, site).
async fn handbook(app: &TestApp, owner: &TestUser) -> (String, String) {
    let mut changes = handbook_pages();
    changes.push(page(
        "Reference",
        "# Reference\n\n| Flag | Meaning |\n| --- | --- |\n| `-v` | verbose |\n\n<details>\n<summary>Exit codes</summary>\n\nZero means success.\n\n</details>\n",
    ));
    let built = SiteBuilder::new(app, owner)
        .space("Version 1", Value::Array(changes))
        .space(
            "Version 2",
            json!([page("What is new", "# What is new\n\nThe second version.\n")]),
        )
        .basename("handbook")
        .build()
        .await;
    (built.org, built.site)
}

#[tokio::test]
async fn browser_reads_a_site_follows_navigation_searches_and_switches_theme() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let (org, site) = handbook(&app, &owner).await;
    let v2_path = app
        .walk(&owner, &format!("/v1/orgs/{org}/sites/{site}/site-spaces"), 10)
        .await
        .into_iter()
        .find(|ss| ss["space"]["title"] == "Version 2" || ss["default"] == false)
        .expect("the second site space")["path"]
        .as_str()
        .expect("a path")
        .to_string();
    let root = format!("http://{}/s/handbook/", app.addr());
    let prefix = format!("reads-{}", engine(&app));
    let name = move |step: &str| format!("{prefix}-{step}");
    with_browser(move |client, browsers| async move {
        // Open the site: the home page, its title, its image, nothing from another host.
        client.goto(&root).await.expect("the site");
        assert_eq!(text_of(&client, "main h1").await, "Welcome");
        assert_eq!(client.title().await.expect("title"), "Welcome | Handbook");
        assert_self_contained(&client, "home").await;
        let highlighted = script(
            &client,
            "return document.querySelectorAll('figure.code pre code span').length;",
        )
        .await;
        assert!(
            highlighted.as_u64().unwrap_or(0) > 0,
            "the code block is highlighted"
        );
        browsers.shot(&client, &name("home")).await;

        // Keyboard: the first Tab reaches the skip link.
        client
            .perform_actions(
                KeyActions::new("keys".into())
                    .then(KeyAction::Down {
                        value: Key::Tab.into(),
                    })
                    .then(KeyAction::Up {
                        value: Key::Tab.into(),
                    }),
            )
            .await
            .expect("a Tab");
        let focused = script(&client, "return document.activeElement.className;").await;
        assert_eq!(focused, "skip", "the skip link comes first");

        // Follow the navigation: open a collapsed level of the sidebar (loaded on demand), on
        // to a nested page, its breadcrumbs and outline, then the next page.
        let toggle = "#q-sidebar a[href='/s/handbook/guides'] + button.toggle";
        wait_for(&client, &format!("{toggle}[aria-expanded='false']"))
            .await
            .click()
            .await
            .expect("open Guides");
        wait_for(&client, &format!("{toggle}[aria-expanded='true']")).await;
        follow(
            &client,
            "#q-sidebar a[href='/s/handbook/guides/setup']",
            "/s/handbook/guides/setup",
        )
        .await;
        assert_eq!(text_of(&client, "main h1").await, "Setup");
        assert!(text_of(&client, "nav.breadcrumbs").await.contains("Guides"));
        let outline = text_of(&client, "aside.outline").await;
        assert!(
            outline.contains("Configure") && outline.contains("Run"),
            "{outline}"
        );
        let current = text_of(&client, "#q-sidebar [aria-current='page']").await;
        assert_eq!(current, "Setup");
        browsers.shot(&client, &name("setup")).await;
        follow(&client, "nav.pagination a.next", "/s/handbook/reference").await;
        assert_eq!(text_of(&client, "main h1").await, "Reference");
        let open = "return document.querySelector('details#exit-codes').open;";
        assert_eq!(script(&client, open).await, json!(false), "closed until asked");
        // A link to an expandable block opens it.
        client
            .goto(&format!("{root}reference#exit-codes"))
            .await
            .expect("the block's link");
        wait_for(&client, "details#exit-codes[open]").await;
        assert!(
            text_of(&client, "details#exit-codes")
                .await
                .contains("Zero means success.")
        );
        browsers.shot(&client, &name("expandable")).await;
        follow(&client, "nav.pagination a.previous", "/s/handbook/guides/setup").await;

        // Search as you type: results appear under the box, and lead to the page.
        let input = wait_for(&client, "#q-search").await;
        input.click().await.expect("focus the search box");
        input.send_keys("zephyr").await.expect("typing");
        let hit = wait_for(&client, "#q-search-results:not([hidden]) a.page").await;
        assert!(hit.text().await.expect("text").contains("Setup"));
        browsers.shot(&client, &name("search")).await;
        follow(&client, "#q-search-results a.page", "/s/handbook/guides/setup").await;

        // Switch the site space with the variant menu.
        wait_for(&client, "details.variants summary")
            .await
            .click()
            .await
            .expect("open");
        follow(
            &client,
            &format!("details.variants a[href='/s/handbook/{v2_path}/']"),
            &format!("/s/handbook/{v2_path}/"),
        )
        .await;
        assert_eq!(text_of(&client, "main h1").await, "What is new");
        let variant = text_of(&client, "details.variants summary").await;
        assert!(variant.ends_with("Version 2"), "{variant}");
        browsers.shot(&client, &name("variant")).await;

        // Dark mode: the toggle darkens the page, and the choice outlasts a reload.
        client.goto(&root).await.expect("the site");
        let light = script(&client, "return getComputedStyle(document.body).backgroundColor;").await;
        wait_for(&client, ".theme-toggle:not([hidden])")
            .await
            .click()
            .await
            .expect("toggle");
        wait_for(&client, "html[data-theme='dark']").await;
        let dark = script(&client, "return getComputedStyle(document.body).backgroundColor;").await;
        assert_ne!(light, dark, "the background changes");
        assert!(
            luminance(&dark) < luminance(&light),
            "{dark:?} is darker than {light:?}"
        );
        client.refresh().await.expect("reload");
        wait_for(
            &client,
            "html[data-theme='dark'] .theme-toggle[aria-pressed='true']",
        )
        .await;
        browsers.shot(&client, &name("dark")).await;

        // A 360 px phone: nothing wider than the screen, the menu opens the page tree.
        let phone = browsers.open(Kind::Phone).await;
        phone
            .goto(&format!("{root}guides/setup"))
            .await
            .expect("the page");
        assert_eq!(text_of(&phone, "main h1").await, "Setup");
        let widths = script(
            &phone,
            "return [window.innerWidth, document.documentElement.scrollWidth];",
        )
        .await;
        assert_eq!(widths[0], 360, "{widths}");
        assert!(
            widths[1].as_u64() <= widths[0].as_u64(),
            "no sideways scrolling: {widths}"
        );
        browsers.shot(&phone, &name("phone")).await;
        wait_for(&phone, "a.menu-button")
            .await
            .click()
            .await
            .expect("the menu");
        wait_for(&phone, "#q-sidebar:target").await;
        let shown = script(
            &phone,
            "return document.getElementById('q-sidebar').getBoundingClientRect().width;",
        )
        .await;
        assert!(
            shown.as_f64().unwrap_or(0.0) > 200.0,
            "the page tree shows: {shown}"
        );
        browsers.shot(&phone, &name("phone-menu")).await;

        // Without JavaScript: pages, the page tree (a level opens on its page) and the theme of
        // the system still work; the search box is a form that leads to a results page.
        let plain = browsers.open(Kind::NoScript).await;
        plain.goto(&root).await.expect("the site");
        assert_eq!(text_of(&plain, "main h1").await, "Welcome");
        follow(
            &plain,
            "#q-sidebar a[href='/s/handbook/guides']",
            "/s/handbook/guides",
        )
        .await;
        follow(
            &plain,
            "#q-sidebar a[href='/s/handbook/guides/setup']",
            "/s/handbook/guides/setup",
        )
        .await;
        assert_eq!(text_of(&plain, "main h1").await, "Setup");
        let input = wait_for(&plain, "#q-search").await;
        input.send_keys("zephyr\n").await.expect("a search");
        plain
            .wait()
            .at_most(PATIENCE)
            .for_element(Locator::Css("main a[href^='/s/handbook/guides/setup']"))
            .await
            .expect("the results page links to the page");
        assert!(path_of(&plain).await.starts_with("/s/handbook/~search?q=zephyr"));
        browsers.shot(&plain, &name("no-script-search")).await;
    })
    .await;
}

/// The relative luminance of a CSS `rgb(...)` value, enough to tell dark from light.
fn luminance(color: &Value) -> f64 {
    let text = color.as_str().unwrap_or_default();
    let parts: Vec<f64> = text
        .trim_start_matches("rgba(")
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(',')
        .filter_map(|p| p.trim().parse().ok())
        .collect();
    assert!(parts.len() >= 3, "not a color: {text}");
    0.2126 * parts[0] + 0.7152 * parts[1] + 0.0722 * parts[2]
}

#[tokio::test]
async fn browser_sees_an_adaptive_section_only_with_the_claim() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let (org, site) = handbook(&app, &owner).await;
    let base = format!("/v1/orgs/{org}/sites/{site}");
    let beta = new_space(&app, &owner, &org, "Beta").await;
    write_main(
        &app,
        &owner,
        &beta,
        vec![json!([{"operation": "insert_page", "title": "Preview",
                     "document": {"markdown": "# Preview\n\nThe beta feature.\n"}}])],
    )
    .await;
    app.put(
        &owner,
        &format!("{base}/adaptive-schema"),
        json!({"jsonSchema": {"type": "object", "properties": {"isBeta": {"type": "boolean"}}, "additionalProperties": false}}),
    )
    .await
    .expect(200);
    // The first section takes the site's site spaces; the second, of the beta space, is for
    // beta visitors only.
    app.post(
        &owner,
        &format!("{base}/sections"),
        json!({"spaceId": beta, "title": "Guides"}),
    )
    .await
    .expect(201);
    let section = app
        .post(
            &owner,
            &format!("{base}/sections"),
            json!({"spaceId": beta, "title": "Beta program"}),
        )
        .await
        .expect(201);
    app.patch(
        &owner,
        &format!("{base}/sections/{}", id(&section)),
        json!({"condition": "visitor.claims.isBeta == true"}),
    )
    .await
    .expect(200);
    app.patch(&owner, &base, json!({"adaptiveContent": {"enabled": true}}))
        .await
        .expect(200);
    let secret = visitor_key(&app, &owner, &base).await;
    let beta_token = visitor_token(&secret, &site, json!({"isBeta": true}));
    let plain_token = visitor_token(&secret, &site, json!({"isBeta": false}));
    let section_path = format!("/s/handbook/{}/", section["path"].as_str().expect("a path"));
    let root = format!("http://{}/s/handbook/", app.addr());
    let prefix = format!("adaptive-{}", engine(&app));
    let name = move |step: &str| format!("{prefix}-{step}");
    with_browser(move |client, browsers| async move {
        // One section shown: no tabs at all.
        let tabs = "return document.querySelector('nav.sections') ? document.querySelector('nav.sections').innerText : '';";
        client.goto(&root).await.expect("the site");
        assert_eq!(text_of(&client, "main h1").await, "Welcome");
        assert_eq!(script(&client, tabs).await, "", "hidden without the claim");
        browsers.shot(&client, &name("without")).await;

        client.goto(&format!("{root}?jwt_token={plain_token}")).await.expect("the site");
        assert_eq!(path_of(&client).await, "/s/handbook/", "the token leaves the URL");
        assert_eq!(text_of(&client, "main h1").await, "Welcome");
        assert_eq!(script(&client, tabs).await, "", "hidden with isBeta false");

        client.goto(&format!("{root}?jwt_token={beta_token}")).await.expect("the site");
        assert_eq!(path_of(&client).await, "/s/handbook/");
        let shown = text_of(&client, "nav.sections").await;
        assert!(shown.contains("Guides") && shown.contains("Beta program"), "{shown}");
        follow(&client, &format!("nav.sections a[href='{section_path}']"), &section_path).await;
        assert_eq!(text_of(&client, "main h1").await, "Preview");
        assert!(text_of(&client, "main").await.contains("The beta feature."));
        browsers.shot(&client, &name("with")).await;
    })
    .await;
}

#[tokio::test]
async fn browser_is_refused_a_share_link_site_without_its_key_and_let_in_with_it() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let (org, site) = handbook(&app, &owner).await;
    let base = format!("/v1/orgs/{org}/sites/{site}");
    app.patch(&owner, &base, json!({"visibility": "share-link"}))
        .await
        .expect(200);
    let key = app
        .post(
            &owner,
            &format!("{base}/share-links"),
            json!({"name": "Reviewers"}),
        )
        .await
        .expect(201)["key"]
        .as_str()
        .expect("a key")
        .to_string();
    let root = format!("http://{}/s/handbook/", app.addr());
    let prefix = format!("share-{}", engine(&app));
    let name = move |step: &str| format!("{prefix}-{step}");
    with_browser(move |client, browsers| async move {
        client
            .goto(&format!("{root}guides/setup"))
            .await
            .expect("the site");
        let main = text_of(&client, "main").await;
        assert!(main.contains("not found"), "{main}");
        assert!(
            !script(&client, "return document.body.innerText;")
                .await
                .as_str()
                .unwrap_or_default()
                .contains("zephyr")
        );
        client
            .goto(&format!("{root}guides/setup?share=wrong{key}"))
            .await
            .expect("the site");
        assert!(text_of(&client, "main").await.contains("not found"));
        browsers.shot(&client, &name("refused")).await;

        client
            .goto(&format!("{root}guides/setup?share={key}"))
            .await
            .expect("the site");
        assert_eq!(path_of(&client).await, "/s/handbook/guides/setup", "a clean URL");
        assert!(text_of(&client, "main").await.contains("zephyr tool"));
        // The cookie carries the key from page to page.
        follow(&client, "nav.breadcrumbs a", "/s/handbook/guides").await;
        assert_eq!(text_of(&client, "main h1").await, "Guides");
        browsers.shot(&client, &name("admitted")).await;
    })
    .await;
}

#[tokio::test]
async fn browser_is_sent_to_sign_in_on_a_visitor_auth_site_and_let_in_with_a_token() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let (org, site) = handbook(&app, &owner).await;
    let base = format!("/v1/orgs/{org}/sites/{site}");
    app.patch(&owner, &base, json!({"visibility": "visitor-auth"}))
        .await
        .expect(200);
    let secret = visitor_key(&app, &owner, &base).await;
    let token = visitor_token(&secret, &site, json!({}));
    let forged = visitor_token("another-key", &site, json!({}));
    // The sign-in backend: here the server's own health check stands for it.
    let login = format!("http://{}/healthz", app.addr());
    let root = format!("http://{}/s/handbook/", app.addr());
    let prefix = format!("visitor-auth-{}", engine(&app));
    let name = move |step: &str| format!("{prefix}-{step}");
    let auth = format!("{base}/publishing/auth");
    let app = std::sync::Arc::new(app);
    let api = app.clone();
    with_browser(move |client, browsers| async move {
        // No sign-in URL: the sign-in page, nothing of the content.
        client
            .goto(&format!("{root}guides/setup"))
            .await
            .expect("the site");
        assert_eq!(text_of(&client, "main h1").await, "Sign in to read this site");
        let page = script(&client, "return document.body.innerText;").await;
        assert!(!page.as_str().unwrap_or_default().contains("zephyr"), "{page}");
        browsers.shot(&client, &name("sign-in-page")).await;
        client
            .goto(&format!("{root}guides/setup?jwt_token={forged}"))
            .await
            .expect("the site");
        assert_eq!(text_of(&client, "main h1").await, "Sign in to read this site");

        // With one: sent there, with where the visitor was going.
        api.patch(&owner, &auth, json!({"fallbackURL": login}))
            .await
            .expect(200);
        client
            .goto(&format!("{root}guides/setup"))
            .await
            .expect("the site");
        let url = client.current_url().await.expect("the URL");
        assert_eq!(url.path(), "/healthz", "{url}");
        assert_eq!(url.query(), Some("location=%2Fs%2Fhandbook%2Fguides%2Fsetup"));

        // Back with a token: in, at the clean URL, and the cookie keeps it.
        client
            .goto(&format!("{root}guides/setup?jwt_token={token}"))
            .await
            .expect("the site");
        assert_eq!(path_of(&client).await, "/s/handbook/guides/setup");
        assert!(text_of(&client, "main").await.contains("zephyr tool"));
        follow(&client, "nav.pagination a.next", "/s/handbook/reference").await;
        assert_eq!(text_of(&client, "main h1").await, "Reference");
        browsers.shot(&client, &name("signed-in")).await;
    })
    .await;
}
