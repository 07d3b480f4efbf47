//! The PDFs of the chunks joined into one (with `lopdf`): the front matter's pages, then the
//! body's, under one page tree, with the book's bookmarks, page labels and title, and the links
//! inside the book made jumps.
//!
//! Of each chunk only its pages and what they use come along: its catalog (page tree, named
//! destinations, metadata) and its information dictionary are left behind. Typst wrote no
//! bookmarks (no heading is bookmarked) and no structure tree (untagged), because neither
//! could be joined.

use lopdf::{Dictionary, Document, Object, ObjectId, text_string};

use crate::PdfError;
use crate::links::{Position, Positions, Targets};

/// The page attributes a page may inherit from its page tree, which is left behind.
const INHERITED: [&[u8]; 4] = [b"Resources", b"MediaBox", b"CropBox", b"Rotate"];

/// An entry of the PDF's bookmarks.
pub(crate) struct Bookmark {
    pub title: String,
    /// 0 at the top; an entry is under the last one before it of a smaller depth.
    pub depth: usize,
    /// Where it leads.
    pub label: String,
}

/// The PDF being joined.
pub(crate) struct Join {
    document: Document,
    /// The page tree every page is put under, written at the end.
    pages_id: ObjectId,
    /// The pages of the body, in order.
    body: Vec<ObjectId>,
}

fn failed(error: lopdf::Error) -> PdfError {
    PdfError::Typeset(format!("the typeset chunks could not be joined: {error}"))
}

impl Join {
    pub(crate) fn new() -> Result<Self, PdfError> {
        let mut document = Document::with_version("1.7");
        let pages_id = document.try_new_object_id().map_err(failed)?;
        Ok(Self {
            document,
            pages_id,
            body: Vec::new(),
        })
    }

    /// Adds the pages of a chunk of the body after those added before.
    pub(crate) fn body(&mut self, pdf: &[u8]) -> Result<(), PdfError> {
        let pages = self.add(pdf)?;
        self.body.extend(pages);
        Ok(())
    }

    /// Brings the pages of `pdf` and the objects they use into the document, renumbered after
    /// those already there, and answers the pages in order.
    fn add(&mut self, pdf: &[u8]) -> Result<Vec<ObjectId>, PdfError> {
        let mut part = Document::load_mem(pdf).map_err(failed)?;
        let pages: Vec<ObjectId> = part.page_iter().collect();
        for page in &pages {
            inherit(&mut part, *page);
        }
        // The pages alone are what the part keeps: everything only the catalog, the page tree
        // or the information dictionary reached is pruned.
        part.trailer = Dictionary::new();
        part.trailer.set(
            "Pages",
            pages
                .iter()
                .map(|page| Object::Reference(*page))
                .collect::<Vec<_>>(),
        );
        part.prune_objects();
        let start = self
            .document
            .max_id
            .checked_add(1)
            .ok_or(lopdf::Error::ObjectIdOverflow);
        part.renumber_objects_with(start.map_err(failed)?);
        let pages: Vec<ObjectId> = match part.trailer.get(b"Pages").and_then(Object::as_array) {
            Ok(pages) => pages.iter().filter_map(|page| page.as_reference().ok()).collect(),
            Err(error) => return Err(failed(error)),
        };
        self.document.max_id = self.document.max_id.max(part.max_id);
        self.document.objects.append(&mut part.objects);
        Ok(pages)
    }

