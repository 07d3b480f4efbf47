//! The named limits of everything in this crate: a description is input, and no input drives
//! unbounded memory, recursion or CPU.

/// The largest text of one file of a description (GitBook's own is about 1.7 MB of JSON).
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;
/// How many files one description may gather through relative `$ref`s, the entry file included.
pub const MAX_FILES: usize = 64;
/// How deeply a parsed file's values may nest.
pub const MAX_NESTING: usize = 128;
/// How many errors a check reports (the count of all of them is reported too).
pub const MAX_ERRORS: usize = 20;
