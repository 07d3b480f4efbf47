//! Texts and inlines to markdown.
//!
//! Rendering is deterministic and chosen so that parsing the output gives the same content
//! back: whitespace at the edges of bold, italic and strikethrough spans moves outside the span
//! (`** a**` would not parse), whitespace at line edges is dropped, every character markdown
//! could read as syntax is escaped, and a `*`/`**`/`~~` delimiter that would not parse back at
//! its position (`a**"b"**c`) is written as the equivalent HTML tag (`<strong>`), which the
//! parser reads as the same mark. Marks without a markdown delimiter (keyboard, superscript,
//! subscript, color) are always written as HTML tags.

use crate::document::{ContentRef, Mark, Node};
use crate::text::plain_text_of_nodes;

use super::html;
use super::marks::{color_style, tag_for_mark};

/// Where inline content is written, which decides what must be escaped and how breaks look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InlineMode {
    /// A paragraph: hard breaks are `\` + newline.
    Normal,
    /// One line where `#` is special: breaks become spaces.
    Heading,
    /// A GFM table cell: breaks are `<br>`, `|` is escaped even in code.
    TableCell,
    /// One line of inline markdown (an expandable's summary): breaks become spaces.
    SingleLine,
}

/// The id an empty link to an anchor stands for (`<a id="x"></a>`, decision 0079): its
/// reference is an anchor, or, before the import resolves it, `#x`.
pub(crate) fn anchor_marker_id(link: &Node) -> Option<String> {
    if link.data_str("title").is_some()
        || !plain_text_of_nodes(link.children()).is_empty()
        || link.children().iter().any(|child| !child.is_text())
    {
        return None;
    }
    match ContentRef::from_value(link.data_value("ref")?)? {
        ContentRef::Anchor { anchor, .. } => Some(anchor),
        ContentRef::Url { url } => url
            .strip_prefix('#')
            .filter(|id| !id.is_empty())
            .map(str::to_owned),
        _ => None,
    }
}

/// An inline image with a size or dimensions is written as `<img>`: markdown has no form for
/// them.
fn needs_img_tag(image: &Node) -> bool {
    (image.data_value("width").is_some()
        || image.data_value("height").is_some()
        || image.data_str("size") == Some("line"))
        && image.data_value("title").is_none()
}

/// Renders inline content, turning references into link targets with the caller's resolver.
#[derive(Clone, Copy)]
pub(crate) struct Renderer<'r> {
    resolve: &'r dyn Fn(&ContentRef) -> Option<String>,
    mode: InlineMode,
}

/// Marks that have a markdown delimiter.
const DELIMITED: &[(&str, &str)] = &[("bold", "**"), ("italic", "*"), ("strikethrough", "~~")];

fn delimiter(mark_type: &str) -> Option<&'static str> {
    DELIMITED
        .iter()
        .find(|(known, _)| *known == mark_type)
        .map(|(_, delimiter)| *delimiter)
}

fn is_renderable(mark: &Mark) -> bool {
    mark.mark_type == "code" || tag_for_mark(&mark.mark_type).is_some()
}

/// The renderable marks of a leaf, only the first of each type: the parser never gives a leaf
/// two marks of one type (`canonical_marks`), and those of a JSON document that does must not
/// nest (a leaf with 70 `bold` marks rendered 70 nested `**`, over `MAX_MARKDOWN_NESTING` when
/// read back). Quadratic in the marks of one leaf, which `limits::MAX_MARKS` bounds.
fn leaf_marks(marks: &[Mark]) -> impl Iterator<Item = &Mark> {
    marks.iter().enumerate().filter_map(|(index, mark)| {
        let repeated = marks[..index]
            .iter()
            .any(|earlier| earlier.mark_type == mark.mark_type);
        (is_renderable(mark) && !repeated).then_some(mark)
    })
}

/// A run of text with its marks, or an inline node, in document order.
enum Piece<'n> {
    Text {
        text: String,
        marks: Vec<Mark>,
    },
    /// An inline with the marks shared by all of its content, which are written around it
    /// (`**[bold link](x)**`) so that a span can continue across it; `None` for an inline
    /// without text (an image, a formula), which sits inside whatever span is open.
    Inline {
        node: &'n Node,
        marks: Option<Vec<Mark>>,
        /// Marks its content leaves out: those written around it here or further out.
        exclude: Vec<Mark>,
    },
}

