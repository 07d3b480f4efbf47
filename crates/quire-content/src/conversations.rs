//! The text logic of support conversations: the questions a user's message asks, their key
//! terms, how much of a documentation section covers them, and the grouping of unanswered
//! questions ("issues") by text similarity.
//!
//! Every word is folded by [`index_text`], as the full-text index folds it, and a key term is
//! a light stem used as a prefix, as the index matches query words: a term found here is a term
//! the search can find. Everything is deterministic; [`cluster`] depends only on the set of
//! items, so that re-running it over the same issues never reshuffles the groups.

use std::collections::{BTreeMap, HashMap};

use crate::search_text::index_text;

/// Most questions taken from one message.
pub const MAX_QUESTIONS_PER_MESSAGE: usize = 5;

/// Longest question kept, in characters (longer sentences are cut at a char boundary, ending
/// with '…').
pub const MAX_QUESTION_CHARS: usize = 300;

/// Most key terms of one question.
pub const MAX_TERMS: usize = 8;

/// Two issues are alike when the cosine of their TF-IDF vectors is at least this.
pub const SIMILARITY: f64 = 0.4;

/// A term in more distinct term sets than this does not, on its own, make two issues
/// candidates for comparison (bounds the pairs compared: the work is at most the postings times
/// this). Issues with the same terms are joined before, so a question asked often is one set.
pub const MAX_POSTINGS: usize = 500;

/// Most items [`cluster`] accepts; more is the caller's bug (it returns an error string).
pub const MAX_ITEMS: usize = 200_000;

/// Most bytes of a message looked at: questions are asked up front, and the rest of a huge
/// message is pasted material.
const MAX_TEXT_BYTES: usize = 64 * 1024;

/// Longer sentences are pasted logs or stack traces, never questions.
const MAX_SENTENCE_BYTES: usize = 2_000;

/// Stems shorter than this would match too many words as prefixes.
const MIN_STEM_CHARS: usize = 4;

/// "-ly" leaves a longer stem: with four letters "supply" would become "supp", a prefix of
/// "support".
const MIN_LY_STEM_CHARS: usize = 5;

/// Scores of [`central`] closer than this are equal: they are sums of rounded products, and a
/// rounding difference must not beat the order by id.
const TIE_TOLERANCE: f64 = 1e-9;

/// Suffixes [`stem`] strips, longest first, with what replaces them.
const SUFFIXES: &[(&str, &str)] = &[
    ("ations", ""),
    ("ation", ""),
    ("ings", ""),
    ("ing", ""),
    ("ied", "y"),
    ("ies", "y"),
    ("ed", ""),
    ("es", ""),
    ("ly", ""),
    ("s", ""),
];

/// Folded first words that make a sentence a question even without its '?' (chat users often
/// leave it out).
const QUESTION_WORDS: &[&str] = &[
    "are", "can", "could", "did", "do", "does", "has", "have", "how", "is", "may", "might", "should", "was",
    "were", "what", "when", "where", "which", "who", "whom", "whose", "why", "will", "would",
];

/// Folded word sequences that make a sentence a request: the user asks for something without
/// asking a question ("I need to…", "… is not working").
const REQUEST_PHRASES: &[&[&str]] = &[
    &["i", "want"],
    &["i", "need"],
    &["i", "would", "like"],
    &["i", "d", "like"],
    &["i", "m", "trying"],
    &["i", "am", "trying"],
    &["i", "can", "t"],
    &["i", "cannot"],
    &["i", "couldn", "t"],
    &["unable", "to"],
    &["is", "there", "a", "way"],
    &["how", "to"],
    &["looking", "for"],
    &["help", "me"],
    &["please"],
    &["doesn", "t", "work"],
    &["not", "working"],
    &["does", "not", "work"],
    &["error"],
];

/// Folded English words that say nothing about what a question is about: grammar words and
/// the filler of chat messages, separated by spaces, sorted (a test checks it, to keep the list
/// easy to edit). The halves of contractions ("don", "isn") are here because folding splits
/// "don't" into "don" and "t".
const STOP_WORDS: &str = "\
    a able about above across actually after afternoon again against all almost along already also \
    although always am among an and another any anybody anyone anything anyway are aren around as at \
    basically be because been before being below between beyond both but by can cannot cheers could \
    couldn currently dear did didn do does doesn doing don done down during each either else even \
    evening ever every everyone everything few for from get gets getting go going good got great guys \
    had hadn has hasn have haven having he hello help helps her here hers herself hey hi him himself his \
    how however i if in inside instead into is isn it its itself just kind kindly know let lets like ll \
    lot made make makes many may maybe me might mine more morning most much must mustn my myself near \
    need needed needn needs neither never no nor not nothing now of off often ok okay on once one only \
    onto or other ought our ours ourselves out over own per perhaps please pls possible possibly \
    question questions quite rather re really regards same see seem seems several shall shan she should \
    shouldn since so some somebody someone something sometimes soon sorry still stuff such sure tell \
    than thank thanks thanx that the their theirs them themselves then there these they thing things \
    think this those though through thx till to too toward towards tried tries try trying ty unable \
    under unless until up upon us use used uses using ve very via want wanted wants was wasn way ways we \
    well were weren what whatever when whenever where whereas wherever whether which while who whom \
    whose why will with within without won wondering work worked working works would wouldn yeah yes yet \
    you your yours yourself yourselves";

