//! Diffs of block sequences, with a bounded cost.
//!
//! Blocks are compared by [`Fingerprint`]: a hash of their content without keys, computed once
//! per block, so that comparing two blocks costs the same whatever their size (a table block can
//! hold [`crate::limits::MAX_TABLE_CELLS`] cells). The common subsequence is Myers' O((N + M) · D)
//! algorithm, which is fast when the sequences are similar; past [`MAX_DIFF_EDITS`] edits the
//! remaining middle is reported as entirely different, which keeps a diff of two unrelated
//! documents at the limits cheap, and deterministic (no time budget), at the price of a coarser
//! answer for them.

use std::cmp::Ordering;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::document::{Fragment, JsonMap, Leaf, Mark, Node};

/// Insertions plus deletions beyond which the middle of two sequences (after their common prefix
/// and suffix) is treated as entirely different.
pub const MAX_DIFF_EDITS: usize = 1_000;

/// A block's content without keys, hashed: equal fingerprints mean equal content (SHA-256).
pub type Fingerprint = [u8; 32];

/// The fingerprint of each block.
pub fn fingerprints(nodes: &[Node]) -> Vec<Fingerprint> {
    nodes
        .iter()
        .map(|node| {
            let mut hasher = Sha256::new();
            hash_node(node, &mut hasher);
            hasher.finalize().into()
        })
        .collect()
}

// Every field is written with a tag and a length or terminator, so that different contents
// cannot write the same bytes. Keys are left out; map entries go in key order, because
// documents compare maps regardless of order. Recursion follows the document's nesting, which
// `crate::limits` bounds.

fn hash_node(node: &Node, h: &mut Sha256) {
    h.update([b'N', node.object as u8]);
    hash_opt_str(node.node_type.as_deref(), h);
    h.update([node.is_void.map_or(0, |v| 1 + u8::from(v))]);
    hash_opt_map(node.data.as_ref(), h);
    match &node.nodes {
        None => h.update([0]),
        Some(children) => {
            h.update([1]);
            hash_len(children.len(), h);
            children.iter().for_each(|child| hash_node(child, h));
        }
    }
    match &node.leaves {
        None => h.update([0]),
        Some(leaves) => {
            h.update([1]);
            hash_len(leaves.len(), h);
            leaves.iter().for_each(|leaf| hash_leaf(leaf, h));
        }
    }
    match &node.fragments {
        None => h.update([0]),
        Some(fragments) => {
            h.update([1]);
            hash_len(fragments.len(), h);
            fragments.iter().for_each(|fragment| hash_fragment(fragment, h));
        }
    }
    hash_map(&node.extra, h);
}

fn hash_leaf(leaf: &Leaf, h: &mut Sha256) {
    hash_str(&leaf.text, h);
    hash_len(leaf.marks.len(), h);
    leaf.marks.iter().for_each(|mark| hash_mark(mark, h));
    hash_map(&leaf.extra, h);
}

fn hash_mark(mark: &Mark, h: &mut Sha256) {
    hash_str(&mark.mark_type, h);
    hash_opt_map(mark.data.as_ref(), h);
    hash_map(&mark.extra, h);
}

fn hash_fragment(fragment: &Fragment, h: &mut Sha256) {
    hash_opt_str(fragment.fragment.as_deref(), h);
    hash_opt_str(fragment.fragment_type.as_deref(), h);
    hash_len(fragment.nodes.len(), h);
    fragment.nodes.iter().for_each(|node| hash_node(node, h));
    hash_map(&fragment.extra, h);
}

fn hash_len(len: usize, h: &mut Sha256) {
    h.update((len as u64).to_le_bytes());
}

fn hash_str(text: &str, h: &mut Sha256) {
    hash_len(text.len(), h);
    h.update(text.as_bytes());
}

fn hash_opt_str(text: Option<&str>, h: &mut Sha256) {
    match text {
        None => h.update([0]),
        Some(text) => {
            h.update([1]);
            hash_str(text, h);
        }
    }
}

