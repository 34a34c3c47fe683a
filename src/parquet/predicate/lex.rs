//! The filter language's tokens.

use super::ast::*;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    Quoted(String),
    Str(String),
    Bin(Vec<u8>),
    Int(i128),
    Dec(i128, u8),
    Float(f64),
    Cmp(Op),
    Open,
    Close,
    Comma,
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

/// The bytes of a hex string (two digits a byte); None when it is not one.
fn hex_bytes(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
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
                let word = &input[start..i];
                if word.eq_ignore_ascii_case("x") && b.get(i) == Some(&b'\'') {
                    let (text, end) = lex_quoted(input, i, b'\'')?;
                    i = end;
                    let bytes = hex_bytes(&text).ok_or_else(|| {
                        parse_error(
                            input,
                            start,
                            "a binary literal is X'' with two hex digits a byte",
                        )
                    })?;
                    Tok::Bin(bytes)
                } else {
                    Tok::Ident(word.to_string())
                }
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
            b'(' | b')' | b',' => {
                i += 1;
                match b[start] {
                    b'(' => Tok::Open,
                    b')' => Tok::Close,
                    _ => Tok::Comma,
                }
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