/// A question found in a message.
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    /// The sentence as the user wrote it, whitespace collapsed to single spaces, trimmed, cut
    /// to [`MAX_QUESTION_CHARS`].
    pub text: String,
    /// Its key terms (see [`key_terms`]).
    pub terms: Vec<String>,
}

/// The questions of a message's text, in order, at most [`MAX_QUESTIONS_PER_MESSAGE`], without
/// duplicates (the same set of terms is the same question, the first kept); a question with no
/// key term is left out.
///
/// A sentence ends at '?', '!', '.' or a line break. A '.' ends one only when whitespace or
/// the end of the text follows it and it does not close a dotted abbreviation ("e.g."), so
/// that versions ("2.5") and host names ("docs.example.com") stay whole; for the same reason a
/// '?' or '!' directly followed by a letter or digit ("search?q=sso") does not end one. A
/// sentence is a question when it ends with '?', starts with a question word, or contains a
/// request phrase ("I need", "not working", …). Only the first 64 KiB of the text are read, and
/// sentences over 2,000 bytes (pasted logs) are skipped.
pub fn questions(text: &str) -> Vec<Question> {
    let text = &text[..floor_char_boundary(text, MAX_TEXT_BYTES)];
    let mut found = Vec::new();
    let mut seen: Vec<Vec<String>> = Vec::new();
    for sentence in sentences(text) {
        if found.len() == MAX_QUESTIONS_PER_MESSAGE {
            break;
        }
        let sentence = sentence.trim();
        if sentence.is_empty() || sentence.len() > MAX_SENTENCE_BYTES {
            continue;
        }
        let folded = index_text(sentence);
        let words: Vec<&str> = folded.split(' ').filter(|w| !w.is_empty()).collect();
        if !is_question(sentence, &words) {
            continue;
        }
        let terms = terms_of_words(&words);
        if terms.is_empty() {
            continue;
        }
        // Word order differs between rephrasings of one question; the set of terms does not.
        let mut set = terms.clone();
        set.sort_unstable();
        if seen.contains(&set) {
            continue;
        }
        seen.push(set);
        found.push(Question {
            text: clip(sentence),
            terms,
        });
    }
    found
}

/// The key terms of a text: its folded words ([`index_text`]) without stop words (grammar
/// words and chat filler such as "hi", "thanks", "please", "help", "need"), without words of
/// fewer than 3 characters unless they contain a digit ("v2", "2fa"), each reduced to its
/// [`stem`], duplicates removed keeping the first, at most [`MAX_TERMS`].
pub fn key_terms(text: &str) -> Vec<String> {
    let folded = index_text(text);
    let words: Vec<&str> = folded.split(' ').filter(|w| !w.is_empty()).collect();
    terms_of_words(&words)
}

/// A light, conservative English stem of a folded word, so that "passwords", "password" and
/// "passworded" meet, and "configuring", "configured", "configuration" and "configure" meet
/// ("configur").
///
/// One suffix is stripped, the longest that leaves at least 4 characters ("ations", "ation",
/// "ings", "ing", "ied" and "ies" becoming "y", "ed", "es", "ly", "s"), then a final 'e' when
/// at least 4 characters remain. Two refinements keep it conservative: a lone "s" after "s",
/// "u" or "i" is kept ("access", "status", "analysis"), and "ly" must leave 5 characters
/// ("supply" stays whole rather than becoming "supp", a prefix of "support"). Words with a
/// digit are returned as they are. The stem is used as a prefix: every word starting with it
/// is taken to match it.
pub fn stem(word: &str) -> String {
    if word.chars().any(char::is_numeric) {
        return word.to_owned();
    }
    let mut stem = word.to_owned();
    for &(suffix, replacement) in SUFFIXES {
        let Some(base) = word.strip_suffix(suffix) else {
            continue;
        };
        if suffix == "s" && base.ends_with(['s', 'u', 'i']) {
            continue;
        }
        let min = if suffix == "ly" {
            MIN_LY_STEM_CHARS
        } else {
            MIN_STEM_CHARS
        };
        if base.chars().count() + replacement.len() >= min {
            stem = format!("{base}{replacement}");
            break;
        }
    }
    if let Some(base) = stem.strip_suffix('e')
        && base.chars().count() >= MIN_STEM_CHARS
    {
        stem.truncate(base.len());
    }
    stem
}

/// The fraction (0.0 to 1.0) of `terms` that some folded word of `text` starts with (a prefix
/// match, as the index matches). 0.0 when `terms` is empty.
pub fn coverage(terms: &[String], text: &str) -> f64 {
    if terms.is_empty() {
        return 0.0;
    }
    let folded = index_text(text);
    let mut words: Vec<&str> = folded.split(' ').filter(|w| !w.is_empty()).collect();
    words.sort_unstable();
    words.dedup();
    // In sorted order, the words starting with a prefix begin at the first word not below it.
    let covered = terms
        .iter()
        .filter(|term| {
            let at = words.partition_point(|w| *w < term.as_str());
            words.get(at).is_some_and(|w| w.starts_with(term.as_str()))
        })
        .count();
    covered as f64 / terms.len() as f64
}

/// An item to cluster: an id (unique among the items) and its terms.
#[derive(Clone, Copy, Debug)]
pub struct Item<'a> {
    /// Identifies the item; [`cluster`] and [`central`] order by it.
    pub id: &'a str,
    /// Its key terms (see [`key_terms`]).
    pub terms: &'a [String],
}

