//! Checking a condition against a schema: every claim exists, and every operator fits the
//! types of its operands.
//!
//! The rules make a condition that passes mean the same in quire as in GitBook's JavaScript:
//! where JavaScript would coerce (`1 == "1"`, `null < 1`, `!"text"`), the condition is
//! refused instead (`docs/adaptive-content.md`, "Types").

use super::ast::{ClaimRef, CompareOp, Expr, ExprKind, Item, Literal, Scope, Span};
use super::error::ErrorKind;
use super::lexer::shorten;
use crate::schema::{AdaptiveSchema, ClaimKind};

/// A check error before it has a position in the source (the caller has the source).
pub(crate) struct CheckError {
    pub kind: ErrorKind,
    pub offset: usize,
    pub message: String,
    pub detail: Option<String>,
}

/// The static type of an operand. Claims may always be absent (null) at evaluation; the
/// types here are what they are when present.
#[derive(Clone, Copy)]
enum Ty<'s> {
    Null,
    Bool,
    Str,
    Num,
    Int,
    Enum(&'s [String]),
}

impl Ty<'_> {
    fn describe(self) -> &'static str {
        match self {
            Ty::Null => "null",
            Ty::Bool => "a boolean",
            Ty::Str => "a string",
            Ty::Num => "a number",
            Ty::Int => "an integer",
            Ty::Enum(_) => "an enum",
        }
    }

    fn is_numeric(self) -> bool {
        matches!(self, Ty::Num | Ty::Int)
    }

    fn is_string(self) -> bool {
        matches!(self, Ty::Str | Ty::Enum(_))
    }
}

/// How many names a message lists before "and N more".
const NAMES_SHOWN: usize = 20;

pub(crate) fn check(expr: &Expr, schema: &AdaptiveSchema) -> Result<(), CheckError> {
    Checker { schema }.run(expr)
}

struct Checker<'s> {
    schema: &'s AdaptiveSchema,
}

