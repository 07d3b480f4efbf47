//! GitBook's content references (`ContentRef`): what links, images, files and mentions point at.

use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};
use serde_json::Value;

use super::JsonMap;

/// A reference to content, tagged by `kind` as in GitBook's `ContentRef` schema.
///
/// A reference whose kind is unknown, or whose fields do not exactly match the known shape of
/// its kind (an extra field, a wrong type), is kept verbatim as [`ContentRef::Other`], so nothing
/// a client sends is lost; [`ContentRef::kind`] still reports its kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ContentRef {
    /// `{"kind": "url", "url"}`: an external URL, or a raw markdown target not resolved yet.
    Url {
        /// The URL or raw target.
        url: String,
    },
    /// `{"kind": "file", "file", "space"?}`.
    File {
        /// File id.
        file: String,
        /// Space id when the file lives in another space.
        space: Option<String>,
    },
    /// `{"kind": "page", "page", "space"?}`.
    Page {
        /// Page id.
        page: String,
        /// Space id when the page lives in another space.
        space: Option<String>,
    },
    /// `{"kind": "anchor", "anchor", "page"?, "space"?}`.
    Anchor {
        /// Anchor id (heading slug).
        anchor: String,
        /// Page id; the current page when absent.
        page: Option<String>,
        /// Space id; the current space when absent.
        space: Option<String>,
    },
    /// `{"kind": "user", "user"}`.
    User {
        /// User id.
        user: String,
    },
    /// `{"kind": "collection", "collection"}`.
    Collection {
        /// Collection id.
        collection: String,
    },
    /// `{"kind": "space", "space"}`.
    Space {
        /// Space id.
        space: String,
    },
    /// `{"kind": "reusable-content", "reusableContent", "space"?}`.
    ReusableContent {
        /// Reusable content id.
        reusable_content: String,
        /// Space id when defined in another space.
        space: Option<String>,
    },
    /// `{"kind": "tag", "tag", "space"?}`.
    Tag {
        /// Tag slug.
        tag: String,
        /// Space id when defined in another space.
        space: Option<String>,
    },
    /// `{"kind": "openapi", "spec"}`.
    OpenApi {
        /// Slug of the OpenAPI specification.
        spec: String,
    },
    /// Any other reference, kept as sent (it always has a string `kind`).
    Other(JsonMap),
}

impl ContentRef {
    /// A `url` reference.
    pub fn url(url: &str) -> Self {
        Self::Url { url: url.to_owned() }
    }

    /// A `page` reference in the current space.
    pub fn page(page: &str) -> Self {
        Self::Page {
            page: page.to_owned(),
            space: None,
        }
    }

    /// A `file` reference in the current space.
    pub fn file(file: &str) -> Self {
        Self::File {
            file: file.to_owned(),
            space: None,
        }
    }

    /// An `anchor` reference, on `page` or on the current page.
    pub fn anchor(anchor: &str, page: Option<&str>) -> Self {
        Self::Anchor {
            anchor: anchor.to_owned(),
            page: page.map(str::to_owned),
            space: None,
        }
    }

