//! The fixture site: `tests/fixtures/site` (a folder in GitBook's layout) imported with
//! quire-content's import, then rendered whole, as a server would serve it, into a map from URL
//! path to bytes. The tests check that map; `examples/export_fixture.rs` writes it to
//! `target/reader-site/` to look at in a browser.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use quire_content::Document;
use quire_content::import::{ImportContext, ImportFile, import_folder};
use quire_content::tree::{Dimensions, FileEntry, Tree};
use quire_reader::{
    Context, Customization, NavLink, NavTree, Navigation, SearchHit, SearchResults, SearchSection,
    SectionItem, Site, SpaceResolver,
};

/// The imported fixture.
pub struct Fixture {
    pub tree: Tree,
    pub documents: HashMap<String, Document>,
    /// File bytes by file id.
    pub file_bytes: HashMap<String, Vec<u8>>,
}

fn read_folder(root: &Path, folder: &Path, files: &mut Vec<ImportFile>) {
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            read_folder(root, &path, files);
        } else {
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            files.push(ImportFile {
                path: relative,
                bytes: std::fs::read(&path).unwrap(),
            });
        }
    }
}

/// Width and height of a PNG, from its header.
fn png_dimensions(bytes: &[u8]) -> Option<Dimensions> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" {
        return None;
    }
    let number = |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    Some(Dimensions {
        width: number(16),
        height: number(20),
    })
}

pub fn fixture() -> Fixture {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/site");
    let mut files = Vec::new();
    read_folder(&root, &root, &mut files);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut next_id = 0;
    let mut new_id = || {
        next_id += 1;
        format!("page{next_id}")
    };
    let mut next_key = 0;
    let mut new_key = || {
        next_key += 1;
        format!("k{next_key}")
    };
    let mut stored: Vec<(FileEntry, Vec<u8>)> = Vec::new();
    let mut store_file = |path: &str, bytes: &[u8]| -> Result<FileEntry, String> {
        let name = path.rsplit('/').next().unwrap_or(path).to_owned();
        let content_type = match name.rsplit('.').next() {
            Some("png") => "image/png",
            Some("pdf") => "application/pdf",
            _ => "application/octet-stream",
        };
        let entry = FileEntry {
            id: format!("file{}", stored.len() + 1),
            name,
            content_type: content_type.to_owned(),
            size: bytes.len() as u64,
            blob: String::new(),
            dimensions: png_dimensions(bytes),
            created_at: 0,
        };
        stored.push((entry.clone(), bytes.to_vec()));
        Ok(entry)
    };
    let outcome = {
        let mut context = ImportContext {
            now: 1_740_787_200_000,
            new_id: &mut new_id,
            new_key: &mut new_key,
            store_file: &mut store_file,
        };
        import_folder(files, &mut context).unwrap()
    };
    assert!(
        outcome.warnings.is_empty(),
        "the fixture imports cleanly: {:?}",
        outcome.warnings
    );
    let documents = outcome
        .documents
        .iter()
        .map(|(hash, bytes)| (hash.clone(), serde_json::from_slice(bytes).unwrap()))
        .collect();
    let mut tree = outcome.tree;
    // Pages changed on different days, for the feed and the sitemap.
    let ids: Vec<String> = tree.pages.keys().cloned().collect();
    for (day, id) in ids.iter().enumerate() {
        let mut page = (*tree.pages[id.as_str()]).clone();
        page.updated_at = 1_740_787_200_000 + day as i64 * 86_400_000;
        tree.pages.insert(id.clone(), std::sync::Arc::new(page));
    }
    Fixture {
        tree,
        documents,
        file_bytes: stored
            .into_iter()
            .map(|(entry, bytes)| (entry.id, bytes))
            .collect(),
    }
}

/// Where a file is served in the fixture site.
pub fn file_url(file: &FileEntry) -> String {
    let extension = file.name.rsplit('.').next().unwrap_or("bin");
    format!("/_files/{}.{extension}", file.id)
}

/// The fixture's site settings: a customization with header and footer links and an
/// announcement, so that every part of the chrome shows.
pub fn site(fixture: &Fixture) -> Site {
    let id = |title: &str| {
        fixture
            .tree
            .pages
            .values()
            .find(|page| page.title == title)
            .map(|page| page.id.clone())
            .unwrap()
    };
    let (config, quickstart, changelog) = (id("Configuration"), id("Quick start"), id("Changelog"));
    let mut site = Site::new("Quire Handbook", "https://docs.example.com/");
    site.description = Some("Publishing documentation with Quire.".to_owned());
    site.search_url = Some("/_quire/search".to_owned());
    site.search_page_url = Some("/search".to_owned());
    site.nav_url = Some("/_quire/nav/".to_owned());
    site.feed_url = Some("/feed.xml".to_owned());
    site.customization = serde_json::from_value::<Customization>(serde_json::json!({
        "header": {"links": [
            {"title": "Blog", "to": {"kind": "url", "url": "https://blog.example.com"}, "links": []},
            {"title": "Support", "to": {"kind": "page", "page": config}, "style": "button-secondary", "links": []}
        ]},
        "footer": {
            "groups": [
                {"title": "Product", "links": [
                    {"title": "Quick start", "to": {"kind": "page", "page": quickstart}},
                    {"title": "Changelog", "to": {"kind": "page", "page": changelog}}
                ]},
                {"title": "Community", "links": [
                    {"title": "GitHub", "to": {"kind": "url", "url": "https://github.com/example/quire"}}
                ]}
            ],
            "copyright": "© 2025 Example Inc."
        },
        "announcement": {"enabled": true, "message": "Quire 1.1 is out: dark mode follows your system.",
                         "style": "info", "link": {"title": "Read the changelog", "to": {"kind": "page", "page": changelog}}}
    }))
    .unwrap();
    site
}

