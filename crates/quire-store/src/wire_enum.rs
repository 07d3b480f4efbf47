//! Closed sets of states (a space's visibility, a change request's status, ...) that are stored
//! in the database and sent on the wire as the same strings.

/// Declares such an enum: `serde` (de)serializes each variant as its string, [`FromValue`]
/// reads it from a text column (an unknown string is a decode error, never a default), and it
/// converts into a [`Value`] for parameters. Parsing client input stays with each handler, so
/// that every field keeps its own 400 message.
///
/// [`FromValue`]: crate::db::FromValue
/// [`Value`]: crate::db::Value
#[macro_export]
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $wire:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        $vis enum $name {
            $($(#[$variant_meta])* #[serde(rename = $wire)] $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire),+
                }
            }

            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($wire => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// The wire strings, "a, b, c", for messages.
            #[allow(dead_code)]
            pub fn list() -> String {
                [$($wire),+].join(", ")
            }
        }

        // By hand: the derive does not read `rename` through this macro's literals, and the
        // schema must list the wire strings.
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some([$($wire),+]))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl $crate::db::FromValue for $name {
            fn from_value(value: &$crate::db::Value) -> Result<$name, String> {
                match value {
                    $crate::db::Value::Text(text) => $name::parse(text).ok_or_else(|| {
                        format!("expected one of {}, found {text:?}", $name::list())
                    }),
                    other => Err(format!("expected text, found {other:?}")),
                }
            }
        }

        impl From<$name> for $crate::db::Value {
            fn from(value: $name) -> $crate::db::Value {
                $crate::db::Value::Text(value.as_str().to_string())
            }
        }
    };
}