/// Groups items: the connected components of the graph joining two items whose similarity
/// ([`Weights::similarity`]) is at least [`SIMILARITY`].
///
/// The result depends only on the set of items, never on their order in the slice: groups of
/// indices into `items`, each sorted by item id, the groups sorted by their first item's id.
/// Every item is in exactly one group; an item alike to none (or without terms) is a group of
/// one. Items with the same (non-empty) terms are alike and joined first; then distinct term
/// sets are compared only when they share a term held by at most [`MAX_POSTINGS`] of them,
/// which bounds the work; their similarity still counts every shared term.
///
/// Errors (the caller's bugs) when there are more than [`MAX_ITEMS`] items or two items have
/// the same id (the order by id would then depend on the slice's order).
pub fn cluster(items: &[Item<'_>]) -> Result<Vec<Vec<usize>>, String> {
    if items.len() > MAX_ITEMS {
        return Err(format!(
            "{} items to cluster, more than the {MAX_ITEMS} allowed",
            items.len()
        ));
    }
    // Everything below works on ranks (positions in id order), never on slice positions, so
    // that the slice's order cannot change a float sum or a tie.
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_unstable_by(|&a, &b| items[a].id.cmp(items[b].id));
    if let Some(pair) = order.windows(2).find(|p| items[p[0]].id == items[p[1]].id) {
        return Err(format!(
            "two items to cluster have the id {:?}",
            items[pair[0]].id
        ));
    }
    let weights = Weights::new(items);

    // Term numbers in sorted term order, so that a vector sorted by number is sorted by term
    // and sums as `Weights::similarity` sums.
    let mut numbers: BTreeMap<&str, usize> = BTreeMap::new();
    for item in items {
        for term in item.terms {
            numbers.insert(term, 0);
        }
    }
    for (number, slot) in numbers.values_mut().enumerate() {
        *slot = number;
    }
    let vectors: Vec<Vector<usize>> = order
        .iter()
        .map(|&i| {
            let entries = distinct(items[i].terms)
                .into_iter()
                .filter_map(|t| numbers.get(t).map(|&n| (n, weights.idf(t))))
                .collect();
            Vector::new(entries)
        })
        .collect();

    let mut sets = UnionFind::new(items.len());
    // Items with the same terms (cosine 1) are joined at once, and only the first of them (by
    // rank) is compared with others: a question asked a thousand times is one posting per term.
    let mut first_of: HashMap<Vec<usize>, usize> = HashMap::new();
    let mut representatives = Vec::new();
    for (rank, vector) in vectors.iter().enumerate() {
        let key: Vec<usize> = vector.entries.iter().map(|&(term, _)| term).collect();
        if key.is_empty() {
            continue;
        }
        match first_of.entry(key) {
            std::collections::hash_map::Entry::Occupied(first) => sets.union(*first.get(), rank),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(rank);
                representatives.push(rank);
            }
        }
    }

    // Ranks are pushed in increasing order: every posting list is sorted.
    let mut postings: Vec<Vec<usize>> = vec![Vec::new(); numbers.len()];
    for &rank in &representatives {
        for &(term, _) in &vectors[rank].entries {
            postings[term].push(rank);
        }
    }

    // `checked[other] == rank` once the pair (rank, other) was looked at: pairs sharing
    // several terms are compared once.
    let mut checked = vec![usize::MAX; items.len()];
    for &rank in &representatives {
        let vector = &vectors[rank];
        for &(term, _) in &vector.entries {
            let posting = &postings[term];
            if posting.len() > MAX_POSTINGS {
                continue;
            }
            let after = posting.partition_point(|&other| other <= rank);
            for &other in &posting[after..] {
                if checked[other] == rank {
                    continue;
                }
                checked[other] = rank;
                if sets.find(rank) != sets.find(other) && cosine(vector, &vectors[other]) >= SIMILARITY {
                    sets.union(rank, other);
                }
            }
        }
    }

    // Walking ranks in order opens groups in the order of their first id and fills each in id
    // order.
    let mut group_of_root = vec![usize::MAX; items.len()];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (rank, &index) in order.iter().enumerate() {
        let root = sets.find(rank);
        if group_of_root[root] == usize::MAX {
            group_of_root[root] = groups.len();
            groups.push(Vec::new());
        }
        groups[group_of_root[root]].push(index);
    }
    Ok(groups)
}

/// TF-IDF weights over a set of items: idf(t) = ln(1 + N / df(t)), N the number of items and
/// df(t) the number of items having t; an item's vector is its terms' presence (0 or 1) times
/// their idf, L2-normalised.
#[derive(Clone, Debug)]
pub struct Weights {
    idf: HashMap<String, f64>,
    /// The idf of a term no item has, as if one had it: ln(1 + N).
    unknown: f64,
}