/// The two site spaces of the fixture: the content at `/` (current version) and again at
/// `/v1/` (an older version), so that the variant switcher and sections link to real pages.
pub const SPACES: &[(&str, &str)] = &[("/", "Version 1.1"), ("/v1/", "Version 1.0")];

pub fn navigation(current: &str) -> Navigation {
    Navigation {
        sections: vec![
            SectionItem {
                title: "Handbook".to_owned(),
                url: Some("/".to_owned()),
                current: current == "/",
                children: Vec::new(),
                external: false,
            },
            SectionItem {
                title: "Archive".to_owned(),
                url: None,
                current: current == "/v1/",
                children: vec![NavLink {
                    title: "Handbook 1.0".to_owned(),
                    url: "/v1/".to_owned(),
                    current: current == "/v1/",
                    external: false,
                }],
                external: false,
            },
        ],
        variants: SPACES
            .iter()
            .map(|(base, title)| NavLink {
                title: (*title).to_owned(),
                url: (*base).to_owned(),
                current: *base == current,
                external: false,
            })
            .collect(),
    }
}

/// The path of the file a URL path is written to in a static export.
pub fn export_path(url: &str) -> String {
    let trimmed = url.trim_start_matches('/');
    if trimmed.is_empty() || url.ends_with('/') {
        format!("{trimmed}index.html")
    } else if trimmed.rsplit('/').next().is_some_and(|last| last.contains('.'))
        || trimmed.contains("_quire/nav/")
    {
        trimmed.to_owned()
    } else {
        format!("{trimmed}/index.html")
    }
}

/// Everything the fixture site serves, by URL path: each page of both site spaces, their
/// markdown, the sidebar levels, 404, 401 and search pages, the machine files, files and
/// assets.
pub fn render_site(fixture: &Fixture) -> BTreeMap<String, Vec<u8>> {
    let site = site(fixture);
    let index = fixture.tree.index();
    let mut out: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut sitemap = Vec::new();
    for (base, _) in SPACES {
        // Each site space serves its own sidebar levels (their links are its pages').
        let mut site = site.clone();
        site.nav_url = Some(format!("{base}_quire/nav/"));
        let nav = NavTree::build(&fixture.tree, &index, base);
        let navigation = navigation(base);
        let resolver = SpaceResolver::new(&nav, &fixture.tree, &file_url);
        let context = Context {
            site: &site,
            navigation: &navigation,
            tree: &nav,
            resolver: &resolver,
        };
        for node in nav.pages() {
            let page = &fixture.tree.pages[node.id.as_str()];
            let Some(document) = page
                .document
                .as_ref()
                .and_then(|hash| fixture.documents.get(hash))
            else {
                continue;
            };
            let url = node.url.clone().unwrap();
            out.insert(
                url.clone(),
                quire_reader::render_page(&context, page, document).into_bytes(),
            );
            out.insert(
                quire_reader::markdown_url(&url),
                quire_reader::page_markdown(&context, page, document).into_bytes(),
            );
            if let Some(fragment) = quire_reader::render_navigation_fragment(&context, &node.id)
                && !node.children.is_empty()
            {
                out.insert(format!("{base}_quire/nav/{}", node.id), fragment.into_bytes());
            }
        }
        sitemap.extend(quire_reader::sitemap_entries(&site, &nav));
        if *base == "/" {
            out.insert(
                "/404.html".to_owned(),
                quire_reader::render_not_found(&context).into_bytes(),
            );
            out.insert(
                "/llms.txt".to_owned(),
                quire_reader::llms_txt(&context).into_bytes(),
            );
            out.insert(
                "/feed.xml".to_owned(),
                quire_reader::atom_feed(&context, "/feed.xml", 20).into_bytes(),
            );
            let results = SearchResults {
                query: "install".to_owned(),
                items: vec![SearchHit {
                    title: "Quick start".to_owned(),
                    url: "/quickstart".to_owned(),
                    sections: vec![SearchSection {
                        title: "Install".to_owned(),
                        url: "/quickstart#install".to_owned(),
                        body: "Download the binary for your platform".to_owned(),
                    }],
                }],
            };
            out.insert(
                "/search/index.html".to_owned(),
                quire_reader::render_search_page(&context, &results).into_bytes(),
            );
            out.insert("/_quire/search".to_owned(), results.to_json().into_bytes());
        }
    }
    out.insert(
        "/401.html".to_owned(),
        quire_reader::render_login_required(&site, Some("/")).into_bytes(),
    );
    out.insert(
        "/sitemap.xml".to_owned(),
        quire_reader::sitemap_xml(&sitemap).into_bytes(),
    );
    out.insert(
        "/robots.txt".to_owned(),
        quire_reader::robots_txt(&site, Some("/sitemap.xml")).into_bytes(),
    );
    for (id, bytes) in &fixture.file_bytes {
        let entry = &fixture.tree.files[id.as_str()];
        out.insert(file_url(entry), bytes.clone());
    }
    for asset in quire_reader::assets() {
        out.insert(format!("{}{}", site.assets_url, asset.path), asset.bytes.to_vec());
    }
    out
}
