//! Reading GitBook's `table` block: its columns in view order, its records in row order and the
//! fragments holding text cells, looked up by name in constant time (a table can hold
//! [`crate::limits::MAX_TABLE_CELLS`] cells, so a scan per cell would be quadratic).

use std::collections::HashMap;

use serde_json::Value;

use super::{Fragment, JsonMap, Node};

/// A `table` block, indexed for reading.
pub struct TableView<'a> {
    /// Column ids: `view.columns` when given, else the keys of `definition`.
    pub columns: Vec<&'a str>,
    /// Column definitions by id.
    pub definition: Option<&'a JsonMap>,
    /// Records sorted by `orderIndex`, then by id.
    pub records: Vec<&'a Value>,
    fragments: HashMap<&'a str, &'a Fragment>,
}

impl<'a> TableView<'a> {
    /// Indexes a `table` block (any other node gives a view without columns).
    pub fn of(table: &'a Node) -> TableView<'a> {
        let definition = table.data_value("definition").and_then(Value::as_object);
        let columns = match table
            .data_value("view")
            .and_then(|view| view.get("columns"))
            .and_then(Value::as_array)
        {
            Some(columns) => columns.iter().filter_map(Value::as_str).collect(),
            None => definition
                .map(|definition| definition.keys().map(String::as_str).collect())
                .unwrap_or_default(),
        };
        let mut records: Vec<(&String, &Value)> = table
            .data_value("records")
            .and_then(Value::as_object)
            .map(|records| records.iter().collect())
            .unwrap_or_default();
        records.sort_by_key(|(id, record)| {
            (
                record
                    .get("orderIndex")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                *id,
            )
        });
        let mut fragments = HashMap::new();
        for fragment in table.fragments() {
            if let Some(name) = fragment.fragment.as_deref() {
                // The first fragment of a name wins, as a scan would find it.
                fragments.entry(name).or_insert(fragment);
            }
        }
        TableView {
            columns,
            definition,
            records: records.into_iter().map(|(_, record)| record).collect(),
            fragments,
        }
    }

    /// A column's definition field (`title`, `type`, `textAlignment`).
    pub fn column_field(&self, column: &str, field: &str) -> Option<&'a Value> {
        self.definition?.get(column)?.get(field)
    }

    /// The fragment named by a text cell.
    pub fn fragment(&self, name: &str) -> Option<&'a Fragment> {
        self.fragments.get(name).copied()
    }
}
