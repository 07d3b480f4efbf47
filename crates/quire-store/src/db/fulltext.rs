//! The full-text statements, which differ by engine: SQLite's FTS5 table `search_fts` beside
//! `search_sections`, PostgreSQL's `tsvector` column `search_sections.terms` with a GIN index
//! (migration 0007). Both index the folded text of `quire_content::search_text` and are queried
//! with its words, so they find the same rows; only their relevance scores differ (bm25 and
//! `ts_rank`).

use super::{Args, Conn, DbError, Dialect};

/// Rows per multi-row INSERT: far below both engines' parameter limits.
const CHUNK: usize = 100;

/// Positions per page: a section row's id is `page key * SECTIONS_PER_KEY + position`.
pub const SECTIONS_PER_KEY: i64 = 1024;

/// A row of `search_sections` and the folded text to index for it.
pub struct SectionRow<'a> {
    /// `page key * SECTIONS_PER_KEY + position`.
    pub id: i64,
    pub anchor: &'a str,
    /// Shown in results.
    pub title: &'a str,
    pub body: &'a str,
    /// Indexed ([`quire_content::search_text::index_text`] of the title and of the body).
    pub index_title: String,
    pub index_body: String,
}

/// What a search looks for: folded words, all required, the last one also as a prefix.
#[derive(Debug, Clone)]
pub struct FtsQuery {
    pub words: Vec<String>,
    pub prefix_last: bool,
}

/// The token naming a space in the index: words of real text are folded the same way, but are
/// searched only in the title and body, so they never match it.
fn space_token(space_id: &str) -> String {
    space_id.to_lowercase()
}

