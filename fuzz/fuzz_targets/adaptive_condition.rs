//! Arbitrary text as an adaptive-content condition. The parser must answer a condition or an
//! error whose position is inside the text; an accepted condition must check against a fixed
//! schema (an error's position inside the text too), evaluate against a few claim sets, and
//! print to a text that parses to a condition with the same printing, the same check verdict
//! and the same evaluations. Any panic or stack overflow is a crash.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use quire_adaptive::limits::MAX_CONDITION_CHARS;
use quire_adaptive::{AdaptiveSchema, Claims, Condition, ConditionError};
use serde_json::json;

static SCHEMA: LazyLock<AdaptiveSchema> = LazyLock::new(|| {
    AdaptiveSchema::parse(&json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "beta": {"type": "boolean"},
            "plan": {"type": "string", "enum": ["free", "pro", "enterprise"]},
            "name": {"type": "string"},
            "seats": {"type": "integer"},
            "score": {"type": "number"},
            "unsigned": {
                "type": "object",
                "properties": {
                    "beta": {"type": "boolean"},
                    "persona": {"type": "string"},
                    "tier": {"type": "string", "enum": ["a", "b"]}
                },
                "additionalProperties": false
            }
        },
        "additionalProperties": false
    }))
    .unwrap()
});

static CLAIMS: LazyLock<Vec<Claims>> = LazyLock::new(|| {
    [
        json!({}),
        json!({"beta": true, "plan": "pro", "name": "Émile", "seats": 3, "score": 2.5,
               "unsigned": {"beta": false, "persona": "admin", "tier": "a"}}),
        json!({"beta": false, "plan": "free", "name": "", "seats": 0, "score": -1e300,
               "unsigned": {"beta": true, "persona": "", "tier": "b"}}),
        json!({"beta": "true", "plan": "gold", "name": 1, "seats": 1.5, "score": "2",
               "unsigned": "not an object"}),
    ]
    .iter()
    .map(|claims| Claims::new(claims, &SCHEMA))
    .collect()
});

fn assert_position(source: &str, error: &ConditionError) {
    assert!(error.offset <= source.len(), "{error}: offset {} past the end", error.offset);
    assert!(source.is_char_boundary(error.offset), "{error}: offset inside a character");
    let before = &source[..error.offset];
    assert_eq!(error.line, before.matches('\n').count() + 1, "{error}");
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    assert_eq!(error.column, before[line_start..].chars().count() + 1, "{error}");
}

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    let condition = match Condition::parse(&source) {
        Ok(condition) => condition,
        Err(error) => return assert_position(&source, &error),
    };
    assert_eq!(condition.source(), source);
    let checked = condition.check(&SCHEMA);
    if let Err(error) = &checked {
        assert_position(&source, error);
    }
    let verdicts: Vec<bool> = CLAIMS.iter().map(|claims| condition.evaluate(claims)).collect();
    let Some(expr) = condition.expr() else {
        assert!(verdicts.iter().all(|visible| *visible), "the empty condition hides");
        return;
    };
    let printed = expr.to_string();
    // Printing normalizes spacing, quotes and escapes, and may be longer than the source.
    if printed.chars().count() > MAX_CONDITION_CHARS {
        return;
    }
    let again = match Condition::parse(&printed) {
        Ok(again) => again,
        Err(error) => panic!("{printed:?}, printed from {source:?}, is refused: {error}"),
    };
    assert_eq!(again.expr().map(ToString::to_string).as_deref(), Some(printed.as_str()));
    assert_eq!(again.check(&SCHEMA).is_ok(), checked.is_ok(), "{printed:?} from {source:?}");
    let again_verdicts: Vec<bool> = CLAIMS.iter().map(|claims| again.evaluate(claims)).collect();
    assert_eq!(again_verdicts, verdicts, "{printed:?} from {source:?}");
});
