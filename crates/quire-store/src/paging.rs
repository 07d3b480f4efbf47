//! PAGING: `limit` (1..=1000, default 100) and `page`, an opaque keyset cursor. Lists answer
//! `{next: {page}, count, items}` with `next` absent on the last page.
//!
//! A cursor carries the scope of the list it came from (its kind, parent and filters); using it
//! on another list is a 400 rather than a silently wrong page.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::db::{Args, Conn, DbError, Row};
use crate::error::StoreError;

pub const DEFAULT_LIMIT: usize = 100;
pub const MAX_LIMIT: usize = 1000;

/// A requested page of a list.
#[derive(Debug)]
pub struct Page {
    pub limit: usize,
    scope: String,
    after: Option<serde_json::Value>,
}

#[derive(Serialize, Deserialize)]
struct Cursor {
    s: String,
    k: serde_json::Value,
}

/// `limit` and `page`, the query parameters of every list (a query struct takes them with
/// `#[serde(flatten)]`).
#[derive(Debug, Clone, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Paging {
    /// How many items to answer, from 1 to 1000 (100 when absent).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    #[serde(default = "default_limit", deserialize_with = "limit")]
    pub limit: usize,
    /// Where to continue: the `next.page` of the previous answer of the same list.
    pub page: Option<String>,
}

impl Default for Paging {
    fn default() -> Paging {
        Paging {
            limit: DEFAULT_LIMIT,
            page: None,
        }
    }
}

fn default_limit() -> usize {
    DEFAULT_LIMIT
}

/// `limit` as a query string gives it: text, 1 to [`MAX_LIMIT`].
pub fn limit<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let raw = String::deserialize(d)?;
    match raw.parse::<usize>() {
        Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
        // Named here: a flattened field's errors come without their path.
        _ => Err(serde::de::Error::custom(format!(
            "query parameter `limit` must be an integer from 1 to {MAX_LIMIT}, not {raw:?}"
        ))),
    }
}

/// The order of a list by its time: `asc` or `desc` (the default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Asc,
    #[default]
    Desc,
}

impl Order {
    pub fn sql(self) -> &'static str {
        match self {
            Order::Asc => "ASC",
            Order::Desc => "DESC",
        }
    }

    /// The comparison that selects rows after a cursor in this order.
    pub fn after_op(self) -> &'static str {
        match self {
            Order::Asc => ">",
            Order::Desc => "<",
        }
    }

    /// A time that every row comes after in this order: the keyset bound of a first page.
    pub fn start_time(self) -> i64 {
        match self {
            Order::Asc => i64::MIN,
            Order::Desc => i64::MAX,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Order::Asc => "asc",
            Order::Desc => "desc",
        }
    }
}

impl Page {
    /// The page `paging` asks for. `scope` identifies the list and its filters: a cursor of
    /// another list is a 400.
    pub fn new(paging: &Paging, scope: impl Into<String>) -> Result<Page, StoreError> {
        let scope = scope.into();
        let after = match &paging.page {
            None => None,
            Some(raw) => Some(decode(raw, &scope)?),
        };
        Ok(Page {
            limit: paging.limit,
            scope,
            after,
        })
    }

    /// The sort key of the last item of the previous page, if this is not the first page.
    pub fn after<K: DeserializeOwned>(&self) -> Result<Option<K>, StoreError> {
        match &self.after {
            None => Ok(None),
            Some(k) => serde_json::from_value(k.clone())
                .map(Some)
                .map_err(|_| StoreError::invalid("query parameter `page` is not a cursor of this list")),
        }
    }

    /// How many rows to fetch: one more than the limit tells whether a next page exists.
    pub fn fetch(&self) -> i64 {
        i64::try_from(self.limit + 1).unwrap_or(i64::MAX)
    }

    /// Keeps the first `limit` of up to `limit + 1` rows in list order, and the cursor that
    /// continues after them when more follow: for lists whose items are built from the rows
    /// afterwards (search results grouped by space).
    pub fn cut<T, K: Serialize>(&self, rows: &mut Vec<T>, key: impl Fn(&T) -> K) -> Option<Next> {
        if rows.len() <= self.limit {
            return None;
        }
        rows.truncate(self.limit);
        rows.last().map(|last| Next {
            page: encode(&self.scope, &key(last)),
        })
    }

    /// Builds the list envelope from up to `limit + 1` rows in list order.
    pub fn finish<T, K: Serialize>(&self, mut rows: Vec<T>, count: u64, key: impl Fn(&T) -> K) -> List<T> {
        let next = if rows.len() > self.limit {
            rows.truncate(self.limit);
            rows.last().map(|last| Next {
                page: encode(&self.scope, &key(last)),
            })
        } else {
            None
        };
        List {
            next,
            count,
            items: rows,
        }
    }
}

