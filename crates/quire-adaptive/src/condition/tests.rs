//! One test per rule of the language and per message (`docs/adaptive-content.md`).

use serde_json::{Value, json};

use super::parser::Limits;
use super::*;
use crate::limits::{MAX_CONDITION_CHARS, MAX_CONDITION_DEPTH, MAX_CONDITION_NODES};

fn schema() -> AdaptiveSchema {
    AdaptiveSchema::parse(&json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "isBetaUser": {"type": "boolean"},
            "plan": {"type": "string", "enum": ["free", "pro", "enterprise"]},
            "name": {"type": "string"},
            "seats": {"type": "integer"},
            "score": {"type": "number"},
            "unsigned": {
                "type": "object",
                "properties": {
                    "persona": {"type": "string"},
                    "beta": {"type": "boolean"}
                },
                "additionalProperties": false
            }
        },
        "additionalProperties": false
    }))
    .unwrap()
}

fn parse(source: &str) -> Expr {
    Condition::parse(source).unwrap().expr().unwrap().clone()
}

fn parse_error(source: &str) -> ConditionError {
    Condition::parse(source).unwrap_err()
}

fn check_error(source: &str) -> ConditionError {
    Condition::parse(source).unwrap().check(&schema()).unwrap_err()
}

fn visible(source: &str, claims: Value) -> bool {
    let schema = schema();
    let condition = Condition::parse_checked(source, &schema).unwrap();
    condition.evaluate(&Claims::new(&claims, &schema))
}

fn claim(scope: Scope, name: &str) -> Expr {
    Expr::new(ExprKind::Claim(ClaimRef {
        scope,
        name: name.to_owned(),
    }))
}

// --- Syntax ------------------------------------------------------------------------------

#[test]
fn blank_is_the_empty_condition_and_visible() {
    for source in ["", "  ", "\n\t\r "] {
        let condition = Condition::parse(source).unwrap();
        assert!(condition.is_empty());
        assert_eq!(condition.source(), source);
        assert!(condition.check(&AdaptiveSchema::default()).is_ok());
        assert!(condition.evaluate(&Claims::none()));
    }
}

#[test]
fn the_source_is_kept_as_given() {
    let text = "visitor.claims.plan  ===  'pro'";
    assert_eq!(Condition::parse(text).unwrap().source(), text);
}

#[test]
fn claims_signed_unsigned_and_in_brackets() {
    assert_eq!(
        parse("visitor.claims.plan").kind,
        claim(Scope::Signed, "plan").kind
    );
    assert_eq!(
        parse("visitor.claims.unsigned.persona").kind,
        claim(Scope::Unsigned, "persona").kind
    );
    assert_eq!(
        parse("visitor[\"claims\"]['plan']").kind,
        claim(Scope::Signed, "plan").kind
    );
    assert_eq!(
        parse("visitor.claims[\"unsigned\"].persona").kind,
        claim(Scope::Unsigned, "persona").kind
    );
    assert_eq!(
        parse("visitor.claims[\"two words\"]").kind,
        claim(Scope::Signed, "two words").kind
    );
    // Keywords are names after a dot, as in JavaScript.
    assert_eq!(parse("visitor.claims.in").kind, claim(Scope::Signed, "in").kind);
    let expr = parse("visitor.claims.plan == 'pro'");
    assert_eq!(expr.span, Span::new(0, 28));
}

#[test]
fn precedence_is_javascript_s() {
    // `||` below `&&` below comparisons; `!` binds tightest.
    let expr = parse("true || false && null == 1");
    let ExprKind::Or(operands) = &expr.kind else {
        panic!("{expr:?}")
    };
    assert!(matches!(operands[1].kind, ExprKind::And(_)));
    let ExprKind::And(inner) = &operands[1].kind else {
        unreachable!()
    };
    assert!(matches!(
        inner[1].kind,
        ExprKind::Compare {
            op: CompareOp::Eq,
            ..
        }
    ));
    let expr = parse("!visitor.claims.isBetaUser == true");
    let ExprKind::Compare { left, .. } = &expr.kind else {
        panic!("{expr:?}")
    };
    assert!(matches!(left.kind, ExprKind::Not(_)));
}

