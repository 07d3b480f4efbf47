//! Evaluating a condition for one visitor.
//!
//! Values are null, booleans, numbers and strings; there is no coercion. A claim that is
//! absent, or present with a value its schema does not allow, is null. `==` is true for two
//! equal values of the same type, and for two nulls; `<`, `<=`, `>`, `>=` compare two numbers
//! or two strings (by Unicode code points) and are false for anything else, null included;
//! `!`, `&&`, `||` and the condition itself take only `true` as true. Each node is visited
//! once, so the cost is linear in the tree (and in the strings compared).

use std::collections::HashMap;

use serde_json::Value;

use super::ast::{ClaimRef, CompareOp, Expr, ExprKind, Literal, Scope};
use crate::schema::{AdaptiveSchema, Claim, ClaimKind};

/// A visitor's claims, as the schema reads them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Claims {
    signed: HashMap<String, ClaimValue>,
    unsigned: HashMap<String, ClaimValue>,
}

#[derive(Debug, Clone, PartialEq)]
enum ClaimValue {
    Bool(bool),
    Number(f64),
    String(String),
}

impl Claims {
    /// The claims of `json` (an object of signed claims, the unsigned ones in its `unsigned`
    /// object) that `schema` declares, with the values it allows: the rest is absent.
    ///
    /// An enum claim keeps only one of its values, an integer claim only a number without a
    /// fraction. Nothing is converted: `"true"` is not a boolean, `"3"` not a number (the
    /// reader site turns URL parameters into typed values before this).
    pub fn new(json: &Value, schema: &AdaptiveSchema) -> Claims {
        let read = |object: Option<&Value>, claims: &[Claim]| -> HashMap<String, ClaimValue> {
            let Some(Value::Object(object)) = object else {
                return HashMap::new();
            };
            claims
                .iter()
                .filter_map(|claim| {
                    let value = typed(object.get(&claim.name)?, &claim.kind)?;
                    Some((claim.name.clone(), value))
                })
                .collect()
        };
        Claims {
            signed: read(Some(json), schema.claims()),
            unsigned: read(json.get("unsigned"), schema.unsigned_claims()),
        }
    }

    /// No claims: an anonymous visitor.
    pub fn none() -> Claims {
        Claims::default()
    }

    fn get(&self, claim: &ClaimRef) -> Option<&ClaimValue> {
        match claim.scope {
            Scope::Signed => self.signed.get(&claim.name),
            Scope::Unsigned => self.unsigned.get(&claim.name),
        }
    }
}

fn typed(value: &Value, kind: &ClaimKind) -> Option<ClaimValue> {
    match (kind, value) {
        (ClaimKind::Boolean, Value::Bool(b)) => Some(ClaimValue::Bool(*b)),
        (ClaimKind::String, Value::String(s)) => Some(ClaimValue::String(s.clone())),
        (ClaimKind::Enum(values), Value::String(s)) if values.contains(s) => {
            Some(ClaimValue::String(s.clone()))
        }
        (ClaimKind::Number, Value::Number(n)) => n.as_f64().filter(|n| n.is_finite()).map(ClaimValue::Number),
        (ClaimKind::Integer, Value::Number(n)) => n
            .as_f64()
            .filter(|n| n.is_finite() && n.fract() == 0.0)
            .map(ClaimValue::Number),
        _ => None,
    }
}

/// A value during evaluation, borrowed from the tree or the claims.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Val<'a> {
    Null,
    Bool(bool),
    Number(f64),
    Str(&'a str),
}

impl Val<'_> {
    fn is_true(self) -> bool {
        self == Val::Bool(true)
    }
}

fn literal(literal: &Literal) -> Val<'_> {
    match literal {
        Literal::Null => Val::Null,
        Literal::Bool(b) => Val::Bool(*b),
        Literal::Number(n) => Val::Number(*n),
        Literal::String(s) => Val::Str(s),
    }
}

