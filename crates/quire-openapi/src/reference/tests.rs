use serde_json::{Value, json};

use super::*;

fn file(dir: &str, filename: &str, specification: Value) -> FileEntry {
    FileEntry {
        dir: dir.to_owned(),
        filename: filename.to_owned(),
        is_entrypoint: filename == "openapi.json",
        references: Vec::new(),
        specification,
    }
}

fn single(specification: Value) -> Vec<FileEntry> {
    vec![file(".", "openapi.json", specification)]
}

fn page<'p>(pages: &'p [ReferencePage], title: &str) -> &'p ReferencePage {
    pages
        .iter()
        .find(|p| p.title == title)
        .unwrap_or_else(|| panic!("no page {title:?} in {pages:#?}"))
}

fn petstore() -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Petstore", "version": "1.0.0"},
        "servers": [{"url": "https://{region}.petstore.example.com/v1/", "variables": {"region": {"default": "eu"}}}],
        "security": [{"bearer": []}],
        "tags": [
            {"name": "pets", "description": "Everything about **your** pets.\n\nMore about pets."},
            {"name": "store", "x-page-title": "Pet store"}
        ],
        "paths": {
            "/pets/{petId}": {
                "parameters": [
                    {"name": "petId", "in": "path", "required": true, "description": "The pet's id | key", "schema": {"type": "string", "format": "uuid"}}
                ],
                "get": {
                    "tags": ["pets"],
                    "summary": "Get a pet",
                    "description": "Returns one pet.",
                    "parameters": [
                        {"name": "fields", "in": "query", "required": true, "schema": {"type": "string", "enum": ["all", "name"]}},
                        {"$ref": "#/components/parameters/Trace"}
                    ],
                    "responses": {
                        "200": {"description": "The pet", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}},
                        "404": {"$ref": "#/components/responses/NotFound"}
                    }
                }
            },
            "/pets": {
                "post": {
                    "tags": ["pets"],
                    "operationId": "createPet",
                    "requestBody": {
                        "required": true,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}}
                    },
                    "responses": {"201": {"description": "Created"}}
                }
            },
            "/orders": {
                "get": {"tags": ["store", "orders"], "responses": {"200": {"description": "OK"}}}
            },
            "/health": {
                "get": {"responses": {"200": {"description": "OK"}}}
            }
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "parameters": {
                "Trace": {"name": "X-Trace", "in": "header", "schema": {"type": "string"}, "description": "A trace\nid"}
            },
            "responses": {
                "NotFound": {"description": "Not found", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
            },
            "schemas": {
                "Error": {"type": "object", "properties": {"message": {"type": "string"}}},
                "Owner": {
                    "type": "object",
                    "required": ["email"],
                    "properties": {
                        "email": {"type": "string", "format": "email", "description": "Where to write."},
                        "address": {"type": "object", "properties": {"city": {"type": "string", "example": "Paris"}}}
                    }
                },
                "NewPet": {
                    "allOf": [
                        {"$ref": "#/components/schemas/Base"},
                        {
                            "type": "object",
                            "required": ["name"],
                            "properties": {
                                "name": {"type": "string", "description": "The pet's name."},
                                "status": {"type": "string", "enum": ["available", "sold"]},
                                "owner": {"$ref": "#/components/schemas/Owner"},
                                "tags": {"type": "array", "items": {"type": "object", "properties": {"label": {"type": "string"}}}},
                                "kind": {"oneOf": [{"$ref": "#/components/schemas/Cat"}, {"type": "string"}]}
                            }
                        }
                    ]
                },
                "Base": {"type": "object", "properties": {"id": {"type": "integer", "readOnly": true}}},
                "Cat": {"type": "object", "properties": {"meows": {"type": "boolean"}}},
                "Pet": {"allOf": [{"$ref": "#/components/schemas/NewPet"}]}
            }
        }
    })
}

#[test]
fn reference_petstore_pages_follow_tag_order() {
    let pages = pages(&single(petstore()));
    let titles: Vec<&str> = pages.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(titles, ["pets", "Pet store", "orders", UNTAGGED_TITLE]);
    let slugs: Vec<&str> = pages.iter().map(|p| p.slug.as_str()).collect();
    assert_eq!(slugs, ["pets", "pet-store", "orders", "other"]);
    assert_eq!(
        pages[0].description.as_deref(),
        Some("Everything about your pets.")
    );
    assert!(
        pages[0]
            .markdown
            .starts_with("Everything about **your** pets.\n\nMore about pets.\n\n")
    );
    // An operation with two tags is on both pages; one without a heading text gets "METHOD path".
    assert!(page(&pages, "Pet store").markdown.contains("## GET /orders\n"));
    assert!(page(&pages, "orders").markdown.contains("## GET /orders\n"));
    assert!(page(&pages, UNTAGGED_TITLE).markdown.contains("## GET /health\n"));
}