/// One page of the rows of `table` that `filter` (` WHERE ...`, its parameters in `args`) keeps,
/// oldest first (keyset on `created_at, id`), with their total count. `columns` are selected and
/// read by `row`; `key` gives an item's `(created_at, id)`.
pub fn by_creation<T>(
    c: &mut dyn Conn,
    page: &Page,
    table: (&str, &str),
    filter: (String, Args),
    row: impl Fn(&Row) -> Result<T, DbError>,
    key: impl Fn(&T) -> (i64, String),
) -> Result<List<T>, StoreError> {
    by_key(
        c,
        page,
        table,
        filter,
        &KeyOrder::ascending("created_at"),
        row,
        key,
    )
}

/// The order of a keyset-paged list: an SQL expression, then `id` to make it total.
pub struct KeyOrder {
    pub expr: &'static str,
    pub descending: bool,
}

impl KeyOrder {
    pub const fn ascending(expr: &'static str) -> KeyOrder {
        KeyOrder {
            expr,
            descending: false,
        }
    }

    pub const fn descending(expr: &'static str) -> KeyOrder {
        KeyOrder {
            expr,
            descending: true,
        }
    }
}

/// [`by_creation`] in any order: keyset on `(order.expr, id)`, `key` giving an item's pair.
pub fn by_key<T, A>(
    c: &mut dyn Conn,
    page: &Page,
    (table, columns): (&str, &str),
    (filter, mut args): (String, Args),
    order: &KeyOrder,
    row: impl Fn(&Row) -> Result<T, DbError>,
    key: impl Fn(&T) -> (A, String),
) -> Result<List<T>, StoreError>
where
    A: Serialize + DeserializeOwned + Into<crate::db::Value>,
{
    let count: i64 = c
        .query_scalar(&format!("SELECT count(*) FROM {table}{filter}"), args.values())?
        .unwrap_or(0);
    let expr = order.expr;
    let (op, dir) = if order.descending {
        ("<", " DESC")
    } else {
        (">", "")
    };
    let mut sql = format!("SELECT {columns} FROM {table}{filter}");
    if let Some((at, id)) = page.after::<(A, String)>()? {
        sql += &format!(" AND ({expr}, id) {op} ({}, {})", args.arg(at), args.arg(id));
    }
    sql += &format!(" ORDER BY {expr}{dir}, id{dir} LIMIT {}", args.arg(page.fetch()));
    let rows = c
        .query(&sql, args.values())?
        .iter()
        .map(&row)
        .collect::<Result<Vec<_>, DbError>>()?;
    Ok(page.finish(rows, u64::try_from(count).unwrap_or(0), key))
}

fn encode<K: Serialize>(scope: &str, key: &K) -> String {
    let cursor = Cursor {
        s: scope.to_string(),
        k: serde_json::to_value(key).unwrap_or_default(),
    };
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&cursor).unwrap_or_default())
}

fn decode(raw: &str, scope: &str) -> Result<serde_json::Value, StoreError> {
    let invalid = || StoreError::invalid("query parameter `page` is not a cursor of this list");
    let bytes = URL_SAFE_NO_PAD.decode(raw).map_err(|_| invalid())?;
    let cursor: Cursor = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if cursor.s != scope {
        return Err(invalid());
    }
    Ok(cursor.k)
}

/// The list envelope.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct List<T> {
    /// Absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<Next>,
    /// How many items the whole list has.
    pub count: u64,
    pub items: Vec<T>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Next {
    /// The cursor to pass as `page` for the next page.
    pub page: String,
}

impl<T> List<T> {
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> List<U> {
        List {
            next: self.next,
            count: self.count,
            items: self.items.into_iter().map(f).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(limit: usize, cursor: Option<&str>, scope: &str) -> Result<Page, StoreError> {
        let paging = Paging {
            limit,
            page: cursor.map(str::to_string),
        };
        Page::new(&paging, scope)
    }

    #[test]
    fn cursors_are_scoped_to_their_list() {
        let first = page(2, None, "a").unwrap();
        let list = first.finish(vec![1, 2, 3], 3, |n| *n);
        let next = list.next.unwrap().page;
        let again = page(2, Some(&next), "a").unwrap();
        assert_eq!(again.after::<i32>().unwrap(), Some(2));
        assert!(page(2, Some(&next), "b").is_err());
        assert!(page(2, Some("garbage"), "a").is_err());
    }
}
