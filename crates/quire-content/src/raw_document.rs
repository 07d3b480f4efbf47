//! A stored document's JSON taken apart at its top level only: the text around its blocks, and
//! each top-level block as JSON text with the content hash of that text.
//!
//! A merge of two edits of a large page mostly takes whole blocks from one side or the other (a
//! page at the content limits is one 25 MB table block between a few paragraphs). Compared by
//! the hashes of their stored bytes, the three versions of a page need no parse, and the merged
//! document is written by concatenating the blocks it takes (see [`crate::merge`]). A store may
//! keep large blocks apart (by their hash) and give a document's [`Outline`] without reading
//! them: then a merge reads only the blocks it takes.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::buckets::content_hash;
use crate::diff::Fingerprint;

/// A stored document's top level. Its JSON is `prefix`, the blocks' JSON separated by commas,
/// then `suffix`; `prefix` holds `object` and `data`, `suffix` the fields this crate does not
/// know, as [`crate::changes::encode_document`] writes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    pub prefix: String,
    pub suffix: String,
    pub blocks: Vec<OutlineBlock>,
}

/// A top-level block of an [`Outline`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineBlock {
    /// The content hash of the block's JSON ([`content_hash`]).
    pub hash: String,
    /// The block's JSON, when at hand (None: the store keeps it apart, by `hash`).
    pub json: Option<String>,
}

impl Outline {
    /// Takes a document's JSON apart, each block with its JSON. None when it is not a
    /// document's top level as [`crate::Document`] reads it, or when it uses what this reading
    /// does not take apart (a field name written with escapes, a field given twice): the caller
    /// parses it instead.
    pub fn of(json: &str) -> Option<Outline> {
        let raw = RawDocument::split(json)?;
        let (prefix, suffix) = raw.fields();
        let blocks = raw
            .nodes
            .iter()
            .map(|node| OutlineBlock {
                hash: content_hash(node.get().as_bytes()),
                json: Some(node.get().to_string()),
            })
            .collect();
        Some(Outline {
            prefix,
            suffix,
            blocks,
        })
    }

    /// Whether the text around the blocks (`data` and the unknown fields) is the same.
    pub fn same_fields(&self, other: &Outline) -> bool {
        self.prefix == other.prefix && self.suffix == other.suffix
    }

    /// Each block's hash as a fingerprint for [`crate::diff`]; None when a hash is not a
    /// content hash. Equal fingerprints mean the same bytes, a stricter equality than
    /// [`crate::diff::fingerprints`]' (which ignores keys and the order of map entries).
    pub fn fingerprints(&self) -> Option<Vec<Fingerprint>> {
        self.blocks.iter().map(|b| fingerprint(&b.hash)).collect()
    }
}

/// The outlines of stored documents given whole (a store that keeps no block apart), for
/// [`crate::merge::MergeInput::outlines`].
pub fn outlines_of(texts: Vec<Option<String>>) -> Vec<Option<Outline>> {
    texts
        .into_iter()
        .map(|t| t.as_deref().and_then(Outline::of))
        .collect()
}

/// The JSON of the document `prefix` + blocks + `suffix`.
pub fn assemble<'a>(prefix: &str, suffix: &str, blocks: impl IntoIterator<Item = &'a str>) -> String {
    let blocks: Vec<&str> = blocks.into_iter().collect();
    let size = prefix.len() + suffix.len() + blocks.iter().map(|b| b.len() + 1).sum::<usize>();
    let mut out = String::with_capacity(size);
    out.push_str(prefix);
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(block);
    }
    out.push_str(suffix);
    out
}

/// A hex content hash as the 32 bytes it spells.
fn fingerprint(hash: &str) -> Option<Fingerprint> {
    let digits = hash.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let hex = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(hex, 16).ok()?;
    }
    Some(out)
}

/// The top level of a stored document, borrowed from its JSON.
#[derive(Debug)]
pub struct RawDocument<'a> {
    /// `data` as stored; None when absent (an empty object).
    pub data: Option<&'a RawValue>,
    /// The top-level blocks, each as stored.
    pub nodes: Vec<&'a RawValue>,
    /// Fields other than `object`, `data` and `nodes`, in stored order.
    pub extra: Vec<(&'a str, &'a RawValue)>,
}

