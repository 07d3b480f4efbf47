//! Importing a folder of markdown laid out the way GitBook's Git Sync writes a space, as the
//! content of one new revision. The caller reads the folder and stores files; this module only
//! decides what the pages, documents and references are.
//!
//! Layout:
//! - `.gitbook.yaml` at the top of the folder (optional): `root` is the sub-folder holding the
//!   docs (default: the folder itself); `structure.readme` (default `README.md`) and
//!   `structure.summary` (default `SUMMARY.md`) are paths relative to `root`. Every other path
//!   is relative to `root` too; files outside it are ignored. `redirects` maps old URL paths of
//!   the space to files: each whose file is a page of the import becomes an
//!   [`ImportedRedirect`] to that page (see [`import_redirects`] for how sources are read, and
//!   its limits); the others are skipped (warned).
//! - With a summary file, it is the table of contents: a markdown list of links, nested lists for
//!   child pages. A first-level heading that is the first block is the summary's own title; every
//!   other heading starts a group whose pages are the list items that follow it (until the next
//!   heading or a `---`). An item linking to a URL with a scheme, or to a file that is not
//!   markdown, is a link page; an item linking to a page already listed (`guide.md#part`) is a
//!   link page to it; other items are pages for the markdown file they link to. A listed file that
//!   does not exist, or an item without a link, becomes an empty page (warned). Markdown files
//!   not listed are ignored (warned). The readme, when not listed, comes first.
//! - Without one, the folders are the tree: the readme is the first top-level page, then each
//!   folder's markdown files and sub-folders in natural name order (`2-b` before `10-a`). A
//!   folder's `README.md` is the folder's page, holding its other files and sub-folders; a folder
//!   without one takes `name.md` next to it as its page when there is one, else becomes a group
//!   at the top level and an empty page deeper (warned). Hidden files and folders (`.gitbook/`,
//!   `.github/`) hold no pages.
//! - Titles: the file's leading `# Title`, else the summary's link text, else the file name (a
//!   folder's readme: the folder name) humanized (`getting-started` → `Getting started`). A link
//!   text that differs from the title is kept as the page's `linkTitle`. Frontmatter gives the
//!   rest of the metadata (see [`parse_page_markdown`]).
//! - Slugs: the file name without `.md` (lowercased, or slugified when that is not a valid
//!   slug); a folder's readme takes the folder name; the space's readme and groups take their
//!   slugified title. Siblings with the same slug get `-2`, `-3`... (pages keeping their own
//!   name first).
//! - References: link, image and file targets are relative paths from the file they are in
//!   (a leading `/` means `root`). A markdown file, a folder (its readme) or the root (the readme)
//!   becomes a page or anchor reference to the page imported from it; any other file present in
//!   the folder is stored once (through [`ImportContext::store_file`]) and becomes a file
//!   reference; `#anchor` becomes an anchor reference on the same page; URLs with a scheme stay.
//!   Anything else stays as written, with a warning. Files nobody references are not stored.
//! - Pages nested deeper than [`MAX_DEPTH`] move up to the deepest level allowed (warned).
//!
//! Input paths must be relative and stay inside the folder (`a/../b` is fine, `../b` is not).
//! The result depends only on the input and the ids and keys handed out, which are asked for in
//! table-of-contents order.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use comrak::nodes::{AstNode, NodeValue};
use comrak::{Arena, Options};
use serde::Deserialize;
use serde_json::Value;

use crate::changes::encode_document;
use crate::document::{ContentRef, Document, fill_missing_keys, for_each_ref_mut};
use crate::import_redirects::{self, Declared, ImportedRedirect};
use crate::markdown::{
    LinkTarget, MarkdownError, markdown_to_document, normalize_link_target, split_frontmatter,
};
use crate::order::keys_between;
use crate::page_markdown::{ParsedPage, parse_page_markdown};
use crate::slug::{MAX_SLUG_LEN, slugify};
use crate::tree::{Entries, FileEntry, MAX_DEPTH, PageEntry, PageKind, Tree, TreeError, check_slug};

/// The name of the configuration file, at the top of the imported folder.
pub const CONFIG_FILE: &str = ".gitbook.yaml";

/// A file of the imported folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportFile {
    /// Path relative to the folder, `/`-separated.
    pub path: String,
    pub bytes: Vec<u8>,
}

/// [`ImportContext::store_file`]: stores a file's bytes (given its path) and returns its entry.
pub type StoreFile<'a> = dyn FnMut(&str, &[u8]) -> Result<FileEntry, String> + 'a;

/// What the import needs from its surroundings.
pub struct ImportContext<'a> {
    /// Creation time of the pages.
    pub now: i64,
    /// New page ids.
    pub new_id: &'a mut dyn FnMut() -> String,
    /// New node keys for documents.
    pub new_key: &'a mut dyn FnMut() -> String,
    /// Stores a non-markdown file's bytes and returns its entry (the caller writes the object
    /// store and computes size, dimensions and content type). Called once per distinct file
    /// that some page references, with its path as given in the input (normalized).
    pub store_file: &'a mut StoreFile<'a>,
}

/// The imported content.
#[derive(Debug, Clone)]
pub struct ImportOutcome {
    /// Pages and the stored files.
    pub tree: Tree,
    /// Documents to store: (content hash, JSON bytes), each hash once.
    pub documents: Vec<(String, Vec<u8>)>,
    /// What was skipped or could not be resolved, one sentence each, in a stable order.
    pub warnings: Vec<String>,
    /// The redirects of `.gitbook.yaml` whose file is a page of the import, in its order.
    pub redirects: Vec<ImportedRedirect>,
}

/// Why a folder cannot be imported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("{path:?} is not a relative path inside the imported folder")]
    BadPath { path: String },
    #[error("the file {path:?} is given more than once")]
    DuplicatePath { path: String },
    #[error("{CONFIG_FILE}: {0}")]
    Config(String),
    /// Nothing to import under the root (its path; empty for the folder itself).
    #[error("no markdown pages to import{}", if .0.is_empty() { String::new() } else { format!(" under {:?}", .0) })]
    NoPages(String),
    #[error("could not store {path:?}: {message}")]
    StoreFile { path: String, message: String },
    #[error("the imported pages do not form a valid tree: {0}")]
    Tree(#[from] TreeError),
}

/// Imports a folder (see the module documentation).
pub fn import_folder(
    files: Vec<ImportFile>,
    ctx: &mut ImportContext<'_>,
) -> Result<ImportOutcome, ImportError> {
    Importer::new(files, ctx)?.run()
}

// ---------------------------------------------------------------------------------------------
// Configuration

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawConfig {
    root: Option<String>,
    structure: Option<RawStructure>,
    redirects: Option<serde_yaml_ng::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawStructure {
    readme: Option<String>,
    summary: Option<String>,
}

/// `.gitbook.yaml`, with paths normalized (`root` from the folder, the others from `root`).
#[derive(Debug)]
struct Config {
    root: String,
    readme: String,
    readme_explicit: bool,
    summary: String,
    summary_explicit: bool,
    redirects: Vec<Declared>,
}

fn parse_config(bytes: Option<&[u8]>, warnings: &mut Vec<String>) -> Result<Config, ImportError> {
    let raw = match bytes {
        None => RawConfig::default(),
        Some(bytes) => {
            let text =
                std::str::from_utf8(bytes).map_err(|_| ImportError::Config("not valid UTF-8".into()))?;
            serde_yaml_ng::from_str::<Option<RawConfig>>(text)
                .map_err(|e| ImportError::Config(e.to_string()))?
                .unwrap_or_default()
        }
    };
    let root = match raw.root.as_deref() {
        None => String::new(),
        Some(root) => normalize_config_path(root)
            .ok_or_else(|| ImportError::Config(format!("root {root:?} leaves the imported folder")))?,
    };
    let structure = raw.structure.unwrap_or_default();
    let file = |value: Option<&str>, key: &str, default: &str| -> Result<(String, bool), ImportError> {
        match value {
            None => Ok((default.to_string(), false)),
            Some(path) => match normalize_config_path(path) {
                Some(p) if !p.is_empty() => Ok((p, true)),
                Some(_) => Ok((default.to_string(), false)),
                None => Err(ImportError::Config(format!(
                    "structure.{key} {path:?} leaves the root folder"
                ))),
            },
        }
    };
    let (readme, readme_explicit) = file(structure.readme.as_deref(), "readme", "README.md")?;
    let (summary, summary_explicit) = file(structure.summary.as_deref(), "summary", "SUMMARY.md")?;
    let redirects = import_redirects::declared(raw.redirects.as_ref(), warnings);
    Ok(Config {
        root,
        readme,
        readme_explicit,
        summary,
        summary_explicit,
        redirects,
    })
}

/// A path of the configuration: `./docs/` → `docs`; `/` means the top. None when it climbs out.
fn normalize_config_path(path: &str) -> Option<String> {
    push_segments(Vec::new(), path.trim().trim_start_matches('/')).map(|s| s.join("/"))
}

/// An input path, normalized; None when absolute, empty or climbing out of the folder.
fn normalize_input_path(path: &str) -> Option<String> {
    if path.starts_with('/') {
        return None;
    }
    let segments = push_segments(Vec::new(), path)?;
    (!segments.is_empty()).then(|| segments.join("/"))
}

/// `base` followed by the segments of `path`, resolving `.` and `..`; None when `..` climbs
/// above the start.
fn push_segments<'s>(mut segments: Vec<&'s str>, path: &'s str) -> Option<Vec<&'s str>> {
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop()?;
            }
            s => segments.push(s),
        }
    }
    Some(segments)
}

// ---------------------------------------------------------------------------------------------
// Paths and names

fn is_markdown(path: &str) -> bool {
    strip_suffix_ignore_case(path, ".md").is_some()
}

fn strip_suffix_ignore_case<'s>(text: &'s str, suffix: &str) -> Option<&'s str> {
    let split = text.len().checked_sub(suffix.len())?;
    (text.is_char_boundary(split) && text[split..].eq_ignore_ascii_case(suffix)).then(|| &text[..split])
}

fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

fn is_readme(path: &str) -> bool {
    file_name(path).eq_ignore_ascii_case("readme.md")
}

/// Whether a path goes through a hidden file or folder (`.gitbook/`, `.github/`).
fn is_hidden(path: &str) -> bool {
    path.split('/').any(|s| s.starts_with('.'))
}

fn join(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_string()
    } else {
        format!("{folder}/{name}")
    }
}

/// A file or folder name as a title: `getting-started` → `Getting started`.
fn humanize(name: &str) -> String {
    let words: Vec<&str> = name
        .split(|c: char| c == '-' || c == '_' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let text = words.join(" ");
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "Untitled".to_string(),
    }
}

