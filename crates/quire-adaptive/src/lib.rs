//! Adaptive content: what a site shows to whom, decided from the visitor's claims.
//!
//! - [`schema`]: the site's adaptive schema (a restricted JSON Schema draft-07) validated
//!   into an [`AdaptiveSchema`]: which claims a visitor carries, signed or unsigned, and
//!   their types (boolean, string, number, integer, string enum).
//! - [`templates`]: the [`TemplateCondition`]s derived from a schema.
//! - [`condition`]: the condition language of sections, site spaces and pages: parsed into a
//!   [`Condition`], checked against a schema, evaluated against a visitor's [`Claims`].
//! - [`limits`]: every bound, as named constants.
//!
//! Pure logic, no I/O: the sites API stores schemas and conditions and calls these; the
//! reader site evaluates the same [`Condition`]s with the same [`Claims`], so the API's
//! `published` and what a visitor sees cannot disagree. The language, its types and its
//! messages are described in `docs/adaptive-content.md`.

pub mod condition;
pub mod limits;
pub mod schema;
pub mod templates;

pub use condition::{Claims, Condition, ConditionError};
pub use schema::{AdaptiveSchema, Claim, ClaimKind, SchemaError};
pub use templates::{TemplateCondition, template_conditions};
