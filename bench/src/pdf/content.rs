//! What the `pdf` phase's space holds, and how it is written through the API: [`PAGES`] pages
//! in [`GROUPS`] groups, about 1 MB of markdown with the blocks a handbook has (marks, sections,
//! links between pages, lists, code, tables, figures, CJK text), deterministic from a seed so
//! that two runs typeset the same book.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{PdfResult, call, id, merge, open_change_request};
use crate::conn::Conn;
use crate::text::{self, Rng};

/// Groups at the root of the space.
pub const GROUPS: usize = 5;
/// Top pages in each group.
pub const TOPS_PER_GROUP: usize = 20;
/// Children of each top page.
pub const CHILDREN: usize = 4;
/// Pages with a document: 500.
pub const PAGES: usize = GROUPS * TOPS_PER_GROUP * (1 + CHILDREN);
/// Markdown per page, about: 500 pages make about 1 MB.
const PAGE_BYTES: usize = 2000;
/// The PNG figures inserted, and which pages show one (index modulo this is 2: top pages and
/// children alike).
pub const IMAGES: usize = 4;
pub const IMAGE_EVERY: usize = 5;
/// Which pages have a CJK paragraph (index modulo this is 1).
pub const CJK_EVERY: usize = 4;
/// Changes per content batch: the API's maximum.
const BATCH: usize = 50;

/// What one entry of the tree is.
enum Item {
    Group(usize),
    /// A page (its index) and its parent: a group, or a top page (its index).
    Page {
        index: usize,
        parent: Parent,
    },
}

#[derive(Clone, Copy)]
enum Parent {
    Group(usize),
    Page(usize),
}

/// The items of group `g` in tree order (parents before children).
fn group_items(g: usize) -> Vec<Item> {
    let mut items = vec![Item::Group(g)];
    let first = g * TOPS_PER_GROUP * (1 + CHILDREN);
    for t in 0..TOPS_PER_GROUP {
        let top = first + t * (1 + CHILDREN);
        items.push(Item::Page {
            index: top,
            parent: Parent::Group(g),
        });
        for c in 1..=CHILDREN {
            items.push(Item::Page {
                index: top + c,
                parent: Parent::Page(top),
            });
        }
    }
    items
}

const GROUP_TITLES: [&str; GROUPS] = [
    "Getting started",
    "Operations",
    "Reference",
    "Integrations",
    "Appendix",
];

/// Ids of what was written, by ref (`g{n}`, `p{n}`).
#[derive(Default)]
struct Ids(BTreeMap<String, String>);

impl Ids {
    /// The page's id when written, else its ref (within the same batch).
    fn parent_target(&self, key: &str) -> String {
        self.0.get(key).cloned().unwrap_or_else(|| key.to_string())
    }

    /// A markdown link target to page `index`: by id once written, else by its ref (only
    /// within the batch that inserts it).
    fn link(&self, index: usize) -> String {
        let key = format!("p{index}");
        match self.0.get(&key) {
            Some(id) => format!("/pages/{id}"),
            None => format!("./{key}.md"),
        }
    }
}

/// Writes the space: the figures, then one change request per group, merged. The page ids in
/// order.
pub(super) async fn write_space(
    conn: &mut Conn,
    token: &str,
    space: &str,
    out: &mut PdfResult,
) -> Result<Vec<String>, String> {
    let mut rng = Rng::new(500);
    let mut ids = Ids::default();
    let mut figures = Vec::with_capacity(IMAGES);
    for (g, group_title) in GROUP_TITLES.iter().enumerate() {
        let cr = open_change_request(conn, token, space, &format!("PDF handbook: {group_title}")).await?;
        out.change_requests += 1;
        let path = format!("/v1/spaces/{space}/change-requests/{cr}/content?compat=false");
        if g == 0 {
            let files: Vec<Value> = (0..IMAGES)
                .map(|n| {
                    let bytes = png(n, 640, 360)?;
                    out.image_bytes += bytes.len();
                    Ok(
                        json!({"name": format!("figure-{}.png", n + 1), "contentType": "image/png",
                              "base64": base64(&bytes)}),
                    )
                })
                .collect::<Result<_, String>>()?;
            let a = call(
                conn,
                "POST",
                &path,
                token,
                Some(&json!({"changes": [{"operation": "insert_files", "files": files}]})),
            )
            .await?;
            out.batches += 1;
            for f in a["insertedFiles"].as_array().into_iter().flatten() {
                figures.push(id(f, "inserted file")?);
            }
            if figures.len() != IMAGES {
                return Err(format!("{IMAGES} figures inserted, {} reported", figures.len()));
            }
        }
        for batch in group_items(g).chunks(BATCH) {
            let changes: Vec<Value> = batch
                .iter()
                .map(|item| change(&mut rng, item, &ids, &figures, out))
                .collect();
            let a = call(conn, "POST", &path, token, Some(&json!({"changes": changes}))).await?;
            out.batches += 1;
            for c in a["changes"].as_array().into_iter().flatten() {
                if let (Some(r), Some(id)) = (c["ref"].as_str(), c["page"]["id"].as_str()) {
                    ids.0.insert(r.to_string(), id.to_string());
                }
            }
        }
        merge(conn, token, space, &cr, &format!("the pages of group {}", g + 1)).await?;
    }
    out.groups = GROUPS;
    (0..PAGES)
        .map(|i| {
            ids.0
                .get(&format!("p{i}"))
                .cloned()
                .ok_or_else(|| format!("page p{i} was not reported created"))
        })
        .collect()
}

