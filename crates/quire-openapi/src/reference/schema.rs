//! Schemas written as nested markdown lists of their properties.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::markdown::{Md, code, indented, one_line};
use super::refs::{At, Resolved};
use super::{MAX_ALL_OF_MEMBERS, MAX_ENUM_VALUES, MAX_SCHEMA_DEPTH, Renderer};

/// Whether a schema's properties are listed under its line.
enum Expansion {
    List,
    /// Listed already, above on the same page.
    Above,
    /// Nothing to list, or circular (its label says so).
    Nothing,
}

/// What an object schema holds once its `allOf` members are merged in.
#[derive(Default)]
struct Shape<'a> {
    properties: Vec<(&'a str, At<'a>)>,
    /// Where each property is in `properties`: a member's property replaces an earlier one.
    positions: HashMap<&'a str, usize>,
    required: HashSet<&'a str>,
    additional: Option<At<'a>>,
    items: Option<At<'a>>,
    alternatives: Vec<(&'static str, &'a [Value], At<'a>)>,
    /// List items for members that could not be merged (unresolved or circular).
    notes: Vec<String>,
    members_seen: usize,
    members_cut: bool,
}

impl<'a> Renderer<'a> {
    /// A schema on its own (a request body's, a response's): a line with its type, then the
    /// list of its properties.
    pub(super) fn write_schema_block(&mut self, md: &mut Md, schema: At<'a>) {
        if md.is_cut() {
            return;
        }
        match self.refs.resolve(schema) {
            Err(target) => md.push(&format!("Type: {} (unresolved reference)\n\n", code(&target))),
            Ok(node) => {
                let facts = self.facts(&node, schema).join(", ");
                let mut line = format!("Type: {facts}");
                push_notes(&mut line, node.at.value, "\n");
                line.push_str("\n\n");
                md.push(&line);
                match self.expansion(&node, 0) {
                    Expansion::List => {
                        self.write_children(md, &node, 0, 1);
                        md.push("\n");
                    }
                    Expansion::Above => {
                        let name = self.listed_target(&node).and_then(|t| t.name).unwrap_or_default();
                        md.push(&format!(
                            "The properties of {} are listed above on this page.\n\n",
                            code(&name)
                        ));
                    }
                    Expansion::Nothing => {}
                }
            }
        }
    }

    /// One property as a list item at `indent`, its own properties nested under it.
    pub(super) fn write_property(
        &mut self,
        md: &mut Md,
        name: &str,
        schema: At<'a>,
        required: bool,
        indent: usize,
        depth: usize,
    ) {
        if md.is_cut() {
            return;
        }
        let pad = " ".repeat(indent);
        let node = match self.refs.resolve(schema) {
            Ok(node) => node,
            Err(target) => {
                let required = if required { ", required" } else { "" };
                md.push(&format!(
                    "{pad}- {name} ({} (unresolved reference){required})\n",
                    code(&target)
                ));
                return;
            }
        };
        let mut facts = self.facts(&node, schema);
        if required {
            facts.insert(1.min(facts.len()), "required".to_owned());
        }
        let expansion = self.expansion(&node, depth);
        if let Expansion::Above = expansion {
            facts.push("described above".to_owned());
        }
        let mut line = format!("{pad}- {name} ({})", facts.join(", "));
        if let Some(description) = description_of(schema.value, node.at.value) {
            line.push_str(": ");
            line.push_str(&indented(description, indent + 2));
        }
        push_notes(&mut line, node.at.value, &format!("\n{pad}  "));
        line.push('\n');
        md.push(&line);
        if let Expansion::List = expansion {
            self.write_children(md, &node, indent + 2, depth + 1);
        }
    }

    /// Whether to list what `node` holds under its line. A named schema already listed on
    /// this page, at this depth or shallower, is not listed again (its listing above goes at
    /// least as deep): shared schemas would otherwise multiply a page's length.
    fn expansion(&mut self, node: &Resolved<'a>, depth: usize) -> Expansion {
        if self.on_stack(node.at) || !expandable(node) {
            return Expansion::Nothing;
        }
        let Some(target) = self.listed_target(node) else {
            return Expansion::Nothing;
        };
        if target.name.is_none() {
            return Expansion::List;
        }
        match self.listed.get(&target.at.id()) {
            Some(listed_at) if *listed_at <= depth => Expansion::Above,
            _ => {
                self.listed.insert(target.at.id(), depth);
                Expansion::List
            }
        }
    }