impl<'a> RawDocument<'a> {
    /// See [`Outline::of`].
    pub fn split(json: &'a str) -> Option<RawDocument<'a>> {
        let mut de = serde_json::Deserializer::from_str(json);
        let document = de.deserialize_map(TopLevel).ok()?;
        de.end().ok()?;
        Some(document)
    }

    /// The text before and after the blocks, as `encode_document` writes a document (`object`,
    /// `data`, `nodes`, then unknown fields): blocks stored as it writes them give back the
    /// bytes it would write.
    pub fn fields(&self) -> (String, String) {
        let data = self.data.map_or("{}", RawValue::get);
        let prefix = format!(r#"{{"object":"document","data":{data},"nodes":["#);
        let mut suffix = String::from("]");
        for (name, value) in &self.extra {
            // Names were read without escapes (see `TopLevel`), so they need none.
            suffix.push_str(",\"");
            suffix.push_str(name);
            suffix.push_str("\":");
            suffix.push_str(value.get());
        }
        suffix.push('}');
        (prefix, suffix)
    }
}

struct TopLevel;

impl<'de> Visitor<'de> for TopLevel {
    type Value = RawDocument<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a document object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut object, mut data, mut nodes) = (false, None, None);
        let mut extra: Vec<(&'de str, &'de RawValue)> = Vec::new();
        // A borrowed `&str` fails on a name with escapes: such a document is parsed instead.
        while let Some(name) = map.next_key::<&'de str>()? {
            match name {
                "object" if !object => {
                    if map.next_value::<&'de str>()? != "document" {
                        return Err(de::Error::custom("not a document"));
                    }
                    object = true;
                }
                "data" if data.is_none() => {
                    let value: &'de RawValue = map.next_value()?;
                    // `Document::data` is an object; `null` or anything else does not read.
                    if !value.get().starts_with('{') {
                        return Err(de::Error::custom("`data` is not an object"));
                    }
                    data = Some(value);
                }
                "nodes" if nodes.is_none() => nodes = Some(map.next_value::<Vec<&'de RawValue>>()?),
                "object" | "data" | "nodes" => return Err(de::Error::custom("a field given twice")),
                _ if extra.iter().any(|(n, _)| *n == name) => {
                    let _: IgnoredAny = map.next_value()?;
                    return Err(de::Error::custom("a field given twice"));
                }
                _ => extra.push((name, map.next_value()?)),
            }
        }
        match (object, nodes) {
            (true, Some(nodes)) => Ok(RawDocument { data, nodes, extra }),
            _ => Err(de::Error::custom("not a document")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::encode_document;
    use crate::{Document, markdown_to_document};

    fn encoded(markdown: &str) -> String {
        let mut document = markdown_to_document(markdown).unwrap();
        let mut n = 0;
        crate::fill_missing_keys(&mut document, &mut || {
            n += 1;
            format!("k{n}")
        });
        String::from_utf8(encode_document(&document).1).unwrap()
    }

    fn whole(outline: &Outline) -> String {
        let blocks = outline.blocks.iter().map(|b| b.json.as_deref().unwrap());
        assemble(&outline.prefix, &outline.suffix, blocks)
    }

    #[test]
    fn assembling_the_parts_gives_the_stored_bytes_back() {
        let json =
            encoded("# Title\n\nA paragraph with *marks*.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- a list\n");
        let outline = Outline::of(&json).unwrap();
        assert_eq!(outline.blocks.len(), 4);
        assert_eq!(whole(&outline), json);
        for block in &outline.blocks {
            assert_eq!(
                block.hash,
                content_hash(block.json.as_deref().unwrap().as_bytes())
            );
        }
    }

    #[test]
    fn data_and_unknown_fields_are_kept_in_place() {
        let document: Document = serde_json::from_str(
            r#"{"object":"document","data":{"schemaVersion":2},"nodes":[],"meta":{"x":[1,2]},"z":"w"}"#,
        )
        .unwrap();
        let json = String::from_utf8(encode_document(&document).1).unwrap();
        let outline = Outline::of(&json).unwrap();
        assert_eq!(outline.suffix, r#"],"meta":{"x":[1,2]},"z":"w"}"#);
        assert_eq!(whole(&outline), json);
    }

    #[test]
    fn what_is_not_a_document_top_level_is_left_to_the_parser() {
        for json in [
            r#"{"object":"block","nodes":[]}"#,
            r#"{"data":{},"nodes":[]}"#,
            r#"{"object":"document","data":{}}"#,
            r#"{"object":"document","data":null,"nodes":[]}"#,
            r#"{"object":"document","nodes":[],"nodes":[]}"#,
            r#"{"object":"document","nodes":[],"m":1,"m":2}"#,
            r#"{"object":"document","nodes":[],"\u006d":1}"#,
            r#"{"object":"document","nodes":[]} trailing"#,
            r#"[1]"#,
            "",
        ] {
            assert!(Outline::of(json).is_none(), "{json}");
        }
    }

    #[test]
    fn blocks_compare_by_their_bytes() {
        let outline = Outline::of(&encoded("one\n\ntwo\n\none\n")).unwrap();
        let fingerprints = outline.fingerprints().unwrap();
        // The two "one" paragraphs differ by their keys.
        assert_ne!(fingerprints[0], fingerprints[2]);
        assert_eq!(fingerprint(&"ab".repeat(32)), Some([0xab; 32]));
        assert_eq!(fingerprint("ab"), None);
        assert_eq!(fingerprint(&"zz".repeat(32)), None);
    }
}
