//! TeX formulas as MathML, which browsers lay out themselves (no script, no web font).
//!
//! pulldown-latex writes the MathML, but it does not escape everything it copies from the
//! formula (`\operatorname{<img ...>}` comes out as a raw tag, and an HTML tag inside MathML
//! breaks out of it). So its output is read back here and written again: only MathML elements
//! and attributes from an allowlist, properly nested, with text escaped; anything else and the
//! formula is shown as its source instead.

use crate::escape::Escaped;

/// The elements pulldown-latex writes.
const ELEMENTS: &[&str] = &[
    "math",
    "mi",
    "mo",
    "mn",
    "ms",
    "mtext",
    "mspace",
    "mrow",
    "mfrac",
    "msqrt",
    "mroot",
    "mstyle",
    "mpadded",
    "mphantom",
    "msub",
    "msup",
    "msubsup",
    "munder",
    "mover",
    "munderover",
    "mmultiscripts",
    "mprescripts",
    "none",
    "mtable",
    "mtr",
    "mtd",
    "menclose",
    "semantics",
    "annotation",
];

/// The attributes it writes; `style` holds colors it computed, checked below.
const ATTRIBUTES: &[&str] = &[
    "display",
    "mathvariant",
    "stretchy",
    "fence",
    "separator",
    "lspace",
    "rspace",
    "minsize",
    "maxsize",
    "movablelimits",
    "symmetric",
    "largeop",
    "accent",
    "accentunder",
    "linethickness",
    "displaystyle",
    "scriptlevel",
    "columnalign",
    "rowalign",
    "columnspacing",
    "rowspacing",
    "columnlines",
    "rowlines",
    "frame",
    "framespacing",
    "class",
    "width",
    "height",
    "depth",
    "voffset",
    "notation",
    "form",
    "style",
    "encoding",
];

/// The formula as MathML, or `None` when it does not parse (or holds anything unexpected).
pub(crate) fn to_mathml(formula: &str, display: bool) -> Option<String> {
    let storage = pulldown_latex::Storage::new();
    let parser = pulldown_latex::Parser::new(formula, &storage);
    let config = pulldown_latex::RenderConfig {
        display_mode: if display {
            pulldown_latex::config::DisplayMode::Block
        } else {
            pulldown_latex::config::DisplayMode::Inline
        },
        ..pulldown_latex::RenderConfig::default()
    };
    let mut mathml = String::new();
    pulldown_latex::push_mathml(&mut mathml, parser, config).ok()?;
    let clean = rewrite(&mathml)?;
    (!clean.contains("<merror")).then_some(clean)
}

/// Reads pulldown-latex's output and writes it again, safely; `None` for anything outside
/// the allowlists, badly nested, or a `<` that could open markup.
fn rewrite(mathml: &str) -> Option<String> {
    let mut out = String::with_capacity(mathml.len() + 16);
    let mut open: Vec<&str> = Vec::new();
    let mut rest = mathml;
    while let Some(at) = rest.find('<') {
        out.push_str(&text(&rest[..at]));
        let after = &rest[at + 1..];
        let (closing, name_part) = match after.strip_prefix('/') {
            Some(name) => (true, name),
            None => (false, after),
        };
        let starts_tag = name_part.starts_with(|c: char| c.is_ascii_alphabetic());
        if !starts_tag {
            // A `<` that is text (`<mo><</mo>`): safe only when it cannot open markup.
            if closing || after.starts_with(['!', '?']) {
                return None;
            }
            out.push_str("&lt;");
            rest = after;
            continue;
        }
        let end = name_part.find('>')?;
        let inside = &name_part[..end];
        rest = &name_part[end + 1..];
        let (inside, self_closing) = match inside.strip_suffix('/') {
            Some(inside) => (inside, true),
            None => (inside, false),
        };
        let name_end = inside.find(' ').unwrap_or(inside.len());
        let name = &inside[..name_end];
        if !ELEMENTS.contains(&name) {
            return None;
        }
        if closing {
            if open.pop() != Some(name) || !inside[name_end..].trim().is_empty() {
                return None;
            }
            out.push_str("</");
            out.push_str(name);
            out.push('>');
            continue;
        }
        out.push('<');
        out.push_str(name);
        let mut attributes = inside[name_end..].trim();
        while !attributes.is_empty() {
            let (key, value_and_rest) = attributes.split_once("=\"")?;
            let (value, after_value) = value_and_rest.split_once('"')?;
            let key = key.trim();
            if !ATTRIBUTES.contains(&key) || !safe_value(key, value) {
                return None;
            }
            out.push_str(&format!(" {key}=\"{}\"", Escaped(value)));
            attributes = after_value.trim_start();
        }
        if self_closing {
            out.push_str("/>");
        } else {
            out.push('>');
            open.push(name);
        }
    }
    out.push_str(&text(rest));
    open.is_empty().then_some(out)
}

/// Text between tags holds no `<` (that is where a tag starts) and may hold entities
/// pulldown-latex wrote (`&amp;`): only `>` needs escaping, and `&` stays as it is.
fn text(text: &str) -> String {
    text.replace('>', "&gt;")
}

fn safe_value(key: &str, value: &str) -> bool {
    let plain = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || " .,:;#%()-_+".contains(c));
    // Colors only: no `url(...)` or anything else a stylesheet could fetch.
    plain && (key != "style" || !value.to_ascii_lowercase().contains("url"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_become_escaped_mathml() {
        assert_eq!(
            to_mathml("x < y", false).unwrap(),
            "<math display=\"inline\"><mi>x</mi><mo>&lt;</mo><mi>y</mi></math>"
        );
        let colored = to_mathml("\\color{red} x", true).unwrap();
        assert!(colored.contains("style=\"color: rgb(255 0 0)\""), "{colored}");
        assert!(to_mathml("\\begin{matrix} a & b \\\\ c & d \\end{matrix}", true).is_some());
        assert_eq!(
            to_mathml("\\text{a & <b>}", false).unwrap(),
            "<math display=\"inline\"><mtext>a &amp; &lt;b&gt;</mtext></math>"
        );
    }

    #[test]
    fn markup_in_formulas_never_comes_through() {
        for formula in [
            "\\operatorname{<img src=x onerror=alert(1)>}",
            "\\operatorname{<b>}",
            "\\operatorname{</math><script>alert(1)</script>}",
            "\\char\"3C script",
            "\\frac{",
            "\\href{javascript:alert(1)}{x}",
        ] {
            if let Some(mathml) = to_mathml(formula, false) {
                assert!(
                    !mathml.contains("<img") && !mathml.contains("<b>") && !mathml.contains("<script"),
                    "{mathml}"
                );
            }
        }
        assert_eq!(rewrite("<mi><b></mi>"), None);
        assert_eq!(rewrite("<mi>x</mi></mi>"), None);
        assert_eq!(rewrite("<mi style=\"background: url(x)\">x</mi>"), None);
        assert_eq!(rewrite("<mi onclick=\"x\">x</mi>"), None);
        assert_eq!(rewrite("<mo><</mo>").as_deref(), Some("<mo>&lt;</mo>"));
    }
}