impl Piece<'_> {
    fn marks(&self) -> Option<&[Mark]> {
        match self {
            Piece::Text { marks, .. }
            | Piece::Inline {
                marks: Some(marks), ..
            } => Some(marks),
            Piece::Inline { marks: None, .. } => None,
        }
    }

    fn has(&self, mark_type: &str) -> bool {
        self.marks()
            .is_some_and(|marks| marks.iter().any(|mark| mark.mark_type == mark_type))
    }

    /// Whether a span of `mark` may continue through this piece.
    fn carries(&self, mark: &Mark) -> bool {
        self.marks().is_none_or(|marks| marks.contains(mark))
    }

    /// Whitespace as far as markdown flanking is concerned (code spans never are).
    fn is_blank(&self) -> bool {
        matches!(self, Piece::Text { text, .. } if text.chars().all(char::is_whitespace)) && !self.has("code")
    }

    fn is_break(&self) -> bool {
        matches!(self, Piece::Text { text, .. } if text == "\n") && !self.has("code")
    }
}

/// A mark span opened and closed in the output.
struct Span {
    mark: Mark,
    as_html: bool,
}

enum Token {
    Open(usize),
    Close(usize),
    Literal(String),
}

impl<'r> Renderer<'r> {
    pub(crate) fn new(resolve: &'r dyn Fn(&ContentRef) -> Option<String>) -> Self {
        Self {
            resolve,
            mode: InlineMode::Normal,
        }
    }

    pub(crate) fn with_mode(&self, mode: InlineMode) -> Self {
        Self { mode, ..*self }
    }

    /// The link target of a reference: the resolver's answer, else the best text available.
    pub(crate) fn target(&self, content_ref: &ContentRef) -> String {
        (self.resolve)(content_ref).unwrap_or_else(|| content_ref.fallback_target())
    }

    /// The link target of a node's `data.ref`.
    pub(crate) fn ref_target(&self, node: &Node) -> String {
        node.data_value("ref")
            .and_then(ContentRef::from_value)
            .map(|content_ref| self.target(&content_ref))
            .unwrap_or_default()
    }

    /// Renders texts and inlines.
    pub(crate) fn inlines(&self, nodes: &[Node]) -> String {
        self.inlines_without(nodes, &[])
    }

    /// Renders texts and inlines, leaving out marks written around them by the caller.
    fn inlines_without(&self, nodes: &[Node], outer: &[Mark]) -> String {
        let pieces = self.pieces(nodes, outer);
        let (tokens, mut spans) = tokens(&pieces, self);
        settle_delimiters(&tokens, &mut spans);
        let output = write_tokens(&tokens, &spans);
        match self.mode {
            InlineMode::Normal | InlineMode::SingleLine => escape_line_starts(&output),
            InlineMode::Heading | InlineMode::TableCell => output,
        }
    }

