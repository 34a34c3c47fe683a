//! Scan filters: a small predicate language and its evaluation.
//!
//! A [`Predicate`] is a conjunction of `column op literal` terms, parsed from
//! text such as `l_shipdate >= DATE '1994-01-01' AND l_discount <= 0.07`.
//! It is evaluated at three levels:
//!
//! * [`Predicate::row_group_may_match`]: column-chunk statistics prove that a
//!   row group holds no matching row (row-group pruning);
//! * [`Predicate::pages_may_match`]: the column index proves that a page holds
//!   no matching row (page pruning);
//! * [`Predicate::evaluate`]: row-exact filtering of decoded Arrow batches.
//!
//! The two pruning levels are conservative: they only answer `false` when the
//! metadata proves that [`Predicate::evaluate`] would select no row.
//!
//! Semantics of comparisons (shared by all three levels):
//!
//! * NULL never satisfies a comparison (SQL semantics); `IS NULL` /
//!   `IS NOT NULL` test for NULL.
//! * Numbers compare exactly: decimal literals keep their digits and scale, so
//!   `price < 0.075` against a `DECIMAL(15,2)` column means `price <= 0.07`,
//!   and `x = 1.5` against an integer column matches nothing.
//! * Against floating-point columns a literal is rounded to the column type;
//!   comparisons follow IEEE 754 (`-0.0 = 0.0`) and a NaN value satisfies no
//!   comparison (it is treated like NULL, but `IS NULL` is false for it).
//!   Parquet statistics leave NaN out of min/max, which is what makes this
//!   the sound choice for pruning.
//! * Strings compare byte-wise (the Parquet order for UTF-8).
//! * Dates compare with `DATE 'YYYY-MM-DD'` literals or `'YYYY-MM-DD'` strings.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use ::arrow::array::{
    make_array, Array, ArrayRef, ArrowPrimitiveType, AsArray, BinaryArray, BinaryViewArray,
    BooleanArray, Date32Array, Date64Array, Decimal128Array, Decimal32Array, Decimal64Array,
    Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, LargeBinaryArray,
    LargeStringArray, PrimitiveArray, Scalar, StringArray, StringViewArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use ::arrow::buffer::{BooleanBuffer, NullBuffer, ScalarBuffer};
use ::arrow::compute::kernels::cmp;
use ::arrow::compute::{and, cast, is_not_null, is_null};
use ::arrow::datatypes::{DataType, Float32Type, Float64Type};
use ::arrow::error::ArrowError;
use ::arrow::record_batch::RecordBatch;
use ::parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use ::parquet::file::metadata::RowGroupMetaData;
use ::parquet::file::page_index::column_index::ColumnIndexMetaData;
use ::parquet::file::statistics::Statistics;
use ::parquet::schema::types::{ColumnDescriptor, SchemaDescriptor};

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Op {
    /// `=` (also written `==`).
    Eq,
    /// `!=` (also written `<>`).
    NotEq,
    /// `<`.
    Lt,
    /// `<=`.
    LtEq,
    /// `>`.
    Gt,
    /// `>=`.
    GtEq,
    /// `IS NULL` (takes no literal).
    IsNull,
    /// `IS NOT NULL` (takes no literal).
    IsNotNull,
}

/// A literal. Decimal literals keep their digits and scale exactly (e.g.
/// "0.07" => `Decimal { digits: 7, scale: 2 }`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Literal {
    /// An integer, e.g. `42` or `-7`.
    Int(i128),
    /// An exact decimal number `digits / 10^scale`, e.g. `0.07`.
    Decimal {
        /// The unscaled digits, with the sign.
        digits: i128,
        /// The number of digits after the decimal point.
        scale: u8,
    },
    /// A number written with an exponent, e.g. `1e3` or `2.5E-1`.
    Float(f64),
    /// A single-quoted string, e.g. `'BUILDING'`.
    Str(String),
    /// A date, `DATE 'YYYY-MM-DD'`, as days since 1970-01-01.
    Date(i32),
    /// `TRUE` or `FALSE`.
    Bool(bool),
}

/// One `column op literal` (literal None for IS NULL / IS NOT NULL).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Term {
    /// The column: a top-level column name or a dotted leaf path (`a.b.c`).
    pub column: String,
    /// The comparison.
    pub op: Op,
    /// The literal compared with; None for IS NULL / IS NOT NULL.
    pub value: Option<Literal>,
}

/// A conjunction of terms (AND only).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Predicate {
    /// The terms, all of which must hold.
    pub terms: Vec<Term>,
}

/// Errors from parsing or validating a [`Predicate`].
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PredicateError {
    /// The filter text is not valid; `position` is a byte offset into `input`.
    #[error("cannot parse filter {input:?} at {position}: {reason}")]
    Parse {
        /// The filter text.
        input: String,
        /// Byte offset of the problem.
        position: usize,
        /// What was wrong.
        reason: String,
    },
    /// A term names a column that the file does not have.
    #[error("filter column {0:?} is not in the file")]
    UnknownColumn(String),
    /// A term's literal cannot be compared with its column.
    #[error("filter on column {column:?}: {reason}")]
    Type {
        /// The column of the term.
        column: String,
        /// Why the term cannot be evaluated.
        reason: String,
    },
}

// ---------------------------------------------------------------------------
// Text form: parsing and display
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Quoted(String),
    Str(String),
    Int(i128),
    Dec(i128, u8),
    Float(f64),
    Cmp(Op),
}

fn parse_error(input: &str, position: usize, reason: impl Into<String>) -> PredicateError {
    PredicateError::Parse {
        input: input.to_string(),
        position,
        reason: reason.into(),
    }
}

/// Reads a quoted token starting at `start` (the opening quote `q`); a
/// doubled quote stands for one. Returns the content and the end offset.
fn lex_quoted(input: &str, start: usize, q: u8) -> Result<(String, usize), PredicateError> {
    let b = input.as_bytes();
    let mut out = String::new();
    let mut seg = start + 1;
    let mut i = start + 1;
    loop {
        match b[i..].iter().position(|&c| c == q) {
            None => {
                let what = if q == b'"' {
                    "unterminated quoted column name"
                } else {
                    "unterminated string"
                };
                return Err(parse_error(input, start, what));
            }
            Some(off) => {
                i += off;
                out.push_str(&input[seg..i]);
                if b.get(i + 1) == Some(&q) {
                    out.push(q as char);
                    i += 2;
                    seg = i;
                } else {
                    return Ok((out, i + 1));
                }
            }
        }
    }
}

/// Reads a number starting at `start` (a digit or a sign).
fn lex_number(input: &str, start: usize) -> Result<(Tok, usize), PredicateError> {
    let b = input.as_bytes();
    let digits_from = |mut j: usize| {
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let mut j = start;
    let negative = b[j] == b'-';
    if b[j] == b'-' || b[j] == b'+' {
        j += 1;
        if !b.get(j).is_some_and(u8::is_ascii_digit) {
            return Err(parse_error(input, start, "expected a digit after the sign"));
        }
    }
    let int_start = j;
    j = digits_from(j);
    let int_end = j;
    let mut frac = None;
    if b.get(j) == Some(&b'.') {
        let frac_start = j + 1;
        j = digits_from(frac_start);
        frac = Some((frac_start, j));
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(b.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        if b.get(k).is_some_and(u8::is_ascii_digit) {
            let end = digits_from(k);
            let text = &input[start..end];
            let v: f64 = text
                .parse()
                .map_err(|_| parse_error(input, start, format!("invalid number {text:?}")))?;
            return Ok((Tok::Float(v), end));
        }
    }
    let out_of_range = || parse_error(input, start, "number out of range");
    match frac {
        Some((fs, fe)) => {
            let scale = u8::try_from(fe - fs)
                .map_err(|_| parse_error(input, start, "too many decimals"))?;
            let mut text = String::with_capacity(fe - start);
            if negative {
                text.push('-');
            }
            text.push_str(&input[int_start..int_end]);
            text.push_str(&input[fs..fe]);
            let digits: i128 = text.parse().map_err(|_| out_of_range())?;
            Ok((Tok::Dec(digits, scale), j))
        }
        None => {
            let v: i128 = input[start..j].parse().map_err(|_| out_of_range())?;
            Ok((Tok::Int(v), j))
        }
    }
}

fn lex(input: &str) -> Result<Vec<(Tok, usize)>, PredicateError> {
    let b = input.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let tok = match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'A'..=b'Z' | b'a'..=b'z' | b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.')
                {
                    i += 1;
                }
                Tok::Ident(input[start..i].to_string())
            }
            q @ (b'"' | b'\'') => {
                let (text, end) = lex_quoted(input, start, q)?;
                i = end;
                if q == b'"' {
                    Tok::Quoted(text)
                } else {
                    Tok::Str(text)
                }
            }
            b'0'..=b'9' | b'+' | b'-' => {
                let (tok, end) = lex_number(input, start)?;
                i = end;
                tok
            }
            b'=' => {
                i += if b.get(i + 1) == Some(&b'=') { 2 } else { 1 };
                Tok::Cmp(Op::Eq)
            }
            b'!' => {
                if b.get(i + 1) != Some(&b'=') {
                    return Err(parse_error(input, start, "expected '=' after '!'"));
                }
                i += 2;
                Tok::Cmp(Op::NotEq)
            }
            b'<' => match b.get(i + 1) {
                Some(b'=') => {
                    i += 2;
                    Tok::Cmp(Op::LtEq)
                }
                Some(b'>') => {
                    i += 2;
                    Tok::Cmp(Op::NotEq)
                }
                _ => {
                    i += 1;
                    Tok::Cmp(Op::Lt)
                }
            },
            b'>' => {
                if b.get(i + 1) == Some(&b'=') {
                    i += 2;
                    Tok::Cmp(Op::GtEq)
                } else {
                    i += 1;
                    Tok::Cmp(Op::Gt)
                }
            }
            _ => {
                let c = input[start..].chars().next().unwrap_or('?');
                return Err(parse_error(
                    input,
                    start,
                    format!("unexpected character {c:?}"),
                ));
            }
        };
        out.push((tok, start));
    }
    Ok(out)
}

struct Parser<'a> {
    input: &'a str,
    toks: Vec<(Tok, usize)>,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    /// Byte offset of the next token (the input length at the end).
    fn at(&self) -> usize {
        self.toks.get(self.pos).map_or(self.input.len(), |t| t.1)
    }

    fn err(&self, reason: impl Into<String>) -> PredicateError {
        parse_error(self.input, self.at(), reason)
    }

    fn keyword(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(s)) if s.eq_ignore_ascii_case(kw))
    }

    fn predicate(&mut self) -> Result<Predicate, PredicateError> {
        let mut terms = Vec::new();
        loop {
            self.term(&mut terms)?;
            if self.peek().is_none() {
                return Ok(Predicate { terms });
            }
            if !self.keyword("AND") {
                return Err(self.err("expected AND or the end of the filter"));
            }
            self.pos += 1;
        }
    }

    fn term(&mut self, terms: &mut Vec<Term>) -> Result<(), PredicateError> {
        let column = match self.peek() {
            Some(Tok::Ident(s) | Tok::Quoted(s)) => s.clone(),
            _ => return Err(self.err("expected a column name")),
        };
        self.pos += 1;
        let term = |op, value| Term {
            column: column.clone(),
            op,
            value,
        };
        match self.peek() {
            Some(Tok::Cmp(op)) => {
                let op = *op;
                self.pos += 1;
                let v = self.literal()?;
                terms.push(term(op, Some(v)));
            }
            Some(Tok::Ident(k)) if k.eq_ignore_ascii_case("IS") => {
                self.pos += 1;
                let not = self.keyword("NOT");
                if not {
                    self.pos += 1;
                }
                if !self.keyword("NULL") {
                    return Err(self.err(if not {
                        "expected NULL"
                    } else {
                        "expected NULL or NOT NULL"
                    }));
                }
                self.pos += 1;
                terms.push(term(if not { Op::IsNotNull } else { Op::IsNull }, None));
            }
            Some(Tok::Ident(k)) if k.eq_ignore_ascii_case("BETWEEN") => {
                self.pos += 1;
                let lo = self.literal()?;
                if !self.keyword("AND") {
                    return Err(self.err("expected AND in BETWEEN"));
                }
                self.pos += 1;
                let hi = self.literal()?;
                terms.push(term(Op::GtEq, Some(lo)));
                terms.push(term(Op::LtEq, Some(hi)));
            }
            _ => {
                return Err(self.err(
                    "expected a comparison operator (=, !=, <>, <, <=, >, >=), IS or BETWEEN",
                ))
            }
        }
        Ok(())
    }

    fn literal(&mut self) -> Result<Literal, PredicateError> {
        let at = self.at();
        let tok = self.peek().cloned();
        self.pos += 1;
        Ok(match tok {
            Some(Tok::Int(v)) => Literal::Int(v),
            Some(Tok::Dec(digits, scale)) => Literal::Decimal { digits, scale },
            Some(Tok::Float(v)) => Literal::Float(v),
            Some(Tok::Str(s)) => Literal::Str(s),
            Some(Tok::Ident(k)) if k.eq_ignore_ascii_case("TRUE") => Literal::Bool(true),
            Some(Tok::Ident(k)) if k.eq_ignore_ascii_case("FALSE") => Literal::Bool(false),
            Some(Tok::Ident(k)) if k.eq_ignore_ascii_case("DATE") => {
                let at = self.at();
                let tok = self.peek().cloned();
                self.pos += 1;
                match tok {
                    Some(Tok::Str(s)) => match parse_date(&s) {
                        Some(d) => Literal::Date(d),
                        None => {
                            return Err(parse_error(
                                self.input,
                                at,
                                format!("invalid date {s:?}, expected 'YYYY-MM-DD'"),
                            ))
                        }
                    },
                    _ => {
                        return Err(parse_error(
                            self.input,
                            at,
                            "expected a quoted date after DATE",
                        ))
                    }
                }
            }
            Some(Tok::Ident(k)) if k.eq_ignore_ascii_case("NULL") => {
                return Err(parse_error(
                    self.input,
                    at,
                    "NULL cannot be compared; use IS NULL or IS NOT NULL",
                ))
            }
            _ => {
                return Err(parse_error(
                    self.input,
                    at,
                    "expected a literal (number, 'string', DATE 'YYYY-MM-DD', TRUE or FALSE)",
                ))
            }
        })
    }
}

