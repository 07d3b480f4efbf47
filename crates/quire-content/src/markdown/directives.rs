//! GitBook's block syntax that CommonMark does not know: liquid tags (`{% hint %}`,
//! `{% tabs %}`, `{% code %}`, `{% embed %}`, ...), `<details>` expandables and `$$` math blocks.
//!
//! These are recognised line by line before comrak parses the markdown. Each directive line is
//! replaced by a placeholder paragraph (surrounded by blank lines, keeping its indentation and
//! any list marker) so that comrak places it in the right container (top level, list item) and
//! cannot glue it to a neighbouring paragraph as a lazy continuation line. The block converter
//! then pairs the placeholders up into blocks. Lines inside fenced code are never touched.

use std::borrow::Cow;

use super::html;

/// Liquid tags that open a block, with a matching `{% end<name> %}` (optional for `embed`,
/// `file`; absent for `include`).
const LIQUID_TAGS: &[&str] = &[
    "hint",
    "tabs",
    "tab",
    "code",
    "embed",
    "file",
    "content-ref",
    "stepper",
    "step",
    "columns",
    "column",
    "updates",
    "update",
    "include",
];

/// One recognised directive line (or `$$` block).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Directive {
    /// `{% name attr="value" %}`.
    Open {
        name: String,
        attrs: Vec<(String, String)>,
    },
    /// `{% endname %}`.
    Close { name: String },
    /// `<details>` or `<details open>`, possibly followed on the same line by its summary.
    DetailsOpen { open: bool, summary: Option<String> },
    /// `<summary>...</summary>` on its own line.
    Summary(String),
    /// `</details>`.
    DetailsClose,
    /// A `$$` ... `$$` block.
    Math(String),
}

/// The directives of one markdown text, by placeholder index.
#[derive(Debug, Default)]
pub(crate) struct Directives {
    entries: Vec<(Directive, String)>,
    /// The deepest nesting of directives the conversion opened (see [`Directives::enter`]).
    deepest: std::cell::Cell<usize>,
}

impl Directives {
    /// Records that the conversion opens a directive at `depth`; false (and nothing is to be
    /// opened) beyond [`crate::limits::MAX_MARKDOWN_NESTING`], which bounds its recursion.
    pub fn enter(&self, depth: usize) -> bool {
        self.deepest.set(self.deepest.get().max(depth));
        depth <= crate::limits::MAX_MARKDOWN_NESTING
    }

    /// The deepest nesting recorded by [`Directives::enter`].
    pub fn deepest_nesting(&self) -> usize {
        self.deepest.get()
    }

    /// The directive behind `index`.
    pub fn get(&self, index: usize) -> Option<&Directive> {
        self.entries.get(index).map(|(directive, _)| directive)
    }

    /// The source text of the directive behind `index` (without indentation or list marker).
    pub fn source(&self, index: usize) -> &str {
        self.entries.get(index).map_or("", |(_, source)| source.as_str())
    }

    /// The index of the directive when `text` is exactly one placeholder.
    pub fn placeholder_index(&self, text: &str) -> Option<usize> {
        let index = text
            .strip_prefix(PLACEHOLDER_START)?
            .strip_suffix(PLACEHOLDER_END)?
            .parse()
            .ok()?;
        (index < self.entries.len()).then_some(index)
    }

    /// Puts the original source back where a placeholder ended up inside other text (an
    /// indented code block, a table cell), so nothing is lost.
    pub fn restore<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.entries.is_empty() || !text.contains(PLACEHOLDER_START) {
            return Cow::Borrowed(text);
        }
        let mut output = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find(PLACEHOLDER_START) {
            output.push_str(&rest[..start]);
            let after = &rest[start..];
            let end = after
                .find(PLACEHOLDER_END)
                .map(|end| end + PLACEHOLDER_END.len_utf8());
            match end.and_then(|end| Some((self.placeholder_index(&after[..end])?, end))) {
                Some((index, end)) => {
                    output.push_str(self.source(index));
                    rest = &after[end..];
                }
                None => {
                    output.push(PLACEHOLDER_START);
                    rest = &after[PLACEHOLDER_START.len_utf8()..];
                }
            }
        }
        output.push_str(rest);
        Cow::Owned(output)
    }
}

/// Private-use characters around a placeholder's index: they never occur in real text.
const PLACEHOLDER_START: char = '\u{E000}';
const PLACEHOLDER_END: char = '\u{E001}';

