//! PDF exports typeset here (`quire_store::pdf::Typesetter`): the pages of the export's
//! revision in tree order with their documents and the reusable contents they include, the
//! images they show from the object store, and the URLs a PDF links to outside itself (a page
//! not in the book: its `urls.app`; a file: its download URL that does not expire, since a PDF
//! outlives any hour), typeset by `quire-pdf` on a blocking thread, one at a time per process.

use std::collections::HashMap;
use std::sync::Arc;

use quire_content::Document;
use quire_content::tree::FileEntry;
use quire_reader::{NavKind, NavTree, SpaceResolver};
use quire_store::Store;
use quire_store::content::CachedDocument;
use quire_store::content::store as content_store;
use quire_store::error::{StoreError, StoreResult};
use quire_store::pdf::{Export, Outcome, Subject, Typeset, TypesetFuture, Typesetter};
use tokio::sync::Semaphore;

use crate::urls::Urls;

/// The stored JSON of the documents of one PDF, together, at most: a book larger than this
/// would take more memory to typeset than a process should give one request.
pub const MAX_BOOK_DOCUMENT_BYTES: usize = 48 * 1024 * 1024;
/// How long a job waits for the PDF typeset before it: well inside its lease
/// (`quire_store::jobs::LEASE_MS`) with a large PDF's typesetting after it. Past it the job is
/// put off ([`Outcome::Busy`]) rather than keep its lease waiting.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(20);
/// Reusable contents included in one PDF at most; further ones are left out.
const MAX_REUSABLE: usize = 256;

pub struct PdfTypesetter {
    urls: Urls,
    signing_key: Vec<u8>,
    blobs: quire_blobs::BlobStore,
    /// One PDF at a time: `quire_pdf::render` takes one at a time anyway, and a job waits for
    /// this (within [`BUSY_WAIT`]) rather than for that on a blocking thread.
    one: Semaphore,
}

impl PdfTypesetter {
    pub fn new(urls: Urls, signing_key: Vec<u8>, blobs: quire_blobs::BlobStore) -> PdfTypesetter {
        PdfTypesetter {
            urls,
            signing_key,
            blobs,
            one: Semaphore::new(1),
        }
    }
}

impl Typesetter for PdfTypesetter {
    fn typeset<'a>(&'a self, store: &'a Store, export: &'a Export) -> TypesetFuture<'a> {
        Box::pin(self.run(store, export))
    }
}

/// A page of the book as read from the revision.
struct Entry {
    id: String,
    title: String,
    emoji: Option<String>,
    description: Option<String>,
    depth: usize,
    /// The document's hash (None for a group).
    document: Option<String>,
}

/// What the typesetting reads before it starts.
struct Loaded {
    subject: Subject,
    nav: NavTree,
    entries: Vec<Entry>,
    documents: HashMap<String, Arc<CachedDocument>>,
    reusable: HashMap<String, Arc<CachedDocument>>,
    /// The export starts at a page rather than at the top of the space.
    page_scoped: bool,
}

impl PdfTypesetter {
    async fn run(&self, store: &Store, export: &Export) -> StoreResult<Outcome> {
        let Ok(Ok(_one)) = tokio::time::timeout(BUSY_WAIT, self.one.acquire()).await else {
            return Ok(Outcome::Busy);
        };
        let reading = store.clone();
        let read_export = export.clone();
        let base = self.urls.clone();
        let loaded = store
            .db
            .read_blocking(move |c| load(c, &reading, &read_export, &base))
            .await?;
        let loaded = match loaded {
            Ok(loaded) => loaded,
            Err(why) => return Ok(Outcome::Refused(why)),
        };
        let images = self.images(&loaded).await?;
        let urls = self.urls.clone();
        let key = self.signing_key.clone();
        let space_id = export.space_id.clone();
        let rendered = tokio::task::spawn_blocking(move || render(loaded, &images, &urls, &key, &space_id))
            .await
            .map_err(|e| StoreError::internal(format!("typesetting a PDF: {e}")))?;
        Ok(match rendered {
            Ok(pdf) => Outcome::Typeset(Typeset {
                bytes: pdf.bytes,
                pages: pdf.pages,
            }),
            Err(e) => Outcome::Refused(e.to_string()),
        })
    }

