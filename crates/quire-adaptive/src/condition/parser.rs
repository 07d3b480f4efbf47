//! A precedence parser with an explicit stack and a depth budget.
//!
//! ```text
//! condition  = [ or ] ;
//! or         = and { "||" and } ;
//! and        = comparison { "&&" comparison } ;
//! comparison = unary [ ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) unary | "in" list ] ;
//! unary      = { "!" } primary ;
//! primary    = literal | claim | "(" or ")" ;
//! ```
//!
//! The parser is one loop over an explicit stack of open groups (`(`), with no recursion:
//! its own stack use does not depend on the input. Each open parenthesis and each `!` still
//! takes one unit of the budget ([`MAX_CONDITION_DEPTH`]): the checker, the evaluator and the
//! printer walk with explicit stacks too, but the derived `Drop`, `Clone`, `PartialEq` and
//! `Debug` of the tree recurse, and a shallow tree is also one a person can read.

use super::ast::{ClaimRef, CompareOp, Expr, ExprKind, Item, Literal, Scope, Span};
use super::error::{ConditionError, ErrorKind};
use super::lexer::{Lexer, Tok, Token, shorten};
use crate::limits::{MAX_CONDITION_CHARS, MAX_CONDITION_DEPTH, MAX_CONDITION_NODES};

/// The limits a parse runs under: [`Limits::DEFAULT`] outside of tests, which lift the
/// length limit to reach the depth budget with more than a thousand characters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub chars: usize,
    pub depth: usize,
    pub nodes: usize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        chars: MAX_CONDITION_CHARS,
        depth: MAX_CONDITION_DEPTH,
        nodes: MAX_CONDITION_NODES,
    };
}

/// The tree of a condition, or `None` when it is blank (no condition: always visible).
pub(crate) fn parse(source: &str, limits: Limits) -> Result<Option<Expr>, ConditionError> {
    // Bytes first: a text of more than 4 bytes per allowed character is over the limit
    // whatever it holds, and counting its characters would cost time for nothing.
    if source.len() > limits.chars.saturating_mul(4) || source.chars().count() > limits.chars {
        let offset = source
            .char_indices()
            .nth(limits.chars)
            .map_or(source.len(), |(i, _)| i);
        return Err(ConditionError::new(
            ErrorKind::Limit,
            source,
            offset,
            format!(
                "the condition is longer than {} characters (MAX_CONDITION_CHARS)",
                limits.chars
            ),
            None,
        ));
    }
    let mut lexer = Lexer::new(source);
    let current = lexer.next_token()?;
    let mut parser = Parser {
        source,
        lexer,
        current,
        last_end: 0,
        depth: 0,
        nodes: 0,
        limits,
    };
    if parser.current.tok == Tok::Eof {
        return Ok(None);
    }
    parser.expression().map(Some)
}

struct Parser<'s> {
    source: &'s str,
    lexer: Lexer<'s>,
    current: Token,
    /// Where the token before `current` ends.
    last_end: usize,
    depth: usize,
    nodes: usize,
    limits: Limits,
}