#[test]
fn chains_are_one_node_and_parentheses_keep_their_groups() {
    let ExprKind::And(operands) = parse("true && false && true && false").kind else {
        panic!()
    };
    assert_eq!(operands.len(), 4);
    let ExprKind::And(operands) = parse("(true && false) && true").kind else {
        panic!()
    };
    assert_eq!(operands.len(), 2);
    assert!(matches!(operands[0].kind, ExprKind::And(_)));
    assert_eq!(
        operands[0].span,
        Span::new(0, 15),
        "a group's span has its parentheses"
    );
}

#[test]
fn operators_and_their_aliases() {
    for (source, op) in [
        ("1 == 2", CompareOp::Eq),
        ("1 === 2", CompareOp::Eq),
        ("1 != 2", CompareOp::Ne),
        ("1 !== 2", CompareOp::Ne),
        ("1 < 2", CompareOp::Lt),
        ("1 <= 2", CompareOp::Le),
        ("1 > 2", CompareOp::Gt),
        ("1 >= 2", CompareOp::Ge),
    ] {
        let ExprKind::Compare {
            op: found, op_span, ..
        } = parse(source).kind
        else {
            panic!("{source}")
        };
        assert_eq!(found, op, "{source}");
        assert_eq!(op_span.start, 2, "{source}");
    }
}

#[test]
fn literals() {
    let literal = |source: &str| match parse(source).kind {
        ExprKind::Literal(literal) => literal,
        other => panic!("{source}: {other:?}"),
    };
    assert_eq!(literal("null"), Literal::Null);
    assert_eq!(literal("true"), Literal::Bool(true));
    assert_eq!(literal("0"), Literal::Number(0.0));
    assert_eq!(literal("-12.5e2"), Literal::Number(-1250.0));
    assert_eq!(literal("- 3"), Literal::Number(-3.0));
    assert_eq!(literal("1E+3"), Literal::Number(1000.0));
    assert_eq!(literal("'it\\'s'"), Literal::String("it's".into()));
    assert_eq!(
        literal("\"a\\\"b\\\\c\\/d\""),
        Literal::String("a\"b\\c/d".into())
    );
    assert_eq!(
        literal("\"\\n\\r\\t\\b\\f\""),
        Literal::String("\n\r\t\u{8}\u{c}".into())
    );
    assert_eq!(
        literal("\"\\u00e9\\ud83d\\ude00\""),
        Literal::String("é😀".into())
    );
    assert_eq!(literal("'é😀'"), Literal::String("é😀".into()));
}

#[test]
fn in_takes_a_list_of_literals() {
    let ExprKind::In { items, .. } = parse("visitor.claims.plan in ['pro', \"free\", null, -1, true,]").kind
    else {
        panic!()
    };
    let values: Vec<Literal> = items.into_iter().map(|item| item.value).collect();
    assert_eq!(
        values,
        [
            Literal::String("pro".into()),
            Literal::String("free".into()),
            Literal::Null,
            Literal::Number(-1.0),
            Literal::Bool(true)
        ]
    );
    assert!(matches!(parse("1 in []").kind, ExprKind::In { ref items, .. } if items.is_empty()));
}

/// The message, position and detail of a syntax error.
#[track_caller]
fn assert_syntax(source: &str, message: &str, column: usize) {
    let error = parse_error(source);
    assert_eq!(error.kind, ErrorKind::Syntax, "{source}: {error}");
    assert_eq!(error.message, message, "{source}: {error}");
    assert_eq!(error.column, column, "{source}: {error}");
}

