//! Single HTML tags as comrak hands them over inline (`<mark style="...">`, `<img src="...">`,
//! `<details open>`), entities, and escaping for output. Whole HTML blocks are parsed by
//! html5ever (the `html_dom` module).

/// GitBook's `<img>` for an image or inline image: `src`, `alt`, the `width` and `height` it
/// was given, and `data-size="line"` for an inline image drawn at the line's height.
pub(crate) fn img_tag(image: &crate::document::Node, src: &str) -> String {
    let mut img = format!(
        "<img src=\"{}\" alt=\"{}\"",
        escape(src),
        escape(image.data_str("alt").unwrap_or_default())
    );
    for key in ["width", "height"] {
        if let Some(value) = image.data_value(key).filter(|v| v.is_number() || v.is_string()) {
            let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            img.push_str(&format!(" {key}=\"{}\"", escape(&value)));
        }
    }
    if image.node_type() == "inline-image" && image.data_str("size") == Some("line") {
        img.push_str(" data-size=\"line\"");
    }
    img.push('>');
    img
}

/// One HTML tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tag {
    /// Lowercase tag name.
    pub name: String,
    /// Attributes in source order, values entity-decoded; valueless attributes have `""`.
    pub attrs: Vec<(String, String)>,
    /// `</name>`.
    pub closing: bool,
}

impl Tag {
    /// The value of an attribute.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// Parses `input` when it is exactly one tag (`<br>`, `</sup>`, `<a id="x">`).
pub(crate) fn parse_tag(input: &str) -> Option<Tag> {
    let (tag, rest) = parse_tag_prefix(input)?;
    rest.is_empty().then_some(tag)
}

fn parse_tag_prefix(input: &str) -> Option<(Tag, &str)> {
    let mut rest = input.strip_prefix('<')?;
    let closing = match rest.strip_prefix('/') {
        Some(after) => {
            rest = after;
            true
        }
        None => false,
    };
    let name_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(rest.len());
    if name_len == 0 || !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let name = rest[..name_len].to_ascii_lowercase();
    rest = &rest[name_len..];
    let mut attrs = Vec::new();
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("/>") {
            return Some((Tag { name, attrs, closing }, after));
        }
        if let Some(after) = rest.strip_prefix('>') {
            return Some((Tag { name, attrs, closing }, after));
        }
        let key_len = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '=' | '>' | '/' | '"' | '\'' | '<'))
            .unwrap_or(rest.len());
        if key_len == 0 || closing {
            return None;
        }
        let key = rest[..key_len].to_ascii_lowercase();
        rest = rest[key_len..].trim_start();
        let Some(after_equals) = rest.strip_prefix('=') else {
            attrs.push((key, String::new()));
            continue;
        };
        let (value, after) = attribute_value(after_equals.trim_start())?;
        attrs.push((key, decode_entities(value)));
        rest = after;
    }
}

/// A quoted or bare attribute value and what follows it.
pub(crate) fn attribute_value(input: &str) -> Option<(&str, &str)> {
    if let Some(quote) = input.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let body = &input[1..];
        let end = body.find(quote)?;
        Some((&body[..end], &body[end + 1..]))
    } else {
        let end = input
            .find(|c: char| c.is_whitespace() || c == '>' || c == '%')
            .unwrap_or(input.len());
        (end > 0).then(|| (&input[..end], &input[end..]))
    }
}

/// Decodes the named entities GitBook writes and numeric character references; anything else
/// is left as written.
pub(crate) fn decode_entities(input: &str) -> String {
    let mut output = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find('&') {
        output.push_str(&rest[..start]);
        rest = &rest[start..];
        let decoded = rest.find(';').filter(|end| *end <= 10).and_then(|end| {
            let character = match &rest[1..end] {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some('\u{a0}'),
                entity => entity.strip_prefix('#').and_then(|number| {
                    let code = match number.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok(),
                        None => number.parse().ok(),
                    };
                    code.and_then(char::from_u32)
                }),
            };
            character.map(|character| (character, end))
        });
        match decoded {
            Some((character, end)) => {
                output.push(character);
                rest = &rest[end + 1..];
            }
            None => {
                output.push('&');
                rest = &rest[1..];
            }
        }
    }
    output.push_str(rest);
    output
}

/// Escapes text for an HTML attribute value in double quotes (or for HTML text).
pub(crate) fn escape(input: &str) -> String {
    let mut output = String::with_capacity(input.len());
    for character in input.chars() {
        match character {
            '&' => output.push_str("&amp;"),
            '"' => output.push_str("&quot;"),
            '<' => output.push_str("&lt;"),
            '>' => output.push_str("&gt;"),
            other => output.push(other),
        }
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_single_tags() {
        let tag = parse_tag(r#"<mark style="color:red;" data-x='a &amp; b' hidden>"#).unwrap();
        assert_eq!(tag.name, "mark");
        assert!(!tag.closing);
        assert_eq!(tag.attr("style"), Some("color:red;"));
        assert_eq!(tag.attr("data-x"), Some("a & b"));
        assert_eq!(tag.attr("hidden"), Some(""));
        assert_eq!(parse_tag("</SUP>").unwrap().name, "sup");
        assert!(parse_tag("</sup>").unwrap().closing);
        assert_eq!(parse_tag("<br/>").unwrap().name, "br");
        assert_eq!(parse_tag("<img src=a.png>").unwrap().attr("src"), Some("a.png"));
        for broken in ["<!-- c -->", "<>", "< b>", "<a href=\"x>", "<b>x", "</b x>"] {
            assert_eq!(parse_tag(broken), None, "{broken}");
        }
    }

    #[test]
    fn entities_round_trip() {
        assert_eq!(
            decode_entities("a &amp; &#65;&#x42; &bogus; & x"),
            "a & AB &bogus; & x"
        );
        let text = "say \"<hi>\" & go";
        assert_eq!(decode_entities(&escape(text)), text);
    }
}