impl Parser<'_> {
    fn advance(&mut self) -> Result<Token, ConditionError> {
        let next = self.lexer.next_token()?;
        self.last_end = self.current.span.end;
        Ok(std::mem::replace(&mut self.current, next))
    }

    fn error(&self, kind: ErrorKind, offset: usize, message: String, detail: Option<&str>) -> ConditionError {
        ConditionError::new(kind, self.source, offset, message, detail.map(str::to_owned))
    }

    /// `unexpected ...` at the current token.
    fn unexpected(&self, detail: Option<&str>) -> ConditionError {
        let span = self.current.span;
        let text = &self.source[span.start..span.end];
        let what = match &self.current.tok {
            Tok::Eof => "unexpected end of the condition".to_owned(),
            Tok::Str(_) => format!("unexpected string {}", shorten(text)),
            Tok::Num(_) => format!("unexpected number {}", shorten(text)),
            Tok::Ident(_) => format!("unexpected name \"{}\"", shorten(text)),
            _ => format!("unexpected token \"{text}\""),
        };
        self.error(ErrorKind::Syntax, span.start, what, detail)
    }

    /// Counts one node of the tree, at `offset` for the error.
    fn node(&mut self, offset: usize) -> Result<(), ConditionError> {
        self.nodes += 1;
        if self.nodes > self.limits.nodes {
            return Err(self.error(
                ErrorKind::Limit,
                offset,
                format!(
                    "the condition has more than {} values and operators (MAX_CONDITION_NODES)",
                    self.limits.nodes
                ),
                None,
            ));
        }
        Ok(())
    }

    /// Takes one unit of the depth budget, for a `(` or `!` at `offset`.
    fn descend(&mut self, offset: usize) -> Result<(), ConditionError> {
        self.depth += 1;
        if self.depth > self.limits.depth {
            return Err(self.error(
                ErrorKind::Limit,
                offset,
                format!(
                    "the condition nests more than {} parentheses and negations (MAX_CONDITION_DEPTH)",
                    self.limits.depth
                ),
                None,
            ));
        }
        Ok(())
    }

    /// The whole condition, read in one loop over an explicit stack of open groups: the
    /// parser's own stack does not grow with the nesting.
    fn expression(&mut self) -> Result<Expr, ConditionError> {
        let mut groups = vec![Group::default()];
        'operand: loop {
            // Any number of `!` and `(`, then a literal or a claim.
            let mut operand = loop {
                let start = self.current.span.start;
                match self.current.tok {
                    Tok::Bang => {
                        self.advance()?;
                        self.descend(start)?;
                        self.node(start)?;
                        top(&mut groups).bangs.push(start);
                    }
                    Tok::LParen => {
                        self.advance()?;
                        self.descend(start)?;
                        groups.push(Group {
                            open: Some(start),
                            ..Group::default()
                        });
                    }
                    _ => break self.operand()?,
                }
            };
            // An operand is read: complete what it completes, then read what follows. A
            // closing parenthesis makes its group an operand of the group around it.
            loop {
                let group = top(&mut groups);
                let bangs = std::mem::take(&mut group.bangs);
                self.depth -= bangs.len();
                for start in bangs.into_iter().rev() {
                    operand = Expr {
                        span: Span::new(start, operand.span.end),
                        kind: ExprKind::Not(Box::new(operand)),
                    };
                }
                let comparison = match group.compare.take() {
                    Some((left, op, op_span)) => Expr {
                        span: left.span.to(operand.span),
                        kind: ExprKind::Compare {
                            op,
                            op_span,
                            left: Box::new(left),
                            right: Box::new(operand),
                        },
                    },
                    None => {
                        if let Some(op) = compare_op(&self.current.tok) {
                            let op_span = self.advance()?.span;
                            self.node(op_span.start)?;
                            group.compare = Some((operand, op, op_span));
                            continue 'operand;
                        }
                        if matches!(&self.current.tok, Tok::Ident(name) if name == "in") {
                            self.in_list(operand)?
                        } else {
                            operand
                        }
                    }
                };
                if self.at_comparison() {
                    return Err(self.unexpected(Some("comparisons do not chain: add parentheses")));
                }
                let start = self.current.span.start;
                match self.current.tok {
                    Tok::AndAnd => {
                        group.ands.push(comparison);
                        if group.ands.len() == 1 {
                            self.node(start)?;
                        }
                        self.advance()?;
                        continue 'operand;
                    }
                    Tok::OrOr => {
                        group.ands.push(comparison);
                        group.close_and();
                        if group.ors.len() == 1 {
                            self.node(start)?;
                        }
                        self.advance()?;
                        continue 'operand;
                    }
                    Tok::RParen if group.open.is_some() => {
                        group.ands.push(comparison);
                        let open = group.open.unwrap_or(start);
                        let mut inner = groups.pop().unwrap_or_default().finish();
                        let close = self.advance()?.span;
                        self.depth -= 1;
                        inner.span = Span::new(open, close.end);
                        operand = inner;
                    }
                    Tok::Eof if group.open.is_none() => {
                        group.ands.push(comparison);
                        return Ok(std::mem::take(group).finish());
                    }
                    _ => {
                        let detail = match group.open {
                            Some(open) => format!(
                                "expected \")\" to close the \"(\" at column {}",
                                self.source[..open]
                                    .chars()
                                    .rev()
                                    .take_while(|c| *c != '\n')
                                    .count()
                                    + 1
                            ),
                            None if self.current.tok == Tok::RParen => "no \"(\" is open".to_owned(),
                            None => "expected && or || between two conditions".to_owned(),
                        };
                        return Err(self.unexpected(Some(&detail)));
                    }
                }
            }
        }
    }

    fn at_comparison(&self) -> bool {
        match &self.current.tok {
            Tok::EqEq | Tok::NotEq | Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge => true,
            Tok::Ident(name) => name == "in",
            _ => false,
        }
    }

    /// `in [literal, ...]`, a trailing comma allowed as in JavaScript.
    fn in_list(&mut self, needle: Expr) -> Result<Expr, ConditionError> {
        let in_span = self.advance()?.span;
        self.node(in_span.start)?;
        if self.current.tok != Tok::LBracket {
            return Err(self.unexpected(Some("\"in\" takes a list such as [\"a\", \"b\"]")));
        }
        self.advance()?;
        let mut items = Vec::new();
        while self.current.tok != Tok::RBracket {
            let start = self.current.span.start;
            let value = match self.literal()? {
                Some(value) => value,
                None => {
                    return Err(
                        self.unexpected(Some("a list holds literals: strings, numbers, true, false, null"))
                    );
                }
            };
            self.node(start)?;
            let span = Span::new(start, self.last_end);
            items.push(Item { value, span });
            match self.current.tok {
                Tok::Comma => {
                    self.advance()?;
                }
                Tok::RBracket => {}
                _ => return Err(self.unexpected(Some("expected , or ] in the list"))),
            }
        }
        let close = self.advance()?.span;
        Ok(Expr {
            span: needle.span.to(close),
            kind: ExprKind::In {
                needle: Box::new(needle),
                items,
            },
        })
    }

    /// A literal or a claim at the current token.
    fn operand(&mut self) -> Result<Expr, ConditionError> {
        let start = self.current.span.start;
        if let Some(value) = self.literal()? {
            self.node(start)?;
            return Ok(Expr {
                kind: ExprKind::Literal(value),
                span: Span::new(start, self.last_end),
            });
        }
        match &self.current.tok {
            Tok::Ident(name) if name == "visitor" => self.claim(),
            Tok::Ident(name) if name == "in" => Err(self.unexpected(Some("expected a value before \"in\""))),
            Tok::Ident(name) => {
                let message = format!("unknown name \"{}\"", shorten(name));
                let detail = if name == "undefined" {
                    "write null for a claim that is absent"
                } else {
                    "a condition reads visitor.claims.NAME and visitor.claims.unsigned.NAME"
                };
                Err(self.error(ErrorKind::Syntax, start, message, Some(detail)))
            }
            Tok::Eof => Err(self.unexpected(Some("expected a value"))),
            _ => Err(self.unexpected(None)),
        }
    }

    /// A literal at the current token, read; `None` (nothing read) when there is none.
    fn literal(&mut self) -> Result<Option<Literal>, ConditionError> {
        let value = match &self.current.tok {
            Tok::Str(s) => Literal::String(s.clone()),
            Tok::Num(n) => Literal::Number(*n),
            Tok::Ident(name) if name == "true" => Literal::Bool(true),
            Tok::Ident(name) if name == "false" => Literal::Bool(false),
            Tok::Ident(name) if name == "null" => Literal::Null,
            Tok::Minus => {
                self.advance()?;
                let Tok::Num(n) = self.current.tok else {
                    return Err(self.unexpected(Some("a minus sign only precedes a number")));
                };
                Literal::Number(-n)
            }
            _ => return Ok(None),
        };
        self.advance()?;
        Ok(Some(value))
    }

    /// `visitor` followed by `.name` or `["name"]` accessors: `claims`, then the claim, or
    /// `unsigned` and the claim.
    fn claim(&mut self) -> Result<Expr, ConditionError> {
        let start = self.advance()?.span.start;
        let mut path: Vec<(String, Span)> = Vec::new();
        loop {
            let accessor_start = self.current.span.start;
            match self.current.tok {
                Tok::Dot => {
                    self.advance()?;
                    let Tok::Ident(name) = &self.current.tok else {
                        return Err(self.unexpected(Some("expected a name after the dot")));
                    };
                    let name = name.clone();
                    let end = self.advance()?.span.end;
                    path.push((name, Span::new(accessor_start, end)));
                }
                Tok::LBracket => {
                    self.advance()?;
                    let Tok::Str(name) = &self.current.tok else {
                        return Err(self.unexpected(Some("expected a string in brackets: [\"name\"]")));
                    };
                    let name = name.clone();
                    self.advance()?;
                    if self.current.tok != Tok::RBracket {
                        return Err(self.unexpected(Some("expected ]")));
                    }
                    let end = self.advance()?.span.end;
                    path.push((name, Span::new(accessor_start, end)));
                }
                _ => break,
            }
            // Nothing is deeper than visitor.claims.unsigned.NAME: stop at the first extra.
            if path.len() > path_limit(&path) {
                return Err(self.too_deep(&path));
            }
        }
        let end = path.last().map_or(self.current.span.start, |(_, span)| span.end);
        let span = Span::new(start, end);
        let claim = match path.as_slice() {
            [] => {
                return Err(self.error(
                    ErrorKind::Syntax,
                    start,
                    "visitor is not a value".to_owned(),
                    Some("write visitor.claims.NAME or visitor.claims.unsigned.NAME"),
                ));
            }
            [(first, first_span), ..] if first != "claims" => {
                return Err(self.error(
                    ErrorKind::Syntax,
                    first_span.start,
                    format!("unknown property \"{}\" of visitor", shorten(first)),
                    Some("a condition reads visitor.claims.NAME and visitor.claims.unsigned.NAME"),
                ));
            }
            [_] => {
                return Err(self.error(
                    ErrorKind::Syntax,
                    start,
                    "visitor.claims is not a value".to_owned(),
                    Some("name a claim: visitor.claims.NAME"),
                ));
            }
            [_, (second, _)] if second == "unsigned" => {
                return Err(self.error(
                    ErrorKind::Syntax,
                    start,
                    "visitor.claims.unsigned is not a value".to_owned(),
                    Some("name an unsigned claim: visitor.claims.unsigned.NAME"),
                ));
            }
            [_, (name, _)] => ClaimRef {
                scope: Scope::Signed,
                name: name.clone(),
            },
            [_, _, (name, _)] => ClaimRef {
                scope: Scope::Unsigned,
                name: name.clone(),
            },
            _ => return Err(self.too_deep(&path)),
        };
        self.node(start)?;
        Ok(Expr {
            kind: ExprKind::Claim(claim),
            span,
        })
    }

    /// The error for an accessor past `visitor.claims.NAME` (or `.unsigned.NAME`).
    fn too_deep(&self, path: &[(String, Span)]) -> ConditionError {
        let Some((name, span)) = path.get(path_limit(path)).or(path.last()) else {
            return self.unexpected(None);
        };
        self.error(
            ErrorKind::Syntax,
            span.start,
            format!("claims have no properties (\"{}\")", shorten(name)),
            Some("a claim is a boolean, string or number; objects are not supported"),
        )
    }
}