#[test]
fn syntax_errors_name_the_token_and_its_column() {
    let error = parse_error("visitor.claims.a & visitor.claims.b");
    assert_eq!(
        error.to_string(),
        "unexpected token \"&\" at column 18; did you mean \"&&\"?"
    );
    assert_syntax("true | false", "unexpected token \"|\"", 6);
    assert_syntax("1 = 1", "unexpected token \"=\"", 3);
    assert_syntax("true &&", "unexpected end of the condition", 8);
    assert_syntax("(true", "unexpected end of the condition", 6);
    assert_eq!(
        parse_error("(true").detail.as_deref(),
        Some("expected \")\" to close the \"(\" at column 1")
    );
    assert_syntax("true)", "unexpected token \")\"", 5);
    assert_syntax("true true", "unexpected name \"true\"", 6);
    assert_syntax("1 'a'", "unexpected string 'a'", 3);
    assert_syntax("&& true", "unexpected token \"&&\"", 1);
    assert_syntax("1 < 2 < 3", "unexpected token \"<\"", 7);
    assert_eq!(
        parse_error("1 < 2 < 3").detail.as_deref(),
        Some("comparisons do not chain: add parentheses")
    );
    assert_syntax("1 in [1] == true", "unexpected token \"==\"", 10);
    assert_syntax("1 in 1", "unexpected number 1", 6);
    assert_syntax("1 in [visitor.claims.a]", "unexpected name \"visitor\"", 7);
    assert_syntax("1 in [1 2]", "unexpected number 2", 9);
    assert_syntax("in [1]", "unexpected name \"in\"", 1);
    assert_syntax("-true", "unexpected name \"true\"", 2);
    assert_syntax("1 € 2", "unexpected token \"€\"", 3);
    assert_syntax("x == 1", "unknown name \"x\"", 1);
    assert_syntax("space.vars.a", "unknown name \"space\"", 1);
    assert_eq!(
        parse_error("undefined").detail.as_deref(),
        Some("write null for a claim that is absent")
    );
}

#[test]
fn claim_paths_are_exactly_two_or_three_deep() {
    assert_syntax("visitor", "visitor is not a value", 1);
    assert_syntax("visitor.claims", "visitor.claims is not a value", 1);
    assert_syntax(
        "visitor.claims.unsigned",
        "visitor.claims.unsigned is not a value",
        1,
    );
    assert_syntax("visitor.name", "unknown property \"name\" of visitor", 8);
    assert_syntax(
        "visitor.claims.plan.tier",
        "claims have no properties (\"tier\")",
        20,
    );
    assert_syntax(
        "visitor.claims.unsigned.bucket.FLAG",
        "claims have no properties (\"FLAG\")",
        31,
    );
    assert_syntax("visitor.claims.", "unexpected end of the condition", 16);
    assert_syntax("visitor.claims[plan]", "unexpected name \"plan\"", 16);
    assert_syntax("visitor.claims['plan'", "unexpected end of the condition", 22);
}

#[test]
fn lexical_errors() {
    assert_syntax("'abc", "unterminated string", 1);
    assert_syntax("\"a\nb\"", "a string does not span lines", 3);
    assert_syntax("'\\q'", "unknown escape \\q", 2);
    assert_syntax("'\\u12'", "\\u takes four hexadecimal digits", 2);
    assert_syntax("'\\ud800'", "a lone surrogate is not a character", 2);
    assert_syntax("'\\ude00'", "a lone surrogate is not a character", 2);
    assert_syntax("010", "a number does not start with 0", 1);
    assert_syntax("1.", "a digit must follow the decimal point", 2);
    assert_syntax("1e", "a digit must follow the exponent", 2);
    assert_syntax("0x10", "a number is followed by a letter", 2);
    assert_syntax("1e400", "the number 1e400 is too large", 1);
    assert_syntax("1\u{a0}", "unexpected token \"\\u{a0}\"", 2);
}

#[test]
fn columns_count_characters_and_lines_are_named_when_there_are_several() {
    let error = parse_error("'é😀' &");
    assert_eq!((error.offset, error.line, error.column), (9, 1, 6));
    let error = parse_error("true &&\n  false &");
    assert_eq!((error.line, error.column), (2, 9));
    assert_eq!(
        error.to_string(),
        "unexpected token \"&\" at line 2, column 9; did you mean \"&&\"?"
    );
}

