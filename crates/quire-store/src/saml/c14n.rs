//! Exclusive XML canonicalization 1.0 without comments (`xml-exc-c14n#`), of one element of a
//! parsed document: the form an XML signature's digest and signature are computed over.
//!
//! Only the transform SAML signatures use is implemented (decision 0087): the element and its
//! descendants in document order, comments left out, one subtree (the enveloped signature) left
//! out, namespaces declared where they are first visibly used, attributes sorted. The walk keeps
//! its own stack rather than recursing, so a deeply nested document costs memory in proportion to
//! its size (bounded by the parser's node limit), never the thread's stack.

use roxmltree::{Node, NodeId};

/// The algorithm's URI, as `CanonicalizationMethod` and `Transform` name it.
pub const EXC_C14N: &str = "http://www.w3.org/2001/10/xml-exc-c14n#";

const XML_NAMESPACE: &str = "http://www.w3.org/XML/1998/namespace";

/// The canonical form of `apex` and its descendants, without the subtree `omit` (an enveloped
/// signature). `inclusive` is the `InclusiveNamespaces` `PrefixList`: prefixes declared as
/// inclusive canonicalization would, `#default` naming the default namespace.
pub fn canonicalize(apex: Node, omit: Option<NodeId>, inclusive: &[&str]) -> String {
    let mut out = String::new();
    // The namespace declarations each open element rendered, innermost last.
    let mut rendered: Vec<Vec<(String, String)>> = Vec::new();
    let mut next = Some(apex);
    while let Some(node) = next {
        let skip = Some(node.id()) == omit;
        if !skip {
            match node.node_type() {
                roxmltree::NodeType::Element => {
                    let decls = declarations(node, &rendered, inclusive);
                    open_tag(&mut out, node, &decls);
                    rendered.push(decls);
                    if let Some(child) = node.first_child() {
                        next = Some(child);
                        continue;
                    }
                    close_tag(&mut out, node);
                    rendered.pop();
                }
                roxmltree::NodeType::Text => escape_text(&mut out, node.text().unwrap_or("")),
                roxmltree::NodeType::PI => {
                    if let Some(pi) = node.pi() {
                        out.push_str("<?");
                        out.push_str(pi.target);
                        if let Some(value) = pi.value.filter(|v| !v.is_empty()) {
                            out.push(' ');
                            out.push_str(value);
                        }
                        out.push_str("?>");
                    }
                }
                roxmltree::NodeType::Comment | roxmltree::NodeType::Root => {}
            }
        }
        // The next node in document order, closing the elements this one ends.
        let mut at = node;
        next = loop {
            if at == apex {
                break None;
            }
            if let Some(sibling) = at.next_sibling() {
                break Some(sibling);
            }
            match at.parent() {
                Some(parent) => {
                    close_tag(&mut out, parent);
                    rendered.pop();
                    at = parent;
                }
                None => break None,
            }
        };
    }
    out
}

/// The prefix an element or attribute is written with in the source (`""` for none).
fn prefix_of(qname: &str) -> &str {
    qname.split_once(':').map_or("", |(prefix, _)| prefix)
}

/// The element's qualified name as written in the source.
fn element_qname<'a>(node: Node<'_, 'a>) -> &'a str {
    let input = node.document().input_text();
    let start = node.range().start + 1;
    let rest = input.get(start..).unwrap_or("");
    let end = rest
        .find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>')
        .unwrap_or(rest.len());
    &rest[..end]
}

fn attribute_qname<'a>(node: Node<'_, 'a>, attribute: &roxmltree::Attribute<'_, 'a>) -> &'a str {
    node.document()
        .input_text()
        .get(attribute.range_qname())
        .unwrap_or(attribute.name())
}

/// The namespace the nearest open output element declared for `prefix`, if any did.
fn in_output<'r>(rendered: &'r [Vec<(String, String)>], prefix: &str) -> Option<&'r str> {
    rendered.iter().rev().find_map(|decls| {
        decls
            .iter()
            .find(|(p, _)| p == prefix)
            .map(|(_, uri)| uri.as_str())
    })
}

/// The declarations `node` renders, sorted by prefix (the default namespace first): each prefix
/// it or its attributes use, and each inclusive one in scope, unless an output ancestor already
/// declared it the same.
fn declarations(node: Node, rendered: &[Vec<(String, String)>], inclusive: &[&str]) -> Vec<(String, String)> {
    let mut used: Vec<(String, String)> = Vec::new();
    let element_prefix = prefix_of(element_qname(node));
    used.push((
        element_prefix.to_string(),
        node.tag_name().namespace().unwrap_or("").to_string(),
    ));
    for attribute in node.attributes() {
        let prefix = prefix_of(attribute_qname(node, &attribute));
        if !prefix.is_empty() {
            used.push((
                prefix.to_string(),
                attribute.namespace().unwrap_or("").to_string(),
            ));
        }
    }
    for name in inclusive {
        let prefix = if *name == "#default" { "" } else { name };
        let scope = if prefix.is_empty() { None } else { Some(prefix) };
        if let Some(uri) = node.lookup_namespace_uri(scope) {
            used.push((prefix.to_string(), uri.to_string()));
        }
    }
    let mut decls: Vec<(String, String)> = Vec::new();
    for (prefix, uri) in used {
        if prefix == "xml" || decls.iter().any(|(p, _)| *p == prefix) {
            continue;
        }
        let before = in_output(rendered, &prefix);
        let needed = if prefix.is_empty() {
            // An element in no namespace undeclares a default an output ancestor declared.
            before.unwrap_or("") != uri
        } else {
            before != Some(uri.as_str())
        };
        if needed {
            decls.push((prefix, uri));
        }
    }
    decls.sort();
    decls
}

