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

/// Bytes of a GitBook anchor; longer headings are cut there.
const MAX_ANCHOR_LEN: usize = 200;

/// The anchor GitBook gives a heading today (its blocks' `meta.id`): `&` read as "and", the
/// text transliterated to ASCII and lowercased, every run of characters other than letters,
/// digits, `.`, `_` and `~` one `-` (none at the edges), the words "ad" and "ads" split (`a-d`:
/// ad blockers hide elements whose id holds them), `id-` before a leading digit, `undefined`
/// when nothing is left. `1. Set up Azure AD (V2)` is `id-1.-set-up-azure-a-d-v2`,
/// `Abuse via .git/config` is `abuse-via-.git-config`, `Mocks & webhooks` is
/// `mocks-and-webhooks`. A page's repeated anchor takes `-1`, `-2`... (the caller's part).
pub fn gitbook_anchor(text: &str) -> String {
    // Letters of other scripts are transliterated (`é` is `e`, `介绍` is `jie shao`); symbols and
    // emoji are separators, which deunicode would spell out (`🚀` as `rocket`).
    let folded: String = text
        .replace('&', " and ")
        .chars()
        .map(|c| match c {
            c if c.is_ascii() => c.to_string(),
            c if c.is_alphanumeric() || matches!(c, '\u{2018}' | '\u{2019}') => {
                deunicode::deunicode_char(c).unwrap_or("-").to_owned()
            }
            _ => "-".to_owned(),
        })
        .collect();
    let mut out = String::with_capacity(folded.len().min(MAX_ANCHOR_LEN));
    let mut pending_dash = false;
    for character in folded.chars() {
        if out.len() >= MAX_ANCHOR_LEN {
            break;
        }
        if character.is_ascii_alphanumeric() || matches!(character, '.' | '_' | '~') {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            pending_dash = false;
            out.push(character.to_ascii_lowercase());
        } else {
            pending_dash = true;
        }
    }
    let out = out
        .split('-')
        .map(|word| match word {
            "ad" => "a-d",
            "ads" => "a-ds",
            word => word,
        })
        .collect::<Vec<_>>()
        .join("-");
    if out.is_empty() {
        "undefined".to_owned()
    } else if out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("id-{out}")
    } else {
        out
    }
}

/// The anchor of GitBook's earlier rule, still held by headings made before late 2021 and by
/// links written against them: letters (any script), digits, `.`, `_` and `&` kept, whitespace
/// and `/` one `-`, anything else dropped (`Mocks & webhooks` is `mocks-&-webhooks`).
pub fn gitbook_legacy_anchor(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_ANCHOR_LEN));
    for character in text.trim().chars().flat_map(char::to_lowercase) {
        if out.len() >= MAX_ANCHOR_LEN {
            break;
        }
        if character.is_whitespace() || matches!(character, '-' | '/') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else if character.is_alphanumeric() || matches!(character, '.' | '_' | '&') {
            out.push(character);
        }
    }
    let out = out.trim_matches('-');
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("id-{out}")
    } else {
        out.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs of heading and anchor from GitBook-published documentation.
    #[test]
    fn gitbook_anchors_follow_gitbooks_rule() {
        for (heading, anchor) in [
            (
                "1. Create an app registration in Azure AD",
                "id-1.-create-an-app-registration-in-azure-a-d",
            ),
            (
                "llms-full.txt and .md support for LLMs",
                "llms-full.txt-and-.md-support-for-llms",
            ),
            (
                "Connections: give the Assistant a full picture",
                "connections-give-the-assistant-a-full-picture",
            ),
            ("Change your site’s settings", "change-your-site-s-settings"),
            (
                "5. Set Up the Proxy Server (V2 Auth)",
                "id-5.-set-up-the-proxy-server-v2-auth",
            ),
            (
                "Configure \"Insert\" and \"X\" Buttons",
                "configure-insert-and-x-buttons",
            ),
            (
                "Video #3:  Quickstart Guide: Angular (Part 3)",
                "video-3-quickstart-guide-angular-part-3",
            ),
            ("Rows & Content", "rows-and-content"),
            (
                "I have questions. Who should I contact?",
                "i-have-questions.-who-should-i-contact",
            ),
            ("Abuse via .git/config", "abuse-via-.git-config"),
            ("LD_PRELOAD", "ld_preload"),
            (
                "Option 2 - JSON Upload (Bulk Onboarding)",
                "option-2-json-upload-bulk-onboarding",
            ),
            ("403 Forbidden Errors", "id-403-forbidden-errors"),
            ("1. Acceso al Módulo", "id-1.-acceso-al-modulo"),
            ("Alternate Data Streams (ADS)", "alternate-data-streams-a-ds"),
            ("介绍", "jie-shao"),
            ("🚀", "undefined"),
        ] {
            assert_eq!(gitbook_anchor(heading), anchor, "{heading}");
        }
        assert_eq!(gitbook_legacy_anchor("Mocks & webhooks"), "mocks-&-webhooks");
        assert_eq!(
            gitbook_legacy_anchor("Abuse via .git/config"),
            "abuse-via-.git-config"
        );
        assert!(gitbook_anchor(&"x".repeat(10_000)).len() <= MAX_ANCHOR_LEN);
    }

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