// --- Limits ------------------------------------------------------------------------------

#[test]
fn the_length_is_bounded_in_characters() {
    let at_limit = format!("'{}'", "é".repeat(MAX_CONDITION_CHARS - 2));
    assert!(Condition::parse(&at_limit).is_ok());
    let over = format!("'{}'", "é".repeat(MAX_CONDITION_CHARS - 1));
    let error = parse_error(&over);
    assert_eq!(error.kind, ErrorKind::Limit);
    assert_eq!(error.column, MAX_CONDITION_CHARS + 1);
    assert_eq!(error.offset, over.len() - 1);
    assert!(error.message.contains("MAX_CONDITION_CHARS"), "{error}");
    let huge = "x".repeat(10 * MAX_CONDITION_CHARS);
    assert_eq!(parse_error(&huge).offset, MAX_CONDITION_CHARS);
}

#[test]
fn nesting_is_bounded() {
    let nested = |depth: usize| format!("{}true{}", "(".repeat(depth), ")".repeat(depth));
    assert!(Condition::parse(&nested(MAX_CONDITION_DEPTH)).is_ok());
    let error = parse_error(&nested(MAX_CONDITION_DEPTH + 1));
    assert_eq!(
        (error.kind, error.column),
        (ErrorKind::Limit, MAX_CONDITION_DEPTH + 1)
    );
    assert!(error.message.contains("MAX_CONDITION_DEPTH"), "{error}");
    let bangs = |n: usize| format!("{}true", "!".repeat(n));
    assert!(Condition::parse(&bangs(MAX_CONDITION_DEPTH)).is_ok());
    assert_eq!(
        parse_error(&bangs(MAX_CONDITION_DEPTH + 1)).kind,
        ErrorKind::Limit
    );
    // Parentheses and negations share the budget.
    let mixed = format!(
        "{}true{}",
        "!(".repeat(MAX_CONDITION_DEPTH / 2 + 1),
        ")".repeat(MAX_CONDITION_DEPTH / 2 + 1)
    );
    assert_eq!(parse_error(&mixed).kind, ErrorKind::Limit);
    // Closed groups give their budget back.
    let siblings = vec![nested(MAX_CONDITION_DEPTH); 3].join(" && ");
    assert!(Condition::parse(&siblings).is_ok());
}

#[test]
fn nodes_are_bounded() {
    let list = |n: usize| format!("1 in [{}]", vec!["1"; n].join(","));
    // The needle and `in` are two nodes.
    assert!(Condition::parse(&list(MAX_CONDITION_NODES - 2)).is_ok());
    let error = parse_error(&list(MAX_CONDITION_NODES - 1));
    assert_eq!(error.kind, ErrorKind::Limit);
    assert!(error.message.contains("MAX_CONDITION_NODES"), "{error}");
    let chain = vec!["1"; MAX_CONDITION_NODES].join("&&");
    assert_eq!(parse_error(&chain).kind, ErrorKind::Limit);
}

/// 10,000 nested parentheses (with the length limit lifted to reach the depth budget) on a
/// 256 KiB stack: an error, not an overflow. Also the deepest accepted tree is checked,
/// evaluated and printed there.
#[test]
fn deep_nesting_on_a_small_stack() {
    let thread = std::thread::Builder::new().stack_size(256 * 1024).spawn(|| {
        let limits = Limits {
            chars: usize::MAX,
            ..Limits::DEFAULT
        };
        for open in ["(", "!", "!(", "(visitor.claims.isBetaUser == "] {
            let source = format!("{}true{}", open.repeat(10_000), ")".repeat(10_000));
            let error = Condition::parse_with(&source, limits).unwrap_err();
            assert_eq!(error.kind, ErrorKind::Limit, "{open}");
        }
        // The deepest tree the budget allows: three levels (`||`, `&&`, `==`) per group.
        let mut source = "visitor.claims.isBetaUser".to_owned();
        for _ in 0..MAX_CONDITION_DEPTH {
            source = format!("(false || true && {source} == true)");
        }
        source = format!("false || true && {source} == true");
        let condition = Condition::parse_with(&source, limits).unwrap();
        let schema = schema();
        condition.check(&schema).unwrap();
        assert!(!condition.evaluate(&Claims::none()));
        let claims = Claims::new(&json!({"isBetaUser": true}), &schema);
        assert!(condition.evaluate(&claims));
        let printed = condition.expr().unwrap().to_string();
        assert_eq!(
            Condition::parse_with(&printed, limits)
                .unwrap()
                .expr()
                .unwrap()
                .to_string(),
            printed
        );
    });
    thread.unwrap().join().unwrap();
}

