//! The body typeset a chunk of pages at a time.
//!
//! Typst holds the whole laid-out document until it is exported, about 1.3 MB a page for
//! ordinary content: 850 MB for 500 pages in one compile (docs/research/pdf-typst.md, sections
//! 8 and 9). So the body is cut into chunks of consecutive pages, each compiled, measured (where
//! its labels landed) and exported to a PDF of its own before the next is compiled; the join
//! ([`crate::join`]) makes one PDF of them. The peak is then one chunk's compile, whatever the
//! length of the book.

use std::ops::Range;

use typst::foundations::Bytes;
use typst::introspection::Introspector as _;
use typst::layout::Abs;
use typst_layout::PagedDocument;

use crate::PdfError;
use crate::links::{Position, Positions, is_book_label};
use crate::world;

/// Typst source written for the pages of one chunk, at most (a page longer than this is a
/// chunk of its own): about 26 pages of ordinary content. Section 9 of
/// docs/research/pdf-typst.md measured 32 KB to 256 KB on a 500-page book: the time does not
/// change (4.3–4.7 s), the peak grows with the chunk (+75, +80, +101, +163 MB over a warm
/// process) and the file shrinks (2.6, 1.9, 1.6, 1.4 MB: each chunk embeds its own font
/// subsets). 64 KB keeps the peak well within the server's budget, for content heavier than
/// that book's too, at a file a fifth larger than 128 KB would make.
pub const CHUNK_SOURCE_BYTES: usize = 64 * 1024;

/// The segments of `segments` that make each chunk: consecutive, in order, each chunk's at most
/// `limit` bytes of source unless it is a single segment.
pub(crate) fn cut(segments: &[String], limit: usize) -> Vec<Range<usize>> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for (index, segment) in segments.iter().enumerate() {
        if index > start && size + segment.len() > limit {
            chunks.push(start..index);
            start = index;
            size = 0;
        }
        size += segment.len();
    }
    if start < segments.len() {
        chunks.push(start..segments.len());
    }
    chunks
}

/// A chunk typeset: its PDF and how many pages that has.
pub(crate) struct Typeset {
    pub pdf: Vec<u8>,
    pub pages: usize,
}

/// Typesets a chunk of the body whose first page is body page `first_page` (from 0), adding
/// where its labels landed to `positions`.
pub(crate) fn body(
    source: String,
    images: &[Bytes],
    first_page: usize,
    positions: &mut Positions,
) -> Result<Typeset, PdfError> {
    world::typeset(source, images, |document| {
        collect_positions(document, first_page, positions);
        Ok(Typeset {
            pdf: world::export(document)?,
            pages: document.pages().len(),
        })
    })
}

/// Typesets the front matter.
pub(crate) fn front_matter(source: String, images: &[Bytes]) -> Result<Typeset, PdfError> {
    world::typeset(source, images, |document| {
        Ok(Typeset {
            pdf: world::export(document)?,
            pages: document.pages().len(),
        })
    })
}

/// Where each label of the book landed in `document`, as Typst's own links to a position would
/// go there: 10pt above it, so that a heading's text is in view.
fn collect_positions(document: &PagedDocument, first_page: usize, positions: &mut Positions) {
    let introspector = document.introspector();
    for element in introspector.query_labelled() {
        let (Some(label), Some(location)) = (element.label(), element.location()) else {
            continue;
        };
        let label = label.resolve();
        if !is_book_label(&label) || positions.contains_key(label.as_str()) {
            continue;
        }
        let Some(position) = introspector.position(location) else {
            continue;
        };
        let page = position.page.get() - 1;
        let Some(height) = document.pages().get(page).map(|page| page.frame.height()) else {
            continue;
        };
        let y = (position.point.y - Abs::pt(10.0)).max(Abs::zero());
        positions.insert(
            label.as_str().to_owned(),
            Position {
                body_page: first_page + page,
                left: position.point.x.to_pt() as f32,
                top: (height - y).to_pt() as f32,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_hold_consecutive_pages_within_the_limit() {
        let segments: Vec<String> = [3, 4, 2, 9, 1, 1, 5].iter().map(|n| "x".repeat(*n)).collect();
        assert_eq!(cut(&segments, 7), [0..2, 2..3, 3..4, 4..7]);
        assert_eq!(cut(&segments, 1), [0..1, 1..2, 2..3, 3..4, 4..5, 5..6, 6..7]);
        assert_eq!(cut(&segments, 1000), vec![0..segments.len()]);
        assert!(cut(&[], 10).is_empty());
    }
}
