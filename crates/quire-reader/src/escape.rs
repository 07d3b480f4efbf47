//! HTML escaping, the same for the document renderer and the templates: `&`, `<`, `>`, `"` and
//! `'` (html-escape's quoted-attribute set), which makes text safe both between tags and in a
//! quoted attribute. Unlike minijinja's own escaper it leaves `/` alone, which is safe in both
//! places and common in URLs (a sidebar is mostly URLs).

use std::fmt;

/// Text written escaped by `Display`.
pub(crate) struct Escaped<'a>(pub &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&html_escape::encode_quoted_attribute(self.0))
    }
}

/// The templates' formatter: auto-escaped output goes through [`Escaped`].
pub(crate) fn formatter(
    out: &mut minijinja::Output,
    state: &minijinja::State,
    value: &minijinja::Value,
) -> Result<(), minijinja::Error> {
    if state.auto_escape() == minijinja::AutoEscape::Html && !value.is_safe() {
        let text = value.to_string();
        out.write_str(&html_escape::encode_quoted_attribute(&text))
            .map_err(minijinja::Error::from)
    } else {
        minijinja::escape_formatter(out, state, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes_but_not_slashes() {
        assert_eq!(
            Escaped("<a href=\"/x?a=1&b='2'\">").to_string(),
            "&lt;a href=&quot;/x?a=1&amp;b=&#x27;2&#x27;&quot;&gt;"
        );
    }
}
