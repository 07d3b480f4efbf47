//! Template conditions: the conditions a site's editor suggests, derived from its schema.
//!
//! One per boolean claim (`visitor.claims.isBetaUser == true`) and one per value of each enum
//! claim (`visitor.claims.plan == "pro"`), signed claims first, each in schema order. They are
//! built as syntax trees and printed, so each parses back and checks against the schema it
//! came from (a test holds them to that).

use serde::Serialize;

use crate::condition::ast::{ClaimRef, CompareOp, Expr, ExprKind, Literal, Scope, Span};
use crate::schema::{AdaptiveSchema, Claim, ClaimKind};

/// A suggested condition: `{description, condition}` on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TemplateCondition {
    pub description: String,
    pub condition: String,
}

/// The template conditions of `schema`, in a stable order.
pub fn template_conditions(schema: &AdaptiveSchema) -> Vec<TemplateCondition> {
    let mut out = Vec::new();
    for scope in [Scope::Signed, Scope::Unsigned] {
        for claim in schema.scope(scope) {
            match &claim.kind {
                ClaimKind::Boolean => out.push(template(scope, claim, Literal::Bool(true))),
                ClaimKind::Enum(values) => {
                    out.extend(
                        values
                            .iter()
                            .map(|value| template(scope, claim, Literal::String(value.clone()))),
                    );
                }
                ClaimKind::String | ClaimKind::Number | ClaimKind::Integer => {}
            }
        }
    }
    out
}

fn template(scope: Scope, claim: &Claim, value: Literal) -> TemplateCondition {
    let name = match scope {
        Scope::Signed => claim.name.clone(),
        Scope::Unsigned => format!("unsigned.{}", claim.name),
    };
    let mut description = format!("{name} is {value}");
    if let Some(about) = &claim.description {
        description.push_str(&format!(" ({about})"));
    }
    let reference = ClaimRef {
        scope,
        name: claim.name.clone(),
    };
    let condition = Expr::new(ExprKind::Compare {
        op: CompareOp::Eq,
        op_span: Span::default(),
        left: Box::new(Expr::new(ExprKind::Claim(reference))),
        right: Box::new(Expr::new(ExprKind::Literal(value))),
    });
    TemplateCondition {
        description,
        condition: condition.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Condition;
    use crate::limits::{MAX_CLAIM_NAME_CHARS, MAX_CONDITION_CHARS, MAX_ENUM_VALUE_CHARS};

    #[test]
    fn one_per_boolean_and_per_enum_value_signed_first() {
        let schema = AdaptiveSchema::parse(&json!({
            "type": "object",
            "properties": {
                "unsigned": {
                    "type": "object",
                    "properties": {"tier": {"type": "string", "enum": ["a"]}, "beta": {"type": "boolean"}},
                    "additionalProperties": false
                },
                "isBetaUser": {"type": "boolean", "description": "In the beta program"},
                "name": {"type": "string"},
                "seats": {"type": "number"},
                "plan": {"type": "string", "enum": ["free", "pro"]}
            },
            "additionalProperties": false
        }))
        .unwrap();
        let templates = template_conditions(&schema);
        let pairs: Vec<(&str, &str)> = templates
            .iter()
            .map(|t| (t.description.as_str(), t.condition.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                (
                    "isBetaUser is true (In the beta program)",
                    "visitor.claims.isBetaUser == true"
                ),
                ("plan is \"free\"", "visitor.claims.plan == \"free\""),
                ("plan is \"pro\"", "visitor.claims.plan == \"pro\""),
                ("unsigned.tier is \"a\"", "visitor.claims.unsigned.tier == \"a\""),
                ("unsigned.beta is true", "visitor.claims.unsigned.beta == true"),
            ]
        );
        assert_eq!(
            serde_json::to_value(&templates[0]).unwrap(),
            json!({"description": "isBetaUser is true (In the beta program)", "condition": "visitor.claims.isBetaUser == true"})
        );
        assert!(template_conditions(&AdaptiveSchema::default()).is_empty());
    }

    #[test]
    fn every_template_parses_checks_and_holds_for_its_value() {
        // The longest name and values with every character escaped still fit a condition.
        let name = "n".repeat(MAX_CLAIM_NAME_CHARS);
        let values = [
            "\u{1}".repeat(MAX_ENUM_VALUE_CHARS),
            "quote \" and ' and \\".to_owned(),
            "line\nbreak\u{2028}".to_owned(),
            "é😀".to_owned(),
            String::new(),
        ];
        let schema = AdaptiveSchema::parse(&json!({
            "type": "object",
            "properties": {
                name.clone(): {"type": "string", "enum": values},
                "unsigned": {"type": "object", "properties": {name.clone(): {"type": "string", "enum": values}}, "additionalProperties": false}
            },
            "additionalProperties": false
        }))
        .unwrap();
        let templates = template_conditions(&schema);
        assert_eq!(templates.len(), 2 * values.len());
        for (template, value) in templates.iter().zip(values.iter().chain(values.iter())) {
            assert!(template.condition.chars().count() <= MAX_CONDITION_CHARS);
            let condition = Condition::parse_checked(&template.condition, &schema).unwrap();
            let claims = json!({name.clone(): value, "unsigned": {name.clone(): value}});
            assert!(
                condition.evaluate(&crate::Claims::new(&claims, &schema)),
                "{}",
                template.condition
            );
            assert!(!condition.evaluate(&crate::Claims::none()));
        }
    }
}