impl FromStr for Predicate {
    type Err = PredicateError;

    /// Parses `term (AND term)*`; see the module documentation.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let toks = lex(s)?;
        Parser {
            input: s,
            toks,
            pos: 0,
        }
        .predicate()
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian (year, month, day) of days since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Parses `YYYY-MM-DD` into days since 1970-01-01.
fn parse_date(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = &s[r];
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if d < 1 || d > month_days {
        return None;
    }
    i32::try_from(days_from_civil(y, m, d)).ok()
}

fn fmt_decimal(digits: i128, scale: u8) -> String {
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

fn is_bare_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && bytes.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
}

impl fmt::Display for Op {
    /// The operator as written in a filter (`=`, `!=`, ..., `IS NULL`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Eq => "=",
            Op::NotEq => "!=",
            Op::Lt => "<",
            Op::LtEq => "<=",
            Op::Gt => ">",
            Op::GtEq => ">=",
            Op::IsNull => "IS NULL",
            Op::IsNotNull => "IS NOT NULL",
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
            Literal::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Literal::Date(d) => {
                let (y, m, d) = civil_from_days(i64::from(*d));
                write!(f, "DATE '{y:04}-{m:02}-{d:02}'")
            }
            Literal::Bool(true) => f.write_str("TRUE"),
            Literal::Bool(false) => f.write_str("FALSE"),
        }
    }
}

impl fmt::Display for Term {
    /// `column op literal` (the column double-quoted when needed).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if is_bare_identifier(&self.column) {
            f.write_str(&self.column)?;
        } else {
            write!(f, "\"{}\"", self.column.replace('"', "\"\""))?;
        }
        match (&self.op, &self.value) {
            (Op::IsNull | Op::IsNotNull, _) => write!(f, " {}", self.op),
            (op, Some(v)) => write!(f, " {op} {v}"),
            (op, None) => write!(f, " {op} NULL"),
        }
    }
}

impl fmt::Display for Predicate {
    /// Re-parsable text, e.g.
    /// `l_shipdate >= DATE '1994-01-01' AND l_discount <= 0.07`
    /// (`BETWEEN` shows as its two terms; a predicate without terms shows as
    /// an empty string, which does not parse).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(" AND ")?;
            }
            write!(f, "{t}")?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Exact numbers
// ---------------------------------------------------------------------------

/// An exact number `digits / 10^scale`, or beyond every i128 at any scale.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Exact {
    Val(i128, i32),
    PosInf,
    NegInf,
}

/// An exact number expressed at some scale as an integer.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scaled {
    /// Exactly this integer.
    Exact(i128),
    /// Strictly between this integer and the next one.
    Between(i128),
    /// Above every i128.
    Above,
    /// Below every i128.
    Below,
}

