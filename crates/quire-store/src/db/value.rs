//! Values crossing the storage boundary, the same for both engines.

use super::DbError;

/// A parameter or column value. Booleans and timestamps travel as integers (0/1, Unix
/// milliseconds) so that one SQL text serves both engines.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<i32> for Value {
    fn from(v: i32) -> Value {
        Value::Int(v.into())
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Value {
        Value::Int(v.into())
    }
}

impl From<usize> for Value {
    fn from(v: usize) -> Value {
        Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Int(v.into())
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(v)
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Value {
        Value::Text(v.clone())
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Value {
        Value::Blob(v)
    }
}

impl From<&[u8]> for Value {
    fn from(v: &[u8]) -> Value {
        Value::Blob(v.to_vec())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

impl<T: Clone + Into<Value>> From<&Option<T>> for Value {
    fn from(v: &Option<T>) -> Value {
        v.clone().map_or(Value::Null, Into::into)
    }
}

impl Value {
    /// What kind of value it is, for messages (the value itself may be a 25 MB document).
    fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Int(_) => "an integer",
            Value::Real(_) => "a real",
            Value::Text(_) => "text",
            Value::Blob(_) => "a blob",
        }
    }
}

/// A result row.
#[derive(Debug)]
pub struct Row(pub(crate) Vec<Value>);

impl Row {
    /// The value of column `index`, converted.
    pub fn get<T: FromValue>(&self, index: usize) -> Result<T, DbError> {
        let value = self.0.get(index).ok_or_else(|| DbError::Decode {
            column: index,
            message: "no such column".into(),
        })?;
        T::from_value(value).map_err(|message| DbError::Decode {
            column: index,
            message,
        })
    }

    /// Moves the value of column `index` out of the row (no copy of text or blobs).
    pub fn take(&mut self, index: usize) -> Value {
        self.0.get_mut(index).map(std::mem::take).unwrap_or(Value::Null)
    }

    /// Moves the text of column `index` out of the row: a stored document can be 25 MB, and
    /// [`Row::get`] copies.
    pub fn take_text(&mut self, index: usize) -> Result<String, DbError> {
        match self.take(index) {
            Value::Text(text) => Ok(text),
            other => Err(DbError::Decode {
                column: index,
                message: format!("expected text, found {}", other.kind()),
            }),
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Conversion from a column value.
pub trait FromValue: Sized {
    fn from_value(value: &Value) -> Result<Self, String>;
}

impl FromValue for i64 {
    fn from_value(value: &Value) -> Result<i64, String> {
        match value {
            Value::Int(v) => Ok(*v),
            Value::Real(v) => Ok(*v as i64),
            other => Err(format!("expected an integer, found {other:?}")),
        }
    }
}

impl FromValue for u64 {
    fn from_value(value: &Value) -> Result<u64, String> {
        let v = i64::from_value(value)?;
        u64::try_from(v).map_err(|_| format!("expected a non-negative integer, found {v}"))
    }
}

impl FromValue for bool {
    fn from_value(value: &Value) -> Result<bool, String> {
        Ok(i64::from_value(value)? != 0)
    }
}

impl FromValue for f64 {
    fn from_value(value: &Value) -> Result<f64, String> {
        match value {
            Value::Real(v) => Ok(*v),
            Value::Int(v) => Ok(*v as f64),
            other => Err(format!("expected a number, found {other:?}")),
        }
    }
}

impl FromValue for String {
    fn from_value(value: &Value) -> Result<String, String> {
        match value {
            Value::Text(v) => Ok(v.clone()),
            other => Err(format!("expected text, found {other:?}")),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(value: &Value) -> Result<Vec<u8>, String> {
        match value {
            Value::Blob(v) => Ok(v.clone()),
            Value::Text(v) => Ok(v.as_bytes().to_vec()),
            other => Err(format!("expected bytes, found {other:?}")),
        }
    }
}

impl FromValue for serde_json::Value {
    fn from_value(value: &Value) -> Result<serde_json::Value, String> {
        match value {
            Value::Text(v) => serde_json::from_str(v).map_err(|e| e.to_string()),
            Value::Blob(v) => serde_json::from_slice(v).map_err(|e| e.to_string()),
            Value::Null => Ok(serde_json::Value::Null),
            other => Err(format!("expected JSON text, found {other:?}")),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: &Value) -> Result<Option<T>, String> {
        match value {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

/// A column of a declared column set (see the `columns!` macro): where it sits in the row, and its
/// name and table for the error when its value does not decode.
#[derive(Clone, Copy, Debug)]
pub struct Col {
    pub index: usize,
    pub name: &'static str,
    pub table: &'static str,
}

impl Row {
    /// The value of `col`, converted; an error names the column and its table.
    pub fn col<T: FromValue>(&self, col: Col) -> Result<T, DbError> {
        let decode = |message: String| DbError::Decode {
            column: col.index,
            message: format!("{}.{}: {message}", col.table, col.name),
        };
        let value = self
            .0
            .get(col.index)
            .ok_or_else(|| decode("not selected".into()))?;
        T::from_value(value).map_err(decode)
    }
}

impl DbError {
    /// A value the server stored that no longer decodes (JSON, a state): `what` names it and
    /// its row, for the log ("merge rules of organization \"x\""); the client sees a 500.
    pub fn stored(what: impl std::fmt::Display, error: impl std::fmt::Display) -> DbError {
        DbError::Other(format!("{what}: the stored value does not decode: {error}"))
    }
}
