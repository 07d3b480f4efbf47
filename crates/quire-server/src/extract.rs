//! Request extractors whose every rejection is the JSON error envelope with a message that
//! names the offending part of the request.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header;
use axum::http::request::Parts;
use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use crate::error::ApiError;
pub use quire_store::paging::Order;
use quire_store::paging::Paging;
pub use quire_store::patch::Patch;

/// A JSON request body. Requires `Content-Type: application/json` (415 otherwise), maps parse
/// errors to 400 naming the field, and oversized bodies to 413.
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(&req) {
            return Err(not_json());
        }
        let bytes = read_body(req, state).await?;
        parse_json(&bytes).map(Json)
    }
}

/// Whether the request says its body is JSON (`application/json` or a `+json` type).
fn is_json(req: &Request) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| {
            let mime = mime.trim().to_ascii_lowercase();
            mime == "application/json" || mime.ends_with("+json")
        })
}

fn not_json() -> ApiError {
    ApiError::new(
        axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "the request body must be JSON, sent with Content-Type: application/json",
    )
}

/// A JSON body that may be absent (operations whose body is optional, like `POST .../merge`).
pub struct OptionalJson<T>(pub Option<T>);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for OptionalJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let json = is_json(&req);
        let bytes = read_body(req, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJson(None));
        }
        // A body that is there must say it is JSON, as for [`Json`].
        if !json {
            return Err(not_json());
        }
        parse_json(&bytes).map(|v| OptionalJson(Some(v)))
    }
}

async fn read_body<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state).await.map_err(|rejection| {
        let status = rejection.status();
        if crate::connections::is_too_slow(&rejection) {
            ApiError::new(
                axum::http::StatusCode::REQUEST_TIMEOUT,
                "the request body arrived too slowly; send it faster or in full",
            )
        } else if status == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(status, "the request body is larger than this server accepts")
        } else {
            ApiError::new(status, format!("cannot read the request body: {rejection}"))
        }
    })
}

/// Parses JSON, naming the path of the field at fault in the error.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            ApiError::bad_request(format!("malformed JSON body: {inner}"))
        } else if path == "." {
            ApiError::bad_request(format!("invalid body: {inner}"))
        } else {
            ApiError::bad_request(format!("invalid field `{path}`: {inner}"))
        }
    })?;
    de.end()
        .map_err(|e| ApiError::bad_request(format!("malformed JSON body: {e}")))?;
    Ok(value)
}

/// A query string read into `T`: a struct that derives `Deserialize` (how each parameter is
/// parsed) and `utoipa::IntoParams` (how it is documented), so every parameter is declared once,
/// with its wire name from the serde attributes both derives read. Lists take [`Paging`] with
/// `#[serde(flatten)]`. A value that does not parse is a 400 naming the parameter.
///
/// What a query string holds is text: an empty value counts as absent (`?title=` filters
/// nothing), a name given more than once (or as `name[]`) is a list, and the typed fields read
/// text through [`flag`], [`list`] and the like.
pub struct QueryOf<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for QueryOf<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parse_query(parts.uri.query().unwrap_or("")).map(QueryOf)
    }
}

/// Parses a query string into `T` (see [`QueryOf`]).
pub fn parse_query<T: DeserializeOwned>(raw: &str) -> Result<T, ApiError> {
    use serde_json::map::Entry;
    use serde_json::{Map, Value};
    let mut map = Map::new();
    for (name, value) in url::form_urlencoded::parse(raw.as_bytes()) {
        if value.is_empty() {
            continue;
        }
        let name = name.strip_suffix("[]").unwrap_or(&name).to_string();
        let value = Value::String(value.into_owned());
        match map.entry(name) {
            Entry::Vacant(entry) => {
                entry.insert(value);
            }
            Entry::Occupied(mut entry) => match entry.get_mut() {
                Value::Array(values) => values.push(value),
                first => *first = Value::Array(vec![first.take(), value]),
            },
        }
    }
    serde_path_to_error::deserialize(Value::Object(map)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path == "?" || inner.starts_with("query parameter") {
            ApiError::bad_request(inner)
        } else {
            ApiError::bad_request(format!("query parameter `{path}`: {inner}"))
        }
    })
}

/// A boolean parameter: `true`/`1` or `false`/`0`.
pub fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    match String::deserialize(d)?.as_str() {
        "true" | "1" => Ok(Some(true)),
        "false" | "0" => Ok(Some(false)),
        other => Err(serde::de::Error::custom(format!(
            "must be true or false, not {other:?}"
        ))),
    }
}