// --- Checking ----------------------------------------------------------------------------

#[test]
fn unknown_claims_are_named_with_the_schema_s() {
    let error = check_error("visitor.claims.plann == 'pro'");
    assert_eq!(error.kind, ErrorKind::UnknownClaim);
    assert_eq!(
        error.to_string(),
        "unknown claim \"plann\" at column 1; the schema has: isBetaUser, plan, name, seats, score"
    );
    let error = check_error("true && visitor.claims.unsigned.plan == 'pro'");
    assert_eq!(
        error.to_string(),
        "unknown unsigned claim \"plan\" at column 9; the schema's unsigned claims are: persona, beta"
    );
    // Signed and unsigned are apart.
    assert_eq!(
        check_error("visitor.claims.persona != null").kind,
        ErrorKind::UnknownClaim
    );
    let error = Condition::parse("visitor.claims.a")
        .unwrap()
        .check(&AdaptiveSchema::default())
        .unwrap_err();
    assert_eq!(error.detail.as_deref(), Some("the schema has no claims"));
}

#[test]
fn many_claims_are_listed_in_part() {
    let properties: serde_json::Map<String, Value> = (0..30)
        .map(|i| (format!("c{i}"), json!({"type": "boolean"})))
        .collect();
    let schema = AdaptiveSchema::parse(&json!({
        "type": "object", "properties": properties, "additionalProperties": false
    }))
    .unwrap();
    let error = Condition::parse("visitor.claims.x")
        .unwrap()
        .check(&schema)
        .unwrap_err();
    let detail = error.detail.unwrap();
    assert!(detail.ends_with("c19, ... (30 in all)"), "{detail}");
}

#[test]
fn boolean_positions_take_booleans() {
    for (source, message) in [
        (
            "visitor.claims.plan",
            "a condition is true or false, and visitor.claims.plan is an enum",
        ),
        (
            "visitor.claims.unsigned.persona",
            "a condition is true or false, and visitor.claims.unsigned.persona is a string",
        ),
        ("null", "a condition is true or false, not null"),
        (
            "!visitor.claims.seats",
            "the operand of \"!\" is true or false, and visitor.claims.seats is an integer",
        ),
        (
            "true && 1",
            "each side of \"&&\" is true or false, and 1 is a number",
        ),
        (
            "'a' || true",
            "each side of \"||\" is true or false, and \"a\" is a string",
        ),
    ] {
        let error = check_error(source);
        assert_eq!(
            (error.kind, error.message.as_str()),
            (ErrorKind::Type, message),
            "{source}"
        );
    }
    assert_eq!(check_error("true && 1").column, 9);
    assert_eq!(
        check_error("visitor.claims.name").detail.as_deref(),
        Some("compare it: visitor.claims.name == \"...\"")
    );
    for source in [
        "visitor.claims.isBetaUser",
        "!visitor.claims.unsigned.beta",
        "true",
        "visitor.claims.isBetaUser && (visitor.claims.name != null || false)",
    ] {
        Condition::parse_checked(source, &schema()).unwrap();
    }
}