    /// The joined PDF: the pages of `front_matter` first, then the body's; the bookmarks;
    /// labels numbering the front matter in roman and the body from 1; `title`; and every
    /// marker link of `targets` a jump to where `positions` says its label is (a link whose
    /// label is not there is removed).
    pub(crate) fn finish(
        mut self,
        front_matter: &[u8],
        bookmarks: &[Bookmark],
        positions: &Positions,
        targets: &Targets,
        title: &str,
    ) -> Result<Vec<u8>, PdfError> {
        let front = self.add(front_matter)?;
        let pages: Vec<ObjectId> = front.iter().chain(&self.body).copied().collect();
        for page in &pages {
            if let Ok(dictionary) = self.document.get_dictionary_mut(*page) {
                dictionary.set("Parent", self.pages_id);
            }
        }
        let mut tree = Dictionary::new();
        tree.set("Type", "Pages");
        tree.set("Count", pages.len() as i64);
        tree.set(
            "Kids",
            pages
                .iter()
                .map(|page| Object::Reference(*page))
                .collect::<Vec<_>>(),
        );
        self.document
            .objects
            .insert(self.pages_id, Object::Dictionary(tree));

        let destination = |label: &str| {
            let position = positions.get(label)?;
            xyz(*pages.get(front.len() + position.body_page)?, position)
        };
        rewrite_links(&mut self.document, &pages, targets, &destination);

        let mut catalog = Dictionary::new();
        catalog.set("Type", "Catalog");
        catalog.set("Pages", self.pages_id);
        catalog.set("PageLabels", page_labels(front.len(), self.body.len()));
        let mut preferences = Dictionary::new();
        preferences.set("DisplayDocTitle", true);
        catalog.set("ViewerPreferences", preferences);
        if let Some(outlines) = outline(&mut self.document, bookmarks, &destination)? {
            catalog.set("Outlines", outlines);
            catalog.set("PageMode", "UseOutlines");
        }
        let catalog = self.document.try_add_object(catalog).map_err(failed)?;
        let mut info = Dictionary::new();
        info.set("Title", text_string(title));
        info.set("Creator", Object::string_literal("quire"));
        info.set(
            "Producer",
            Object::string_literal("Typst 0.15.1 (typst-pdf), joined by lopdf"),
        );
        let info = self.document.try_add_object(info).map_err(failed)?;
        self.document.trailer = Dictionary::new();
        self.document.trailer.set("Root", catalog);
        self.document.trailer.set("Info", info);

        self.document.prune_objects();
        self.document.compress();
        let mut bytes = Vec::new();
        self.document
            .save_modern(&mut bytes)
            .map_err(|error| failed(error.into()))?;
        Ok(bytes)
    }
}

/// Copies onto `page` the attributes it inherits from its page tree.
fn inherit(document: &mut Document, page: ObjectId) {
    let mut inherited = Vec::new();
    let mut node = document.get_dictionary(page).ok();
    // A page tree is shallow; the bound only stops a cycle of /Parent.
    for _ in 0..32 {
        let Some(parent) = node
            .and_then(|dictionary| dictionary.get(b"Parent").ok())
            .and_then(|parent| parent.as_reference().ok())
            .and_then(|parent| document.get_dictionary(parent).ok())
        else {
            break;
        };
        for key in INHERITED {
            if !inherited.iter().any(|(found, _)| *found == key)
                && let Ok(value) = parent.get(key)
            {
                inherited.push((key, value.clone()));
            }
        }
        node = Some(parent);
    }
    if let Ok(dictionary) = document.get_dictionary_mut(page) {
        for (key, value) in inherited {
            if !dictionary.has(key) {
                dictionary.set(key, value);
            }
        }
        dictionary.remove(b"Parent");
    }
}

/// An explicit destination: `page`, scrolled to `position`.
fn xyz(page: ObjectId, position: &Position) -> Option<Object> {
    Some(Object::Array(vec![
        Object::Reference(page),
        "XYZ".into(),
        position.left.into(),
        position.top.into(),
        Object::Null,
    ]))
}

/// The label a link annotation's marker URL leads to; None for any other annotation.
fn marker_label<'a>(document: &Document, annotation: &Dictionary, targets: &'a Targets) -> Option<&'a str> {
    let action = annotation.get(b"A").ok()?;
    let (_, action) = document.dereference(action).ok()?;
    let uri = action.as_dict().ok()?.get(b"URI").ok()?;
    let (_, uri) = document.dereference(uri).ok()?;
    targets.label_of(uri.as_str().ok()?)
}

