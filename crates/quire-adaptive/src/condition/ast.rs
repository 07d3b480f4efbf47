//! The syntax tree of a condition, and its printer.
//!
//! The tree the parser builds is bounded ([`crate::limits`]); a tree built by hand is not, so
//! the printer (the one piece that takes any tree) works with an explicit stack instead of
//! recursion. Printing then parsing gives back the same tree, spans aside: the printer adds
//! exactly the parentheses that keep a nested `&&` inside a `&&` (and `||` inside `||`) a
//! separate node, and those that precedence needs.

use std::fmt::{self, Write};

/// Byte offsets into the condition's source, `start..end`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    pub(crate) fn to(self, other: Span) -> Span {
        Span::new(self.start, other.end)
    }
}

/// One node of a condition, with the source it was read from (empty in a tree built by hand).
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    Claim(ClaimRef),
    /// `!operand`.
    Not(Box<Expr>),
    /// `a && b && ...`: a chain of one precedence level is one node (the parser builds no
    /// deeper tree for a long chain); at least two operands.
    And(Vec<Expr>),
    /// `a || b || ...`, as [`ExprKind::And`].
    Or(Vec<Expr>),
    /// `left op right`. Comparisons do not chain: `a < b < c` is a syntax error.
    Compare {
        op: CompareOp,
        /// Where the operator is, for the errors about the comparison itself.
        op_span: Span,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `needle in [item, ...]`: true when the needle equals one of the items.
    In {
        needle: Box<Expr>,
        items: Vec<Item>,
    },
}

/// A literal value.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    /// Always finite in a parsed condition.
    Number(f64),
    String(String),
}

/// One literal of an `in` list.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub value: Literal,
    pub span: Span,
}

/// `visitor.claims.NAME` (signed) or `visitor.claims.unsigned.NAME` (unsigned).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClaimRef {
    pub scope: Scope,
    pub name: String,
}

/// Where a claim comes from: the visitor's signed token, or the unsigned claims (URL
/// parameters, cookies) that anyone can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Signed,
    Unsigned,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// `==` (also written `===`).
    Eq,
    /// `!=` (also written `!==`).
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompareOp {
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Eq => "==",
            CompareOp::Ne => "!=",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
        }
    }

    pub(crate) fn is_equality(self) -> bool {
        matches!(self, CompareOp::Eq | CompareOp::Ne)
    }
}

impl Expr {
    pub fn new(kind: ExprKind) -> Expr {
        Expr {
            kind,
            span: Span::default(),
        }
    }
}

impl ClaimRef {
    pub fn signed(name: &str) -> ClaimRef {
        ClaimRef {
            scope: Scope::Signed,
            name: name.to_owned(),
        }
    }

    pub fn unsigned(name: &str) -> ClaimRef {
        ClaimRef {
            scope: Scope::Unsigned,
            name: name.to_owned(),
        }
    }
}

/// Whether a name can follow a dot (`visitor.claims.NAME`); other names are written in
/// brackets (`visitor.claims["NAME"]`).
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl fmt::Display for ClaimRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.scope {
            Scope::Signed => "visitor.claims",
            Scope::Unsigned => "visitor.claims.unsigned",
        })?;
        // A signed claim named `unsigned` cannot be written: the schema refuses that name.
        if is_identifier(&self.name) {
            write!(f, ".{}", self.name)
        } else {
            f.write_char('[')?;
            write_string(f, &self.name)?;
            f.write_char(']')
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("null"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Number(n) => write_number(f, *n),
            Literal::String(s) => write_string(f, s),
        }
    }
}

/// The shortest decimal that reads back as the same `f64`; exponent notation when that is
/// shorter than the plain digits (`1e300`, not 301 characters).
fn write_number(f: &mut fmt::Formatter<'_>, n: f64) -> fmt::Result {
    let plain = format!("{n}");
    let exponent = format!("{n:e}");
    f.write_str(if exponent.len() < plain.len() {
        &exponent
    } else {
        &plain
    })
}

/// A string literal in double quotes, escaped so that the lexer reads it back.
pub(crate) fn write_string(f: &mut impl Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// What the printer still has to write, innermost last.
enum Work<'a> {
    Expr(&'a Expr),
    Grouped(&'a Expr),
    Text(&'static str),
    Owned(String),
}

/// Whether `child`, as an operand of `parent`, needs parentheses to parse back as itself.
fn needs_group(parent: &ExprKind, child: &ExprKind) -> bool {
    match parent {
        ExprKind::And(_) => matches!(child, ExprKind::And(_) | ExprKind::Or(_)),
        ExprKind::Or(_) => matches!(child, ExprKind::Or(_)),
        ExprKind::Not(_) | ExprKind::Compare { .. } | ExprKind::In { .. } => matches!(
            child,
            ExprKind::And(_) | ExprKind::Or(_) | ExprKind::Compare { .. } | ExprKind::In { .. }
        ),
        ExprKind::Literal(_) | ExprKind::Claim(_) => false,
    }
}

fn operand<'a>(parent: &Expr, child: &'a Expr) -> Work<'a> {
    if needs_group(&parent.kind, &child.kind) {
        Work::Grouped(child)
    } else {
        Work::Expr(child)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut stack = vec![Work::Expr(self)];
        while let Some(work) = stack.pop() {
            let expr = match work {
                Work::Text(text) => {
                    f.write_str(text)?;
                    continue;
                }
                Work::Owned(text) => {
                    f.write_str(&text)?;
                    continue;
                }
                Work::Grouped(expr) => {
                    f.write_char('(')?;
                    stack.push(Work::Text(")"));
                    expr
                }
                Work::Expr(expr) => expr,
            };
            // Pushed in reverse: the stack pops the first operand first.
            match &expr.kind {
                ExprKind::Literal(literal) => write!(f, "{literal}")?,
                ExprKind::Claim(claim) => write!(f, "{claim}")?,
                ExprKind::Not(inner) => {
                    f.write_char('!')?;
                    stack.push(operand(expr, inner));
                }
                ExprKind::And(operands) | ExprKind::Or(operands) => {
                    let (separator, empty) = match expr.kind {
                        ExprKind::And(_) => (" && ", "true"),
                        _ => (" || ", "false"),
                    };
                    // Only a tree built by hand has no operand: print the chain's identity.
                    if operands.is_empty() {
                        f.write_str(empty)?;
                    }
                    for (i, child) in operands.iter().enumerate().rev() {
                        stack.push(operand(expr, child));
                        if i > 0 {
                            stack.push(Work::Text(separator));
                        }
                    }
                }
                ExprKind::Compare { op, left, right, .. } => {
                    stack.push(operand(expr, right));
                    stack.push(Work::Text(match op {
                        CompareOp::Eq => " == ",
                        CompareOp::Ne => " != ",
                        CompareOp::Lt => " < ",
                        CompareOp::Le => " <= ",
                        CompareOp::Gt => " > ",
                        CompareOp::Ge => " >= ",
                    }));
                    stack.push(operand(expr, left));
                }
                ExprKind::In { needle, items } => {
                    let mut list = String::from(" in [");
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            list.push_str(", ");
                        }
                        write!(list, "{}", item.value)?;
                    }
                    list.push(']');
                    // The list holds only literals: written in one piece after the needle.
                    stack.push(Work::Owned(list));
                    stack.push(operand(expr, needle));
                }
            }
        }
        Ok(())
    }
}
