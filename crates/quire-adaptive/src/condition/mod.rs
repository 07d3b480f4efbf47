//! The condition language: who sees a site section, a site space or a page.
//!
//! A condition is an expression over the visitor's claims, in a small subset of the
//! JavaScript GitBook evaluates (`docs/adaptive-content.md` has the grammar, the types and
//! every message):
//!
//! ```text
//! visitor.claims.isBetaUser && visitor.claims.plan in ["pro", "enterprise"]
//! visitor.claims.unsigned.persona == "admin" || !(visitor.claims.seats < 10)
//! ```
//!
//! [`Condition::parse`] reads it (a syntax error or a limit is a [`ConditionError`] with its
//! position), [`Condition::check`] holds it against the site's [`AdaptiveSchema`] when it is
//! set, and [`Condition::evaluate`] decides visibility for the API and the reader site alike.
//! A blank condition is no condition: always visible.

pub mod ast;
mod check;
mod error;
mod eval;
pub(crate) mod lexer;
mod parser;

pub use ast::{ClaimRef, CompareOp, Expr, ExprKind, Item, Literal, Scope, Span};
pub use error::{ConditionError, ErrorKind};
pub use eval::Claims;

use crate::schema::AdaptiveSchema;

/// A parsed condition, with the text it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    source: String,
    expr: Option<Expr>,
}

impl Condition {
    /// Reads a condition. Blank text (only spaces, tabs and line breaks) is the empty
    /// condition. Never panics; the limits of [`crate::limits`] apply.
    pub fn parse(source: &str) -> Result<Condition, ConditionError> {
        Self::parse_with(source, parser::Limits::DEFAULT)
    }

    pub(crate) fn parse_with(source: &str, limits: parser::Limits) -> Result<Condition, ConditionError> {
        let expr = parser::parse(source, limits)?;
        Ok(Condition {
            source: source.to_owned(),
            expr,
        })
    }

    /// Reads a condition and checks it against `schema`: what the API does when a condition
    /// is set.
    pub fn parse_checked(source: &str, schema: &AdaptiveSchema) -> Result<Condition, ConditionError> {
        let condition = Condition::parse(source)?;
        condition.check(schema)?;
        Ok(condition)
    }

    /// The text as given, to store and to answer back.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The syntax tree; `None` for the empty condition.
    pub fn expr(&self) -> Option<&Expr> {
        self.expr.as_ref()
    }

    /// Whether this is the empty condition (always visible).
    pub fn is_empty(&self) -> bool {
        self.expr.is_none()
    }

    /// Checks that every claim the condition reads is in `schema` (signed and unsigned
    /// apart) and that every operator fits its operands' types; the error's position is that
    /// of the claim, value or operator at fault.
    pub fn check(&self, schema: &AdaptiveSchema) -> Result<(), ConditionError> {
        let Some(expr) = &self.expr else {
            return Ok(());
        };
        check::check(expr, schema).map_err(|error| {
            ConditionError::new(
                error.kind,
                &self.source,
                error.offset,
                error.message,
                error.detail,
            )
        })
    }

    /// Whether a visitor with `claims` sees what this condition guards. A condition that no
    /// longer checks against the schema (the schema changed since) still evaluates, by the
    /// rules of [`Claims`] and `docs/adaptive-content.md`: absent claims are null.
    pub fn evaluate(&self, claims: &Claims) -> bool {
        self.expr.as_ref().is_none_or(|expr| eval::is_true(expr, claims))
    }
}

#[cfg(test)]
mod tests;