    /// The schema whose properties a listing shows: an array's items (through arrays of
    /// arrays), else the schema itself. `None` when the items are circular or unresolved.
    fn listed_target(&self, node: &Resolved<'a>) -> Option<Resolved<'a>> {
        let mut target = node.clone();
        for _ in 0..MAX_SCHEMA_DEPTH {
            let value = target.at.value;
            let holds_more = ["properties", "additionalProperties", "allOf", "oneOf", "anyOf"]
                .iter()
                .any(|key| value.get(key).is_some());
            let Some(items) = target.at.get("items").filter(|_| !holds_more) else {
                return Some(target);
            };
            target = self.refs.resolve(items).ok()?;
            if self.on_stack(target.at) {
                return None;
            }
        }
        Some(target)
    }

    /// The properties, items and alternatives of `node` as list items at `indent`.
    fn write_children(&mut self, md: &mut Md, node: &Resolved<'a>, indent: usize, depth: usize) {
        if md.is_cut() {
            return;
        }
        if depth > MAX_SCHEMA_DEPTH {
            md.push(&format!(
                "{}- … (deeper levels not shown: more than {MAX_SCHEMA_DEPTH} levels)\n",
                " ".repeat(indent)
            ));
            return;
        }
        self.stack.push(node.at.id());
        let shape = self.shape(node.at);
        for (name, schema) in &shape.properties {
            let required = shape.required.contains(name);
            self.write_property(md, &code(name), *schema, required, indent, depth);
        }
        if let Some(additional) = shape.additional {
            self.write_property(md, "additional properties", additional, false, indent, depth);
        }
        if let Some(items) = shape.items {
            self.write_items(md, items, indent, depth);
        }
        for (kind, options, at) in &shape.alternatives {
            self.write_alternatives(md, kind, options, *at, indent, depth);
        }
        let pad = " ".repeat(indent);
        for note in &shape.notes {
            md.push(&format!("{pad}- {note}\n"));
        }
        self.stack.pop();
    }

    /// An array's items: their properties at the array's own level (its label already says
    /// what the items are).
    fn write_items(&mut self, md: &mut Md, items: At<'a>, indent: usize, depth: usize) {
        if let Ok(items) = self.refs.resolve(items)
            && !self.on_stack(items.at)
            && expandable(&items)
        {
            self.write_children(md, &items, indent, depth + 1);
        }
    }

    fn write_alternatives(
        &mut self,
        md: &mut Md,
        kind: &str,
        options: &'a [Value],
        at: At<'a>,
        indent: usize,
        depth: usize,
    ) {
        let pad = " ".repeat(indent);
        let count = options.len();
        for (index, option) in options.iter().enumerate() {
            if md.is_cut() {
                return;
            }
            let number = index + 1;
            let option = at.with(option);
            let node = match self.refs.resolve(option) {
                Ok(node) => node,
                Err(target) => {
                    md.push(&format!(
                        "{pad}- Option {number} of {count} ({kind}): {} (unresolved reference)\n",
                        code(&target)
                    ));
                    continue;
                }
            };
            let mut facts = self.facts(&node, option);
            let expansion = self.expansion(&node, depth);
            if let Expansion::Above = expansion {
                facts.push("described above".to_owned());
            }
            let facts = facts.join(", ");
            let mut line = format!("{pad}- Option {number} of {count} ({kind}): {facts}");
            if let Some(description) = description_of(option.value, node.at.value) {
                line.push_str(" — ");
                line.push_str(&indented(description, indent + 2));
            }
            push_notes(&mut line, node.at.value, &format!("\n{pad}  "));
            line.push('\n');
            md.push(&line);
            if let Expansion::List = expansion {
                self.write_children(md, &node, indent + 2, depth + 1);
            }
        }
    }

    /// The object view of `at`, its `allOf` members merged in.
    fn shape(&self, at: At<'a>) -> Shape<'a> {
        let mut shape = Shape::default();
        let mut members = Vec::new();
        self.merge_into(&mut shape, at, &mut members);
        shape
    }

    fn merge_into(&self, shape: &mut Shape<'a>, at: At<'a>, members: &mut Vec<*const Value>) {
        let value = at.value;
        if let Some(properties) = value.get("properties").and_then(Value::as_object) {
            for (name, schema) in properties {
                let schema = at.with(schema);
                match shape.positions.get(name.as_str()) {
                    Some(position) => shape.properties[*position].1 = schema,
                    None => {
                        shape.positions.insert(name, shape.properties.len());
                        shape.properties.push((name, schema));
                    }
                }
            }
        }
        if let Some(required) = value.get("required").and_then(Value::as_array) {
            shape.required.extend(required.iter().filter_map(Value::as_str));
        }
        if let Some(additional) = value.get("additionalProperties").filter(|v| v.is_object()) {
            shape.additional = Some(at.with(additional));
        }
        if shape.items.is_none() && !value.get("type").is_some_and(|t| t == "object") {
            shape.items = at.get("items").filter(|items| items.value.is_object());
        }
        for kind in ["oneOf", "anyOf"] {
            if let Some(options) = value.get(kind).and_then(Value::as_array) {
                let label = if kind == "oneOf" { "one of" } else { "any of" };
                shape.alternatives.push((label, options, at));
            }
        }
        let Some(all_of) = value.get("allOf").and_then(Value::as_array) else {
            return;
        };
        for member in all_of {
            self.merge_member(shape, at.with(member), members);
        }
    }

    fn merge_member(&self, shape: &mut Shape<'a>, member: At<'a>, members: &mut Vec<*const Value>) {
        shape.members_seen += 1;
        // Merging stops at a bounded count and nesting: input can nest `allOf`s wide and deep.
        if shape.members_seen > MAX_ALL_OF_MEMBERS || members.len() >= MAX_SCHEMA_DEPTH {
            if !shape.members_cut {
                shape.members_cut = true;
                shape.notes.push("… (more `allOf` members not shown)".to_owned());
            }
            return;
        }
        match self.refs.resolve(member) {
            Err(target) => shape
                .notes
                .push(format!("{} (unresolved reference)", code(&target))),
            Ok(node) if self.on_stack(node.at) || members.contains(&node.at.id()) => {
                let name = node.name.unwrap_or_else(|| "schema".to_owned());
                shape.notes.push(format!("{} (circular)", one_line(&name)));
            }
            Ok(node) => {
                members.push(node.at.id());
                self.merge_into(shape, node.at, members);
                members.pop();
            }
        }
    }

    /// What a property list item says in parentheses: its type, then its format and flags
    /// (`required` goes second, added by the caller).
    pub(super) fn facts(&self, node: &Resolved<'a>, outer: At<'a>) -> Vec<String> {
        let value = node.at.value;
        let mut facts = vec![self.label(node, 0)];
        if let Some(format) = value.get("format").and_then(Value::as_str) {
            facts.push(one_line(format));
        }
        let flag = |key: &str| {
            outer.value.get(key).and_then(Value::as_bool) == Some(true)
                || value.get(key).and_then(Value::as_bool) == Some(true)
        };
        for (key, text) in [
            ("nullable", "nullable"),
            ("readOnly", "read-only"),
            ("writeOnly", "write-only"),
            ("deprecated", "deprecated"),
        ] {
            if flag(key) {
                facts.push(text.to_owned());
            }
        }
        facts
    }

    /// The type of a schema in a few words: `string`, `array of Pet`, `Cat or Dog`, or the
    /// schema's name for a named object, with "(circular)" when it is being expanded already.
    pub(super) fn label(&self, node: &Resolved<'a>, depth: usize) -> String {
        let value = node.at.value;
        if self.on_stack(node.at) {
            let name = node
                .name
                .clone()
                .unwrap_or_else(|| base_types(value).join(" or "));
            return format!("{} (circular)", one_line(&name));
        }
        let types = base_types(value);
        let composite = types
            .iter()
            .any(|t| matches!(*t, "object" | "any" | "one of" | "any of"));
        if let Some(name) = &node.name
            && composite
        {
            return one_line(name);
        }
        let words: Vec<String> = types
            .iter()
            .map(|t| match *t {
                "array" => self.array_label(node.at, depth),
                "one of" | "any of" => self.alternatives_label(node.at, t),
                other => one_line(other),
            })
            .collect();
        words.join(" or ")
    }

    fn array_label(&self, at: At<'a>, depth: usize) -> String {
        let Some(items) = at.get("items") else {
            return "array".to_owned();
        };
        if depth >= MAX_SCHEMA_DEPTH {
            return "array".to_owned();
        }
        match self.refs.resolve(items) {
            Ok(items) => format!("array of {}", self.label(&items, depth + 1)),
            Err(target) => format!("array of {} (unresolved reference)", code(&target)),
        }
    }

    /// `Cat or Dog`: the alternatives' names or types, without looking inside them (their
    /// own alternatives would multiply).
    fn alternatives_label(&self, at: At<'a>, kind: &str) -> String {
        let key = if kind == "one of" { "oneOf" } else { "anyOf" };
        let Some(options) = at.value.get(key).and_then(Value::as_array) else {
            return kind.to_owned();
        };
        const SHOWN: usize = 4;
        let mut words: Vec<String> = options
            .iter()
            .take(SHOWN)
            .map(|option| match self.refs.resolve(at.with(option)) {
                Ok(node) => node
                    .name
                    .as_deref()
                    .map(one_line)
                    .unwrap_or_else(|| base_types(node.at.value).join(" or ")),
                Err(target) => code(&target),
            })
            .collect();
        if options.len() > SHOWN {
            words.push(format!("{} more", options.len() - SHOWN));
        }
        words.join(" or ")
    }

    pub(super) fn on_stack(&self, at: At<'a>) -> bool {
        self.stack.contains(&at.id())
    }
}

/// The types a schema declares, or the one its shape implies.
fn base_types(value: &Value) -> Vec<&str> {
    match value.get("type") {
        Some(Value::String(t)) => return vec![t.as_str()],
        Some(Value::Array(types)) => {
            let types: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            if !types.is_empty() {
                return types;
            }
        }
        _ => {}
    }
    let implied = if value.get("properties").is_some()
        || value.get("additionalProperties").is_some()
        || value.get("allOf").is_some()
    {
        "object"
    } else if value.get("items").is_some() {
        "array"
    } else if value.get("oneOf").is_some() {
        "one of"
    } else if value.get("anyOf").is_some() {
        "any of"
    } else if let Some(first) = value
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|values| values.first())
        .or_else(|| value.get("const"))
    {
        json_type(first)
    } else {
        "any"
    };
    vec![implied]
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether a schema has anything to list under it.
fn expandable(node: &Resolved<'_>) -> bool {
    let value = node.at.value;
    let non_empty = |key: &str| match value.get(key) {
        Some(Value::Object(map)) => !map.is_empty(),
        Some(Value::Array(list)) => !list.is_empty(),
        _ => false,
    };
    non_empty("properties")
        || non_empty("allOf")
        || non_empty("oneOf")
        || non_empty("anyOf")
        || value.get("additionalProperties").is_some_and(Value::is_object)
        || value.get("items").is_some_and(Value::is_object)
}

/// A property's own description (written beside its `$ref`) or its schema's, or the title.
pub(super) fn description_of<'v>(outer: &'v Value, resolved: &'v Value) -> Option<&'v str> {
    [outer, resolved]
        .into_iter()
        .flat_map(|v| [v.get("description"), v.get("title")])
        .flatten()
        .filter_map(Value::as_str)
        .map(str::trim)
        .find(|text| !text.is_empty())
}

/// Appends the allowed values, constant and default of a schema, each after `separator`.
pub(super) fn push_notes(line: &mut String, value: &Value, separator: &str) {
    let notes = notes_of(value);
    if notes.is_empty() {
        return;
    }
    // The notes read as sentences after the description, which often ends without a period.
    if line.ends_with(|c: char| c.is_alphanumeric()) {
        line.push('.');
    }
    for note in notes {
        line.push_str(separator);
        line.push_str(&note);
    }
}

fn notes_of(value: &Value) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(values) = value.get("enum").and_then(Value::as_array) {
        let mut shown: Vec<String> = values
            .iter()
            .take(MAX_ENUM_VALUES)
            .map(|v| code(&literal(v)))
            .collect();
        if values.len() > MAX_ENUM_VALUES {
            shown.push(format!("and {} more", values.len() - MAX_ENUM_VALUES));
        }
        notes.push(format!("Allowed values: {}.", shown.join(", ")));
    }
    if let Some(constant) = value.get("const") {
        notes.push(format!("Always {}.", code(&literal(constant))));
    }
    if let Some(default) = value.get("default") {
        notes.push(format!("Default: {}.", code(&literal(default))));
    }
    notes
}

/// A JSON value as its text, strings without their quotes.
pub(super) fn literal(value: &Value) -> String {
    const LONGEST: usize = 200;
    let mut text = match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    // A default can be a whole object: the note shows its start.
    if text.len() > LONGEST {
        let mut end = LONGEST;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}