#[test]
fn reference_petstore_operation_parameters_and_responses() {
    let pages = pages(&single(petstore()));
    let md = &page(&pages, "pets").markdown;
    assert!(
        md.contains("## Get a pet\n\n`GET` `/pets/{petId}`\n\nReturns one pet.\n\n"),
        "{md}"
    );
    assert!(md.contains(
        "### Path parameters\n\n| Name | Type | Required | Description |\n| --- | --- | --- | --- |\n"
    ));
    assert!(
        md.contains("| `petId` | string, uuid | Yes | The pet's id \\| key |\n"),
        "{md}"
    );
    assert!(md.contains("### Query parameters"));
    assert!(
        md.contains("| `fields` | string | Yes | Allowed values: `all`, `name`. |\n"),
        "{md}"
    );
    assert!(md.contains("### Header parameters"));
    assert!(md.contains("| `X-Trace` | string | No | A trace id |\n"), "{md}");
    // Responses: a schema through `allOf` of a named schema, and a response `$ref`.
    assert!(
        md.contains("### Responses\n\n#### 200\n\nThe pet\n\n`application/json`\n\nType: Pet\n\n"),
        "{md}"
    );
    assert!(md.contains("- `name` (string, required): The pet's name.\n"));
    assert!(
        md.contains("#### 404\n\nNot found\n\n`application/json`\n\nType: Error\n\n- `message` (string)\n")
    );
}

#[test]
fn reference_petstore_request_body_is_a_nested_list() {
    let pages = pages(&single(petstore()));
    let md = &page(&pages, "pets").markdown;
    assert!(md.contains("## createPet\n\n`POST` `/pets`\n\n### Request body\n\nRequired.\n\n`application/json`\n\nType: NewPet\n\n"), "{md}");
    let expected = "\
- `id` (integer, read-only)
- `name` (string, required): The pet's name.
- `status` (string)
  Allowed values: `available`, `sold`.
- `owner` (Owner)
  - `email` (string, required, email): Where to write.
  - `address` (object)
    - `city` (string)
- `tags` (array of object)
  - `label` (string)
- `kind` (Cat or string)
  - Option 1 of 2 (one of): Cat
    - `meows` (boolean)
  - Option 2 of 2 (one of): string
";
    assert!(md.contains(expected), "{md}");
}

