//! docs/permissions.md's "Operations" table, checked against the code: every operation the
//! server serves with a token (its route table, read from the `#[utoipa::path]` annotations as
//! the server reads it; `openapi.rs` keeps it equal to the router and to `docs/openapi.json`) is
//! named by exactly one row, and for every operation of the permission matrix (`matrix.rs`, whose
//! statuses are the server's), the role its row names first is the weakest role the matrix finds
//! allowed.
//!
//! How a row names operations, in its first column: each code span is `METHOD path`, or a bare
//! `METHOD` that applies to the next path too (`` `PATCH`, `DELETE .../teams/{teamId}` ``); a
//! path alone has the methods of the path before it. A path is a route template whose parameter
//! names are free (`{org}` is `{organizationId}`); `...` at its start stands for any beginning
//! of the route, at its end for the route itself and every route below it. A path that does not
//! end in `...` names exactly one operation for each of its methods, one that does at least one.
//! Anything outside code spans is prose.

use std::collections::{BTreeMap, BTreeSet};

use quire_server::openapi::{Access, RouteTable};

use crate::matrix::{MATRIX, ROLES};
use crate::openapi::repo_file;

const DOC: &str = "docs/permissions.md";

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/// What the "Needs" column may name first, and the caller of the matrix ([`ROLES`]) it is. The
/// matrix's space inherits its default level, so a member's role on it is their organization
/// role: `view` is `read`'s, `space admin` is `admin`'s.
const ROLE_TERMS: [(&str, &str); 10] = [
    ("admin", "admin"),
    ("space admin", "admin"),
    ("create", "create"),
    ("review", "review"),
    ("edit", "edit"),
    ("comment", "comment"),
    ("read", "read"),
    ("view", "read"),
    ("member or guest", "guest"),
    ("any token", "outsider"),
];

/// An operation as the route table names it: (`"PATCH"`, `"/v1/orgs/{organizationId}"`).
type Op = (String, String);

/// One row of the Operations table.
struct Row {
    /// Its line in docs/permissions.md, from 1.
    line: usize,
    needs: String,
    /// The operations its first column names.
    ops: BTreeSet<Op>,
}

/// Every operation of the route table that needs a token.
fn token_operations() -> BTreeSet<Op> {
    let (_, doc) = quire_server::router::routes().split_for_parts();
    let table = RouteTable::from_openapi(&doc).unwrap();
    table
        .iter()
        .filter(|(_, _, access)| matches!(access, Access::Scope(_) | Access::TokenOptional(_)))
        .map(|(method, route, _)| (method.to_string(), route.to_string()))
        .collect()
}

/// A route template with every parameter written `{}`, so that names do not matter.
fn unnamed(path: &str) -> String {
    let mut out = String::new();
    let mut in_param = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push_str("{}");
            }
            '}' => in_param = false,
            _ if !in_param => out.push(c),
            _ => {}
        }
    }
    out
}

/// Whether the table's `pattern` names `route` (see the module's documentation).
fn names(pattern: &str, route: &str) -> bool {
    let route = unnamed(route);
    let any_start = pattern.starts_with("...");
    let below = pattern.len() > 3 && pattern.ends_with("...");
    let core = unnamed(pattern.trim_start_matches("...").trim_end_matches("..."));
    let ends_at_segment = |at: usize| route[at..].is_empty() || route[at..].starts_with('/');
    match (any_start, below) {
        (false, false) => route == core,
        (true, false) => route.ends_with(&core),
        (false, true) => route.starts_with(&core) && ends_at_segment(core.len()),
        (true, true) => route
            .match_indices(&core)
            .any(|(at, _)| ends_at_segment(at + core.len())),
    }
}

/// The (methods, path) a cell of the Operation column names, in its code spans.
fn spans(cell: &str) -> Result<Vec<(Vec<String>, String)>, String> {
    let mut named = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let mut last: Vec<String> = Vec::new();
    let parts: Vec<&str> = cell.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return Err(format!("an unclosed code span in {cell:?}"));
    }
    for span in parts.iter().skip(1).step_by(2) {
        let words: Vec<&str> = span.split_whitespace().collect();
        let is_path = |w: &str| w.starts_with('/') || w.starts_with(".../");
        match words.as_slice() {
            [method] if METHODS.contains(method) => pending.push(method.to_string()),
            [method, path] if METHODS.contains(method) && is_path(path) => {
                pending.push(method.to_string());
                last = std::mem::take(&mut pending);
                named.push((last.clone(), path.to_string()));
            }
            [path] if is_path(path) && pending.is_empty() && !last.is_empty() => {
                named.push((last.clone(), path.to_string()));
            }
            _ => {
                return Err(format!(
                    "`{span}` is not `METHOD path`, `METHOD`, or a path after a method"
                ));
            }
        }
    }
    if !pending.is_empty() {
        return Err(format!("`{}` names no path", pending.join("`, `")));
    }
    Ok(named)
}

