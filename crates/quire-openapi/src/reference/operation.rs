//! The sections of an operation: parameters, request body, responses and example request.

use serde_json::Value;

use super::example::{Body, Request, explicit_example, plain};
use super::markdown::{Md, balanced, cell, code, heading_text, one_line};
use super::refs::At;
use super::schema::{description_of, push_notes};
use super::{Operation, Parameter, Renderer, str_field};

/// The parameter tables, in this order, and their headings.
const LOCATIONS: [(&str, &str); 4] = [
    ("path", "Path parameters"),
    ("query", "Query parameters"),
    ("header", "Header parameters"),
    ("cookie", "Cookie parameters"),
];

impl<'a> Renderer<'a> {
    pub(super) fn write_parameters(&mut self, md: &mut Md, parameters: &[Parameter<'a>]) {
        for (location, title) in LOCATIONS {
            let rows: Vec<(At<'a>, &str)> = parameters
                .iter()
                .filter_map(|p| match p {
                    Parameter::Found {
                        at,
                        name,
                        location: l,
                    } if *l == location => Some((*at, *name)),
                    _ => None,
                })
                .collect();
            if rows.is_empty() {
                continue;
            }
            md.push(&format!(
                "### {title}\n\n| Name | Type | Required | Description |\n| --- | --- | --- | --- |\n"
            ));
            for (at, name) in rows {
                let row = self.parameter_row(at, name, location);
                md.push(&row);
            }
            md.push("\n");
        }
        for parameter in parameters {
            if let Parameter::Unresolved(target) = parameter {
                md.push(&format!("Parameter {} (unresolved reference).\n\n", code(target)));
            }
        }
    }

    pub(super) fn parameter_row(&self, at: At<'a>, name: &str, location: &str) -> String {
        let value = at.value;
        let schema = parameter_schema(at);
        let (kind, schema_value) = match self.refs.resolve(schema) {
            Ok(node) => {
                let mut facts = self.facts(&node, schema);
                if value.get("deprecated").and_then(Value::as_bool) == Some(true)
                    && !facts.iter().any(|f| f == "deprecated")
                {
                    facts.push("deprecated".to_owned());
                }
                (facts.join(", "), node.at.value)
            }
            Err(target) => (format!("{} (unresolved reference)", code(&target)), value),
        };
        let required = location == "path" || value.get("required").and_then(Value::as_bool) == Some(true);
        let mut description = description_of(value, schema_value).unwrap_or_default().to_owned();
        push_notes(&mut description, schema_value, " ");
        format!(
            "| {} | {} | {} | {} |\n",
            cell(&code(name)),
            cell(&kind),
            if required { "Yes" } else { "No" },
            cell(description.trim())
        )
    }

    pub(super) fn write_request_body(
        &mut self,
        md: &mut Md,
        operation: &Operation<'a>,
        parameters: &[Parameter<'a>],
    ) {
        if let Some(body) = operation.operation.get("requestBody") {
            md.push("### Request body\n\n");
            match self.refs.resolve(body) {
                Err(target) => md.push(&format!("{} (unresolved reference)\n\n", code(&target))),
                Ok(node) => {
                    self.write_description_and_requirement(md, node.at.value);
                    if let Some(content) = node.at.get("content") {
                        self.write_content(md, content);
                    }
                }
            }
            return;
        }
        let body = parameters.iter().find_map(|p| match p {
            Parameter::Found {
                at, location: "body", ..
            } => Some(*at),
            _ => None,
        });
        if let Some(body) = body {
            md.push("### Request body\n\n");
            self.write_description_and_requirement(md, body.value);
            md.push(&format!(
                "{}\n\n",
                media_types_line(&self.media_types(operation, "consumes"))
            ));
            if let Some(schema) = body.get("schema") {
                self.write_schema_block(md, schema);
            }
            return;
        }
        self.write_form_data(md, operation, parameters);
    }

    /// Swagger 2.0 form fields, written as the properties of the body.
    pub(super) fn write_form_data(
        &mut self,
        md: &mut Md,
        operation: &Operation<'a>,
        parameters: &[Parameter<'a>],
    ) {
        let fields: Vec<(At<'a>, &str)> = parameters
            .iter()
            .filter_map(|p| match p {
                Parameter::Found {
                    at,
                    name,
                    location: "formData",
                } => Some((*at, *name)),
                _ => None,
            })
            .collect();
        if fields.is_empty() {
            return;
        }
        md.push(&format!(
            "### Request body\n\n{}\n\n",
            code(&form_media_type(&self.media_types(operation, "consumes")))
        ));
        for (at, name) in fields {
            let required = at.value.get("required").and_then(Value::as_bool) == Some(true);
            self.write_property(md, &code(name), at, required, 0, 1);
        }
        md.push("\n");
    }

    pub(super) fn write_description_and_requirement(&self, md: &mut Md, value: &Value) {
        if let Some(description) = str_field(value, "description") {
            md.push(&format!("{}\n\n", balanced(description)));
        }
        if value.get("required").and_then(Value::as_bool) == Some(true) {
            md.push("Required.\n\n");
        }
    }

    /// The media types of a 3.x `content`, those with the same schema written together.
    pub(super) fn write_content(&mut self, md: &mut Md, content: At<'a>) {
        let Some(map) = content.value.as_object() else {
            return;
        };
        let mut runs: Vec<(Vec<&'a str>, Option<&'a Value>)> = Vec::new();
        for (media_type, media) in map {
            let schema = media.get("schema");
            match runs.last_mut() {
                Some((types, last)) if *last == schema => types.push(media_type),
                _ => runs.push((vec![media_type.as_str()], schema)),
            }
        }
        for (types, schema) in runs {
            md.push(&format!("{}\n\n", media_types_line(&types)));
            if let Some(schema) = schema {
                self.write_schema_block(md, content.with(schema));
            }
        }
    }

    pub(super) fn write_responses(&mut self, md: &mut Md, operation: &Operation<'a>) {
        let Some(responses) = operation
            .operation
            .value
            .get("responses")
            .and_then(Value::as_object)
        else {
            return;
        };
        md.push("### Responses\n\n");
        for (status, response) in responses {
            if status.starts_with("x-") {
                continue;
            }
            if md.is_cut() {
                return;
            }
            md.push(&format!("#### {}\n\n", heading_text(status)));
            match self.refs.resolve(operation.operation.with(response)) {
                Err(target) => md.push(&format!("{} (unresolved reference)\n\n", code(&target))),
                Ok(node) => self.write_response(md, operation, node.at),
            }
        }
    }

    pub(super) fn write_response(&mut self, md: &mut Md, operation: &Operation<'a>, response: At<'a>) {
        if let Some(description) = str_field(response.value, "description") {
            md.push(&format!("{}\n\n", balanced(description)));
        }
        if let Some(content) = response.get("content") {
            self.write_content(md, content);
        } else if let Some(schema) = response.get("schema") {
            md.push(&format!(
                "{}\n\n",
                media_types_line(&self.media_types(operation, "produces"))
            ));
            self.write_schema_block(md, schema);
        }
    }

    /// A Swagger 2.0 operation's `consumes` or `produces`, else the description's, else JSON.
    pub(super) fn media_types(&self, operation: &Operation<'a>, key: &str) -> Vec<&'a str> {
        let listed = [operation.operation.value, self.root.value]
            .into_iter()
            .find_map(|v| v.get(key).and_then(Value::as_array).filter(|l| !l.is_empty()));
        match listed {
            Some(list) => list.iter().filter_map(Value::as_str).collect(),
            None => vec!["application/json"],
        }
    }

    pub(super) fn example_request(
        &mut self,
        operation: &Operation<'a>,
        parameters: &[Parameter<'a>],
    ) -> Request {
        let mut path = operation.path.to_owned();
        let mut request = Request {
            method: operation.method.to_ascii_uppercase(),
            ..Request::default()
        };
        self.apply_security(operation, &mut request);
        for parameter in parameters {
            let Parameter::Found { at, name, location } = parameter else {
                continue;
            };
            let required = at.value.get("required").and_then(Value::as_bool) == Some(true);
            match *location {
                "path" => {
                    if let Some(example) = self.parameter_explicit_example(*at) {
                        let encoded: String =
                            url::form_urlencoded::byte_serialize(plain(example).as_bytes()).collect();
                        path = path.replace(&format!("{{{name}}}"), &encoded);
                    }
                }
                "query" if required => {
                    let value = self.parameter_example(*at);
                    request.query.push(((*name).to_owned(), plain(&value)));
                }
                "header" if required && !is_reserved_header(name) => {
                    let value = self.parameter_example(*at);
                    request
                        .headers
                        .push(((*name).to_owned(), one_line(&plain(&value))));
                }
                "cookie" if required => {
                    let value = self.parameter_example(*at);
                    request
                        .cookies
                        .push(((*name).to_owned(), one_line(&plain(&value))));
                }
                _ => {}
            }
        }
        request.url = format!("{}{path}", self.server_url(operation));
        request.body = self.example_body(operation, parameters);
        request
    }

    pub(super) fn parameter_explicit_example(&self, at: At<'a>) -> Option<&'a Value> {
        if let Some(example) = explicit_example(at.value) {
            return Some(example);
        }
        let schema = self.refs.resolve(at.get("schema")?).ok()?;
        explicit_example(schema.at.value)
    }

    pub(super) fn parameter_example(&mut self, at: At<'a>) -> Value {
        match self.parameter_explicit_example(at) {
            Some(example) => example.clone(),
            None => self.example(parameter_schema(at)),
        }
    }

    pub(super) fn example_body(
        &mut self,
        operation: &Operation<'a>,
        parameters: &[Parameter<'a>],
    ) -> Option<Body> {
        if let Some(body) = operation.operation.get("requestBody") {
            let body = self.refs.resolve(body).ok()?;
            let content = body.at.value.get("content").and_then(Value::as_object)?;
            let (media_type, media) = content
                .iter()
                .find(|(media_type, _)| media_type.contains("json"))
                .or_else(|| content.iter().next())?;
            let media = body.at.with(media);
            let example = match explicit_example(media.value) {
                Some(example) => example.clone(),
                None => match media.get("schema") {
                    Some(schema) => self.example(schema),
                    None => Value::Null,
                },
            };
            return Some(Body {
                media_type: media_type.clone(),
                example,
            });
        }
        let consumes = self.media_types(operation, "consumes");
        let mut form = serde_json::Map::new();
        for parameter in parameters {
            match parameter {
                Parameter::Found {
                    at, location: "body", ..
                } => {
                    let media_type = consumes.iter().find(|m| m.contains("json")).or(consumes.first());
                    let schema = at.get("schema")?;
                    return Some(Body {
                        media_type: media_type.copied().unwrap_or("application/json").to_owned(),
                        example: self.example(schema),
                    });
                }
                Parameter::Found {
                    at,
                    name,
                    location: "formData",
                } => {
                    let value = match explicit_example(at.value) {
                        Some(example) => example.clone(),
                        // curl's syntax for uploading a file's content.
                        None if at.value.get("type").is_some_and(|t| t == "file") => Value::from("@file"),
                        None => self.example(*at),
                    };
                    form.insert((*name).to_owned(), value);
                }
                _ => {}
            }
        }
        (!form.is_empty()).then(|| Body {
            media_type: form_media_type(&consumes),
            example: Value::Object(form),
        })
    }

    /// The credentials of the first security requirement, as placeholders.
    pub(super) fn apply_security(&self, operation: &Operation<'a>, request: &mut Request) {
        let root = self.root.value;
        let requirements = operation
            .operation
            .value
            .get("security")
            .or_else(|| root.get("security"))
            .and_then(Value::as_array);
        let Some(requirement) = requirements
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
            .find(|r| !r.is_empty())
        else {
            return;
        };
        let schemes = root
            .pointer("/components/securitySchemes")
            .or_else(|| root.get("securityDefinitions"));
        for name in requirement.keys() {
            let Some(scheme) = schemes.and_then(|s| s.get(name)) else {
                continue;
            };
            let Ok(scheme) = self.refs.resolve(self.root.with(scheme)) else {
                continue;
            };
            apply_scheme(scheme.at.value, request);
        }
    }

    /// The server the operation is sent to, without a trailing `/`: 3.x `servers` (the
    /// operation's, the path's, the description's) with their variables' defaults, or 2.0's
    /// `schemes`, `host` and `basePath`. Empty when the description names none.
    pub(super) fn server_url(&self, operation: &Operation<'a>) -> String {
        let root = self.root.value;
        if root.get("swagger").is_some() {
            let scheme = [operation.operation.value, root]
                .into_iter()
                .find_map(|v| v.get("schemes")?.as_array()?.first()?.as_str())
                .unwrap_or("https");
            let base = str_field(root, "basePath").unwrap_or_default();
            let url = match str_field(root, "host") {
                Some(host) => format!("{scheme}://{host}{base}"),
                None => base.to_owned(),
            };
            return url.trim_end_matches('/').to_owned();
        }
        let server = [operation.operation.value, operation.item.value, root]
            .into_iter()
            .find_map(|v| v.get("servers")?.as_array()?.first());
        let Some(server) = server else {
            return String::new();
        };
        let url = str_field(server, "url").unwrap_or_default();
        with_variables(url, server.get("variables"))
            .trim_end_matches('/')
            .to_owned()
    }
}

/// A 3.x parameter's schema (or that of its `content`); a 2.0 parameter is its own schema.
fn parameter_schema(at: At<'_>) -> At<'_> {
    if let Some(schema) = at.get("schema") {
        return schema;
    }
    let in_content = at
        .value
        .get("content")
        .and_then(Value::as_object)
        .and_then(|content| content.values().find_map(|media| media.get("schema")));
    match in_content {
        Some(schema) => at.with(schema),
        None => at,
    }
}

/// Headers OpenAPI says a header parameter does not set.
fn is_reserved_header(name: &str) -> bool {
    ["accept", "content-type", "authorization"].contains(&name.to_ascii_lowercase().as_str())
}

fn media_types_line(types: &[&str]) -> String {
    let codes: Vec<String> = types.iter().map(|t| code(t)).collect();
    codes.join(", ")
}

fn form_media_type(consumes: &[&str]) -> String {
    let multipart = consumes.iter().any(|m| m.starts_with("multipart/"));
    if multipart {
        "multipart/form-data"
    } else {
        "application/x-www-form-urlencoded"
    }
    .to_owned()
}

fn apply_scheme(scheme: &Value, request: &mut Request) {
    let kind = scheme.get("type").and_then(Value::as_str).unwrap_or_default();
    let http_scheme = scheme
        .get("scheme")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let bearer = || ("Authorization".to_owned(), "Bearer YOUR_TOKEN".to_owned());
    match kind {
        "basic" => request.basic_auth = true,
        "http" if http_scheme == "basic" => request.basic_auth = true,
        "http" | "oauth2" | "openIdConnect" => push_header(request, bearer()),
        "apiKey" => {
            let name = one_line(scheme.get("name").and_then(Value::as_str).unwrap_or("X-API-Key"));
            let value = "YOUR_API_KEY".to_owned();
            match scheme.get("in").and_then(Value::as_str) {
                Some("query") => request.query.push((name, value)),
                Some("cookie") => request.cookies.push((name, value)),
                _ => push_header(request, (name, value)),
            }
        }
        _ => {}
    }
}

fn push_header(request: &mut Request, header: (String, String)) {
    let taken = request
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case(&header.0));
    if !taken {
        request.headers.push(header);
    }
}

/// A server URL with its `{variables}` replaced by their defaults (kept as written when the
/// server gives none).
fn with_variables(url: &str, variables: Option<&Value>) -> String {
    let mut out = String::with_capacity(url.len());
    let mut rest = url;
    while let Some(start) = rest.find('{') {
        let Some(length) = rest[start..].find('}') else {
            break;
        };
        let name = &rest[start + 1..start + length];
        out.push_str(&rest[..start]);
        match variables
            .and_then(|v| v.get(name))
            .and_then(|v| v.get("default"))
            .and_then(Value::as_str)
        {
            Some(default) => out.push_str(default),
            None => out.push_str(&rest[start..=start + length]),
        }
        rest = &rest[start + length + 1..];
    }
    out.push_str(rest);
    out
}