/// A name as a slug: itself lowercased when that is a valid slug, else slugified.
fn name_slug(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    if check_slug(&lower).is_ok() {
        lower
    } else {
        slugify(name)
    }
}

/// `base-n`, cut so that it stays a valid slug.
fn suffixed_slug(base: &str, n: usize) -> String {
    let suffix = format!("-{n}");
    let keep = MAX_SLUG_LEN.saturating_sub(suffix.len()).min(base.len());
    // Slugs are ASCII: any byte index is a character boundary.
    let head = base.get(..keep).unwrap_or(base).trim_end_matches(['-', '.', '_']);
    format!("{head}{suffix}")
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Names in natural order: runs of digits compare as numbers, the rest case-insensitively.
fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (ca, cb) = (digit_runs(a), digit_runs(b));
    for (x, y) in ca.iter().zip(&cb) {
        let numeric =
            x.starts_with(|c: char| c.is_ascii_digit()) && y.starts_with(|c: char| c.is_ascii_digit());
        let order = if numeric {
            let (xt, yt) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
            xt.len().cmp(&yt.len()).then_with(|| xt.cmp(yt))
        } else {
            x.to_lowercase().cmp(&y.to_lowercase())
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

fn digit_runs(text: &str) -> Vec<&str> {
    let mut runs = Vec::new();
    let mut start = 0;
    let mut digits = None;
    for (i, c) in text.char_indices() {
        let d = c.is_ascii_digit();
        if digits.is_some_and(|prev| prev != d) {
            runs.push(&text[start..i]);
            start = i;
        }
        digits = Some(d);
    }
    if start < text.len() {
        runs.push(&text[start..]);
    }
    runs
}

pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                i += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(decoded).unwrap_or_else(|_| text.to_string())
}

/// `target`, written in the file `current`, with the `..` that would climb above the root
/// dropped, as a browser resolves a URL (`/a/../../b` is `/b`), written from the root; None
/// when it has no path or does not climb.
fn clamp_to_root(current: &str, target: &str) -> Option<String> {
    let target = target.trim();
    let end = target.find(['#', '?']).unwrap_or(target.len());
    let (path, rest) = target.split_at(end);
    if path.is_empty() || path.starts_with('/') {
        return None;
    }
    let mut segments: Vec<&str> = folder_of(current).split('/').filter(|s| !s.is_empty()).collect();
    let mut climbed = false;
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => climbed |= segments.pop().is_none(),
            segment => segments.push(segment),
        }
    }
    let joined = segments.join("/");
    // Never `//`, which would read as a URL without a scheme.
    let trailing = if !joined.is_empty() && (path.ends_with('/') || path.ends_with("..")) {
        "/"
    } else {
        ""
    };
    climbed.then(|| format!("/{joined}{trailing}{rest}"))
}

/// A link target read from a file.
#[derive(Debug, PartialEq)]
enum Target {
    /// A URL with a scheme: left alone.
    External,
    /// `#anchor` on the same page.
    Anchor(String),
    /// Empty, or climbing above the root.
    Invalid,
    /// A path from the root: percent-decoded, and as written when that differs.
    Local {
        path: String,
        raw_path: Option<String>,
        anchor: Option<String>,
        /// Written as a folder (`guide/`, `..`).
        folder: bool,
    },
}

