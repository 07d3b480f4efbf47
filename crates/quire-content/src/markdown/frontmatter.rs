//! Page metadata in YAML frontmatter, as GitBook writes it in synced markdown files.

use serde::{Deserialize, Serialize};

use crate::document::JsonMap;

/// Why frontmatter could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid frontmatter: {0}")]
pub struct FrontmatterError(String);

/// GitBook's page frontmatter. Every field is optional; unknown keys are kept in `extra` and
/// written back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageFrontmatter {
    /// Page description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Page icon (an icon name or an emoji).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// Cover image: a path or URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cover: Option<String>,
    /// Vertical offset of the cover image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cover_y: Option<f64>,
    /// Page layout options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<PageLayout>,
    /// Hidden from the table of contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<bool>,
    /// Excluded from search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_index: Option<bool>,
    /// Excluded from search engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_robots_index: Option<bool>,
    /// Other keys, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `layout` of [`PageFrontmatter`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageLayout {
    /// `default` or `wide`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<String>,
    /// Title visibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<LayoutVisibility>,
    /// Description visibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<LayoutVisibility>,
    /// Table of contents visibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_of_contents: Option<LayoutVisibility>,
    /// Outline visibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outline: Option<LayoutVisibility>,
    /// Pagination visibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pagination: Option<LayoutVisibility>,
    /// Other keys, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `{visible: bool}` of a layout element.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LayoutVisibility {
    /// Whether the element is shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visible: Option<bool>,
    /// Other keys, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl PageFrontmatter {
    /// Reads frontmatter YAML (without the `---` lines). Empty YAML is empty frontmatter.
    pub fn from_yaml(yaml: &str) -> Result<Self, FrontmatterError> {
        if yaml.trim().is_empty() {
            return Ok(Self::default());
        }
        serde_yaml_ng::from_str(yaml).map_err(|error| FrontmatterError(error.to_string()))
    }

    /// Checks the nesting of the values it keeps (unknown keys are kept as they came).
    pub(crate) fn check_limits(&self) -> Result<(), crate::limits::LimitError> {
        match serde_json::to_value(self) {
            // The frontmatter's own map is not a level of its values.
            Ok(serde_json::Value::Object(map)) => {
                map.values().try_for_each(crate::limits::check_frontmatter_value)
            }
            _ => Ok(()),
        }
    }

    /// Writes the frontmatter as YAML (without the `---` lines); empty for empty frontmatter.
    pub fn to_yaml(&self) -> String {
        if *self == Self::default() {
            return String::new();
        }
        // Serializing strings, numbers, booleans and JSON values to YAML cannot fail.
        serde_yaml_ng::to_string(self).unwrap_or_default()
    }
}

/// Splits `---` frontmatter off the start of a markdown file: `(Some(yaml), body)`, or
/// `(None, markdown)` when there is none.
pub fn split_frontmatter(markdown: &str) -> (Option<&str>, &str) {
    let text = markdown.strip_prefix('\u{feff}').unwrap_or(markdown);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, markdown);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if content == "---" || content == "..." {
            return (Some(&rest[..offset]), &rest[offset + line.len()..]);
        }
        offset += line.len();
    }
    (None, markdown)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GITBOOK: &str = "description: >-\n  A long\n  description\nicon: gear\ncover: .gitbook/assets/cover.png\ncoverY: -12.5\nlayout:\n  width: wide\n  title:\n    visible: true\n  tableOfContents:\n    visible: false\n  outline:\n    visible: true\n  pagination:\n    visible: false\n  future: 1\nhidden: true\nnoIndex: false\nnoRobotsIndex: true\ncustom:\n  nested: [1, two]\n";

    #[test]
    fn reads_gitbook_frontmatter_and_keeps_unknown_keys() {
        let frontmatter = PageFrontmatter::from_yaml(GITBOOK).unwrap();
        assert_eq!(frontmatter.description.as_deref(), Some("A long description"));
        assert_eq!(frontmatter.icon.as_deref(), Some("gear"));
        assert_eq!(frontmatter.cover_y, Some(-12.5));
        let layout = frontmatter.layout.as_ref().unwrap();
        assert_eq!(layout.width.as_deref(), Some("wide"));
        assert_eq!(layout.table_of_contents.as_ref().unwrap().visible, Some(false));
        assert_eq!(layout.extra["future"], 1);
        assert_eq!(frontmatter.hidden, Some(true));
        assert_eq!(frontmatter.no_robots_index, Some(true));
        assert_eq!(
            frontmatter.extra["custom"],
            serde_json::json!({"nested": [1, "two"]})
        );
        let again = PageFrontmatter::from_yaml(&frontmatter.to_yaml()).unwrap();
        assert_eq!(again, frontmatter);
        assert_eq!(again.to_yaml(), frontmatter.to_yaml());
    }

    #[test]
    fn empty_and_invalid_frontmatter() {
        assert_eq!(
            PageFrontmatter::from_yaml("  \n").unwrap(),
            PageFrontmatter::default()
        );
        assert_eq!(PageFrontmatter::default().to_yaml(), "");
        assert!(PageFrontmatter::from_yaml("hidden: [unclosed").is_err());
        let error = PageFrontmatter::from_yaml("hidden: maybe").unwrap_err();
        assert!(error.to_string().starts_with("invalid frontmatter: "), "{error}");
    }

    #[test]
    fn splits_frontmatter_from_the_body() {
        assert_eq!(
            split_frontmatter("---\na: 1\n---\n# T\n"),
            (Some("a: 1\n"), "# T\n")
        );
        assert_eq!(
            split_frontmatter("---\r\na: 1\r\n...\r\nbody"),
            (Some("a: 1\r\n"), "body")
        );
        assert_eq!(split_frontmatter("---\n---\nx"), (Some(""), "x"));
        assert_eq!(split_frontmatter("# T\n---\n"), (None, "# T\n---\n"));
        assert_eq!(split_frontmatter("---\nno end"), (None, "---\nno end"));
    }
}