    /// Flattens, splits and normalizes the content into pieces (see the module docs).
    fn pieces<'n>(&self, nodes: &'n [Node], outer: &[Mark]) -> Vec<Piece<'n>> {
        let mut pieces = Vec::new();
        for node in nodes {
            if !node.is_text() {
                let shared = shared_marks(node.children());
                let marks = shared.as_ref().map(|marks| {
                    marks
                        .iter()
                        .filter(|mark| !outer.contains(mark))
                        .cloned()
                        .collect()
                });
                let mut exclude = outer.to_vec();
                exclude.extend(
                    shared
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|mark| !outer.contains(mark)),
                );
                pieces.push(Piece::Inline { node, marks, exclude });
                continue;
            }
            for leaf in node.leaves() {
                let marks: Vec<Mark> = leaf_marks(&leaf.marks)
                    .filter(|mark| !outer.contains(mark))
                    .cloned()
                    .collect();
                let code = marks.iter().any(|mark| mark.mark_type == "code");
                let text = if code || self.mode == InlineMode::Heading || self.mode == InlineMode::SingleLine
                {
                    leaf.text.replace('\n', " ")
                } else {
                    leaf.text.clone()
                };
                for line in text.split_inclusive('\n') {
                    let (line, newline) = match line.strip_suffix('\n') {
                        Some(line) => (line, true),
                        None => (line, false),
                    };
                    let core = line.trim();
                    let parts = if core.is_empty() {
                        [line, "", ""]
                    } else {
                        [
                            &line[..line.len() - line.trim_start().len()],
                            core,
                            &line[line.trim_end().len()..],
                        ]
                    };
                    for part in parts {
                        if !part.is_empty() {
                            pieces.push(Piece::Text {
                                text: part.to_owned(),
                                marks: marks.clone(),
                            });
                        }
                    }
                    if newline {
                        pieces.push(Piece::Text {
                            text: "\n".to_owned(),
                            marks: marks.clone(),
                        });
                    }
                }
            }
        }
        hoist_whitespace(&mut pieces);
        trim_lines(&mut pieces);
        merge_pieces(pieces)
    }

    /// Renders an inline, leaving out the marks written around it.
    fn inline(&self, node: &Node, outer: &[Mark]) -> String {
        let children = node.children();
        match node.node_type() {
            "link" if anchor_marker_id(node).is_some() => {
                let id = anchor_marker_id(node).unwrap_or_default();
                format!("<a id=\"{}\"></a>", html::escape(&id))
            }
            "link" | "button" => {
                let target = self.ref_target(node);
                let text = if node.node_type() == "button" {
                    escape_text(node.data_str("label").unwrap_or_default(), self.mode)
                } else {
                    self.inlines_without(children, outer)
                };
                let plain = plain_text_of_nodes(children);
                if node.node_type() == "link"
                    && plain == target
                    && is_autolink(&target)
                    && text == escape_text(&target, self.mode)
                {
                    return format!("<{target}>");
                }
                format!(
                    "[{text}]({}{})",
                    link_destination(&target),
                    link_title(node.data_str("title"))
                )
            }
            "inline-image" if needs_img_tag(node) => html::img_tag(node, &self.ref_target(node)),
            "inline-image" => format!(
                "![{}]({}{})",
                escape_text(
                    &node.data_str("alt").unwrap_or_default().replace('\n', " "),
                    self.mode
                ),
                link_destination(&self.ref_target(node)),
                link_title(node.data_str("title"))
            ),
            "inline-math" => {
                let formula = node.data_str("formula").unwrap_or_default();
                match self.mode {
                    InlineMode::Normal => format!("$${formula}$$"),
                    _ => format!("$${}$$", formula.replace('\n', " ")),
                }
            }
            "mention" => escape_text(&format!("@{}", self.ref_target(node)), self.mode),
            "emoji" => node
                .data_str("code")
                .unwrap_or_default()
                .split('-')
                .filter_map(|code| u32::from_str_radix(code, 16).ok().and_then(char::from_u32))
                .collect(),
            _ if !children.is_empty() => self.inlines_without(children, outer),
            _ => escape_text(&plain_text_of_nodes(std::slice::from_ref(node)), self.mode),
        }
    }
}

/// The renderable marks (except code) on every leaf of inline content; `None` when it has no
/// text at all.
fn shared_marks(nodes: &[Node]) -> Option<Vec<Mark>> {
    fn walk(nodes: &[Node], shared: &mut Option<Vec<Mark>>) {
        for node in nodes {
            for leaf in node.leaves().iter().filter(|leaf| !leaf.text.is_empty()) {
                let marks = leaf_marks(&leaf.marks).filter(|mark| mark.mark_type != "code");
                match shared {
                    None => *shared = Some(marks.cloned().collect()),
                    Some(current) => current.retain(|mark| leaf.marks.contains(mark)),
                }
            }
            walk(node.children(), shared);
        }
    }
    let mut shared = None;
    walk(nodes, &mut shared);
    shared
}

