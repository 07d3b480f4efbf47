//! The API reference pages of a description, written as markdown with no I/O: one page per tag,
//! each operation of the tag with its parameters, request body, responses and an example
//! `curl` request. OpenAPI 3.0, 3.1 and Swagger 2.0 descriptions are read as JSON values;
//! `$ref`s are followed within a file and across the files of the [`Filesystem`].
//!
//! Input drives no unbounded work: schemas nest at most [`MAX_SCHEMA_DEPTH`] levels, a schema
//! met again inside itself is named with "(circular)" rather than expanded, and each page stops
//! at [`MAX_PAGE_BYTES`].
//!
//! [`Filesystem`]: crate::filesystem::Filesystem

mod example;
mod markdown;
mod operation;
mod refs;
mod schema;

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use self::example::curl;
use self::markdown::{Md, balanced, code, fenced, first_paragraph_plain, heading_text};
use self::markdown::{one_line, slugify};
use self::refs::{At, Refs};
use crate::filesystem::FileEntry;

/// How many levels of nested properties a schema list shows; deeper levels are replaced by a
/// note. It also bounds every recursion over schemas (labels, examples, `allOf` merging).
pub const MAX_SCHEMA_DEPTH: usize = 12;
/// How many operations of a description are written (GitBook's own has 377).
pub const MAX_OPERATIONS: usize = 5_000;
/// How many pages (tags) a description gets.
pub const MAX_PAGES: usize = 1_000;
/// The largest markdown of one page, its closing note included; a longer page is cut with a
/// note.
pub const MAX_PAGE_BYTES: usize = 2 * 1024 * 1024;
/// The largest markdown of all the pages of a description together (GitBook's own makes about
/// 9 MB): an operation with many tags is written on each of their pages, which would otherwise
/// multiply. Pages past it are cut with a note.
pub const MAX_TOTAL_BYTES: usize = 64 * 1024 * 1024;
/// How many `$ref`s in a row are followed before the chain counts as unresolvable (a chain of
/// refs that loops back on itself resolves to nothing).
pub const MAX_REF_HOPS: usize = 32;
/// How many `allOf` members, at all levels, are merged into one object's property list.
pub const MAX_ALL_OF_MEMBERS: usize = 256;
/// How many allowed values of an `enum` are listed.
pub const MAX_ENUM_VALUES: usize = 50;
/// How many values one generated example holds at most.
pub const MAX_EXAMPLE_VALUES: usize = 2_000;
/// The largest example body written into a `curl` command; a longer one is replaced by
/// `@body.json`.
pub const MAX_EXAMPLE_BYTES: usize = 64 * 1024;

/// Room kept under [`MAX_PAGE_BYTES`] for the note that says a page was cut.
const CUT_NOTE_ROOM: usize = 256;

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// The title of the page of untagged operations when some operations have tags; when none
/// has, the page is titled after the API (`info.title`).
pub const UNTAGGED_TITLE: &str = "Other";

/// One page of an API reference: the operations of one tag.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferencePage {
    /// The tag's title: its `x-page-title` (GitBook's extension) if it has one, else its
    /// name. Operations without a tag go to a page titled [`UNTAGGED_TITLE`], placed last, or,
    /// when no operation has a tag, titled after the API (`info.title`, else "API reference").
    pub title: String,
    /// A URL slug of the title (lowercase ascii, words joined by '-', non-empty, unique among
    /// the pages returned: a repeated slug gets `-2`, `-3`…).
    pub slug: String,
    /// The tag's `x-page-description`, else the first paragraph of its description, as plain
    /// text.
    pub description: Option<String>,
    /// The page body, as CommonMark/GFM markdown: the tag's whole description, then one
    /// `##` section per operation. It holds no `#` title: the caller shows `title`.
    pub markdown: String,
}

/// The reference pages of a description, in the order of its `tags` list, then tags first
/// seen on operations in path order (then the page of untagged operations). A tag of the
/// list that no operation has still gets its page (its description). An operation with
/// several tags is written on each of their pages.
pub fn pages(fs: &[FileEntry]) -> Vec<ReferencePage> {
    let refs = Refs::new(fs);
    let Some(root) = refs.entry() else {
        return Vec::new();
    };
    let operations = operations(&refs, root);
    let groups = groups(root.value, &operations);
    let mut renderer = Renderer {
        refs,
        root,
        stack: Vec::new(),
        listed: HashMap::new(),
        remaining: MAX_TOTAL_BYTES,
    };
    let mut slugs = HashSet::new();
    groups
        .iter()
        .map(|group| renderer.page(group, &operations, &mut slugs))
        .collect()
}