fn hash_opt_map(map: Option<&JsonMap>, h: &mut Sha256) {
    match map {
        None => h.update([0]),
        Some(map) => {
            h.update([1]);
            hash_map(map, h);
        }
    }
}

fn hash_map(map: &JsonMap, h: &mut Sha256) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    hash_len(entries.len(), h);
    for (key, value) in entries {
        hash_str(key, h);
        hash_value(value, h);
    }
}

fn hash_value(value: &Value, h: &mut Sha256) {
    match value {
        Value::Null => h.update([b'n']),
        Value::Bool(b) => h.update([b'b', u8::from(*b)]),
        Value::Number(n) => {
            h.update([b'#']);
            hash_str(&n.to_string(), h);
        }
        Value::String(s) => {
            h.update([b's']);
            hash_str(s, h);
        }
        Value::Array(items) => {
            h.update([b'a']);
            hash_len(items.len(), h);
            items.iter().for_each(|item| hash_value(item, h));
        }
        Value::Object(map) => {
            h.update([b'o']);
            hash_map(map, h);
        }
    }
}

/// Index pairs of a common subsequence of `a` and `b`, in order: the longest one when the
/// sequences differ by at most [`MAX_DIFF_EDITS`] insertions and deletions after their common
/// prefix and suffix, else only that prefix and suffix.
pub fn common_pairs<T: PartialEq>(a: &[T], b: &[T]) -> Vec<(usize, usize)> {
    common_pairs_within(a, b, MAX_DIFF_EDITS)
}

fn common_pairs_within<T: PartialEq>(a: &[T], b: &[T], max_edits: usize) -> Vec<(usize, usize)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let room = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut pairs: Vec<(usize, usize)> = (0..prefix).map(|i| (i, i)).collect();
    if let Some(middle) = myers(a_mid, b_mid, max_edits) {
        pairs.extend(middle.into_iter().map(|(i, j)| (prefix + i, prefix + j)));
    }
    pairs.extend((0..suffix).map(|k| (a.len() - suffix + k, b.len() - suffix + k)));
    pairs
}

/// Myers' greedy algorithm: the pairs of a longest common subsequence, or None when the
/// shortest edit script is longer than `max_edits`. Keeps the frontier of each round to walk
/// the path back: O((N + M) · D) time, O(D²) memory.
fn myers<T: PartialEq>(a: &[T], b: &[T], max_edits: usize) -> Option<Vec<(usize, usize)>> {
    let (n, m) = (a.len(), b.len());
    let limit = (n + m).min(max_edits);
    // Frontier: the furthest x reached on each diagonal k = x - y, stored at k + offset.
    let offset = limit + 1;
    let mut frontier = vec![0usize; 2 * limit + 3];
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    for d in 0..=limit {
        rounds.push(frontier.clone());
        for step in 0..=d {
            let k = offset + 2 * step - d; // diagonals -d, -d + 2, ..., d
            let x = if step == 0 || (step != d && frontier[k - 1] < frontier[k + 1]) {
                frontier[k + 1]
            } else {
                frontier[k - 1] + 1
            };
            let mut x = x;
            // y = x - (k - offset), never negative on a reachable diagonal.
            let mut y = (x + offset).checked_sub(k)?;
            while x < n && y < m && a[x] == b[y] {
                x += 1;
                y += 1;
            }
            frontier[k] = x;
            if x >= n && y >= m {
                return Some(walk_back(&rounds, offset, d, k, n, m));
            }
        }
    }
    None
}