#[test]
fn equality_needs_values_of_one_type() {
    for source in [
        "visitor.claims.plan == 'pro'",
        "'pro' === visitor.claims.plan",
        "visitor.claims.name != visitor.claims.plan",
        "visitor.claims.seats == 3",
        "visitor.claims.score == visitor.claims.seats",
        "visitor.claims.score == 2.5",
        "visitor.claims.isBetaUser == false",
        "visitor.claims.plan == null",
        "null != visitor.claims.isBetaUser",
        "1 == 1",
    ] {
        Condition::parse_checked(source, &schema()).unwrap_or_else(|e| panic!("{source}: {e}"));
    }
    let error = check_error("visitor.claims.seats == '3'");
    assert_eq!(
        (error.kind, error.message.as_str(), error.column),
        (
            ErrorKind::Type,
            "visitor.claims.seats is an integer, and \"3\" is a string: they are never equal",
            22
        )
    );
    assert_eq!(
        check_error("visitor.claims.isBetaUser == 1").message,
        "visitor.claims.isBetaUser is a boolean, and 1 is a number: they are never equal"
    );
    assert_eq!(check_error("1 == 'a'").kind, ErrorKind::Type);
}

#[test]
fn enum_and_integer_literals_must_be_possible_values() {
    let error = check_error("visitor.claims.plan == 'entreprise'");
    assert_eq!(
        error.to_string(),
        "\"entreprise\" is not a value of visitor.claims.plan at column 24; its values are: \"free\", \"pro\", \"enterprise\""
    );
    assert_eq!(check_error("'gold' != visitor.claims.plan").column, 1);
    let error = check_error("visitor.claims.plan in ['pro', 'gold']");
    assert_eq!(
        (error.message.as_str(), error.column),
        ("\"gold\" is not a value of visitor.claims.plan", 32)
    );
    assert_eq!(
        check_error("visitor.claims.seats == 1.5").message,
        "1.5 is never equal to visitor.claims.seats, an integer"
    );
    // Ordering an integer against a fraction is fine.
    Condition::parse_checked("visitor.claims.seats < 1.5", &schema()).unwrap();
}

#[test]
fn ordering_takes_two_numbers_or_two_strings() {
    for source in [
        "visitor.claims.seats < 10",
        "visitor.claims.score >= visitor.claims.seats",
        "visitor.claims.name > 'm'",
        "-1 <= visitor.claims.score",
    ] {
        Condition::parse_checked(source, &schema()).unwrap_or_else(|e| panic!("{source}: {e}"));
    }
    for (source, message) in [
        (
            "visitor.claims.isBetaUser < true",
            "\"<\" orders numbers or strings, and visitor.claims.isBetaUser is a boolean",
        ),
        (
            "visitor.claims.seats > null",
            "\">\" orders numbers or strings, and null is never ordered",
        ),
        (
            "visitor.claims.plan >= 'free'",
            "\">=\" orders numbers or strings, and visitor.claims.plan is an enum, compared with ==, != or in",
        ),
        (
            "visitor.claims.name <= 3",
            "\"<=\" orders two numbers or two strings, and visitor.claims.name is a string while 3 is a number",
        ),
    ] {
        let error = check_error(source);
        assert_eq!(
            (error.kind, error.message.as_str()),
            (ErrorKind::Type, message),
            "{source}"
        );
    }
    assert_eq!(check_error("visitor.claims.isBetaUser < true").column, 27);
}

#[test]
fn in_lists_fit_the_needle() {
    Condition::parse_checked("visitor.claims.plan in ['pro', null]", &schema()).unwrap();
    Condition::parse_checked("visitor.claims.seats in [1, 2, 3]", &schema()).unwrap();
    let error = check_error("visitor.claims.seats in [1, 'two']");
    assert_eq!(
        (error.message.as_str(), error.column),
        (
            "\"two\" is a string, and visitor.claims.seats is an integer: they are never equal",
            29
        )
    );
    assert_eq!(check_error("visitor.claims.seats in [1.5]").kind, ErrorKind::Type);
    assert_eq!(
        check_error("visitor.claims.plan in []").message,
        "\"in []\" is never true"
    );
}