/// Reads `target`, found in the file `current` (both from the root).
fn parse_target(current: &str, target: &str) -> Target {
    match normalize_link_target(current, target) {
        None => Target::Invalid,
        Some(LinkTarget::External(_)) => Target::External,
        Some(LinkTarget::Anchor(anchor)) => Target::Anchor(anchor),
        Some(LinkTarget::Path { anchor, .. }) => {
            let t = target.trim();
            let t = t.split_once('#').map_or(t, |(p, _)| p);
            let t = t.split_once('?').map_or(t, |(p, _)| p);
            let folder = t.ends_with('/') || matches!(file_name(t), "." | "..");
            let resolve = |path: &str| {
                let base = if path.starts_with('/') {
                    Vec::new()
                } else {
                    folder_of(current).split('/').filter(|s| !s.is_empty()).collect()
                };
                push_segments(base, path).map(|s| s.join("/"))
            };
            let decoded = percent_decode(t);
            match resolve(&decoded) {
                Some(path) => Target::Local {
                    raw_path: if decoded == t { None } else { resolve(t) },
                    path,
                    anchor,
                    folder,
                },
                None => Target::Invalid,
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The table of contents being built

/// A page before it becomes an entry.
#[derive(Debug, Default)]
struct Item {
    id: String,
    kind: Option<PageKind>,
    title: String,
    link_title: Option<String>,
    slug: String,
    /// The page's markdown file from the root (possibly missing).
    file: Option<String>,
    /// The folder the page stands for.
    folder: Option<String>,
    parsed: Option<ParsedPage>,
    /// Link pages: the target as written, and the file it was written in.
    link: Option<(String, String)>,
    children: Vec<Item>,
}

impl Item {
    fn kind(&self) -> PageKind {
        self.kind.unwrap_or(PageKind::Document)
    }

    fn group(title: String) -> Item {
        Item {
            kind: Some(PageKind::Group),
            slug: slugify(&title),
            title,
            ..Item::default()
        }
    }

    fn link(title: String, written_in: &str, target: &str) -> Item {
        Item {
            kind: Some(PageKind::Link),
            title,
            link: Some((written_in.to_string(), target.to_string())),
            ..Item::default()
        }
    }

    fn empty_page(title: String, slug: String) -> Item {
        Item {
            title,
            slug,
            ..Item::default()
        }
    }
}

#[derive(Debug, Default)]
struct Folder {
    readme: Option<usize>,
    pages: Vec<usize>,
    folders: BTreeMap<String, Folder>,
}

impl Folder {
    fn insert(&mut self, path: &str, index: usize) {
        match path.split_once('/') {
            Some((first, rest)) => self
                .folders
                .entry(first.to_string())
                .or_default()
                .insert(rest, index),
            None => self.pages.push(index),
        }
    }

    /// Moves each sub-folder's `README.md` into its readme slot (not the root's).
    fn pick_readmes(&mut self, sources: &[Source]) {
        for folder in self.folders.values_mut() {
            if let Some(at) = folder.pages.iter().position(|&i| is_readme(&sources[i].path)) {
                folder.readme = Some(folder.pages.remove(at));
            }
            folder.pick_readmes(sources);
        }
    }
}

/// A file of the folder, under the root.
#[derive(Debug)]
struct Source {
    /// Path from the root.
    path: String,
    /// Bytes, taken once parsed or stored.
    bytes: Vec<u8>,
    markdown: bool,
}

/// Where a local target leads.
enum Located {
    Page(String),
    File(usize),
    /// A markdown file that is no page of the import.
    NotImported,
    Missing,
}

struct Importer<'c, 'a> {
    ctx: &'c mut ImportContext<'a>,
    config: Config,
    /// `root/` (empty for the folder itself), to show paths as given.
    prefix: String,
    sources: Vec<Source>,
    by_path: HashMap<String, usize>,
    by_lowercase_path: HashMap<String, usize>,
    readme: Option<String>,
    summary: Option<String>,
    warnings: Vec<String>,
    page_by_file: HashMap<String, String>,
    page_by_folder: HashMap<String, String>,
    stored: HashMap<usize, String>,
    files: Entries<FileEntry>,
}

impl<'c, 'a> Importer<'c, 'a> {
    fn new(files: Vec<ImportFile>, ctx: &'c mut ImportContext<'a>) -> Result<Self, ImportError> {
        let mut seen = HashSet::with_capacity(files.len());
        let mut config_bytes = None;
        let mut kept = Vec::with_capacity(files.len());
        for file in files {
            let path = normalize_input_path(&file.path).ok_or(ImportError::BadPath { path: file.path })?;
            if !seen.insert(path.clone()) {
                return Err(ImportError::DuplicatePath { path });
            }
            if path == CONFIG_FILE {
                config_bytes = Some(file.bytes);
            } else {
                kept.push((path, file.bytes));
            }
        }
        drop(seen);
        let mut warnings = Vec::new();
        let config = parse_config(config_bytes.as_deref(), &mut warnings)?;
        let prefix = if config.root.is_empty() {
            String::new()
        } else {
            format!("{}/", config.root)
        };
        let mut sources: Vec<Source> = kept
            .into_iter()
            .filter_map(|(path, bytes)| {
                let path = path.strip_prefix(&prefix)?.to_string();
                Some(Source {
                    markdown: is_markdown(&path),
                    path,
                    bytes,
                })
            })
            .collect();
        sources.sort_by(|a, b| a.path.cmp(&b.path));
        let mut by_path = HashMap::with_capacity(sources.len());
        let mut by_lowercase_path = HashMap::with_capacity(sources.len());
        for (i, source) in sources.iter().enumerate() {
            by_path.insert(source.path.clone(), i);
            by_lowercase_path.entry(source.path.to_lowercase()).or_insert(i);
        }
        Ok(Importer {
            ctx,
            config,
            prefix,
            sources,
            by_path,
            by_lowercase_path,
            readme: None,
            summary: None,
            warnings,
            page_by_file: HashMap::new(),
            page_by_folder: HashMap::new(),
            stored: HashMap::new(),
            files: Entries::new(),
        })
    }

    /// A path from the root as the input gave it.
    fn shown(&self, path: &str) -> String {
        format!("{}{path}", self.prefix)
    }

    fn warn(&mut self, message: String) {
        self.warnings.push(message);
    }

    /// The file at `path` from the root, matching case-insensitively when nothing matches exactly.
    fn find(&self, path: &str) -> Option<usize> {
        self.by_path
            .get(path)
            .or_else(|| self.by_lowercase_path.get(&path.to_lowercase()))
            .copied()
    }

    fn find_markdown(&self, path: &str) -> Option<usize> {
        self.find(path).filter(|&i| self.sources[i].markdown)
    }

    fn run(mut self) -> Result<ImportOutcome, ImportError> {
        let readme = self.find_markdown(&self.config.readme.clone());
        if readme.is_none() && self.config.readme_explicit {
            let shown = self.shown(&self.config.readme);
            self.warn(format!(
                "the readme {shown} given in {CONFIG_FILE} does not exist"
            ));
        }
        self.readme = readme.map(|i| self.sources[i].path.clone());
        let summary = self.find_markdown(&self.config.summary.clone());
        self.summary = summary.map(|i| self.sources[i].path.clone());
        let summary_text = match summary {
            Some(i) => self.take_text(i),
            None => {
                if self.config.summary_explicit {
                    let shown = self.shown(&self.config.summary);
                    self.warn(format!(
                        "the summary {shown} given in {CONFIG_FILE} does not exist; the folders give the table of contents"
                    ));
                }
                None
            }
        };
        let items = match (summary_text, self.summary.clone()) {
            (Some(text), Some(path)) => self.summary_items(&path, &text),
            (None, Some(path)) => {
                let shown = self.shown(&path);
                self.warn(format!(
                    "{shown}: not valid UTF-8; the folders give the table of contents"
                ));
                self.folder_items()
            }
            _ => self.folder_items(),
        };
        if items.is_empty() {
            return Err(ImportError::NoPages(self.config.root.clone()));
        }
        let mut items = self.fix_structure(items, 1);
        assign_slugs(&mut items);
        self.assign_ids(&mut items);
        let mut pages = Entries::new();
        let mut documents = Vec::new();
        let mut hashes = HashSet::new();
        self.emit(items, None, &mut pages, &mut documents, &mut hashes)?;
        let tree = Tree {
            pages,
            files: std::mem::take(&mut self.files),
            ..Tree::default()
        };
        tree.check()?;
        let redirects = self.resolve_redirects(&tree);
        Ok(ImportOutcome {
            tree,
            documents,
            warnings: self.warnings,
            redirects,
        })
    }

    /// A markdown file's text, without byte order mark and with `\n` line ends; None (the bytes
    /// taken either way) when it is not UTF-8.
    fn take_text(&mut self, index: usize) -> Option<String> {
        let bytes = std::mem::take(&mut self.sources[index].bytes);
        let text = String::from_utf8(bytes).ok()?;
        let text = match text.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_string(),
            None => text,
        };
        Some(if text.contains('\r') {
            text.replace("\r\n", "\n")
        } else {
            text
        })
    }

    /// Parses a page file; None (warned) when it is not UTF-8.
    fn parse_source(&mut self, index: usize) -> Option<ParsedPage> {
        let shown = self.shown(&self.sources[index].path);
        let Some(text) = self.take_text(index) else {
            self.warn(format!("{shown}: not valid UTF-8; imported as an empty page"));
            return None;
        };
        match parse_page_markdown(&text) {
            Ok(parsed) => Some(parsed),
            Err(MarkdownError::Limit(e)) => {
                self.warn(format!("{shown}: {e}; imported as an empty page"));
                None
            }
            Err(MarkdownError::Frontmatter(e)) => {
                self.warn(format!("{shown}: {e}; the page metadata is ignored"));
                let (_, body) = split_frontmatter(&text);
                match parse_page_markdown(body) {
                    Ok(parsed) => Some(parsed),
                    Err(_) => match markdown_to_document(body) {
                        Ok(document) => Some(ParsedPage {
                            document,
                            ..ParsedPage::default()
                        }),
                        Err(e) => {
                            self.warn(format!("{shown}: {e}; imported as an empty page"));
                            None
                        }
                    },
                }
            }
        }
    }

    /// A document page for the markdown file at `path` (from the root; `source` when it exists).
    fn page_item(&mut self, path: String, source: Option<usize>, toc_title: Option<String>) -> Item {
        let parsed = source.and_then(|i| self.parse_source(i));
        let name = file_name(&path);
        let stem = strip_suffix_ignore_case(name, ".md").unwrap_or(name);
        let folder = folder_of(&path);
        let readme_of_folder = is_readme(&path) && !folder.is_empty();
        let folder_name = file_name(folder);
        let title = parsed
            .as_ref()
            .and_then(|p| p.meta.title.clone())
            .or_else(|| toc_title.clone())
            .unwrap_or_else(|| humanize(if readme_of_folder { folder_name } else { stem }));
        let is_space_readme = self.readme.as_deref() == Some(path.as_str());
        let slug = if is_space_readme || (is_readme(&path) && folder.is_empty()) {
            slugify(&title)
        } else if readme_of_folder {
            name_slug(folder_name)
        } else {
            name_slug(stem)
        };
        Item {
            link_title: toc_title.filter(|t| *t != title),
            title,
            slug,
            file: Some(path),
            parsed,
            ..Item::default()
        }
    }

    // -----------------------------------------------------------------------------------------
    // With a summary

    fn summary_items(&mut self, summary: &str, text: &str) -> Vec<Item> {
        let (_, body) = split_frontmatter(text);
        let arena = Arena::new();
        let document = comrak::parse_document(&arena, body, &Options::default());
        let mut listed = HashSet::new();
        let mut top: Vec<Item> = Vec::new();
        let mut group: Option<Item> = None;
        for (i, block) in document.children().enumerate() {
            let heading = match &block.data.borrow().value {
                NodeValue::Heading(h) => Some(h.level),
                NodeValue::List(_) => None,
                NodeValue::ThematicBreak => {
                    top.extend(group.take());
                    continue;
                }
                _ => continue,
            };
            match heading {
                Some(1) if i == 0 => {}
                Some(_) => {
                    top.extend(group.take());
                    let title = collapse_whitespace(&inline_text(block));
                    group = Some(Item::group(if title.is_empty() {
                        "Untitled".to_string()
                    } else {
                        title
                    }));
                }
                None => {
                    let items = self.summary_list(summary, block, &mut listed);
                    match &mut group {
                        Some(g) => g.children.extend(items),
                        None => top.extend(items),
                    }
                }
            }
        }
        top.extend(group);
        let shown_summary = self.shown(summary);
        if let Some(readme) = self.readme.clone()
            && !listed.contains(&readme)
        {
            let shown = self.shown(&readme);
            self.warn(format!(
                "{shown} is not listed in {shown_summary}; imported as the first page"
            ));
            let source = self.find(&readme);
            let item = self.page_item(readme.clone(), source, None);
            listed.insert(readme);
            top.insert(0, item);
        }
        let unlisted: Vec<String> = self
            .sources
            .iter()
            .filter(|s| {
                s.markdown
                    && !is_hidden(&s.path)
                    && Some(&s.path) != self.summary.as_ref()
                    && !listed.contains(&s.path)
            })
            .map(|s| s.path.clone())
            .collect();
        for path in unlisted {
            let shown = self.shown(&path);
            self.warn(format!("{shown} is not listed in {shown_summary}; ignored"));
        }
        top
    }

    fn summary_list<'n>(
        &mut self,
        summary: &str,
        list: &'n AstNode<'n>,
        listed: &mut HashSet<String>,
    ) -> Vec<Item> {
        let mut items = Vec::new();
        for entry in list.children() {
            let mut label = None;
            let mut lists = Vec::new();
            for part in entry.children() {
                match &part.data.borrow().value {
                    NodeValue::List(_) => lists.push(part),
                    NodeValue::Paragraph | NodeValue::Heading(_) if label.is_none() => label = Some(part),
                    _ => {}
                }
            }
            // The entry first, so that it gets its page before anything nested under it.
            let text = label
                .map(|l| collapse_whitespace(&inline_text(l)))
                .unwrap_or_default();
            let link = label.and_then(first_link);
            let mut item =
                (!text.is_empty() || link.is_some()).then(|| self.summary_entry(summary, text, link, listed));
            let mut children = Vec::new();
            for nested in lists {
                children.extend(self.summary_list(summary, nested, listed));
            }
            match &mut item {
                Some(item) => item.children = children,
                // An empty entry: its children take its place.
                None => items.extend(children),
            }
            items.extend(item);
        }
        items
    }

    /// The page for one summary entry: `text` is the item's text, `link` its first link.
    fn summary_entry(
        &mut self,
        summary: &str,
        text: String,
        link: Option<(String, String)>,
        listed: &mut HashSet<String>,
    ) -> Item {
        let shown_summary = self.shown(summary);
        let Some((link_text, target)) = link else {
            self.warn(format!(
                "{shown_summary}: the entry {text:?} has no link; imported as an empty page"
            ));
            let slug = slugify(&text);
            return Item::empty_page(text, slug);
        };
        let link_text = Some(link_text).filter(|t| !t.is_empty());
        let title = link_text
            .clone()
            .or_else(|| Some(text.clone()).filter(|t| !t.is_empty()))
            .unwrap_or_else(|| target.clone());
        let (path, folder) = match parse_target(summary, &target) {
            Target::External => return Item::link(title, summary, &target),
            Target::Anchor(_) | Target::Invalid => {
                self.warn(format!(
                    "{shown_summary}: the target {target:?} of {title:?} is not a file of the imported folder; imported as an empty page"
                ));
                let slug = slugify(&title);
                return Item::empty_page(title, slug);
            }
            Target::Local { path, folder, .. } => (path, folder),
        };
        // The markdown file the entry names, existing or not; None for another kind of file.
        let page_file = if path.is_empty() {
            Some(self.readme.clone().unwrap_or_else(|| "README.md".to_string()))
        } else if folder {
            let readme = join(&path, "README.md");
            Some(
                self.find_markdown(&readme)
                    .map_or(readme, |i| self.sources[i].path.clone()),
            )
        } else if let Some(i) = self.find(&path) {
            self.sources[i].markdown.then(|| self.sources[i].path.clone())
        } else if is_markdown(&path) {
            Some(path.clone())
        } else {
            let candidates = [join(&path, "README.md"), format!("{path}.md")];
            let found = candidates
                .iter()
                .find_map(|c| self.find_markdown(c))
                .map(|i| self.sources[i].path.clone());
            Some(found.unwrap_or_else(|| format!("{path}.md")))
        };
        let Some(file) = page_file else {
            return Item::link(title, summary, &target);
        };
        if listed.contains(&file) {
            if !target.contains('#') {
                let shown = self.shown(&file);
                self.warn(format!(
                    "{shown_summary} lists {shown} more than once; the later entries link to its page"
                ));
            }
            return Item::link(title, summary, &target);
        }
        listed.insert(file.clone());
        let source = self.find_markdown(&file);
        if source.is_none() {
            let shown = self.shown(&file);
            self.warn(format!(
                "{shown_summary} lists {shown}, which does not exist; imported as an empty page"
            ));
        }
        self.page_item(file, source, link_text.or(Some(text)).filter(|t| !t.is_empty()))
    }

    // -----------------------------------------------------------------------------------------
    // Without a summary

    fn folder_items(&mut self) -> Vec<Item> {
        let mut root = Folder::default();
        let mut readme = None;
        let mut bad = Vec::new();
        for (i, source) in self.sources.iter().enumerate() {
            if !source.markdown || is_hidden(&source.path) || Some(&source.path) == self.summary.as_ref() {
                continue;
            }
            if std::str::from_utf8(&source.bytes).is_err() {
                bad.push(source.path.clone());
                continue;
            }
            if Some(&source.path) == self.readme.as_ref() {
                readme = Some(i);
            } else {
                root.insert(&source.path, i);
            }
        }
        for path in bad {
            let shown = self.shown(&path);
            self.warn(format!("{shown}: not valid UTF-8; ignored"));
            if self.readme.as_ref() == Some(&path) {
                self.readme = None;
            }
        }
        root.pick_readmes(&self.sources);
        let mut items = Vec::new();
        if let Some(i) = readme {
            let path = self.sources[i].path.clone();
            items.push(self.page_item(path, Some(i), None));
        }
        items.extend(self.folder_children(&root, ""));
        items
    }

    /// The pages of a folder: its files and sub-folders, in natural order of their names.
    fn folder_children(&mut self, folder: &Folder, path: &str) -> Vec<Item> {
        enum Entry<'f> {
            Page(usize),
            Folder(&'f str, &'f Folder),
        }
        let stem = |i: usize| {
            let name = file_name(&self.sources[i].path);
            strip_suffix_ignore_case(name, ".md").unwrap_or(name).to_string()
        };
        let mut entries: Vec<(String, Entry<'_>)> = folder
            .pages
            .iter()
            .map(|&i| (stem(i), Entry::Page(i)))
            .chain(
                folder
                    .folders
                    .iter()
                    .map(|(name, f)| (name.clone(), Entry::Folder(name, f))),
            )
            .collect();
        // Pages sort before a folder of the same name.
        entries.sort_by(|(a, x), (b, y)| {
            natural_cmp(a, b)
                .then_with(|| matches!(x, Entry::Folder(..)).cmp(&matches!(y, Entry::Folder(..))))
        });
        // A folder without a readme takes the page of the same name as its page.
        let page_names: HashMap<&str, usize> = entries
            .iter()
            .filter_map(|(name, e)| match e {
                Entry::Page(i) => Some((name.as_str(), *i)),
                Entry::Folder(..) => None,
            })
            .collect();
        let mut folder_page: HashMap<usize, (&str, &Folder)> = HashMap::new();
        for (name, entry) in &entries {
            if let Entry::Folder(n, f) = entry
                && f.readme.is_none()
                && let Some(&i) = page_names.get(name.as_str())
            {
                folder_page.entry(i).or_insert((n, f));
            }
        }
        let adopted: HashSet<&str> = folder_page.values().map(|(name, _)| *name).collect();
        let mut items = Vec::with_capacity(entries.len());
        for (_, entry) in entries {
            match entry {
                Entry::Page(i) => {
                    let file = self.sources[i].path.clone();
                    let mut item = self.page_item(file, Some(i), None);
                    if let Some((name, sub)) = folder_page.get(&i) {
                        let sub_path = join(path, name);
                        item.children = self.folder_children(sub, &sub_path);
                        item.folder = Some(sub_path);
                    }
                    items.push(item);
                }
                Entry::Folder(name, _) if adopted.contains(name) => {}
                Entry::Folder(name, sub) => {
                    let sub_path = join(path, name);
                    let mut item = match sub.readme {
                        Some(i) => {
                            let file = self.sources[i].path.clone();
                            self.page_item(file, Some(i), None)
                        }
                        None if path.is_empty() => {
                            let mut group = Item::group(humanize(name));
                            group.slug = name_slug(name);
                            group
                        }
                        None => {
                            let shown = self.shown(&sub_path);
                            self.warn(format!(
                                "{shown}/ has no README.md; imported as an empty page holding its pages"
                            ));
                            Item::empty_page(humanize(name), name_slug(name))
                        }
                    };
                    item.children = self.folder_children(sub, &sub_path);
                    item.folder = Some(sub_path);
                    items.push(item);
                }
            }
        }
        items
    }

    // -----------------------------------------------------------------------------------------
    // From items to entries

    /// Moves the children of pages that cannot hold any (links, pages at the deepest level)
    /// up, right after them.
    fn fix_structure(&mut self, items: Vec<Item>, depth: usize) -> Vec<Item> {
        let mut out = Vec::with_capacity(items.len());
        let mut queue: VecDeque<Item> = items.into();
        while let Some(mut item) = queue.pop_front() {
            if !item.children.is_empty() {
                if item.kind().has_children() && depth < MAX_DEPTH {
                    let children = std::mem::take(&mut item.children);
                    item.children = self.fix_structure(children, depth + 1);
                } else {
                    let why = if item.kind().has_children() {
                        format!("are nested more than {MAX_DEPTH} levels deep")
                    } else {
                        "are under a link".to_string()
                    };
                    self.warn(format!(
                        "the pages under {:?} {why}; moved up a level",
                        item.title
                    ));
                    for child in std::mem::take(&mut item.children).into_iter().rev() {
                        queue.push_front(child);
                    }
                }
            }
            out.push(item);
        }
        out
    }

    /// Gives ids in table-of-contents order and records which file and folder each page is.
    fn assign_ids(&mut self, items: &mut [Item]) {
        for item in items {
            item.id = (self.ctx.new_id)();
            if let Some(file) = &item.file {
                self.page_by_file.insert(file.clone(), item.id.clone());
                if self.readme.as_ref() == Some(file) {
                    self.page_by_folder.insert(String::new(), item.id.clone());
                } else if is_readme(file) {
                    self.page_by_folder
                        .entry(folder_of(file).to_string())
                        .or_insert_with(|| item.id.clone());
                }
            }
            if let Some(folder) = &item.folder {
                self.page_by_folder.insert(folder.clone(), item.id.clone());
            }
            self.assign_ids(&mut item.children);
        }
    }

    fn emit(
        &mut self,
        items: Vec<Item>,
        parent: Option<&str>,
        pages: &mut Entries<PageEntry>,
        documents: &mut Vec<(String, Vec<u8>)>,
        hashes: &mut HashSet<String>,
    ) -> Result<(), ImportError> {
        let keys = keys_between(None, None, items.len());
        for (item, order) in items.into_iter().zip(keys) {
            let kind = item.kind();
            let mut entry = PageEntry::new(&item.id, kind, &item.title, self.ctx.now);
            entry.parent = parent.map(str::to_string);
            entry.order = order;
            entry.link_title = item.link_title;
            if kind.has_path() {
                entry.slug = item.slug;
            }
            match kind {
                PageKind::Document => {
                    let ParsedPage { meta, mut document } = item.parsed.unwrap_or_default();
                    entry.description = meta.description;
                    entry.emoji = meta.emoji;
                    entry.icon = meta.icon;
                    entry.layout = meta.layout;
                    entry.hidden = meta.hidden.unwrap_or(false);
                    entry.no_index = meta.no_index.unwrap_or(false);
                    entry.no_robots_index = meta.no_robots_index.unwrap_or(false);
                    if let Some(file) = &item.file {
                        entry.cover = match meta.cover {
                            Some(cover) => Some(self.resolve_cover(file, cover)?),
                            None => None,
                        };
                        self.resolve_document(file, &mut document)?;
                    }
                    fill_missing_keys(&mut document, self.ctx.new_key);
                    let (hash, bytes) = encode_document(&document);
                    if hashes.insert(hash.clone()) {
                        documents.push((hash.clone(), bytes));
                    }
                    entry.document = Some(hash);
                }
                PageKind::Link => {
                    let (written_in, target) = item.link.unwrap_or_default();
                    let reference = self
                        .resolve(&written_in, &target)?
                        .unwrap_or_else(|| ContentRef::url(&target));
                    entry.target = Some(reference.to_value());
                }
                PageKind::Group | PageKind::Computed => {}
            }
            pages.insert(item.id.clone(), Arc::new(entry));
            self.emit(item.children, Some(&item.id), pages, documents, hashes)?;
        }
        Ok(())
    }

    fn resolve_document(&mut self, file: &str, document: &mut Document) -> Result<(), ImportError> {
        let mut failure = None;
        for_each_ref_mut(document, &mut |reference| {
            if failure.is_some() {
                return;
            }
            if let ContentRef::Url { url } = reference {
                match self.resolve(file, url) {
                    Ok(Some(resolved)) => *reference = resolved,
                    Ok(None) => {}
                    Err(e) => failure = Some(e),
                }
            }
        });
        failure.map_or(Ok(()), Err)
    }

    /// A cover (`{ref, yPos}`) with its reference resolved.
    fn resolve_cover(&mut self, file: &str, mut cover: Value) -> Result<Value, ImportError> {
        let url = match cover.get("ref").and_then(ContentRef::from_value) {
            Some(ContentRef::Url { url }) => url,
            _ => return Ok(cover),
        };
        if let (Some(resolved), Some(map)) = (self.resolve(file, &url)?, cover.as_object_mut()) {
            map.insert("ref".into(), resolved.to_value());
        }
        Ok(cover)
    }

    /// The reference a target written in `file` stands for; None (warned unless it is a URL)
    /// when it stays as written.
    fn resolve(&mut self, file: &str, target: &str) -> Result<Option<ContentRef>, ImportError> {
        if target.trim().is_empty() {
            return Ok(None);
        }
        let mut climbed = false;
        let parsed = match parse_target(file, target) {
            // One `../` too many (a page moved up a level, its links left as they were): a
            // browser, and GitBook, stop at the root, so the target is looked for there.
            Target::Invalid => {
                match clamp_to_root(file, target).map(|clamped| parse_target(file, &clamped)) {
                    Some(local @ Target::Local { .. }) => {
                        climbed = true;
                        local
                    }
                    _ => Target::Invalid,
                }
            }
            other => other,
        };
        let (path, raw_path, anchor, folder) = match parsed {
            Target::External => return Ok(None),
            Target::Anchor(anchor) => return Ok(Some(ContentRef::anchor(&anchor, None))),
            Target::Invalid => {
                let shown = self.shown(file);
                self.warn(format!(
                    "{shown}: the link target {target:?} leaves the imported folder; kept as written"
                ));
                return Ok(None);
            }
            Target::Local {
                path,
                raw_path,
                anchor,
                folder,
            } => (path, raw_path, anchor, folder),
        };
        let mut located = self.locate(&path, folder);
        if let (Located::Missing, Some(raw)) = (&located, &raw_path) {
            located = self.locate(raw, folder);
        }
        if climbed && matches!(located, Located::Page(_) | Located::File(_)) {
            let shown = self.shown(file);
            self.warn(format!(
                "{shown}: the link target {target:?} climbs above the imported folder; read from its root"
            ));
        }
        let why = match located {
            _ if climbed && matches!(located, Located::Missing | Located::NotImported) => {
                "leaves the imported folder"
            }
            Located::Page(id) => {
                return Ok(Some(match anchor {
                    Some(anchor) => ContentRef::anchor(&anchor, Some(&id)),
                    None => ContentRef::page(&id),
                }));
            }
            Located::File(index) => return self.store(index).map(|id| Some(ContentRef::file(&id))),
            Located::NotImported => "is a page that is not imported",
            Located::Missing => "matches no file of the imported folder",
        };
        let shown = self.shown(file);
        self.warn(format!(
            "{shown}: the link target {target:?} {why}; kept as written"
        ));
        Ok(None)
    }

    fn locate(&self, path: &str, folder: bool) -> Located {
        let page_of = |i: usize| {
            self.page_by_file
                .get(&self.sources[i].path)
                .map_or(Located::NotImported, |id| Located::Page(id.clone()))
        };
        if path.is_empty() {
            return self
                .page_by_folder
                .get("")
                .map_or(Located::Missing, |id| Located::Page(id.clone()));
        }
        if !folder {
            if let Some(id) = self.page_by_file.get(path) {
                return Located::Page(id.clone());
            }
            if let Some(i) = self.find(path) {
                return if self.sources[i].markdown {
                    page_of(i)
                } else {
                    Located::File(i)
                };
            }
        }
        if let Some(id) = self.page_by_folder.get(path) {
            return Located::Page(id.clone());
        }
        if let Some(i) = self.find_markdown(&join(path, "README.md")) {
            return page_of(i);
        }
        if !folder {
            let with_extension = format!("{path}.md");
            if let Some(id) = self.page_by_file.get(&with_extension) {
                return Located::Page(id.clone());
            }
            if let Some(i) = self.find_markdown(&with_extension) {
                return page_of(i);
            }
        }
        Located::Missing
    }

    /// The pages the redirects of the configuration lead to: a destination is a link target
    /// written in a file at the root. One that is no page of the import is skipped (warned).
    fn resolve_redirects(&mut self, tree: &Tree) -> Vec<ImportedRedirect> {
        let declared = std::mem::take(&mut self.config.redirects);
        let mut out = Vec::with_capacity(declared.len());
        for Declared { source, destination } in declared {
            let why = match parse_target("", &destination) {
                Target::External => "is a URL; only files of the import can be destinations",
                Target::Anchor(_) | Target::Invalid => "is not a file inside the root folder",
                Target::Local {
                    path,
                    raw_path,
                    anchor,
                    folder,
                } => {
                    let mut located = self.locate(&path, folder);
                    if let (Located::Missing, Some(raw)) = (&located, &raw_path) {
                        located = self.locate(raw, folder);
                    }
                    match located {
                        // Only a page with content has a URL to land on.
                        Located::Page(id)
                            if tree
                                .pages
                                .get(id.as_str())
                                .is_some_and(|p| p.kind == PageKind::Document) =>
                        {
                            if anchor.is_some() {
                                self.warn(format!(
                                    "{CONFIG_FILE}: the redirect from {source:?} lands on the page of {destination:?}, not its anchor"
                                ));
                            }
                            out.push(ImportedRedirect { source, page_id: id });
                            continue;
                        }
                        Located::Page(_) => "is a group or a link, not a page with content",
                        Located::NotImported => "is a page that is not imported",
                        Located::File(_) => "is not a markdown page",
                        Located::Missing => "matches no file of the imported folder",
                    }
                }
            };
            self.warn(format!(
                "{CONFIG_FILE}: the redirect from {source:?} to {destination:?} {why}; skipped"
            ));
        }
        out
    }

    /// Stores a file once; its id.
    fn store(&mut self, index: usize) -> Result<String, ImportError> {
        if let Some(id) = self.stored.get(&index) {
            return Ok(id.clone());
        }
        let path = self.shown(&self.sources[index].path);
        let bytes = std::mem::take(&mut self.sources[index].bytes);
        let entry = (self.ctx.store_file)(&path, &bytes)
            .map_err(|message| ImportError::StoreFile { path, message })?;
        let id = entry.id.clone();
        self.stored.insert(index, id.clone());
        self.files.insert(id.clone(), Arc::new(entry));
        Ok(id)
    }
}

/// Makes slugs unique among siblings: pages keep their own slug in order, and those whose slug
/// an earlier sibling took get the first free `-2`, `-3`...
fn assign_slugs(items: &mut [Item]) {
    let mut taken: HashSet<String> = HashSet::with_capacity(items.len());
    let mut clashes = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if item.kind().has_path() && !taken.insert(item.slug.clone()) {
            clashes.push(i);
        }
    }
    let mut next: HashMap<String, usize> = HashMap::new();
    for i in clashes {
        let base = items[i].slug.clone();
        let mut n = next.get(&base).copied().unwrap_or(2);
        let slug = loop {
            let candidate = suffixed_slug(&base, n);
            n += 1;
            if !taken.contains(&candidate) {
                break candidate;
            }
        };
        next.insert(base, n);
        taken.insert(slug.clone());
        items[i].slug = slug;
    }
    for item in items {
        assign_slugs(&mut item.children);
    }
}

/// The plain text of a comrak block's inlines.
fn inline_text<'n>(node: &'n AstNode<'n>) -> String {
    fn collect<'n>(node: &'n AstNode<'n>, out: &mut String) {
        for child in node.children() {
            match &child.data.borrow().value {
                NodeValue::Text(text) => out.push_str(text),
                NodeValue::Code(code) => out.push_str(&code.literal),
                NodeValue::SoftBreak | NodeValue::LineBreak => out.push(' '),
                NodeValue::HtmlInline(_) => {}
                _ => collect(child, out),
            }
        }
    }
    let mut out = String::new();
    collect(node, &mut out);
    out
}

