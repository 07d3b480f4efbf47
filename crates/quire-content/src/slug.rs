//! Slugs for page paths and heading anchors.

/// Longest slug produced, in bytes (slugs are ASCII).
pub const MAX_SLUG_LEN: usize = 100;

/// Turns a title into a URL slug: ASCII-folded (`Ünïcödé` → `unicode`, `東京` → `dong-jing`),
/// lowercase, every run of other characters turned into one `-`, no leading or trailing `-`, at
/// most [`MAX_SLUG_LEN`] bytes. Never empty: a title with nothing sluggable gives `untitled`.
pub fn slugify(title: &str) -> String {
    let folded = deunicode::deunicode_with_tofu(title, "-");
    let mut slug = String::with_capacity(folded.len().min(MAX_SLUG_LEN));
    let mut pending_dash = false;
    for character in folded.chars() {
        if character.is_ascii_alphanumeric() {
            if pending_dash && !slug.is_empty() {
                if slug.len() + 1 >= MAX_SLUG_LEN {
                    break;
                }
                slug.push('-');
            }
            if slug.len() >= MAX_SLUG_LEN {
                break;
            }
            slug.push(character.to_ascii_lowercase());
            pending_dash = false;
        } else {
            pending_dash = true;
        }
    }
    if slug.is_empty() {
        "untitled".to_owned()
    } else {
        slug
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        let cases = [
            ("Getting Started", "getting-started"),
            ("  --Hello,   World!--  ", "hello-world"),
            ("Ünïcödé Straße", "unicode-strasse"),
            ("C++ & Rust: a_b", "c-rust-a-b"),
            ("東京", "dong-jing"),
            ("v1.2.3", "v1-2-3"),
            ("", "untitled"),
            ("!!!", "untitled"),
            ("🦀", "crab"),
        ];
        for (title, expected) in cases {
            assert_eq!(slugify(title), expected, "{title}");
        }
    }

    #[test]
    fn long_titles_are_cut_without_a_trailing_dash() {
        let slug = slugify(&"word ".repeat(60));
        assert!(slug.len() <= MAX_SLUG_LEN, "{}", slug.len());
        assert!(!slug.ends_with('-'));
        assert!(slug.starts_with("word-word"));
        assert_eq!(slugify(&"a".repeat(300)).len(), MAX_SLUG_LEN);
    }
}
