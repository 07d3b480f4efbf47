//! Syntax highlighting of code blocks on the server, to CSS classes.
//!
//! syntect parses the code with Sublime Text grammars (two-face's set, which adds TypeScript,
//! TOML, Dockerfile and others to syntect's defaults; pure-Rust regexes). Instead of a color
//! theme, the highlighter is given a theme whose "colors" are token classes: each scope
//! selector maps to a class number in the red channel. syntect's own selector matching then
//! decides which class a token gets, and the output is a handful of short classes
//! (`<span class="hk">`) that the stylesheet colors for the light and the dark theme alike.

use std::fmt::Write as _;
use std::str::FromStr;
use std::sync::OnceLock;

use syntect::easy::HighlightLines;
use syntect::highlighting::{Color, ScopeSelectors, StyleModifier, Theme, ThemeItem, ThemeSettings};
use syntect::parsing::{SyntaxReference, SyntaxSet};

use crate::escape::Escaped;

/// Token classes, by number (0 is plain text), and the scopes each stands for. A class without
/// a name is plain text too.
const CLASSES: &[(&str, &str)] = &[
    ("", ""),
    ("hc", "comment, punctuation.definition.comment"),
    ("hs", "string, constant.character.escape, markup.raw"),
    (
        "hn",
        "constant.numeric, constant.language, constant.character, constant.other, support.constant, variable.language",
    ),
    (
        "hk",
        "keyword, storage, keyword.operator.word, keyword.operator.logical.python",
    ),
    (
        "hf",
        "entity.name.function, support.function, variable.function, meta.function-call.identifier",
    ),
    (
        "ht",
        "entity.name.type, entity.name.class, entity.name.struct, entity.name.enum, entity.name.trait, support.type, support.class, entity.other.inherited-class, storage.type.primitive",
    ),
    ("hg", "entity.name.tag, meta.tag.sgml"),
    (
        "ha",
        "entity.other.attribute-name, support.type.property-name, meta.mapping.key string, entity.name.tag.yaml",
    ),
    ("hh", "markup.heading, entity.name.section, markup.bold"),
    ("hi", "markup.inserted"),
    ("hd", "markup.deleted, invalid"),
    (
        "hv",
        "variable.parameter, variable.other.readwrite.shell, punctuation.definition.variable",
    ),
    // Operators and punctuation stay plain; naming them keeps `keyword` from taking them.
    (
        "",
        "keyword.operator, punctuation.separator, punctuation.terminator, punctuation.section",
    ),
];

/// Code longer than this is shown without highlighting: the page stays fast to render.
const MAX_HIGHLIGHTED_BYTES: usize = 128 * 1024;

/// Common names of languages as written in code fences, mapped to a token syntect knows.
const ALIASES: &[(&str, &str)] = &[
    ("shell", "bash"),
    ("sh", "bash"),
    ("zsh", "bash"),
    ("console", "bash"),
    ("terminal", "bash"),
    ("shell-session", "bash"),
    ("javascript", "js"),
    ("node", "js"),
    ("mjs", "js"),
    ("cjs", "js"),
    ("typescript", "ts"),
    ("yml", "yaml"),
    ("csharp", "cs"),
    ("c#", "cs"),
    ("c++", "cpp"),
    ("golang", "go"),
    ("py", "python"),
    ("rb", "ruby"),
    ("rs", "rust"),
    ("md", "markdown"),
    ("kt", "kotlin"),
    ("dockerfile", "Dockerfile"),
    ("docker", "Dockerfile"),
    ("objective-c", "m"),
    ("plaintext", "txt"),
    ("text", "txt"),
];

struct Highlighter {
    syntaxes: SyntaxSet,
    theme: Theme,
}

fn highlighter() -> &'static Highlighter {
    static HIGHLIGHTER: OnceLock<Highlighter> = OnceLock::new();
    HIGHLIGHTER.get_or_init(|| Highlighter {
        syntaxes: two_face::syntax::extra_newlines(),
        theme: class_theme(),
    })
}

fn class_theme() -> Theme {
    let scopes = CLASSES
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(number, (_, selectors))| {
            Some(ThemeItem {
                scope: ScopeSelectors::from_str(selectors).ok()?,
                style: StyleModifier {
                    foreground: Some(class_color(number)),
                    background: None,
                    font_style: None,
                },
            })
        })
        .collect();
    Theme {
        settings: ThemeSettings {
            foreground: Some(class_color(0)),
            ..ThemeSettings::default()
        },
        scopes,
        ..Theme::default()
    }
}