/// One operation of the description.
struct Operation<'a> {
    path: &'a str,
    method: &'a str,
    /// The path item, for its parameters and servers.
    item: At<'a>,
    operation: At<'a>,
}

/// The operations of the description, in path order then in the order of their methods
/// within each path.
fn operations<'a>(refs: &Refs<'a>, root: At<'a>) -> Vec<Operation<'a>> {
    let mut list = Vec::new();
    let Some(paths) = root.value.get("paths").and_then(Value::as_object) else {
        return list;
    };
    for (path, item) in paths {
        let Ok(item) = refs.resolve(root.with(item)) else {
            continue;
        };
        let Some(methods) = item.at.value.as_object() else {
            continue;
        };
        for (method, operation) in methods {
            if !METHODS.contains(&method.as_str()) || !operation.is_object() {
                continue;
            }
            if list.len() == MAX_OPERATIONS {
                return list;
            }
            list.push(Operation {
                path,
                method,
                item: item.at,
                operation: item.at.with(operation),
            });
        }
    }
    list
}

/// The operations of one page.
struct Group<'a> {
    title: String,
    tag: Option<&'a Value>,
    operations: Vec<usize>,
}

fn groups<'a>(root: &'a Value, operations: &[Operation<'a>]) -> Vec<Group<'a>> {
    let mut groups: Vec<Group<'a>> = Vec::new();
    let mut by_name: HashMap<&'a str, usize> = HashMap::new();
    let declared = root.get("tags").and_then(Value::as_array);
    for tag in declared.into_iter().flatten() {
        let Some(name) = tag.get("name").and_then(Value::as_str) else {
            continue;
        };
        if by_name.contains_key(name) || groups.len() == MAX_PAGES {
            continue;
        }
        by_name.insert(name, groups.len());
        groups.push(Group {
            title: tag_title(tag, name),
            tag: Some(tag),
            operations: Vec::new(),
        });
    }
    let mut untagged = Vec::new();
    for (index, operation) in operations.iter().enumerate() {
        let tags = tags_of(operation.operation.value);
        if tags.is_empty() {
            untagged.push(index);
        }
        for name in tags {
            let group = match by_name.get(name) {
                Some(group) => *group,
                None if groups.len() < MAX_PAGES => {
                    by_name.insert(name, groups.len());
                    groups.push(Group {
                        title: one_line(name),
                        tag: None,
                        operations: Vec::new(),
                    });
                    groups.len() - 1
                }
                None => continue,
            };
            groups[group].operations.push(index);
        }
    }
    if !untagged.is_empty() {
        let title = if untagged.len() == operations.len() {
            api_title(root)
        } else {
            UNTAGGED_TITLE.to_owned()
        };
        groups.push(Group {
            title,
            tag: None,
            operations: untagged,
        });
    }
    groups
}

fn tag_title(tag: &Value, name: &str) -> String {
    let title = tag
        .get("x-page-title")
        .and_then(Value::as_str)
        .map(one_line)
        .filter(|title| !title.is_empty());
    title.unwrap_or_else(|| one_line(name))
}

fn api_title(root: &Value) -> String {
    let title = root
        .pointer("/info/title")
        .and_then(Value::as_str)
        .map(one_line)
        .filter(|title| !title.is_empty());
    title.unwrap_or_else(|| "API reference".to_owned())
}

/// The tags of an operation, each once.
fn tags_of(operation: &Value) -> Vec<&str> {
    let mut seen = HashSet::new();
    let listed = operation.get("tags").and_then(Value::as_array);
    let tags = listed.into_iter().flatten().filter_map(Value::as_str);
    tags.filter(|tag| seen.insert(*tag)).collect()
}

fn str_field<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
}

fn unique_slug(title: &str, taken: &mut HashSet<String>) -> String {
    let base = slugify(title);
    let mut slug = base.clone();
    let mut counter = 1;
    while taken.contains(&slug) {
        counter += 1;
        slug = format!("{base}-{counter}");
    }
    taken.insert(slug.clone());
    slug
}

/// The heading of an operation's section, as written after `## `.
fn operation_heading(operation: &Value, method: &str, path: &str) -> String {
    match str_field(operation, "summary").or_else(|| str_field(operation, "operationId")) {
        Some(text) => heading_text(text),
        None => heading_text(&format!("{} {path}", method.to_ascii_uppercase())),
    }
}