/// Replaces directive lines of `markdown` with placeholders.
pub(crate) fn extract(markdown: &str) -> (String, Directives) {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut output = String::with_capacity(markdown.len() + 64);
    let mut directives = Directives::default();
    let mut fence: Option<Fence> = None;
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        index += 1;
        let (prefix, content) = split_line_prefix(line);
        if let Some(open) = &fence {
            if open.is_closed_by(content) {
                fence = None;
            }
            push_line(&mut output, line);
            continue;
        }
        if let Some(opened) = Fence::opened_by(content) {
            fence = Some(opened);
            push_line(&mut output, line);
            continue;
        }
        let directive = if content.trim_end() == "$$" {
            math_block(&lines[index..], prefix.len()).map(|(formula, used)| {
                index += used;
                Directive::Math(formula)
            })
        } else {
            parse_directive(content.trim_end())
        };
        match directive {
            Some(directive) => {
                let placeholder = format!("{PLACEHOLDER_START}{}{PLACEHOLDER_END}", directives.entries.len());
                directives
                    .entries
                    .push((directive, content.trim_end().to_owned()));
                output.push('\n');
                push_line(&mut output, &format!("{prefix}{placeholder}"));
                output.push('\n');
            }
            None => push_line(&mut output, line),
        }
    }
    (output, directives)
}

fn push_line(output: &mut String, line: &str) {
    output.push_str(line);
    output.push('\n');
}

/// Splits a line into its indentation plus optional list marker, and the rest.
fn split_line_prefix(line: &str) -> (&str, &str) {
    let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
    let rest = &line[indent..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let marker = if rest.starts_with(['-', '+', '*']) {
        1
    } else if (1..=9).contains(&digits) && rest[digits..].starts_with(['.', ')']) {
        digits + 1
    } else {
        0
    };
    if marker > 0 {
        let spaces = rest[marker..].len() - rest[marker..].trim_start_matches(' ').len();
        if spaces > 0 && spaces < 5 && marker + spaces < rest.len() {
            return line.split_at(indent + marker + spaces);
        }
    }
    line.split_at(indent)
}

/// An open code fence.
struct Fence {
    character: char,
    length: usize,
}

impl Fence {
    fn opened_by(content: &str) -> Option<Self> {
        let character = content.chars().next().filter(|c| *c == '`' || *c == '~')?;
        let length = content.chars().take_while(|c| *c == character).count();
        let info = &content[length..];
        (length >= 3 && !(character == '`' && info.contains('`'))).then_some(Self { character, length })
    }

    fn is_closed_by(&self, content: &str) -> bool {
        let content = content.trim();
        let length = content.chars().take_while(|c| *c == self.character).count();
        length >= self.length && length == content.chars().count()
    }
}

/// The formula of a `$$` block whose opening line was just read, and how many lines it used
/// (formula lines plus the closing `$$`).
fn math_block(lines: &[&str], indent: usize) -> Option<(String, usize)> {
    let end = lines.iter().position(|line| line.trim() == "$$")?;
    let formula: Vec<&str> = lines[..end]
        .iter()
        .map(|line| {
            let spaces = line.len() - line.trim_start_matches(' ').len();
            &line[spaces.min(indent)..]
        })
        .collect();
    Some((formula.join("\n"), end + 1))
}

/// Recognises one directive line (already stripped of indentation and list marker).
fn parse_directive(content: &str) -> Option<Directive> {
    if let Some(body) = content
        .strip_prefix("{%")
        .and_then(|rest| rest.strip_suffix("%}"))
    {
        return parse_liquid(body.trim_matches('-').trim());
    }
    if content == "</details>" {
        return Some(Directive::DetailsClose);
    }
    if let Some(summary) = parse_summary(content) {
        return Some(Directive::Summary(summary));
    }
    let tag_end = content.find('>')? + 1;
    let tag = html::parse_tag(&content[..tag_end])?;
    if tag.name != "details" || tag.closing {
        return None;
    }
    let open = tag.attr("open").is_some();
    let rest = content[tag_end..].trim();
    if rest.is_empty() {
        return Some(Directive::DetailsOpen { open, summary: None });
    }
    parse_summary(rest).map(|summary| Directive::DetailsOpen {
        open,
        summary: Some(summary),
    })
}

fn parse_summary(content: &str) -> Option<String> {
    let inner = content.strip_prefix("<summary>")?.strip_suffix("</summary>")?;
    (!inner.contains("</summary>")).then(|| inner.trim().to_owned())
}

fn parse_liquid(body: &str) -> Option<Directive> {
    let name_end = body.find(char::is_whitespace).unwrap_or(body.len());
    let name = &body[..name_end];
    if let Some(closed) = name.strip_prefix("end") {
        if LIQUID_TAGS.contains(&closed) && body[name_end..].trim().is_empty() {
            return Some(Directive::Close {
                name: closed.to_owned(),
            });
        }
        return None;
    }
    if !LIQUID_TAGS.contains(&name) {
        return None;
    }
    let attrs = parse_attributes(&body[name_end..])?;
    Some(Directive::Open {
        name: name.to_owned(),
        attrs,
    })
}

/// `key="value" key='value' key=value "positional"`; positional values get the key `""`.
fn parse_attributes(input: &str) -> Option<Vec<(String, String)>> {
    let mut attrs = Vec::new();
    let mut rest = input.trim_start();
    while !rest.is_empty() {
        if rest.starts_with(['"', '\'']) {
            let (value, after) = html::attribute_value(rest)?;
            attrs.push((String::new(), html::decode_entities(value)));
            rest = after.trim_start();
            continue;
        }
        let key_end = rest.find('=')?;
        let key = rest[..key_end].trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return None;
        }
        let (value, after) = html::attribute_value(rest[key_end + 1..].trim_start())?;
        attrs.push((key.to_owned(), html::decode_entities(value)));
        rest = after.trim_start();
    }
    Some(attrs)
}