fn rescale(e: Exact, to: i32) -> Scaled {
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
fn cmp_exact(u: i128, e: Exact, scale: i32) -> Ordering {
    match rescale(e, scale) {
        Scaled::Exact(k) => u.cmp(&k),
        Scaled::Between(f) if u <= f => Ordering::Less,
        Scaled::Between(_) | Scaled::Below => Ordering::Greater,
        Scaled::Above => Ordering::Less,
    }
}

fn float_to_exact(f: f64) -> Option<Exact> {
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
fn exact_of(lit: &Literal) -> Option<Exact> {
    match lit {
        Literal::Int(v) => Some(Exact::Val(*v, 0)),
        Literal::Decimal { digits, scale } => Some(Exact::Val(*digits, i32::from(*scale))),
        Literal::Float(v) => float_to_exact(*v),
        _ => None,
    }
}

/// The literal rounded to f64.
fn lit_f64(lit: &Literal) -> Option<f64> {
    match lit {
        Literal::Int(v) => v.to_string().parse().ok(),
        Literal::Decimal { digits, scale } => format!("{digits}e-{scale}").parse().ok(),
        Literal::Float(v) => Some(*v),
        _ => None,
    }
}

/// The literal rounded to f32 (from its exact value where it has one).
fn lit_f32(lit: &Literal) -> Option<f32> {
    match lit {
        Literal::Int(v) => v.to_string().parse().ok(),
        Literal::Decimal { digits, scale } => format!("{digits}e-{scale}").parse().ok(),
        Literal::Float(v) => Some(*v as f32),
        _ => None,
    }
}

fn describe(lit: &Literal) -> String {
    let what = match lit {
        Literal::Int(_) => "integer",
        Literal::Decimal { .. } => "decimal",
        Literal::Float(_) => "number",
        Literal::Str(_) => "string",
        Literal::Date(_) => "date",
        Literal::Bool(_) => "boolean",
    };
    format!("{what} literal {lit}")
}

fn nan_literal(lit: &Literal) -> bool {
    matches!(lit, Literal::Float(v) if v.is_nan())
}

// ---------------------------------------------------------------------------
// Parquet columns: resolution, kinds, literal keys
// ---------------------------------------------------------------------------

/// How values of a Parquet leaf column compare.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Bool,
    /// INT32/INT64 holding `stored / 10^scale` (plain integers have scale 0).
    Int {
        scale: i32,
        unsigned: bool,
    },
    /// INT32 days since the epoch.
    Date,
    F32,
    F64,
    /// Strings or plain binary, compared byte-wise.
    Bytes,
    /// Big-endian two's complement decimals in (FIXED_LEN_)BYTE_ARRAY.
    DecBytes {
        scale: i32,
        fixed_len: Option<usize>,
    },
    /// Not comparable with literals.
    Other(&'static str),
}

impl Kind {
    fn scale(self) -> i32 {
        match self {
            Kind::Int { scale, .. } | Kind::DecBytes { scale, .. } => scale,
            _ => 0,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Bool => "a BOOLEAN",
            Kind::Int { scale: 0, .. } => "an integer",
            Kind::Int { .. } | Kind::DecBytes { .. } => "a DECIMAL",
            Kind::Date => "a DATE",
            Kind::F32 | Kind::F64 => "a floating-point",
            Kind::Bytes => "a string",
            Kind::Other(what) => what,
        }
    }
}

fn leaf_kind(cd: &ColumnDescriptor) -> Kind {
    let logical = cd.logical_type_ref();
    let converted = cd.converted_type();
    let decimal_scale = match logical {
        Some(LogicalType::Decimal(d)) => Some((d.scale, d.precision)),
        None if converted == ConvertedType::DECIMAL => Some((cd.type_scale(), cd.type_precision())),
        _ => None,
    };
    match cd.physical_type() {
        PhysicalType::BOOLEAN => Kind::Bool,
        PhysicalType::INT32 | PhysicalType::INT64 => {
            if let Some((scale, _)) = decimal_scale {
                return Kind::Int {
                    scale,
                    unsigned: false,
                };
            }
            match (logical, converted) {
                (Some(LogicalType::Integer(t)), _) => Kind::Int {
                    scale: 0,
                    unsigned: !t.is_signed,
                },
                (Some(LogicalType::Date), _) => Kind::Date,
                (Some(_), _) => Kind::Other("time or timestamp"),
                (
                    None,
                    ConvertedType::NONE
                    | ConvertedType::INT_8
                    | ConvertedType::INT_16
                    | ConvertedType::INT_32
                    | ConvertedType::INT_64,
                ) => Kind::Int {
                    scale: 0,
                    unsigned: false,
                },
                (
                    None,
                    ConvertedType::UINT_8
                    | ConvertedType::UINT_16
                    | ConvertedType::UINT_32
                    | ConvertedType::UINT_64,
                ) => Kind::Int {
                    scale: 0,
                    unsigned: true,
                },
                (None, ConvertedType::DATE) => Kind::Date,
                (None, _) => Kind::Other("time or timestamp"),
            }
        }
        PhysicalType::INT96 => Kind::Other("INT96"),
        PhysicalType::FLOAT => Kind::F32,
        PhysicalType::DOUBLE => Kind::F64,
        PhysicalType::BYTE_ARRAY | PhysicalType::FIXED_LEN_BYTE_ARRAY => {
            let fixed = cd.physical_type() == PhysicalType::FIXED_LEN_BYTE_ARRAY;
            if let Some((scale, precision)) = decimal_scale {
                if precision > 38 {
                    return Kind::Other("DECIMAL with precision above 38");
                }
                return Kind::DecBytes {
                    scale,
                    fixed_len: if fixed {
                        usize::try_from(cd.type_length()).ok()
                    } else {
                        None
                    },
                };
            }
            if fixed {
                return Kind::Other("FIXED_LEN_BYTE_ARRAY");
            }
            match (logical, converted) {
                (Some(LogicalType::String | LogicalType::Enum | LogicalType::Json), _) => {
                    Kind::Bytes
                }
                (Some(_), _) => Kind::Other("annotated binary"),
                (
                    None,
                    ConvertedType::NONE
                    | ConvertedType::UTF8
                    | ConvertedType::ENUM
                    | ConvertedType::JSON,
                ) => Kind::Bytes,
                (None, _) => Kind::Other("annotated binary"),
            }
        }
    }
}

/// Where a term's column lives in a Parquet schema.
struct Resolved {
    /// The leaf column, or None for a top-level group (struct, list, map).
    leaf: Option<usize>,
    /// Whether the name is a top-level field name.
    top_level: bool,
}

fn resolve(schema: &SchemaDescriptor, name: &str) -> Option<Resolved> {
    let root = schema.root_schema();
    if let Some(field) = root.get_fields().iter().find(|f| f.name() == name) {
        let leaf = if field.is_primitive() {
            schema
                .columns()
                .iter()
                .position(|c| c.path().parts().len() == 1 && c.path().parts()[0] == name)
        } else {
            None
        };
        return Some(Resolved {
            leaf,
            top_level: true,
        });
    }
    schema
        .columns()
        .iter()
        .position(|c| c.path().parts().len() > 1 && c.path().string() == name)
        .map(|i| Resolved {
            leaf: Some(i),
            top_level: false,
        })
}

/// A literal converted into the comparison domain of a column kind.
#[derive(Debug, Clone, PartialEq)]
enum Key {
    Exact(Exact),
    Flt(f64),
    Bytes(Vec<u8>),
    Bool(bool),
}

fn key_for(kind: Kind, lit: &Literal) -> Result<Key, String> {
    if nan_literal(lit) {
        return Err("NaN literals are not supported".to_string());
    }
    let mismatch = || {
        format!(
            "cannot compare {} column with {}",
            kind.name(),
            describe(lit)
        )
    };
    match kind {
        Kind::Other(what) => Err(format!("comparisons are not supported on {what} columns")),
        Kind::Bool => match lit {
            Literal::Bool(b) => Ok(Key::Bool(*b)),
            _ => Err(mismatch()),
        },
        Kind::Int { .. } | Kind::DecBytes { .. } => {
            exact_of(lit).map(Key::Exact).ok_or_else(mismatch)
        }
        Kind::Date => date_of(lit)
            .map(|d| Key::Exact(Exact::Val(i128::from(d), 0)))
            .map_err(|e| e.unwrap_or_else(mismatch)),
        Kind::F32 => lit_f32(lit)
            .map(|v| Key::Flt(f64::from(v)))
            .ok_or_else(mismatch),
        Kind::F64 => lit_f64(lit).map(Key::Flt).ok_or_else(mismatch),
        Kind::Bytes => match lit {
            Literal::Str(s) => Ok(Key::Bytes(s.as_bytes().to_vec())),
            _ => Err(mismatch()),
        },
    }
}

/// Days of a date literal or `'YYYY-MM-DD'` string; Err(Some) for a string
/// that is not a date, Err(None) for other literals.
fn date_of(lit: &Literal) -> Result<i32, Option<String>> {
    match lit {
        Literal::Date(d) => Ok(*d),
        Literal::Str(s) => parse_date(s)
            .ok_or_else(|| Some(format!("{s:?} is not a date (expected 'YYYY-MM-DD')"))),
        _ => Err(None),
    }
}

fn check_term(schema: &SchemaDescriptor, term: &Term) -> Result<(), PredicateError> {
    let resolved = resolve(schema, &term.column)
        .ok_or_else(|| PredicateError::UnknownColumn(term.column.clone()))?;
    let type_err = |reason: String| PredicateError::Type {
        column: term.column.clone(),
        reason,
    };
    let null_test = matches!(term.op, Op::IsNull | Op::IsNotNull);
    let Some(leaf) = resolved.leaf else {
        return if null_test {
            Ok(())
        } else {
            Err(type_err(
                "nested columns only support IS NULL and IS NOT NULL".to_string(),
            ))
        };
    };
    let cd = schema.column(leaf);
    if cd.max_rep_level() > 0 {
        return if null_test && resolved.top_level {
            Ok(())
        } else {
            Err(type_err(
                "repeated columns only support IS NULL and IS NOT NULL on the top-level field"
                    .to_string(),
            ))
        };
    }
    if null_test {
        return Ok(());
    }
    let lit = term
        .value
        .as_ref()
        .ok_or_else(|| type_err(format!("operator {} needs a literal", term.op)))?;
    key_for(leaf_kind(&cd), lit).map(|_| ()).map_err(type_err)
}

// ---------------------------------------------------------------------------
// Pruning with statistics and the column index
// ---------------------------------------------------------------------------

/// A min or max from statistics, in the domain of its column kind.
#[derive(Debug, Clone, Copy)]
enum Val<'a> {
    Num(i128),
    Flt(f64),
    Bytes(&'a [u8]),
    Bool(bool),
}

/// Orders a statistics value against a key; None when they cannot be
/// ordered (NaN, mismatched kinds).
fn cmp_val(v: Val<'_>, key: &Key, scale: i32) -> Option<Ordering> {
    match (v, key) {
        (Val::Num(u), Key::Exact(e)) => Some(cmp_exact(u, *e, scale)),
        (Val::Flt(x), Key::Flt(k)) => x.partial_cmp(k),
        (Val::Bytes(b), Key::Bytes(k)) => Some(b.cmp(k.as_slice())),
        (Val::Bool(b), Key::Bool(k)) => Some(b.cmp(k)),
        _ => None,
    }
}

/// Decodes a big-endian two's complement integer of 1..=16 bytes.
fn be_i128(b: &[u8]) -> Option<i128> {
    if b.is_empty() || b.len() > 16 {
        return None;
    }
    let fill = if b[0] & 0x80 != 0 { 0xFF } else { 0 };
    let mut buf = [fill; 16];
    buf[16 - b.len()..].copy_from_slice(b);
    Some(i128::from_be_bytes(buf))
}

fn int_val(v: i64, unsigned: bool, bits32: bool) -> i128 {
    match (unsigned, bits32) {
        (false, _) => i128::from(v),
        (true, true) => i128::from(v as i32 as u32),
        (true, false) => i128::from(v as u64),
    }
}

/// Min and max of a column chunk as bounds for `kind`; None where unknown or
/// unusable.
fn stats_bounds(kind: Kind, stats: &Statistics) -> (Option<Val<'_>>, Option<Val<'_>>) {
    // Deprecated min/max fields were written with signed comparisons: only
    // trust them for signed orders.
    let deprecated = stats.is_min_max_deprecated();
    match (kind, stats) {
        (Kind::Bool, Statistics::Boolean(s)) => (
            s.min_opt().map(|v| Val::Bool(*v)),
            s.max_opt().map(|v| Val::Bool(*v)),
        ),
        (Kind::Int { unsigned, .. }, Statistics::Int32(s)) if !(unsigned && deprecated) => (
            s.min_opt()
                .map(|v| Val::Num(int_val(i64::from(*v), unsigned, true))),
            s.max_opt()
                .map(|v| Val::Num(int_val(i64::from(*v), unsigned, true))),
        ),
        (Kind::Int { unsigned, .. }, Statistics::Int64(s)) if !(unsigned && deprecated) => (
            s.min_opt().map(|v| Val::Num(int_val(*v, unsigned, false))),
            s.max_opt().map(|v| Val::Num(int_val(*v, unsigned, false))),
        ),
        (Kind::Date, Statistics::Int32(s)) => (
            s.min_opt().map(|v| Val::Num(i128::from(*v))),
            s.max_opt().map(|v| Val::Num(i128::from(*v))),
        ),
        (Kind::F32, Statistics::Float(s)) => (
            s.min_opt().map(|v| Val::Flt(f64::from(*v))),
            s.max_opt().map(|v| Val::Flt(f64::from(*v))),
        ),
        (Kind::F64, Statistics::Double(s)) => (
            s.min_opt().map(|v| Val::Flt(*v)),
            s.max_opt().map(|v| Val::Flt(*v)),
        ),
        // Truncated (inexact) byte-array bounds are still valid bounds.
        (Kind::Bytes, Statistics::ByteArray(_)) if !deprecated => (
            stats.min_bytes_opt().map(Val::Bytes),
            stats.max_bytes_opt().map(Val::Bytes),
        ),
        (
            Kind::DecBytes { fixed_len, .. },
            Statistics::ByteArray(_) | Statistics::FixedLenByteArray(_),
        ) if !deprecated => {
            // A truncated decimal is no bound at all: only use exact values
            // (full-width values of a fixed-length column cannot be truncated).
            let usable = |b: &[u8], exact: bool| exact || fixed_len == Some(b.len());
            (
                stats
                    .min_bytes_opt()
                    .filter(|b| usable(b, stats.min_is_exact()))
                    .and_then(be_i128)
                    .map(Val::Num),
                stats
                    .max_bytes_opt()
                    .filter(|b| usable(b, stats.max_is_exact()))
                    .and_then(be_i128)
                    .map(Val::Num),
            )
        }
        _ => (None, None),
    }
}

/// Min and max of page `p` from a column index, as bounds for `kind`.
fn page_bounds(
    kind: Kind,
    index: &ColumnIndexMetaData,
    p: usize,
) -> (Option<Val<'_>>, Option<Val<'_>>) {
    match (kind, index) {
        (Kind::Bool, ColumnIndexMetaData::BOOLEAN(ix)) => (
            ix.min_value(p).map(|v| Val::Bool(*v)),
            ix.max_value(p).map(|v| Val::Bool(*v)),
        ),
        (Kind::Int { unsigned, .. }, ColumnIndexMetaData::INT32(ix)) => (
            ix.min_value(p)
                .map(|v| Val::Num(int_val(i64::from(*v), unsigned, true))),
            ix.max_value(p)
                .map(|v| Val::Num(int_val(i64::from(*v), unsigned, true))),
        ),
        (Kind::Int { unsigned, .. }, ColumnIndexMetaData::INT64(ix)) => (
            ix.min_value(p)
                .map(|v| Val::Num(int_val(*v, unsigned, false))),
            ix.max_value(p)
                .map(|v| Val::Num(int_val(*v, unsigned, false))),
        ),
        (Kind::Date, ColumnIndexMetaData::INT32(ix)) => (
            ix.min_value(p).map(|v| Val::Num(i128::from(*v))),
            ix.max_value(p).map(|v| Val::Num(i128::from(*v))),
        ),
        (Kind::F32, ColumnIndexMetaData::FLOAT(ix)) => (
            ix.min_value(p).map(|v| Val::Flt(f64::from(*v))),
            ix.max_value(p).map(|v| Val::Flt(f64::from(*v))),
        ),
        (Kind::F64, ColumnIndexMetaData::DOUBLE(ix)) => (
            ix.min_value(p).map(|v| Val::Flt(*v)),
            ix.max_value(p).map(|v| Val::Flt(*v)),
        ),
        (Kind::Bytes, ColumnIndexMetaData::BYTE_ARRAY(ix)) => (
            ix.min_value(p).map(Val::Bytes),
            ix.max_value(p).map(Val::Bytes),
        ),
        // The column index does not say whether a value was truncated; a
        // full-width fixed-length value cannot have been.
        (
            Kind::DecBytes {
                fixed_len: Some(n), ..
            },
            ColumnIndexMetaData::FIXED_LEN_BYTE_ARRAY(ix),
        ) => {
            let decode =
                |b: Option<&[u8]>| b.filter(|b| b.len() == n).and_then(be_i128).map(Val::Num);
            (decode(ix.min_value(p)), decode(ix.max_value(p)))
        }
        _ => (None, None),
    }
}

/// What metadata says about the values of one column in a row group or page.
struct Bounds<'a> {
    min: Option<Val<'a>>,
    max: Option<Val<'a>>,
    /// Number of NULLs, if known.
    nulls: Option<u64>,
    /// Whether every value is known to be NULL.
    all_null: bool,
}

/// False only when `bounds` prove that no value satisfies `op key`.
fn term_may_match(op: Op, key: Option<&Key>, kind: Kind, b: &Bounds<'_>) -> bool {
    match op {
        Op::IsNull => return b.nulls != Some(0),
        Op::IsNotNull => return !b.all_null,
        _ => {}
    }
    let Some(key) = key else {
        return true;
    };
    if b.all_null {
        return false;
    }
    let scale = kind.scale();
    if op == Op::Eq {
        if let Key::Exact(e) = key {
            // e.g. `x = 1.5` on an integer column: no value can be equal.
            if !matches!(rescale(*e, scale), Scaled::Exact(_)) {
                return false;
            }
        }
    }
    let lo = b.min.and_then(|v| cmp_val(v, key, scale));
    let hi = b.max.and_then(|v| cmp_val(v, key, scale));
    use Ordering::{Equal, Greater, Less};
    let pruned = match op {
        Op::Eq => lo == Some(Greater) || hi == Some(Less),
        Op::NotEq => lo == Some(Equal) && hi == Some(Equal),
        Op::Lt => matches!(lo, Some(Greater | Equal)),
        Op::LtEq => lo == Some(Greater),
        Op::Gt => matches!(hi, Some(Less | Equal)),
        Op::GtEq => hi == Some(Less),
        Op::IsNull | Op::IsNotNull => false,
    };
    !pruned
}

/// The kind of a leaf column usable for pruning: None for nested or
/// repeated leaves (conservative).
fn prunable_kind(cd: &ColumnDescriptor) -> Option<Kind> {
    (cd.max_rep_level() == 0 && cd.path().parts().len() == 1).then(|| leaf_kind(cd))
}

fn term_key(term: &Term, kind: Kind) -> Option<Key> {
    term.value.as_ref().and_then(|v| key_for(kind, v).ok())
}

impl Predicate {
    /// The distinct columns of the terms, in order of appearance.
    pub fn columns(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for t in &self.terms {
            if !out.contains(&t.column.as_str()) {
                out.push(&t.column);
            }
        }
        out
    }

    /// Checks every column exists (as a top-level column name or a dotted
    /// leaf path like "a.b.c") and that each literal can be compared with the
    /// column's type; returns PredicateError otherwise.
    ///
    /// Nested (group) and repeated columns only support `IS [NOT] NULL`, on
    /// their top-level name; comparisons need a primitive, non-repeated leaf
    /// (top-level or inside structs) of a supported type: boolean, integer,
    /// decimal, date, float, string or binary.
    pub fn validate(&self, schema: &SchemaDescriptor) -> Result<(), PredicateError> {
        self.terms.iter().try_for_each(|t| check_term(schema, t))
    }

    /// false only when the row group's column-chunk statistics prove that no
    /// row satisfies all terms; true when unsure (no statistics, unsupported
    /// type, ...).
    ///
    /// Only top-level, non-repeated columns are used; terms on nested
    /// columns, invalid terms and unknown columns count as "may match".
    pub fn row_group_may_match(&self, rg: &RowGroupMetaData) -> bool {
        if rg.num_rows() == 0 {
            return false;
        }
        let schema = rg.schema_descr();
        for term in &self.terms {
            let Some(leaf) = resolve(schema, &term.column).and_then(|r| r.leaf) else {
                continue;
            };
            let chunk = rg.column(leaf);
            let Some(kind) = prunable_kind(chunk.column_descr()) else {
                continue;
            };
            let Some(stats) = chunk.statistics() else {
                continue;
            };
            let nulls = stats.null_count_opt();
            let (min, max) = stats_bounds(kind, stats);
            let bounds = Bounds {
                min,
                max,
                nulls,
                all_null: nulls.is_some_and(|n| i64::try_from(n).ok() == Some(rg.num_rows())),
            };
            if !term_may_match(term.op, term_key(term, kind).as_ref(), kind, &bounds) {
                return false;
            }
        }
        true
    }

    /// For the leaf column `leaf` (index into the schema's leaves) and its
    /// column index in one row group: for each page, whether that page may
    /// contain rows satisfying all terms on that column (terms on other
    /// columns are ignored here). None when the index is
    /// ColumnIndexMetaData::NONE or no term concerns this column.
    ///
    /// A page of NULLs only matches `IS NULL`. For nested or repeated leaves
    /// every page may match.
    pub fn pages_may_match(
        &self,
        rg: &RowGroupMetaData,
        leaf: usize,
        index: &ColumnIndexMetaData,
    ) -> Option<Vec<bool>> {
        if matches!(index, ColumnIndexMetaData::NONE) || leaf >= rg.num_columns() {
            return None;
        }
        let schema = rg.schema_descr();
        let terms: Vec<&Term> = self
            .terms
            .iter()
            .filter(|t| resolve(schema, &t.column).and_then(|r| r.leaf) == Some(leaf))
            .collect();
        if terms.is_empty() {
            return None;
        }
        let pages = usize::try_from(index.num_pages()).ok()?;
        let Some(kind) = prunable_kind(rg.column(leaf).column_descr()) else {
            return Some(vec![true; pages]);
        };
        let keys: Vec<(Op, Option<Key>)> =
            terms.iter().map(|t| (t.op, term_key(t, kind))).collect();
        let out = (0..pages)
            .map(|p| {
                let (min, max) = page_bounds(kind, index, p);
                let bounds = Bounds {
                    min,
                    max,
                    nulls: index.null_count(p).and_then(|n| u64::try_from(n).ok()),
                    all_null: index.is_null_page(p),
                };
                keys.iter()
                    .all(|(op, key)| term_may_match(*op, key.as_ref(), kind, &bounds))
            })
            .collect();
        Some(out)
    }

    /// Row-exact evaluation on a decoded batch containing (at least) the
    /// predicate's columns (top-level fields by name, or dotted paths into
    /// struct fields); NULL comparisons are false (SQL semantics), so the
    /// result has no NULLs.
    ///
    /// Literals are cast to the column's Arrow type: integers (all widths),
    /// Decimal32/64/128 (exact rescaling: `x < 0.075` on scale 2 is
    /// `x <= 0.07`), Float32/64 (NaN matches no comparison, `-0.0 = 0.0`),
    /// Date32/Date64 (DATE literals or 'YYYY-MM-DD' strings),
    /// Utf8/LargeUtf8/Utf8View and Binary/LargeBinary/BinaryView (string
    /// literals), Boolean, and dictionaries of those. An empty predicate
    /// selects every row.
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<BooleanArray, ArrowError> {
        let mut acc: Option<BooleanArray> = None;
        for term in &self.terms {
            let col = batch_column(batch, &term.column)?;
            let mask = eval_term(term, &col)?;
            acc = Some(match acc {
                None => mask,
                Some(prev) => and(&prev, &mask)?,
            });
        }
        Ok(
            acc.unwrap_or_else(|| {
                BooleanArray::new(BooleanBuffer::new_set(batch.num_rows()), None)
            }),
        )
    }
}

// ---------------------------------------------------------------------------
// Row-exact evaluation
// ---------------------------------------------------------------------------

/// Finds a column by top-level name, or by a dotted path through structs
/// (the leaf then carries its ancestors' NULLs).
fn batch_column(batch: &RecordBatch, name: &str) -> Result<ArrayRef, ArrowError> {
    if let Some(c) = batch.column_by_name(name) {
        return Ok(c.clone());
    }
    let missing =
        || ArrowError::InvalidArgumentError(format!("filter column {name:?} is not in the batch"));
    let mut parts = name.split('.');
    let first = parts.next().ok_or_else(missing)?;
    let mut cur = batch.column_by_name(first).ok_or_else(missing)?.clone();
    let mut ancestors: Option<NullBuffer> = None;
    let mut descended = false;
    for part in parts {
        let s = cur.as_struct_opt().ok_or_else(missing)?;
        let child = s.column_by_name(part).ok_or_else(missing)?.clone();
        ancestors = NullBuffer::union(ancestors.as_ref(), s.nulls());
        cur = child;
        descended = true;
    }
    if !descended {
        return Err(missing());
    }
    match ancestors {
        Some(anc) if anc.null_count() > 0 => {
            let nulls = NullBuffer::union(Some(&anc), cur.nulls());
            let data = cur.to_data().into_builder().nulls(nulls).build()?;
            Ok(make_array(data))
        }
        _ => Ok(cur),
    }
}

/// Comparison values of a float array: NaN becomes NULL and -0.0 becomes 0.0.
fn normalize_floats<T: ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    is_nan: impl Fn(T::Native) -> bool,
    unzero: impl Fn(T::Native) -> T::Native,
) -> PrimitiveArray<T> {
    let values: ScalarBuffer<T::Native> = a.values().iter().map(|v| unzero(*v)).collect();
    let not_nan = BooleanBuffer::collect_bool(a.len(), |i| !is_nan(a.values()[i]));
    let nulls = NullBuffer::union(a.nulls(), Some(&NullBuffer::new(not_nan)));
    PrimitiveArray::new(values, nulls)
}

