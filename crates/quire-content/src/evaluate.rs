//! Evaluation of expressions in documents (`evaluated=true` on page reads): inline
//! `expression` nodes whose expression reads a variable (`space.vars.name`, `page.vars.name`)
//! become the variable's text. Variables are deterministic inputs, so `deterministic-only` gives
//! the same result; expressions quire cannot evaluate (visitor claims, arbitrary code) are left
//! as they are.

use serde_json::{Map, Value};

use crate::document::{Document, Leaf, Node, NodeObject};

/// The variables an expression may read.
pub struct Scope<'a> {
    pub space: &'a Map<String, Value>,
    pub page: &'a Map<String, Value>,
}

/// The value of an expression, when quire can compute it.
pub fn evaluate_expression(expression: &str, scope: &Scope<'_>) -> Option<String> {
    let expr = expression.trim();
    if let Some(name) = expr.strip_prefix("space.vars.") {
        return scope.space.get(name).map(text_of);
    }
    if let Some(name) = expr.strip_prefix("page.vars.") {
        return scope.page.get(name).map(text_of);
    }
    let quoted = |q: char| expr.len() >= 2 && expr.starts_with(q) && expr.ends_with(q);
    if quoted('"') || quoted('\'') {
        return Some(expr[1..expr.len() - 1].to_string());
    }
    expr.parse::<f64>().ok().map(|_| expr.to_string())
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Replaces every expression node quire can evaluate with a text node of its value.
pub fn evaluate_document(document: &mut Document, scope: &Scope<'_>) {
    evaluate_nodes(&mut document.nodes, scope);
}

fn evaluate_nodes(nodes: &mut [Node], scope: &Scope<'_>) {
    for node in nodes.iter_mut() {
        if node.object == NodeObject::Inline && node.node_type() == "expression" {
            let value = node
                .data_str("expression")
                .and_then(|e| evaluate_expression(e, scope));
            if let Some(text) = value {
                *node = Node::text(vec![Leaf::new(&text, Vec::new())]);
                continue;
            }
        }
        if let Some(children) = node.nodes.as_mut() {
            evaluate_nodes(children, scope);
        }
        for fragment in node.fragments.iter_mut().flatten() {
            evaluate_nodes(&mut fragment.nodes, scope);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn variables_and_literals_evaluate_others_stay() {
        let space: Map<String, Value> = serde_json::from_value(json!({"version": "2.1", "n": 3})).unwrap();
        let page = Map::new();
        let scope = Scope {
            space: &space,
            page: &page,
        };
        assert_eq!(
            evaluate_expression("space.vars.version", &scope).as_deref(),
            Some("2.1")
        );
        assert_eq!(evaluate_expression("space.vars.n", &scope).as_deref(), Some("3"));
        assert_eq!(evaluate_expression("'hi'", &scope).as_deref(), Some("hi"));
        assert_eq!(evaluate_expression("visitor.claims.plan", &scope), None);
        let mut doc: Document = serde_json::from_value(json!({"object": "document", "data": {}, "nodes": [
            {"object": "block", "type": "paragraph", "nodes": [
                {"object": "text", "leaves": [{"object": "leaf", "text": "v", "marks": []}]},
                {"object": "inline", "type": "expression", "isVoid": true, "data": {"expression": "space.vars.version"}},
                {"object": "inline", "type": "expression", "isVoid": true, "data": {"expression": "visitor.x"}}]}]}))
        .unwrap();
        evaluate_document(&mut doc, &scope);
        let para = &doc.nodes[0];
        assert_eq!(para.children()[1].leaves()[0].text, "2.1");
        assert_eq!(para.children()[2].node_type(), "expression");
    }
}