/// The Operations table's rows, each with the operations it names; or every fault found in it.
fn operations_table(served: &BTreeSet<Op>) -> Result<Vec<Row>, Vec<String>> {
    let text = std::fs::read_to_string(repo_file(DOC)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let section = lines
        .iter()
        .position(|l| *l == "## Operations")
        .expect("docs/permissions.md has a section \"## Operations\"");
    let header = (section..lines.len())
        .find(|&i| lines[i].starts_with("| Operation | Needs |"))
        .expect("the Operations section has a table `| Operation | Needs |`");
    let mut rows = Vec::new();
    let mut faults = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(header + 2) {
        if !line.starts_with('|') {
            break;
        }
        let at = format!("{DOC}:{}", i + 1);
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let [operations, needs] = cells.as_slice() else {
            faults.push(format!("{at}: the row has {} cells, not two", cells.len()));
            continue;
        };
        let named = match spans(operations) {
            Ok(named) if named.is_empty() => {
                faults.push(format!("{at}: the row names no operation"));
                continue;
            }
            Ok(named) => named,
            Err(why) => {
                faults.push(format!("{at}: {why}"));
                continue;
            }
        };
        let mut ops = BTreeSet::new();
        for (methods, path) in named {
            for method in methods {
                let matched: Vec<&Op> = served
                    .iter()
                    .filter(|(m, route)| *m == method && names(&path, route))
                    .collect();
                let family = path.len() > 3 && path.ends_with("...");
                if matched.is_empty() {
                    faults.push(format!(
                        "{at}: `{method} {path}` names no operation the server serves with a token"
                    ));
                } else if matched.len() > 1 && !family {
                    let all: Vec<String> = matched.iter().map(|(m, r)| format!("{m} {r}")).collect();
                    faults.push(format!(
                        "{at}: `{method} {path}` names {} operations, not one (write more of the \
                         path, or end it in `...` for every route below it): {}",
                        matched.len(),
                        all.join(", ")
                    ));
                }
                ops.extend(matched.into_iter().cloned());
            }
        }
        rows.push(Row {
            line: i + 1,
            needs: needs.to_string(),
            ops,
        });
    }
    if faults.is_empty() { Ok(rows) } else { Err(faults) }
}

fn table_or_panic(served: &BTreeSet<Op>) -> Vec<Row> {
    operations_table(served)
        .unwrap_or_else(|faults| panic!("{DOC}'s Operations table cannot be read:\n{}", faults.join("\n")))
}

/// Every route the server serves with a token has exactly one row: a new route fails here
/// until the table says who may call it, a removed one until its row goes.
#[test]
fn every_operation_with_a_token_is_one_row_of_the_operations_table() {
    let served = token_operations();
    let rows = table_or_panic(&served);
    let mut rows_of: BTreeMap<&Op, Vec<usize>> = served.iter().map(|op| (op, Vec::new())).collect();
    for row in &rows {
        for op in &row.ops {
            rows_of.get_mut(op).unwrap().push(row.line);
        }
    }
    let mut faults = Vec::new();
    for ((method, route), lines) in rows_of {
        match lines.as_slice() {
            [_] => {}
            [] => faults.push(format!(
                "`{method} {route}` needs a token but no row of the Operations table names it"
            )),
            _ => {
                let lines: Vec<String> = lines.iter().map(|l| format!("{DOC}:{l}")).collect();
                faults.push(format!(
                    "`{method} {route}` is named by several rows: {}",
                    lines.join(", ")
                ));
            }
        }
    }
    assert!(
        faults.is_empty(),
        "{DOC}'s Operations table does not match the route table:\n{}",
        faults.join("\n")
    );
}

/// The role a row of the table names first, and the caller of the matrix it is.
fn role_named(needs: &str) -> Option<(&'static str, &'static str)> {
    ROLE_TERMS.iter().copied().find(|(term, _)| {
        needs
            .strip_prefix(term)
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric()))
    })
}

/// The weakest caller that may call the operation, by the matrix's statuses: the last of the
/// callers from `admin` down that all get a 2xx. A weaker caller's 2xx past a refusal is not a
/// permission (deleting a team one cannot see answers 204 and changes nothing).
fn weakest_allowed(statuses: &[u16; 9]) -> Option<&'static str> {
    let allowed = |s: &u16| (200..300).contains(s);
    let run = statuses.iter().take_while(|s| allowed(s)).count();
    run.checked_sub(1).map(|last| ROLES[last])
}

