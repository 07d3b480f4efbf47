//! The limits of adaptive content, in one place.
//!
//! They bound what a site's owner can store and what the reader site does for every visitor:
//! a condition is evaluated on each page view of each section, site space and page that has
//! one, so its cost must be small and known before it is stored. The condition parser checks
//! the length before it reads anything, and counts nesting and nodes as it builds the tree.
//! The parser, the checker, the evaluator and the printer walk with explicit stacks, so their
//! use of the thread's stack does not depend on the input; the depth limit bounds the tree
//! for what is recursive by nature (the derived `Drop`, `Clone`, `PartialEq` and `Debug` of
//! the tree). See `docs/adaptive-content.md`, "Limits".

/// Characters (Unicode scalar values) of one condition: GitBook's `Expression` has
/// `maxLength: 1024`, which JSON Schema counts in characters. At most 4 KiB of UTF-8.
pub const MAX_CONDITION_CHARS: usize = 1024;
/// Parentheses and negations (`!`) open at once in a condition. The syntax tree is then at
/// most `3 * (MAX_CONDITION_DEPTH + 1) + 1` levels deep (`||`, `&&` and a comparison around
/// each group, and a value).
pub const MAX_CONDITION_DEPTH: usize = 32;
/// Nodes of one condition's tree: values, claims, operators and the items of `in` lists.
/// Evaluation is linear in them.
pub const MAX_CONDITION_NODES: usize = 256;

/// Claims in one adaptive schema, signed and unsigned together.
pub const MAX_CLAIMS: usize = 100;
/// Characters of a claim name (names are ASCII: `[A-Za-z_][A-Za-z0-9_]*`).
pub const MAX_CLAIM_NAME_CHARS: usize = 64;
/// Values of one enum claim (each is also a template condition).
pub const MAX_ENUM_VALUES: usize = 100;
/// Characters of one enum value. A template condition quoting the longest value with every
/// character escaped still fits in [`MAX_CONDITION_CHARS`].
pub const MAX_ENUM_VALUE_CHARS: usize = 100;
/// Characters of a claim's (or the unsigned object's) `description`.
pub const MAX_DESCRIPTION_CHARS: usize = 500;
/// Bytes of the adaptive schema as compact JSON.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