impl Weights {
    /// The weights of the terms of `items`.
    pub fn new(items: &[Item<'_>]) -> Weights {
        let mut df: HashMap<&str, usize> = HashMap::new();
        for item in items {
            for term in distinct(item.terms) {
                *df.entry(term).or_default() += 1;
            }
        }
        let n = items.len() as f64;
        let idf = df
            .into_iter()
            .map(|(term, df)| (term.to_owned(), (1.0 + n / df as f64).ln()))
            .collect();
        Weights {
            idf,
            unknown: (1.0 + n).ln(),
        }
    }

    /// Cosine similarity of two term lists under these weights (0.0 when either is empty or
    /// they share nothing). Terms unknown to the weights get the idf ln(1 + N), as if one item
    /// had them; with no items at all every weight, and so every similarity, is 0.0.
    pub fn similarity(&self, a: &[String], b: &[String]) -> f64 {
        cosine(&self.vector(a), &self.vector(b))
    }

    fn idf(&self, term: &str) -> f64 {
        self.idf.get(term).copied().unwrap_or(self.unknown)
    }

    fn vector<'t>(&self, terms: &'t [String]) -> Vector<&'t str> {
        Vector::new(distinct(terms).into_iter().map(|t| (t, self.idf(t))).collect())
    }
}

/// The index (into `group`, which holds indices into `items`) of the group's most central
/// item: the one with the greatest sum of similarities to the others; ties go to the smallest
/// id. Indices of `group` outside `items` are ignored; 0 when no index is valid.
pub fn central(items: &[Item<'_>], weights: &Weights, group: &[usize]) -> usize {
    let mut members: Vec<(usize, &Item<'_>)> = group
        .iter()
        .enumerate()
        .filter_map(|(at, &index)| items.get(index).map(|item| (at, item)))
        .collect();
    members.sort_by(|a, b| a.1.id.cmp(b.1.id).then(a.0.cmp(&b.0)));

    // With unit vectors, the sum of an item's similarities to the others is its dot product
    // with the sum of all the vectors, less its own: linear in the group, not quadratic.
    let units: Vec<Vec<(&str, f64)>> = members
        .iter()
        .map(|(_, item)| {
            let vector = weights.vector(item.terms);
            if vector.norm > 0.0 {
                vector
                    .entries
                    .iter()
                    .map(|&(t, w)| (t, w / vector.norm))
                    .collect()
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut total: BTreeMap<&str, f64> = BTreeMap::new();
    for unit in &units {
        for &(term, w) in unit {
            *total.entry(term).or_default() += w;
        }
    }

    let mut best: Option<(usize, f64)> = None;
    for ((at, _), unit) in members.iter().zip(&units) {
        let score: f64 = unit
            .iter()
            .map(|&(term, w)| w * (total.get(term).copied().unwrap_or(0.0) - w))
            .sum();
        // Members come in id order: a later one must do strictly better.
        match best {
            Some((_, best_score)) if score <= best_score + TIE_TOLERANCE => {}
            _ => best = Some((*at, score)),
        }
    }
    best.map_or(0, |(at, _)| at)
}

/// A TF-IDF vector: entries sorted by key, each key once.
struct Vector<K> {
    entries: Vec<(K, f64)>,
    norm: f64,
}

impl<K> Vector<K> {
    /// `entries` must be sorted by key without repeats; the norm is summed in that order, so
    /// that the same terms always give the same bits.
    fn new(entries: Vec<(K, f64)>) -> Vector<K> {
        let norm = entries.iter().map(|(_, w)| w * w).sum::<f64>().sqrt();
        Vector { entries, norm }
    }
}

/// The cosine of two vectors, by a merge of their sorted entries.
fn cosine<K: Ord>(a: &Vector<K>, b: &Vector<K>) -> f64 {
    if a.norm <= 0.0 || b.norm <= 0.0 {
        return 0.0;
    }
    let (mut i, mut j, mut dot) = (0, 0, 0.0);
    while let (Some((ka, wa)), Some((kb, wb))) = (a.entries.get(i), b.entries.get(j)) {
        match ka.cmp(kb) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                dot += wa * wb;
                i += 1;
                j += 1;
            }
        }
    }
    (dot / (a.norm * b.norm)).min(1.0)
}

/// The distinct terms of a list, sorted.
fn distinct(terms: &[String]) -> Vec<&str> {
    let mut distinct: Vec<&str> = terms.iter().map(String::as_str).collect();
    distinct.sort_unstable();
    distinct.dedup();
    distinct
}

/// Disjoint sets of `0..n`, with path halving and union by size.
struct UnionFind {
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n).collect(),
            size: vec![1; n],
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        let (big, small) = if self.size[a] >= self.size[b] {
            (a, b)
        } else {
            (b, a)
        };
        self.parent[small] = big;
        self.size[big] += self.size[small];
    }
}

/// The key terms of folded words.
fn terms_of_words(words: &[&str]) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in words {
        if terms.len() == MAX_TERMS {
            break;
        }
        if is_stop_word(word) {
            continue;
        }
        if word.chars().count() < 3 && !word.chars().any(char::is_numeric) {
            continue;
        }
        let term = stem(word);
        if !terms.contains(&term) {
            terms.push(term);
        }
    }
    terms
}

/// Whether a folded word is a stop word. A scan of a few hundred short words, for a few words
/// per sentence, costs less than building a set would.
fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.split(' ').any(|stop| stop == word)
}

/// Whether a trimmed sentence, with its folded words, asks something.
fn is_question(sentence: &str, words: &[&str]) -> bool {
    sentence.trim_end_matches(['!', '.']).ends_with('?')
        || words.first().is_some_and(|w| QUESTION_WORDS.contains(w))
        || REQUEST_PHRASES
            .iter()
            .any(|phrase| words.windows(phrase.len()).any(|w| w == *phrase))
}

