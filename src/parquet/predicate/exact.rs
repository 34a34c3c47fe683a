//! Exact numbers: decimal literals rescaled to a column's scale.

use std::cmp::Ordering;

use super::ast::*;

// ---------------------------------------------------------------------------
// Exact numbers
// ---------------------------------------------------------------------------

/// An exact number `digits / 10^scale`, or beyond every i128 at any scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Exact {
    Val(i128, i32),
    PosInf,
    NegInf,
}

/// An exact number expressed at some scale as an integer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Scaled {
    /// Exactly this integer.
    Exact(i128),
    /// Strictly between this integer and the next one.
    Between(i128),
    /// Above every i128.
    Above,
    /// Below every i128.
    Below,
}

pub(super) fn rescale(e: Exact, to: i32) -> Scaled {
    let (d, from) = match e {
        Exact::PosInf => return Scaled::Above,
        Exact::NegInf => return Scaled::Below,
        Exact::Val(0, _) => return Scaled::Exact(0),
        Exact::Val(d, from) => (d, from),
    };
    let diff = i64::from(to) - i64::from(from);
    let pow = u32::try_from(diff.unsigned_abs())
        .ok()
        .and_then(|p| 10i128.checked_pow(p));
    if diff >= 0 {
        match pow.and_then(|p| d.checked_mul(p)) {
            Some(v) => Scaled::Exact(v),
            None if d > 0 => Scaled::Above,
            None => Scaled::Below,
        }
    } else {
        match pow {
            Some(p) if d.rem_euclid(p) == 0 => Scaled::Exact(d.div_euclid(p)),
            Some(p) => Scaled::Between(d.div_euclid(p)),
            // 10^|diff| exceeds every i128: the value is strictly inside (-1, 1).
            None if d > 0 => Scaled::Between(0),
            None => Scaled::Between(-1),
        }
    }
}

/// Orders the integer `u` at `scale` against the exact number `e`.
pub(super) fn cmp_exact(u: i128, e: Exact, scale: i32) -> Ordering {
    match rescale(e, scale) {
        Scaled::Exact(k) => u.cmp(&k),
        Scaled::Between(f) if u <= f => Ordering::Less,
        Scaled::Between(_) | Scaled::Below => Ordering::Greater,
        Scaled::Above => Ordering::Less,
    }
}

pub(super) fn float_to_exact(f: f64) -> Option<Exact> {
    if f.is_nan() {
        return None;
    }
    if f.is_infinite() {
        return Some(if f > 0.0 {
            Exact::PosInf
        } else {
            Exact::NegInf
        });
    }
    // `Display` of an f64 is its shortest round-trip decimal, never with an exponent.
    let text = format!("{f}");
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.as_str()),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let scale = i32::try_from(frac.len()).ok()?;
    match format!("{int}{frac}").parse::<i128>() {
        Ok(d) => Some(Exact::Val(if negative { -d } else { d }, scale)),
        Err(_) if negative => Some(Exact::NegInf),
        Err(_) => Some(Exact::PosInf),
    }
}

/// The literal as an exact number (integers, decimals and floats).
pub(super) fn exact_of(lit: &Literal) -> Option<Exact> {
    match lit {
        Literal::Int(v) => Some(Exact::Val(*v, 0)),
        Literal::Decimal { digits, scale } => Some(Exact::Val(*digits, i32::from(*scale))),
        Literal::Float(v) => float_to_exact(*v),
        _ => None,
    }
}

/// The literal rounded to f64.
pub(super) fn lit_f64(lit: &Literal) -> Option<f64> {
    match lit {
        Literal::Int(v) => v.to_string().parse().ok(),
        Literal::Decimal { digits, scale } => format!("{digits}e-{scale}").parse().ok(),
        Literal::Float(v) => Some(*v),
        _ => None,
    }
}

/// The literal rounded to f32 (from its exact value where it has one).
pub(super) fn lit_f32(lit: &Literal) -> Option<f32> {
    match lit {
        Literal::Int(v) => v.to_string().parse().ok(),
        Literal::Decimal { digits, scale } => format!("{digits}e-{scale}").parse().ok(),
        Literal::Float(v) => Some(*v as f32),
        _ => None,
    }
}

pub(super) fn describe(lit: &Literal) -> String {
    let what = match lit {
        Literal::Int(_) => "integer",
        Literal::Decimal { .. } => "decimal",
        Literal::Float(_) => "number",
        Literal::Str(_) => "string",
        Literal::Binary(_) => "binary",
        Literal::Date(_) => "date",
        Literal::Timestamp(_) => "timestamp",
        Literal::Bool(_) => "boolean",
    };
    format!("{what} literal {lit}")
}

pub(super) fn nan_literal(lit: &Literal) -> bool {
    matches!(lit, Literal::Float(v) if v.is_nan())
}
