//! The tokens of a condition, read one at a time as the parser asks, so that the first error
//! in the text is the one reported.

use super::ast::Span;
use super::error::{ConditionError, ErrorKind};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    AndAnd,
    OrOr,
    Bang,
    /// `==` or `===`.
    EqEq,
    /// `!=` or `!==`.
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Dot,
    Minus,
    Str(String),
    /// Unsigned and finite; a minus sign is its own token.
    Num(f64),
    /// A name, keywords (`true`, `false`, `null`, `in`) included: after a dot they are names.
    Ident(String),
    Eof,
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub tok: Tok,
    pub span: Span,
}

pub(crate) struct Lexer<'s> {
    source: &'s str,
    pos: usize,
}

impl<'s> Lexer<'s> {
    pub fn new(source: &'s str) -> Lexer<'s> {
        Lexer { source, pos: 0 }
    }

    fn rest(&self) -> &'s str {
        &self.source[self.pos..]
    }

    fn peek_char(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn error(&self, offset: usize, message: String, detail: Option<String>) -> ConditionError {
        ConditionError::new(ErrorKind::Syntax, self.source, offset, message, detail)
    }

    pub fn next_token(&mut self) -> Result<Token, ConditionError> {
        // JavaScript's line terminators and the ASCII blanks; other Unicode spaces are errors
        // rather than silently different tokens.
        while let Some(c) = self.peek_char() {
            if matches!(c, ' ' | '\t' | '\n' | '\r') {
                self.pos += 1;
            } else {
                break;
            }
        }
        let start = self.pos;
        let Some(c) = self.peek_char() else {
            return Ok(Token {
                tok: Tok::Eof,
                span: Span::new(start, start),
            });
        };
        let rest = self.rest();
        let (tok, len) = match c {
            '&' if rest.starts_with("&&") => (Tok::AndAnd, 2),
            '|' if rest.starts_with("||") => (Tok::OrOr, 2),
            '=' if rest.starts_with("===") => (Tok::EqEq, 3),
            '=' if rest.starts_with("==") => (Tok::EqEq, 2),
            '!' if rest.starts_with("!==") => (Tok::NotEq, 3),
            '!' if rest.starts_with("!=") => (Tok::NotEq, 2),
            '!' => (Tok::Bang, 1),
            '<' if rest.starts_with("<=") => (Tok::Le, 2),
            '<' => (Tok::Lt, 1),
            '>' if rest.starts_with(">=") => (Tok::Ge, 2),
            '>' => (Tok::Gt, 1),
            '(' => (Tok::LParen, 1),
            ')' => (Tok::RParen, 1),
            '[' => (Tok::LBracket, 1),
            ']' => (Tok::RBracket, 1),
            ',' => (Tok::Comma, 1),
            '.' => (Tok::Dot, 1),
            '-' => (Tok::Minus, 1),
            '"' | '\'' => return self.string(c),
            '0'..='9' => return self.number(),
            c if c.is_ascii_alphabetic() || c == '_' => {
                let len = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                (Tok::Ident(rest[..len].to_owned()), len)
            }
            c => {
                let hint = match c {
                    '&' => Some("did you mean \"&&\"?"),
                    '|' => Some("did you mean \"||\"?"),
                    '=' => Some("did you mean \"==\"?"),
                    _ => None,
                };
                return Err(self.error(
                    start,
                    format!("unexpected token {}", quote_char(c)),
                    hint.map(str::to_owned),
                ));
            }
        };
        self.pos += len;
        Ok(Token {
            tok,
            span: Span::new(start, self.pos),
        })
    }

    /// `0`, `12`, `1.5`, `2e10`, `1.5E-3`: JSON's numbers without their sign. A leading zero
    /// before a digit is refused (JavaScript reads `010` as octal in some modes), and so is a
    /// number run into a name (`0x10`, `1e`).
    fn number(&mut self) -> Result<Token, ConditionError> {
        let start = self.pos;
        let bytes = self.source.as_bytes();
        let digits = |mut i: usize| {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        let mut end = digits(start);
        if bytes[start] == b'0' && end > start + 1 {
            return Err(self.error(
                start,
                "a number does not start with 0".to_owned(),
                Some("write 10, not 010".to_owned()),
            ));
        }
        if end < bytes.len() && bytes[end] == b'.' {
            let fraction = digits(end + 1);
            if fraction == end + 1 {
                return Err(self.error(end, "a digit must follow the decimal point".to_owned(), None));
            }
            end = fraction;
        }
        if end < bytes.len() && matches!(bytes[end], b'e' | b'E') {
            let mut exponent = end + 1;
            if exponent < bytes.len() && matches!(bytes[exponent], b'+' | b'-') {
                exponent += 1;
            }
            let after = digits(exponent);
            if after == exponent {
                return Err(self.error(end, "a digit must follow the exponent".to_owned(), None));
            }
            end = after;
        }
        if end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            return Err(self.error(
                end,
                "a number is followed by a letter".to_owned(),
                Some("numbers are decimal: 12, 1.5, 2e10".to_owned()),
            ));
        }
        let text = &self.source[start..end];
        let value: f64 = text
            .parse()
            .map_err(|_| self.error(start, format!("{text} is not a number"), None))?;
        if !value.is_finite() {
            return Err(self.error(start, format!("the number {} is too large", shorten(text)), None));
        }
        self.pos = end;
        Ok(Token {
            tok: Tok::Num(value),
            span: Span::new(start, end),
        })
    }

    /// A string in single or double quotes, with JSON's escapes (`\uXXXX`, surrogate pairs
    /// joined) and `\'`. No raw line breaks, as in JavaScript.
    fn string(&mut self, quote: char) -> Result<Token, ConditionError> {
        let start = self.pos;
        let mut value = String::new();
        let mut chars = self.source[start + 1..].char_indices();
        let at = |i: usize| start + 1 + i;
        loop {
            let Some((i, c)) = chars.next() else {
                return Err(self.error(
                    start,
                    "unterminated string".to_owned(),
                    Some(format!("close it with {quote}")),
                ));
            };
            match c {
                c if c == quote => {
                    self.pos = at(i) + 1;
                    return Ok(Token {
                        tok: Tok::Str(value),
                        span: Span::new(start, self.pos),
                    });
                }
                '\n' | '\r' | '\u{2028}' | '\u{2029}' => {
                    return Err(self.error(
                        at(i),
                        "a string does not span lines".to_owned(),
                        Some("write \\n for a line break".to_owned()),
                    ));
                }
                '\\' => {
                    let Some((j, escape)) = chars.next() else {
                        continue;
                    };
                    match escape {
                        '"' | '\'' | '\\' | '/' => value.push(escape),
                        'n' => value.push('\n'),
                        'r' => value.push('\r'),
                        't' => value.push('\t'),
                        'b' => value.push('\u{8}'),
                        'f' => value.push('\u{c}'),
                        'u' => {
                            let unit = self.hex4(at(j) + 1).ok_or_else(|| {
                                self.error(at(i), "\\u takes four hexadecimal digits".to_owned(), None)
                            })?;
                            let mut skip = 4;
                            let decoded = if (0xD800..0xDC00).contains(&unit) {
                                // A high surrogate is only a character with its low half.
                                let low_at = at(j) + 5;
                                let low = self
                                    .source
                                    .get(low_at..)
                                    .filter(|rest| rest.starts_with("\\u"))
                                    .and_then(|_| self.hex4(low_at + 2))
                                    .filter(|low| (0xDC00..0xE000).contains(low));
                                low.and_then(|low| {
                                    skip += 6;
                                    char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                                })
                            } else {
                                char::from_u32(unit)
                            };
                            let Some(decoded) = decoded else {
                                return Err(self.error(
                                    at(i),
                                    "a lone surrogate is not a character".to_owned(),
                                    Some("write a pair such as \\ud83d\\ude00".to_owned()),
                                ));
                            };
                            value.push(decoded);
                            for _ in 0..skip {
                                chars.next();
                            }
                        }
                        other => {
                            return Err(self.error(
                                at(i),
                                format!("unknown escape \\{}", other.escape_debug()),
                                Some("escapes are \\\" \\' \\\\ \\/ \\n \\r \\t \\b \\f \\uXXXX".to_owned()),
                            ));
                        }
                    }
                }
                c => value.push(c),
            }
        }
    }

    /// The four hexadecimal digits at `offset`, as a number.
    fn hex4(&self, offset: usize) -> Option<u32> {
        let digits = self.source.get(offset..offset + 4)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(digits, 16).ok()
    }
}

/// A character in quotes, visible even when it is a control character.
fn quote_char(c: char) -> String {
    if c.is_control() || c.is_whitespace() {
        format!("\"\\u{{{:x}}}\"", c as u32)
    } else {
        format!("\"{c}\"")
    }
}

/// At most 32 characters of a text, for messages that quote the input.
pub(crate) fn shorten(text: &str) -> String {
    match text.char_indices().nth(32) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}