/// The sentences of a text, untrimmed, each with its closing punctuation.
fn sentences(text: &str) -> Vec<&str> {
    let mut sentences = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let ends = match c {
            '\n' | '\r' => {
                sentences.push(&text[start..at]);
                start = at + c.len_utf8();
                continue;
            }
            '?' | '!' => !next.is_some_and(char::is_alphanumeric),
            '.' => next.is_none_or(char::is_whitespace) && !closes_abbreviation(&text[start..at]),
            _ => false,
        };
        if !ends {
            continue;
        }
        // "?!", "?." and the like close one sentence.
        let mut end = at + c.len_utf8();
        while let Some(&(at, c)) = chars.peek() {
            if !matches!(c, '?' | '!' | '.') {
                break;
            }
            end = at + c.len_utf8();
            chars.next();
        }
        sentences.push(&text[start..end]);
        start = end;
    }
    sentences.push(&text[start..]);
    sentences
}

/// Whether a '.' after `before` closes a dotted abbreviation such as "e.g." or "i.e.": the
/// last word of `before` is single letters joined by dots.
fn closes_abbreviation(before: &str) -> bool {
    let word = before.rsplit(char::is_whitespace).next().unwrap_or_default();
    let mut parts = 0;
    for part in word.split('.') {
        let mut chars = part.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_alphabetic() => parts += 1,
            _ => return false,
        }
    }
    parts >= 2
}

