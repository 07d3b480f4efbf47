//! Links between pages of the book, across separate compiles.
//!
//! The book is typeset in several compiles ([`crate::chunks`]), and a label of one is unknown
//! to the others, so no link inside the book is a Typst label link. Each is written as a link
//! to a marker URL naming a target by number ([`Targets::marker`]); each compile reports where
//! its labels landed ([`Position`]); and the join ([`crate::join`]) turns every marker link
//! into a jump to that position, or into nothing when the label was never typeset.

use std::collections::HashMap;

/// What every marker URL starts with. The `.invalid` top-level domain never resolves
/// (RFC 2606), so a marker the join missed opens nothing anywhere.
const MARKER_PREFIX: &str = "https://quire-pdf.invalid/#";

/// The labels links of the book lead to, by number: a marker URL holds the number, never the
/// label, which has a page id and an anchor in it (any text).
#[derive(Default)]
pub(crate) struct Targets {
    labels: Vec<String>,
    numbers: HashMap<String, usize>,
}

impl Targets {
    /// The marker URL of a link to `label`.
    pub(crate) fn marker(&mut self, label: String) -> String {
        let number = match self.numbers.get(&label) {
            Some(number) => *number,
            None => {
                let number = self.labels.len();
                self.numbers.insert(label.clone(), number);
                self.labels.push(label);
                number
            }
        };
        format!("{MARKER_PREFIX}{number}")
    }

    /// The label a marker URL leads to; None for any other URL.
    pub(crate) fn label_of(&self, url: &[u8]) -> Option<&str> {
        let number = url.strip_prefix(MARKER_PREFIX.as_bytes())?;
        let number: usize = std::str::from_utf8(number).ok()?.parse().ok()?;
        self.labels.get(number).map(String::as_str)
    }
}

/// Whether `url` is (or could pass for) a marker URL: an author's link to one would be taken
/// for a link inside the book.
pub(crate) fn is_marker(url: &str) -> bool {
    url.starts_with(MARKER_PREFIX)
}

/// Where a label landed in the body, as a PDF destination needs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Position {
    /// The body page, from 0 (the first page after the front matter).
    pub body_page: usize,
    /// From the page's left edge, in points.
    pub left: f32,
    /// From the page's bottom edge, in points (PDF's coordinates, not Typst's).
    pub top: f32,
}

/// The labels of the body and where each landed (the first, if one was set twice).
pub(crate) type Positions = HashMap<String, Position>;

/// The label on a book page's title.
pub(crate) fn page_label(page: &str) -> String {
    format!("p-{page}")
}

/// The label on one of a book page's top-level headings.
pub(crate) fn anchor_label(page: &str, anchor: &str) -> String {
    format!("a-{page}-{anchor}")
}

/// Whether `label` is one [`page_label`] or [`anchor_label`] wrote.
pub(crate) fn is_book_label(label: &str) -> bool {
    label.starts_with("p-") || label.starts_with("a-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_leads_back_to_its_label_and_nothing_else_does() {
        let mut targets = Targets::default();
        let intro = targets.marker(page_label("intro"));
        let install = targets.marker(anchor_label("intro", "install \"ü\""));
        assert_eq!(targets.marker(page_label("intro")), intro, "one number per label");
        assert_eq!(targets.label_of(intro.as_bytes()), Some("p-intro"));
        assert_eq!(
            targets.label_of(install.as_bytes()),
            Some("a-intro-install \"ü\"")
        );
        for other in [
            "https://quire-pdf.invalid/#7",
            "https://quire-pdf.invalid/#x",
            "https://quire-pdf.invalid/#",
            "https://docs.example.com/#0",
        ] {
            assert_eq!(targets.label_of(other.as_bytes()), None, "{other}");
        }
    }
}