/// The change that inserts an item.
fn change(rng: &mut Rng, item: &Item, ids: &Ids, figures: &[String], out: &mut PdfResult) -> Value {
    match *item {
        Item::Group(g) => json!({"operation": "insert_page", "type": "group", "ref": format!("g{g}"),
                                 "title": GROUP_TITLES[g]}),
        Item::Page { index, parent } => {
            let title = text::title(rng, index + 1);
            let (into, mut links) = match parent {
                Parent::Group(g) => (ids.parent_target(&format!("g{g}")), Vec::new()),
                Parent::Page(p) => (
                    ids.parent_target(&format!("p{p}")),
                    vec![("the parent page".to_string(), ids.link(p))],
                ),
            };
            // Another page: the one before (the first page links to the next, in its batch).
            let other = if index == 0 { 1 } else { index - 1 };
            links.push((format!("page {}", other + 1), ids.link(other)));
            let figure = (index % IMAGE_EVERY == 2)
                .then(|| figures.get(index / IMAGE_EVERY % figures.len().max(1)))
                .flatten()
                .map(|f| format!("/files/{f}"));
            let cjk = index % CJK_EVERY == 1;
            out.pages += 1;
            out.pages_with_image += usize::from(figure.is_some());
            out.pages_with_cjk += usize::from(cjk);
            let md = page_markdown(rng, index, &title, &links, figure.as_deref(), cjk);
            out.markdown_bytes += md.len();
            json!({"operation": "insert_page", "ref": format!("p{index}"), "title": title,
                   "into": into, "document": {"markdown": md}})
        }
    }
}

/// Sentences of CJK text (simplified Chinese and Japanese), for the paragraphs that need the
/// bundled CJK fonts.
const CJK: &[&str] = &[
    "本指南介绍如何配置复制与故障转移。",
    "每个团队都可以在空间中编写和审阅文档。",
    "请在合并之前检查变更请求中的所有页面。",
    "搜索索引会在每次合并后重新生成。",
    "このページでは、スナップショットとロールバックの手順を説明します。",
    "設定を変更した後は、必ずサーバーを再起動してください。",
    "詳しくは、次の章の表を参照してください。",
];

const LANGUAGES: &[&str] = &["rust", "python", "json", "bash", "sql"];