/// A trimmed sentence with its whitespace collapsed, cut to [`MAX_QUESTION_CHARS`].
fn clip(sentence: &str) -> String {
    let text = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= MAX_QUESTION_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_QUESTION_CHARS - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// The largest char boundary of `text` at most `max`.
fn floor_char_boundary(text: &str, max: usize) -> usize {
    if text.len() <= max {
        return text.len();
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::RngSeed;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    fn texts(questions: &[Question]) -> Vec<&str> {
        questions.iter().map(|q| q.text.as_str()).collect()
    }

    // --- Questions ---------------------------------------------------------------------------

    #[test]
    fn a_greeting_and_thanks_around_a_question_give_the_question() {
        let found = questions("Hi! How do I reset my password? Thanks.");
        assert_eq!(
            found,
            vec![Question {
                text: "How do I reset my password?".to_owned(),
                terms: strings(&["reset", "password"]),
            }]
        );
    }

    #[test]
    fn chat_without_questions_gives_none() {
        assert!(questions("Hi! Thanks a lot, that was it. Have a good one").is_empty());
        assert!(questions("Thanks!!\nGreat.\n\n").is_empty());
        assert!(questions("The docs look good. We deployed yesterday.").is_empty());
        assert!(questions("").is_empty());
        // A question of filler words only has no key term.
        assert!(questions("Can you help me please?").is_empty());
    }

    #[test]
    fn questions_without_a_question_mark_are_found_by_their_first_word() {
        let found = questions("hello\nhow do I embed a video in a page\nthanks");
        assert_eq!(texts(&found), ["how do I embed a video in a page"]);
        assert_eq!(found[0].terms, strings(&["embed", "video", "page"]));
        let found = questions("Is the API rate limited. Does it support webhooks");
        assert_eq!(
            texts(&found),
            ["Is the API rate limited.", "Does it support webhooks"]
        );
    }

    #[test]
    fn request_sentences_are_questions() {
        let found = questions(
            "I need to configure SSO for my team. My dashboard is not working. \
             I'm trying to import a Notion export. Unable to connect the GitHub repository! \
             Getting an error 500 on publish",
        );
        assert_eq!(
            texts(&found),
            [
                "I need to configure SSO for my team.",
                "My dashboard is not working.",
                "I'm trying to import a Notion export.",
                "Unable to connect the GitHub repository!",
                "Getting an error 500 on publish",
            ]
        );
        assert_eq!(found[0].terms, strings(&["configur", "sso", "team"]));
        assert_eq!(found[1].terms, strings(&["dashboard"]));
        assert_eq!(found[4].terms, strings(&["error", "500", "publish"]));
        let found = questions("Is there a way to hide the sidebar. Looking for the changelog");
        assert_eq!(found.len(), 2);
        assert!(questions("The sidebar is hidden. We like it.").is_empty());
    }

    #[test]
    fn dots_in_numbers_hosts_and_abbreviations_do_not_end_a_sentence() {
        let found = questions("What changed in version 2.5 of docs.example.com since e.g. last week? Thanks");
        assert_eq!(
            texts(&found),
            ["What changed in version 2.5 of docs.example.com since e.g. last week?"]
        );
        let found = questions("See https://docs.example.com/search?q=sso for details. Is SSO supported?");
        assert_eq!(texts(&found), ["Is SSO supported?"]);
        assert_eq!(found[0].terms, strings(&["sso", "support"]));
        let found = questions("It broke.Why is the build failing?! ok");
        assert_eq!(texts(&found), ["It broke.Why is the build failing?!"]);
    }

    #[test]
    fn whitespace_is_collapsed() {
        let found = questions("  How   can I\tchange the\u{a0}logo ?  ");
        assert_eq!(texts(&found), ["How can I change the logo ?"]);
    }

    #[test]
    fn the_same_terms_are_the_same_question() {
        let found = questions(
            "How do I reset my password? How can I reset my password? Password reset? \
             Where is the reset link?",
        );
        assert_eq!(
            texts(&found),
            ["How do I reset my password?", "Where is the reset link?"]
        );
    }

    #[test]
    fn at_most_five_questions_are_taken() {
        let found = questions(
            "What is alpha? What is beta? What is gamma? What is delta? What is epsilon? \
             What is zeta?",
        );
        assert_eq!(found.len(), MAX_QUESTIONS_PER_MESSAGE);
        assert_eq!(found[4].text, "What is epsilon?");
    }

    #[test]
    fn a_long_question_is_cut() {
        let sentence = format!("How do I configure {}?", "the search index ".repeat(24));
        assert!(sentence.chars().count() > 400);
        let found = questions(&sentence);
        assert_eq!(found.len(), 1);
        let text = &found[0].text;
        assert!(text.chars().count() <= MAX_QUESTION_CHARS);
        assert!(text.chars().count() >= MAX_QUESTION_CHARS - 2);
        assert!(text.ends_with('…'));
        assert!(text.starts_with("How do I configure the search index the"));
        // Cut inside a multibyte text, at a char boundary.
        let sentence = format!("Why is the café {}?", "é".repeat(500));
        let found = questions(&sentence);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text.chars().count(), MAX_QUESTION_CHARS);
    }

    #[test]
    fn pasted_logs_and_huge_texts_are_harmless() {
        let log = format!("How {}?", "frame at line 12 ".repeat(200));
        assert!(log.len() > MAX_SENTENCE_BYTES);
        assert!(questions(&log).is_empty());

        let many = "How do I publish my space? ".repeat(4_000);
        assert!(many.len() > 100 * 1024);
        assert_eq!(questions(&many).len(), 1);
        let accents = "é".repeat(60_000);
        assert!(questions(&accents).is_empty());
        let numbered: String = (0..6_000).map(|n| format!("Is item{n} broken? ")).collect();
        assert!(numbered.len() > 100 * 1024);
        assert_eq!(questions(&numbered).len(), MAX_QUESTIONS_PER_MESSAGE);
        let dots = ".?!\n".repeat(30_000);
        assert!(questions(&dots).is_empty());
    }

    // --- Terms and stems ---------------------------------------------------------------------

    #[test]
    fn stop_words_are_sorted_folded_and_unique() {
        let words: Vec<&str> = STOP_WORDS.split(' ').collect();
        assert!(words.windows(2).all(|w| w[0] < w[1]));
        assert!(words.iter().all(|w| !w.is_empty() && index_text(w) == *w));
        assert!(words.len() >= 200);
        assert!(is_stop_word("thanks") && !is_stop_word("thank you") && !is_stop_word("password"));
    }

    #[test]
    fn key_terms_drop_filler_and_short_words_and_keep_digits() {
        assert_eq!(
            key_terms("Hello, I'd like to know how I can use the API with OAuth 2 and v3 please"),
            strings(&["api", "oauth", "2", "v3"])
        );
        assert_eq!(
            key_terms("Crée une PAGE privée"),
            strings(&["cree", "une", "page", "prive"])
        );
        assert_eq!(
            key_terms("passwords password PASSWORD passworded"),
            strings(&["password"])
        );
        let many = key_terms("one two three four five six seven eight nine ten eleven");
        assert_eq!(many.len(), MAX_TERMS);
        assert_eq!(many[0], "two");
        assert!(key_terms("").is_empty());
    }

    #[test]
    fn inflections_meet_on_one_stem() {
        for word in ["passwords", "password", "passworded"] {
            assert_eq!(stem(word), "password", "{word}");
        }
        for word in [
            "configuring",
            "configured",
            "configuration",
            "configurations",
            "configure",
            "configures",
        ] {
            assert_eq!(stem(word), "configur", "{word}");
        }
        assert_eq!(stem("policies"), "policy");
        assert_eq!(stem("policy"), "policy");
        assert_eq!(stem("copied"), "copy");
        assert_eq!(stem("settings"), stem("setting"));
        assert_eq!(stem("images"), stem("image"));
        assert_eq!(stem("manually"), "manual");
    }

    #[test]
    fn stems_stay_conservative() {
        // Too short once stripped, or not a suffix there.
        for word in ["uses", "need", "string", "file", "page", "api", "sso", "only"] {
            assert_eq!(stem(word), word);
        }
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("statuses"), "status");
        assert_eq!(stem("access"), "access");
        assert_eq!(stem("analysis"), "analysis");
        assert_eq!(stem("supply"), "supply");
        assert_eq!(stem("v2s"), "v2s");
        assert_eq!(stem("2fa"), "2fa");
        assert_eq!(stem(""), "");
    }

    #[test]
    fn coverage_matches_terms_as_word_prefixes() {
        let terms = strings(&["configur", "password"]);
        assert_eq!(coverage(&terms, "Configuring the Passwords policy"), 1.0);
        assert_eq!(coverage(&terms, "Configuration only"), 0.5);
        assert_eq!(coverage(&terms, "Reconfigure; pass-word"), 0.0);
        assert_eq!(coverage(&terms, ""), 0.0);
        assert_eq!(coverage(&[], "anything at all"), 0.0);
        let terms = key_terms("How do I reset my password?");
        assert_eq!(coverage(&terms, "## Resetting a password\nOpen settings."), 1.0);
        assert_eq!(coverage(&strings(&["cree"]), "Créer une page"), 1.0);
    }

    // --- Clustering --------------------------------------------------------------------------

    /// Items with ids `q00`, `q01`, … from texts, with their key terms.
    fn issues(texts: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
        let ids = (0..texts.len()).map(|i| format!("q{i:02}")).collect();
        let terms = texts.iter().map(|t| key_terms(t)).collect();
        (ids, terms)
    }

    fn as_items<'a>(ids: &'a [String], terms: &'a [Vec<String>]) -> Vec<Item<'a>> {
        ids.iter()
            .zip(terms)
            .map(|(id, terms)| Item { id, terms })
            .collect()
    }

    fn id_groups(items: &[Item<'_>], groups: &[Vec<usize>]) -> Vec<Vec<String>> {
        groups
            .iter()
            .map(|g| g.iter().map(|&i| items[i].id.to_owned()).collect())
            .collect()
    }

    const TOPICS: &[&str] = &[
        "How do I set up DNS for a custom domain?",
        "How do I reset my password?",
        "How do I export analytics to CSV?",
        "Custom domain DNS records not working",
        "I forgot my password, how can I reset it?",
        "Which DNS records does a custom domain need?",
        "Password reset email never arrives",
        "Custom domain DNS not resolving?",
        "Can I change the sidebar theme colors?",
        "Where is the password reset link?",
        "Is the custom domain DNS propagated?",
        "Reset password for my account",
    ];

    #[test]
    fn two_topics_and_two_strays_make_four_groups() {
        let (ids, terms) = issues(TOPICS);
        let items = as_items(&ids, &terms);
        let groups = cluster(&items).unwrap();
        assert_eq!(
            id_groups(&items, &groups),
            vec![
                strings(&["q00", "q03", "q05", "q07", "q10"]),
                strings(&["q01", "q04", "q06", "q09", "q11"]),
                strings(&["q02"]),
                strings(&["q08"]),
            ]
        );
    }

    #[test]
    fn items_without_terms_are_alone() {
        let ids = strings(&["b", "a", "c", "d"]);
        let terms = vec![
            Vec::new(),
            Vec::new(),
            strings(&["webhook"]),
            strings(&["webhook"]),
        ];
        let items = as_items(&ids, &terms);
        assert_eq!(cluster(&items).unwrap(), vec![vec![1], vec![0], vec![2, 3]]);
        assert_eq!(cluster(&[]).unwrap(), Vec::<Vec<usize>>::new());
    }

    #[test]
    fn a_term_in_too_many_items_does_not_make_candidates_alone() {
        // The same question asked many times is one group, however often.
        let count = 3 * MAX_POSTINGS;
        let ids: Vec<String> = (0..count).map(|i| format!("i{i:04}")).collect();
        let terms = vec![strings(&["common"]); count];
        let items = as_items(&ids, &terms);
        assert_eq!(cluster(&items).unwrap().len(), 1);
        // A rare shared term still makes the pair candidates, and the common term still counts
        // in their similarity.
        let count = MAX_POSTINGS + 10;
        let mut ids: Vec<String> = (0..count).map(|i| format!("i{i:04}")).collect();
        let mut terms: Vec<Vec<String>> = (0..count)
            .map(|i| vec!["common".to_owned(), format!("own{i}")])
            .collect();
        ids.extend(strings(&["x", "y"]));
        terms.push(strings(&["common", "rare", "xonly"]));
        terms.push(strings(&["common", "rare", "yonly"]));
        let items = as_items(&ids, &terms);
        let groups = cluster(&items).unwrap();
        assert_eq!(groups.len(), count + 1);
        assert_eq!(groups.last().unwrap(), &vec![count, count + 1]);
    }

    #[test]
    fn too_many_or_repeated_items_are_refused() {
        let ids: Vec<String> = (0..=MAX_ITEMS).map(|i| i.to_string()).collect();
        let items: Vec<Item<'_>> = ids.iter().map(|id| Item { id, terms: &[] }).collect();
        assert!(cluster(&items).is_err());
        assert!(cluster(&items[..MAX_ITEMS]).is_ok());
        let terms = strings(&["sso"]);
        let twice = [
            Item {
                id: "a",
                terms: &terms,
            },
            Item { id: "a", terms: &[] },
        ];
        assert!(cluster(&twice).is_err());
    }

    #[test]
    fn similarity_is_a_cosine_of_idf_weights() {
        let (ids, terms) = issues(&["reset password", "reset password email", "email"]);
        let items = as_items(&ids, &terms);
        let weights = Weights::new(&items);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(weights.similarity(&terms[0], &terms[0]), 1.0));
        assert!(close(
            weights.similarity(&strings(&["password", "reset", "reset"]), &terms[0]),
            1.0
        ));
        assert_eq!(weights.similarity(&terms[0], &terms[2]), 0.0);
        assert_eq!(weights.similarity(&[], &terms[0]), 0.0);
        // idf(reset) = idf(password) = ln(1 + 3/2), idf(email) = ln(1 + 3/2) too.
        let w = 2.5f64.ln();
        let expected = (2.0 * w * w) / ((2.0 * w * w).sqrt() * (3.0 * w * w).sqrt());
        assert!(close(weights.similarity(&terms[0], &terms[1]), expected));
        // An unknown term weighs ln(1 + N).
        let unknown = strings(&["reset", "zzz"]);
        let u = 4.0f64.ln();
        let expected = (w * w) / ((w * w + u * u).sqrt() * (2.0 * w * w).sqrt());
        assert!(close(weights.similarity(&unknown, &terms[0]), expected));
        assert_eq!(Weights::new(&[]).similarity(&terms[0], &terms[0]), 0.0);
    }

    #[test]
    fn central_is_the_most_similar_to_the_others() {
        let ids = strings(&["a", "b", "c", "d"]);
        let terms = vec![
            strings(&["password", "reset"]),
            strings(&["password", "reset", "email"]),
            strings(&["password", "reset", "link"]),
            strings(&["email"]),
        ];
        let items = as_items(&ids, &terms);
        let weights = Weights::new(&items);
        let group = [2, 0, 1];
        assert_eq!(central(&items, &weights, &group), 1);
        // The same as summing every pair.
        let sums: Vec<f64> = group
            .iter()
            .map(|&i| {
                group
                    .iter()
                    .filter(|&&j| j != i)
                    .map(|&j| weights.similarity(&terms[i], &terms[j]))
                    .sum()
            })
            .collect();
        assert!(sums[1] > sums[0] && sums[1] > sums[2]);

        // Ties go to the smallest id, whatever the group's order.
        let ids = strings(&["y", "x", "z"]);
        let terms = vec![strings(&["sso"]), strings(&["sso"]), strings(&["sso"])];
        let items = as_items(&ids, &terms);
        let weights = Weights::new(&items);
        assert_eq!(central(&items, &weights, &[0, 1, 2]), 1);
        assert_eq!(central(&items, &weights, &[2, 0, 1]), 2);
        assert_eq!(central(&items, &weights, &[0]), 0);
        assert_eq!(central(&items, &weights, &[]), 0);
    }

    // --- Properties --------------------------------------------------------------------------

    /// The number of cases: `default`, or `PROPTEST_CASES` when set (for longer runs by hand).
    fn cases(default: u32) -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|cases| cases.parse().ok())
            .unwrap_or(default)
    }

    const VOCABULARY: &[&str] = &["api", "domain", "dns", "export", "password", "reset", "sso"];

    /// Items as (id, terms), ids unique.
    fn owned_items() -> impl Strategy<Value = Vec<(String, Vec<String>)>> {
        proptest::collection::vec(
            proptest::collection::vec(proptest::sample::select(VOCABULARY), 0..4),
            0..40,
        )
        .prop_map(|lists| {
            lists
                .into_iter()
                .enumerate()
                .map(|(i, terms)| (format!("i{i}"), strings(&terms)))
                .collect()
        })
    }

    fn borrowed(owned: &[(String, Vec<String>)]) -> Vec<Item<'_>> {
        owned.iter().map(|(id, terms)| Item { id, terms }).collect()
    }

    /// The components of the full similarity graph, compared pair by pair, as sets of ids.
    fn brute_force(items: &[Item<'_>]) -> Vec<Vec<String>> {
        let weights = Weights::new(items);
        let mut sets = UnionFind::new(items.len());
        for (i, a) in items.iter().enumerate() {
            for (j, b) in items.iter().enumerate().skip(i + 1) {
                if weights.similarity(a.terms, b.terms) >= SIMILARITY {
                    sets.union(i, j);
                }
            }
        }
        let mut groups: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for (i, item) in items.iter().enumerate() {
            groups.entry(sets.find(i)).or_default().push(item.id.to_owned());
        }
        let mut groups: Vec<Vec<String>> = groups
            .into_values()
            .map(|mut g| {
                g.sort();
                g
            })
            .collect();
        groups.sort();
        groups
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: cases(64),
            rng_seed: RngSeed::Fixed(0x0051_5549_5245),
            ..ProptestConfig::default()
        })]

        /// The groups depend on the set of items only, not on their order in the slice.
        #[test]
        fn clustering_ignores_the_order_of_items(
            (owned, shuffled) in owned_items()
                .prop_flat_map(|owned| (Just(owned.clone()), Just(owned).prop_shuffle()))
        ) {
            let items = borrowed(&owned);
            let shuffled_items = borrowed(&shuffled);
            let groups = cluster(&items).unwrap();
            let shuffled_groups = cluster(&shuffled_items).unwrap();
            prop_assert_eq!(id_groups(&items, &groups), id_groups(&shuffled_items, &shuffled_groups));
        }

        /// With no term over `MAX_POSTINGS`, the groups are the components of the whole graph,
        /// each item in exactly one, in the documented order.
        #[test]
        fn clustering_finds_the_components(owned in owned_items()) {
            let items = borrowed(&owned);
            let groups = cluster(&items).unwrap();
            let mut seen: Vec<usize> = groups.iter().flatten().copied().collect();
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..items.len()).collect::<Vec<_>>());
            let ids = id_groups(&items, &groups);
            for group in &ids {
                prop_assert!(group.windows(2).all(|w| w[0] < w[1]));
            }
            prop_assert!(ids.windows(2).all(|w| w[0][0] < w[1][0]));
            let mut sorted = ids.clone();
            sorted.sort();
            prop_assert_eq!(sorted, brute_force(&items));
        }

        /// Any text: no panic, and the limits hold.
        #[test]
        fn questions_of_any_text_keep_the_limits(text in "(?s).{0,400}") {
            let found = questions(&text);
            prop_assert!(found.len() <= MAX_QUESTIONS_PER_MESSAGE);
            for question in &found {
                prop_assert!(question.text.chars().count() <= MAX_QUESTION_CHARS);
                prop_assert!(!question.terms.is_empty() && question.terms.len() <= MAX_TERMS);
            }
        }
    }
}