/// The first link below a comrak node: (its text, its URL).
fn first_link<'n>(node: &'n AstNode<'n>) -> Option<(String, String)> {
    for child in node.children() {
        let url = match &child.data.borrow().value {
            NodeValue::Link(link) => Some(link.url.clone()),
            _ => None,
        };
        match url {
            Some(url) => return Some((collapse_whitespace(&inline_text(child)), url)),
            None => {
                if let Some(found) = first_link(child) {
                    return Some(found);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use crate::document::for_each_ref;

    /// An import's result and the paths given to `store_file`, in call order.
    struct Run {
        outcome: ImportOutcome,
        stored: Vec<String>,
    }

    fn files(list: &[(&str, &str)]) -> Vec<ImportFile> {
        list.iter()
            .map(|(path, text)| ImportFile {
                path: (*path).to_string(),
                bytes: text.as_bytes().to_vec(),
            })
            .collect()
    }

    /// Imports with ids `p1`, `p2`..., keys `k1`..., and file ids `f1`... in call order.
    fn try_import(files: Vec<ImportFile>) -> Result<Run, ImportError> {
        let mut ids = 0;
        let mut new_id = || {
            ids += 1;
            format!("p{ids}")
        };
        let mut keys = 0;
        let mut new_key = || {
            keys += 1;
            format!("k{keys}")
        };
        let mut stored = Vec::new();
        let mut store_file = |path: &str, bytes: &[u8]| -> Result<FileEntry, String> {
            if path.ends_with(".exe") {
                return Err("refused".into());
            }
            stored.push(path.to_string());
            Ok(FileEntry {
                id: format!("f{}", stored.len()),
                name: file_name(path).to_string(),
                content_type: "application/octet-stream".into(),
                size: bytes.len() as u64,
                blob: format!("blob-of-{path}"),
                dimensions: None,
                created_at: 7,
            })
        };
        let outcome = import_folder(
            files,
            &mut ImportContext {
                now: 7,
                new_id: &mut new_id,
                new_key: &mut new_key,
                store_file: &mut store_file,
            },
        )?;
        Ok(Run { outcome, stored })
    }

    fn import(files: Vec<ImportFile>) -> Run {
        try_import(files).unwrap()
    }

    impl Run {
        fn page(&self, id: &str) -> &PageEntry {
            &self.outcome.tree.pages[id]
        }

        /// The page at a path.
        fn at(&self, path: &str) -> &PageEntry {
            let index = self.outcome.tree.index();
            let id = index.by_path(path).unwrap_or_else(|| panic!("no page at {path}"));
            self.page(id)
        }

        /// One line per page in order: indentation, kind, title, `/path` or `-> target`, and
        /// `[link title]`.
        fn outline(&self) -> String {
            let index = self.outcome.tree.index();
            let mut out = String::new();
            let mut stack: Vec<(String, usize)> = index
                .children(None)
                .iter()
                .rev()
                .map(|id| (id.clone(), 0))
                .collect();
            while let Some((id, depth)) = stack.pop() {
                let page = self.page(&id);
                let place = match index.path(&id) {
                    Some(path) => format!("/{path}"),
                    None => format!(
                        "-> {}",
                        page.target.as_ref().map(Value::to_string).unwrap_or_default()
                    ),
                };
                let link_title = page
                    .link_title
                    .as_ref()
                    .map(|t| format!(" [{t}]"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{}{} {} {place}{link_title}",
                    "  ".repeat(depth),
                    page.kind.as_str(),
                    page.title
                );
                stack.extend(
                    index
                        .children(Some(&id))
                        .iter()
                        .rev()
                        .map(|c| (c.clone(), depth + 1)),
                );
            }
            out
        }

        fn document(&self, id: &str) -> Document {
            let hash = self.page(id).document.clone().expect("a document page");
            let (_, bytes) = self
                .outcome
                .documents
                .iter()
                .find(|(h, _)| *h == hash)
                .expect("the page's document is in the outcome");
            Document::from_json(serde_json::from_slice(bytes).unwrap()).unwrap()
        }

        /// The references of a page's document, in document order.
        fn refs(&self, id: &str) -> Vec<ContentRef> {
            let mut refs = Vec::new();
            for_each_ref(&self.document(id), &mut |r, _| refs.push(r.clone()));
            refs
        }

        /// The id of the page with this title.
        fn id(&self, title: &str) -> String {
            let ids: Vec<&String> = self
                .outcome
                .tree
                .pages
                .values()
                .filter(|p| p.title == title)
                .map(|p| &p.id)
                .collect();
            assert_eq!(ids.len(), 1, "pages titled {title:?}: {ids:?}");
            ids[0].clone()
        }

        fn target(&self, id: &str) -> ContentRef {
            ContentRef::from_value(self.page(id).target.as_ref().expect("a link page")).unwrap()
        }
    }

    fn page(id: &str) -> ContentRef {
        ContentRef::page(id)
    }

    fn anchor(anchor: &str, page: &str) -> ContentRef {
        ContentRef::anchor(anchor, Some(page))
    }

    const SUMMARY: &str = "# Table of contents

* [Introduction](README.md)
* [Quick start](quickstart.md)

## Guides

* [Guide](guide/README.md)
  * [Setup](guide/setup.md)
    * [On Linux](guide/setup/linux.md)
  * [Usage](guide/usage.md)
  * [Setup: install step](guide/setup.md#install)
* [Troubleshooting](guide/troubleshooting.md)
* [GitHub](https://github.com/example/project)

## Reference

* [API](reference/api.md)
* [CLI](<reference/cli.md>)
* [Configuration](reference/config/README.md)
  * [Options](reference/config/options.md)
  * [Environment](reference/config/env.md)
* [Manual (PDF)](files/manual.pdf)
* Plain entry
";

    fn summary_folder() -> Vec<ImportFile> {
        files(&[
            ("SUMMARY.md", SUMMARY),
            (
                "README.md",
                "# Welcome\n\nStart with [the guide](guide/README.md), or [install](guide/setup.md#install).\n\n![Diagram](.gitbook/assets/diagram.png)\n",
            ),
            (
                "quickstart.md",
                "Run `quire serve`.\n\nSee [usage](guide/usage.md) and [the top](./README.md).\n",
            ),
            (
                "guide/README.md",
                "# The guide\n\nRead [setup](setup.md) first.\n",
            ),
            (
                "guide/setup.md",
                "---\ndescription: Installing quire\nicon: 🔧\n---\n\n# Setup\n\n## Install\n\nSee [Linux](setup/linux.md), [usage flags](./usage.md#flags), [the options](../reference/config/) and [nowhere](missing-page.md).\n\n![Diagram](../.gitbook/assets/diagram.png)\n\n[Site](https://example.com)\n",
            ),
            (
                "guide/setup/linux.md",
                "# On Linux\n\nBack to [setup](../setup.md) or [the env option](../../reference/config/options.md#env).\n",
            ),
            (
                "guide/usage.md",
                "# Usage\n\n## Flags\n\nJump to [flags](#flags), read [the draft](../drafts/old.md).\n\n![Shot](../.gitbook/assets/screen%20shot.png)\n",
            ),
            (
                "reference/api.md",
                "# API\n\n{% file src=\"../files/manual.pdf\" %}\n",
            ),
            (
                "reference/cli.md",
                "# Command line\n\n[Config](config/README.md)\n",
            ),
            ("reference/config/README.md", "# Configuration\n"),
            ("reference/config/options.md", "# Options\n\n## Env\n"),
            (
                "reference/config/env.md",
                "# Environment\n\n[Up](../../README.md)\n",
            ),
            ("files/manual.pdf", "%PDF-1.4"),
            (".gitbook/assets/diagram.png", "PNG1"),
            (".gitbook/assets/screen shot.png", "PNG2"),
            (".gitbook/assets/unused.png", "PNG3"),
            ("drafts/old.md", "# Old\n"),
            ("unlisted.md", "# Unlisted\n"),
            (".github/CONTRIBUTING.md", "# Contributing\n"),
        ])
    }

    #[test]
    fn a_summary_gives_the_table_of_contents() {
        let run = import(summary_folder());
        assert_eq!(
            run.outline(),
            r#"document Welcome /welcome [Introduction]
document Quick start /quickstart
group Guides /guides
  document The guide /guides/guide [Guide]
    document Setup /guides/guide/setup
      document On Linux /guides/guide/setup/linux
    document Usage /guides/guide/usage
    link Setup: install step -> {"kind":"anchor","anchor":"install","page":"p5"}
  document Troubleshooting /guides/troubleshooting
  link GitHub -> {"kind":"url","url":"https://github.com/example/project"}
group Reference /reference
  document API /reference/api
  document Command line /reference/cli [CLI]
  document Configuration /reference/config
    document Options /reference/config/options
    document Environment /reference/config/env
  link Manual (PDF) -> {"kind":"file","file":"f3"}
  document Plain entry /reference/plain-entry
"#
        );
        assert_eq!(
            run.outcome.warnings,
            [
                "SUMMARY.md lists guide/troubleshooting.md, which does not exist; imported as an empty page",
                "SUMMARY.md: the entry \"Plain entry\" has no link; imported as an empty page",
                "drafts/old.md is not listed in SUMMARY.md; ignored",
                "unlisted.md is not listed in SUMMARY.md; ignored",
                "guide/setup.md: the link target \"missing-page.md\" matches no file of the imported folder; kept as written",
                "guide/usage.md: the link target \"../drafts/old.md\" is a page that is not imported; kept as written",
            ]
        );
        // Each referenced file stored once, unreferenced ones never.
        assert_eq!(
            run.stored,
            [
                ".gitbook/assets/diagram.png",
                ".gitbook/assets/screen shot.png",
                "files/manual.pdf"
            ]
        );
        assert_eq!(
            run.outcome.tree.files.keys().collect::<Vec<_>>(),
            ["f1", "f2", "f3"]
        );
        assert_eq!(run.outcome.tree.files["f2"].name, "screen shot.png");

        let [welcome, quick, guide, setup, linux, usage, options, env] = [
            "Welcome",
            "Quick start",
            "The guide",
            "Setup",
            "On Linux",
            "Usage",
            "Options",
            "Environment",
        ]
        .map(|t| run.id(t));
        let config = run.id("Configuration");
        assert_eq!(
            run.refs(&welcome),
            [page(&guide), anchor("install", &setup), ContentRef::file("f1")]
        );
        assert_eq!(run.refs(&quick), [page(&usage), page(&welcome)]);
        assert_eq!(run.refs(&guide), [page(&setup)]);
        assert_eq!(
            run.refs(&setup),
            [
                page(&linux),
                anchor("flags", &usage),
                page(&config),
                ContentRef::url("missing-page.md"),
                ContentRef::file("f1"),
                ContentRef::url("https://example.com"),
            ]
        );
        assert_eq!(run.refs(&linux), [page(&setup), anchor("env", &options)]);
        assert_eq!(
            run.refs(&usage),
            [
                ContentRef::anchor("flags", None),
                ContentRef::url("../drafts/old.md"),
                ContentRef::file("f2")
            ]
        );
        assert_eq!(run.refs(&run.id("API")), [ContentRef::file("f3")]);
        assert_eq!(run.refs(&run.id("Command line")), [page(&config)]);
        assert_eq!(run.refs(&env), [page(&welcome)]);
        assert_eq!(run.target(&run.id("Manual (PDF)")), ContentRef::file("f3"));

        // Metadata from frontmatter; the title heading is not part of the document.
        let setup_page = run.page(&setup);
        assert_eq!(setup_page.description.as_deref(), Some("Installing quire"));
        assert_eq!(setup_page.emoji.as_deref(), Some("🔧"));
        assert_eq!(run.document(&setup).nodes[0].node_type(), "heading-2");
        assert_eq!(setup_page.created_at, 7);
        // Empty pages have an (empty) document; every document is stored once.
        assert!(run.document(&run.id("Troubleshooting")).nodes.is_empty());
        let used: HashSet<&String> = run
            .outcome
            .tree
            .pages
            .values()
            .filter_map(|p| p.document.as_ref())
            .collect();
        assert_eq!(used.len(), run.outcome.documents.len());
        // Keys were filled in.
        assert!(run.document(&welcome).nodes.iter().all(|n| n.key.is_some()));
        // Groups and links have no document.
        assert!(run.at("guides").document.is_none());
        assert_eq!(run.at("guides").kind, PageKind::Group);
    }

    #[test]
    fn summary_headings_breaks_and_odd_entries() {
        let run = import(files(&[
            (
                "SUMMARY.md",
                "# Summary\n\n* [Start](start.md)\n\n# Part one\n\n* [A](a.md)\n\n---\n\n* [After the break](b.md)\n\n### Part two\n\n* [Twice](a.md)\n* [Elsewhere](https://x.io)\n  * [Under a link](c.md)\n* [](d.md)\n* \n  * [Orphan](e.md)\n* [Climbing](../out.md)\n",
            ),
            ("start.md", "Start."),
            ("a.md", "# Alpha\n"),
            ("b.md", "# Bravo\n"),
            ("c.md", "# Charlie\n"),
            ("d.md", ""),
            ("e.md", "# Echo\n"),
        ]));
        assert_eq!(
            run.outline(),
            r#"document Start /start
group Part one /part-one
  document Alpha /part-one/a [A]
document Bravo /b [After the break]
group Part two /part-two
  link Twice -> {"kind":"page","page":"p3"}
  link Elsewhere -> {"kind":"url","url":"https://x.io"}
  document Charlie /part-two/c [Under a link]
  document D /part-two/d
  document Echo /part-two/e [Orphan]
  document Climbing /part-two/climbing
"#
        );
        assert_eq!(
            run.outcome.warnings,
            [
                "SUMMARY.md lists a.md more than once; the later entries link to its page",
                "SUMMARY.md: the target \"../out.md\" of \"Climbing\" is not a file of the imported folder; imported as an empty page",
                "the pages under \"Elsewhere\" are under a link; moved up a level",
            ]
        );
    }

    #[test]
    fn without_a_summary_the_folders_give_the_tree() {
        let mut input = files(&[
            (
                "README.md",
                "# Home\n\n[Guide](guide/) [A](guide/a.md) [Endpoints](api/endpoints.md)\n",
            ),
            ("getting-started.md", "Some text.\n"),
            ("10-later.md", "# Later\n"),
            ("2-earlier.md", "# Earlier\n"),
            ("api.md", "# API\n"),
            ("api/endpoints.md", "# Endpoints\n\n[API](../api.md) [back](..)\n"),
            (
                "guide/README.md",
                "# Guide\n\n[a](a.md) [b](./b.md#part) [self](README.md) [tips](extra/tips.md) [extra](extra/)\n",
            ),
            ("guide/b.md", "# B\n"),
            (
                "guide/a.md",
                "# A\n\n[home](../README.md) [root](/) [faq](/misc/faq.md)\n",
            ),
            ("guide/extra/tips.md", "# Tips\n"),
            ("misc/faq.md", "# FAQ\n"),
            ("misc/Read Me First.md", "Hello.\n"),
            ("images/x.png", "PNG"),
            (".github/CONTRIBUTING.md", "# Contributing\n"),
        ]);
        input.push(ImportFile {
            path: "bad.md".into(),
            bytes: vec![b'#', b' ', 0xff, 0xfe],
        });
        let run = import(input);
        assert_eq!(
            run.outline(),
            "document Home /home
document Earlier /2-earlier
document Later /10-later
document API /api
  document Endpoints /api/endpoints
document Getting started /getting-started
document Guide /guide
  document A /guide/a
  document B /guide/b
  document Extra /guide/extra
    document Tips /guide/extra/tips
group Misc /misc
  document FAQ /misc/faq
  document Read Me First /misc/read-me-first
"
        );
        assert_eq!(
            run.outcome.warnings,
            [
                "bad.md: not valid UTF-8; ignored",
                "guide/extra/ has no README.md; imported as an empty page holding its pages",
            ]
        );
        assert!(run.stored.is_empty());
        let [home, guide, a, b, endpoints, api, tips, extra, faq] = [
            "Home",
            "Guide",
            "A",
            "B",
            "Endpoints",
            "API",
            "Tips",
            "Extra",
            "FAQ",
        ]
        .map(|t| run.id(t));
        assert_eq!(run.refs(&home), [page(&guide), page(&a), page(&endpoints)]);
        assert_eq!(run.refs(&endpoints), [page(&api), page(&home)]);
        assert_eq!(
            run.refs(&guide),
            [
                page(&a),
                anchor("part", &b),
                page(&guide),
                page(&tips),
                page(&extra)
            ]
        );
        assert_eq!(run.refs(&a), [page(&home), page(&home), page(&faq)]);
        // The folder's own page is its README; the API folder adopted api.md.
        assert_eq!(run.at("api/endpoints").parent.as_deref(), Some(api.as_str()));
    }

    #[test]
    fn gitbook_yaml_moves_the_root_and_the_structure_files() {
        let run = import(files(&[
            (
                ".gitbook.yaml",
                "root: ./docs/\nstructure:\n  readme: intro.md\n  summary: toc/SUMMARY.md\nredirects:\n  old/page: new/page.md\n  /old/setup/: ./setup.md\n",
            ),
            ("README.md", "# Outside the root\n"),
            ("src/lib.md", "# Not docs\n"),
            (
                "docs/intro.md",
                "# Introduction\n\nSee [setup](setup.md) and [the top](/).\n",
            ),
            ("docs/README.md", "# Docs readme\n"),
            (
                "docs/setup.md",
                "# Set up\n\n[Intro](intro.md) [Contents](toc/SUMMARY.md)\n",
            ),
            ("docs/toc/SUMMARY.md", "# Summary\n\n* [Setup](../setup.md)\n"),
        ]));
        assert_eq!(
            run.outline(),
            "document Introduction /introduction\ndocument Set up /setup [Setup]\n"
        );
        assert_eq!(
            run.outcome.warnings,
            [
                "docs/intro.md is not listed in docs/toc/SUMMARY.md; imported as the first page",
                "docs/README.md is not listed in docs/toc/SUMMARY.md; ignored",
                "docs/setup.md: the link target \"toc/SUMMARY.md\" is a page that is not imported; kept as written",
                ".gitbook.yaml: the redirect from \"old/page\" to \"new/page.md\" matches no file of the imported folder; skipped",
            ]
        );
        let [intro, setup] = ["Introduction", "Set up"].map(|t| run.id(t));
        // Destinations are read from the root.
        assert_eq!(
            run.outcome.redirects,
            [ImportedRedirect {
                source: "old/setup".into(),
                page_id: setup.clone()
            }]
        );
        assert_eq!(run.refs(&intro), [page(&setup), page(&intro)]);
        assert_eq!(run.refs(&setup)[0], page(&intro));

        // Without the summary it names, the folders under the root give the tree; the readme
        // still comes first and the root README.md is an ordinary page.
        let run = import(files(&[
            (
                ".gitbook.yaml",
                "root: docs\nstructure:\n  readme: ./intro.md\n  summary: nope.md\n",
            ),
            ("docs/intro.md", "# Introduction\n"),
            ("docs/README.md", "# Docs readme\n"),
            ("docs/about.md", "# About\n\n[Start](./)\n"),
        ]));
        assert_eq!(
            run.outline(),
            "document Introduction /introduction\ndocument About /about\ndocument Docs readme /docs-readme\n"
        );
        assert_eq!(
            run.outcome.warnings,
            [
                "the summary docs/nope.md given in .gitbook.yaml does not exist; the folders give the table of contents"
            ]
        );
        assert_eq!(run.refs(&run.id("About")), [page(&run.id("Introduction"))]);
    }

    #[test]
    fn gitbook_yaml_redirects_lead_to_the_pages_of_their_files() {
        let yaml = "redirects:\n  \
            previous/page: new-folder/page.md\n  \
            old/path/: guide/\n  \
            /Old%20Name: ./guide/Setup.md\n  \
            start: /\n  \
            anchored: guide/setup.md#install\n  \
            typo: guide/nope.md\n  \
            picture: logo.png\n  \
            out: ../outside.md\n  \
            web: https://example.com/\n  \
            unlisted: notes.md\n  \
            top/..: guide/setup.md\n";
        let run = import(files(&[
            (".gitbook.yaml", yaml),
            ("README.md", "# Home\n\n![logo](logo.png)\n"),
            (
                "SUMMARY.md",
                "* [Home](README.md)\n* [Guide](guide/README.md)\n  * [Setup](guide/setup.md)\n* [Page](new-folder/page.md)\n",
            ),
            ("guide/README.md", "# Guide\n"),
            ("guide/setup.md", "# Setup\n"),
            ("new-folder/page.md", "# Page\n"),
            ("notes.md", "# Notes\n"),
            ("logo.png", "png"),
        ]));
        let [home, guide, setup, page] = ["Home", "Guide", "Setup", "Page"].map(|t| run.id(t));
        let got: Vec<(&str, &str)> = run
            .outcome
            .redirects
            .iter()
            .map(|r| (r.source.as_str(), r.page_id.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("previous/page", page.as_str()),
                ("old/path", guide.as_str()),
                // Percent-decoded; the file found case-insensitively, as links are.
                ("Old Name", setup.as_str()),
                ("start", home.as_str()),
                ("anchored", setup.as_str()),
            ]
        );
        assert_eq!(
            run.outcome.warnings,
            [
                ".gitbook.yaml: the redirect source \"top/..\" climbs with `..`; skipped",
                "notes.md is not listed in SUMMARY.md; ignored",
                ".gitbook.yaml: the redirect from \"anchored\" lands on the page of \"guide/setup.md#install\", not its anchor",
                ".gitbook.yaml: the redirect from \"typo\" to \"guide/nope.md\" matches no file of the imported folder; skipped",
                ".gitbook.yaml: the redirect from \"picture\" to \"logo.png\" is not a markdown page; skipped",
                ".gitbook.yaml: the redirect from \"out\" to \"../outside.md\" is not a file inside the root folder; skipped",
                ".gitbook.yaml: the redirect from \"web\" to \"https://example.com/\" is a URL; only files of the import can be destinations; skipped",
                ".gitbook.yaml: the redirect from \"unlisted\" to \"notes.md\" is a page that is not imported; skipped",
            ]
        );
        // Without redirects, none.
        let run = import(files(&[("README.md", "# Home\n")]));
        assert!(run.outcome.redirects.is_empty());
    }

    #[test]
    fn bad_configurations_and_paths_are_refused() {
        let config = |yaml: &str| {
            try_import(files(&[(".gitbook.yaml", yaml), ("README.md", "# A\n")]))
                .err()
                .map(|e| e.to_string())
        };
        assert_eq!(
            config("root: ../elsewhere\n").as_deref(),
            Some(".gitbook.yaml: root \"../elsewhere\" leaves the imported folder")
        );
        assert_eq!(
            config("structure:\n  summary: ../../SUMMARY.md\n").as_deref(),
            Some(".gitbook.yaml: structure.summary \"../../SUMMARY.md\" leaves the root folder")
        );
        assert!(config("root: [1, 2]\n").is_some_and(|e| e.starts_with(".gitbook.yaml: ")));
        assert_eq!(config(""), None);
        let missing_readme = try_import(files(&[
            (".gitbook.yaml", "structure:\n  readme: start.md\n"),
            ("a.md", "# A\n"),
        ]))
        .unwrap();
        assert_eq!(
            missing_readme.outcome.warnings,
            ["the readme start.md given in .gitbook.yaml does not exist"]
        );
        assert_eq!(
            try_import(files(&[(".gitbook.yaml", "root: docs\n"), ("a.md", "# A\n")]))
                .err()
                .map(|e| e.to_string())
                .as_deref(),
            Some("no markdown pages to import under \"docs\"")
        );
        assert_eq!(config("# only a comment\n"), None);
        for path in ["../x.md", "/etc/x.md", "a/../../x.md", ".", ""] {
            assert_eq!(
                try_import(files(&[(path, "# X\n")])).err(),
                Some(ImportError::BadPath { path: path.into() }),
                "{path}"
            );
        }
        assert_eq!(
            try_import(files(&[("a/./b.md", "# B\n"), ("a/b.md", "# B\n")])).err(),
            Some(ImportError::DuplicatePath {
                path: "a/b.md".into()
            })
        );
        assert_eq!(
            try_import(files(&[("a/../b.md", "# B\n")]))
                .map(|r| r.outline())
                .ok(),
            Some("document B /b\n".to_string())
        );
        assert_eq!(
            try_import(files(&[("image.png", "PNG"), (".gitbook/x.md", "# Hidden\n")])).err(),
            Some(ImportError::NoPages(String::new()))
        );
        assert_eq!(
            try_import(files(&[("a.md", "[run](tool.exe)"), ("tool.exe", "MZ")])).err(),
            Some(ImportError::StoreFile {
                path: "tool.exe".into(),
                message: "refused".into()
            })
        );
    }

    #[test]
    fn link_targets_resolve_against_file_paths() {
        let run = import(files(&[
            ("README.md", "# Root\n"),
            ("guide/README.md", "# Guide\n"),
            ("guide/Setup Guide.md", "# Setup guide\n\n## Install\n"),
            (
                "guide/install/linux.md",
                "# Linux\n\n[a](../README.md) [b](../../README.md) [c](../) [d](..) [e](/guide/Setup%20Guide.md#install) [f](<../Setup Guide.md>) [g](../setup%20guide.MD) [h](../../../escape.md) [i](mailto:x@y.z) [j](#local) [k](./) [l](img/a%20b.png?raw=1) [m](/guide) [n](<../Setup Guide>) [o](../../README.md#top) [p](<img/a b.png>) [q]()\n",
            ),
            ("guide/install/img/a b.png", "PNG"),
        ]));
        let [root, guide, setup, install] = ["Root", "Guide", "Setup guide", "Install"].map(|t| run.id(t));
        assert_eq!(run.at("guide/setup-guide").id, setup);
        assert_eq!(
            run.refs(&run.id("Linux")),
            [
                page(&guide),
                page(&root),
                page(&guide),
                page(&guide),
                anchor("install", &setup),
                page(&setup),
                page(&setup),
                ContentRef::url("../../../escape.md"),
                ContentRef::url("mailto:x@y.z"),
                ContentRef::anchor("local", None),
                page(&install),
                ContentRef::file("f1"),
                page(&guide),
                page(&setup),
                anchor("top", &root),
                ContentRef::file("f1"),
                ContentRef::url(""),
            ]
        );
        assert_eq!(run.stored, ["guide/install/img/a b.png"]);
        assert_eq!(
            run.outcome.warnings,
            [
                "guide/install/ has no README.md; imported as an empty page holding its pages",
                "guide/install/linux.md: the link target \"../../../escape.md\" leaves the imported folder; kept as written",
            ]
        );
    }

    /// The Beefree SDK docs link from `forms/block/passing.md` with one `../` too many
    /// (`../../../getting-started/...`): GitBook, like a browser, stops at the root, so those
    /// links and images are found there instead of left broken.
    #[test]
    fn targets_climbing_above_the_root_are_read_from_the_root() {
        let run = import(files(&[
            ("README.md", "# Root\n"),
            ("other/README.md", "# Others\n"),
            ("other/page.md", "# Target\n\n## Part\n"),
            (
                "forms/block/passing.md",
                "# Passing\n\n[a](../../../other/page.md#part) ![i](<../../../.gitbook/assets/a b.png>) [b](../../../../other/) [c](../../../missing.md)\n",
            ),
            (".gitbook/assets/a b.png", "PNG"),
        ]));
        let other = run.id("Target");
        assert_eq!(
            run.refs(&run.id("Passing")),
            [
                ContentRef::anchor("part", Some(&other)),
                ContentRef::file("f1"),
                ContentRef::page(&run.id("Others")),
                ContentRef::url("../../../missing.md"),
            ]
        );
        let warnings: Vec<&String> = run
            .outcome
            .warnings
            .iter()
            .filter(|w| w.contains("passing.md"))
            .collect();
        assert_eq!(
            warnings,
            [
                "forms/block/passing.md: the link target \"../../../other/page.md#part\" climbs above the imported folder; read from its root",
                "forms/block/passing.md: the link target \"../../../.gitbook/assets/a b.png\" climbs above the imported folder; read from its root",
                "forms/block/passing.md: the link target \"../../../../other/\" climbs above the imported folder; read from its root",
                "forms/block/passing.md: the link target \"../../../missing.md\" leaves the imported folder; kept as written",
            ]
        );
        assert_eq!(clamp_to_root("a/b.md", "../x.md"), None);
        assert_eq!(
            clamp_to_root("a/b.md", "../../x.md?q#y").as_deref(),
            Some("/x.md?q#y")
        );
        assert_eq!(clamp_to_root("a/b.md", "../../..").as_deref(), Some("/"));
    }

    #[test]
    fn target_parsing() {
        let local = |path: &str, raw: Option<&str>, anchor: Option<&str>, folder: bool| Target::Local {
            path: path.into(),
            raw_path: raw.map(str::to_string),
            anchor: anchor.map(str::to_string),
            folder,
        };
        let from = "guide/setup.md";
        assert_eq!(
            parse_target(from, "a%20b.md#x%20y"),
            local("guide/a b.md", Some("guide/a%20b.md"), Some("x y"), false)
        );
        assert_eq!(parse_target(from, "../"), local("", None, None, true));
        assert_eq!(parse_target(from, "sub/.."), local("guide", None, None, true));
        assert_eq!(parse_target(from, "/x/y?q=1"), local("x/y", None, None, false));
        assert_eq!(parse_target(from, "../../x.md"), Target::Invalid);
        assert_eq!(parse_target(from, "#a"), Target::Anchor("a".into()));
        assert_eq!(parse_target(from, "https://x.io/a.md"), Target::External);
        // A file whose name really holds `%20` is found by its name as written.
        let run = import(files(&[
            ("a.md", "![x](100%25.png) ![y](50%.png)"),
            ("50%.png", "P"),
            ("100%.png", "P"),
        ]));
        assert_eq!(
            run.refs(&run.id("A")),
            [ContentRef::file("f1"), ContentRef::file("f2")]
        );
        assert_eq!(run.stored, ["100%.png", "50%.png"]);
    }

    #[test]
    fn sibling_slugs_are_unique_and_valid() {
        let run = import(files(&[
            (
                "SUMMARY.md",
                "* [One](a/setup.md)\n* [Two](b/setup.md)\n* [Three](setup-2.md)\n* [Four](c/setup.md)\n* [Five](<Über Café.md>)\n* [Six](v1.2.md)\n* [Seven](UPPER_case.md)\n",
            ),
            ("a/setup.md", ""),
            ("b/setup.md", ""),
            ("setup-2.md", ""),
            ("c/setup.md", ""),
            ("v1.2.md", ""),
            ("UPPER_case.md", ""),
        ]));
        let slugs: Vec<String> = run
            .outcome
            .tree
            .index()
            .children(None)
            .iter()
            .map(|id| run.page(id).slug.clone())
            .collect();
        assert_eq!(
            slugs,
            [
                "setup",
                "setup-3",
                "setup-2",
                "setup-4",
                "uber-cafe",
                "v1.2",
                "upper_case"
            ]
        );
        assert!(slugs.iter().all(|s| check_slug(s).is_ok()));
        assert_eq!(suffixed_slug(&"a".repeat(100), 12).len(), 100);
        assert_eq!(humanize("getting-started_now"), "Getting started now");
        assert_eq!(humanize("--"), "Untitled");
        assert_eq!(natural_cmp("page2", "page10"), Ordering::Less);
        assert_eq!(natural_cmp("B", "a"), Ordering::Greater);
        assert_eq!(natural_cmp("a", "a1"), Ordering::Less);
    }

    #[test]
    fn deep_folders_move_up_to_the_deepest_level() {
        let mut list = Vec::new();
        let mut folder = String::new();
        for level in 1..=40 {
            folder = join(&folder, &format!("d{level}"));
            list.push((format!("{folder}/README.md"), format!("# Level {level}\n")));
        }
        let run = import(
            list.into_iter()
                .map(|(path, text)| ImportFile {
                    path,
                    bytes: text.into_bytes(),
                })
                .collect(),
        );
        let tree = &run.outcome.tree;
        assert_eq!(tree.pages.len(), 40);
        let depth = |id: &str| {
            let mut depth = 0;
            let mut next = Some(id.to_string());
            while let Some(id) = next {
                depth += 1;
                next = tree.pages[&id].parent.clone();
            }
            depth
        };
        assert_eq!(tree.pages.keys().map(|id| depth(id)).max(), Some(MAX_DEPTH));
        let index = tree.index();
        let deepest_parent = run.id("Level 31");
        let titles: Vec<&str> = index
            .children(Some(&deepest_parent))
            .iter()
            .map(|id| tree.pages[id].title.as_str())
            .collect();
        assert_eq!(
            titles,
            (32..=40).map(|l| format!("Level {l}")).collect::<Vec<_>>()
        );
        assert_eq!(run.outcome.warnings.len(), 8);
        assert!(run.outcome.warnings[0].contains("more than 32 levels deep"));
    }

    #[test]
    fn imports_are_deterministic() {
        let a = import(summary_folder());
        let b = import(summary_folder());
        assert_eq!(a.outcome.tree, b.outcome.tree);
        assert_eq!(a.outcome.documents, b.outcome.documents);
        assert_eq!(a.outcome.warnings, b.outcome.warnings);
        assert_eq!(a.stored, b.stored);
        // Input order does not matter either.
        let mut reversed = summary_folder();
        reversed.reverse();
        let c = import(reversed);
        assert_eq!(a.outcome.tree, c.outcome.tree);
        assert_eq!(a.outcome.documents, c.outcome.documents);
        assert_eq!(a.outcome.warnings, c.outcome.warnings);
    }

    #[test]
    fn crlf_bom_and_bad_frontmatter() {
        let run = import(files(&[
            (
                "a.md",
                "\u{feff}---\r\ndescription: D\r\ncover: .gitbook/assets/cover.png\r\ncoverY: 10\r\n---\r\n\r\n# Title A\r\n\r\nBody.\r\n",
            ),
            (".gitbook/assets/cover.png", "PNG"),
            ("b.md", "---\ndescription: [unclosed\n---\n\n# Title B\n\nBody.\n"),
        ]));
        assert_eq!(run.outline(), "document Title A /a\ndocument Title B /b\n");
        let a = run.page(&run.id("Title A"));
        assert_eq!(a.description.as_deref(), Some("D"));
        assert_eq!(
            a.cover,
            Some(serde_json::json!({"ref": {"kind": "file", "file": "f1"}, "yPos": 10.0}))
        );
        assert_eq!(run.outcome.warnings.len(), 1);
        assert!(
            run.outcome.warnings[0].starts_with("b.md: invalid frontmatter"),
            "{:?}",
            run.outcome.warnings
        );
        assert_eq!(run.document(&run.id("Title B")).nodes.len(), 1);
    }

    /// 10,000 pages in 100 folders, each linking to a neighbour and sharing an image.
    fn big_folder(with_summary: bool) -> Vec<ImportFile> {
        let mut out = Vec::new();
        let mut summary = String::from("# Table of contents\n\n");
        for f in 0..100 {
            out.push(ImportFile {
                path: format!("part{f}/README.md"),
                bytes: format!("# Part {f}\n\n[Next part](../part{}/README.md)\n", (f + 1) % 100)
                    .into_bytes(),
            });
            let _ = writeln!(summary, "* [Part {f}](part{f}/README.md)");
            for p in 0..99 {
                out.push(ImportFile {
                    path: format!("part{f}/page{p}.md"),
                    bytes: format!(
                        "# Page {f}.{p}\n\nSee [the next page](page{}.md#intro) and ![logo](../.gitbook/assets/logo.png).\n",
                        (p + 1) % 99
                    )
                    .into_bytes(),
                });
                let _ = writeln!(summary, "  * [Page {f}.{p}](part{f}/page{p}.md)");
            }
        }
        out.push(ImportFile {
            path: ".gitbook/assets/logo.png".into(),
            bytes: b"PNG".to_vec(),
        });
        if with_summary {
            out.push(ImportFile {
                path: "SUMMARY.md".into(),
                bytes: summary.into_bytes(),
            });
        }
        out
    }

    #[test]
    fn ten_thousand_pages() {
        for with_summary in [false, true] {
            let started = std::time::Instant::now();
            let run = import(big_folder(with_summary));
            let elapsed = started.elapsed();
            let tree = &run.outcome.tree;
            assert_eq!(tree.pages.len(), 10_000);
            assert!(
                run.outcome.warnings.is_empty(),
                "{:?}",
                &run.outcome.warnings[..1]
            );
            assert_eq!(run.stored, [".gitbook/assets/logo.png"]);
            let index = tree.index();
            assert_eq!(index.children(None).len(), 100);
            let page = run.at("part7/page98");
            assert_eq!(page.title, "Page 7.98");
            assert_eq!(
                run.refs(&page.id),
                [anchor("intro", &run.at("part7/page0").id), ContentRef::file("f1")]
            );
            // Generous even for unoptimized builds; a quadratic step would take minutes.
            assert!(elapsed.as_secs() < 60, "{elapsed:?}");
        }
    }
}