/// About [`PAGE_BYTES`] of markdown: a title heading, an introduction with marks and links, two
/// `##` sections (a list, a fenced code block, a table), maybe a figure and a CJK paragraph.
pub(super) fn page_markdown(
    rng: &mut Rng,
    index: usize,
    title: &str,
    links: &[(String, String)],
    figure: Option<&str>,
    cjk: bool,
) -> String {
    let mut md = format!("# {title}\n\n");
    paragraph(rng, &mut md, 200);
    for (text, target) in links {
        md.push_str(&format!("See [{text}]({target}). "));
    }
    md.push_str("\n\n");
    md.push_str(&format!("## {}\n\n", text::title(rng, 1)));
    paragraph(rng, &mut md, 120);
    md.push_str("\n\n");
    let numbered = index % 2 == 1;
    for n in 0..3 + rng.below(3) {
        let bullet = if numbered {
            format!("{}.", n + 1)
        } else {
            "-".to_string()
        };
        md.push_str(&format!("{bullet} "));
        paragraph(rng, &mut md, 1);
        md.push('\n');
    }
    md.push('\n');
    code_block(rng, &mut md);
    md.push_str(&format!("## {}\n\n", text::title(rng, 2)));
    paragraph(rng, &mut md, 100);
    md.push_str("\n\n");
    settings_table(rng, &mut md);
    if let Some(target) = figure {
        md.push_str(&format!(
            "![Figure {}: {}]({target})\n\n",
            index + 1,
            text::title(rng, 3)
        ));
    }
    if cjk {
        for _ in 0..4 {
            md.push_str(CJK[rng.below(CJK.len())]);
        }
        md.push_str("\n\n");
    }
    let rest = PAGE_BYTES.saturating_sub(md.len());
    if rest > 40 {
        paragraph(rng, &mut md, rest - 20);
        md.push('\n');
    }
    md
}

/// Sentences up to about `bytes`, one word in seven marked (bold, italic, code or struck).
fn paragraph(rng: &mut Rng, md: &mut String, bytes: usize) {
    let start = md.len();
    while md.len() - start < bytes {
        for word in text::comment(rng).split(' ') {
            let marked = match rng.below(28) {
                0 => format!("**{word}**"),
                1 => format!("*{word}*"),
                2 if word.chars().all(|c| c.is_ascii_alphanumeric()) => format!("`{word}`"),
                3 => format!("~~{word}~~"),
                _ => word.to_string(),
            };
            md.push_str(&marked);
            md.push(' ');
        }
    }
    if md.ends_with(' ') {
        md.pop();
    }
}

fn term(rng: &mut Rng) -> &'static str {
    text::TERMS[rng.below(text::TERMS.len())]
}

/// A fenced code block of 6 to 10 lines in one of [`LANGUAGES`] (the PDF highlights them).
fn code_block(rng: &mut Rng, md: &mut String) {
    let language = LANGUAGES[rng.below(LANGUAGES.len())];
    md.push_str(&format!("```{language}\n"));
    for _ in 0..6 + rng.below(5) {
        let (t, n) = (term(rng), rng.below(1000));
        let line = match language {
            "rust" => format!("let {t}_{n} = config.{t}().unwrap_or({n});"),
            "python" => format!("{t}_{n} = client.{t}(limit={n})"),
            "json" => format!("\"{t}\": {{\"limit\": {n}, \"enabled\": true}},"),
            "bash" => format!("quire admin {t} --limit {n}"),
            _ => format!("SELECT id, {t} FROM {t}s WHERE weight > {n};"),
        };
        md.push_str(&line);
        md.push('\n');
    }
    md.push_str("```\n\n");
}

/// A table of 5 to 8 rows and 4 columns.
fn settings_table(rng: &mut Rng, md: &mut String) {
    md.push_str("| Setting | Default | Unit | Notes |\n|---|---|---|---|\n");
    for _ in 0..5 + rng.below(4) {
        let unit = ["ms", "MB", "requests", "pages"][rng.below(4)];
        let note: Vec<String> = text::comment(rng)
            .split(' ')
            .take(5)
            .map(str::to_string)
            .collect();
        md.push_str(&format!(
            "| `{}.limit` | {} | {unit} | {} |\n",
            term(rng),
            rng.below(5000),
            note.join(" ")
        ));
    }
    md.push('\n');
}

/// A PNG of `w`×`h` RGB pixels that looks like a chart: a light background with grid lines and
/// eight bars, their heights and colour depending on `seed`.
fn png(seed: usize, w: u32, h: u32) -> Result<Vec<u8>, String> {
    use std::io::Write as _;
    let colours = [[66u8, 133, 244], [219, 68, 55], [244, 180, 0], [15, 157, 88]];
    let colour = colours[seed % colours.len()];
    let mut raw = Vec::with_capacity(((w * 3 + 1) * h) as usize);
    for y in 0..h {
        raw.push(0); // filter: none
        for x in 0..w {
            let bar = (x * 8 / w) as usize;
            let height = ((seed * 7 + bar * 13) % 10 + 3) as u32 * h / 14;
            let in_bar = y >= h - height && x % (w / 8) > w / 40;
            let pixel = if in_bar {
                colour
            } else if x % 40 == 0 || y % 40 == 0 {
                [200, 200, 210]
            } else {
                let shade = 240 - (y * 20 / h) as u8;
                [shade, shade, 250]
            };
            raw.extend_from_slice(&pixel);
        }
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&raw).map_err(|e| e.to_string())?;
    let idat = z.finish().map_err(|e| e.to_string())?;
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]); // 8 bits, RGB, deflate, no filter, no interlace
    for (kind, data) in [(b"IHDR", &ihdr[..]), (b"IDAT", &idat[..]), (b"IEND", &[][..])] {
        out.extend_from_slice(
            &u32::try_from(data.len())
                .map_err(|e| e.to_string())?
                .to_be_bytes(),
        );
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(&crc.sum().to_be_bytes());
    }
    Ok(out)
}