fn class_color(number: usize) -> Color {
    Color {
        r: u8::try_from(number).unwrap_or(0),
        g: 0,
        b: 0,
        a: 0xff,
    }
}

fn syntax_for(language: &str) -> Option<&'static SyntaxReference> {
    let set = &highlighter().syntaxes;
    let language = language.trim();
    if language.is_empty() {
        return None;
    }
    let lower = language.to_ascii_lowercase();
    let token = ALIASES
        .iter()
        .find(|(alias, _)| *alias == lower)
        .map_or(lower.as_str(), |(_, token)| token);
    set.find_syntax_by_token(token)
        .or_else(|| set.find_syntax_by_name(language))
        .filter(|syntax| syntax.name != "Plain Text")
}

/// The display name of a language (`rust` → `Rust`), when it is known.
pub fn language_name(language: &str) -> Option<&'static str> {
    syntax_for(language).map(|syntax| syntax.name.as_str())
}

/// Renders lines of code as escaped HTML, each line followed by a newline except the last,
/// highlighted when `language` is known. `wrap_lines` puts each line in a `<span class="line">`
/// (for line numbers).
pub fn highlight(lines: &[String], language: &str, wrap_lines: bool) -> String {
    let total: usize = lines.iter().map(|line| line.len() + 1).sum();
    let mut output = String::with_capacity(total + total / 2);
    let syntax = syntax_for(language).filter(|_| total <= MAX_HIGHLIGHTED_BYTES);
    let mut state = syntax.map(|syntax| HighlightLines::new(syntax, &highlighter().theme));
    for (number, line) in lines.iter().enumerate() {
        if number > 0 {
            output.push('\n');
        }
        if wrap_lines {
            output.push_str("<span class=\"line\">");
        }
        let with_newline = format!("{line}\n");
        let tokens = state
            .as_mut()
            .and_then(|state| state.highlight_line(&with_newline, &highlighter().syntaxes).ok());
        match tokens {
            Some(tokens) => write_tokens(&mut output, &tokens),
            None => {
                // A grammar that fails on a line (a regex over its backtracking limit) leaves
                // the rest of the block plain rather than half-highlighted.
                state = None;
                let _ = write!(output, "{}", Escaped(line));
            }
        }
        if wrap_lines {
            output.push_str("</span>");
        }
    }
    output
}

fn write_tokens(output: &mut String, tokens: &[(syntect::highlighting::Style, &str)]) {
    let mut runs: Vec<(usize, String)> = Vec::new();
    for (style, text) in tokens {
        let class = usize::from(style.foreground.r).min(CLASSES.len() - 1);
        let text = text.strip_suffix('\n').unwrap_or(text);
        if text.is_empty() {
            continue;
        }
        // Whitespace takes the class of its neighbour: fewer spans, same look.
        let class = if text.trim().is_empty() {
            runs.last().map_or(0, |(class, _)| *class)
        } else {
            class
        };
        match runs.last_mut() {
            Some((last, run)) if *last == class => run.push_str(text),
            _ => runs.push((class, text.to_owned())),
        }
    }
    for (class, text) in runs {
        if CLASSES[class].0.is_empty() {
            let _ = write!(output, "{}", Escaped(&text));
        } else {
            let _ = write!(
                output,
                "<span class=\"{}\">{}</span>",
                CLASSES[class].0,
                Escaped(&text)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(code: &str) -> Vec<String> {
        code.lines().map(str::to_owned).collect()
    }

    #[test]
    fn highlights_known_languages_with_classes() {
        let html = highlight(
            &lines("fn main() {\n    // hi\n    let s = \"<b>\";\n}"),
            "rust",
            false,
        );
        assert!(html.contains("<span class=\"hk\">fn"), "{html}");
        assert!(html.contains("<span class=\"hk\">let</span> s = "), "{html}");
        assert!(html.contains("<span class=\"hc\">// hi</span>"), "{html}");
        assert!(html.contains("&lt;b&gt;"), "{html}");
        assert!(!html.contains("style="), "{html}");
        assert_eq!(html.lines().count(), 4);
        for language in [
            "typescript",
            "toml",
            "bash",
            "yaml",
            "json",
            "python",
            "Dockerfile",
            "html",
        ] {
            assert!(language_name(language).is_some(), "{language}");
        }
    }

    #[test]
    fn unknown_languages_are_escaped_text() {
        let html = highlight(&lines("<script>x</script>\nb"), "no-such-language", true);
        assert_eq!(
            html,
            "<span class=\"line\">&lt;script&gt;x&lt;/script&gt;</span>\n<span class=\"line\">b</span>"
        );
        assert_eq!(language_name(""), None);
    }
}
