//! Spaces typeset as PDF: a [`Book`] (its pages in tree order, each with its document) written
//! as Typst source ([`source`]), compiled in memory with the fonts bundled into the binary
//! ([`world`]) a chunk of pages at a time ([`chunks`]), each chunk exported by `typst-pdf`, and
//! the chunks joined into one PDF ([`join`]). A cover with the title, emoji and date; a table
//! of contents with page numbers; a running header with each page's title and page numbers; the
//! PDF's bookmarks following the page tree; links between pages of the book that jump inside
//! the PDF ([`links`]), and external links that open.
//!
//! No I/O: the caller gives the documents and the bytes of the images they show
//! ([`images_used`] says which), and stores the bytes this answers. Content that cannot be
//! typeset (an image that does not decode, a block quire does not know) becomes a visible note,
//! never a failed export.

use quire_content::Document;
use quire_reader::resolve::Resolver;

mod chunks;
mod images;
mod join;
mod links;
mod source;
mod world;

pub use chunks::CHUNK_SOURCE_BYTES;
pub use images::images_used;

/// Pages in one PDF at most.
pub const MAX_PAGES: usize = 5_000;
/// Images in one PDF at most; later ones are notes.
pub const MAX_IMAGES: usize = 2_000;
/// The bytes of one image at most.
pub const MAX_IMAGE_BYTES: usize = 20 * 1024 * 1024;
/// The pixels of one raster image at most (decoded, an image takes 4 bytes a pixel).
pub const MAX_IMAGE_PIXELS: u64 = 16_000_000;
/// The pixels of all the raster images of one PDF at most, which bounds the memory a render
/// takes for them.
pub const MAX_TOTAL_PIXELS: u64 = 48_000_000;
/// Lines of a code block highlighted at most: longer blocks are set plain.
pub const MAX_HIGHLIGHTED_LINES: usize = 2_000;
/// Containers (lists, hints, tabs, tables...) nested deeper than this are set one after
/// another rather than inside each other: Typst's layout has a depth limit of its own.
pub const MAX_CONTAINER_DEPTH: usize = 12;

/// What a PDF holds.
pub struct Book<'a> {
    pub title: String,
    pub emoji: Option<String>,
    /// The date on the cover, as it should read ("29 November 2026").
    pub date: String,
    /// The pages in reading order (the tree, depth first).
    pub pages: Vec<BookPage<'a>>,
}

/// A page of the book.
pub struct BookPage<'a> {
    pub id: String,
    pub title: String,
    pub emoji: Option<String>,
    pub description: Option<String>,
    /// 0 for a page at the top of the book, 1 for its children...
    pub depth: usize,
    /// None for a group, which has a title and children but no content. Owned (or borrowed,
    /// by `&Document`) so that [`render`] can let each go once its page is written: parsed
    /// documents are about 80 times their markdown, and a 500-page book's held for the whole
    /// render were most of the server's peak (bench/ANALYSIS.md).
    pub document: Option<PageDocument<'a>>,
}

/// A page's document, held however the caller holds it: `Box::new(&document)`,
/// `Box::new(document)`, or a handle of the caller's that borrows as a [`Document`].
pub type PageDocument<'a> = Box<dyn std::borrow::Borrow<Document> + Send + 'a>;

/// A typeset PDF.
pub struct Pdf {
    pub bytes: Vec<u8>,
    /// Pages of the PDF.
    pub pages: usize,
}

/// Why there is no PDF.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    #[error("the book has {0} pages, more than the {MAX_PAGES} a PDF may have")]
    TooManyPages(usize),
    #[error("the PDF could not be typeset: {0}")]
    Typeset(String),
}

/// Typesets `book`. `images` holds the bytes of the files [`images_used`] named, in that order
/// (those absent become notes); `resolver` says where references outside the book lead (absolute URLs: a
/// PDF has no base to resolve relative ones against).
///
/// CPU-bound, seconds for hundreds of pages: call it on a blocking thread. One runs at a time
/// in a process (the rest wait), and it holds one chunk of [`CHUNK_SOURCE_BYTES`] of source
/// laid out at a time, which bound the memory it takes.
pub fn render(
    book: Book<'_>,
    resolver: &dyn Resolver,
    images: &[(String, Vec<u8>)],
) -> Result<Pdf, PdfError> {
    render_in_chunks(book, resolver, images, CHUNK_SOURCE_BYTES)
}

/// [`render`] with chunks of at most `chunk_source_bytes` of source (each page at least a
/// chunk of its own), so that tests can cut a small book into many chunks.
#[doc(hidden)]
pub fn render_in_chunks(
    mut book: Book<'_>,
    resolver: &dyn Resolver,
    images: &[(String, Vec<u8>)],
    chunk_source_bytes: usize,
) -> Result<Pdf, PdfError> {
    if book.pages.len() > MAX_PAGES {
        return Err(PdfError::TooManyPages(book.pages.len()));
    }
    let _one_at_a_time = world::EXCLUSIVE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let checked = images::check(images);
    let source::Written {
        segments,
        images,
        mut targets,
    } = {
        let documents = book.pages.iter_mut().map(|p| p.document.take()).collect();
        source::write(&book, documents, resolver, &checked)
    };
    let mut joined = join::Join::new()?;
    let mut positions = links::Positions::new();
    let mut body_pages = 0;
    for chunk in chunks::cut(&segments, chunk_source_bytes) {
        let source = source::body_chunk(&segments[chunk], body_pages + 1);
        let typeset = chunks::body(source, &images, body_pages, &mut positions)?;
        body_pages += typeset.pages;
        joined.body(&typeset.pdf)?;
    }
    drop(segments);
    // Last, when every page of the body has its number.
    let front_matter = source::front_matter(&book, &positions, &mut targets);
    let front_matter = chunks::front_matter(front_matter, &images)?;
    let bookmarks: Vec<join::Bookmark> = book
        .pages
        .iter()
        .map(|page| join::Bookmark {
            title: source::titled(page),
            depth: page.depth,
            label: links::page_label(&page.id),
        })
        .collect();
    let bytes = joined.finish(&front_matter.pdf, &bookmarks, &positions, &targets, &book.title)?;
    Ok(Pdf {
        bytes,
        pages: front_matter.pages + body_pages,
    })
}