#[test]
fn the_first_error_in_reading_order_is_reported() {
    let error = check_error("visitor.claims.nope || visitor.claims.plan == 1");
    assert_eq!(error.kind, ErrorKind::UnknownClaim);
}

// --- Evaluation --------------------------------------------------------------------------

#[test]
fn boolean_claims_and_logic() {
    assert!(visible("visitor.claims.isBetaUser", json!({"isBetaUser": true})));
    assert!(!visible(
        "visitor.claims.isBetaUser",
        json!({"isBetaUser": false})
    ));
    assert!(!visible("visitor.claims.isBetaUser", json!({})));
    assert!(visible("!visitor.claims.isBetaUser", json!({})));
    assert!(visible(
        "visitor.claims.isBetaUser == true",
        json!({"isBetaUser": true})
    ));
    assert!(visible(
        "visitor.claims.isBetaUser && visitor.claims.unsigned.beta",
        json!({"isBetaUser": true, "unsigned": {"beta": true}})
    ));
    assert!(!visible(
        "visitor.claims.isBetaUser && visitor.claims.unsigned.beta",
        json!({"isBetaUser": true, "beta": true})
    ));
    assert!(visible(
        "visitor.claims.isBetaUser || visitor.claims.unsigned.beta",
        json!({"unsigned": {"beta": true}})
    ));
    assert!(visible("!(false || false) && !!true", json!({})));
}

#[test]
fn claims_of_the_wrong_type_or_outside_the_enum_are_absent() {
    for claims in [
        json!({"isBetaUser": "true"}),
        json!({"isBetaUser": 1}),
        json!({"isBetaUser": [true]}),
        json!({"isBetaUser": null}),
        json!("not an object"),
    ] {
        assert!(!visible("visitor.claims.isBetaUser", claims.clone()), "{claims}");
        assert!(
            visible("visitor.claims.isBetaUser == null", claims.clone()),
            "{claims}"
        );
    }
    assert!(visible("visitor.claims.plan == null", json!({"plan": "gold"})));
    assert!(visible("visitor.claims.plan == 'pro'", json!({"plan": "pro"})));
    assert!(visible("visitor.claims.seats == null", json!({"seats": 2.5})));
    assert!(visible("visitor.claims.seats == 2", json!({"seats": 2.0})));
    assert!(visible("visitor.claims.score == 2.5", json!({"score": 2.5})));
    assert!(visible(
        "visitor.claims.unsigned.persona == null",
        json!({"unsigned": "x"})
    ));
    // A claim the schema does not declare is never read, even under a declared name's scope.
    let schema = schema();
    let claims = Claims::new(&json!({"persona": "admin", "unsigned": {"plan": "pro"}}), &schema);
    assert_eq!(claims, Claims::none());
}

#[test]
fn null_is_equal_only_to_null_and_never_ordered() {
    let none = json!({});
    assert!(visible("visitor.claims.name == null", none.clone()));
    assert!(!visible("visitor.claims.name == ''", none.clone()));
    assert!(!visible("visitor.claims.name != null", none.clone()));
    assert!(!visible("visitor.claims.seats < 1", none.clone()));
    assert!(!visible("visitor.claims.seats >= 1", none.clone()));
    // Not JavaScript: `!(a < b)` is not `a >= b` when a is absent.
    assert!(visible("!(visitor.claims.seats < 1)", none.clone()));
    assert!(visible("visitor.claims.plan in ['pro', null]", none.clone()));
    assert!(!visible("visitor.claims.plan in ['pro']", none));
}