fn comparable(col: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let col = match col.data_type() {
        DataType::Dictionary(_, v) if matches!(**v, DataType::Float32 | DataType::Float64) => {
            cast(col, v)?
        }
        _ => col.clone(),
    };
    Ok(match col.data_type() {
        DataType::Float32 => Arc::new(normalize_floats(
            col.as_primitive::<Float32Type>(),
            f32::is_nan,
            |v| v + 0.0,
        )),
        DataType::Float64 => Arc::new(normalize_floats(
            col.as_primitive::<Float64Type>(),
            f64::is_nan,
            |v| v + 0.0,
        )),
        _ => col,
    })
}

/// How a term is computed on an Arrow column.
enum Plan {
    Cmp(Op, Scalar<ArrayRef>),
    /// True for every non-NULL value.
    AllNonNull,
    /// False for every row.
    Nothing,
}

/// An exact-number term against integers `lo..=hi` at `scale`.
enum Norm {
    Cmp(Op, i128),
    All,
    Nothing,
}

fn normalize_exact(op: Op, e: Exact, scale: i32, lo: i128, hi: i128) -> Norm {
    enum Pos {
        In(i128),
        High,
        Low,
    }
    let (op, scaled) = match rescale(e, scale) {
        Scaled::Between(f) => match op {
            Op::Eq => return Norm::Nothing,
            Op::NotEq => return Norm::All,
            Op::Lt | Op::LtEq => (Op::LtEq, Scaled::Exact(f)),
            _ => (Op::Gt, Scaled::Exact(f)),
        },
        s => (op, s),
    };
    let pos = match scaled {
        Scaled::Exact(k) if k > hi => Pos::High,
        Scaled::Exact(k) if k < lo => Pos::Low,
        Scaled::Exact(k) => Pos::In(k),
        Scaled::Above => Pos::High,
        Scaled::Below | Scaled::Between(_) => Pos::Low,
    };
    match (pos, op) {
        (Pos::In(k), op) => Norm::Cmp(op, k),
        (Pos::High, Op::NotEq | Op::Lt | Op::LtEq) | (Pos::Low, Op::NotEq | Op::Gt | Op::GtEq) => {
            Norm::All
        }
        _ => Norm::Nothing,
    }
}

type MakeScalar<'a> = &'a dyn Fn(i128) -> Result<ArrayRef, ArrowError>;

fn plan_for(dt: &DataType, op: Op, lit: &Literal) -> Result<Plan, String> {
    if nan_literal(lit) {
        return Err("NaN literals are not supported".to_string());
    }
    let mismatch = || format!("cannot compare {dt} values with {}", describe(lit));
    let exact = || exact_of(lit).ok_or_else(mismatch);
    let int = |e: Exact, lo: i128, hi: i128, scale: i32, mk: MakeScalar<'_>| {
        Ok(match normalize_exact(op, e, scale, lo, hi) {
            Norm::Cmp(op, k) => Plan::Cmp(op, Scalar::new(mk(k).map_err(|e| e.to_string())?)),
            Norm::All => Plan::AllNonNull,
            Norm::Nothing => Plan::Nothing,
        })
    };
    let date = || {
        date_of(lit)
            .map(i128::from)
            .map_err(|e| e.unwrap_or_else(mismatch))
    };
    let one = |a: ArrayRef| Ok(Plan::Cmp(op, Scalar::new(a)));
    macro_rules! ints {
        ($arr:ty, $native:ty) => {
            int(
                exact()?,
                i128::from(<$native>::MIN),
                i128::from(<$native>::MAX),
                0,
                &|k| Ok(Arc::new(<$arr>::from(vec![k as $native])) as ArrayRef),
            )
        };
    }
    macro_rules! decimals {
        ($arr:ty, $native:ty, $p:expr, $s:expr) => {{
            let (p, s) = (*$p, *$s);
            int(
                exact()?,
                i128::from(<$native>::MIN),
                i128::from(<$native>::MAX),
                i32::from(s),
                &|k| {
                    Ok(
                        Arc::new(<$arr>::from(vec![k as $native]).with_precision_and_scale(p, s)?)
                            as ArrayRef,
                    )
                },
            )
        }};
    }
    match dt {
        DataType::Dictionary(_, v) => plan_for(v, op, lit),
        DataType::Int8 => ints!(Int8Array, i8),
        DataType::Int16 => ints!(Int16Array, i16),
        DataType::Int32 => ints!(Int32Array, i32),
        DataType::Int64 => ints!(Int64Array, i64),
        DataType::UInt8 => ints!(UInt8Array, u8),
        DataType::UInt16 => ints!(UInt16Array, u16),
        DataType::UInt32 => ints!(UInt32Array, u32),
        DataType::UInt64 => ints!(UInt64Array, u64),
        DataType::Decimal32(p, s) => decimals!(Decimal32Array, i32, p, s),
        DataType::Decimal64(p, s) => decimals!(Decimal64Array, i64, p, s),
        DataType::Decimal128(p, s) => decimals!(Decimal128Array, i128, p, s),
        DataType::Date32 => int(
            Exact::Val(date()?, 0),
            i128::from(i32::MIN),
            i128::from(i32::MAX),
            0,
            &|k| Ok(Arc::new(Date32Array::from(vec![k as i32])) as ArrayRef),
        ),
        DataType::Date64 => int(
            Exact::Val(date()? * 86_400_000, 0),
            i128::from(i64::MIN),
            i128::from(i64::MAX),
            0,
            &|k| Ok(Arc::new(Date64Array::from(vec![k as i64])) as ArrayRef),
        ),
        DataType::Float32 => {
            let v = lit_f32(lit).ok_or_else(mismatch)?;
            one(Arc::new(Float32Array::from(vec![v + 0.0])))
        }
        DataType::Float64 => {
            let v = lit_f64(lit).ok_or_else(mismatch)?;
            one(Arc::new(Float64Array::from(vec![v + 0.0])))
        }
        DataType::Boolean => match lit {
            Literal::Bool(b) => one(Arc::new(BooleanArray::from(vec![*b]))),
            _ => Err(mismatch()),
        },
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView => {
            let Literal::Str(s) = lit else {
                return Err(mismatch());
            };
            let s = s.as_str();
            one(match dt {
                DataType::Utf8 => Arc::new(StringArray::from(vec![s])),
                DataType::LargeUtf8 => Arc::new(LargeStringArray::from(vec![s])),
                DataType::Utf8View => Arc::new(StringViewArray::from(vec![s])),
                DataType::Binary => Arc::new(BinaryArray::from(vec![s.as_bytes()])),
                DataType::LargeBinary => Arc::new(LargeBinaryArray::from(vec![s.as_bytes()])),
                _ => Arc::new(BinaryViewArray::from(vec![s.as_bytes()])),
            })
        }
        _ => Err(format!("comparisons are not supported on {dt} columns")),
    }
}

