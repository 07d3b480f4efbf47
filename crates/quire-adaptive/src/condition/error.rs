//! The one error of the condition language: what is wrong, and where.

use std::fmt;

/// What kind of problem a [`ConditionError`] reports. Each is a 400 for the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text is not a condition.
    Syntax,
    /// The condition is over one of the limits of [`crate::limits`].
    Limit,
    /// A claim the schema does not have (signed and unsigned claims are told apart).
    UnknownClaim,
    /// An operator applied to values it does not fit, or a comparison that can never hold.
    Type,
}

/// A condition refused, with the position of the problem.
///
/// `offset` is a byte offset into the source, at most its length (the length itself means
/// "at the end") and always on a character boundary. `line` and `column` are 1-based and
/// count characters (Unicode scalar values), as an editor shows them; the message names the
/// line only when the source has more than one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionError {
    pub kind: ErrorKind,
    /// What is wrong, without the position (`unknown claim "plann"`).
    pub message: String,
    /// What would be right, when there is something to say (`the schema has: plan, beta`).
    pub detail: Option<String>,
    pub offset: usize,
    pub line: usize,
    pub column: usize,
    multiline: bool,
}

impl ConditionError {
    pub(crate) fn new(
        kind: ErrorKind,
        source: &str,
        offset: usize,
        message: String,
        detail: Option<String>,
    ) -> ConditionError {
        // Positions come from spans of this source; clamping keeps the promise above even
        // for a span of a tree the parser did not build.
        let mut offset = offset.min(source.len());
        while !source.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &source[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = source[line_start..offset].chars().count() + 1;
        ConditionError {
            kind,
            message,
            detail,
            offset,
            line,
            column,
            multiline: source.contains('\n'),
        }
    }
}

impl fmt::Display for ConditionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.multiline {
            write!(
                f,
                "{} at line {}, column {}",
                self.message, self.line, self.column
            )?;
        } else {
            write!(f, "{} at column {}", self.message, self.column)?;
        }
        if let Some(detail) = &self.detail {
            write!(f, "; {detail}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConditionError {}