/// A list parameter: the name repeated (`authors=a&authors=b`), as `authors[]=`, or
/// comma-separated (`authors=a,b`).
pub fn list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    let values = match OneOrMany::deserialize(d)? {
        OneOrMany::One(v) => vec![v],
        OneOrMany::Many(vs) => vs,
    };
    Ok(values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect())
}

/// A parameter whose text is parsed by `FromStr` (an integer, a number).
pub fn parsed<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    let raw = String::deserialize(d)?;
    raw.parse()
        .map(Some)
        .map_err(|e| serde::de::Error::custom(format!("{e}: {raw:?}")))
}

/// Path parameters, with rejections (bad percent-encoding) as JSON errors.
pub struct Path<T>(pub T);

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(v)| Path(v))
            .map_err(|e| ApiError::bad_request(format!("invalid path: {e}")))
    }
}

/// One named path parameter; a route without it is a wiring mistake, answered as a bad request.
pub fn param<'a>(params: &'a crate::paths::RouteIds, name: &str) -> Result<&'a str, ApiError> {
    params
        .get(name)
        .ok_or_else(|| ApiError::bad_request(format!("missing path parameter {name}")))
}

/// `order` with paging, for lists ordered by time.
#[derive(Debug, Clone, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OrderQuery {
    /// The direction of the list's time order.
    #[param(inline, value_type = Option<Order>)]
    #[serde(default)]
    pub order: Order,
    #[param(ignore)]
    #[serde(flatten)]
    pub paging: Paging,
}

/// `Prefer: return=minimal` (RFC 7240, GitBook's `returnPreference`): the caller of an update
/// wants 204 rather than the updated resource.
pub struct PreferMinimal(pub bool);

impl<S: Send + Sync> FromRequestParts<S> for PreferMinimal {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(PreferMinimal(
            parts
                .headers
                .get_all("prefer")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .any(|v| v.split(',').any(|p| p.trim() == "return=minimal")),
        ))
    }
}

impl PreferMinimal {
    /// The answer to an update: 204 saying the preference was applied, or `json`.
    pub fn answer<T: serde::Serialize>(self, json: T) -> axum::response::Response {
        use axum::response::IntoResponse;
        if self.0 {
            let applied = [("preference-applied", "return=minimal")];
            return (axum::http::StatusCode::NO_CONTENT, applied).into_response();
        }
        axum::Json(json).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Listed {
        #[serde(default, deserialize_with = "list")]
        authors: Vec<String>,
        #[serde(default, deserialize_with = "flag")]
        nested: Option<bool>,
        #[serde(default)]
        order: Order,
        title: Option<String>,
        #[serde(flatten)]
        paging: Paging,
    }

    #[test]
    fn a_query_struct_reads_lists_flags_enums_and_paging() {
        let q: Listed = parse_query("authors=a,b&authors[]=c&nested=0&order=asc&limit=5&page=x").unwrap();
        assert_eq!(q.authors, ["a", "b", "c"]);
        assert_eq!(q.nested, Some(false));
        assert_eq!(q.order, Order::Asc);
        assert_eq!((q.paging.limit, q.paging.page.as_deref()), (5, Some("x")));
        // Empty values are absent values; absent ones take their defaults.
        let q: Listed = parse_query("title=&nested=&limit=").unwrap();
        assert_eq!((q.title, q.nested, q.order), (None, None, Order::Desc));
        assert_eq!((q.paging.limit, q.paging.page), (100, None));
    }

    #[test]
    fn a_bad_value_is_a_400_naming_its_parameter() {
        let message = |raw: &str| match parse_query::<Listed>(raw) {
            Ok(q) => panic!("{raw} parsed: {q:?}"),
            Err(e) => {
                assert_eq!(e.status, axum::http::StatusCode::BAD_REQUEST);
                e.message
            }
        };
        let m = message("nested=maybe");
        assert!(m.contains("`nested`") && m.contains("true or false"), "{m}");
        let m = message("order=sideways");
        assert!(m.contains("`order`") && m.contains("asc"), "{m}");
        for limit in ["0", "1001", "ten"] {
            let m = message(&format!("limit={limit}"));
            assert!(m.contains("limit") && m.contains("from 1 to 1000"), "{m}");
        }
    }

    /// Cursors (and their scopes) are checked by the store's list functions: see
    /// `quire_store::paging`'s tests.
    #[test]
    fn limit_bounds() {
        assert!(parse_query::<Paging>("limit=1001").is_err());
        assert!(parse_query::<Paging>("limit=0").is_err());
        let paging = parse_query::<Paging>("limit=2&page=abc").unwrap();
        assert_eq!((paging.limit, paging.page.as_deref()), (2, Some("abc")));
    }
}