/// A boolean array with NULLs turned into false.
fn null_to_false(b: BooleanArray) -> BooleanArray {
    match b.nulls() {
        Some(n) => {
            let values = b.values() & n.inner();
            BooleanArray::new(values, None)
        }
        None => b,
    }
}

fn eval_term(term: &Term, col: &ArrayRef) -> Result<BooleanArray, ArrowError> {
    match term.op {
        Op::IsNull => return is_null(col.as_ref()),
        Op::IsNotNull => return is_not_null(col.as_ref()),
        _ => {}
    }
    let type_err = |reason: String| {
        ArrowError::InvalidArgumentError(format!("filter on column {:?}: {reason}", term.column))
    };
    let lit = term
        .value
        .as_ref()
        .ok_or_else(|| type_err(format!("operator {} needs a literal", term.op)))?;
    let col = comparable(col)?;
    let plan = plan_for(col.data_type(), term.op, lit).map_err(type_err)?;
    let out = match plan {
        Plan::Nothing => BooleanArray::new(BooleanBuffer::new_unset(col.len()), None),
        Plan::AllNonNull => is_not_null(col.as_ref())?,
        Plan::Cmp(op, scalar) => {
            let r = match op {
                Op::Eq => cmp::eq(&col, &scalar)?,
                Op::NotEq => cmp::neq(&col, &scalar)?,
                Op::Lt => cmp::lt(&col, &scalar)?,
                Op::LtEq => cmp::lt_eq(&col, &scalar)?,
                Op::Gt => cmp::gt(&col, &scalar)?,
                Op::GtEq => cmp::gt_eq(&col, &scalar)?,
                Op::IsNull | Op::IsNotNull => unreachable!("handled above"),
            };
            null_to_false(r)
        }
    };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::arrow::array::{DictionaryArray, StructArray};
    use ::arrow::datatypes::{Field, Fields, Int32Type, Schema};
    use ::parquet::arrow::ArrowWriter;
    use ::parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
    use ::parquet::file::properties::{EnabledStatistics, WriterProperties};

    fn p(s: &str) -> Predicate {
        s.parse()
            .unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
    }

    fn term(column: &str, op: Op, value: Option<Literal>) -> Term {
        Term {
            column: column.to_string(),
            op,
            value,
        }
    }

    fn parse_err(s: &str) -> (usize, String) {
        match s.parse::<Predicate>() {
            Err(PredicateError::Parse {
                input,
                position,
                reason,
            }) => {
                assert_eq!(input, s);
                (position, reason)
            }
            other => panic!("{s:?}: expected a parse error, got {other:?}"),
        }
    }

    // ----- parsing -----------------------------------------------------------

    #[test]
    fn parses_every_operator() {
        let cases = [
            ("a = 1", Op::Eq),
            ("a == 1", Op::Eq),
            ("a != 1", Op::NotEq),
            ("a <> 1", Op::NotEq),
            ("a < 1", Op::Lt),
            ("a <= 1", Op::LtEq),
            ("a > 1", Op::Gt),
            ("a >= 1", Op::GtEq),
        ];
        for (text, op) in cases {
            assert_eq!(
                p(text).terms,
                vec![term("a", op, Some(Literal::Int(1)))],
                "{text}"
            );
        }
    }

    #[test]
    fn parses_literals() {
        let lit = |s: &str| p(&format!("x = {s}")).terms[0].value.clone().unwrap();
        assert_eq!(lit("42"), Literal::Int(42));
        assert_eq!(lit("-7"), Literal::Int(-7));
        assert_eq!(lit("+7"), Literal::Int(7));
        assert_eq!(
            lit("0.07"),
            Literal::Decimal {
                digits: 7,
                scale: 2
            }
        );
        assert_eq!(
            lit("-1.50"),
            Literal::Decimal {
                digits: -150,
                scale: 2
            }
        );
        assert_eq!(
            lit("+3.0"),
            Literal::Decimal {
                digits: 30,
                scale: 1
            }
        );
        assert_eq!(
            lit("5."),
            Literal::Decimal {
                digits: 5,
                scale: 0
            }
        );
        assert_eq!(lit("1e3"), Literal::Float(1000.0));
        assert_eq!(lit("-2.5E-1"), Literal::Float(-0.25));
        assert_eq!(lit("1.5e+2"), Literal::Float(150.0));
        assert_eq!(lit("1e999"), Literal::Float(f64::INFINITY));
        assert_eq!(lit("'abc'"), Literal::Str("abc".into()));
        assert_eq!(lit("'it''s'"), Literal::Str("it's".into()));
        assert_eq!(lit("''"), Literal::Str(String::new()));
        assert_eq!(lit("'héllo wörld'"), Literal::Str("héllo wörld".into()));
        assert_eq!(lit("DATE '1970-01-01'"), Literal::Date(0));
        assert_eq!(lit("DATE '1994-01-01'"), Literal::Date(8766));
        assert_eq!(lit("date '1969-12-31'"), Literal::Date(-1));
        assert_eq!(lit("DATE '2000-02-29'"), Literal::Date(11016));
        assert_eq!(lit("DATE '2000-03-01'"), Literal::Date(11017));
        assert_eq!(lit("TRUE"), Literal::Bool(true));
        assert_eq!(lit("false"), Literal::Bool(false));
        assert_eq!(
            lit("170141183460469231731687303715884105727"),
            Literal::Int(i128::MAX)
        );
    }

    #[test]
    fn parses_null_tests_between_and_conjunctions() {
        assert_eq!(p("a IS NULL").terms, vec![term("a", Op::IsNull, None)]);
        assert_eq!(
            p("a is not null").terms,
            vec![term("a", Op::IsNotNull, None)]
        );
        assert_eq!(
            p("a BETWEEN 1 AND 2.5").terms,
            vec![
                term("a", Op::GtEq, Some(Literal::Int(1))),
                term(
                    "a",
                    Op::LtEq,
                    Some(Literal::Decimal {
                        digits: 25,
                        scale: 1
                    })
                ),
            ]
        );
        let q = p(
            "l_shipdate >= DATE '1994-01-01' and l_shipdate < date '1995-01-01' \
                   AND l_discount between 0.05 and 0.07 AnD l_quantity < 24",
        );
        assert_eq!(
            q.terms,
            vec![
                term("l_shipdate", Op::GtEq, Some(Literal::Date(8766))),
                term("l_shipdate", Op::Lt, Some(Literal::Date(9131))),
                term(
                    "l_discount",
                    Op::GtEq,
                    Some(Literal::Decimal {
                        digits: 5,
                        scale: 2
                    })
                ),
                term(
                    "l_discount",
                    Op::LtEq,
                    Some(Literal::Decimal {
                        digits: 7,
                        scale: 2
                    })
                ),
                term("l_quantity", Op::Lt, Some(Literal::Int(24))),
            ]
        );
        assert_eq!(q.columns(), vec!["l_shipdate", "l_discount", "l_quantity"]);
        // Whitespace does not matter.
        assert_eq!(p("a>=1AND b<'x'"), p("  a >=  1\n\tAND\r\nb < 'x'  "));
        assert_eq!(
            p("a>=1AND b<'x'").terms,
            vec![
                term("a", Op::GtEq, Some(Literal::Int(1))),
                term("b", Op::Lt, Some(Literal::Str("x".into()))),
            ]
        );
    }

    #[test]
    fn parses_column_names() {
        assert_eq!(p("a.b.c = 1").terms[0].column, "a.b.c");
        assert_eq!(p("_x9 = 1").terms[0].column, "_x9");
        assert_eq!(p("\"my col\" = 1").terms[0].column, "my col");
        assert_eq!(p("\"say \"\"hi\"\"\" = 1").terms[0].column, "say \"hi\"");
        // Keywords are fine as column names.
        assert_eq!(
            p("date >= DATE '1994-01-01'").terms,
            vec![term("date", Op::GtEq, Some(Literal::Date(8766)))]
        );
    }

    #[test]
    fn parse_errors_report_byte_positions() {
        let cases: [(&str, usize, &str); 21] = [
            ("", 0, "expected a column name"),
            ("   ", 3, "expected a column name"),
            ("a >", 3, "expected a literal"),
            ("a = 'abc", 4, "unterminated string"),
            ("\"abc = 1", 0, "unterminated quoted column name"),
            ("a ! 1", 2, "expected '='"),
            ("a = 1 OR b = 2", 6, "expected AND"),
            ("a = 1 AND", 9, "expected a column name"),
            ("a = DATE '1994-13-01'", 9, "invalid date"),
            ("a = DATE '1995-02-29'", 9, "invalid date"),
            ("a = DATE 5", 9, "expected a quoted date"),
            ("a = NULL", 4, "IS NULL"),
            (
                "a = 170141183460469231731687303715884105728",
                4,
                "out of range",
            ),
            ("a BETWEEN 1 2", 12, "expected AND in BETWEEN"),
            ("1a = 3", 0, "expected a column name"),
            ("a IS 5", 5, "expected NULL or NOT NULL"),
            ("a IS NOT 5", 9, "expected NULL"),
            ("a 5", 2, "expected a comparison operator"),
            ("a = - 5", 4, "expected a digit after the sign"),
            ("a = 1 AND b ~ 2", 12, "unexpected character '~'"),
            ("é = 1", 0, "unexpected character 'é'"),
        ];
        for (text, pos, reason) in cases {
            let (at, why) = parse_err(text);
            assert_eq!(at, pos, "{text:?}: {why}");
            assert!(why.contains(reason), "{text:?}: {why:?} lacks {reason:?}");
        }
        let err = "a = ".parse::<Predicate>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot parse filter \"a = \" at 4: expected a literal (number, 'string', \
             DATE 'YYYY-MM-DD', TRUE or FALSE)"
        );
    }

    #[test]
    fn display_round_trips() {
        let q = p("l_shipdate >= DATE '1994-01-01' AND l_discount <= 0.07");
        assert_eq!(
            q.to_string(),
            "l_shipdate >= DATE '1994-01-01' AND l_discount <= 0.07"
        );
        let cases = [
            ("a == 1 AND b <> -2", "a = 1 AND b != -2"),
            ("x BETWEEN 0.05 AND 0.07", "x >= 0.05 AND x <= 0.07"),
            ("x < -0.5", "x < -0.5"),
            ("x < -12.345", "x < -12.345"),
            ("x < 0.000", "x < 0.000"),
            ("x < 5.", "x < 5."),
            ("f > 1e3 AND g < -2.5E-1", "f > 1e3 AND g < -2.5e-1"),
            ("f > 1e999 AND g > -1e999", "f > 1e999 AND g > -1e999"),
            ("s = 'it''s'", "s = 'it''s'"),
            ("\"my col\" IS NULL", "\"my col\" IS NULL"),
            ("\"a\"\"b\" is not null", "\"a\"\"b\" IS NOT NULL"),
            ("b = true AND c != FALSE", "b = TRUE AND c != FALSE"),
            ("d < DATE '0001-01-01'", "d < DATE '0001-01-01'"),
            ("d > '1994-01-01'", "d > '1994-01-01'"),
            ("s.t.u >= 3", "s.t.u >= 3"),
        ];
        for (text, shown) in cases {
            let q = p(text);
            assert_eq!(q.to_string(), shown, "{text}");
            assert_eq!(p(&q.to_string()), q, "{text}");
        }
        // Values that do not come from parsing also round-trip.
        let q = Predicate {
            terms: vec![
                term(
                    "x",
                    Op::Lt,
                    Some(Literal::Decimal {
                        digits: i128::MIN,
                        scale: 38,
                    }),
                ),
                term("y", Op::Gt, Some(Literal::Float(0.1))),
                term("z", Op::Eq, Some(Literal::Date(2_932_896))),
                term("", Op::IsNull, None),
            ],
        };
        assert_eq!(
            q.to_string(),
            "x < -1.70141183460469231731687303715884105728 AND y > 1e-1 \
             AND z = DATE '9999-12-31' AND \"\" IS NULL"
        );
        assert_eq!(p(&q.to_string()), q);
    }

    #[test]
    fn columns_are_distinct_in_order() {
        let q = p("b = 1 AND a = 2 AND b < 3 AND c IS NULL AND a > 0");
        assert_eq!(q.columns(), vec!["b", "a", "c"]);
        assert!(Predicate { terms: vec![] }.columns().is_empty());
    }

    #[test]
    fn serializes() {
        fn assert_serialize<T: serde::Serialize>(_: &T) {}
        assert_serialize(&p("a = 1"));
    }

    // ----- exact numbers -----------------------------------------------------

    #[test]
    fn rescaling_is_exact() {
        assert_eq!(rescale(Exact::Val(7, 2), 2), Scaled::Exact(7));
        assert_eq!(rescale(Exact::Val(7, 2), 4), Scaled::Exact(700));
        assert_eq!(rescale(Exact::Val(75, 3), 2), Scaled::Between(7));
        assert_eq!(rescale(Exact::Val(-75, 3), 2), Scaled::Between(-8));
        assert_eq!(rescale(Exact::Val(-70, 3), 2), Scaled::Exact(-7));
        assert_eq!(rescale(Exact::Val(1, 0), 40), Scaled::Above);
        assert_eq!(rescale(Exact::Val(-1, 0), 40), Scaled::Below);
        assert_eq!(rescale(Exact::Val(1, 60), 0), Scaled::Between(0));
        assert_eq!(rescale(Exact::Val(-1, 60), 0), Scaled::Between(-1));
        assert_eq!(rescale(Exact::Val(5, 0), -1), Scaled::Between(0));
        assert_eq!(rescale(Exact::Val(0, 200), 3), Scaled::Exact(0));
        assert_eq!(float_to_exact(1000.0), Some(Exact::Val(1000, 0)));
        assert_eq!(float_to_exact(-0.25), Some(Exact::Val(-25, 2)));
        assert_eq!(float_to_exact(1e300), Some(Exact::PosInf));
        assert_eq!(float_to_exact(f64::NEG_INFINITY), Some(Exact::NegInf));
        assert_eq!(float_to_exact(f64::NAN), None);
        assert_eq!(cmp_exact(7, Exact::Val(75, 3), 2), Ordering::Less);
        assert_eq!(cmp_exact(8, Exact::Val(75, 3), 2), Ordering::Greater);
        assert_eq!(cmp_exact(i128::MAX, Exact::PosInf, 0), Ordering::Less);
        assert_eq!(be_i128(&[0xFF, 0x85]), Some(-123));
        assert_eq!(be_i128(&[0x00, 0x85]), Some(133));
        assert_eq!(be_i128(&[]), None);
        for days in [-800_000i64, -1, 0, 59, 8766, 11016, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    // ----- evaluate ----------------------------------------------------------

    fn batch_of(name: &str, array: ArrayRef) -> RecordBatch {
        let schema = Schema::new(vec![Field::new(name, array.data_type().clone(), true)]);
        RecordBatch::try_new(Arc::new(schema), vec![array]).unwrap()
    }

    fn mask(q: &str, batch: &RecordBatch) -> Vec<bool> {
        let m = p(q).evaluate(batch).unwrap_or_else(|e| panic!("{q}: {e}"));
        assert_eq!(m.null_count(), 0, "{q}");
        assert_eq!(m.len(), batch.num_rows(), "{q}");
        m.iter().map(|v| v.unwrap()).collect()
    }

    const T: bool = true;
    const F: bool = false;

    #[test]
    fn evaluates_integers() {
        let b = batch_of(
            "x",
            Arc::new(Int32Array::from(vec![
                Some(1),
                None,
                Some(3),
                Some(-2),
                Some(5),
            ])),
        );
        assert_eq!(mask("x > 1", &b), [F, F, T, F, T]);
        assert_eq!(mask("x >= 3", &b), [F, F, T, F, T]);
        assert_eq!(mask("x = 3", &b), [F, F, T, F, F]);
        assert_eq!(mask("x != 3", &b), [T, F, F, T, T]);
        assert_eq!(mask("x < 1", &b), [F, F, F, T, F]);
        assert_eq!(mask("x <= 1", &b), [T, F, F, T, F]);
        assert_eq!(mask("x IS NULL", &b), [F, T, F, F, F]);
        assert_eq!(mask("x IS NOT NULL", &b), [T, F, T, T, T]);
        // Exact comparisons with non-integral literals.
        assert_eq!(mask("x < 1.5", &b), [T, F, F, T, F]);
        assert_eq!(mask("x <= 1.5", &b), [T, F, F, T, F]);
        assert_eq!(mask("x > -1.5", &b), [T, F, T, F, T]);
        assert_eq!(mask("x >= 2.5", &b), [F, F, T, F, T]);
        assert_eq!(mask("x = 1.5", &b), [F, F, F, F, F]);
        assert_eq!(mask("x != 1.5", &b), [T, F, T, T, T]);
        assert_eq!(mask("x = 3.000", &b), [F, F, T, F, F]);
        assert_eq!(mask("x = 3e0", &b), [F, F, T, F, F]);
        assert_eq!(mask("x BETWEEN 0 AND 4", &b), [T, F, T, F, F]);

        // Literals outside the column type's range.
        let b = batch_of(
            "x",
            Arc::new(Int8Array::from(vec![Some(-128), Some(127), None])),
        );
        assert_eq!(mask("x < 1000", &b), [T, T, F]);
        assert_eq!(mask("x <= 1e30", &b), [T, T, F]);
        assert_eq!(mask("x > 1000", &b), [F, F, F]);
        assert_eq!(mask("x = 300", &b), [F, F, F]);
        assert_eq!(mask("x != -1000", &b), [T, T, F]);
        assert_eq!(mask("x >= -1000", &b), [T, T, F]);
        assert_eq!(mask("x < -128", &b), [F, F, F]);
        assert_eq!(mask("x <= -128", &b), [T, F, F]);
        let b = batch_of("x", Arc::new(UInt64Array::from(vec![0, u64::MAX])));
        assert_eq!(mask("x > -1", &b), [T, T]);
        assert_eq!(mask("x = 18446744073709551615", &b), [F, T]);
        assert_eq!(mask("x < 0.5", &b), [T, F]);
    }

    #[test]
    fn evaluates_decimals_exactly() {
        let a = Decimal128Array::from(vec![Some(7), Some(8), Some(-7), None, Some(750)])
            .with_precision_and_scale(15, 2)
            .unwrap();
        let b = batch_of("x", Arc::new(a));
        assert_eq!(mask("x <= 0.07", &b), [T, F, T, F, F]);
        assert_eq!(mask("x = 0.070", &b), [T, F, F, F, F]);
        assert_eq!(mask("x = 0.07", &b), [T, F, F, F, F]);
        assert_eq!(mask("x < 0.075", &b), [T, F, T, F, F]);
        assert_eq!(mask("x <= 0.075", &b), [T, F, T, F, F]);
        assert_eq!(mask("x > 0.075", &b), [F, T, F, F, T]);
        assert_eq!(mask("x >= 0.075", &b), [F, T, F, F, T]);
        assert_eq!(mask("x = 0.075", &b), [F, F, F, F, F]);
        assert_eq!(mask("x != 0.075", &b), [T, T, T, F, T]);
        assert_eq!(mask("x >= -0.07", &b), [T, T, T, F, T]);
        assert_eq!(mask("x > -0.075", &b), [T, T, T, F, T]);
        assert_eq!(mask("x = 7.5", &b), [F, F, F, F, T]);
        assert_eq!(mask("x = 7", &b), [F, F, F, F, F]);
        assert_eq!(mask("x > 1e0", &b), [F, F, F, F, T]);
        assert_eq!(mask("x < 1e40", &b), [T, T, T, F, T]);
        let small = Decimal32Array::from(vec![Some(12), Some(-5)])
            .with_precision_and_scale(5, 1)
            .unwrap();
        assert_eq!(mask("x > 1.15", &batch_of("x", Arc::new(small))), [T, F]);
    }

    #[test]
    fn evaluates_floats_with_nan_and_signed_zero() {
        let a = Float64Array::from(vec![
            Some(-0.0),
            Some(0.0),
            Some(f64::NAN),
            None,
            Some(2.5),
            Some(f64::INFINITY),
        ]);
        let b = batch_of("x", Arc::new(a));
        assert_eq!(mask("x = 0", &b), [T, T, F, F, F, F]);
        assert_eq!(mask("x = -0.0", &b), [T, T, F, F, F, F]);
        assert_eq!(mask("x < 0", &b), [F, F, F, F, F, F]);
        assert_eq!(mask("x <= 0", &b), [T, T, F, F, F, F]);
        assert_eq!(mask("x > 0", &b), [F, F, F, F, T, T]);
        assert_eq!(mask("x != 0", &b), [F, F, F, F, T, T]);
        assert_eq!(mask("x >= 2.5", &b), [F, F, F, F, T, T]);
        assert_eq!(mask("x < 1e999", &b), [T, T, F, F, T, F]);
        assert_eq!(mask("x = 1e999", &b), [F, F, F, F, F, T]);
        assert_eq!(mask("x IS NULL", &b), [F, F, F, T, F, F]);
        assert_eq!(mask("x IS NOT NULL", &b), [T, T, T, F, T, T]);
        // Float32: the literal is rounded to f32.
        let b = batch_of(
            "x",
            Arc::new(Float32Array::from(vec![1.1f32, 0.1, f32::NAN])),
        );
        assert_eq!(mask("x = 1.1", &b), [T, F, F]);
        assert_eq!(mask("x > 0.1", &b), [T, F, F]);
        assert_eq!(mask("x >= 0.1", &b), [T, T, F]);
        // Dictionary-encoded floats get the same treatment.
        let dict = DictionaryArray::<Int32Type>::new(
            Int32Array::from(vec![0, 1, 0]),
            Arc::new(Float64Array::from(vec![f64::NAN, -0.0])),
        );
        let b = batch_of("x", Arc::new(dict));
        assert_eq!(mask("x = 0", &b), [F, T, F]);
        assert_eq!(mask("x > 0", &b), [F, F, F]);
    }

    #[test]
    fn evaluates_strings_dates_and_booleans() {
        let strings = vec![Some("apple"), None, Some("banana"), Some("it's"), Some("é")];
        for array in [
            Arc::new(StringArray::from(strings.clone())) as ArrayRef,
            Arc::new(LargeStringArray::from(strings.clone())) as ArrayRef,
            Arc::new(StringViewArray::from(strings.clone())) as ArrayRef,
            Arc::new(
                strings
                    .iter()
                    .copied()
                    .collect::<DictionaryArray<Int32Type>>(),
            ) as ArrayRef,
        ] {
            let b = batch_of("s", array);
            assert_eq!(mask("s = 'it''s'", &b), [F, F, F, T, F]);
            assert_eq!(mask("s > 'b'", &b), [F, F, T, T, T]);
            assert_eq!(mask("s < 'b'", &b), [T, F, F, F, F]);
            assert_eq!(mask("s >= 'banana'", &b), [F, F, T, T, T]);
            assert_eq!(mask("s != 'apple'", &b), [F, F, T, T, T]);
            assert_eq!(mask("s > 'z'", &b), [F, F, F, F, T]);
        }
        let bin = BinaryArray::from(vec![Some(&b"ab"[..]), None, Some(&[0xFF][..])]);
        let b = batch_of("s", Arc::new(bin));
        assert_eq!(mask("s >= 'ab'", &b), [T, F, T]);

        let b = batch_of(
            "d",
            Arc::new(Date32Array::from(vec![
                Some(8766),
                Some(8767),
                None,
                Some(9000),
            ])),
        );
        assert_eq!(mask("d >= DATE '1994-01-02'", &b), [F, T, F, T]);
        assert_eq!(mask("d = '1994-01-01'", &b), [T, F, F, F]);
        assert_eq!(
            mask("d BETWEEN '1994-01-01' AND DATE '1994-01-02'", &b),
            [T, T, F, F]
        );
        let b = batch_of("d", Arc::new(Date64Array::from(vec![8766 * 86_400_000, 0])));
        assert_eq!(mask("d = DATE '1994-01-01'", &b), [T, F]);
        assert_eq!(mask("d < '1994-01-01'", &b), [F, T]);

        let b = batch_of(
            "b",
            Arc::new(BooleanArray::from(vec![Some(true), Some(false), None])),
        );
        assert_eq!(mask("b = TRUE", &b), [T, F, F]);
        assert_eq!(mask("b != TRUE", &b), [F, T, F]);
        assert_eq!(mask("b > FALSE", &b), [T, F, F]);
    }

    #[test]
    fn evaluates_conjunctions_and_reports_errors() {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
        ]);
        let b = RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int64Array::from(vec![Some(1), Some(2), None, Some(4)])),
                Arc::new(StringArray::from(vec![
                    Some("x"),
                    None,
                    Some("x"),
                    Some("y"),
                ])),
            ],
        )
        .unwrap();
        assert_eq!(mask("a >= 1 AND s = 'x'", &b), [T, F, F, F]);
        assert_eq!(mask("a > 1 AND s IS NULL", &b), [F, T, F, F]);
        assert_eq!(mask("a IS NULL AND s = 'x'", &b), [F, F, T, F]);
        assert_eq!(mask("a BETWEEN 2 AND 4 AND s != 'x'", &b), [F, F, F, T]);
        assert_eq!(
            Predicate { terms: vec![] }
                .evaluate(&b)
                .unwrap()
                .iter()
                .collect::<Vec<_>>(),
            vec![Some(true); 4]
        );
        let err = |q: &str| p(q).evaluate(&b).unwrap_err().to_string();
        assert!(
            err("zz = 1").contains("\"zz\" is not in the batch"),
            "{}",
            err("zz = 1")
        );
        assert!(err("a = 'x'").contains("cannot compare Int64 values with string literal 'x'"));
        assert!(err("s = 1").contains("cannot compare Utf8 values with integer literal 1"));
        assert!(err("a = DATE '1994-01-01'").contains("filter on column \"a\""));
    }

    #[test]
    fn evaluates_struct_fields_with_parent_nulls() {
        let x = Arc::new(Int32Array::from(vec![Some(1), Some(5), None, Some(7)])) as ArrayRef;
        let fields = Fields::from(vec![Field::new("x", DataType::Int32, true)]);
        let st = StructArray::new(
            fields,
            vec![x],
            Some(NullBuffer::from(vec![true, true, true, false])),
        );
        let b = batch_of("st", Arc::new(st));
        assert_eq!(mask("st.x > 2", &b), [F, T, F, F]);
        assert_eq!(mask("st.x IS NULL", &b), [F, F, T, T]);
        assert_eq!(mask("st IS NULL", &b), [F, F, F, T]);
        assert!(p("st.y = 1").evaluate(&b).is_err());
        assert!(p("st = 1").evaluate(&b).is_err());
    }

    // ----- Parquet files -----------------------------------------------------

    const ROWS: usize = 1000;
    const RG_ROWS: usize = 250;
    const PAGE_ROWS: usize = 25;

    fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *state >> 33
    }

    /// 1000 rows in 4 row groups of 250 rows, each of 10 pages of 25 rows.
    fn test_batch() -> RecordBatch {
        let mut seed = 42u64;
        let mut r = || lcg(&mut seed);
        let (mut id, mut i32s, mut f64s, mut strs, mut dates) =
            (vec![], vec![], vec![], vec![], vec![]);
        let (mut decs, mut bigs, mut bools, mut nn) = (vec![], vec![], vec![], vec![]);
        for row in 0..ROWS {
            let g = (row / RG_ROWS) as i64;
            let j = row % RG_ROWS;
            id.push(row as i64);
            let v = (r() % 201) as i32 - 100 + (g as i32) * 300;
            let i32_null = g == 1 || row % 7 == 3 || (g == 2 && (25..50).contains(&j));
            i32s.push((!i32_null).then_some(v));
            let f = g as f64 * 100.0 + (r() % 10_000) as f64 / 100.0;
            f64s.push(match row {
                3 => Some(-0.0),
                4 => Some(0.0),
                _ if row % 11 == 5 => None,
                _ if row % 50 == 7 => Some(f64::NAN),
                _ => Some(f),
            });
            let n = r() % 1000;
            let s = match g {
                0 => format!("a{n:03}"),
                1 => format!("b{n:03}"),
                2 => format!("c{n:03}"),
                _ if n % 2 == 0 => format!("zz{n:03}"),
                _ => format!("é{n:03}"),
            };
            strs.push((row % 13 != 0).then_some(s));
            let d = 8766 + (row / 2) as i32 + (r() % 5) as i32;
            dates.push((row % 17 != 1).then_some(d));
            let cents = g as i128 * 100_000 - 50_000 + (r() % 100_000) as i128;
            decs.push((row % 19 != 2).then_some(cents));
            bigs.push((row % 23 != 4).then_some(cents * 10_000_000_000));
            bools.push(match g {
                0 => Some(true),
                1 => Some(false),
                2 => Some(row % 2 == 0),
                _ => (row % 3 != 0).then_some(true),
            });
            nn.push((row % 100) as i32);
        }
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("i32", DataType::Int32, true),
            Field::new("f64", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Date32, true),
            Field::new("dec", DataType::Decimal128(15, 2), true),
            Field::new("big", DataType::Decimal128(25, 2), true),
            Field::new("b", DataType::Boolean, true),
            Field::new("nn", DataType::Int32, false),
        ]);
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(id)),
            Arc::new(Int32Array::from(i32s)),
            Arc::new(Float64Array::from(f64s)),
            Arc::new(StringArray::from(strs)),
            Arc::new(Date32Array::from(dates)),
            Arc::new(
                Decimal128Array::from(decs)
                    .with_precision_and_scale(15, 2)
                    .unwrap(),
            ),
            Arc::new(
                Decimal128Array::from(bigs)
                    .with_precision_and_scale(25, 2)
                    .unwrap(),
            ),
            Arc::new(BooleanArray::from(bools)),
            Arc::new(Int32Array::from(nn)),
        ];
        RecordBatch::try_new(Arc::new(schema), columns).unwrap()
    }

    fn write_parquet(batch: &RecordBatch) -> ParquetMetaData {
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(RG_ROWS))
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_data_page_row_count_limit(PAGE_ROWS)
            .set_write_batch_size(PAGE_ROWS)
            .build();
        let mut buf = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
        writer.write(batch).unwrap();
        writer.close().unwrap();
        ParquetMetaDataReader::new()
            .with_page_index_policy(PageIndexPolicy::Required)
            .parse_and_finish(&bytes::Bytes::from(buf))
            .unwrap()
    }

    fn any_match(q: &Predicate, batch: &RecordBatch) -> bool {
        q.evaluate(batch).unwrap().true_count() > 0
    }

    /// Row ranges (within the file) of every row group.
    fn row_group_ranges(meta: &ParquetMetaData) -> Vec<(usize, usize)> {
        let mut start = 0;
        meta.row_groups()
            .iter()
            .map(|rg| {
                let len = rg.num_rows() as usize;
                start += len;
                (start - len, len)
            })
            .collect()
    }

    /// Row ranges (within the row group) of the pages of one column chunk.
    fn page_ranges(meta: &ParquetMetaData, rg: usize, leaf: usize) -> Vec<(usize, usize)> {
        let locs = meta.offset_index().unwrap()[rg][leaf].page_locations();
        let rows = meta.row_group(rg).num_rows();
        (0..locs.len())
            .map(|i| {
                let a = locs[i].first_row_index;
                let b = locs.get(i + 1).map_or(rows, |l| l.first_row_index);
                (a as usize, (b - a) as usize)
            })
            .collect()
    }

    fn leaf_of(meta: &ParquetMetaData, name: &str) -> usize {
        meta.file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .position(|c| c.name() == name)
            .unwrap()
    }

    fn keep_row_groups(q: &str, meta: &ParquetMetaData) -> Vec<bool> {
        let q = p(q);
        meta.row_groups()
            .iter()
            .map(|rg| q.row_group_may_match(rg))
            .collect()
    }

    fn keep_pages(q: &str, meta: &ParquetMetaData, rg: usize, column: &str) -> Option<Vec<bool>> {
        let leaf = leaf_of(meta, column);
        p(q).pages_may_match(
            meta.row_group(rg),
            leaf,
            &meta.column_index().unwrap()[rg][leaf],
        )
    }

    #[test]
    fn test_file_has_the_expected_layout() {
        let batch = test_batch();
        let meta = write_parquet(&batch);
        assert_eq!(meta.num_row_groups(), 4);
        for (rg, (start, len)) in row_group_ranges(&meta).into_iter().enumerate() {
            assert_eq!((start, len), (rg * RG_ROWS, RG_ROWS));
            for leaf in 0..batch.num_columns() {
                let pages = page_ranges(&meta, rg, leaf);
                assert_eq!(pages.len(), RG_ROWS / PAGE_ROWS, "rg {rg} leaf {leaf}");
                assert!(pages.iter().all(|&(_, n)| n == PAGE_ROWS));
                assert!(!matches!(
                    meta.column_index().unwrap()[rg][leaf],
                    ColumnIndexMetaData::NONE
                ));
            }
        }
        // The i32 column has a page of NULLs in row group 2.
        let ci = &meta.column_index().unwrap()[2][leaf_of(&meta, "i32")];
        assert!(ci.is_null_page(1));
        assert!(!ci.is_null_page(0));
    }

    #[test]
    fn prunes_row_groups_with_statistics() {
        let meta = write_parquet(&test_batch());
        let cases: [(&str, [bool; 4]); 33] = [
            ("id < 250", [T, F, F, F]),
            ("id <= 250", [T, T, F, F]),
            ("id = 500", [F, F, T, F]),
            ("id = 499.5", [F, F, F, F]),
            ("id != 5", [T, T, T, T]),
            ("id BETWEEN 300 AND 400", [F, T, F, F]),
            ("id > 999", [F, F, F, F]),
            ("id >= 1e3", [F, F, F, F]),
            ("id >= 2.5e2 AND id < 500", [F, T, F, F]),
            ("id < 100 AND id > 200", [T, F, F, F]),
            ("i32 IS NOT NULL", [T, F, T, T]),
            ("i32 IS NULL", [T, T, T, T]),
            ("i32 = 0", [T, F, F, F]),
            ("i32 > 150", [F, F, T, T]),
            ("i32 >= 750", [F, F, F, T]),
            ("nn IS NULL", [F, F, F, F]),
            ("nn IS NOT NULL", [T, T, T, T]),
            ("nn != 5", [T, T, T, T]),
            ("f64 >= 300", [F, F, F, T]),
            ("f64 < 0", [F, F, F, F]),
            ("f64 <= 0", [T, F, F, F]),
            ("f64 = -0.0", [T, F, F, F]),
            ("s >= 'b' AND s < 'c'", [F, T, F, F]),
            ("s > 'zz'", [F, F, F, T]),
            ("s < 'a'", [F, F, F, F]),
            ("d < '1994-01-01'", [F, F, F, F]),
            ("d >= DATE '1995-01-01'", [F, F, T, T]),
            ("dec < -500", [F, F, F, F]),
            ("dec > 3499.99", [F, F, F, F]),
            ("dec >= 2500", [F, F, F, T]),
            ("b = FALSE", [F, T, T, F]),
            ("b != TRUE", [F, T, T, F]),
            ("big < 0", [T, F, F, F]),
        ];
        for (q, want) in cases {
            assert_eq!(keep_row_groups(q, &meta), want, "{q}");
        }
        // Terms on unknown columns or with mismatched literals do not prune.
        assert_eq!(
            keep_row_groups("nope = 1 AND id > 1000", &meta),
            [F, F, F, F]
        );
        assert_eq!(keep_row_groups("nope = 1", &meta), [T, T, T, T]);
        assert_eq!(keep_row_groups("id = 'x'", &meta), [T, T, T, T]);
    }

    #[test]
    fn prunes_pages_with_the_column_index() {
        let meta = write_parquet(&test_batch());
        let page = |v: &[usize]| (0..10).map(|i| v.contains(&i)).collect::<Vec<_>>();
        // Row group 1 holds ids 250..500, 25 per page.
        assert_eq!(
            keep_pages("id BETWEEN 300 AND 320", &meta, 1, "id"),
            Some(page(&[2]))
        );
        assert_eq!(
            keep_pages("id >= 300 AND id <= 325 AND i32 = 1", &meta, 1, "id"),
            Some(page(&[2, 3]))
        );
        assert_eq!(keep_pages("id < 0", &meta, 0, "id"), Some(page(&[])));
        assert_eq!(
            keep_pages("id != 3", &meta, 0, "id"),
            Some(page(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]))
        );
        // No term on the column, or no column index: None.
        assert_eq!(keep_pages("i32 = 1", &meta, 1, "id"), None);
        let rg = meta.row_group(0);
        assert_eq!(
            p("id = 1").pages_may_match(rg, 0, &ColumnIndexMetaData::NONE),
            None
        );
        // A page of NULLs only matches IS NULL.
        let all_but_1 = page(&[0, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(
            keep_pages("i32 IS NOT NULL", &meta, 2, "i32"),
            Some(all_but_1)
        );
        assert_eq!(
            keep_pages("i32 > -1000", &meta, 2, "i32"),
            Some(page(&[0, 2, 3, 4, 5, 6, 7, 8, 9]))
        );
        assert_eq!(
            keep_pages("i32 IS NULL", &meta, 2, "i32").map(|v| v[1]),
            Some(true)
        );
        assert_eq!(keep_pages("nn IS NULL", &meta, 0, "nn"), Some(page(&[])));
    }

    #[test]
    fn validates_against_the_schema() {
        let meta = write_parquet(&test_batch());
        let schema = meta.file_metadata().schema_descr();
        let ok = [
            "id > 1 AND i32 < 2.5 AND f64 >= 1e3 AND s = 'x' AND d < DATE '1994-01-01'",
            "d < '1994-01-01' AND dec <= 0.075 AND big = -1 AND b = TRUE AND nn IS NULL",
            "s IS NOT NULL AND f64 = 1",
        ];
        for q in ok {
            assert_eq!(p(q).validate(schema), Ok(()), "{q}");
        }
        assert_eq!(
            p("id > 1 AND nope = 2").validate(schema),
            Err(PredicateError::UnknownColumn("nope".into()))
        );
        let type_err = |q: &str| match p(q).validate(schema) {
            Err(PredicateError::Type { column, reason }) => (column, reason),
            other => panic!("{q}: expected a type error, got {other:?}"),
        };
        let cases = [
            (
                "id = 'x'",
                "id",
                "cannot compare an integer column with string literal 'x'",
            ),
            (
                "s = 1",
                "s",
                "cannot compare a string column with integer literal 1",
            ),
            ("b = 1", "b", "cannot compare a BOOLEAN column"),
            ("i32 = TRUE", "i32", "boolean literal TRUE"),
            (
                "d = 8766",
                "d",
                "cannot compare a DATE column with integer literal",
            ),
            ("d = 'soon'", "d", "\"soon\" is not a date"),
            (
                "dec = DATE '1994-01-01'",
                "dec",
                "cannot compare a DECIMAL column",
            ),
            ("f64 = 'x'", "f64", "floating-point"),
        ];
        for (q, col, reason) in cases {
            let (c, r) = type_err(q);
            assert_eq!(c, col, "{q}");
            assert!(r.contains(reason), "{q}: {r:?} lacks {reason:?}");
        }
        let e = p("s = 1").validate(schema).unwrap_err();
        assert_eq!(
            e.to_string(),
            "filter on column \"s\": cannot compare a string column with integer literal 1"
        );
    }

    #[test]
    fn nested_columns_validate_and_stay_conservative() {
        let x = Arc::new(Int32Array::from_iter_values(0..100)) as ArrayRef;
        let fields = Fields::from(vec![Field::new("x", DataType::Int32, true)]);
        let st = StructArray::new(fields, vec![x], None);
        let batch = batch_of("st", Arc::new(st));
        let meta = write_parquet(&batch);
        let schema = meta.file_metadata().schema_descr();
        assert_eq!(p("st.x > 1 AND st IS NOT NULL").validate(schema), Ok(()));
        assert!(matches!(
            p("st > 1").validate(schema),
            Err(PredicateError::Type { .. })
        ));
        assert_eq!(
            p("st.y > 1").validate(schema),
            Err(PredicateError::UnknownColumn("st.y".into()))
        );
        // Pruning on nested leaves is conservative, evaluation is exact.
        assert_eq!(keep_row_groups("st.x > 1000", &meta), [T]);
        let pages = keep_pages("st.x > 1000", &meta, 0, "x").unwrap();
        assert!(pages.iter().all(|k| *k));
        assert_eq!(p("st.x >= 98").evaluate(&batch).unwrap().true_count(), 2);
    }

    /// Literal texts per column for the exhaustive checks; `true` marks
    /// literals that no value of the column can equal exactly.
    fn literal_cases() -> Vec<(&'static str, Vec<(&'static str, bool)>)> {
        let exact = |v: &[&'static str]| v.iter().map(|s| (*s, false)).collect::<Vec<_>>();
        vec![
            ("id", {
                let mut v = exact(&[
                    "-1", "0", "1", "249", "250", "251", "500", "999", "1000", "1e3", "2.5e2",
                ]);
                v.push(("499.5", true));
                v
            }),
            ("i32", {
                let mut v = exact(&[
                    "-101", "-100", "0", "100", "101", "499", "500", "650", "1000", "1001",
                ]);
                v.push(("0.5", true));
                v.push(("-99.99", true));
                v
            }),
            (
                "f64",
                exact(&[
                    "-1", "0", "0.0", "-0.0", "50.5", "99.99", "100", "250", "399.99", "400",
                    "1e9", "-1e999",
                ]),
            ),
            (
                "s",
                exact(&[
                    "'a000'", "'a500'", "'b'", "'b999'", "'c'", "'c5'", "'zz'", "'zz500'", "'é'",
                    "'é500'", "''",
                ]),
            ),
            (
                "d",
                exact(&[
                    "DATE '1994-01-01'",
                    "'1994-01-02'",
                    "DATE '1994-06-01'",
                    "DATE '1995-05-15'",
                    "DATE '1995-05-20'",
                    "DATE '2000-01-01'",
                    "DATE '1993-12-31'",
                ]),
            ),
            ("dec", {
                let mut v = exact(&[
                    "-500", "-500.00", "0.07", "0", "499.99", "500", "1499.99", "2500", "1e3",
                    "-1e40",
                ]);
                v.push(("-499.995", true));
                v.push(("1000.005", true));
                v
            }),
            ("big", {
                let mut v = exact(&[
                    "0",
                    "-500000000000000",
                    "1e15",
                    "-1e14",
                    "2500000000000000",
                    "12345678901234.56",
                ]);
                v.push(("250000000000000.005", true));
                v
            }),
            ("b", exact(&["TRUE", "FALSE"])),
            ("nn", exact(&["0", "50", "99", "100"])),
        ]
    }

    /// For every single-term predicate: a row group or page is kept exactly
    /// when min/max say a value may match, which (with exact statistics) is
    /// exactly when the oracle finds a matching row, except for `=`, kept
    /// when min <= v <= max.
    #[test]
    fn single_terms_prune_exactly_and_soundly() {
        let batch = test_batch();
        let meta = write_parquet(&batch);
        let rgs = row_group_ranges(&meta);
        let mut pruned = (0usize, 0usize);
        for (column, literals) in literal_cases() {
            let leaf = leaf_of(&meta, column);
            // (filter, literal never equal, `>=` and `<=` filters for `=`)
            type Query = (String, bool, Option<(String, String)>);
            let mut queries: Vec<Query> = vec![
                (format!("{column} IS NULL"), false, None),
                (format!("{column} IS NOT NULL"), false, None),
            ];
            for (lit, inexact) in &literals {
                for op in ["=", "!=", "<", "<=", ">", ">="] {
                    let bounds = (op == "=")
                        .then(|| (format!("{column} >= {lit}"), format!("{column} <= {lit}")));
                    queries.push((format!("{column} {op} {lit}"), *inexact, bounds));
                }
            }
            for (q, inexact, eq_bounds) in &queries {
                let pred = p(q);
                let expect = |slice: &RecordBatch| match eq_bounds {
                    Some((ge, le)) => {
                        !inexact && any_match(&p(ge), slice) && any_match(&p(le), slice)
                    }
                    None => any_match(&pred, slice),
                };
                for (rg, &(start, len)) in rgs.iter().enumerate() {
                    let slice = batch.slice(start, len);
                    let keep = pred.row_group_may_match(meta.row_group(rg));
                    let found = any_match(&pred, &slice);
                    assert!(keep || !found, "{q}: row group {rg} pruned but has a match");
                    assert_eq!(keep, expect(&slice), "{q}: row group {rg}");
                    pruned.0 += usize::from(!keep);
                    let pages = pred
                        .pages_may_match(
                            meta.row_group(rg),
                            leaf,
                            &meta.column_index().unwrap()[rg][leaf],
                        )
                        .unwrap_or_else(|| panic!("{q}: no page answer"));
                    let ranges = page_ranges(&meta, rg, leaf);
                    assert_eq!(pages.len(), ranges.len(), "{q}");
                    for (i, (&keep, &(a, n))) in pages.iter().zip(&ranges).enumerate() {
                        let slice = batch.slice(start + a, n);
                        let found = any_match(&pred, &slice);
                        assert!(
                            keep || !found,
                            "{q}: rg {rg} page {i} pruned but has a match"
                        );
                        assert_eq!(keep, expect(&slice), "{q}: rg {rg} page {i}");
                        pruned.1 += usize::from(!keep);
                    }
                }
            }
        }
        // The checks above did prune a lot.
        assert!(pruned.0 > 300 && pruned.1 > 3000, "pruned {pruned:?}");
    }

    /// Conjunctions over several columns: never prune a row group or page
    /// holding a matching row.
    #[test]
    fn conjunctions_never_prune_matching_rows() {
        let batch = test_batch();
        let meta = write_parquet(&batch);
        let rgs = row_group_ranges(&meta);
        let queries = [
            "id >= 200 AND i32 < 0",
            "f64 BETWEEN 50 AND 150 AND s >= 'b'",
            "d BETWEEN DATE '1994-03-01' AND '1994-04-01' AND dec > 0",
            "dec <= 0.07 AND dec > -1 AND b = TRUE",
            "i32 IS NULL AND id > 600",
            "s IS NOT NULL AND s < 'b5' AND f64 != 0",
            "big >= 0 AND big < 1e15 AND nn = 7",
            "b != FALSE AND i32 BETWEEN 650 AND 700",
            "id BETWEEN 10 AND 990 AND d > '1994-05-01' AND s > 'é'",
            "f64 = 0 AND i32 IS NOT NULL",
        ];
        let schema = meta.file_metadata().schema_descr();
        let mut kept = 0;
        for q in queries {
            let pred = p(q);
            assert_eq!(pred.validate(schema), Ok(()), "{q}");
            for (rg, &(start, len)) in rgs.iter().enumerate() {
                let rg_meta = meta.row_group(rg);
                let slice = batch.slice(start, len);
                let found = any_match(&pred, &slice);
                let keep = pred.row_group_may_match(rg_meta);
                assert!(keep || !found, "{q}: row group {rg} pruned but has a match");
                kept += usize::from(keep);
                for column in pred.columns() {
                    let leaf = leaf_of(&meta, column);
                    let sub = Predicate {
                        terms: pred
                            .terms
                            .iter()
                            .filter(|t| t.column == column)
                            .cloned()
                            .collect(),
                    };
                    let pages = pred
                        .pages_may_match(rg_meta, leaf, &meta.column_index().unwrap()[rg][leaf])
                        .unwrap();
                    for (i, (&keep, &(a, n))) in
                        pages.iter().zip(&page_ranges(&meta, rg, leaf)).enumerate()
                    {
                        let page = batch.slice(start + a, n);
                        assert!(
                            keep || !any_match(&sub, &page),
                            "{q}: rg {rg} page {i} ({column})"
                        );
                        // Rows matching the whole predicate lie in kept pages.
                        if !keep {
                            assert!(!any_match(&pred, &page), "{q}: rg {rg} page {i}");
                        }
                    }
                }
            }
        }
        assert!(kept > 0 && kept < queries.len() * rgs.len(), "kept {kept}");
    }
}
