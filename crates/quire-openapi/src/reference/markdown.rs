//! Markdown building blocks: a page writer with a byte budget, and the escapes that keep names,
//! types and descriptions from changing the structure around them.

/// A page being written. Text goes in whole units (a line, a table row, a whole fenced block),
/// so that cutting the page at its budget never leaves a fence or a table half open.
pub(super) struct Md {
    out: String,
    limit: usize,
    cut: bool,
}

impl Md {
    pub(super) fn new(limit: usize) -> Self {
        Self {
            out: String::new(),
            limit,
            cut: false,
        }
    }

    /// Whether the budget ran out: writers check it to stop early rather than render text
    /// that would be dropped.
    pub(super) fn is_cut(&self) -> bool {
        self.cut
    }

    pub(super) fn push(&mut self, unit: &str) {
        if self.cut {
            return;
        }
        if self.out.len() + unit.len() > self.limit {
            self.cut = true;
            return;
        }
        self.out.push_str(unit);
    }

    /// The page, with `note` appended when it was cut (the note is outside the budget: callers
    /// keep room for it).
    pub(super) fn finish(mut self, note: &str) -> String {
        if self.cut {
            self.out.push_str(note);
        }
        self.out
    }
}

/// `text` as an inline code span on one line, whatever backticks it holds.
pub(super) fn code(text: &str) -> String {
    let one_line = one_line(text);
    if one_line.is_empty() {
        return "(empty)".to_owned();
    }
    let longest_run = longest_run(&one_line, '`');
    let fence = "`".repeat(longest_run + 1);
    // A span's content that starts or ends with a backtick would merge into the fence, and one
    // padded with spaces on both sides loses one of each: pad with a space so both survive.
    let pad = one_line.starts_with('`')
        || one_line.ends_with('`')
        || (one_line.starts_with(' ') && one_line.ends_with(' '));
    let space = if pad { " " } else { "" };
    format!("{fence}{space}{one_line}{space}{fence}")
}

/// `text` on one line: runs of whitespace (newlines included) become one space.
pub(super) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// `text` fit for a table cell: on one line, with every pipe escaped so it cannot end the cell.
pub(super) fn cell(text: &str) -> String {
    let line = one_line(text);
    let mut out = String::with_capacity(line.len());
    let mut backslashes = 0usize;
    for ch in line.chars() {
        // An odd run of backslashes already escapes the pipe; an even run escapes itself and
        // would leave the pipe bare.
        if ch == '|' && backslashes.is_multiple_of(2) {
            out.push('\\');
        }
        backslashes = if ch == '\\' { backslashes + 1 } else { 0 };
        out.push(ch);
    }
    out
}

/// `text` for a heading: on one line, and a trailing `#` kept as text rather than read as the
/// heading's closing sequence.
pub(super) fn heading_text(text: &str) -> String {
    let mut line = one_line(text);
    if line.ends_with('#') {
        line.pop();
        line.push_str("\\#");
    }
    line
}

/// A description written at `indent` inside a list item: its continuation lines indented so
/// they stay in the item, and any fence it leaves open closed.
pub(super) fn indented(text: &str, indent: usize) -> String {
    let text = balanced(text.trim_end());
    let pad = " ".repeat(indent);
    let mut out = String::with_capacity(text.len());
    for (index, line) in text.lines().enumerate() {
        if index > 0 {
            out.push('\n');
            if !line.trim().is_empty() {
                out.push_str(&pad);
            }
        }
        out.push_str(line);
    }
    out
}

/// A block of markdown from the description, with a fence it leaves open closed: otherwise it
/// would swallow the rest of the page.
pub(super) fn balanced(text: &str) -> std::borrow::Cow<'_, str> {
    let mut open: Option<(char, usize)> = None;
    for line in text.lines() {
        let Some((ch, len, rest)) = fence_of(line) else {
            continue;
        };
        match open {
            None => {
                // A backtick fence's info string may not hold a backtick: such a line is text.
                if ch == '`' && rest.contains('`') {
                    continue;
                }
                open = Some((ch, len));
            }
            Some((open_ch, open_len)) => {
                if ch == open_ch && len >= open_len && rest.trim().is_empty() {
                    open = None;
                }
            }
        }
    }
    match open {
        None => std::borrow::Cow::Borrowed(text),
        Some((ch, len)) => {
            let close: String = std::iter::repeat_n(ch, len).collect();
            std::borrow::Cow::Owned(format!("{text}\n{close}"))
        }
    }
}

