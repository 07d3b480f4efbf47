//! The text that full-text search indexes and queries: lowercase, without accents, words
//! separated by single spaces.
//!
//! Both database engines index the output of [`index_text`] and are queried with the words of
//! [`query_words`], so case and accent folding and word splitting are decided here, once, and
//! the engines agree: SQLite's `unicode61` tokenizer and PostgreSQL's `simple` parser only ever
//! see runs of letters and digits separated by spaces.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Longest word indexed or searched, in characters: longer runs (hashes, base64) are noise, and
/// PostgreSQL refuses lexemes above 2 KiB.
pub const MAX_WORD_CHARS: usize = 64;

/// Most bytes of text indexed per field: PostgreSQL's `tsvector` holds at most 1 MiB, and the
/// start of a very long section is enough to find it.
pub const MAX_INDEXED_BYTES: usize = 200_000;

/// Most words of a query that are searched; the rest are ignored.
pub const MAX_QUERY_WORDS: usize = 16;

/// Letters without a decomposition that readers still expect to match their plain form.
fn fold_special(c: char, out: &mut String) -> bool {
    let folded = match c {
        'ß' => "ss",
        'æ' => "ae",
        'œ' => "oe",
        'ø' => "o",
        'đ' | 'ð' => "d",
        'ł' => "l",
        'ı' => "i",
        'þ' => "th",
        _ => return false,
    };
    out.push_str(folded);
    true
}

/// Calls `word` with each word of `text`, lowercased and without accents.
fn for_each_word(text: &str, mut word: impl FnMut(&str)) {
    let mut current = String::new();
    let mut chars = 0usize;
    let mut flush = |current: &mut String, chars: &mut usize| {
        if !current.is_empty() && *chars <= MAX_WORD_CHARS {
            word(current);
        }
        current.clear();
        *chars = 0;
    };
    for c in text.nfd() {
        if is_combining_mark(c) {
            continue;
        }
        if !c.is_alphanumeric() {
            flush(&mut current, &mut chars);
            continue;
        }
        for lower in c.to_lowercase() {
            if !fold_special(lower, &mut current) {
                current.push(lower);
            }
        }
        chars += 1;
    }
    flush(&mut current, &mut chars);
}

/// The text to index for `text`: its words, folded, separated by single spaces, cut at about
/// [`MAX_INDEXED_BYTES`].
pub fn index_text(text: &str) -> String {
    let mut out = String::new();
    for_each_word(text, |word| {
        if out.len() + word.len() + 1 > MAX_INDEXED_BYTES {
            return;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    });
    out
}

/// The words of a query, folded as indexed text is, at most [`MAX_QUERY_WORDS`].
pub fn query_words(query: &str) -> Vec<String> {
    let mut words = Vec::new();
    for_each_word(query, |word| {
        if words.len() < MAX_QUERY_WORDS {
            words.push(word.to_owned());
        }
    });
    words
}

/// The byte offset in `haystack` (any text) of its first word that starts with `word` (a folded
/// query word), to centre excerpts on.
pub fn find_word(haystack: &str, word: &str) -> Option<usize> {
    let matches = |s: usize, e: usize| {
        let candidate = &haystack[s..e];
        if candidate.is_ascii() {
            // The common case, without folding allocations: ASCII folds to its lowercase.
            candidate.len() >= word.len()
                && candidate.as_bytes()[..word.len()].eq_ignore_ascii_case(word.as_bytes())
        } else {
            index_text(candidate).starts_with(word)
        }
    };
    let mut start = None;
    for (i, c) in haystack.char_indices() {
        if c.is_alphanumeric() {
            start.get_or_insert(i);
        } else if let Some(s) = start.take()
            && matches(s, i)
        {
            return Some(s);
        }
    }
    start.filter(|s| matches(*s, haystack.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_case_and_accents_and_splits_words() {
        assert_eq!(
            index_text("Crème Brûlée, SEÑOR! Straße_über"),
            "creme brulee senor strasse uber"
        );
        assert_eq!(index_text("  v2.0-beta "), "v2 0 beta");
        assert_eq!(query_words("\"Réplication\" latency"), ["replication", "latency"]);
        assert!(query_words("  --  ").is_empty());
    }

    #[test]
    fn long_words_and_long_queries_are_dropped() {
        let long = "x".repeat(MAX_WORD_CHARS + 1);
        assert_eq!(index_text(&format!("a {long} b")), "a b");
        let many = "w ".repeat(40);
        assert_eq!(query_words(&many).len(), MAX_QUERY_WORDS);
    }

    #[test]
    fn finds_words_for_excerpts() {
        assert_eq!(find_word("The Réplication log", "replic"), Some(4));
        assert_eq!(find_word("none here", "replic"), None);
        assert_eq!(find_word("end Réplication", "replication"), Some(4));
    }
}