/// For each operation of the permission matrix, the role its row of the table names first is
/// the weakest role the matrix (so the server) allows.
#[test]
fn the_operations_table_names_the_weakest_role_the_matrix_allows() {
    let served = token_operations();
    let rows = table_or_panic(&served);
    let mut faults = Vec::new();
    for (op, statuses) in MATRIX {
        let Some((method, route)) = op.split_once(' ') else {
            faults.push(format!("the matrix's `{op}` is not `METHOD route`"));
            continue;
        };
        let key = (method.to_string(), route.to_string());
        if !served.contains(&key) {
            faults.push(format!(
                "the matrix's `{op}` is not an operation the server serves with a token"
            ));
            continue;
        }
        // An operation of no row, or of several, is the other test's fault.
        let Some(row) = rows.iter().find(|row| row.ops.contains(&key)) else {
            continue;
        };
        let found = weakest_allowed(statuses);
        match role_named(&row.needs) {
            Some((_, role)) if Some(role) == found => {}
            named => faults.push(format!(
                "`{op}`: {DOC}:{} names {}, but the permission matrix finds {} ({statuses:?} \
                 for {ROLES:?})",
                row.line,
                named.map_or_else(
                    || format!("no role first ({:?})", row.needs),
                    |(term, role)| {
                        if term == role {
                            format!("`{term}`")
                        } else {
                            format!("`{term}` (the matrix's `{role}`)")
                        }
                    }
                ),
                found.map_or_else(
                    || "no caller allowed".to_string(),
                    |role| format!("`{role}` the weakest caller allowed")
                ),
            )),
        }
    }
    assert!(
        faults.is_empty(),
        "{DOC}'s Operations table disagrees with the permission matrix (tests/api/matrix.rs):\n{}",
        faults.join("\n")
    );
}

#[test]
fn the_table_reads_abbreviated_paths_as_documented() {
    assert!(names("/v1/orgs/{org}", "/v1/orgs/{organizationId}"));
    assert!(!names("/v1/orgs/{org}", "/v1/orgs/{organizationId}/teams"));
    assert!(names(
        ".../teams/{id}",
        "/v1/orgs/{organizationId}/teams/{teamId}"
    ));
    assert!(!names(".../teams/{id}", "/v1/orgs/{organizationId}/teams"));
    assert!(!names(".../members", "/v1/orgs/{o}/teams/{t}/members/{u}"));
    assert!(names("/v1/spaces/{id}/content...", "/v1/spaces/{s}/content"));
    assert!(names(
        "/v1/spaces/{id}/content...",
        "/v1/spaces/{s}/content/page/{p}"
    ));
    assert!(!names("/v1/spaces/{id}/content...", "/v1/spaces/{s}/contents"));
    assert!(names(".../permissions...", "/v1/spaces/{s}/permissions"));
    assert!(names(
        ".../permissions...",
        "/v1/collections/{c}/permissions/users/{u}"
    ));
    assert!(!names(".../permissions...", "/v1/spaces/{s}/permissionsx"));
    let read = |cell: &str| -> Result<Vec<(String, String)>, String> {
        Ok(spans(cell)?
            .into_iter()
            .map(|(methods, path)| (methods.join(" "), path))
            .collect())
    };
    let read_ok = read("`GET /a`, `PATCH`, `DELETE .../b`; `.../c` and prose");
    let expected = [
        ("GET", "/a"),
        ("PATCH DELETE", ".../b"),
        ("PATCH DELETE", ".../c"),
    ]
    .map(|(m, p)| (m.to_string(), p.to_string()));
    assert_eq!(read_ok, Ok(expected.to_vec()));
    assert!(
        read("`GET /a` (with `x`)").is_err(),
        "a code span that is no path"
    );
    assert!(read("`PATCH` and nothing").is_err(), "a method without a path");
    assert!(read("`.../a`").is_err(), "a path without a method");
    assert!(read("`GET ...a`").is_err(), "`...` not followed by a segment");
    assert_eq!(
        weakest_allowed(&[200, 403, 403, 403, 403, 403, 204, 404, 401]),
        Some("admin")
    );
    assert_eq!(weakest_allowed(&[403; 9]), None);
    assert_eq!(role_named("admin, or self"), Some(("admin", "admin")));
    assert_eq!(
        role_named("member or guest; lists"),
        Some(("member or guest", "guest"))
    );
    assert_eq!(role_named("view, on a space"), Some(("view", "read")));
    assert_eq!(role_named("administrators"), None);
}