/// What the operator above an operand needs of it: anything, or true or false (the words
/// name the operator, for the message).
#[derive(Clone, Copy)]
enum Need {
    Any,
    Bool(&'static str),
}

/// A step of the checker's walk: a node to enter (its operands are checked first), or a
/// node whose operands' types are on the type stack.
enum Step<'e> {
    Enter(&'e Expr, Need),
    Exit(&'e Expr, Need),
}

/// An operand as the source shows it, for messages.
fn shown(expr: &Expr) -> String {
    shorten(&expr.to_string())
}

fn type_error(span: Span, message: String, detail: Option<String>) -> CheckError {
    CheckError {
        kind: ErrorKind::Type,
        offset: span.start,
        message,
        detail,
    }
}

/// `expr` of type `ty` where true or false is needed (`what` names the operator).
fn boolean(expr: &Expr, ty: Ty, what: &str) -> Result<(), CheckError> {
    match ty {
        Ty::Bool => Ok(()),
        Ty::Null => Err(type_error(
            expr.span,
            format!("{what} is true or false, not null"),
            None,
        )),
        ty => {
            let operand = shown(expr);
            Err(type_error(
                expr.span,
                format!("{what} is true or false, and {operand} is {}", ty.describe()),
                Some(match ty {
                    Ty::Str | Ty::Enum(_) => format!("compare it: {operand} == \"...\""),
                    _ => format!("compare it: {operand} > 0, or {operand} != null"),
                }),
            ))
        }
    }
}

impl<'s> Checker<'s> {
    /// Walks the tree with an explicit stack, operands left to right, each checked as soon
    /// as its type is known: the first error in reading order is the one reported, and the
    /// walk's own stack use does not depend on the tree's depth.
    fn run(&self, root: &Expr) -> Result<(), CheckError> {
        let mut steps = vec![Step::Enter(root, Need::Bool("a condition"))];
        let mut types: Vec<Ty<'s>> = Vec::new();
        while let Some(step) = steps.pop() {
            let (expr, need, ty) = match step {
                Step::Enter(expr, need) => {
                    let ty = match &expr.kind {
                        ExprKind::Literal(literal) => literal_type(literal),
                        ExprKind::Claim(claim) => self.claim(claim, expr.span)?,
                        ExprKind::Not(operand) => {
                            steps.push(Step::Exit(expr, need));
                            steps.push(Step::Enter(operand, Need::Bool("the operand of \"!\"")));
                            continue;
                        }
                        ExprKind::And(operands) | ExprKind::Or(operands) => {
                            let what = match expr.kind {
                                ExprKind::And(_) => "each side of \"&&\"",
                                _ => "each side of \"||\"",
                            };
                            steps.push(Step::Exit(expr, need));
                            steps.extend(operands.iter().rev().map(|o| Step::Enter(o, Need::Bool(what))));
                            continue;
                        }
                        ExprKind::Compare { left, right, .. } => {
                            steps.push(Step::Exit(expr, need));
                            steps.push(Step::Enter(right, Need::Any));
                            steps.push(Step::Enter(left, Need::Any));
                            continue;
                        }
                        ExprKind::In { needle, .. } => {
                            steps.push(Step::Exit(expr, need));
                            steps.push(Step::Enter(needle, Need::Any));
                            continue;
                        }
                    };
                    (expr, need, ty)
                }
                Step::Exit(expr, need) => {
                    match &expr.kind {
                        ExprKind::Not(_) => {
                            types.pop();
                        }
                        ExprKind::And(operands) | ExprKind::Or(operands) => {
                            types.truncate(types.len().saturating_sub(operands.len()));
                        }
                        ExprKind::Compare {
                            op,
                            op_span,
                            left,
                            right,
                        } => {
                            let rt = types.pop().unwrap_or(Ty::Null);
                            let lt = types.pop().unwrap_or(Ty::Null);
                            if op.is_equality() {
                                equality(*op_span, (left, lt), (right, rt))?;
                            } else {
                                ordering(*op, *op_span, (left, lt), (right, rt))?;
                            }
                        }
                        ExprKind::In { needle, items } => {
                            let ty = types.pop().unwrap_or(Ty::Null);
                            in_list(expr, needle, ty, items)?;
                        }
                        ExprKind::Literal(_) | ExprKind::Claim(_) => {}
                    }
                    (expr, need, Ty::Bool)
                }
            };
            if let Need::Bool(what) = need {
                boolean(expr, ty, what)?;
            }
            types.push(ty);
        }
        Ok(())
    }

    fn claim(&self, claim: &ClaimRef, span: Span) -> Result<Ty<'s>, CheckError> {
        let Some(found) = self.schema.claim(claim.scope, &claim.name) else {
            let (what, names) = match claim.scope {
                Scope::Signed => ("claim", self.schema.claims()),
                Scope::Unsigned => ("unsigned claim", self.schema.unsigned_claims()),
            };
            let scope = match claim.scope {
                Scope::Signed => "claims",
                Scope::Unsigned => "unsigned claims",
            };
            let detail = if names.is_empty() {
                format!("the schema has no {scope}")
            } else {
                let mut list: Vec<&str> = names.iter().take(NAMES_SHOWN).map(|c| c.name.as_str()).collect();
                let more = names.len().saturating_sub(NAMES_SHOWN);
                let mut detail = match claim.scope {
                    Scope::Signed => "the schema has: ".to_owned(),
                    Scope::Unsigned => "the schema's unsigned claims are: ".to_owned(),
                };
                if more > 0 {
                    list.push("...");
                }
                detail.push_str(&list.join(", "));
                if more > 0 {
                    detail.push_str(&format!(" ({} in all)", names.len()));
                }
                detail
            };
            return Err(CheckError {
                kind: ErrorKind::UnknownClaim,
                offset: span.start,
                message: format!("unknown {what} \"{}\"", shorten(&claim.name)),
                detail: Some(detail),
            });
        };
        Ok(match &found.kind {
            ClaimKind::Boolean => Ty::Bool,
            ClaimKind::String => Ty::Str,
            ClaimKind::Number => Ty::Num,
            ClaimKind::Integer => Ty::Int,
            ClaimKind::Enum(values) => Ty::Enum(values),
        })
    }
}

fn equality(op_span: Span, left: (&Expr, Ty), right: (&Expr, Ty)) -> Result<(), CheckError> {
    let ((le, lt), (re, rt)) = (left, right);
    if !equality_fits(lt, rt) {
        return Err(type_error(
            op_span,
            format!(
                "{} is {}, and {} is {}: they are never equal",
                shown(le),
                lt.describe(),
                shown(re),
                rt.describe()
            ),
            None,
        ));
    }
    // A literal compared with an enum or an integer claim must be one of its values.
    if let ExprKind::Literal(literal) = &re.kind {
        fits_values(le, lt, literal, re.span)?;
    }
    if let ExprKind::Literal(literal) = &le.kind {
        fits_values(re, rt, literal, le.span)?;
    }
    Ok(())
}

fn ordering(op: CompareOp, op_span: Span, left: (&Expr, Ty), right: (&Expr, Ty)) -> Result<(), CheckError> {
    let symbol = op.symbol();
    for (expr, ty) in [left, right] {
        let refused = match ty {
            Ty::Null => Some("null is never ordered".to_owned()),
            Ty::Bool => Some(format!("{} is a boolean", shown(expr))),
            Ty::Enum(_) => Some(format!("{} is an enum, compared with ==, != or in", shown(expr))),
            Ty::Str | Ty::Num | Ty::Int => None,
        };
        if let Some(reason) = refused {
            return Err(type_error(
                op_span,
                format!("\"{symbol}\" orders numbers or strings, and {reason}"),
                None,
            ));
        }
    }
    let ((le, lt), (re, rt)) = (left, right);
    if lt.is_numeric() != rt.is_numeric() {
        return Err(type_error(
            op_span,
            format!(
                "\"{symbol}\" orders two numbers or two strings, and {} is {} while {} is {}",
                shown(le),
                lt.describe(),
                shown(re),
                rt.describe()
            ),
            None,
        ));
    }
    Ok(())
}

fn in_list(expr: &Expr, needle: &Expr, ty: Ty, items: &[Item]) -> Result<(), CheckError> {
    if items.is_empty() {
        return Err(type_error(
            expr.span,
            "\"in []\" is never true".to_owned(),
            Some("list the values to match".to_owned()),
        ));
    }
    for item in items {
        let item_ty = literal_type(&item.value);
        if !equality_fits(ty, item_ty) {
            return Err(type_error(
                item.span,
                format!(
                    "{} is {}, and {} is {}: they are never equal",
                    item.value,
                    item_ty.describe(),
                    shown(needle),
                    ty.describe()
                ),
                None,
            ));
        }
        fits_values(needle, ty, &item.value, item.span)?;
    }
    Ok(())
}

fn literal_type(literal: &Literal) -> Ty<'static> {
    match literal {
        Literal::Null => Ty::Null,
        Literal::Bool(_) => Ty::Bool,
        Literal::Number(_) => Ty::Num,
        Literal::String(_) => Ty::Str,
    }
}

