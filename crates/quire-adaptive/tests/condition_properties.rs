//! Properties of the condition language ([`quire_adaptive::condition`]):
//!
//! - a random tree, printed, parses back to the same tree (spans aside), and anything the
//!   parser accepts prints to a text that parses to the same tree again;
//! - random bytes and random soups of the language's tokens never panic the parser, which
//!   answers a tree or an error whose position is inside the text, on a character boundary,
//!   with the line and column of that offset; checking and evaluating what it accepts never
//!   panics either;
//! - well-typed conditions over a fixed schema pass the checker, and the evaluator agrees
//!   with a reference interpreter written from `docs/adaptive-content.md` (recursive, simple,
//!   and independent of the crate's explicit-stack walk).
//!
//! Case counts keep the file to a few seconds in debug; `PROPTEST_CASES` raises them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use quire_adaptive::condition::{ClaimRef, CompareOp, Expr, ExprKind, Item, Literal, Scope, Span};
use quire_adaptive::limits::MAX_CONDITION_CHARS;
use quire_adaptive::{AdaptiveSchema, Claims, Condition, ConditionError};

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default)
}

/// The schema every property checks and evaluates against.
fn schema() -> AdaptiveSchema {
    AdaptiveSchema::parse(&json!({
        "type": "object",
        "properties": {
            "beta": {"type": "boolean"},
            "admin": {"type": "boolean"},
            "plan": {"type": "string", "enum": ["free", "pro", "enterprise"]},
            "name": {"type": "string"},
            "seats": {"type": "integer"},
            "score": {"type": "number"},
            "unsigned": {
                "type": "object",
                "properties": {
                    "beta": {"type": "boolean"},
                    "persona": {"type": "string"},
                    "tier": {"type": "string", "enum": ["a", "b"]},
                    "visits": {"type": "number"}
                },
                "additionalProperties": false
            }
        },
        "additionalProperties": false
    }))
    .unwrap()
}

// --- Generators ----------------------------------------------------------------------------

fn any_string() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z]{0,6}",
        1 => proptest::collection::vec(any::<char>(), 0..6).prop_map(String::from_iter),
        1 => "[\"'\\\\\n\r\t\u{0}\u{1f}\u{7f}\u{2028}é😀]{0,4}",
    ]
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => (-100i32..100).prop_map(f64::from),
        1 => -1000.0f64..1000.0,
        1 => any::<f64>().prop_filter("finite", |n| n.is_finite()),
        1 => Just(-0.0),
    ]
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        Just(Literal::Null),
        any::<bool>().prop_map(Literal::Bool),
        number().prop_map(Literal::Number),
        any_string().prop_map(Literal::String),
    ]
}

fn claim() -> impl Strategy<Value = ClaimRef> {
    let name = prop_oneof![
        4 => proptest::sample::select(vec![
            "beta", "admin", "plan", "name", "seats", "score", "persona", "tier", "visits", "true",
            "in", "visitor", "unsigned",
        ])
        .prop_map(str::to_owned),
        1 => "[a-zA-Z_][a-zA-Z0-9_]{0,8}",
        1 => any_string(),
    ];
    (any::<bool>(), name)
        .prop_filter(
            "a signed claim named unsigned cannot be written",
            |(signed, name)| !(*signed && name == "unsigned"),
        )
        .prop_map(|(signed, name)| ClaimRef {
            scope: if signed { Scope::Signed } else { Scope::Unsigned },
            name,
        })
}

fn op() -> impl Strategy<Value = CompareOp> {
    proptest::sample::select(vec![
        CompareOp::Eq,
        CompareOp::Ne,
        CompareOp::Lt,
        CompareOp::Le,
        CompareOp::Gt,
        CompareOp::Ge,
    ])
}

fn node(kind: ExprKind) -> Expr {
    Expr::new(kind)
}