/// Inserts rows of one space.
pub fn insert_sections(c: &mut dyn Conn, space_id: &str, rows: &[SectionRow<'_>]) -> Result<(), DbError> {
    match c.dialect() {
        Dialect::Sqlite => insert_sqlite(c, space_id, rows),
        Dialect::Postgres => insert_postgres(c, space_id, rows),
    }
}

fn insert_sqlite(c: &mut dyn Conn, space_id: &str, rows: &[SectionRow<'_>]) -> Result<(), DbError> {
    let token = space_token(space_id);
    for chunk in rows.chunks(CHUNK) {
        let mut sections = Args::default();
        let space = sections.arg(space_id);
        let mut fts = Args::default();
        let mut section_values = Vec::with_capacity(chunk.len());
        let mut fts_values = Vec::with_capacity(chunk.len());
        for row in chunk {
            section_values.push(format!(
                "({}, {space}, {}, {}, {})",
                sections.arg(row.id),
                sections.arg(row.anchor),
                sections.arg(row.title),
                sections.arg(row.body)
            ));
            fts_values.push(format!(
                "({}, {}, {}, {})",
                fts.arg(row.id),
                fts.arg(token.as_str()),
                fts.arg(row.index_title.as_str()),
                fts.arg(row.index_body.as_str()),
            ));
        }
        c.execute(
            &format!(
                "INSERT INTO search_sections (id, space_id, anchor, title, body) VALUES {}",
                section_values.join(", ")
            ),
            sections.values(),
        )?;
        c.execute(
            &format!(
                "INSERT INTO search_fts (rowid, space, title, body) VALUES {}",
                fts_values.join(", ")
            ),
            fts.values(),
        )?;
    }
    Ok(())
}

fn insert_postgres(c: &mut dyn Conn, space_id: &str, rows: &[SectionRow<'_>]) -> Result<(), DbError> {
    let token = space_token(space_id);
    for chunk in rows.chunks(CHUNK) {
        let mut args = Args::default();
        let space = args.arg(space_id);
        let token = args.arg(token.as_str());
        let values: Vec<String> = chunk
            .iter()
            .map(|row| {
                format!(
                    "({}, {space}, {}, {}, {}, setweight(to_tsvector('simple', {token}), 'C') \
                     || setweight(to_tsvector('simple', {}), 'A') || setweight(to_tsvector('simple', {}), 'D'))",
                    args.arg(row.id),
                    args.arg(row.anchor),
                    args.arg(row.title),
                    args.arg(row.body),
                    args.arg(row.index_title.as_str()),
                    args.arg(row.index_body.as_str()),
                )
            })
            .collect();
        c.execute(
            &format!(
                "INSERT INTO search_sections (id, space_id, anchor, title, body, terms) VALUES {}",
                values.join(", ")
            ),
            args.values(),
        )?;
    }
    Ok(())
}

/// The query's words, each written by `term`, which is told whether the word is matched as a
/// prefix (the last word, when the query asks for it).
fn terms(query: &FtsQuery, term: impl Fn(&str, bool) -> String) -> Vec<String> {
    let last = query.words.len().saturating_sub(1);
    query
        .words
        .iter()
        .enumerate()
        .map(|(i, w)| term(w, query.prefix_last && i == last))
        .collect()
}

/// A SELECT of the rows matching `query` (all of them, or those of `space` only), as columns
/// `id, score`, the score higher for better matches. Titles weigh four times as much as bodies.
/// It reads the full-text index only: the space is told by its token (callers check the space of
/// the pages they show).
pub fn hits_sql(c: &dyn Conn, args: &mut Args, query: &FtsQuery, space: Option<&str>) -> String {
    match c.dialect() {
        Dialect::Sqlite => {
            let words = terms(query, |w, prefix| {
                format!("\"{w}\"{}", if prefix { "*" } else { "" })
            });
            let mut expression = format!("{{title body}} : ({})", words.join(" AND "));
            if let Some(space) = space {
                expression = format!("space : \"{}\" AND {expression}", space_token(space));
            }
            format!(
                "SELECT rowid AS id, -bm25(search_fts, 0.0, 4.0, 1.0) AS score
                 FROM search_fts WHERE search_fts MATCH {}",
                args.arg(expression)
            )
        }
        Dialect::Postgres => {
            let words = terms(query, |w, prefix| {
                format!("{w}:{}AD", if prefix { "*" } else { "" })
            });
            let words = words.join(" & ");
            let mut matching = words.clone();
            if let Some(space) = space {
                matching = format!("{}:C & {matching}", space_token(space));
            }
            // Weights of D, C, B and A: the space token (C) counts for nothing.
            format!(
                "SELECT s.id, ts_rank('{{0.25, 0, 0, 1}}', s.terms, to_tsquery('simple', {}), 1)::float8 AS score
                 FROM search_sections s
                 WHERE s.terms @@ to_tsquery('simple', {})",
                args.arg(words),
                args.arg(matching)
            )
        }
    }
}

/// Like [`hits_sql`], for rows holding any of `words`, each as a prefix: the questions of
/// conversations, whose key terms are stems (`quire_content::conversations`). With `spaces`,
/// only their rows are read (by their tokens in the index; callers check the space of what they
/// keep), so one organization's questions do not rank every other organization's matches.
pub fn any_hits_sql(c: &dyn Conn, args: &mut Args, words: &[String], spaces: Option<&[String]>) -> String {
    match c.dialect() {
        Dialect::Sqlite => {
            let words: Vec<String> = words.iter().map(|w| format!("\"{w}\"*")).collect();
            let mut expression = format!("{{title body}} : ({})", words.join(" OR "));
            if let Some(spaces) = spaces {
                let tokens: Vec<String> = spaces.iter().map(|s| format!("\"{}\"", space_token(s))).collect();
                expression = format!("space : ({}) AND {expression}", tokens.join(" OR "));
            }
            format!(
                "SELECT rowid AS id, -bm25(search_fts, 0.0, 4.0, 1.0) AS score
                 FROM search_fts WHERE search_fts MATCH {}",
                args.arg(expression)
            )
        }
        Dialect::Postgres => {
            let words: Vec<String> = words.iter().map(|w| format!("{w}:*AD")).collect();
            let any = format!("({})", words.join(" | "));
            let rank = args.arg(any.clone());
            let mut matching = any;
            if let Some(spaces) = spaces {
                let tokens: Vec<String> = spaces.iter().map(|s| format!("{}:C", space_token(s))).collect();
                matching = format!("({}) & {matching}", tokens.join(" | "));
            }
            let matching = args.arg(matching);
            format!(
                "SELECT s.id, ts_rank('{{0.25, 0, 0, 1}}', s.terms, to_tsquery('simple', {rank}), 1)::float8 AS score
                 FROM search_sections s
                 WHERE s.terms @@ to_tsquery('simple', {matching})"
            )
        }
    }
}
