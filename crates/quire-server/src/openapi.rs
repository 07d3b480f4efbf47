//! quire's OpenAPI 3.1 document and its route table, both read from the handlers'
//! `#[utoipa::path]` annotations: a handler is routed by the path and method it declares, and
//! the token scope it needs is the one its `security(...)` names. A route either names exactly
//! one scope or declares itself public (`security(())`); building the router refuses anything
//! else, naming the route, so no route can be served without deciding who may call it.
//!
//! The document is assembled once at startup ([`Api::new`]) and served as bytes by
//! `GET /v1/openapi.json`; `docs/openapi.json` is its snapshot (tests/api/openapi.rs).

use std::collections::HashMap;

use axum::extract::MatchedPath;
use axum::http::Method;
use axum::http::request::Parts;
use serde_json::{Map, Value, json};
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::{Operation, PathItem};

use crate::error::ApiError;

/// The name of the one security scheme: `Authorization: Bearer <token>`.
pub const SECURITY_SCHEME: &str = "token";

/// The address the committed snapshot is generated for (the default `--listen`).
pub const SNAPSHOT_URL: &str = "http://127.0.0.1:8080";

/// What an operation asks of its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// No token: health, metrics, the document itself, signed file URLs.
    Public,
    /// A valid token; a token with scopes must carry this one.
    Scope(&'static str),
    /// No token, or a valid one with this scope: `security((), ("token" = [scope]))`, for what
    /// anyone may read when its owner made it public (a public OpenAPI specification's content).
    TokenOptional(&'static str),
}

/// Every route the router serves, by its template as axum matches it (`MatchedPath`) and method.
#[derive(Debug, Default)]
pub struct RouteTable {
    routes: HashMap<String, Vec<(Method, Access)>>,
}

impl RouteTable {
    /// Reads each operation's access from its security requirement. Errs, naming the route, on
    /// an operation that declares none, several, an unknown scheme or an unknown scope.
    pub fn from_openapi(doc: &OpenApi) -> Result<RouteTable, String> {
        let mut routes: HashMap<String, Vec<(Method, Access)>> = HashMap::new();
        for (path, item) in doc.paths.paths.iter() {
            for (method, operation) in operations(item) {
                let access = access_of(operation).map_err(|why| {
                    format!("route {method} {path} {why}; every route declares its access in its #[utoipa::path]: \
                             `security((\"{SECURITY_SCHEME}\" = [\"<scope>\"]))`, or `security(())` for a public one")
                })?;
                routes.entry(path.clone()).or_default().push((method, access));
            }
        }
        Ok(RouteTable { routes })
    }

    /// The access of a route (HEAD is answered by the GET handler, so it is GET's).
    pub fn access(&self, method: &Method, route: &str) -> Option<Access> {
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        self.routes
            .get(route)?
            .iter()
            .find(|(m, _)| m == method)
            .map(|(_, access)| *access)
    }

    /// Every (method, route, access), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&Method, &str, Access)> {
        self.routes
            .iter()
            .flat_map(|(route, methods)| methods.iter().map(move |(m, a)| (m, route.as_str(), *a)))
    }
}

fn operations(item: &PathItem) -> impl Iterator<Item = (Method, &Operation)> {
    [
        (Method::GET, &item.get),
        (Method::PUT, &item.put),
        (Method::POST, &item.post),
        (Method::DELETE, &item.delete),
        (Method::OPTIONS, &item.options),
        (Method::HEAD, &item.head),
        (Method::PATCH, &item.patch),
        (Method::TRACE, &item.trace),
    ]
    .into_iter()
    .filter_map(|(m, op)| op.as_ref().map(|op| (m, op)))
}