/// Standard base64 with padding (the bench has no base64 crate, and needs only this).
pub(super) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let n = (b(0) << 16) | (b(1) << 8) | b(2);
        for (k, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    #[test]
    fn pngs_are_well_formed() {
        let p = png(1, 64, 32).unwrap();
        assert!(p.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert_eq!(&p[12..16], b"IHDR");
        assert_eq!(&p[16..20], &64u32.to_be_bytes());
        assert!(p.ends_with(&[0xae, 0x42, 0x60, 0x82]), "IEND's CRC");
        assert_ne!(png(0, 64, 32).unwrap(), p, "figures differ");
    }

    #[test]
    fn the_tree_has_500_pages_parents_first() {
        let mut seen = std::collections::BTreeSet::new();
        let mut pages = 0;
        for g in 0..GROUPS {
            for item in group_items(g) {
                if let Item::Page { index, parent } = item {
                    if let Parent::Page(p) = parent {
                        assert!(seen.contains(&p), "page {p} before its child {index}");
                    }
                    assert!(seen.insert(index));
                    pages += 1;
                }
            }
        }
        assert_eq!(pages, PAGES);
        assert_eq!(PAGES, 500);
        assert_eq!(seen.last(), Some(&(PAGES - 1)));
    }

    #[test]
    fn the_space_is_about_1_mb() {
        let mut rng = Rng::new(500);
        let links = vec![
            (
                "the parent page".to_string(),
                "/pages/abcdefghijklmnopqrst".to_string(),
            ),
            ("page 2".to_string(), "/pages/bcdefghijklmnopqrstu".to_string()),
        ];
        let total: usize = (0..PAGES)
            .map(|i| {
                let figure = (i % IMAGE_EVERY == 2).then_some("/files/abcdefghijklmnopqrst");
                let title = text::title(&mut rng, i + 1);
                page_markdown(&mut rng, i, &title, &links, figure, i % CJK_EVERY == 1).len()
            })
            .sum();
        assert!((950_000..1_100_000).contains(&total), "{total}");
    }

    #[test]
    fn pages_have_every_block_and_about_2_kb() {
        let links = vec![("the parent page".to_string(), "/pages/abc".to_string())];
        let md = page_markdown(&mut Rng::new(3), 7, "Title", &links, Some("/files/f1"), true);
        assert!((1800..2600).contains(&md.len()), "{}", md.len());
        assert!(md.starts_with("# Title\n\n"));
        assert_eq!(md.matches("\n## ").count(), 2);
        assert!(md.contains("(/pages/abc)"));
        assert!(md.contains("\n```"));
        assert!(md.contains("|---|---|---|---|"));
        assert!(md.contains("](/files/f1)"));
        assert!(CJK.iter().any(|c| md.contains(c)));
        let rows = md.lines().filter(|l| l.starts_with("| `")).count();
        assert!((5..=8).contains(&rows), "{rows}");
        // Deterministic.
        assert_eq!(
            md,
            page_markdown(&mut Rng::new(3), 7, "Title", &links, Some("/files/f1"), true)
        );
    }

    #[test]
    fn links_by_ref_within_a_batch_then_by_id() {
        let mut ids = Ids::default();
        assert_eq!(ids.link(3), "./p3.md");
        assert_eq!(ids.parent_target("g0"), "g0");
        ids.0.insert("p3".into(), "abc".into());
        assert_eq!(ids.link(3), "/pages/abc");
        assert_eq!(ids.parent_target("p3"), "abc");
    }
}