/// Writes a liquid tag line: `{% name key="value" %}`.
pub(crate) fn liquid_tag(name: &str, attrs: &[(String, String)]) -> String {
    let mut tag = format!("{{% {name}");
    for (key, value) in attrs {
        tag.push(' ');
        if !key.is_empty() {
            tag.push_str(key);
            tag.push('=');
        }
        tag.push('"');
        tag.push_str(&html::escape(value));
        tag.push('"');
    }
    tag.push_str(" %}");
    tag
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directives_of(markdown: &str) -> Vec<Directive> {
        let (_, directives) = extract(markdown);
        directives
            .entries
            .into_iter()
            .map(|(directive, _)| directive)
            .collect()
    }

    #[test]
    fn recognises_liquid_tags_with_attributes() {
        let found = directives_of(
            "{% hint style=\"info\" %}\ntext\n{% endhint %}\n{% code title='a \"b\"' lineNumbers=true %}\n{%- include \"x.md\" -%}\n",
        );
        assert_eq!(
            found,
            [
                Directive::Open {
                    name: "hint".into(),
                    attrs: vec![("style".into(), "info".into())]
                },
                Directive::Close { name: "hint".into() },
                Directive::Open {
                    name: "code".into(),
                    attrs: vec![
                        ("title".into(), "a \"b\"".into()),
                        ("lineNumbers".into(), "true".into())
                    ]
                },
                Directive::Open {
                    name: "include".into(),
                    attrs: vec![(String::new(), "x.md".into())]
                },
            ]
        );
    }

    #[test]
    fn leaves_unknown_tags_and_fenced_code_alone() {
        let markdown = "{% unknown %}\n```\n{% hint style=\"info\" %}\n$$\n```\n{% endfoo %}\n";
        let (output, directives) = extract(markdown);
        assert!(directives.entries.is_empty());
        assert_eq!(output, markdown);
    }

    #[test]
    fn placeholders_keep_indentation_and_list_markers() {
        let (output, directives) = extract("1. {% hint style=\"info\" %}\n   text\n   {% endhint %}\n");
        assert_eq!(directives.entries.len(), 2);
        assert_eq!(
            output,
            "\n1. \u{E000}0\u{E001}\n\n   text\n\n   \u{E000}1\u{E001}\n\n"
        );
        assert_eq!(directives.placeholder_index("\u{E000}1\u{E001}"), Some(1));
        assert_eq!(directives.placeholder_index("\u{E000}7\u{E001}"), None);
        assert_eq!(
            directives.restore("a \u{E000}0\u{E001} b"),
            "a {% hint style=\"info\" %} b"
        );
    }

    #[test]
    fn details_and_math() {
        let found = directives_of(
            "<details open><summary>Title *x*</summary>\n<summary>S</summary>\n</details>\n  $$\n  a^2\n   - b\n  $$\n$$\nunclosed\n",
        );
        assert_eq!(
            found,
            [
                Directive::DetailsOpen {
                    open: true,
                    summary: Some("Title *x*".into())
                },
                Directive::Summary("S".into()),
                Directive::DetailsClose,
                Directive::Math("a^2\n - b".into()),
            ]
        );
    }

    #[test]
    fn liquid_tags_render_and_parse_back() {
        let attrs = vec![
            ("title".to_owned(), "say \"hi\" & go".to_owned()),
            (String::new(), "p".to_owned()),
        ];
        let line = liquid_tag("code", &attrs);
        assert_eq!(line, "{% code title=\"say &quot;hi&quot; &amp; go\" \"p\" %}");
        assert_eq!(
            parse_directive(&line),
            Some(Directive::Open {
                name: "code".into(),
                attrs
            })
        );
    }
}