fn access_of(operation: &Operation) -> Result<Access, String> {
    let Some(requirements) = &operation.security else {
        return Err("declares no security".into());
    };
    // `SecurityRequirement` keeps its map private; its serialized form is the map.
    let requirements = serde_json::to_value(requirements).map_err(|e| e.to_string())?;
    let requirements = requirements.as_array().cloned().unwrap_or_default();
    let empty = |r: &Value| r.as_object().is_some_and(serde_json::Map::is_empty);
    let requirement = match requirements.as_slice() {
        [one] => one,
        [none, token] if empty(none) && !empty(token) => {
            return match scoped(token)? {
                Access::Scope(scope) => Ok(Access::TokenOptional(scope)),
                other => Ok(other),
            };
        }
        _ => {
            return Err(format!(
                "declares {} security requirements, not one (or none and one)",
                requirements.len()
            ));
        }
    };
    scoped(requirement)
}

/// The access one security requirement names: public when empty, else its one scope.
fn scoped(requirement: &Value) -> Result<Access, String> {
    let requirement = requirement.as_object().cloned().unwrap_or_default();
    if requirement.is_empty() {
        return Ok(Access::Public);
    }
    let scopes = match (requirement.len(), requirement.get(SECURITY_SCHEME)) {
        (1, Some(Value::Array(scopes))) => scopes,
        _ => {
            return Err(format!(
                "names a scheme other than `{SECURITY_SCHEME}`: {requirement:?}"
            ));
        }
    };
    let [Value::String(scope)] = scopes.as_slice() else {
        return Err(format!("names {} scopes, not one", scopes.len()));
    };
    crate::auth::SCOPES
        .iter()
        .find(|known| **known == scope)
        .map(|known| Access::Scope(known))
        .ok_or_else(|| format!("names an unknown scope {scope:?}"))
}

/// The route table and the document, built once per process.
pub struct Api {
    pub table: RouteTable,
    /// `GET /v1/openapi.json`'s body.
    pub json: bytes::Bytes,
}

impl Api {
    pub fn new(doc: &OpenApi, public_url: &str) -> Result<Api, String> {
        let table = RouteTable::from_openapi(doc)?;
        let document = document(doc, public_url);
        let json = serde_json::to_vec(&document)
            .map_err(|e| format!("cannot serialize the OpenAPI document: {e}"))?;
        Ok(Api {
            table,
            json: json.into(),
        })
    }
}

/// The scope the request's operation needs, from the route table, for the [`Caller`] extractor.
/// A route missing from the table, or declared public while its handler asks for a token, is a
/// fault of the build: a 500 naming the route in the log, never a default scope.
///
/// [`Caller`]: crate::auth::Caller
pub fn required_scope(api: Option<&Api>, parts: &Parts) -> Result<&'static str, ApiError> {
    let route = parts.extensions.get::<MatchedPath>().map(MatchedPath::as_str);
    let access = api
        .zip(route)
        .and_then(|(api, route)| api.table.access(&parts.method, route));
    match access {
        Some(Access::Scope(scope) | Access::TokenOptional(scope)) => Ok(scope),
        Some(Access::Public) => Err(unscoped(
            parts,
            "is declared public but its handler asks for a token",
        )),
        None => Err(unscoped(parts, "has no entry in the route table")),
    }
}

fn unscoped(parts: &Parts, why: &str) -> ApiError {
    let route = parts
        .extensions
        .get::<MatchedPath>()
        .map_or("an unmatched route", MatchedPath::as_str);
    tracing::error!(method = %parts.method, route, "{why}");
    ApiError::internal("internal server error")
}

/// The document as committed in `docs/openapi.json`: pretty-printed, for [`SNAPSHOT_URL`].
pub fn snapshot() -> String {
    let (_, doc) = crate::router::routes().split_for_parts();
    let mut text = serde_json::to_string_pretty(&document(&doc, SNAPSHOT_URL)).unwrap_or_default();
    text.push('\n');
    text
}

/// A rich text input as quire reads it (`quire_content::changes::DocumentInput`): markdown or a
/// document, not both.
#[derive(utoipa::ToSchema)]
#[schema(as = DocumentInput)]
pub struct DocumentInputSchema {
    /// The text as markdown.
    pub markdown: Option<String>,
    /// The text as a GitBook document (`{"object": "document", "nodes": [...]}`).
    #[schema(value_type = Option<Object>)]
    pub document: Option<serde_json::Value>,
}