#[test]
fn reference_petstore_curl_example() {
    let pages = pages(&single(petstore()));
    let md = &page(&pages, "pets").markdown;
    let get = "```bash\ncurl 'https://eu.petstore.example.com/v1/pets/{petId}?fields=all' \\\n  -H 'Authorization: Bearer YOUR_TOKEN'\n```\n";
    assert!(md.contains(get), "{md}");
    let post = "\
```bash
curl -X POST 'https://eu.petstore.example.com/v1/pets' \\
  -H 'Authorization: Bearer YOUR_TOKEN' \\
  -H 'Content-Type: application/json' \\
  -d '{
  \"name\": \"string\",
  \"status\": \"available\",
  \"owner\": {
    \"email\": \"user@example.com\",
    \"address\": {
      \"city\": \"Paris\"
    }
  },
  \"tags\": [
    {
      \"label\": \"string\"
    }
  ],
  \"kind\": {
    \"meows\": true
  }
}'
```
";
    assert!(md.contains(post), "{md}");
}

#[test]
fn reference_swagger2_body_definitions_and_host() {
    let spec = json!({
        "swagger": "2.0",
        "info": {"title": "Legacy", "version": "1"},
        "host": "legacy.example.com",
        "basePath": "/api/",
        "schemes": ["http", "https"],
        "consumes": ["application/json"],
        "paths": {
            "/users": {
                "post": {
                    "tags": ["users"],
                    "summary": "Create a user",
                    "parameters": [
                        {"name": "user", "in": "body", "required": true, "description": "The new user.", "schema": {"$ref": "#/definitions/User"}},
                        {"name": "dryRun", "in": "query", "required": true, "type": "boolean"},
                        {"name": "ids", "in": "query", "type": "array", "items": {"type": "integer"}}
                    ],
                    "responses": {"200": {"description": "The user", "schema": {"$ref": "#/definitions/User"}}}
                }
            },
            "/avatars": {
                "post": {
                    "tags": ["users"],
                    "consumes": ["multipart/form-data"],
                    "parameters": [{"name": "file", "in": "formData", "type": "file", "required": true}],
                    "responses": {"204": {"description": "Stored"}}
                }
            }
        },
        "definitions": {
            "User": {"type": "object", "required": ["login"], "properties": {"login": {"type": "string", "example": "octo"}, "age": {"type": "integer"}}}
        }
    });
    let pages = pages(&single(spec));
    assert_eq!(pages.len(), 1);
    let md = &pages[0].markdown;
    assert!(md.contains("### Request body\n\nThe new user.\n\nRequired.\n\n`application/json`\n\nType: User\n\n- `login` (string, required)\n- `age` (integer)\n"), "{md}");
    assert!(md.contains("| `dryRun` | boolean | Yes |  |\n"), "{md}");
    assert!(md.contains("| `ids` | array of integer | No |  |\n"), "{md}");
    assert!(
        md.contains("#### 200\n\nThe user\n\n`application/json`\n\nType: User\n\n"),
        "{md}"
    );
    assert!(md.contains("curl -X POST 'http://legacy.example.com/api/users?dryRun=true' \\\n  -H 'Content-Type: application/json' \\\n  -d '{\n  \"login\": \"octo\",\n  \"age\": 0\n}'"), "{md}");
    assert!(
        md.contains("### Request body\n\n`multipart/form-data`\n\n- `file` (file, required)\n"),
        "{md}"
    );
    assert!(md.contains("-F 'file=@file'"), "{md}");
}

#[test]
fn reference_refs_to_other_files_resolve_relative_to_their_dir() {
    let entry = json!({
        "openapi": "3.1.0",
        "info": {"title": "Split", "version": "1"},
        "paths": {
            "/pets": {
                "get": {
                    "tags": ["pets"],
                    "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "schemas/pet.yaml#/Pet"}}}}}
                }
            }
        }
    });
    let pet = json!({
        "Pet": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "owner": {"$ref": "../common/owner.json"},
                "tag": {"$ref": "#/Tag"}
            }
        },
        "Tag": {"type": "object", "properties": {"label": {"type": ["string", "null"]}}}
    });
    let owner = json!({"type": "object", "properties": {"email": {"type": "string", "format": "email"}}});
    let fs = vec![
        file(".", "openapi.json", entry),
        file("schemas", "schemas/pet.yaml", pet),
        file("common", "common/owner.json", owner),
    ];
    let pages = pages(&fs);
    let md = &pages[0].markdown;
    let expected = "Type: Pet\n\n- `name` (string)\n- `owner` (owner)\n  - `email` (string, email)\n- `tag` (Tag)\n  - `label` (string or null)\n";
    assert!(md.contains(expected), "{md}");
}

#[test]
fn reference_self_referential_schema_terminates_circular() {
    let spec = json!({
        "openapi": "3.0.0",
        "info": {"title": "Tree", "version": "1"},
        "paths": {"/nodes": {"post": {
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}},
            "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}
        }}},
        "components": {"schemas": {
            "Node": {"type": "object", "properties": {
                "name": {"type": "string"},
                "parent": {"$ref": "#/components/schemas/Node"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
            }},
            "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
            "B": {"allOf": [{"$ref": "#/components/schemas/A"}, {"properties": {"x": {"type": "integer"}}}]}
        }}
    });
    let pages = pages(&single(spec));
    assert_eq!(pages.len(), 1);
    assert_eq!(pages[0].title, "Tree");
    let md = &pages[0].markdown;
    assert!(md.contains("Type: Node\n\n- `name` (string)\n- `parent` (Node (circular))\n- `children` (array of Node (circular))\n"), "{md}");
    assert!(
        md.contains("Type: A\n\n- `b` (B)\n  - `x` (integer)\n  - A (circular)\n"),
        "{md}"
    );
    // The example body stops at the cycle instead of recursing.
    assert!(
        md.contains("-d '{\n  \"name\": \"string\",\n  \"children\": []\n}'"),
        "{md}"
    );
}

#[test]
fn reference_unresolvable_ref_shows_its_text() {
    let spec = json!({
        "openapi": "3.0.0",
        "info": {"title": "Broken", "version": "1"},
        "paths": {"/x": {"get": {
            "parameters": [{"$ref": "#/components/parameters/Nope"}],
            "responses": {
                "200": {"description": "OK", "content": {"application/json": {"schema": {
                    "type": "object",
                    "properties": {
                        "a": {"$ref": "#/components/schemas/Missing"},
                        "b": {"$ref": "other.yaml#/B"},
                        "c": {"$ref": "https://example.com/c.json"},
                        "d": {"$ref": "#/components/schemas/Loop"}
                    }
                }}}},
                "404": {"$ref": "#/components/responses/Gone"}
            }
        }}},
        "components": {"schemas": {"Loop": {"$ref": "#/components/schemas/Loop"}}}
    });
    let pages = pages(&single(spec));
    let md = &pages[0].markdown;
    assert!(
        md.contains("Parameter `#/components/parameters/Nope` (unresolved reference)."),
        "{md}"
    );
    assert!(
        md.contains("- `a` (`#/components/schemas/Missing` (unresolved reference))\n"),
        "{md}"
    );
    assert!(md.contains("- `b` (`other.yaml#/B` (unresolved reference))\n"));
    assert!(md.contains("- `c` (`https://example.com/c.json` (unresolved reference))\n"));
    assert!(md.contains("- `d` (`#/components/schemas/Loop` (unresolved reference))\n"));
    assert!(md.contains("#### 404\n\n`#/components/responses/Gone` (unresolved reference)\n\n"));
}