/// The matched pairs along the path found by [`myers`], from its end back to the start.
fn walk_back(
    rounds: &[Vec<usize>],
    offset: usize,
    d_end: usize,
    k_end: usize,
    n: usize,
    m: usize,
) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    let (mut x, mut y, mut k) = (n, m, k_end);
    for d in (0..=d_end).rev() {
        // The frontier before round d (round 0 starts from (0, 0) on diagonal 0).
        let before = &rounds[d];
        let (prev_x, prev_y, prev_k) = if d == 0 {
            (0, 0, offset)
        } else {
            let down = k == offset - d || (k != offset + d && before[k - 1] < before[k + 1]);
            let prev_k = if down { k + 1 } else { k - 1 };
            let prev_x = before[prev_k];
            (prev_x, prev_x + offset - prev_k, prev_k)
        };
        // The snake of round d: matches from the point after the edit to (x, y).
        let (start_x, start_y) = match (d, prev_k.cmp(&k)) {
            (0, _) => (0, 0),
            (_, Ordering::Greater) => (prev_x, prev_y + 1),
            _ => (prev_x + 1, prev_y),
        };
        while x > start_x && y > start_y {
            x -= 1;
            y -= 1;
            pairs.push((x, y));
        }
        (x, y, k) = (prev_x, prev_y, prev_k);
    }
    pairs.reverse();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The length of a longest common subsequence, by the textbook table.
    fn lcs_len(a: &[u8], b: &[u8]) -> usize {
        let mut table = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                table[i][j] = if a[i] == b[j] {
                    table[i + 1][j + 1] + 1
                } else {
                    table[i + 1][j].max(table[i][j + 1])
                };
            }
        }
        table[0][0]
    }

    fn check(a: &[u8], b: &[u8]) {
        let pairs = common_pairs(a, b);
        assert_eq!(pairs.len(), lcs_len(a, b), "{a:?} {b:?} {pairs:?}");
        for window in pairs.windows(2) {
            assert!(
                window[0].0 < window[1].0 && window[0].1 < window[1].1,
                "{pairs:?}"
            );
        }
        for &(i, j) in &pairs {
            assert_eq!(a[i], b[j]);
        }
    }

    #[test]
    fn finds_a_longest_common_subsequence() {
        check(&[1, 2, 3, 4], &[2, 4, 5]);
        check(b"ABCABBA", b"CBABAC");
        check(b"", b"abc");
        check(b"abc", b"");
        check(b"abc", b"abc");
        check(b"xaxbxc", b"abc");
        // Every pair of short sequences over a small alphabet.
        let words: Vec<Vec<u8>> = (0..3u32.pow(5))
            .map(|mut n| {
                (0..(n % 6))
                    .map(|_| {
                        let c = b"abc"[(n % 3) as usize];
                        n /= 3;
                        c
                    })
                    .collect()
            })
            .collect();
        for a in &words {
            for b in words.iter().step_by(7) {
                check(a, b);
            }
        }
    }

    #[test]
    fn too_many_edits_keep_only_the_common_ends() {
        let a: Vec<u32> = (0..10).chain(100..200).chain(0..10).collect();
        let b: Vec<u32> = (0..10).chain(300..400).chain(0..10).collect();
        let pairs = common_pairs_within(&a, &b, 50);
        assert_eq!(pairs.len(), 20);
        assert_eq!(pairs[9], (9, 9));
        assert_eq!(pairs[10], (110, 110));
    }

    #[test]
    fn fingerprints_ignore_keys_and_map_order() {
        let mut a = Node::paragraph(vec![Node::plain_text("x")]);
        a.key = Some("k1".into());
        let mut b = a.clone();
        b.key = Some("k2".into());
        assert_eq!(fingerprints(&[a.clone()]), fingerprints(&[b.clone()]));
        let mut data = JsonMap::new();
        data.insert("a".into(), Value::from(1));
        data.insert("b".into(), Value::from(2));
        a.data = Some(data);
        let mut reversed = JsonMap::new();
        reversed.insert("b".into(), Value::from(2));
        reversed.insert("a".into(), Value::from(1));
        b.data = Some(reversed);
        assert_eq!(a.data, b.data, "maps compare regardless of order");
        assert_eq!(fingerprints(&[a.clone()]), fingerprints(&[b.clone()]));
        b.nodes = Some(vec![Node::plain_text("y")]);
        assert_ne!(fingerprints(&[a]), fingerprints(&[b]));
    }
}
