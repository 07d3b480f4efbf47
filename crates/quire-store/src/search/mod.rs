//! Search of a space's current content and of an organization's spaces.
//!
//! The index (`index`) lives in the database, beside the content it describes, and is updated
//! in the transaction that moves a space's main revision (`main_revision::main_changed`);
//! queries (`query`) are answered by the engine's full-text index.

pub mod index;
pub mod query;