/// Each marker link on `pages` made a jump to `destination` of its label, or removed.
fn rewrite_links(
    document: &mut Document,
    pages: &[ObjectId],
    targets: &Targets,
    destination: &dyn Fn(&str) -> Option<Object>,
) {
    for page in pages {
        let annotations = match document
            .get_dictionary(*page)
            .and_then(|page| page.get(b"Annots"))
        {
            Ok(Object::Array(annotations)) => annotations.clone(),
            Ok(Object::Reference(id)) => match document.get_object(*id).and_then(Object::as_array) {
                Ok(annotations) => annotations.clone(),
                Err(_) => continue,
            },
            _ => continue,
        };
        let mut kept = Vec::with_capacity(annotations.len());
        for annotation in annotations {
            let dictionary = match &annotation {
                Object::Reference(id) => document.get_dictionary(*id).ok(),
                Object::Dictionary(dictionary) => Some(dictionary),
                _ => None,
            };
            let marker = dictionary.and_then(|dictionary| {
                Some((marker_label(document, dictionary, targets)?, dictionary.clone()))
            });
            let Some((label, mut rewritten)) = marker else {
                kept.push(annotation);
                continue;
            };
            // A label never typeset: the link goes, its text stays.
            let Some(dest) = destination(label) else {
                continue;
            };
            rewritten.remove(b"A");
            rewritten.set("Dest", dest);
            match annotation {
                Object::Reference(id) => {
                    document.objects.insert(id, Object::Dictionary(rewritten));
                    kept.push(annotation);
                }
                _ => kept.push(Object::Dictionary(rewritten)),
            }
        }
        if let Ok(page) = document.get_dictionary_mut(*page) {
            if kept.is_empty() {
                page.remove(b"Annots");
            } else {
                page.set("Annots", kept);
            }
        }
    }
}

/// Labels numbering the first `front` pages i, ii, iii... and the `body` pages after them from 1.
fn page_labels(front: usize, body: usize) -> Dictionary {
    let mut roman = Dictionary::new();
    roman.set("S", "r");
    let mut numbers = vec![Object::Integer(0), Object::Dictionary(roman)];
    if body > 0 {
        let mut decimal = Dictionary::new();
        decimal.set("S", "D");
        decimal.set("St", 1);
        numbers.push(Object::Integer(front as i64));
        numbers.push(Object::Dictionary(decimal));
    }
    let mut labels = Dictionary::new();
    labels.set("Nums", numbers);
    labels
}