/// The fence character, its count and the rest of the line, when `line` opens or closes a fence.
fn fence_of(line: &str) -> Option<(char, usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let ch = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = trimmed.chars().take_while(|c| *c == ch).count();
    (len >= 3).then(|| (ch, len, &trimmed[len..]))
}

/// A fenced code block holding `content`, with a fence longer than any backtick run inside.
pub(super) fn fenced(content: &str, info: &str) -> String {
    let fence = "`".repeat(longest_run(content, '`').max(2) + 1);
    format!("{fence}{info}\n{content}\n{fence}\n\n")
}

fn longest_run(text: &str, ch: char) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == ch { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// The first paragraph of a markdown text as plain text: links become their text, and emphasis,
/// code marks, heading and quote marks and HTML tags go.
pub(super) fn first_paragraph_plain(text: &str) -> Option<String> {
    let paragraph = text
        .split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty() && !p.starts_with("{%"))?;
    let mut plain = String::with_capacity(paragraph.len());
    for line in paragraph.lines() {
        let line = line.trim_start().trim_start_matches(['#', '>']).trim_start();
        if !plain.is_empty() {
            plain.push(' ');
        }
        plain.push_str(line);
    }
    let plain = one_line(&strip_inline_markup(&plain));
    (!plain.is_empty()).then_some(plain)
}

fn strip_inline_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '*' | '_' | '`' => {}
            '!' if chars.peek() == Some(&'[') => {}
            '[' | ']' => {}
            '(' if out.ends_with('\u{0}') => {
                // The destination of a link: skipped up to its closing parenthesis.
                for c in chars.by_ref() {
                    if c == ')' {
                        break;
                    }
                }
                out.pop();
            }
            '<' => {
                for c in chars.by_ref() {
                    if c == '>' {
                        break;
                    }
                }
            }
            _ => out.push(ch),
        }
        // Marks the end of a link's text, so that a `(` right after it starts its destination.
        if ch == ']' && chars.peek() == Some(&'(') {
            out.push('\u{0}');
        }
    }
    out.replace('\u{0}', "")
}

/// A URL slug of `title`: lowercase ascii letters and digits, words joined by `-`.
pub(super) fn slugify(title: &str) -> String {
    let mut slug = String::with_capacity(title.len());
    for ch in title.chars() {
        if ch.is_ascii_alphanumeric() {
            slug.push(ch.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    while slug.ends_with('-') {
        slug.pop();
    }
    if slug.is_empty() {
        slug.push_str("page");
    }
    slug
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_markdown_code_spans_hold_backticks_and_newlines() {
        assert_eq!(code("id"), "`id`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(code("a\nb"), "`a b`");
    }

    #[test]
    fn reference_markdown_cells_escape_pipes_once() {
        assert_eq!(cell("a|b"), "a\\|b");
        assert_eq!(cell("a\\|b"), "a\\|b");
        assert_eq!(cell("a\\\\|b"), "a\\\\\\|b");
        assert_eq!(cell("one\ntwo"), "one two");
    }

    #[test]
    fn reference_markdown_open_fences_are_closed() {
        assert_eq!(balanced("text\n```js\ncode"), "text\n```js\ncode\n```");
        assert_eq!(balanced("```\ncode\n```"), "```\ncode\n```");
        assert_eq!(fenced("a ``` b", "bash"), "````bash\na ``` b\n````\n\n");
    }

    #[test]
    fn reference_markdown_plain_first_paragraph_and_slugs() {
        assert_eq!(
            first_paragraph_plain("See **the** [docs](https://x.y/z) `now`.\n\nMore.").as_deref(),
            Some("See the docs now.")
        );
        assert_eq!(slugify("Pets & Owners!"), "pets-owners");
        assert_eq!(slugify("ünï"), "n");
        assert_eq!(slugify("ü !"), "page");
    }
}
