//! Request extractors whose every rejection is the JSON error envelope with a message that
//! names the offending part of the request.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header;
use axum::http::request::Parts;
use bytes::Bytes;
use serde::de::DeserializeOwned;

use crate::error::ApiError;
pub use quire_store::paging::Order;
use quire_store::paging::{DEFAULT_LIMIT, MAX_LIMIT, Paging};
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

/// The query string as name/value pairs, with typed accessors that produce precise 400s.
/// Repeated names are kept (`authors=a&authors=b`), as are `authors[]=a` forms.
#[derive(Debug, Default, Clone)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl<S: Send + Sync> FromRequestParts<S> for Query {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Query::parse(parts.uri.query().unwrap_or("")))
    }
}

impl Query {
    pub fn parse(raw: &str) -> Query {
        let pairs = url::form_urlencoded::parse(raw.as_bytes())
            .map(|(k, v)| {
                let key = k.strip_suffix("[]").unwrap_or(&k).to_string();
                (key, v.into_owned())
            })
            .collect();
        Query { pairs }
    }

    /// The last value given for `name`.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value given for `name`, splitting comma-separated lists too.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == name)
            .flat_map(|(_, v)| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
            })
            .collect()
    }

    pub fn bool(&self, name: &str, default: bool) -> Result<bool, ApiError> {
        match self.str(name) {
            None | Some("") => Ok(default),
            Some("true" | "1") => Ok(true),
            Some("false" | "0") => Ok(false),
            Some(other) => Err(ApiError::bad_request(format!(
                "query parameter `{name}` must be true or false, not {other:?}"
            ))),
        }
    }

    /// A value that must be one of `allowed`.
    pub fn one_of<'a>(&self, name: &str, allowed: &[&'a str], default: &'a str) -> Result<&'a str, ApiError> {
        match self.str(name) {
            None | Some("") => Ok(default),
            Some(v) => allowed.iter().find(|a| **a == v).copied().ok_or_else(|| {
                ApiError::bad_request(format!(
                    "query parameter `{name}` must be one of {}, not {v:?}",
                    allowed.join(", ")
                ))
            }),
        }
    }

    /// `asc` or `desc`, default `desc` as the spec says for every `order`.
    pub fn order(&self) -> Result<Order, ApiError> {
        Ok(match self.one_of("order", &["asc", "desc"], "desc")? {
            "asc" => Order::Asc,
            _ => Order::Desc,
        })
    }
}

/// A query string read into a typed struct. The struct reads the pairs with [`Query`]'s
/// accessors, so each parameter keeps its precise 400; it derives `IntoParams` for the
/// OpenAPI document.
pub trait FromQuery: Sized {
    fn from_query(query: &Query) -> Result<Self, ApiError>;
}

/// Extracts a [`FromQuery`] struct.
pub struct QueryOf<T>(pub T);

impl<T: FromQuery, S: Send + Sync> FromRequestParts<S> for QueryOf<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        T::from_query(&Query::parse(parts.uri.query().unwrap_or(""))).map(QueryOf)
    }
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

impl FromQuery for Paging {
    fn from_query(query: &Query) -> Result<Paging, ApiError> {
        let limit = match query.str("limit") {
            None | Some("") => DEFAULT_LIMIT,
            Some(raw) => match raw.parse::<usize>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
                _ => {
                    return Err(ApiError::bad_request(format!(
                        "query parameter `limit` must be an integer from 1 to {MAX_LIMIT}, not {raw:?}"
                    )));
                }
            },
        };
        let page = query.str("page").filter(|p| !p.is_empty()).map(str::to_string);
        Ok(Paging { limit, page })
    }
}

/// `order` with paging, for lists ordered by time.
#[derive(Debug, Clone, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OrderQuery {
    /// The direction of the list's time order.
    #[param(inline, value_type = Option<Order>)]
    pub order: Order,
    #[param(ignore)]
    pub paging: Paging,
}

impl FromQuery for OrderQuery {
    fn from_query(query: &Query) -> Result<OrderQuery, ApiError> {
        Ok(OrderQuery {
            order: query.order()?,
            paging: Paging::from_query(query)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_store::paging::Page;

    #[test]
    fn limit_bounds_and_cursor_scope() {
        let page = |q: &str, scope: &str| {
            Paging::from_query(&Query::parse(q))
                .and_then(|paging| Page::new(&paging, scope).map_err(ApiError::from))
        };
        assert!(page("limit=1001", "a").is_err());
        assert!(page("limit=0", "a").is_err());
        let first = page("limit=2", "a").unwrap();
        let list = first.finish(vec![1, 2, 3], 3, |n| *n);
        let next = list.next.unwrap().page;
        let again = page(&format!("page={next}"), "a").unwrap();
        assert_eq!(again.after::<i32>().unwrap(), Some(2));
        assert!(page(&format!("page={next}"), "b").is_err());
        assert!(page("page=garbage", "a").is_err());
    }
}
