//! Deterministic pseudo-random numbers and markdown: the same seed gives the same dataset, so
//! two runs measure the same work.

/// SplitMix64: small, fast and good enough to pick words and pages.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            items.get(self.below(items.len()))
        }
    }
}

/// Everyday words: most of the text.
const COMMON: &[&str] = &[
    "the", "a", "of", "to", "and", "in", "is", "for", "on", "with", "that", "this", "it", "as", "be", "by",
    "are", "you", "can", "from", "or", "when", "each", "which", "your", "one", "all", "not", "use", "new",
    "page", "team", "guide", "first", "then", "before", "after", "every", "other", "more", "most", "some",
    "time", "way", "work", "step", "part", "set", "keep", "make", "run", "read", "write", "open", "close",
    "change", "check", "start", "stop", "find", "show", "give", "take", "move", "add", "remove", "update",
    "value", "name", "list", "order", "group", "space", "user", "member", "owner", "role", "access", "link",
    "file", "folder", "section", "note", "example", "result", "reason", "detail", "summary", "question",
    "answer", "simple", "clear", "short", "long", "early", "later", "usual", "common", "small", "large",
];

/// Technical terms: each appears in a small share of sections, so a search for one of them has
/// a realistic number of hits.
pub const TERMS: &[&str] = &[
    "replication",
    "latency",
    "throughput",
    "partition",
    "checkpoint",
    "snapshot",
    "migration",
    "rollback",
    "certificate",
    "webhook",
    "throttling",
    "sharding",
    "indexing",
    "compaction",
    "heartbeat",
    "failover",
    "quorum",
    "tokenizer",
    "serializer",
    "middleware",
    "scheduler",
    "dispatcher",
    "allocator",
    "profiler",
    "debugger",
    "compiler",
    "linker",
    "resolver",
    "validator",
    "encoder",
    "decoder",
    "sanitizer",
    "aggregator",
    "collector",
    "exporter",
    "importer",
    "connector",
    "adapter",
    "gateway",
    "balancer",
];

/// The words of the search families, chosen among [`TERMS`] (see `Dataset::search`).
pub const SEARCH_ONE_WORD: &str = "replication";
pub const SEARCH_TWO_WORDS: &str = "replication latency";
pub const SEARCH_PREFIX: &str = "replic";

fn word(rng: &mut Rng) -> &'static str {
    // One word in 25 is a technical term.
    if rng.below(25) == 0 {
        TERMS[rng.below(TERMS.len())]
    } else {
        COMMON[rng.below(COMMON.len())]
    }
}

fn sentence(rng: &mut Rng, out: &mut String) {
    let words = 8 + rng.below(10);
    for i in 0..words {
        let w = word(rng);
        if i == 0 {
            let mut chars = w.chars();
            if let Some(c) = chars.next() {
                out.extend(c.to_uppercase());
                out.push_str(chars.as_str());
            }
        } else {
            out.push(' ');
            out.push_str(w);
        }
    }
    out.push_str(". ");
}

/// A title of two to four words.
pub fn title(rng: &mut Rng, number: usize) -> String {
    let mut t = String::new();
    let words = 2 + rng.below(3);
    for i in 0..words {
        let w = if i == 0 {
            TERMS[rng.below(TERMS.len())]
        } else {
            COMMON[rng.below(COMMON.len())]
        };
        if i > 0 {
            t.push(' ');
        }
        let mut chars = w.chars();
        if let Some(c) = chars.next() {
            t.extend(c.to_uppercase());
            t.push_str(chars.as_str());
        }
    }
    t.push_str(&format!(" {number}"));
    t
}

/// A page of about `bytes` bytes of markdown: a heading, an introduction and three sections
/// (each a heading, paragraphs and sometimes a list or code block), with the given links
/// (markdown targets) spread through the text.
pub fn page_markdown(rng: &mut Rng, heading: &str, links: &[(String, String)], bytes: usize) -> String {
    let mut md = format!("# {heading}\n\n");
    let section_budget = bytes / 4;
    let mut link_iter = links.iter();
    let mut paragraph = |rng: &mut Rng, md: &mut String, budget: usize| {
        let start = md.len();
        while md.len() - start < budget {
            sentence(rng, md);
        }
        if let Some((text, target)) = link_iter.next() {
            md.push_str(&format!("See [{text}]({target})."));
        }
        md.push_str("\n\n");
    };
    paragraph(rng, &mut md, section_budget.saturating_sub(40));
    for s in 0..3 {
        md.push_str(&format!("## {}\n\n", title(rng, s + 1)));
        paragraph(rng, &mut md, section_budget / 2);
        match rng.below(3) {
            0 => {
                for _ in 0..3 {
                    md.push_str("* ");
                    sentence(rng, &mut md);
                    md.push('\n');
                }
                md.push('\n');
            }
            1 => {
                md.push_str("```\n");
                for _ in 0..3 {
                    md.push_str(&format!("{} = {}\n", word(rng), rng.below(1000)));
                }
                md.push_str("```\n\n");
            }
            _ => {}
        }
        paragraph(rng, &mut md, section_budget / 3);
    }
    md
}

/// A one- or two-sentence comment.
pub fn comment(rng: &mut Rng) -> String {
    let mut s = String::new();
    for _ in 0..1 + rng.below(2) {
        sentence(rng, &mut s);
    }
    s.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_deterministic_and_about_the_asked_size() {
        let links = vec![("parent".to_string(), "/pages/abc".to_string())];
        let a = page_markdown(&mut Rng::new(7), "Title", &links, 2048);
        let b = page_markdown(&mut Rng::new(7), "Title", &links, 2048);
        assert_eq!(a, b);
        assert!((1500..3000).contains(&a.len()), "{}", a.len());
        assert!(a.contains("(/pages/abc)"));
        assert_eq!(a.matches("\n## ").count(), 3);
    }

    #[test]
    fn below_stays_in_range() {
        let mut rng = Rng::new(1);
        assert!((0..1000).all(|_| rng.below(7) < 7));
        assert_eq!(rng.below(0), 0);
    }
}
