//! Printing the filter language (the text parses back to the same tree).

use std::fmt;

use super::ast::*;
use super::like::escape_like;
use super::time::*;

pub(super) fn fmt_decimal(digits: i128, scale: u8) -> String {
    let abs = digits.unsigned_abs().to_string();
    let scale = usize::from(scale);
    let sign = if digits < 0 { "-" } else { "" };
    if abs.len() > scale {
        let (int, frac) = abs.split_at(abs.len() - scale);
        format!("{sign}{int}.{frac}")
    } else {
        format!("{sign}0.{}{abs}", "0".repeat(scale - abs.len()))
    }
}

/// Whether the column name prints without quotes (`NOT` would read as the
/// operator).
pub(super) fn is_bare_identifier(s: &str) -> bool {
    if s.eq_ignore_ascii_case("not") {
        return false;
    }
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && bytes.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
}

impl fmt::Display for Op {
    /// The operator as written in a filter (`=`, `!=`, ...).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Eq => "=",
            Op::NotEq => "!=",
            Op::Lt => "<",
            Op::LtEq => "<=",
            Op::Gt => ">",
            Op::GtEq => ">=",
        })
    }
}

impl fmt::Display for Literal {
    /// The literal as written in a filter; parsing it gives the same literal
    /// (except NaN, which has no text form).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Int(v) => write!(f, "{v}"),
            Literal::Decimal { digits, scale } => f.write_str(&fmt_decimal(*digits, *scale)),
            Literal::Float(v) if v.is_infinite() => {
                f.write_str(if *v > 0.0 { "1e999" } else { "-1e999" })
            }
            Literal::Float(v) => write!(f, "{v:e}"),
            Literal::Str(s) => f.write_str(&quote(s)),
            Literal::Binary(b) => {
                f.write_str("X'")?;
                b.iter().try_for_each(|c| write!(f, "{c:02X}"))?;
                f.write_str("'")
            }
            Literal::Date(d) => {
                let (y, m, d) = civil_from_days(i64::from(*d));
                write!(f, "DATE '{y:04}-{m:02}-{d:02}'")
            }
            Literal::Timestamp(n) => write!(f, "TIMESTAMP '{}'", fmt_timestamp(*n)),
            Literal::Bool(true) => f.write_str("TRUE"),
            Literal::Bool(false) => f.write_str("FALSE"),
        }
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A column name, double-quoted when it is not a bare identifier.
fn fmt_column(column: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if is_bare_identifier(column) {
        f.write_str(column)
    } else {
        write!(f, "\"{}\"", column.replace('"', "\"\""))
    }
}

/// The term's text, its test negated when `not`.
fn fmt_term(t: &Term, not: bool, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    fmt_column(&t.column, f)?;
    let neg = if not { "NOT " } else { "" };
    match &t.test {
        Test::Cmp(op, v) => write!(f, " {op} {v}"),
        Test::CmpColumn(op, other) => {
            write!(f, " {op} ")?;
            fmt_column(other, f)
        }
        Test::IsNull => write!(f, " IS {neg}NULL"),
        Test::Between(lo, hi) => write!(f, " {neg}BETWEEN {lo} AND {hi}"),
        Test::In(vs) => {
            write!(f, " {neg}IN (")?;
            for (i, v) in vs.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{v}")?;
            }
            f.write_str(")")
        }
        Test::StartsWith(p) => write!(f, " {neg}LIKE {}", quote(&format!("{}%", escape_like(p)))),
        Test::Like(p) => write!(f, " {neg}LIKE {}", quote(p)),
    }
}

impl fmt::Display for Term {
    /// `column test` (the column double-quoted when needed).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_term(self, false, f)
    }
}

/// A part of an AND or OR: compound parts in parentheses.
fn fmt_part(p: &Predicate, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match p {
        Predicate::And(_) | Predicate::Or(_) => write!(f, "({p})"),
        _ => write!(f, "{p}"),
    }
}

impl fmt::Display for Predicate {
    /// Re-parsable text, e.g.
    /// `l_shipdate >= DATE '1994-01-01' AND (a IN (1, 2) OR NOT b LIKE 'x%')`
    /// (an empty AND shows as an empty string and an empty OR as `()`,
    /// neither of which parses).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::Term(t) => fmt_term(t, false, f),
            Predicate::Not(inner) => match &**inner {
                Predicate::Term(t) if !matches!(t.test, Test::Cmp(..) | Test::CmpColumn(..)) => {
                    fmt_term(t, true, f)
                }
                Predicate::Term(_) | Predicate::Not(_) => write!(f, "NOT {inner}"),
                _ => write!(f, "NOT ({inner})"),
            },
            Predicate::And(ps) | Predicate::Or(ps) => {
                let sep = if matches!(self, Predicate::And(_)) {
                    " AND "
                } else {
                    " OR "
                };
                if ps.is_empty() && matches!(self, Predicate::Or(_)) {
                    return f.write_str("()");
                }
                for (i, p) in ps.iter().enumerate() {
                    if i > 0 {
                        f.write_str(sep)?;
                    }
                    fmt_part(p, f)?;
                }
                Ok(())
            }
        }
    }
}
