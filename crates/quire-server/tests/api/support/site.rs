//! Docs sites built for a test as a user builds one, through the API: an organization, spaces
//! (empty, or written through a merged change request), a site, each space added to it as a
//! site space or as a section of its own, a basename, then publishing. And the visitor tokens
//! that published sites admit.

use serde_json::{Value, json};

use super::snapshot::Stable;
use super::{TestApp, TestUser};
use crate::search::{new_space, write_main};

/// The `id` of an answer.
pub fn id(v: &Value) -> String {
    v["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {v}"))
        .to_string()
}

/// The `id`s of a list's items, in order.
pub fn ids(items: &[Value]) -> Vec<String> {
    items.iter().map(id).collect()
}

/// The content change that inserts a page of markdown at the root of a space.
pub fn page(title: &str, markdown: &str) -> Value {
    json!({"operation": "insert_page", "title": title, "document": {"markdown": markdown}})
}

/// The pages a handbook starts with, as content changes: a file `logo.png`, a home page
/// `Welcome` (the logo, a code block, a hint and a link to Setup), a group `Guides` holding
/// `Setup` (the word "zephyr", two headings).
pub fn handbook_pages() -> Vec<Value> {
    vec![
        json!({"operation": "insert_files", "files": [{"ref": "logo", "name": "logo.png", "contentType": "image/png", "base64": crate::content::PNG}]}),
        page(
            "Welcome",
            "# Welcome\n\nHello readers.\n\n![The logo](./logo)\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n{% hint style=\"info\" %}\nA hint.\n{% endhint %}\n\nSee [setup](./setup.md).\n",
        ),
        json!({"operation": "insert_page", "ref": "guides", "title": "Guides",
               "document": {"markdown": "# Guides\n\nAll the guides.\n"}}),
        json!({"operation": "insert_page", "ref": "setup", "title": "Setup", "into": "guides",
               "document": {"markdown": "# Setup\n\nInstall it with the zephyr tool.\n\n## Configure\n\nThen configure.\n\n## Run\n\nThen run.\n"}}),
    ]
}

/// A site to build: [`SiteBuilder::new`], the spaces it shows, then [`SiteBuilder::build`].
///
/// By default: a new organization "Docs", a site "Handbook" without a basename, published.
pub struct SiteBuilder<'a> {
    app: &'a TestApp,
    owner: &'a TestUser,
    org: Org,
    title: String,
    spaces: Vec<Planned>,
    basename: Option<String>,
    publish: bool,
}

enum Org {
    New(String),
    Existing(String),
}

struct Planned {
    space: SpaceSource,
    /// The title of the section that shows the space; None: a site space of the site's root.
    section: Option<String>,
}

enum SpaceSource {
    /// A space created empty, then written with the changes (when there are any).
    New {
        title: String,
        changes: Option<Value>,
    },
    Existing(String),
}

/// What [`SiteBuilder::build`] made.
pub struct BuiltSite {
    pub org: String,
    pub site: String,
    /// The site's API path, `/v1/orgs/{org}/sites/{site}`.
    pub base: String,
    /// The spaces, in the order they were given.
    pub spaces: Vec<String>,
    /// What adding each space answered, in the same order: the site space, or the section
    /// (which holds the site space it made).
    pub added: Vec<Value>,
}