/// How many accessors a claim path has at most: `claims.NAME` or `claims.unsigned.NAME`.
/// One group being read: the top level, or a parenthesis not yet closed.
#[derive(Default)]
struct Group {
    /// Where its `(` is; `None` for the top level.
    open: Option<usize>,
    /// The `&&` chains a `||` has closed.
    ors: Vec<Expr>,
    /// The comparisons of the `&&` chain being read.
    ands: Vec<Expr>,
    /// The left side and the operator of a comparison whose right side is being read.
    compare: Option<(Expr, CompareOp, Span)>,
    /// Where the `!` before the operand being read are.
    bangs: Vec<usize>,
}

impl Group {
    fn close_and(&mut self) {
        if let Some(chain) = chain(std::mem::take(&mut self.ands), ExprKind::And) {
            self.ors.push(chain);
        }
    }

    fn finish(mut self) -> Expr {
        self.close_and();
        // A group is finished after an operand, so it has one.
        chain(self.ors, ExprKind::Or).unwrap_or(Expr::new(ExprKind::Literal(Literal::Null)))
    }
}

/// One operand as itself, several as one chain node.
fn chain(mut operands: Vec<Expr>, kind: fn(Vec<Expr>) -> ExprKind) -> Option<Expr> {
    match operands.len() {
        0 => None,
        1 => operands.pop(),
        _ => Some(Expr {
            span: operands[0].span.to(operands[operands.len() - 1].span),
            kind: kind(operands),
        }),
    }
}

fn top(groups: &mut Vec<Group>) -> &mut Group {
    if groups.is_empty() {
        groups.push(Group::default());
    }
    let last = groups.len() - 1;
    &mut groups[last]
}

fn compare_op(tok: &Tok) -> Option<CompareOp> {
    Some(match tok {
        Tok::EqEq => CompareOp::Eq,
        Tok::NotEq => CompareOp::Ne,
        Tok::Lt => CompareOp::Lt,
        Tok::Le => CompareOp::Le,
        Tok::Gt => CompareOp::Gt,
        Tok::Ge => CompareOp::Ge,
        _ => return None,
    })
}

fn path_limit(path: &[(String, Span)]) -> usize {
    if path.get(1).is_some_and(|(name, _)| name == "unsigned") {
        3
    } else {
        2
    }
}