/// Any tree the grammar can produce (chains of two or more operands), untyped.
fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        literal().prop_map(|l| node(ExprKind::Literal(l))),
        claim().prop_map(|c| node(ExprKind::Claim(c))),
    ];
    leaf.prop_recursive(5, 40, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| node(ExprKind::Not(Box::new(e)))),
            proptest::collection::vec(inner.clone(), 2..4).prop_map(|v| node(ExprKind::And(v))),
            proptest::collection::vec(inner.clone(), 2..4).prop_map(|v| node(ExprKind::Or(v))),
            (op(), inner.clone(), inner.clone()).prop_map(|(op, l, r)| node(ExprKind::Compare {
                op,
                op_span: Span::default(),
                left: Box::new(l),
                right: Box::new(r),
            })),
            (inner, proptest::collection::vec(literal(), 0..4)).prop_map(|(needle, items)| node(
                ExprKind::In {
                    needle: Box::new(needle),
                    items: items
                        .into_iter()
                        .map(|value| Item {
                            value,
                            span: Span::default(),
                        })
                        .collect(),
                }
            )),
        ]
    })
}

/// The tree with every span zeroed, to compare shapes.
fn strip(expr: &Expr) -> Expr {
    let kind = match &expr.kind {
        ExprKind::Literal(l) => ExprKind::Literal(l.clone()),
        ExprKind::Claim(c) => ExprKind::Claim(c.clone()),
        ExprKind::Not(e) => ExprKind::Not(Box::new(strip(e))),
        ExprKind::And(v) => ExprKind::And(v.iter().map(strip).collect()),
        ExprKind::Or(v) => ExprKind::Or(v.iter().map(strip).collect()),
        ExprKind::Compare { op, left, right, .. } => ExprKind::Compare {
            op: *op,
            op_span: Span::default(),
            left: Box::new(strip(left)),
            right: Box::new(strip(right)),
        },
        ExprKind::In { needle, items } => ExprKind::In {
            needle: Box::new(strip(needle)),
            items: items
                .iter()
                .map(|item| Item {
                    value: item.value.clone(),
                    span: Span::default(),
                })
                .collect(),
        },
    };
    node(kind)
}

/// Claims objects for the fixed schema: right types, wrong types, absent, extra.
fn claims_json() -> impl Strategy<Value = Value> {
    let value = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-20i32..20).prop_map(|n| json!(n)),
        (-20.0f64..20.0).prop_map(|n| json!(n)),
        proptest::sample::select(vec!["free", "pro", "enterprise", "gold", "a", "b", "", "x"])
            .prop_map(|s| json!(s)),
        Just(json!([1])),
        Just(json!({"nested": true})),
    ];
    let names = || {
        proptest::sample::select(vec![
            "beta", "admin", "plan", "name", "seats", "score", "persona", "tier", "visits", "other",
        ])
    };
    let object = move |value: BoxedStrategy<Value>| {
        proptest::collection::vec((names(), value), 0..8).prop_map(|pairs| {
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect::<Map<String, Value>>()
        })
    };
    (object(value.clone().boxed()), object(value.boxed())).prop_map(|(mut signed, unsigned)| {
        signed.insert("unsigned".to_owned(), Value::Object(unsigned));
        Value::Object(signed)
    })
}

// --- Well-typed conditions and a reference interpreter --------------------------------------