#[test]
fn reference_escaped_pointers_resolve() {
    let spec = json!({
        "openapi": "3.0.0",
        "info": {"title": "Escapes", "version": "1"},
        "paths": {
            "/a/{id}": {"get": {"responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"type": "object", "properties": {"n": {"type": "number"}}}}}}}}},
            "/b": {"get": {"responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/paths/~1a~1%7Bid%7D/get/responses/200/content/application~1json/schema"}}}}}}}
        }
    });
    let pages = pages(&single(spec));
    let md = &pages[0].markdown;
    assert!(md.contains("## GET /b\n"));
    assert!(md.contains("Type: schema\n\n- `n` (number)\n"), "{md}");
}

#[test]
fn reference_schema_deeper_than_the_limit_is_cut() {
    let mut schema = json!({"type": "string"});
    for level in (0..MAX_SCHEMA_DEPTH + 5).rev() {
        schema = json!({"type": "object", "properties": {format!("level{level}"): schema}});
    }
    let spec = json!({
        "openapi": "3.0.0",
        "info": {"title": "Deep", "version": "1"},
        "paths": {"/deep": {"post": {
            "requestBody": {"content": {"application/json": {"schema": schema}}},
            "responses": {"204": {"description": "Done"}}
        }}}
    });
    let pages = pages(&single(spec));
    let md = &pages[0].markdown;
    let last_shown = format!("`level{}`", MAX_SCHEMA_DEPTH - 1);
    let first_hidden = format!("`level{MAX_SCHEMA_DEPTH}`");
    assert!(md.contains(&last_shown), "{md}");
    assert!(!md.contains(&first_hidden), "{md}");
    let pad = " ".repeat(2 * MAX_SCHEMA_DEPTH);
    assert!(
        md.contains(&format!(
            "{pad}- … (deeper levels not shown: more than {MAX_SCHEMA_DEPTH} levels)\n"
        )),
        "{md}"
    );
}

#[test]
fn reference_names_cannot_break_tables_or_fences() {
    let spec = json!({
        "openapi": "3.0.0",
        "info": {"title": "Hostile", "version": "1"},
        "paths": {"/x": {"get": {
            "summary": "Line one\n# not a heading",
            "description": "Starts a fence\n```\nnever closed",
            "parameters": [{"name": "a|b\n| c", "in": "query", "schema": {"type": "string"}}],
            "responses": {"200": {"description": "OK"}}
        }}}
    });
    let pages = pages(&single(spec));
    let md = &pages[0].markdown;
    assert!(md.contains("## Line one # not a heading\n"), "{md}");
    assert!(md.contains("Starts a fence\n```\nnever closed\n```\n\n"), "{md}");
    assert!(md.contains("| `a\\|b \\| c` | string | No |  |\n"), "{md}");
}

#[test]
fn reference_slugs_are_unique() {
    let spec = json!({
        "openapi": "3.0.0",
        "info": {"title": "Slugs", "version": "1"},
        "tags": [{"name": "A b"}, {"name": "a-b"}, {"name": "!!"}],
        "paths": {}
    });
    let pages = pages(&single(spec));
    let slugs: Vec<&str> = pages.iter().map(|p| p.slug.as_str()).collect();
    assert_eq!(slugs, ["a-b", "a-b-2", "page"]);
}