    /// The bytes of the images the book shows, in the order `quire_pdf::images_used` names
    /// them. One that is too large or whose bytes are missing is left out (the PDF shows a
    /// note in its place).
    async fn images(&self, loaded: &Loaded) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let documents = loaded
            .documents
            .values()
            .chain(loaded.reusable.values())
            .map(|d| &d.document);
        let wanted = quire_pdf::images_used(documents);
        let tree = &loaded.subject.stored.tree;
        let space_id = &loaded.subject.space.id;
        let mut images = Vec::new();
        for file_id in wanted.into_iter().take(quire_pdf::MAX_IMAGES) {
            let Some(file) = tree.files.get(&file_id) else {
                continue;
            };
            if usize::try_from(file.size).map_or(true, |size| size > quire_pdf::MAX_IMAGE_BYTES) {
                continue;
            }
            let Ok(blob) = self.blobs.get(space_id, &file.blob).await else {
                tracing::warn!(space = %space_id, file = %file_id, "an image of a PDF is missing its bytes");
                continue;
            };
            match blob.bytes().await {
                Ok(bytes) if bytes.len() <= quire_pdf::MAX_IMAGE_BYTES => {
                    images.push((file_id, bytes.to_vec()))
                }
                Ok(_) => {}
                Err(e) => {
                    return Err(StoreError::unavailable(format!(
                        "reading an image for a PDF: {e}"
                    )));
                }
            }
        }
        Ok(images)
    }
}

/// Reads the export's revision: Err(why) when there is nothing to typeset.
fn load(
    c: &mut dyn quire_store::db::Conn,
    store: &Store,
    export: &Export,
    urls: &Urls,
) -> StoreResult<Result<Loaded, String>> {
    let Some(subject) = quire_store::pdf::subject(c, &store.content, export)? else {
        return Ok(Err("the space was deleted".into()));
    };
    let space = &subject.space;
    let base = match subject.change_request_number {
        Some(number) => format!("/o/{}/s/{}/~/changes/{number}/", space.org_id, space.id),
        None => format!("/o/{}/s/{}/", space.org_id, space.id),
    };
    let nav = NavTree::build(&subject.stored.tree, subject.stored.index(), &urls.app(&base));
    let entries = match entries(&nav, &subject, export) {
        Ok(entries) => entries,
        Err(why) => return Ok(Err(why)),
    };
    if entries.len() > quire_pdf::MAX_PAGES {
        return Ok(Err(format!(
            "the PDF would have {} pages, more than the {} a PDF may have",
            entries.len(),
            quire_pdf::MAX_PAGES
        )));
    }
    let hashes: Vec<&str> = entries.iter().filter_map(|e| e.document.as_deref()).collect();
    let mut total = 0usize;
    let mut too_large = false;
    // Read without keeping: a book's documents would evict those the API's reads want.
    let documents: HashMap<String, Arc<CachedDocument>> =
        content_store::load_documents_if(c, &store.content, &space.id, &hashes, |bytes| {
            total = total.saturating_add(bytes);
            too_large |= total > MAX_BOOK_DOCUMENT_BYTES;
            !too_large
        })?
        .into_iter()
        .collect();
    if too_large {
        return Ok(Err(format!(
            "the content is larger than the {} MB a PDF may be typeset from",
            MAX_BOOK_DOCUMENT_BYTES / (1024 * 1024)
        )));
    }
    let reusable = reusable_contents(c, store, &subject, documents.values())?;
    Ok(Ok(Loaded {
        subject,
        nav,
        entries,
        documents,
        reusable,
        page_scoped: export.scope.page_id.is_some(),
    }))
}

/// The pages of the book in reading order: the whole tree without hidden pages and links, or
/// the export's page with its children (hidden or not: they were asked for), or that page only.
fn entries(nav: &NavTree, subject: &Subject, export: &Export) -> Result<Vec<Entry>, String> {
    let tree = &subject.stored.tree;
    let entry = |node: &quire_reader::NavNode, depth: usize| Entry {
        id: node.id.clone(),
        title: node.title.clone(),
        emoji: node.emoji.clone(),
        description: node.description.clone(),
        depth,
        // A page without a document yet is set as a group: its title only.
        document: match node.kind {
            NavKind::Page => tree.pages.get(&node.id).and_then(|p| p.document.clone()),
            _ => None,
        },
    };
    let nodes = nav.nodes();
    let mut out = Vec::new();
    // Pre-order with depths; a node's children follow it (NavTree::nodes' order).
    let walk = |roots: Vec<usize>, include_hidden: bool, out: &mut Vec<Entry>| {
        let mut stack: Vec<(usize, usize)> = roots.into_iter().rev().map(|at| (at, 0)).collect();
        while let Some((at, depth)) = stack.pop() {
            let Some(node) = nodes.get(at) else { continue };
            if matches!(node.kind, NavKind::Link(_)) || (node.hidden && !include_hidden) {
                continue;
            }
            out.push(entry(node, depth));
            stack.extend(node.children.iter().rev().map(|&child| (child, depth + 1)));
        }
    };
    match &export.scope.page_id {
        None => {
            let roots = nodes
                .iter()
                .enumerate()
                .filter(|(_, n)| n.parent.is_none())
                .map(|(at, _)| at)
                .collect();
            walk(roots, false, &mut out);
        }
        Some(page) => {
            let Some(at) = nodes.iter().position(|n| &n.id == page) else {
                return Err(format!("page {page:?} is not in this revision"));
            };
            if export.scope.only {
                out.push(entry(&nodes[at], 0));
            } else {
                walk(vec![at], true, &mut out);
            }
        }
    }
    Ok(out)
}

