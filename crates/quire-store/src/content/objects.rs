//! The `objects` table: content-addressed page documents and tree buckets, each stored once per
//! space under the hash of its bytes, and never changed.
//!
//! A document with a top-level block of [`BLOCK_APART_BYTES`] or more is stored as its outline
//! (`quire_content::raw_document::Outline`): the text around its blocks, each small block
//! inline, each large block by its content hash, in a row of its own. Documents are still
//! addressed by the hash of their whole JSON, and [`load`] gives them back whole; what changes
//! is what a merge of a large page reads and writes. Its versions' outlines come without their
//! large blocks ([`outlines`]), so it reads only the blocks it takes ([`blocks`]); and a merged
//! document that takes a large block from one side stores only its outline, since the block is
//! already there. A page at the content limits is one 25 MB table block between paragraphs.

use std::borrow::Cow;
use std::collections::HashMap;

use quire_content::raw_document::{Outline, OutlineBlock, RawDocument, assemble};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::db::{Args, Conn, DbError};
use crate::error::{StoreError, StoreResult};
use crate::params;

/// Top-level blocks at least this large (as JSON) are stored apart from their document.
pub const BLOCK_APART_BYTES: usize = 64 * 1024;

/// How an outline's row starts; no document (`{"object":"document"`), bucket or block does.
const OUTLINE_START: &str = r#"{"quire":"outline""#;

/// Rows read per statement: every engine's parameter limit is well above.
const CHUNK: usize = 500;

/// A stored outline: `{"quire":"outline","prefix":..,"suffix":..,"blocks":[{"hash":..,"json":..}]}`
/// (`json` absent for a block stored apart).
#[derive(Serialize, Deserialize)]
struct StoredOutline<'a> {
    quire: Cow<'a, str>,
    #[serde(borrow)]
    prefix: Cow<'a, str>,
    #[serde(borrow)]
    suffix: Cow<'a, str>,
    #[serde(borrow)]
    blocks: Vec<StoredBlock<'a>>,
}

#[derive(Serialize, Deserialize)]
struct StoredBlock<'a> {
    #[serde(borrow)]
    hash: Cow<'a, str>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    json: Option<&'a RawValue>,
}

/// Whether a stored body is an outline rather than the object itself.
fn is_outline(body: &str) -> bool {
    body.starts_with(OUTLINE_START)
}

fn decode_outline<'a>(hash: &str, space_id: &str, body: &'a str) -> StoreResult<StoredOutline<'a>> {
    serde_json::from_str(body).map_err(|e| {
        DbError::stored(
            format_args!("outline of document {hash} of space {space_id:?}"),
            e,
        )
        .into()
    })
}

/// Stores objects (documents, buckets); objects already stored are left alone. A document with
/// a large top-level block is stored as its outline, its large blocks apart (each once).
pub fn put(c: &mut dyn Conn, space_id: &str, objects: &[(String, Vec<u8>)]) -> StoreResult<()> {
    for (hash, bytes) in objects {
        let body = String::from_utf8_lossy(bytes);
        match outline_row(&body) {
            Some((outline, apart)) => {
                put_absent(c, space_id, &apart)?;
                insert(c, space_id, hash, &outline)?;
            }
            None => insert(c, space_id, hash, &body)?,
        }
    }
    Ok(())
}

fn insert(c: &mut dyn Conn, space_id: &str, hash: &str, body: &str) -> StoreResult<()> {
    c.execute(
        "INSERT INTO objects (space_id, hash, body) VALUES (?1, ?2, ?3) ON CONFLICT (space_id, hash) DO NOTHING",
        params![space_id, hash, body],
    )?;
    Ok(())
}

/// Stores the objects of `objects` that are not stored yet, without sending the others' bytes
/// (a large block a merge takes from one side is already there).
fn put_absent(c: &mut dyn Conn, space_id: &str, objects: &[(String, &str)]) -> StoreResult<()> {
    let hashes: Vec<&str> = objects.iter().map(|(h, _)| h.as_str()).collect();
    let present = present(c, space_id, &hashes)?;
    for (hash, body) in objects {
        if !present.contains(hash.as_str()) {
            insert(c, space_id, hash, body)?;
        }
    }
    Ok(())
}

fn present(
    c: &mut dyn Conn,
    space_id: &str,
    hashes: &[&str],
) -> StoreResult<std::collections::HashSet<String>> {
    let mut out = std::collections::HashSet::new();
    for chunk in hashes.chunks(CHUNK) {
        let mut args = Args::default();
        let space = args.arg(space_id);
        let list = args.list(chunk.iter().copied());
        let sql = format!("SELECT hash FROM objects WHERE space_id = {space} AND hash IN ({list})");
        for row in c.query(&sql, args.values())? {
            out.insert(row.get(0)?);
        }
    }
    Ok(out)
}

/// The outline row of a document's JSON and its blocks to store apart, when it has a block
/// of [`BLOCK_APART_BYTES`] or more; None: stored whole.
fn outline_row(body: &str) -> Option<(String, Vec<(String, &str)>)> {
    if body.len() < BLOCK_APART_BYTES {
        return None;
    }
    let raw = RawDocument::split(body)?;
    if raw.nodes.iter().all(|n| n.get().len() < BLOCK_APART_BYTES) {
        return None;
    }
    let (prefix, suffix) = raw.fields();
    let mut apart = Vec::new();
    let blocks = raw
        .nodes
        .iter()
        .map(|node| {
            let hash = quire_content::buckets::content_hash(node.get().as_bytes());
            let json = if node.get().len() >= BLOCK_APART_BYTES {
                apart.push((hash.clone(), node.get()));
                None
            } else {
                Some(*node)
            };
            StoredBlock {
                hash: Cow::Owned(hash),
                json,
            }
        })
        .collect();
    let stored = StoredOutline {
        quire: Cow::Borrowed("outline"),
        prefix: Cow::Owned(prefix),
        suffix: Cow::Owned(suffix),
        blocks,
    };
    let row = serde_json::to_string(&stored).ok()?;
    Some((row, apart))
}

