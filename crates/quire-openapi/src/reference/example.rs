//! Example values generated from schemas, and the `curl` command of an example request.

use serde_json::{Map, Value};

use super::refs::At;
use super::{MAX_EXAMPLE_BYTES, MAX_EXAMPLE_VALUES, MAX_SCHEMA_DEPTH, Renderer};

/// The parts of an example request, gathered from the operation.
#[derive(Default)]
pub(super) struct Request {
    pub(super) method: String,
    pub(super) url: String,
    pub(super) query: Vec<(String, String)>,
    pub(super) headers: Vec<(String, String)>,
    pub(super) cookies: Vec<(String, String)>,
    pub(super) basic_auth: bool,
    pub(super) body: Option<Body>,
}

pub(super) struct Body {
    pub(super) media_type: String,
    pub(super) example: Value,
}

impl<'a> Renderer<'a> {
    /// An example value of `schema`: its own example, default or first allowed value, else a
    /// value of its type, objects filled with their (writable) properties.
    pub(super) fn example(&mut self, schema: At<'a>) -> Value {
        let mut budget = MAX_EXAMPLE_VALUES;
        let saved = self.stack.len();
        let value = self.example_of(schema, 0, &mut budget);
        self.stack.truncate(saved);
        value.unwrap_or(Value::Null)
    }

    /// `None` where a value cannot be given (a cycle, the depth or budget reached): the caller
    /// leaves the property out.
    fn example_of(&mut self, at: At<'a>, depth: usize, budget: &mut usize) -> Option<Value> {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        if let Some(explicit) = explicit_example(at.value) {
            return Some(explicit.clone());
        }
        let Ok(node) = self.refs.resolve(at) else {
            return Some(Value::Null);
        };
        if let Some(explicit) = explicit_example(node.at.value) {
            return Some(explicit.clone());
        }
        if depth >= MAX_SCHEMA_DEPTH || self.on_stack(node.at) {
            return None;
        }
        self.stack.push(node.at.id());
        let value = self.generated(node.at, depth, budget);
        self.stack.pop();
        value
    }

    fn generated(&mut self, at: At<'a>, depth: usize, budget: &mut usize) -> Option<Value> {
        let value = at.value;
        if let Some(all_of) = value.get("allOf").and_then(Value::as_array) {
            return self.merged(at, all_of, depth, budget);
        }
        let declared = value.get("type").is_some() || value.get("properties").is_some();
        if !declared {
            for key in ["oneOf", "anyOf"] {
                if let Some(options) = value.get(key).and_then(Value::as_array) {
                    return options
                        .iter()
                        .find_map(|option| self.example_of(at.with(option), depth + 1, budget));
                }
            }
        }
        match primary_type(value) {
            "object" => Some(Value::Object(self.object(at, depth, budget))),
            "array" => Some(self.array(at, depth, budget)),
            "string" => Some(Value::String(string_for_format(value).to_owned())),
            "integer" | "number" => Some(number(value)),
            "boolean" => Some(Value::Bool(true)),
            _ => Some(Value::Null),
        }
    }

    /// An `allOf`: the members' examples merged when they are objects, else the first one.
    fn merged(&mut self, at: At<'a>, all_of: &'a [Value], depth: usize, budget: &mut usize) -> Option<Value> {
        let mut merged = self.object(at, depth, budget);
        let mut other = None;
        for member in all_of {
            match self.example_of(at.with(member), depth + 1, budget) {
                Some(Value::Object(map)) => merged.extend(map),
                Some(value) if other.is_none() => other = Some(value),
                _ => {}
            }
        }
        match other {
            Some(value) if merged.is_empty() => Some(value),
            _ => Some(Value::Object(merged)),
        }
    }

    fn object(&mut self, at: At<'a>, depth: usize, budget: &mut usize) -> Map<String, Value> {
        let mut map = Map::new();
        let Some(properties) = at.value.get("properties").and_then(Value::as_object) else {
            return map;
        };
        for (name, schema) in properties {
            let schema = at.with(schema);
            if self.is_read_only(schema) {
                continue;
            }
            if let Some(value) = self.example_of(schema, depth + 1, budget) {
                map.insert(name.clone(), value);
            }
        }
        map
    }

    fn array(&mut self, at: At<'a>, depth: usize, budget: &mut usize) -> Value {
        let item = at
            .get("items")
            .and_then(|items| self.example_of(items, depth + 1, budget));
        Value::Array(item.into_iter().collect())
    }

    /// A request leaves out what the server writes.
    fn is_read_only(&self, schema: At<'a>) -> bool {
        let read_only = |v: &Value| v.get("readOnly").and_then(Value::as_bool) == Some(true);
        read_only(schema.value)
            || self
                .refs
                .resolve(schema)
                .is_ok_and(|node| read_only(node.at.value))
    }
}

/// The example a schema or parameter gives itself.
pub(super) fn explicit_example(value: &Value) -> Option<&Value> {
    if let Some(example) = value.get("example") {
        return Some(example);
    }
    match value.get("examples") {
        Some(Value::Array(list)) if !list.is_empty() => return list.first(),
        // A parameter's or media type's `examples`: a map of Example objects.
        Some(Value::Object(map)) => {
            if let Some(example) = map.values().find_map(|e| e.get("value")) {
                return Some(example);
            }
        }
        _ => {}
    }
    value
        .get("default")
        .or_else(|| value.get("const"))
        .or_else(|| value.get("enum").and_then(Value::as_array)?.first())
}

