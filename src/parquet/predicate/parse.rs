//! Parsing and printing the filter language.

use std::fmt;
use std::str::FromStr;

use super::ast::*;

// ---------------------------------------------------------------------------
// Text form: parsing and display
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    Quoted(String),
    Str(String),
    Int(i128),
    Dec(i128, u8),
    Float(f64),
    Cmp(Op),
}

pub(super) fn parse_error(
    input: &str,
    position: usize,
    reason: impl Into<String>,
) -> PredicateError {
    PredicateError::Parse {
        input: input.to_string(),
        position,
        reason: reason.into(),
    }
}

/// Reads a quoted token starting at `start` (the opening quote `q`); a
/// doubled quote stands for one. Returns the content and the end offset.
pub(super) fn lex_quoted(
    input: &str,
    start: usize,
    q: u8,
) -> Result<(String, usize), PredicateError> {
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
pub(super) fn lex_number(input: &str, start: usize) -> Result<(Tok, usize), PredicateError> {
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

pub(super) fn lex(input: &str) -> Result<Vec<(Tok, usize)>, PredicateError> {
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

pub(super) struct Parser<'a> {
    pub(super) input: &'a str,
    pub(super) toks: Vec<(Tok, usize)>,
    pub(super) pos: usize,
}

impl Parser<'_> {
    pub(super) fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    /// Byte offset of the next token (the input length at the end).
    pub(super) fn at(&self) -> usize {
        self.toks.get(self.pos).map_or(self.input.len(), |t| t.1)
    }

    pub(super) fn err(&self, reason: impl Into<String>) -> PredicateError {
        parse_error(self.input, self.at(), reason)
    }

    pub(super) fn keyword(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(s)) if s.eq_ignore_ascii_case(kw))
    }

    pub(super) fn predicate(&mut self) -> Result<Predicate, PredicateError> {
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

    pub(super) fn term(&mut self, terms: &mut Vec<Term>) -> Result<(), PredicateError> {
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

    pub(super) fn literal(&mut self) -> Result<Literal, PredicateError> {
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
pub(super) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian (year, month, day) of days since 1970-01-01.
pub(super) fn civil_from_days(days: i64) -> (i64, i64, i64) {
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
pub(super) fn parse_date(s: &str) -> Option<i32> {
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

pub(super) fn is_bare_identifier(s: &str) -> bool {
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
