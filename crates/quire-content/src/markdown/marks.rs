//! The marks markdown can express, their canonical order, and the HTML tags that stand for them.

use serde_json::Value;

use crate::document::{JsonMap, Mark};

/// Canonical order of marks in a leaf, so that equal formatting always serializes the same.
const MARK_ORDER: &[&str] = &[
    "bold",
    "italic",
    "strikethrough",
    "code",
    "keyboard",
    "superscript",
    "subscript",
    "color",
];

/// Sorts marks canonically and drops repeated types (`**bold *and* <b>bold</b>**`).
pub(crate) fn canonical_marks(mut marks: Vec<Mark>) -> Vec<Mark> {
    let rank = |mark: &Mark| {
        MARK_ORDER
            .iter()
            .position(|known| *known == mark.mark_type)
            .unwrap_or(MARK_ORDER.len())
    };
    marks.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.mark_type.cmp(&b.mark_type)));
    marks.dedup_by(|a, b| a.mark_type == b.mark_type);
    marks
}

/// The mark an inline HTML tag name stands for.
pub(crate) fn mark_for_tag(name: &str) -> Option<&'static str> {
    Some(match name {
        "strong" | "b" => "bold",
        "em" | "i" => "italic",
        "s" | "del" | "strike" => "strikethrough",
        "code" => "code",
        "kbd" => "keyboard",
        "sup" => "superscript",
        "sub" => "subscript",
        "mark" => "color",
        _ => return None,
    })
}

/// The HTML tag used to write a mark that has no markdown delimiter (or whose delimiter would
/// not parse back at that position).
pub(crate) fn tag_for_mark(mark_type: &str) -> Option<&'static str> {
    Some(match mark_type {
        "bold" => "strong",
        "italic" => "em",
        "strikethrough" => "del",
        "keyboard" => "kbd",
        "superscript" => "sup",
        "subscript" => "sub",
        "color" => "mark",
        _ => return None,
    })
}

/// A `color` mark from `<mark style="color:red;background-color:blue;">`.
pub(crate) fn color_mark_from_style(style: Option<&str>) -> Mark {
    let mut text = "default".to_owned();
    let mut background = "default".to_owned();
    for declaration in style.unwrap_or_default().split(';') {
        let Some((property, value)) = declaration.split_once(':') else {
            continue;
        };
        match property.trim() {
            "color" => text = value.trim().to_owned(),
            "background-color" | "background" => background = value.trim().to_owned(),
            _ => {}
        }
    }
    let mut data = JsonMap::new();
    data.insert("text".into(), Value::String(text));
    data.insert("background".into(), Value::String(background));
    Mark::with_data("color", data)
}

/// The `style` attribute of the `<mark>` tag for a `color` mark.
pub(crate) fn color_style(mark: &Mark) -> String {
    let get = |key: &str| {
        mark.data
            .as_ref()
            .and_then(|data| data.get(key))
            .and_then(Value::as_str)
            .unwrap_or("default")
            .to_owned()
    };
    format!("color:{};background-color:{};", get("text"), get("background"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_order_and_dedup() {
        let marks = canonical_marks(vec![
            Mark::new("zzz"),
            Mark::new("code"),
            Mark::new("bold"),
            Mark::new("italic"),
            Mark::new("bold"),
        ]);
        let types: Vec<_> = marks.iter().map(|mark| mark.mark_type.as_str()).collect();
        assert_eq!(types, ["bold", "italic", "code", "zzz"]);
    }

    #[test]
    fn color_marks_round_trip_through_style() {
        let mark = color_mark_from_style(Some("color:$primary; background-color: red"));
        assert_eq!(color_style(&mark), "color:$primary;background-color:red;");
        assert_eq!(color_mark_from_style(Some(&color_style(&mark))), mark);
        assert_eq!(
            color_style(&color_mark_from_style(None)),
            "color:default;background-color:default;"
        );
    }

    #[test]
    fn tags_and_marks_correspond() {
        for mark in [
            "bold",
            "italic",
            "strikethrough",
            "keyboard",
            "superscript",
            "subscript",
            "color",
        ] {
            let tag = tag_for_mark(mark).unwrap();
            assert_eq!(mark_for_tag(tag), Some(mark));
        }
    }
}