fn open_tag(out: &mut String, node: Node, decls: &[(String, String)]) {
    out.push('<');
    out.push_str(element_qname(node));
    for (prefix, uri) in decls {
        out.push_str(if prefix.is_empty() { " xmlns" } else { " xmlns:" });
        out.push_str(prefix);
        out.push_str("=\"");
        escape_attribute(out, uri);
        out.push('"');
    }
    let mut attributes: Vec<(&str, &str, &str, &str)> = node
        .attributes()
        .map(|a| {
            let namespace = match a.namespace() {
                Some(XML_NAMESPACE) => XML_NAMESPACE,
                other => other.unwrap_or(""),
            };
            (namespace, a.name(), attribute_qname(node, &a), a.value())
        })
        .collect();
    attributes.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    for (_, _, qname, value) in attributes {
        out.push(' ');
        out.push_str(qname);
        out.push_str("=\"");
        escape_attribute(out, value);
        out.push('"');
    }
    out.push('>');
}

fn close_tag(out: &mut String, node: Node) {
    out.push_str("</");
    out.push_str(element_qname(node));
    out.push('>');
}

fn escape_text(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#xD;"),
            c => out.push(c),
        }
    }
}

fn escape_attribute(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '"' => out.push_str("&quot;"),
            '\t' => out.push_str("&#x9;"),
            '\n' => out.push_str("&#xA;"),
            '\r' => out.push_str("&#xD;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c14n(xml: &str, path: &[&str], inclusive: &[&str]) -> String {
        let doc = roxmltree::Document::parse(xml).unwrap();
        let mut node = doc.root_element();
        for name in path {
            node = node.children().find(|n| n.tag_name().name() == *name).unwrap();
        }
        canonicalize(node, None, inclusive)
    }

    #[test]
    fn declares_only_the_namespaces_an_element_uses() {
        let xml = r#"<a:root xmlns:a="urn:a" xmlns:b="urn:b" xmlns="urn:d"><a:child b:x="1" z="2" y='3'>t</a:child></a:root>"#;
        assert_eq!(
            c14n(xml, &["child"], &[]),
            r#"<a:child xmlns:a="urn:a" xmlns:b="urn:b" y="3" z="2" b:x="1">t</a:child>"#
        );
        // The default namespace is in scope but unused by `a:child`; `#default` asks for it.
        assert_eq!(
            c14n(xml, &["child"], &["#default"]),
            r#"<a:child xmlns="urn:d" xmlns:a="urn:a" xmlns:b="urn:b" y="3" z="2" b:x="1">t</a:child>"#
        );
    }

    #[test]
    fn expands_empty_elements_escapes_and_drops_comments() {
        let xml = "<r xmlns=\"urn:r\"><e a=\"&lt;&quot;&#9;&#10;&#13;'&gt;\"/><!-- c -->x &amp; &lt; &gt; &#13;<?pi  data?><f xmlns=\"\"/></r>";
        assert_eq!(
            c14n(xml, &[], &[]),
            "<r xmlns=\"urn:r\"><e a=\"&lt;&quot;&#x9;&#xA;&#xD;'>\"></e>x &amp; &lt; &gt; &#xD;<?pi data?><f xmlns=\"\"></f></r>"
        );
    }

    #[test]
    fn a_child_does_not_redeclare_what_its_parent_rendered() {
        let xml = r#"<p:r xmlns:p="urn:p"><p:s><p:t xmlns:p="urn:other"/></p:s></p:r>"#;
        assert_eq!(
            c14n(xml, &[], &[]),
            r#"<p:r xmlns:p="urn:p"><p:s><p:t xmlns:p="urn:other"></p:t></p:s></p:r>"#
        );
    }

    #[test]
    fn leaves_out_the_omitted_subtree() {
        let xml = r#"<r ID="x"><a/><sig><in/></sig><b/></r>"#;
        let doc = roxmltree::Document::parse(xml).unwrap();
        let root = doc.root_element();
        let sig = root.children().find(|n| n.has_tag_name("sig")).unwrap();
        assert_eq!(
            canonicalize(root, Some(sig.id()), &[]),
            r#"<r ID="x"><a></a><b></b></r>"#
        );
    }

    #[test]
    fn agrees_with_libxml2_on_a_signed_assertion() {
        // testdata/sign.py: lxml's exclusive canonicalization of the assertion without its
        // signature, with `xs` as an inclusive prefix.
        let xml = include_str!("testdata/signxml-response.xml");
        let doc = roxmltree::Document::parse(xml).unwrap();
        let assertion = doc
            .root_element()
            .children()
            .find(|n| n.has_tag_name("Assertion"))
            .unwrap();
        let signature = assertion
            .children()
            .find(|n| n.has_tag_name("Signature"))
            .unwrap();
        assert_eq!(
            canonicalize(assertion, Some(signature.id()), &["xs"]),
            include_str!("testdata/assertion-c14n-xs.xml")
        );
    }

    #[test]
    fn deep_nesting_needs_no_recursion() {
        let depth = 5_000;
        let xml = format!("{}{}", "<a>".repeat(depth), "</a>".repeat(depth));
        let opts = roxmltree::ParsingOptions {
            nodes_limit: 10_000,
            ..Default::default()
        };
        let doc = roxmltree::Document::parse_with_options(&xml, opts).unwrap();
        assert_eq!(canonicalize(doc.root_element(), None, &[]).len(), depth * 7);
    }
}