/// Whether `==` between the two types can be true: same kind of value, or a null check.
fn equality_fits(a: Ty, b: Ty) -> bool {
    match (a, b) {
        (Ty::Null, _) | (_, Ty::Null) => true,
        (Ty::Bool, Ty::Bool) => true,
        (a, b) if a.is_numeric() && b.is_numeric() => true,
        (a, b) => a.is_string() && b.is_string(),
    }
}

/// A literal compared for equality with `operand` of type `ty`: an enum's literal must be one
/// of its values, an integer's literal must have no fraction.
fn fits_values(operand: &Expr, ty: Ty, literal: &Literal, span: Span) -> Result<(), CheckError> {
    match (ty, literal) {
        (Ty::Enum(values), Literal::String(value)) if !values.contains(value) => {
            let shown_values: Vec<String> = values
                .iter()
                .take(NAMES_SHOWN)
                .map(|v| Literal::String(shorten(v)).to_string())
                .collect();
            let more = if values.len() > NAMES_SHOWN { ", ..." } else { "" };
            Err(type_error(
                span,
                format!("{literal} is not a value of {}", shown(operand)),
                Some(format!("its values are: {}{more}", shown_values.join(", "))),
            ))
        }
        (Ty::Int, Literal::Number(n)) if n.fract() != 0.0 => Err(type_error(
            span,
            format!("{literal} is never equal to {}, an integer", shown(operand)),
            None,
        )),
        _ => Ok(()),
    }
}