impl<'a> SiteBuilder<'a> {
    pub fn new(app: &'a TestApp, owner: &'a TestUser) -> SiteBuilder<'a> {
        SiteBuilder {
            app,
            owner,
            org: Org::New("Docs".into()),
            title: "Handbook".into(),
            spaces: Vec::new(),
            basename: None,
            publish: true,
        }
    }

    /// A new organization of this title instead of "Docs".
    pub fn org_titled(mut self, title: &str) -> Self {
        self.org = Org::New(title.into());
        self
    }

    /// The site in an organization that exists (the owner's).
    pub fn in_org(mut self, org: &str) -> Self {
        self.org = Org::Existing(org.into());
        self
    }

    /// The site's title instead of "Handbook".
    pub fn titled(mut self, title: &str) -> Self {
        self.title = title.into();
        self
    }

    /// A new space written with `changes` (one batch of content changes, merged to main), as
    /// a site space.
    pub fn space(mut self, title: &str, changes: Value) -> Self {
        self.spaces.push(Planned {
            space: SpaceSource::New {
                title: title.into(),
                changes: Some(changes),
            },
            section: None,
        });
        self
    }

    /// A new empty space, as a site space.
    pub fn empty_space(mut self, title: &str) -> Self {
        self.spaces.push(Planned {
            space: SpaceSource::New {
                title: title.into(),
                changes: None,
            },
            section: None,
        });
        self
    }

    /// A space that exists, as a site space.
    pub fn existing_space(mut self, space: &str) -> Self {
        self.spaces.push(Planned {
            space: SpaceSource::Existing(space.into()),
            section: None,
        });
        self
    }

    /// A new empty space titled `space`, in a new section titled `section`.
    pub fn section(mut self, section: &str, space: &str) -> Self {
        self.spaces.push(Planned {
            space: SpaceSource::New {
                title: space.into(),
                changes: None,
            },
            section: Some(section.into()),
        });
        self
    }

    pub fn basename(mut self, basename: &str) -> Self {
        self.basename = Some(basename.into());
        self
    }

    /// Leaves the site unpublished.
    pub fn unpublished(mut self) -> Self {
        self.publish = false;
        self
    }

    pub async fn build(self) -> BuiltSite {
        let (app, owner) = (self.app, self.owner);
        let org = match self.org {
            Org::New(title) => app.org(owner, &title).await,
            Org::Existing(org) => org,
        };
        let mut spaces = Vec::new();
        for planned in &self.spaces {
            spaces.push(match &planned.space {
                SpaceSource::New { title, changes } => {
                    let space = new_space(app, owner, &org, title).await;
                    if let Some(changes) = changes {
                        write_main(app, owner, &space, vec![changes.clone()]).await;
                    }
                    space
                }
                SpaceSource::Existing(space) => space.clone(),
            });
        }
        let site = id(&app
            .post(
                owner,
                &format!("/v1/orgs/{org}/sites"),
                json!({"title": self.title}),
            )
            .await
            .expect(201));
        let base = format!("/v1/orgs/{org}/sites/{site}");
        let mut added = Vec::new();
        for (planned, space) in self.spaces.iter().zip(&spaces) {
            let (path, body) = match &planned.section {
                None => (format!("{base}/site-spaces"), json!({"spaceId": space})),
                Some(title) => (
                    format!("{base}/sections"),
                    json!({"spaceId": space, "title": title}),
                ),
            };
            added.push(app.post(owner, &path, body).await.expect(201));
        }
        if let Some(basename) = &self.basename {
            app.patch(owner, &base, json!({"basename": basename}))
                .await
                .expect(200);
        }
        if self.publish {
            app.post(owner, &format!("{base}/publish"), json!({}))
                .await
                .expect(200);
        }
        BuiltSite {
            org,
            site,
            base,
            spaces,
            added,
        }
    }
}

impl BuiltSite {
    /// Stable names for what the site was built of: `[org]`, `[site]`, `[space-N]`, and by what
    /// adding the Nth space made, `[site-space-N]`, or `[section-N]` and its `[section-N-ss]`
    /// (N from 1, in the order given); with the server's address and the owner.
    pub fn stable(&self, app: &TestApp, owner: &TestUser) -> Stable {
        let mut stable = Stable::new(app);
        stable.user(owner, "owner");
        stable.name(&self.org, "[org]");
        stable.name(&self.site, "[site]");
        for (n, (space, added)) in self.spaces.iter().zip(&self.added).enumerate() {
            let n = n + 1;
            stable.name(space, &format!("[space-{n}]"));
            if added["object"] == "site-section" {
                stable.name(&id(added), &format!("[section-{n}]"));
                stable.name(&id(&added["siteSpaces"][0]), &format!("[section-{n}-ss]"));
            } else {
                stable.name(&id(added), &format!("[site-space-{n}]"));
            }
        }
        stable
    }
}

/// The key a site's visitor tokens are signed with, as its admin reads it (`base`: the site's
/// API path).
pub async fn visitor_key(app: &TestApp, admin: &TestUser, base: &str) -> String {
    app.get(admin, &format!("{base}/publishing/auth"))
        .await
        .expect(200)["privateKey"]
        .as_str()
        .expect("a key")
        .to_string()
}

/// A visitor token for the site `aud`, signed with `key`, valid for ten minutes.
pub fn visitor_token(key: &str, aud: &str, claims: Value) -> String {
    visitor_token_expiring(key, aud, 600, claims)
}

/// A visitor token for the site `aud`, signed with `key`, expiring `exp_in` seconds from now
/// (in the past when negative).
pub fn visitor_token_expiring(key: &str, aud: &str, exp_in: i64, claims: Value) -> String {
    let mut payload = claims;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64;
    payload["aud"] = json!(aud);
    payload["exp"] = json!(now + exp_in);
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &payload,
        &jsonwebtoken::EncodingKey::from_secret(key.as_bytes()),
    )
    .expect("a signed token")
}