/// The first type a schema declares other than `null`, or the one its shape implies.
fn primary_type(value: &Value) -> &str {
    match value.get("type") {
        Some(Value::String(t)) => return t,
        Some(Value::Array(types)) => {
            if let Some(t) = types.iter().filter_map(Value::as_str).find(|t| *t != "null") {
                return t;
            }
        }
        _ => {}
    }
    if value.get("properties").is_some() || value.get("additionalProperties").is_some() {
        "object"
    } else if value.get("items").is_some() {
        "array"
    } else {
        "any"
    }
}

fn string_for_format(value: &Value) -> &'static str {
    match value.get("format").and_then(Value::as_str).unwrap_or_default() {
        "date-time" => "2024-01-01T00:00:00Z",
        "date" => "2024-01-01",
        "time" => "12:00:00Z",
        "uuid" => "123e4567-e89b-12d3-a456-426614174000",
        "email" => "user@example.com",
        "uri" | "url" | "iri" | "uri-reference" => "https://example.com",
        "hostname" => "example.com",
        "ipv4" => "192.0.2.1",
        "ipv6" => "2001:db8::1",
        "byte" => "U3RyaW5n",
        "binary" => "(binary)",
        "password" => "********",
        _ => "string",
    }
}

fn number(value: &Value) -> Value {
    value
        .get("minimum")
        .filter(|minimum| minimum.is_number())
        .cloned()
        .unwrap_or_else(|| Value::from(0))
}

/// A value as it goes in a URL, a header or a form field.
pub(super) fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// The `curl` command of `request`, one option a line.
pub(super) fn curl(request: &Request) -> String {
    let mut url = request.url.clone();
    for (index, (name, value)) in request.query.iter().enumerate() {
        url.push(if index == 0 { '?' } else { '&' });
        url.extend(url::form_urlencoded::byte_serialize(name.as_bytes()));
        url.push('=');
        url.extend(url::form_urlencoded::byte_serialize(value.as_bytes()));
    }
    let mut first = String::from("curl");
    match request.method.as_str() {
        "GET" => {}
        "HEAD" => first.push_str(" -I"),
        method => {
            first.push_str(" -X ");
            first.push_str(method);
        }
    }
    first.push(' ');
    first.push_str(&shell(&url));
    let mut lines = vec![first];
    if request.basic_auth {
        lines.push(format!("-u {}", shell("USERNAME:PASSWORD")));
    }
    for (name, value) in &request.headers {
        lines.push(format!("-H {}", shell(&format!("{name}: {value}"))));
    }
    if !request.cookies.is_empty() {
        let cookies: Vec<String> = request
            .cookies
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        lines.push(format!("--cookie {}", shell(&cookies.join("; "))));
    }
    if let Some(body) = &request.body {
        lines.extend(body_lines(body));
    }
    lines.join(" \\\n  ")
}

fn body_lines(body: &Body) -> Vec<String> {
    let media_type = body.media_type.to_ascii_lowercase();
    let mut lines = vec![format!(
        "-H {}",
        shell(&format!("Content-Type: {}", body.media_type))
    )];
    if media_type.starts_with("multipart/") || media_type == "application/x-www-form-urlencoded" {
        let option = if media_type.starts_with("multipart/") {
            "-F"
        } else {
            "--data-urlencode"
        };
        // Multipart sets its own Content-Type, with the boundary.
        if option == "-F" {
            lines.clear();
        }
        if let Value::Object(fields) = &body.example {
            for (name, value) in fields {
                lines.push(format!("{option} {}", shell(&format!("{name}={}", plain(value)))));
            }
        }
        return lines;
    }
    let text = match &body.example {
        Value::String(text) if !media_type.contains("json") => text.clone(),
        example => serde_json::to_string_pretty(example).unwrap_or_default(),
    };
    if text.len() > MAX_EXAMPLE_BYTES {
        lines.push("--data-binary '@body.json'".to_owned());
    } else {
        lines.push(format!("-d {}", shell(&text)));
    }
    lines
}

/// `text` as one single-quoted shell word.
fn shell(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_example_curl_quotes_and_encodes() {
        let request = Request {
            method: "POST".to_owned(),
            url: "https://api.example.com/pets".to_owned(),
            query: vec![("q".to_owned(), "a b&c".to_owned())],
            headers: vec![("X-Note".to_owned(), "it's".to_owned())],
            body: Some(Body {
                media_type: "application/json".to_owned(),
                example: serde_json::json!({"name": "Rex"}),
            }),
            ..Request::default()
        };
        let command = curl(&request);
        assert!(command.starts_with("curl -X POST 'https://api.example.com/pets?q=a+b%26c'"));
        assert!(command.contains("-H 'X-Note: it'\\''s'"));
        assert!(command.contains("-d '{\n  \"name\": \"Rex\"\n}'"));
    }
}