/// `==` without coercion; two nulls are equal.
fn equal(a: Val, b: Val) -> bool {
    match (a, b) {
        (Val::Null, Val::Null) => true,
        (Val::Bool(a), Val::Bool(b)) => a == b,
        (Val::Number(a), Val::Number(b)) => a == b,
        (Val::Str(a), Val::Str(b)) => a == b,
        _ => false,
    }
}

/// The order of two numbers or two strings; `None` for anything else.
fn order(a: Val, b: Val) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Val::Number(a), Val::Number(b)) => a.partial_cmp(&b),
        (Val::Str(a), Val::Str(b)) => Some(a.cmp(b)),
        _ => None,
    }
}

/// A step of the evaluation: a node to evaluate, or a node whose operands' values are on
/// the value stack.
enum Step<'e> {
    Eval(&'e Expr),
    Apply(&'e Expr),
}

/// Whether `root` is true for `claims`. Each node is entered and applied once, with explicit
/// stacks: time is linear in the tree and the thread's stack use does not depend on its depth.
/// There is no short-circuit (nothing has side effects, and conditions are small).
pub(crate) fn is_true(root: &Expr, claims: &Claims) -> bool {
    let mut steps = vec![Step::Eval(root)];
    let mut values: Vec<Val> = Vec::new();
    while let Some(step) = steps.pop() {
        let value = match step {
            Step::Eval(expr) => match &expr.kind {
                ExprKind::Literal(value) => literal(value),
                ExprKind::Claim(claim) => match claims.get(claim) {
                    None => Val::Null,
                    Some(ClaimValue::Bool(b)) => Val::Bool(*b),
                    Some(ClaimValue::Number(n)) => Val::Number(*n),
                    Some(ClaimValue::String(s)) => Val::Str(s),
                },
                ExprKind::Not(operand) => {
                    steps.push(Step::Apply(expr));
                    steps.push(Step::Eval(operand));
                    continue;
                }
                ExprKind::And(operands) | ExprKind::Or(operands) => {
                    steps.push(Step::Apply(expr));
                    steps.extend(operands.iter().rev().map(Step::Eval));
                    continue;
                }
                ExprKind::Compare { left, right, .. } => {
                    steps.push(Step::Apply(expr));
                    steps.push(Step::Eval(right));
                    steps.push(Step::Eval(left));
                    continue;
                }
                ExprKind::In { needle, .. } => {
                    steps.push(Step::Apply(expr));
                    steps.push(Step::Eval(needle));
                    continue;
                }
            },
            Step::Apply(expr) => {
                let mut pop = || values.pop().unwrap_or(Val::Null);
                Val::Bool(match &expr.kind {
                    ExprKind::Not(_) => !pop().is_true(),
                    ExprKind::And(operands) | ExprKind::Or(operands) => {
                        let first = values.len().saturating_sub(operands.len());
                        let operands = values.drain(first..);
                        if matches!(expr.kind, ExprKind::And(_)) {
                            operands.fold(true, |all, value| all & value.is_true())
                        } else {
                            operands.fold(false, |any, value| any | value.is_true())
                        }
                    }
                    ExprKind::Compare { op, .. } => {
                        let b = pop();
                        let a = pop();
                        match op {
                            CompareOp::Eq => equal(a, b),
                            CompareOp::Ne => !equal(a, b),
                            CompareOp::Lt => order(a, b).is_some_and(|o| o.is_lt()),
                            CompareOp::Le => order(a, b).is_some_and(|o| o.is_le()),
                            CompareOp::Gt => order(a, b).is_some_and(|o| o.is_gt()),
                            CompareOp::Ge => order(a, b).is_some_and(|o| o.is_ge()),
                        }
                    }
                    ExprKind::In { items, .. } => {
                        let needle = pop();
                        items.iter().any(|item| equal(needle, literal(&item.value)))
                    }
                    // Leaves are never applied.
                    ExprKind::Literal(_) | ExprKind::Claim(_) => false,
                })
            }
        };
        values.push(value);
    }
    values.pop().is_some_and(Val::is_true)
}