/// Scopes with what each allows, for the security scheme's description.
const SCOPE_DESCRIPTIONS: &[(&str, &str)] = &[
    (
        "org:read",
        "read organizations, members, teams, invites, the caller's user and tokens",
    ),
    (
        "org:write",
        "change organizations, members, teams and invites; revoke tokens",
    ),
    (
        "space:metadata:read",
        "read spaces, collections and their permissions",
    ),
    (
        "space:metadata:write",
        "create, change, move and delete spaces and collections, and their permissions",
    ),
    (
        "space:content:read",
        "read content, revisions, change requests, comments, links and search",
    ),
    (
        "space:content:write",
        "edit content, change requests, reviews and comments",
    ),
    ("site:metadata:read", "read docs sites (none served by quire yet)"),
    (
        "site:metadata:write",
        "change docs sites (none served by quire yet)",
    ),
    (
        "openapi:read",
        "read OpenAPI specifications, their versions and content",
    ),
    (
        "openapi:write",
        "create, change and delete OpenAPI specifications",
    ),
    (
        "conversations:ingest",
        "send conversations (none served by quire yet)",
    ),
];

/// The error answers every operation may give, by status: the component's name and its meaning.
const ERRORS: &[(&str, &str, &str)] = &[
    (
        "400",
        "BadRequest",
        "The request is not valid: a parameter or the body is malformed or out of range.",
    ),
    ("401", "Unauthorized", "No valid bearer token."),
    (
        "403",
        "Forbidden",
        "The caller may not do this, or the token lacks the operation's scope.",
    ),
    (
        "404",
        "NotFound",
        "The resource does not exist or the caller cannot see it.",
    ),
    ("408", "RequestTimeout", "The request body arrived too slowly."),
    (
        "409",
        "Conflict",
        "The request conflicts with the resource's current state.",
    ),
    (
        "413",
        "PayloadTooLarge",
        "The body, or content in it, is larger than the server accepts.",
    ),
    ("415", "UnsupportedMediaType", "The body is not sent as JSON."),
    (
        "429",
        "TooManyRequests",
        "Too many requests for this token or address; retry after `Retry-After` seconds.",
    ),
    (
        "500",
        "InternalError",
        "The server failed; the message says no more than that.",
    ),
    (
        "503",
        "Unavailable",
        "The server cannot answer now (busy, past its deadline, or its store is unreachable); retry after `Retry-After` seconds.",
    ),
];

