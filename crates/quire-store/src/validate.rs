//! Field validation shared by handlers; every error names the field.

use crate::error::StoreError;

/// A title of `min..=max` characters that does not start or end with whitespace.
pub fn title(field: &str, value: &str, min: usize, max: usize) -> Result<String, StoreError> {
    no_control(field, value)?;
    let len = value.chars().count();
    if len < min || len > max {
        return Err(StoreError::invalid(format!(
            "`{field}` must be {min} to {max} characters long, not {len}"
        )));
    }
    if value.trim() != value {
        return Err(StoreError::invalid(format!(
            "`{field}` must not start or end with whitespace"
        )));
    }
    Ok(value.to_string())
}

/// A name or title of at most `max` characters, without control characters.
pub fn name(field: &str, value: &str, max: usize) -> Result<(), StoreError> {
    no_control(field, value)?;
    max_len(field, value, max)
}

/// Refuses control characters (Unicode category Cc: NUL, other C0 and C1 codes, DEL, and also
/// tab and newlines, which no title or name needs).
pub fn no_control(field: &str, value: &str) -> Result<(), StoreError> {
    match value.chars().find(|c| c.is_control()) {
        Some(c) => Err(StoreError::invalid(format!(
            "`{field}` must not contain control characters (found U+{:04X})",
            u32::from(c)
        ))),
        None => Ok(()),
    }
}

/// A string of at most `max` characters.
pub fn max_len(field: &str, value: &str, max: usize) -> Result<(), StoreError> {
    let len = value.chars().count();
    if len > max {
        return Err(StoreError::invalid(format!(
            "`{field}` must be at most {max} characters long, not {len}"
        )));
    }
    Ok(())
}

/// An email domain such as `example.com`, returned lowercased.
pub fn email_domain(field: &str, value: &str) -> Result<String, StoreError> {
    let domain = value.trim().to_ascii_lowercase();
    let labels: Vec<&str> = domain.split('.').collect();
    let valid = domain.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        });
    if !valid {
        return Err(StoreError::invalid(format!(
            "`{field}` contains an invalid email domain {value:?}"
        )));
    }
    Ok(domain)
}

/// An absolute http(s) URL of at most 2048 characters.
pub fn url(field: &str, value: &str) -> Result<url::Url, StoreError> {
    max_len(field, value, 2048)?;
    let parsed = url::Url::parse(value)
        .map_err(|e| StoreError::invalid(format!("`{field}` must be an absolute URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(StoreError::invalid(format!(
            "`{field}` must be an http or https URL"
        )));
    }
    Ok(parsed)
}

/// An email address (`local@domain`), returned with its domain lowercased.
pub fn email(field: &str, value: &str) -> Result<String, StoreError> {
    let value = value.trim();
    let (local, domain) = value
        .rsplit_once('@')
        .filter(|(l, _)| !l.is_empty() && l.len() <= 64 && !l.contains(char::is_whitespace))
        .ok_or_else(|| StoreError::invalid(format!("`{field}` must be an email address, not {value:?}")))?;
    let domain = email_domain(field, domain)
        .map_err(|_| StoreError::invalid(format!("`{field}` must be an email address, not {value:?}")))?;
    Ok(format!("{local}@{domain}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_fields() {
        assert!(title("title", "ab", 2, 255).is_ok());
        assert!(title("title", "a", 2, 255).is_err());
        assert!(title("title", " ab", 2, 255).is_err());
        assert!(title("title", "a\0b", 2, 255).is_err());
        assert!(title("title", "a\u{85}b", 2, 255).is_err());
        assert!(name("subject", "a\u{7f}", 10).is_err());
        assert!(name("subject", "Ünïcode – ok", 20).is_ok());
        assert_eq!(email_domain("d", "Example.COM").unwrap(), "example.com");
        assert!(email_domain("d", "localhost").is_err());
        assert!(email_domain("d", "-a.com").is_err());
        assert_eq!(email("e", "Ann@Example.com").unwrap(), "Ann@example.com");
        assert!(email("e", "nope").is_err());
        assert!(url("u", "https://x.org/a.png").is_ok());
        assert!(url("u", "ftp://x.org").is_err());
    }
}