/// Objects by hash, whole: documents stored as outlines come back assembled. Objects not
/// stored are left out.
pub fn load(c: &mut dyn Conn, space_id: &str, hashes: &[&str]) -> StoreResult<Vec<(String, String)>> {
    let mut out = Vec::with_capacity(hashes.len());
    let mut outlined = Vec::new();
    for (hash, body) in rows(c, space_id, hashes)? {
        if is_outline(&body) {
            outlined.push((hash, body));
        } else {
            out.push((hash, body));
        }
    }
    if outlined.is_empty() {
        return Ok(out);
    }
    let decoded = outlined
        .iter()
        .map(|(hash, body)| decode_outline(hash, space_id, body))
        .collect::<StoreResult<Vec<_>>>()?;
    let wanted: Vec<&str> = decoded
        .iter()
        .flat_map(|o| {
            o.blocks
                .iter()
                .filter(|b| b.json.is_none())
                .map(|b| b.hash.as_ref())
        })
        .collect();
    let apart: HashMap<String, String> = rows(c, space_id, &wanted)?.into_iter().collect();
    for ((hash, _), outline) in outlined.iter().zip(&decoded) {
        let mut texts = Vec::with_capacity(outline.blocks.len());
        for block in &outline.blocks {
            let text = match block.json {
                Some(json) => json.get(),
                None => apart
                    .get(block.hash.as_ref())
                    .map(String::as_str)
                    .ok_or_else(|| {
                        StoreError::from(DbError::Other(format!(
                            "block {} of document {hash} of space {space_id:?} is missing",
                            block.hash
                        )))
                    })?,
            };
            texts.push(text);
        }
        out.push((hash.clone(), assemble(&outline.prefix, &outline.suffix, texts)));
    }
    Ok(out)
}

/// Documents' outlines by hash, without the blocks stored apart (documents stored whole are
/// read and taken apart). Objects not stored, or not documents, are left out.
pub fn outlines(c: &mut dyn Conn, space_id: &str, hashes: &[&str]) -> StoreResult<Vec<(String, Outline)>> {
    let mut out = Vec::with_capacity(hashes.len());
    for (hash, body) in rows(c, space_id, hashes)? {
        let outline = if is_outline(&body) {
            let stored = decode_outline(&hash, space_id, &body)?;
            Outline {
                prefix: stored.prefix.into_owned(),
                suffix: stored.suffix.into_owned(),
                blocks: stored
                    .blocks
                    .into_iter()
                    .map(|b| OutlineBlock {
                        hash: b.hash.into_owned(),
                        json: b.json.map(|j| j.get().to_string()),
                    })
                    .collect(),
            }
        } else {
            match Outline::of(&body) {
                Some(outline) => outline,
                None => continue,
            }
        };
        out.push((hash, outline));
    }
    Ok(out)
}

/// The JSON of blocks stored apart, by hash.
pub fn blocks(c: &mut dyn Conn, space_id: &str, hashes: &[&str]) -> StoreResult<Vec<(String, String)>> {
    rows(c, space_id, hashes)
}

/// The hashes of the blocks stored apart from the documents among `hashes` (to copy a space's
/// content with its documents).
pub fn blocks_apart(c: &mut dyn Conn, space_id: &str, hashes: &[&str]) -> StoreResult<Vec<String>> {
    let mut out = Vec::new();
    for chunk in hashes.chunks(CHUNK) {
        let mut args = Args::default();
        let space = args.arg(space_id);
        let list = args.list(chunk.iter().copied());
        let sql = format!(
            "SELECT hash, body FROM objects WHERE space_id = {space} AND hash IN ({list}) AND body LIKE '{OUTLINE_START}%'"
        );
        for mut row in c.query(&sql, args.values())? {
            let hash: String = row.get(0)?;
            let body = row.take_text(1)?;
            let outline = decode_outline(&hash, space_id, &body)?;
            out.extend(
                outline
                    .blocks
                    .iter()
                    .filter(|b| b.json.is_none())
                    .map(|b| b.hash.to_string()),
            );
        }
    }
    Ok(out)
}

/// Rows of `objects` by hash, as stored.
fn rows(c: &mut dyn Conn, space_id: &str, hashes: &[&str]) -> StoreResult<Vec<(String, String)>> {
    let mut out = Vec::with_capacity(hashes.len());
    for chunk in hashes.chunks(CHUNK) {
        let mut args = Args::default();
        let space = args.arg(space_id);
        let list = args.list(chunk.iter().copied());
        let sql = format!("SELECT hash, body FROM objects WHERE space_id = {space} AND hash IN ({list})");
        for mut row in c.query(&sql, args.values())? {
            out.push((row.get(0)?, row.take_text(1)?));
        }
    }
    Ok(out)
}

/// Whether `hash` is a document of the space (whole or outlined), not a bucket or a block.
pub fn is_document(c: &mut dyn Conn, space_id: &str, hash: &str) -> StoreResult<bool> {
    Ok(c.exists(
        &format!(
            "SELECT 1 FROM objects WHERE space_id = ?1 AND hash = ?2
             AND (body LIKE '{{\"object\":\"document\"%' OR body LIKE '{OUTLINE_START}%')"
        ),
        params![space_id, hash],
    )?)
}