#[test]
fn comparisons() {
    let claims = json!({"seats": 5, "score": 2.5, "name": "Émile", "plan": "pro"});
    for (source, expected) in [
        ("visitor.claims.seats > 4", true),
        ("visitor.claims.seats > 5", false),
        ("visitor.claims.seats >= 5", true),
        ("visitor.claims.seats < 5.5", true),
        ("visitor.claims.seats <= 4.99", false),
        ("visitor.claims.score < visitor.claims.seats", true),
        ("visitor.claims.seats == 5.0", true),
        ("visitor.claims.seats != 5", false),
        ("visitor.claims.name == 'Émile'", true),
        ("visitor.claims.name > 'Z'", true),
        ("visitor.claims.name < 'F'", false),
        ("visitor.claims.name == 'émile'", false),
        ("visitor.claims.plan in ['free', 'pro']", true),
        ("visitor.claims.plan in ['free', 'enterprise']", false),
        ("visitor.claims.seats in [1, 5]", true),
        ("-0 == 0", true),
    ] {
        assert_eq!(visible(source, claims.clone()), expected, "{source}");
    }
}

#[test]
fn unchecked_conditions_evaluate_without_coercion() {
    // Conditions that no longer check (the schema changed): values are compared as they are.
    let schema = schema();
    let claims = Claims::new(&json!({"seats": 1, "plan": "pro", "name": ""}), &schema);
    for (source, expected) in [
        ("visitor.claims.seats == '1'", false),
        ("visitor.claims.seats", false),
        ("!visitor.claims.seats", true),
        ("!visitor.claims.name", true),
        ("visitor.claims.plan < 1", false),
        ("visitor.claims.gone == null", true),
        ("null < 1", false),
        ("true == 1", false),
        ("'a' && true", false),
        ("1 in []", false),
    ] {
        let condition = Condition::parse(source).unwrap();
        assert!(condition.check(&schema).is_err(), "{source}");
        assert_eq!(condition.evaluate(&claims), expected, "{source}");
    }
}

/// The messages `docs/adaptive-content.md` shows, exactly.
#[test]
fn documented_messages() {
    for (source, message) in [
        (
            "visitor.claims.a & visitor.claims.b",
            "unexpected token \"&\" at column 18; did you mean \"&&\"?",
        ),
        (
            "(true",
            "unexpected end of the condition at column 6; expected \")\" to close the \"(\" at column 1",
        ),
        (
            "1 < 2 < 3",
            "unexpected token \"<\" at column 7; comparisons do not chain: add parentheses",
        ),
        (
            "space.vars.x",
            "unknown name \"space\" at column 1; a condition reads visitor.claims.NAME and visitor.claims.unsigned.NAME",
        ),
        (
            "visitor.claims.unsigned.bucket.FLAG",
            "claims have no properties (\"FLAG\") at column 31; a claim is a boolean, string or number; objects are not supported",
        ),
        ("'abc", "unterminated string at column 1; close it with '"),
        (
            "010",
            "a number does not start with 0 at column 1; write 10, not 010",
        ),
        (
            &format!("{}true{}", "(".repeat(33), ")".repeat(33)),
            "the condition nests more than 32 parentheses and negations (MAX_CONDITION_DEPTH) at column 33",
        ),
    ] {
        assert_eq!(parse_error(source).to_string(), message);
    }
    for (source, message) in [
        (
            "visitor.claims.plann == 'pro'",
            "unknown claim \"plann\" at column 1; the schema has: isBetaUser, plan, name, seats, score",
        ),
        (
            "true && visitor.claims.unsigned.plan",
            "unknown unsigned claim \"plan\" at column 9; the schema's unsigned claims are: persona, beta",
        ),
        (
            "visitor.claims.plan == 'entreprise'",
            "\"entreprise\" is not a value of visitor.claims.plan at column 24; its values are: \"free\", \"pro\", \"enterprise\"",
        ),
        (
            "visitor.claims.seats == '3'",
            "visitor.claims.seats is an integer, and \"3\" is a string: they are never equal at column 22",
        ),
        (
            "visitor.claims.plan >= 'free'",
            "\">=\" orders numbers or strings, and visitor.claims.plan is an enum, compared with ==, != or in at column 21",
        ),
        (
            "visitor.claims.name",
            "a condition is true or false, and visitor.claims.name is a string at column 1; compare it: visitor.claims.name == \"...\"",
        ),
    ] {
        assert_eq!(check_error(source).to_string(), message);
    }
}