/// The reusable contents the documents include, and those they include, to the depth the
/// reader renders.
fn reusable_contents<'a>(
    c: &mut dyn quire_store::db::Conn,
    store: &Store,
    subject: &Subject,
    documents: impl Iterator<Item = &'a Arc<CachedDocument>>,
) -> StoreResult<HashMap<String, Arc<CachedDocument>>> {
    let tree = &subject.stored.tree;
    let mut found: HashMap<String, Arc<CachedDocument>> = HashMap::new();
    let mut wanted: Vec<String> = documents
        .flat_map(|d| quire_reader::reusable_contents_used(&d.document.nodes))
        .collect();
    for _ in 0..quire_reader::MAX_INCLUDE_DEPTH {
        wanted.sort_unstable();
        wanted.dedup();
        wanted.retain(|id| !found.contains_key(id));
        let room = MAX_REUSABLE.saturating_sub(found.len());
        let by_hash: HashMap<String, String> = wanted
            .iter()
            .filter_map(|id| Some((tree.reusable.get(id)?.document.clone()?, id.clone())))
            .take(room)
            .collect();
        if by_hash.is_empty() {
            break;
        }
        let hashes: Vec<&str> = by_hash.keys().map(String::as_str).collect();
        let loaded =
            content_store::load_documents_if(c, &store.content, &subject.space.id, &hashes, |_| true)?;
        wanted = loaded
            .iter()
            .flat_map(|(_, d)| quire_reader::reusable_contents_used(&d.document.nodes))
            .collect();
        for (hash, document) in loaded {
            if let Some(id) = by_hash.get(&hash) {
                found.insert(id.clone(), document);
            }
        }
    }
    Ok(found)
}

/// Typesets what was read (blocking).
fn render(
    mut loaded: Loaded,
    images: &[(String, Vec<u8>)],
    urls: &Urls,
    key: &[u8],
    space_id: &str,
) -> Result<quire_pdf::Pdf, quire_pdf::PdfError> {
    let subject = &loaded.subject;
    let file_url = |file: &FileEntry| {
        crate::files::permanent_download_url(urls, key, space_id, &file.blob, &file.name, &file.content_type)
    };
    let reusable = |id: &str| loaded.reusable.get(id).map(|d| d.document.clone());
    let mut resolver = SpaceResolver::new(&loaded.nav, &subject.stored.tree, &file_url);
    resolver.reusable = Some(&reusable);
    resolver.space_id = Some(space_id);
    let documents = std::mem::take(&mut loaded.documents);
    let pages = loaded
        .entries
        .iter()
        .map(|e| quire_pdf::BookPage {
            id: e.id.clone(),
            title: e.title.clone(),
            emoji: e.emoji.clone(),
            description: e.description.clone(),
            depth: e.depth,
            document: e
                .document
                .as_ref()
                .and_then(|hash| documents.get(hash))
                .map(|d| Box::new(Held(Arc::clone(d))) as quire_pdf::PageDocument<'_>),
        })
        .collect();
    // The book holds the only handles now, and quire-pdf lets each go once its page is written.
    drop(documents);
    let (title, emoji) = match loaded.entries.first() {
        // A PDF of one page and its children is titled by that page.
        Some(first) if loaded.page_scoped => (first.title.clone(), first.emoji.clone()),
        _ => (
            subject.space.title.clone(),
            subject
                .space
                .emoji
                .as_deref()
                .and_then(quire_reader::site::emoji_text),
        ),
    };
    let day = quire_store::clock::format_ms(subject.stored.meta.created_at);
    let book = quire_pdf::Book {
        title,
        emoji,
        date: quire_reader::content::long_date(&day),
        pages,
    };
    quire_pdf::render(book, &resolver, images)
}

/// A page's document as the book holds it.
struct Held(Arc<CachedDocument>);

impl std::borrow::Borrow<Document> for Held {
    fn borrow(&self) -> &Document {
        &self.0.document
    }
}