/// A parameter of an operation.
enum Parameter<'a> {
    Found {
        at: At<'a>,
        name: &'a str,
        location: &'a str,
    },
    Unresolved(String),
}

/// Writes the pages. It carries the description and the schemas being expanded, so that a
/// schema met again inside itself is named rather than expanded.
struct Renderer<'a> {
    refs: Refs<'a>,
    root: At<'a>,
    stack: Vec<*const Value>,
    /// The named schemas listed on the current page, with the depth of their listing: met
    /// again on the page, at that depth or deeper, they refer to the listing above instead of
    /// repeating it (GitBook's document model, in the bodies of a dozen operations of one tag,
    /// made pages of megabytes).
    listed: HashMap<*const Value, usize>,
    /// What [`MAX_TOTAL_BYTES`] leaves for the pages still to write.
    remaining: usize,
}

impl<'a> Renderer<'a> {
    fn page(
        &mut self,
        group: &Group<'a>,
        operations: &[Operation<'a>],
        slugs: &mut HashSet<String>,
    ) -> ReferencePage {
        let tag_description = group.tag.and_then(|tag| str_field(tag, "description"));
        let description = group
            .tag
            .and_then(|tag| str_field(tag, "x-page-description"))
            .map(one_line)
            .or_else(|| tag_description.and_then(first_paragraph_plain));
        let limit = MAX_PAGE_BYTES.min(self.remaining).saturating_sub(CUT_NOTE_ROOM);
        let mut md = Md::new(limit);
        self.listed.clear();
        if let Some(text) = tag_description {
            md.push(&format!("{}\n\n", balanced(text)));
        }
        for index in &group.operations {
            if md.is_cut() {
                break;
            }
            if let Some(operation) = operations.get(*index) {
                self.write_operation(&mut md, operation);
            }
        }
        let note =
            format!("\n\n> This page is cut here: the rest would make it longer than {limit} bytes.\n");
        let markdown = md.finish(&note);
        self.remaining = self.remaining.saturating_sub(markdown.len());
        ReferencePage {
            title: group.title.clone(),
            slug: unique_slug(&group.title, slugs),
            description,
            markdown,
        }
    }

    fn write_operation(&mut self, md: &mut Md, operation: &Operation<'a>) {
        let value = operation.operation.value;
        let method = operation.method.to_ascii_uppercase();
        let heading = operation_heading(value, operation.method, operation.path);
        md.push(&format!(
            "## {heading}\n\n`{method}` {}\n\n",
            code(operation.path)
        ));
        if value.get("deprecated").and_then(Value::as_bool) == Some(true) {
            md.push("**Deprecated.**\n\n");
        }
        if let Some(description) = str_field(value, "description") {
            md.push(&format!("{}\n\n", balanced(description)));
        }
        let parameters = self.parameters(operation);
        self.write_parameters(md, &parameters);
        self.write_request_body(md, operation, &parameters);
        self.write_responses(md, operation);
        if md.is_cut() {
            return;
        }
        let request = self.example_request(operation, &parameters);
        md.push(&format!(
            "### Example request\n\n{}",
            fenced(&curl(&request), "bash")
        ));
    }

    /// The path item's parameters, then the operation's, which replace those of the same
    /// name and location.
    fn parameters(&self, operation: &Operation<'a>) -> Vec<Parameter<'a>> {
        let mut list: Vec<Parameter<'a>> = Vec::new();
        let mut positions: HashMap<(&str, &str), usize> = HashMap::new();
        let sources = [operation.item, operation.operation];
        let declared = sources.into_iter().filter_map(|at| {
            let list = at.value.get("parameters").and_then(Value::as_array)?;
            Some(list.iter().map(move |p| at.with(p)))
        });
        for parameter in declared.flatten() {
            let node = match self.refs.resolve(parameter) {
                Ok(node) => node,
                Err(target) => {
                    list.push(Parameter::Unresolved(target));
                    continue;
                }
            };
            let (Some(name), Some(location)) = (
                node.at.value.get("name").and_then(Value::as_str),
                node.at.value.get("in").and_then(Value::as_str),
            ) else {
                continue;
            };
            let found = Parameter::Found {
                at: node.at,
                name,
                location,
            };
            match positions.get(&(name, location)) {
                Some(position) => list[*position] = found,
                None => {
                    positions.insert((name, location), list.len());
                    list.push(found);
                }
            }
        }
        list
    }
}

#[cfg(test)]
mod tests;
