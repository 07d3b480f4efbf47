//! The in-memory [`World`] Typst compiles in: one source (`/main.typ`, a chunk of the book),
//! the images at `/img/{n}`, the fonts bundled into the binary, nothing from the file system or
//! the network.
//!
//! Typst interns file ids for the life of the process (at most 2^16 of them), so the paths are
//! a fixed set reused by every export: `/main.typ` and `/img/0` up to `/img/{MAX_IMAGES - 1}`.

use std::sync::{LazyLock, Mutex};

use typst::diag::{FileError, FileResult, Severity, SourceDiagnostic};
use typst::foundations::{Bytes, Datetime, Duration};
use typst::syntax::{FileId, RootedPath, Source, VirtualPath, VirtualRoot};
use typst::text::{Font, FontBook};
use typst::utils::LazyHash;
use typst::{Library, LibraryExt, World};
use typst_layout::PagedDocument;

use crate::PdfError;

/// Held while a PDF is typeset: one at a time per process.
pub(crate) static EXCLUSIVE: Mutex<()> = Mutex::new(());

/// The fonts quire bundles (fonts/README.md for what and why), then typst-assets' (code and
/// formulas).
const BUNDLED: &[&[u8]] = &[
    include_bytes!("../fonts/NotoSans-Regular.ttf"),
    include_bytes!("../fonts/NotoSans-Bold.ttf"),
    include_bytes!("../fonts/NotoSans-Italic.ttf"),
    include_bytes!("../fonts/NotoSans-BoldItalic.ttf"),
    include_bytes!("../fonts/NotoSansArabic-Regular.ttf"),
    include_bytes!("../fonts/NotoSansArabic-Bold.ttf"),
    include_bytes!("../fonts/DroidSansFallbackFull.ttf"),
    include_bytes!("../fonts/NotoColorEmoji.ttf"),
];

struct Fonts {
    book: LazyHash<FontBook>,
    fonts: Vec<Font>,
}

static FONTS: LazyLock<Fonts> = LazyLock::new(|| {
    let fonts: Vec<Font> = BUNDLED
        .iter()
        .copied()
        .chain(typst_assets::fonts())
        .flat_map(|data| Font::iter(Bytes::new(data)))
        .collect();
    Fonts {
        book: LazyHash::new(FontBook::from_fonts(&fonts)),
        fonts,
    }
});

static LIBRARY: LazyLock<LazyHash<Library>> = LazyLock::new(|| LazyHash::new(Library::default()));

fn file_id(path: &str) -> Option<FileId> {
    let path = VirtualPath::new(path).ok()?;
    Some(RootedPath::new(VirtualRoot::Project, path).intern())
}

static MAIN: LazyLock<Option<FileId>> = LazyLock::new(|| file_id("/main.typ"));

/// The path an image is served at.
pub(crate) fn image_path(index: usize) -> String {
    format!("/img/{index}")
}

struct BookWorld<'a> {
    main: FileId,
    source: Source,
    images: &'a [Bytes],
}

impl World for BookWorld<'_> {
    fn library(&self) -> &LazyHash<Library> {
        &LIBRARY
    }

    fn book(&self) -> &LazyHash<FontBook> {
        &FONTS.book
    }

    fn main(&self) -> FileId {
        self.main
    }

    fn source(&self, id: FileId) -> FileResult<Source> {
        if id == self.main {
            Ok(self.source.clone())
        } else {
            Err(not_found(id))
        }
    }

    fn file(&self, id: FileId) -> FileResult<Bytes> {
        if id == self.main {
            return Ok(Bytes::from_string(self.source.text().to_string()));
        }
        id.vpath()
            .get_with_slash()
            .strip_prefix("/img/")
            .and_then(|index| index.parse::<usize>().ok())
            .and_then(|index| self.images.get(index))
            .cloned()
            .ok_or_else(|| not_found(id))
    }

    fn font(&self, index: usize) -> Option<Font> {
        FONTS.fonts.get(index).cloned()
    }

    fn today(&self, _offset: Option<Duration>) -> Option<Datetime> {
        // The date is written into the source; the document does not ask for it.
        None
    }
}

fn not_found(id: FileId) -> FileError {
    FileError::NotFound(id.vpath().get_without_slash().into())
}

/// Compiles `source` showing `images`, and answers what `then` takes from the document. Typst's
/// memoized work is dropped afterwards, with the document, so that the memory one compile took
/// does not stay for the next one nor with the process.
pub(crate) fn typeset<T>(
    source: String,
    images: &[Bytes],
    then: impl FnOnce(&PagedDocument) -> Result<T, PdfError>,
) -> Result<T, PdfError> {
    let main = (*MAIN).ok_or_else(|| PdfError::Typeset("the main file has no path".into()))?;
    let world = BookWorld {
        main,
        source: Source::new(main, source),
        images,
    };
    let result = match typst::compile::<PagedDocument>(&world).output {
        Ok(document) => then(&document),
        Err(diagnostics) => Err(PdfError::Typeset(describe(&diagnostics))),
    };
    drop(world);
    typst::comemo::evict(0);
    result
}

/// Exports `document` to PDF. Untagged: the chunks' structure trees could not be joined into
/// one, and tagging made the PDF four times larger (docs/research/pdf-typst.md, section 8).
pub(crate) fn export(document: &PagedDocument) -> Result<Vec<u8>, PdfError> {
    let options = typst_pdf::PdfOptions {
        tagged: false,
        ..typst_pdf::PdfOptions::default()
    };
    typst_pdf::pdf(document, &options).map_err(|diagnostics| PdfError::Typeset(describe(&diagnostics)))
}

fn describe(diagnostics: &[SourceDiagnostic]) -> String {
    let errors: Vec<&str> = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.message.as_str())
        .take(3)
        .collect();
    if errors.is_empty() {
        "an unknown error".into()
    } else {
        errors.join("; ")
    }
}