    /// The `kind` discriminator.
    pub fn kind(&self) -> &str {
        match self {
            Self::Url { .. } => "url",
            Self::File { .. } => "file",
            Self::Page { .. } => "page",
            Self::Anchor { .. } => "anchor",
            Self::User { .. } => "user",
            Self::Collection { .. } => "collection",
            Self::Space { .. } => "space",
            Self::ReusableContent { .. } => "reusable-content",
            Self::Tag { .. } => "tag",
            Self::OpenApi { .. } => "openapi",
            Self::Other(map) => map.get("kind").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The text to use as a link target when nothing better is known: the URL, `#anchor`, or
    /// the referenced id.
    pub fn fallback_target(&self) -> String {
        match self {
            Self::Url { url } => url.clone(),
            Self::Anchor {
                anchor, page: None, ..
            } => format!("#{anchor}"),
            Self::Anchor {
                anchor,
                page: Some(page),
                ..
            } => format!("{page}#{anchor}"),
            Self::File { file, .. } => file.clone(),
            Self::Page { page, .. } => page.clone(),
            Self::User { user } => user.clone(),
            Self::Collection { collection } => collection.clone(),
            Self::Space { space } => space.clone(),
            Self::ReusableContent { reusable_content, .. } => reusable_content.clone(),
            Self::Tag { tag, .. } => tag.clone(),
            Self::OpenApi { spec } => spec.clone(),
            Self::Other(_) => String::new(),
        }
    }

    /// Reads a reference from a JSON object; `None` when it has no string `kind`.
    pub fn from_map(map: JsonMap) -> Option<Self> {
        let kind = map.get("kind")?.as_str()?;
        let parsed = match kind {
            "url" => fields(&map, &["url"], &[]).map(|mut f| Self::Url { url: take(&mut f, 0) }),
            "file" => fields(&map, &["file"], &["space"]).map(|mut f| Self::File {
                file: take(&mut f, 0),
                space: f[1].take(),
            }),
            "page" => fields(&map, &["page"], &["space"]).map(|mut f| Self::Page {
                page: take(&mut f, 0),
                space: f[1].take(),
            }),
            "anchor" => fields(&map, &["anchor"], &["page", "space"]).map(|mut f| Self::Anchor {
                anchor: take(&mut f, 0),
                page: f[1].take(),
                space: f[2].take(),
            }),
            "user" => fields(&map, &["user"], &[]).map(|mut f| Self::User {
                user: take(&mut f, 0),
            }),
            "collection" => fields(&map, &["collection"], &[]).map(|mut f| Self::Collection {
                collection: take(&mut f, 0),
            }),
            "space" => fields(&map, &["space"], &[]).map(|mut f| Self::Space {
                space: take(&mut f, 0),
            }),
            "reusable-content" => {
                fields(&map, &["reusableContent"], &["space"]).map(|mut f| Self::ReusableContent {
                    reusable_content: take(&mut f, 0),
                    space: f[1].take(),
                })
            }
            "tag" => fields(&map, &["tag"], &["space"]).map(|mut f| Self::Tag {
                tag: take(&mut f, 0),
                space: f[1].take(),
            }),
            "openapi" => fields(&map, &["spec"], &[]).map(|mut f| Self::OpenApi {
                spec: take(&mut f, 0),
            }),
            _ => None,
        };
        Some(parsed.unwrap_or(Self::Other(map)))
    }

    /// Reads a reference from a JSON value; `None` unless it is an object with a string `kind`.
    pub fn from_value(value: &Value) -> Option<Self> {
        Self::from_map(value.as_object()?.clone())
    }

    /// The reference as a JSON object, `kind` first.
    pub fn to_map(&self) -> JsonMap {
        let mut map = JsonMap::new();
        let mut put = |key: &str, value: &Option<String>| {
            if let Some(value) = value {
                map.insert(key.to_owned(), Value::String(value.clone()));
            }
        };
        put("kind", &Some(self.kind().to_owned()));
        match self {
            Self::Url { url } => put("url", &Some(url.clone())),
            Self::File { file, space } => {
                put("file", &Some(file.clone()));
                put("space", space);
            }
            Self::Page { page, space } => {
                put("page", &Some(page.clone()));
                put("space", space);
            }
            Self::Anchor { anchor, page, space } => {
                put("anchor", &Some(anchor.clone()));
                put("page", page);
                put("space", space);
            }
            Self::User { user } => put("user", &Some(user.clone())),
            Self::Collection { collection } => put("collection", &Some(collection.clone())),
            Self::Space { space } => put("space", &Some(space.clone())),
            Self::ReusableContent {
                reusable_content,
                space,
            } => {
                put("reusableContent", &Some(reusable_content.clone()));
                put("space", space);
            }
            Self::Tag { tag, space } => {
                put("tag", &Some(tag.clone()));
                put("space", space);
            }
            Self::OpenApi { spec } => put("spec", &Some(spec.clone())),
            Self::Other(other) => return other.clone(),
        }
        map
    }

    /// The reference as a JSON value.
    pub fn to_value(&self) -> Value {
        Value::Object(self.to_map())
    }
}

/// The string values of `required` then `optional` fields, or `None` when `map` has another
/// field, misses a required one, or holds a non-string value.
fn fields(map: &JsonMap, required: &[&str], optional: &[&str]) -> Option<Vec<Option<String>>> {
    let known = |key: &str| key == "kind" || required.contains(&key) || optional.contains(&key);
    if !map.keys().all(|key| known(key)) {
        return None;
    }
    let mut values = Vec::with_capacity(required.len() + optional.len());
    for key in required {
        values.push(Some(map.get(*key)?.as_str()?.to_owned()));
    }
    for key in optional {
        match map.get(*key) {
            None => values.push(None),
            Some(value) => values.push(Some(value.as_str()?.to_owned())),
        }
    }
    Some(values)
}

/// Takes a required field out of the list built by [`fields`] (always present there).
fn take(values: &mut [Option<String>], index: usize) -> String {
    values.get_mut(index).and_then(Option::take).unwrap_or_default()
}

impl Serialize for ContentRef {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_map().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ContentRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = JsonMap::deserialize(deserializer)?;
        Self::from_map(map).ok_or_else(|| D::Error::custom("a content reference needs a string \"kind\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_kinds_parse_into_variants_and_serialize_back() {
        let cases = [
            (
                json!({"kind": "url", "url": "https://x"}),
                ContentRef::url("https://x"),
            ),
            (json!({"kind": "page", "page": "p1"}), ContentRef::page("p1")),
            (
                json!({"kind": "file", "file": "f", "space": "s"}),
                ContentRef::File {
                    file: "f".into(),
                    space: Some("s".into()),
                },
            ),
            (
                json!({"kind": "anchor", "anchor": "a", "page": "p"}),
                ContentRef::anchor("a", Some("p")),
            ),
            (
                json!({"kind": "user", "user": "u"}),
                ContentRef::User { user: "u".into() },
            ),
            (
                json!({"kind": "collection", "collection": "c"}),
                ContentRef::Collection {
                    collection: "c".into(),
                },
            ),
            (
                json!({"kind": "space", "space": "s"}),
                ContentRef::Space { space: "s".into() },
            ),
            (
                json!({"kind": "reusable-content", "reusableContent": "r"}),
                ContentRef::ReusableContent {
                    reusable_content: "r".into(),
                    space: None,
                },
            ),
            (
                json!({"kind": "tag", "tag": "t"}),
                ContentRef::Tag {
                    tag: "t".into(),
                    space: None,
                },
            ),
            (
                json!({"kind": "openapi", "spec": "petstore"}),
                ContentRef::OpenApi {
                    spec: "petstore".into(),
                },
            ),
        ];
        for (json, expected) in cases {
            let parsed: ContentRef = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(parsed, expected);
            assert_eq!(serde_json::to_value(&parsed).unwrap(), json);
        }
    }

    #[test]
    fn unknown_kinds_and_unexpected_shapes_are_kept_verbatim() {
        for json in [
            json!({"kind": "integration", "integration": "x", "extra": [1]}),
            json!({"kind": "page", "page": "p", "future": true}),
            json!({"kind": "page", "page": 42}),
            json!({"kind": "url"}),
        ] {
            let parsed: ContentRef = serde_json::from_value(json.clone()).unwrap();
            assert!(matches!(parsed, ContentRef::Other(_)), "{json}");
            assert_eq!(parsed.kind(), json["kind"].as_str().unwrap());
            assert_eq!(serde_json::to_value(&parsed).unwrap(), json);
        }
    }

    #[test]
    fn a_reference_needs_a_kind() {
        assert!(serde_json::from_value::<ContentRef>(json!({"url": "x"})).is_err());
        assert!(serde_json::from_value::<ContentRef>(json!("x")).is_err());
        assert_eq!(ContentRef::from_value(&json!({"kind": 1})), None);
    }

    #[test]
    fn fallback_targets() {
        assert_eq!(ContentRef::anchor("a", None).fallback_target(), "#a");
        assert_eq!(ContentRef::anchor("a", Some("p")).fallback_target(), "p#a");
        assert_eq!(ContentRef::page("p").fallback_target(), "p");
        assert_eq!(ContentRef::url("u").fallback_target(), "u");
    }
}