/// A boolean expression over the fixed schema that the checker must accept.
fn typed() -> impl Strategy<Value = Expr> {
    let claim = |scope: Scope, name: &str| {
        node(ExprKind::Claim(ClaimRef {
            scope,
            name: name.to_owned(),
        }))
    };
    let lit = |l: Literal| node(ExprKind::Literal(l));
    let compare = |op: CompareOp, l: Expr, r: Expr| {
        node(ExprKind::Compare {
            op,
            op_span: Span::default(),
            left: Box::new(l),
            right: Box::new(r),
        })
    };
    let equality = proptest::sample::select(vec![CompareOp::Eq, CompareOp::Ne]);
    let numeric = prop_oneof![
        Just(claim(Scope::Signed, "seats")),
        Just(claim(Scope::Signed, "score")),
        Just(claim(Scope::Unsigned, "visits")),
        (-20i32..20).prop_map(move |n| lit(Literal::Number(f64::from(n)))),
    ];
    let string = prop_oneof![
        Just(claim(Scope::Signed, "name")),
        Just(claim(Scope::Unsigned, "persona")),
        proptest::sample::select(vec!["", "a", "x", "Émile"])
            .prop_map(move |s| lit(Literal::String(s.to_owned()))),
    ];
    let plan = proptest::sample::select(vec!["free", "pro", "enterprise"]);
    let leaf = prop_oneof![
        proptest::sample::select(vec![
            claim(Scope::Signed, "beta"),
            claim(Scope::Signed, "admin"),
            claim(Scope::Unsigned, "beta"),
            lit(Literal::Bool(true)),
            lit(Literal::Bool(false)),
        ]),
        (op(), numeric.clone(), numeric).prop_map(move |(op, l, r)| compare(op, l, r)),
        (op(), string.clone(), string).prop_map(move |(op, l, r)| compare(op, l, r)),
        (equality.clone(), plan.clone(), any::<bool>()).prop_map(move |(op, value, flip)| {
            let (a, b) = (
                claim(Scope::Signed, "plan"),
                lit(Literal::String(value.to_owned())),
            );
            if flip {
                compare(op, b, a)
            } else {
                compare(op, a, b)
            }
        }),
        (
            equality,
            proptest::sample::select(vec!["plan", "name", "seats", "beta", "tier"])
        )
            .prop_map(move |(op, name)| {
                let scope = if name == "tier" {
                    Scope::Unsigned
                } else {
                    Scope::Signed
                };
                compare(op, claim(scope, name), lit(Literal::Null))
            }),
        proptest::collection::vec(plan.prop_map(|p| Literal::String(p.to_owned())), 1..3).prop_map(
            move |items| {
                node(ExprKind::In {
                    needle: Box::new(claim(Scope::Signed, "plan")),
                    items: items
                        .into_iter()
                        .map(|value| Item {
                            value,
                            span: Span::default(),
                        })
                        .collect(),
                })
            }
        ),
        proptest::collection::vec((-3i32..3).prop_map(|n| Literal::Number(f64::from(n))), 1..3).prop_map(
            move |items| {
                node(ExprKind::In {
                    needle: Box::new(claim(Scope::Signed, "seats")),
                    items: items
                        .into_iter()
                        .map(|value| Item {
                            value,
                            span: Span::default(),
                        })
                        .collect(),
                })
            }
        ),
    ];
    leaf.prop_recursive(4, 32, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| node(ExprKind::Not(Box::new(e)))),
            proptest::collection::vec(inner.clone(), 2..4).prop_map(|v| node(ExprKind::And(v))),
            proptest::collection::vec(inner, 2..4).prop_map(|v| node(ExprKind::Or(v))),
        ]
    })
}

/// A value of the reference interpreter.
#[derive(Debug, Clone, PartialEq)]
enum V {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
}

