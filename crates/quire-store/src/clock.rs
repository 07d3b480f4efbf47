//! Time as quire stores it (Unix milliseconds) and shows it (RFC 3339, UTC, milliseconds).

use time::OffsetDateTime;
use time::format_description::BorrowedFormatItem;
use time::macros::format_description;

const RFC3339_MS: &[BorrowedFormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    let nanos = OffsetDateTime::now_utc().unix_timestamp_nanos();
    i64::try_from(nanos / 1_000_000).unwrap_or(i64::MAX)
}

/// `2026-11-22T10:04:05.123Z`.
pub fn format_ms(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(RFC3339_MS).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00.000Z".to_string())
}

/// Parses any RFC 3339 timestamp into Unix milliseconds.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let t = OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

/// Serializes Unix milliseconds as RFC 3339 in response structs: `#[serde(with = "clock::ts")]`.
pub mod ts {
    use serde::Serializer;

    pub fn serialize<S: Serializer>(ms: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_ms(*ms))
    }

    /// For `Option<i64>` fields (absent when None, with `skip_serializing_if`).
    pub mod opt {
        use serde::Serializer;

        pub fn serialize<S: Serializer>(ms: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
            match ms {
                Some(ms) => s.serialize_str(&super::super::format_ms(*ms)),
                None => s.serialize_none(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_milliseconds() {
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_ms(1_763_805_845_123), "2025-11-22T10:04:05.123Z");
        assert_eq!(parse_rfc3339("2025-11-22T10:04:05.123Z"), Some(1_763_805_845_123));
        assert_eq!(
            parse_rfc3339("2025-11-22T11:04:05.123+01:00"),
            Some(1_763_805_845_123)
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
    }
}