/// Assembles the published document from the annotations: info, server, security scheme, the
/// shared error answers, tags; and the OpenAPI spelling of axum's wildcard (`{*pagePath}` is
/// `{pagePath}`).
pub fn document(doc: &OpenApi, public_url: &str) -> Value {
    let mut doc = serde_json::to_value(doc).unwrap_or_default();
    let root = doc.as_object_mut().map(std::mem::take).unwrap_or_default();
    let mut out = Map::new();
    out.insert(
        "openapi".into(),
        root.get("openapi").cloned().unwrap_or(json!("3.1.0")),
    );
    out.insert(
        "info".into(),
        json!({
            "title": "quire",
            "description": "A self-hosted documentation platform, wire-compatible with GitBook's public API. \
                            Every `/v1` operation but this document needs `Authorization: Bearer <token>`; \
                            a token with scopes may call only the operations whose scope it carries.",
            "license": {"name": "AGPL-3.0-only", "identifier": "AGPL-3.0-only"},
            "version": env!("CARGO_PKG_VERSION"),
        }),
    );
    out.insert(
        "servers".into(),
        json!([{ "url": public_url.trim_end_matches('/') }]),
    );
    let mut tags = std::collections::BTreeSet::new();
    let mut paths = Map::new();
    if let Some(Value::Object(annotated)) = root.get("paths") {
        let mut annotated: Vec<(&String, &Value)> = annotated.iter().collect();
        annotated.sort_by_key(|(path, _)| openapi_path(path));
        for (path, item) in annotated {
            let mut item = item.clone();
            if let Some(item) = item.as_object_mut() {
                for (method, op) in item.iter_mut() {
                    if let Some(op) = op.as_object_mut() {
                        add_errors(path, method, op);
                        if let Some(Value::Array(t)) = op.get("tags") {
                            tags.extend(t.iter().filter_map(Value::as_str).map(String::from));
                        }
                    }
                }
            }
            paths.insert(openapi_path(path), item);
        }
    }
    out.insert("paths".into(), Value::Object(paths));
    let mut components = root
        .get("components")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let responses: Map<String, Value> = ERRORS
        .iter()
        .map(|(status, name, description)| {
            let mut response = json!({
                "description": description,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}},
            });
            if matches!(*status, "429" | "503") {
                response["headers"] = json!({"Retry-After": {
                    "description": "Seconds to wait before retrying.",
                    "schema": {"type": "integer"},
                }});
            }
            (name.to_string(), response)
        })
        .collect();
    components.insert("responses".into(), Value::Object(responses));
    let scopes: String = SCOPE_DESCRIPTIONS
        .iter()
        .map(|(scope, what)| format!("\n- `{scope}`: {what}"))
        .collect();
    components.insert(
        "securitySchemes".into(),
        json!({ SECURITY_SCHEME: {
            "type": "http",
            "scheme": "bearer",
            "description": format!(
                "An API token (`quire_...`), sent as `Authorization: Bearer <token>`. A token without \
                 scopes may do whatever its user may do; a token with scopes may call only the \
                 operations that name one of its scopes in their security requirement:{scopes}"
            ),
        }}),
    );
    out.insert("components".into(), Value::Object(components));
    out.insert(
        "tags".into(),
        Value::Array(tags.into_iter().map(|name| json!({ "name": name })).collect()),
    );
    Value::Object(out)
}

/// axum's `{*rest}` wildcard as OpenAPI spells a parameter: `{rest}`.
fn openapi_path(path: &str) -> String {
    path.replace("{*", "{")
}