/// The claim as the documentation says it is read: declared, of the declared type (an enum's
/// value among its values, an integer without fraction), or null.
fn reference_claim(claims: &Value, claim: &ClaimRef) -> V {
    let (object, declared): (Option<&Value>, &[(&str, &str)]) = match claim.scope {
        Scope::Signed => (
            Some(claims),
            &[
                ("beta", "boolean"),
                ("admin", "boolean"),
                ("plan", "plan"),
                ("name", "string"),
                ("seats", "integer"),
                ("score", "number"),
            ],
        ),
        Scope::Unsigned => (
            claims.get("unsigned"),
            &[
                ("beta", "boolean"),
                ("persona", "string"),
                ("tier", "tier"),
                ("visits", "number"),
            ],
        ),
    };
    let Some(kind) = declared
        .iter()
        .find(|(name, _)| *name == claim.name)
        .map(|(_, kind)| *kind)
    else {
        return V::Null;
    };
    match (kind, object.and_then(|o| o.get(&claim.name))) {
        ("boolean", Some(Value::Bool(b))) => V::Bool(*b),
        ("string", Some(Value::String(s))) => V::Str(s.clone()),
        ("plan", Some(Value::String(s))) if ["free", "pro", "enterprise"].contains(&s.as_str()) => {
            V::Str(s.clone())
        }
        ("tier", Some(Value::String(s))) if ["a", "b"].contains(&s.as_str()) => V::Str(s.clone()),
        ("number", Some(Value::Number(n))) => V::Num(n.as_f64().unwrap()),
        ("integer", Some(Value::Number(n))) if n.as_f64().unwrap().fract() == 0.0 => {
            V::Num(n.as_f64().unwrap())
        }
        _ => V::Null,
    }
}

fn reference(expr: &Expr, claims: &Value) -> V {
    let lit = |l: &Literal| match l {
        Literal::Null => V::Null,
        Literal::Bool(b) => V::Bool(*b),
        Literal::Number(n) => V::Num(*n),
        Literal::String(s) => V::Str(s.clone()),
    };
    let truth = |v: V| v == V::Bool(true);
    let equal = |a: &V, b: &V| match (a, b) {
        (V::Num(a), V::Num(b)) => a == b,
        (a, b) => a == b,
    };
    match &expr.kind {
        ExprKind::Literal(l) => lit(l),
        ExprKind::Claim(c) => reference_claim(claims, c),
        ExprKind::Not(e) => V::Bool(!truth(reference(e, claims))),
        ExprKind::And(v) => V::Bool(v.iter().all(|e| truth(reference(e, claims)))),
        ExprKind::Or(v) => V::Bool(v.iter().any(|e| truth(reference(e, claims)))),
        ExprKind::Compare { op, left, right, .. } => {
            let (a, b) = (reference(left, claims), reference(right, claims));
            let order = match (&a, &b) {
                (V::Num(x), V::Num(y)) => x.partial_cmp(y),
                (V::Str(x), V::Str(y)) => Some(x.cmp(y)),
                _ => None,
            };
            V::Bool(match op {
                CompareOp::Eq => equal(&a, &b),
                CompareOp::Ne => !equal(&a, &b),
                CompareOp::Lt => order.is_some_and(|o| o.is_lt()),
                CompareOp::Le => order.is_some_and(|o| o.is_le()),
                CompareOp::Gt => order.is_some_and(|o| o.is_gt()),
                CompareOp::Ge => order.is_some_and(|o| o.is_ge()),
            })
        }
        ExprKind::In { needle, items } => {
            let needle = reference(needle, claims);
            V::Bool(items.iter().any(|item| equal(&needle, &lit(&item.value))))
        }
    }
}

// --- Properties ---------------------------------------------------------------------------

/// What must hold of any parse: an error's position is in the text and consistent; an
/// accepted condition keeps its source, prints and reads back to the same tree, and checks
/// and evaluates without panicking.
fn parse_anything(source: &str, claims: &[Value]) -> Result<(), TestCaseError> {
    match Condition::parse(source) {
        Err(error) => position_is_consistent(source, &error),
        Ok(condition) => {
            prop_assert_eq!(condition.source(), source);
            let schema = schema();
            if let Err(error) = condition.check(&schema) {
                position_is_consistent(source, &error)?;
            }
            for claims in claims {
                condition.evaluate(&Claims::new(claims, &schema));
            }
            if let Some(expr) = condition.expr() {
                let printed = expr.to_string();
                let again = Condition::parse(&printed)
                    .map_err(|e| TestCaseError::fail(format!("{printed:?} printed from {source:?}: {e}")))?;
                prop_assert_eq!(
                    strip(again.expr().unwrap()),
                    strip(expr),
                    "printed: {:?}",
                    printed
                );
            }
            Ok(())
        }
    }
}