/// Moves whitespace at the edges of delimited spans (bold, italic, strikethrough) out of them.
fn hoist_whitespace(pieces: &mut [Piece<'_>]) {
    for (mark_type, _) in DELIMITED {
        let mut start = 0;
        while start < pieces.len() {
            if !pieces[start].has(mark_type) {
                start += 1;
                continue;
            }
            let mut end = start;
            while end < pieces.len() && (pieces[end].has(mark_type) || pieces[end].marks().is_none()) {
                end += 1;
            }
            let mut first = start;
            while first < end && pieces[first].is_blank() {
                remove_mark(&mut pieces[first], mark_type);
                first += 1;
            }
            let mut last = end;
            while last > first && pieces[last - 1].is_blank() {
                remove_mark(&mut pieces[last - 1], mark_type);
                last -= 1;
            }
            start = end;
        }
    }
}

fn remove_mark(piece: &mut Piece<'_>, mark_type: &str) {
    if let Piece::Text { marks, .. } = piece {
        marks.retain(|mark| mark.mark_type != mark_type);
    }
}

/// Drops whitespace at the start and end of every line, and breaks at the start or end of the
/// content: markdown cannot express them.
fn trim_lines(pieces: &mut Vec<Piece<'_>>) {
    let mut kept: Vec<Piece<'_>> = Vec::with_capacity(pieces.len());
    for piece in pieces.drain(..) {
        if piece.is_break() {
            while kept
                .last()
                .is_some_and(|last| last.is_blank() && !last.is_break())
            {
                kept.pop();
            }
            if !kept.is_empty() {
                kept.push(piece);
            }
            continue;
        }
        if piece.is_blank() && kept.last().is_none_or(Piece::is_break) {
            continue;
        }
        kept.push(piece);
    }
    while kept.last().is_some_and(Piece::is_blank) {
        kept.pop();
    }
    *pieces = kept;
}

fn merge_pieces(pieces: Vec<Piece<'_>>) -> Vec<Piece<'_>> {
    let mut merged: Vec<Piece<'_>> = Vec::with_capacity(pieces.len());
    for piece in pieces {
        if let (
            Some(Piece::Text { text, marks }),
            Piece::Text {
                text: next,
                marks: next_marks,
            },
        ) = (merged.last_mut(), &piece)
            && marks == next_marks
        {
            text.push_str(next);
            continue;
        }
        merged.push(piece);
    }
    merged
}

/// Turns pieces into open/close/literal tokens, nesting marks so that the span reaching
/// furthest opens first.
fn tokens(pieces: &[Piece<'_>], renderer: &Renderer<'_>) -> (Vec<Token>, Vec<Span>) {
    let mut tokens = Vec::new();
    let mut spans: Vec<Span> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    for (index, piece) in pieces.iter().enumerate() {
        let Some(marks) = piece.marks() else {
            if let Piece::Inline { node, exclude, .. } = piece {
                tokens.push(Token::Literal(renderer.inline(node, exclude)));
            }
            continue;
        };
        let wanted: Vec<&Mark> = marks.iter().filter(|mark| mark.mark_type != "code").collect();
        if let Some(first_unwanted) = stack
            .iter()
            .position(|span| !wanted.contains(&&spans[*span].mark))
        {
            while stack.len() > first_unwanted {
                if let Some(span) = stack.pop() {
                    tokens.push(Token::Close(span));
                }
            }
        }
        let mut opening: Vec<&Mark> = wanted
            .into_iter()
            .filter(|mark| !stack.iter().any(|span| spans[*span].mark == **mark))
            .collect();
        let reach = |mark: &Mark| {
            pieces[index..]
                .iter()
                .take_while(|piece| piece.carries(mark))
                .count()
        };
        opening.sort_by_key(|mark| std::cmp::Reverse(reach(mark)));
        for mark in opening {
            spans.push(Span {
                mark: mark.clone(),
                as_html: delimiter(&mark.mark_type).is_none(),
            });
            stack.push(spans.len() - 1);
            tokens.push(Token::Open(spans.len() - 1));
        }
        let literal = match piece {
            Piece::Inline { node, exclude, .. } => renderer.inline(node, exclude),
            Piece::Text { text, .. } if piece.has("code") => code_span(text, renderer.mode),
            Piece::Text { text, .. } => {
                let hard_break = match renderer.mode {
                    InlineMode::TableCell => "<br>",
                    _ => "\\\n",
                };
                let mut literal = String::with_capacity(text.len() + 8);
                for (index, line) in text.split('\n').enumerate() {
                    if index > 0 {
                        literal.push_str(hard_break);
                    }
                    escape_text_into(&mut literal, line, renderer.mode);
                }
                literal
            }
        };
        tokens.push(Token::Literal(literal));
    }
    while let Some(span) = stack.pop() {
        tokens.push(Token::Close(span));
    }
    (tokens, spans)
}

fn span_text(span: &Span, open: bool) -> String {
    if !span.as_html
        && let Some(delimiter) = delimiter(&span.mark.mark_type)
    {
        return delimiter.to_owned();
    }
    let tag = tag_for_mark(&span.mark.mark_type).unwrap_or("span");
    match (open, span.mark.mark_type.as_str()) {
        (true, "color") => format!("<{tag} style=\"{}\">", html::escape(&color_style(&span.mark))),
        (true, _) => format!("<{tag}>"),
        (false, _) => format!("</{tag}>"),
    }
}

fn write_tokens(tokens: &[Token], spans: &[Span]) -> String {
    let mut output = String::new();
    for token in tokens {
        match token {
            Token::Open(span) => output.push_str(&span_text(&spans[*span], true)),
            Token::Close(span) => output.push_str(&span_text(&spans[*span], false)),
            Token::Literal(literal) => {
                // `!` right before a link or image would turn it into an image.
                if literal.starts_with('[')
                    && output.ends_with('!')
                    && !ends_with_escape(&output[..output.len() - 1])
                {
                    output.insert(output.len() - 1, '\\');
                }
                output.push_str(literal);
            }
        }
    }
    output
}

/// Whether `text` ends with an odd number of backslashes (its next character is escaped).
fn ends_with_escape(text: &str) -> bool {
    text.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1
}

/// Switches to HTML tags the delimiter spans that would not parse back: a delimiter run must be
/// left-flanking to open and right-flanking to close, and a run must not both close one span
/// and open another.
fn settle_delimiters(tokens: &[Token], spans: &mut [Span]) {
    for _ in 0..=spans.len() {
        let output = positions(tokens, spans);
        let mut switched = false;
        let mut index = 0;
        while index < tokens.len() {
            let Some((character, _)) = delimiter_at(tokens, spans, index) else {
                index += 1;
                continue;
            };
            let mut end = index;
            while end + 1 < tokens.len()
                && delimiter_at(tokens, spans, end + 1).is_some_and(|(c, _)| c == character)
            {
                end += 1;
            }
            let before = output.text[..output.starts[index]].chars().next_back();
            let after = output.text[output.ends[end]..].chars().next();
            let run = &tokens[index..=end];
            let opens = run.iter().any(|token| matches!(token, Token::Open(_)));
            let closes = run.iter().any(|token| matches!(token, Token::Close(_)));
            let bad = if opens && closes {
                run.iter().find_map(|token| match token {
                    Token::Open(span) => Some(*span),
                    _ => None,
                })
            } else if opens && !left_flanking(before, after)
                || closes && !right_flanking(before, after)
                || ambiguous(before, after)
            {
                run.iter().find_map(|token| match token {
                    Token::Open(span) | Token::Close(span) => Some(*span),
                    Token::Literal(_) => None,
                })
            } else {
                None
            };
            if let Some(span) = bad {
                spans[span].as_html = true;
                switched = true;
                break;
            }
            index = end + 1;
        }
        if !switched {
            return;
        }
    }
}

/// The delimiter character of a token that is written as a markdown delimiter.
fn delimiter_at(tokens: &[Token], spans: &[Span], index: usize) -> Option<(char, usize)> {
    let span = match tokens.get(index)? {
        Token::Open(span) | Token::Close(span) => *span,
        Token::Literal(_) => return None,
    };
    if spans[span].as_html {
        return None;
    }
    delimiter(&spans[span].mark.mark_type)?
        .chars()
        .next()
        .map(|character| (character, span))
}

struct Positions {
    text: String,
    starts: Vec<usize>,
    ends: Vec<usize>,
}

fn positions(tokens: &[Token], spans: &[Span]) -> Positions {
    let mut positions = Positions {
        text: String::new(),
        starts: Vec::with_capacity(tokens.len()),
        ends: Vec::with_capacity(tokens.len()),
    };
    for token in tokens {
        positions.starts.push(positions.text.len());
        match token {
            Token::Open(span) => positions.text.push_str(&span_text(&spans[*span], true)),
            Token::Close(span) => positions.text.push_str(&span_text(&spans[*span], false)),
            Token::Literal(literal) => positions.text.push_str(literal),
        }
        positions.ends.push(positions.text.len());
    }
    positions
}

fn is_markdown_whitespace(character: Option<char>) -> bool {
    character.is_none_or(char::is_whitespace)
}

/// Punctuation for flanking purposes: ASCII punctuation and, approximately, any other
/// character that is neither alphanumeric nor whitespace (symbols, emoji, CJK punctuation).
fn is_markdown_punctuation(character: Option<char>) -> bool {
    character.is_some_and(|c| {
        c.is_ascii_punctuation() || (!c.is_ascii() && !c.is_alphanumeric() && !c.is_whitespace())
    })
}

/// A run that could both open and close next to punctuation: parsers pair such runs in ways
/// that depend on the delimiters around them, so it is not trusted.
fn ambiguous(before: Option<char>, after: Option<char>) -> bool {
    left_flanking(before, after)
        && right_flanking(before, after)
        && (is_markdown_punctuation(before) || is_markdown_punctuation(after))
}

fn left_flanking(before: Option<char>, after: Option<char>) -> bool {
    !is_markdown_whitespace(after)
        && (!is_markdown_punctuation(after)
            || is_markdown_whitespace(before)
            || is_markdown_punctuation(before))
}

fn right_flanking(before: Option<char>, after: Option<char>) -> bool {
    !is_markdown_whitespace(before)
        && (!is_markdown_punctuation(before)
            || is_markdown_whitespace(after)
            || is_markdown_punctuation(after))
}

/// The longest backtick run comrak reads as a code span's fence (its `MAXBACKTICKS`).
const MAX_FENCE: usize = 80;

/// A code span holding `text` exactly.
fn code_span(original: &str, mode: InlineMode) -> String {
    let text = if mode == InlineMode::TableCell {
        original.replace('|', "\\|")
    } else {
        original.to_owned()
    };
    // A span closes at the first run of exactly its fence's length, and comrak (like cmark)
    // never closes a span opened by more than MAX_FENCE backticks: the fence is the shortest
    // length no run inside has, at most MAX_FENCE. (A fence longer than every run read back as
    // text past 80 backticks, its content parsed as markdown.)
    let mut runs = [false; MAX_FENCE + 1];
    let mut current = 0;
    for character in text.chars().chain(std::iter::once(' ')) {
        if character == '`' {
            current += 1;
        } else {
            if current <= MAX_FENCE {
                runs[current] = true;
            }
            current = 0;
        }
    }
    let Some(length) = (1..=MAX_FENCE).find(|n| !runs[*n]) else {
        // Every length up to the limit occurs (3,240 backticks at least): no span can hold
        // the text; it is kept as literal text instead.
        return escape_text(original, mode);
    };
    let fence = "`".repeat(length);
    let pad = text.starts_with('`')
        || text.ends_with('`')
        || (text.starts_with(' ') && text.ends_with(' ') && !text.chars().all(|c| c == ' '));
    if pad {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

/// Escapes text so that markdown reads it literally.
pub(crate) fn escape_text(text: &str, mode: InlineMode) -> String {
    let mut output = String::with_capacity(text.len() + 8);
    escape_text_into(&mut output, text, mode);
    output
}

/// Characters that may need a backslash; text without any (most prose) is copied as it is.
fn may_escape(byte: u8) -> bool {
    matches!(
        byte,
        b'\\'
            | b'`'
            | b'*'
            | b'['
            | b']'
            | b'<'
            | b'~'
            | b'|'
            | b'$'
            | b'_'
            | b'&'
            | b'#'
            | b'%'
            | b':'
            | b'.'
            | b'@'
    )
}

/// [`escape_text`], appending to `output`.
pub(crate) fn escape_text_into(output: &mut String, text: &str, mode: InlineMode) {
    if !text.bytes().any(may_escape) {
        output.push_str(text);
        return;
    }
    let mut before: Option<char> = None;
    let mut characters = text.char_indices().peekable();
    while let Some((index, character)) = characters.next() {
        let after = characters.peek().map(|&(_, c)| c);
        let head = &text[..index];
        let escape = match character {
            '\\' | '`' | '*' | '[' | ']' | '<' | '~' | '|' | '$' => true,
            '_' => !(before.is_some_and(char::is_alphanumeric) && after.is_some_and(char::is_alphanumeric)),
            '&' => after.is_some_and(|c| c == '#' || c.is_ascii_alphanumeric()),
            '#' => mode == InlineMode::Heading,
            '%' => before == Some('{'),
            ':' => {
                after == Some('/') && ends_with_word(head, &["http", "https", "ftp"])
                    || ends_with_word(head, &["mailto", "xmpp"])
            }
            '.' => ends_with_word(head, &["www"]),
            '@' => {
                before.is_some_and(|c| c.is_alphanumeric() || "._-+".contains(c))
                    && after.is_some_and(char::is_alphanumeric)
            }
            _ => false,
        };
        if escape {
            output.push('\\');
        }
        output.push(character);
        before = Some(character);
    }
}

/// Whether the alphabetic word ending `text` is one of `words` (case-insensitive).
fn ends_with_word(text: &str, words: &[&str]) -> bool {
    let start = text
        .char_indices()
        .rev()
        .find(|(_, c)| !c.is_ascii_alphabetic())
        .map_or(0, |(position, c)| position + c.len_utf8());
    let word = &text[start..];
    words.iter().any(|candidate| word.eq_ignore_ascii_case(candidate))
}

/// Escapes what would start a block at the beginning of a line (`#`, `>`, `-`, `+`, `=`, `1.`).
fn escape_line_starts(output: &str) -> String {
    let mut escaped = String::with_capacity(output.len() + 4);
    for (index, line) in output.split('\n').enumerate() {
        if index > 0 {
            escaped.push('\n');
        }
        let digits = line.bytes().take_while(u8::is_ascii_digit).count();
        if line.starts_with(['#', '>', '-', '+', '=']) {
            escaped.push('\\');
        } else if (1..=9).contains(&digits) && line[digits..].starts_with(['.', ')']) {
            escaped.push_str(&line[..digits]);
            escaped.push('\\');
            escaped.push_str(&line[digits..]);
            continue;
        }
        escaped.push_str(line);
    }
    escaped
}

fn is_autolink(target: &str) -> bool {
    (target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:"))
        && !target.contains(|c: char| c.is_whitespace() || c == '<' || c == '>' || c.is_control())
}

/// A link destination that parses back to `target`.
pub(crate) fn link_destination(target: &str) -> String {
    let mut depth: i32 = 0;
    let mut balanced = true;
    for character in target.chars() {
        match character {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                balanced &= depth >= 0;
            }
            _ => {}
        }
    }
    balanced &= depth == 0;
    let needs_brackets = target.is_empty()
        || !balanced
        || target.contains(|c: char| c.is_whitespace() || c == '<' || c == '>' || c.is_control());
    let mut output = String::with_capacity(target.len() + 2);
    if needs_brackets {
        output.push('<');
    }
    let characters: Vec<char> = target.chars().collect();
    for (index, &character) in characters.iter().enumerate() {
        match character {
            '\n' => output.push_str("%0A"),
            '\r' => output.push_str("%0D"),
            '\\' | '<' | '>' => {
                output.push('\\');
                output.push(character);
            }
            '&' if characters
                .get(index + 1)
                .is_some_and(|c| *c == '#' || c.is_ascii_alphanumeric()) =>
            {
                output.push_str("\\&");
            }
            _ => output.push(character),
        }
    }
    if needs_brackets {
        output.push('>');
    }
    output
}

fn link_title(title: Option<&str>) -> String {
    match title {
        Some(title) if !title.is_empty() => {
            let escaped = title.replace('\\', "\\\\").replace('"', "\\\"");
            format!(" \"{escaped}\"")
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Leaf;

    fn render(leaves: &[(&str, &[&str])]) -> String {
        let leaves = leaves
            .iter()
            .map(|(text, marks)| Leaf::new(text, marks.iter().map(|mark| Mark::new(mark)).collect()))
            .collect();
        Renderer::new(&|_| None).inlines(&[Node::text(leaves)])
    }

    #[test]
    fn marks_nest_by_reach_and_hoist_whitespace() {
        assert_eq!(
            render(&[("a ", &["bold"]), ("b", &["bold", "italic"]), (" c", &[])]),
            "**a *b*** c"
        );
        assert_eq!(
            render(&[("x", &["italic"]), ("y", &["bold", "italic"])]),
            "*x**y***"
        );
        assert_eq!(render(&[("  a  ", &["bold"]), ("b", &[])]), "**a**  b");
        assert_eq!(
            render(&[("a", &["strikethrough", "superscript"])]),
            "~~<sup>a</sup>~~"
        );
    }

    #[test]
    fn repeated_marks_render_once() {
        // Found by the limits property tests: a JSON leaf with 70 `bold` marks rendered 70
        // nested `**`, which `markdown_to_document` refused (MAX_MARKDOWN_NESTING).
        let bold: Vec<&str> = vec!["bold"; 70];
        assert_eq!(render(&[("x", &bold)]), "**x**");
        assert_eq!(
            render(&[("x", &["italic", "bold", "italic", "code", "code"])]),
            "***`x`***"
        );
        let mut link = Node::inline(
            "link",
            Default::default(),
            vec![Node::text(vec![Leaf::new("x", vec![Mark::new("bold"); 40])])],
        );
        link.data = Some(
            serde_json::json!({"ref": {"kind": "url", "url": "u.md"}})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        let markdown = Renderer::new(&|_| None).inlines(&[link]);
        assert_eq!(markdown, "**[x](u.md)**");
        crate::markdown_to_document(&markdown).unwrap();
    }

    #[test]
    fn delimiters_that_would_not_parse_become_html() {
        assert_eq!(
            render(&[("a", &[]), ("\"b\"", &["bold"]), ("c", &[])]),
            "a<strong>\"b\"</strong>c"
        );
        assert_eq!(
            render(&[("a", &["italic"]), ("b", &["bold"])]),
            "*a*<strong>b</strong>"
        );
        assert_eq!(
            render(&[("x", &[]), ("code", &["bold", "code"]), ("y", &[])]),
            "x<strong>`code`</strong>y"
        );
    }

    #[test]
    fn escapes_syntax_characters() {
        assert_eq!(
            render(&[(
                "1. *a* _b_ snake_case [x] <y> `z` ~w~ |p| $5 & &amp; {% t %}",
                &[]
            )]),
            "1\\. \\*a\\* \\_b\\_ snake_case \\[x\\] \\<y> \\`z\\` \\~w\\~ \\|p\\| \\$5 & \\&amp; {\\% t %}"
        );
        assert_eq!(
            render(&[("# a\n- b\n+ c\n> d\n=", &[])]),
            "\\# a\\\n\\- b\\\n\\+ c\\\n\\> d\\\n\\="
        );
        assert_eq!(
            render(&[("see https://x.io, www.y.io and a@b.io", &[])]),
            "see https\\://x.io, www\\.y.io and a\\@b.io"
        );
    }

    #[test]
    fn code_spans_hold_any_text() {
        assert_eq!(code_span("a`b", InlineMode::Normal), "``a`b``");
        assert_eq!(code_span("`x", InlineMode::Normal), "`` `x ``");
        assert_eq!(code_span(" x ", InlineMode::Normal), "`  x  `");
        assert_eq!(code_span("a|b", InlineMode::TableCell), "`a\\|b`");
        assert_eq!(code_span("a`b``c", InlineMode::Normal), "```a`b``c```");
        assert_eq!(code_span("``", InlineMode::Normal), "` `` `");
        let long = format!("a{}b", "`".repeat(81));
        assert_eq!(code_span(&long, InlineMode::Normal), format!("`{long}`"));
    }

    #[test]
    fn link_destinations() {
        assert_eq!(link_destination("a.md#b"), "a.md#b");
        assert_eq!(link_destination("a b.md"), "<a b.md>");
        assert_eq!(link_destination("x)"), "<x)>");
        assert_eq!(link_destination(""), "<>");
        assert_eq!(link_destination("a\\b&amp;"), "a\\\\b\\&amp;");
    }
}