/// Adds the error answers an operation can give beyond those its annotation names: what any
/// request can get (429, 500, 503), what its token, parameters and body can get. Statuses are
/// kept in numeric order.
fn add_errors(path: &str, method: &str, op: &mut Map<String, Value>) {
    let params = op.get("parameters").and_then(Value::as_array);
    let has_params = params.is_some_and(|p| !p.is_empty());
    let has_path_params = params.is_some_and(|p| p.iter().any(|p| p["in"] == "path"));
    let has_body = op.contains_key("requestBody");
    let token = op
        .get("security")
        .and_then(Value::as_array)
        .is_some_and(|s| s.iter().any(|r| r.as_object().is_some_and(|r| !r.is_empty())));
    let rate_limited = !crate::ratelimit::EXEMPT.contains(&path);
    let wanted = |status: &str| match status {
        "400" => has_params || has_body,
        "401" | "403" => token,
        // A DELETE of what is absent or hidden is done already (`middleware::AbsentIsDeleted`).
        "404" => has_path_params && method != "delete",
        "408" | "413" | "415" => has_body,
        "429" => rate_limited,
        "500" | "503" => true,
        _ => false,
    };
    let responses = op.entry("responses").or_insert_with(|| Value::Object(Map::new()));
    let Some(responses) = responses.as_object_mut() else {
        return;
    };
    for (status, name, _) in ERRORS {
        if wanted(status) && !responses.contains_key(*status) {
            responses.insert(
                status.to_string(),
                json!({ "$ref": format!("#/components/responses/{name}") }),
            );
        }
    }
    let mut sorted: Vec<(String, Value)> = std::mem::take(responses).into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    responses.extend(sorted);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::App;
    use utoipa_axum::router::OpenApiRouter;
    use utoipa_axum::routes;

    fn table() -> RouteTable {
        let (_, doc) = crate::router::routes().split_for_parts();
        RouteTable::from_openapi(&doc).unwrap()
    }

    #[test]
    fn scopes_follow_the_annotations() {
        let table = table();
        let scope = |method: Method, route: &str| table.access(&method, route);
        assert_eq!(
            scope(Method::GET, "/v1/spaces/{spaceId}"),
            Some(Access::Scope("space:metadata:read"))
        );
        assert_eq!(
            scope(Method::HEAD, "/v1/spaces/{spaceId}"),
            Some(Access::Scope("space:metadata:read"))
        );
        assert_eq!(
            scope(Method::POST, "/v1/spaces/{spaceId}/change-requests"),
            Some(Access::Scope("space:content:write"))
        );
        assert_eq!(
            scope(Method::GET, "/v1/orgs/{organizationId}/members"),
            Some(Access::Scope("org:read"))
        );
        assert_eq!(
            scope(Method::PATCH, "/v1/orgs/{organizationId}"),
            Some(Access::Scope("org:write"))
        );
        assert_eq!(
            scope(Method::POST, "/v1/orgs/{organizationId}/spaces"),
            Some(Access::Scope("space:metadata:write"))
        );
        assert_eq!(scope(Method::GET, "/v1/user"), Some(Access::Scope("org:read")));
        assert_eq!(scope(Method::GET, "/healthz"), Some(Access::Public));
        assert_eq!(scope(Method::GET, "/v1/openapi.json"), Some(Access::Public));
        assert_eq!(scope(Method::POST, "/v1/user"), None);
        assert_eq!(scope(Method::GET, "/v1/no-such-route"), None);
    }

    #[utoipa::path(get, path = "/v1/unscoped", responses((status = 200)))]
    async fn unscoped() {}

    #[utoipa::path(get, path = "/v1/two-scopes", responses((status = 200)), security(("token" = ["org:read", "org:write"])))]
    async fn two_scopes() {}

    #[utoipa::path(get, path = "/v1/unknown-scope", responses((status = 200)), security(("token" = ["org:everything"])))]
    async fn unknown_scope() {}

    #[utoipa::path(post, path = "/v1/other-scheme", responses((status = 200)), security(("cookie" = ["org:read"])))]
    async fn other_scheme() {}

    /// A route that does not say who may call it cannot be built into a router: `router::router`
    /// panics with this message rather than serve it under some default scope.
    #[test]
    fn a_route_without_a_valid_access_is_refused_by_name() {
        let refused = |router: OpenApiRouter<App>| {
            let (_, doc) = router.split_for_parts();
            Api::new(&doc, SNAPSHOT_URL).err().unwrap_or_default()
        };
        let why = refused(OpenApiRouter::default().routes(routes!(unscoped)));
        assert!(
            why.contains("route GET /v1/unscoped declares no security"),
            "{why}"
        );
        let why = refused(OpenApiRouter::default().routes(routes!(two_scopes)));
        assert!(why.contains("route GET /v1/two-scopes names 2 scopes"), "{why}");
        let why = refused(OpenApiRouter::default().routes(routes!(unknown_scope)));
        assert!(
            why.contains("route GET /v1/unknown-scope names an unknown scope"),
            "{why}"
        );
        let why = refused(OpenApiRouter::default().routes(routes!(other_scheme)));
        assert!(
            why.contains("route POST /v1/other-scheme names a scheme other than `token`"),
            "{why}"
        );
        // The same routes beside quire's: still refused.
        let why = refused(crate::router::routes().routes(routes!(unscoped)));
        assert!(why.contains("/v1/unscoped"), "{why}");
        assert!(Api::new(&crate::router::routes().split_for_parts().1, SNAPSHOT_URL).is_ok());
    }

    #[test]
    fn operation_ids_are_unique() {
        let doc = document(&crate::router::routes().split_for_parts().1, SNAPSHOT_URL);
        let mut seen = std::collections::BTreeSet::new();
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                let id = op["operationId"].as_str().unwrap().to_string();
                assert!(seen.insert(id.clone()), "operationId {id} is used twice");
            }
        }
    }
}