/// The outline (bookmarks) of `bookmarks`, each entry leading to `destination` of its label,
/// entries with children closed as Typst's are; None when there is no entry.
fn outline(
    document: &mut Document,
    bookmarks: &[Bookmark],
    destination: &dyn Fn(&str) -> Option<Object>,
) -> Result<Option<ObjectId>, PdfError> {
    if bookmarks.is_empty() {
        return Ok(None);
    }
    let root = document.try_new_object_id().map_err(failed)?;
    let ids = bookmarks
        .iter()
        .map(|_| document.try_new_object_id())
        .collect::<Result<Vec<_>, _>>()
        .map_err(failed)?;
    // Each entry's children, and the entries at the top: an entry is under the nearest entry
    // before it of a smaller depth (a depth may skip a level).
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); bookmarks.len()];
    let mut top = Vec::new();
    let mut parents: Vec<Option<usize>> = Vec::with_capacity(bookmarks.len());
    let mut open: Vec<usize> = Vec::new();
    for (index, bookmark) in bookmarks.iter().enumerate() {
        while open
            .last()
            .is_some_and(|last| bookmarks[*last].depth >= bookmark.depth)
        {
            open.pop();
        }
        let parent = open.last().copied();
        match parent {
            Some(parent) => children[parent].push(index),
            None => top.push(index),
        }
        parents.push(parent);
        open.push(index);
    }
    let mut entries: Vec<Dictionary> = Vec::with_capacity(bookmarks.len());
    for (index, bookmark) in bookmarks.iter().enumerate() {
        let mut entry = Dictionary::new();
        entry.set("Title", text_string(&bookmark.title));
        entry.set("Parent", parents[index].map_or(root, |parent| ids[parent]));
        if let (Some(first), Some(last)) = (children[index].first(), children[index].last()) {
            entry.set("First", ids[*first]);
            entry.set("Last", ids[*last]);
            // Negative: closed, with this many entries shown once opened.
            entry.set("Count", -(children[index].len() as i64));
        }
        if let Some(dest) = destination(&bookmark.label) {
            entry.set("Dest", dest);
        }
        entries.push(entry);
    }
    for siblings in children.iter().chain(std::iter::once(&top)) {
        for pair in siblings.windows(2) {
            entries[pair[0]].set("Next", ids[pair[1]]);
            entries[pair[1]].set("Prev", ids[pair[0]]);
        }
    }
    for (id, entry) in ids.iter().zip(entries) {
        document.objects.insert(*id, Object::Dictionary(entry));
    }
    let mut outlines = Dictionary::new();
    outlines.set("Type", "Outlines");
    if let (Some(first), Some(last)) = (top.first(), top.last()) {
        outlines.set("First", ids[*first]);
        outlines.set("Last", ids[*last]);
    }
    outlines.set("Count", top.len() as i64);
    document.objects.insert(root, Object::Dictionary(outlines));
    Ok(Some(root))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world;

    fn typeset(source: &str) -> Vec<u8> {
        world::typeset(source.to_owned(), &[], world::export).unwrap()
    }

    #[test]
    fn a_marker_link_jumps_to_its_label_or_goes_and_other_links_stay() {
        let mut targets = Targets::default();
        let known = targets.marker("p-known".into());
        let unknown = targets.marker("p-unknown".into());
        let body = typeset(&format!(
            "#link(\"{known}\")[known]\n\n#v(2cm)\n#link(\"{unknown}\")[unknown]\n\n#v(2cm)\n#link(\"https://example.com/\")[out]"
        ));
        let front = typeset("Front");
        let mut positions = Positions::new();
        let position = Position {
            body_page: 0,
            left: 12.0,
            top: 700.0,
        };
        positions.insert("p-known".into(), position);
        let mut join = Join::new().unwrap();
        join.body(&body).unwrap();
        let bookmarks = [Bookmark {
            title: "Körper".into(),
            depth: 0,
            label: "p-known".into(),
        }];
        let pdf = join
            .finish(&front, &bookmarks, &positions, &targets, "Title")
            .unwrap();

        let document = Document::load_mem(&pdf).unwrap();
        let pages: Vec<ObjectId> = document.page_iter().collect();
        assert_eq!(pages.len(), 2);
        let annotations = document.get_page_annotations(pages[1]).unwrap();
        assert_eq!(annotations.len(), 2, "the link to a label never typeset is gone");
        let jump = xyz(pages[1], &position).unwrap();
        assert_eq!(annotations[0].get(b"Dest").unwrap(), &jump);
        assert!(annotations[0].get(b"A").is_err());
        let action = annotations[1].get(b"A").unwrap().as_dict().unwrap();
        assert_eq!(
            action.get(b"URI").unwrap().as_str().unwrap(),
            b"https://example.com/"
        );

        let catalog = document.catalog().unwrap();
        let outlines = document
            .get_dictionary(catalog.get(b"Outlines").unwrap().as_reference().unwrap())
            .unwrap();
        let entry = document
            .get_dictionary(outlines.get(b"First").unwrap().as_reference().unwrap())
            .unwrap();
        assert_eq!(
            lopdf::decode_text_string(entry.get(b"Title").unwrap()).unwrap(),
            "Körper"
        );
        assert_eq!(entry.get(b"Dest").unwrap(), &jump);
    }

    #[test]
    fn bookmarks_nest_under_the_last_entry_of_a_smaller_depth() {
        let mut document = Document::with_version("1.7");
        let bookmarks: Vec<Bookmark> = [("a", 0), ("b", 1), ("c", 3), ("d", 1), ("e", 0)]
            .iter()
            .map(|(title, depth)| Bookmark {
                title: (*title).into(),
                depth: *depth,
                label: String::new(),
            })
            .collect();
        let root = outline(&mut document, &bookmarks, &|_| None).unwrap().unwrap();
        let title = |id: ObjectId| {
            let entry = document.get_dictionary(id).unwrap();
            lopdf::decode_text_string(entry.get(b"Title").unwrap()).unwrap()
        };
        let link = |id: ObjectId, key: &[u8]| {
            document
                .get_dictionary(id)
                .unwrap()
                .get(key)
                .ok()
                .map(|object| object.as_reference().unwrap())
        };
        let a = link(root, b"First").unwrap();
        let e = link(root, b"Last").unwrap();
        assert_eq!((title(a), title(e)), ("a".into(), "e".into()));
        assert_eq!(link(a, b"Next"), Some(e));
        let b = link(a, b"First").unwrap();
        let d = link(a, b"Last").unwrap();
        assert_eq!((title(b), title(d)), ("b".into(), "d".into()));
        let c = link(b, b"First").unwrap();
        assert_eq!(title(c), "c");
        assert_eq!(link(c, b"Parent"), Some(b));
        assert_eq!(link(e, b"First"), None);
        let count = |id: ObjectId| {
            document
                .get_dictionary(id)
                .unwrap()
                .get(b"Count")
                .unwrap()
                .as_i64()
                .unwrap()
        };
        assert_eq!((count(root), count(a), count(b)), (2, -2, -1));
    }
}