fn position_is_consistent(source: &str, error: &ConditionError) -> Result<(), TestCaseError> {
    prop_assert!(
        error.offset <= source.len(),
        "{error} at {} in {source:?}",
        error.offset
    );
    prop_assert!(source.is_char_boundary(error.offset));
    let before = &source[..error.offset];
    prop_assert_eq!(error.line, before.matches('\n').count() + 1);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    prop_assert_eq!(error.column, before[line_start..].chars().count() + 1);
    prop_assert!(!error.message.is_empty());
    Ok(())
}

/// The tokens of the language and their near misses.
const TOKENS: &[&str] = &[
    "visitor",
    ".",
    "claims",
    "unsigned",
    "[",
    "]",
    "(",
    ")",
    "!",
    "&&",
    "||",
    "==",
    "===",
    "!=",
    "!==",
    "<",
    "<=",
    ">",
    ">=",
    "in",
    "true",
    "false",
    "null",
    "'a'",
    "\"b\"",
    "1",
    "-",
    "2.5e3",
    ",",
    "&",
    "|",
    "=",
    "plan",
    "beta",
    "seats",
    "tier",
    "'pro'",
    "\\",
    "'",
    "\"",
    "0x",
    "010",
    "1e",
    "'\\u",
    "\\ud800",
    "é",
    "undefined",
    "space",
];

fn soup() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        (
            proptest::sample::select(TOKENS),
            proptest::sample::select(vec!["", " ", "  ", "\n"]),
        ),
        0..40,
    )
    .prop_map(|parts| {
        parts
            .into_iter()
            .flat_map(|(token, space)| [token, space])
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    /// Printing a tree and parsing the text gives the same tree back.
    #[test]
    fn printed_trees_parse_back(expr in expr(), claims in claims_json()) {
        let printed = expr.to_string();
        // The generator's trees are within the depth and node budgets; a long one may not
        // fit the length limit, which has its own unit tests.
        prop_assume!(printed.chars().count() <= MAX_CONDITION_CHARS);
        let condition = Condition::parse(&printed)
            .map_err(|e| TestCaseError::fail(format!("{printed:?}: {e}")))?;
        prop_assert_eq!(strip(condition.expr().unwrap()), expr, "printed: {:?}", printed);
        prop_assert_eq!(condition.expr().unwrap().to_string(), printed);
        let _ = condition.check(&schema());
        condition.evaluate(&Claims::new(&claims, &schema()));
    }

    /// Random text never panics the parser, and what it answers is consistent.
    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64), claims in claims_json()) {
        parse_anything(&String::from_utf8_lossy(&bytes), &[claims])?;
    }

    /// Random characters, including every ASCII punctuation the lexer gives a meaning to.
    #[test]
    fn random_characters(source in "[ -~\n\té€😀\u{2028}]{0,48}", claims in claims_json()) {
        parse_anything(&source, &[claims])?;
    }

    /// Soups of the language's tokens reach far deeper into the parser than random bytes.
    #[test]
    fn token_soups(source in soup(), claims in claims_json()) {
        parse_anything(&source, &[claims, json!({})])?;
    }

    /// Well-typed conditions check, and evaluate as the reference interpreter says.
    #[test]
    fn typed_conditions_check_and_evaluate_as_documented(expr in typed(), claims in proptest::collection::vec(claims_json(), 1..4)) {
        let printed = expr.to_string();
        let schema = schema();
        let condition = Condition::parse_checked(&printed, &schema)
            .map_err(|e| TestCaseError::fail(format!("{printed:?}: {e}")))?;
        for claims in &claims {
            let expected = reference(&expr, claims) == V::Bool(true);
            prop_assert_eq!(condition.evaluate(&Claims::new(claims, &schema)), expected, "{} with {}", printed, claims);
        }
    }
}