#[test]
fn reference_big_page_is_cut_with_a_note() {
    let properties: serde_json::Map<String, Value> = (0..200)
        .map(|i| {
            (
                format!("p{i}"),
                json!({"type": "string", "description": "x".repeat(200)}),
            )
        })
        .collect();
    let schema = json!({"type": "object", "properties": properties});
    let paths: serde_json::Map<String, Value> = (0..100)
        .map(|i| {
            let responses =
                json!({"200": {"description": "OK", "content": {"application/json": {"schema": schema}}}});
            (
                format!("/r{i}"),
                json!({"get": {"tags": ["big"], "responses": responses}}),
            )
        })
        .collect();
    let spec = json!({"openapi": "3.0.0", "info": {"title": "Big", "version": "1"}, "paths": paths});
    let pages = pages(&single(spec));
    let md = &pages[0].markdown;
    assert!(md.len() <= MAX_PAGE_BYTES);
    let limit = MAX_PAGE_BYTES - CUT_NOTE_ROOM;
    assert!(
        md.ends_with(&format!("longer than {limit} bytes.\n")),
        "{}",
        &md[md.len() - 200..]
    );
    assert!(md.contains("## GET /r0\n"));
    assert!(!md.contains("## GET /r99\n"));
}

/// The GitBook description, when the benchmark fixture has been fetched.
#[test]
fn reference_gitbook_description_renders_every_operation() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/gitbook-api/package/spec/openapi.json"
    );
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("skipped: {path} is absent");
        return;
    };
    let spec: Value = serde_json::from_str(&text).unwrap();
    let fs = single(spec);
    let started = std::time::Instant::now();
    let pages = pages(&fs);
    let elapsed = started.elapsed();
    let slowest = slowest_page(&fs);
    let root = &fs[0].specification;
    for tag in root["tags"].as_array().unwrap() {
        let title = tag_title(tag, tag["name"].as_str().unwrap());
        assert!(pages.iter().any(|p| p.title == title), "no page for {title}");
    }
    let mut operations = 0;
    for (path, item) in root["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            if !METHODS.contains(&method.as_str()) {
                continue;
            }
            operations += 1;
            let heading = format!("## {}\n", operation_heading(operation, method, path));
            assert!(
                pages.iter().any(|p| p.markdown.contains(&heading)),
                "no heading {heading:?}"
            );
        }
    }
    for page in &pages {
        assert!(
            page.markdown.len() <= MAX_PAGE_BYTES,
            "{} is too long",
            page.title
        );
    }
    let largest = pages.iter().map(|p| (p.markdown.len(), &p.title)).max();
    let total: usize = pages.iter().map(|p| p.markdown.len()).sum();
    eprintln!(
        "gitbook: {} pages, {operations} operations, {total} bytes (largest page {largest:?}) in {elapsed:?}; slowest page {slowest:?}",
        pages.len()
    );
}

/// The page that takes longest to write on its own (with a fresh renderer, so nothing is
/// reused from other pages), and its time.
fn slowest_page(fs: &[FileEntry]) -> Option<(std::time::Duration, String)> {
    let refs = Refs::new(fs);
    let root = refs.entry()?;
    let operations = operations(&refs, root);
    let groups = groups(root.value, &operations);
    groups
        .iter()
        .map(|group| {
            let mut renderer = Renderer {
                refs: Refs::new(fs),
                root,
                stack: Vec::new(),
                listed: HashMap::new(),
                remaining: MAX_TOTAL_BYTES,
            };
            let started = std::time::Instant::now();
            let page = renderer.page(group, &operations, &mut HashSet::new());
            (started.elapsed(), page.title)
        })
        .max()
}

/// A named schema is listed once per page: the bodies of later operations of the page, and the
/// same schema nested at the same depth or deeper, refer to the listing above; another page
/// lists it again.
#[test]
fn reference_a_named_schema_is_listed_once_per_page() {
    let item = json!({"$ref": "#/components/schemas/Item"});
    let ok = |schema: Value| json!({"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}});
    let spec = json!({
        "openapi": "3.0.3",
        "info": {"title": "T", "version": "1"},
        "paths": {
            "/a": {"get": {"tags": ["one"], "responses": ok(item.clone())}},
            "/b": {"get": {"tags": ["one"], "responses": ok(json!({"type": "object", "properties": {"inner": item.clone()}}))}},
            "/c": {"get": {"tags": ["one"], "responses": ok(item.clone())}},
            "/d": {"get": {"tags": ["two"], "responses": ok(item)}}
        },
        "components": {"schemas": {"Item": {"type": "object", "properties": {"weight_in_grams": {"type": "integer"}}}}}
    });
    let pages = pages(&single(spec));
    let one = &page(&pages, "one").markdown;
    assert_eq!(one.matches("weight_in_grams").count(), 1, "{one}");
    assert_eq!(one.matches("are listed above on this page").count(), 1, "{one}");
    assert!(one.contains("described above"), "{one}");
    let two = &page(&pages, "two").markdown;
    assert_eq!(two.matches("weight_in_grams").count(), 1, "{two}");
}
