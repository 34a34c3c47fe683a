//! Parsing the filter language: `OR` of `AND` of `NOT` of terms or
//! parenthesised filters.

use std::str::FromStr;

use super::ast::*;
use super::lex::*;
use super::like::like_test;
use super::time::*;

pub(super) struct Parser<'a> {
    pub(super) input: &'a str,
    pub(super) toks: Vec<(Tok, usize)>,
    pub(super) pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn peek_at(&self, ahead: usize) -> Option<&Tok> {
        self.toks.get(self.pos + ahead).map(|t| &t.0)
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

    /// Consumes the keyword when it comes next.
    fn eat(&mut self, kw: &str) -> bool {
        let found = self.keyword(kw);
        self.pos += usize::from(found);
        found
    }

    fn whole(&mut self) -> Result<Predicate, PredicateError> {
        let p = self.or()?;
        match self.peek() {
            None => Ok(p),
            Some(Tok::Close) => Err(self.err("unmatched ')'")),
            Some(_) => Err(self.err("expected AND, OR or the end of the filter")),
        }
    }

    fn or(&mut self) -> Result<Predicate, PredicateError> {
        let mut parts = vec![self.and()?];
        while self.eat("OR") {
            parts.push(self.and()?);
        }
        Ok(flat(parts, Predicate::Or))
    }

    fn and(&mut self) -> Result<Predicate, PredicateError> {
        let mut parts = vec![self.not()?];
        while self.eat("AND") {
            parts.push(self.not()?);
        }
        Ok(flat(parts, Predicate::And))
    }

    fn not(&mut self) -> Result<Predicate, PredicateError> {
        // `not = 1` compares a column named "not".
        let column_named_not = matches!(self.peek_at(1), Some(Tok::Cmp(_)))
            || matches!(self.peek_at(1), Some(Tok::Ident(k)) if k.eq_ignore_ascii_case("IS"));
        if self.keyword("NOT") && !column_named_not {
            self.pos += 1;
            return Ok(self.not()?.negate());
        }
        if self.peek() == Some(&Tok::Open) {
            self.pos += 1;
            let inner = self.or()?;
            if self.peek() != Some(&Tok::Close) {
                return Err(self.err("expected ')'"));
            }
            self.pos += 1;
            return Ok(inner);
        }
        self.term()
    }

    fn term(&mut self) -> Result<Predicate, PredicateError> {
        let column = match self.peek() {
            Some(Tok::Ident(s) | Tok::Quoted(s)) => s.clone(),
            _ => return Err(self.err("expected a column name")),
        };
        self.pos += 1;
        if let Some(Tok::Cmp(op)) = self.peek() {
            let op = *op;
            self.pos += 1;
            if let Some(other) = self.column_operand() {
                self.pos += 1;
                return Ok(Predicate::term(column, Test::CmpColumn(op, other)));
            }
            return Ok(Predicate::cmp(column, op, self.literal()?));
        }
        if self.eat("IS") {
            let not = self.eat("NOT");
            if !self.eat("NULL") {
                return Err(self.err(if not {
                    "expected NULL"
                } else {
                    "expected NULL or NOT NULL"
                }));
            }
            let t = Predicate::term(column, Test::IsNull);
            return Ok(if not { t.negate() } else { t });
        }
        let not = self.eat("NOT");
        let test = if self.eat("BETWEEN") {
            let lo = self.literal()?;
            if !self.eat("AND") {
                return Err(self.err("expected AND in BETWEEN"));
            }
            Test::Between(lo, self.literal()?)
        } else if self.eat("IN") {
            Test::In(self.list()?)
        } else if self.eat("LIKE") {
            self.pattern()?
        } else if not {
            return Err(self.err("expected BETWEEN, IN or LIKE after NOT"));
        } else {
            return Err(self.err(
                "expected a comparison operator (=, !=, <>, <, <=, >, >=), IS, BETWEEN, IN or LIKE",
            ));
        };
        let t = Predicate::term(column, test);
        Ok(if not { t.negate() } else { t })
    }

    /// The column on the right of a comparison, if the next token names
    /// one (a bare name other than a literal's keyword, or a quoted name).
    fn column_operand(&self) -> Option<String> {
        const KEYWORDS: [&str; 5] = ["TRUE", "FALSE", "DATE", "TIMESTAMP", "NULL"];
        match self.peek() {
            Some(Tok::Quoted(s)) => Some(s.clone()),
            Some(Tok::Ident(s)) if !KEYWORDS.iter().any(|k| s.eq_ignore_ascii_case(k)) => {
                Some(s.clone())
            }
            _ => None,
        }
    }

    fn list(&mut self) -> Result<Vec<Literal>, PredicateError> {
        if self.peek() != Some(&Tok::Open) {
            return Err(self.err("expected '(' after IN"));
        }
        self.pos += 1;
        let mut values = vec![self.literal()?];
        loop {
            match self.peek() {
                Some(Tok::Comma) => {
                    self.pos += 1;
                    values.push(self.literal()?);
                }
                Some(Tok::Close) => {
                    self.pos += 1;
                    return Ok(values);
                }
                _ => return Err(self.err("expected ',' or ')' in the IN list")),
            }
        }
    }

    fn pattern(&mut self) -> Result<Test, PredicateError> {
        let at = self.at();
        let Some(Tok::Str(s)) = self.peek().cloned() else {
            return Err(self.err("expected a quoted pattern after LIKE"));
        };
        self.pos += 1;
        like_test(&s).map_err(|(_, why)| parse_error(self.input, at, why))
    }

    /// The quoted text after `DATE` or `TIMESTAMP`, parsed by `parse`.
    fn typed<T>(
        &mut self,
        what: &str,
        form: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<T, PredicateError> {
        let at = self.at();
        let tok = self.peek().cloned();
        self.pos += 1;
        match tok {
            Some(Tok::Str(s)) => parse(&s).ok_or_else(|| {
                parse_error(
                    self.input,
                    at,
                    format!("invalid {what} {s:?}, expected '{form}'"),
                )
            }),
            _ => Err(parse_error(
                self.input,
                at,
                format!("expected a quoted {what} after {}", what.to_uppercase()),
            )),
        }
    }

    fn literal(&mut self) -> Result<Literal, PredicateError> {
        let at = self.at();
        let tok = self.peek().cloned();
        self.pos += 1;
        let word = |k: &str| matches!(&tok, Some(Tok::Ident(w)) if w.eq_ignore_ascii_case(k));
        Ok(match tok {
            Some(Tok::Int(v)) => Literal::Int(v),
            Some(Tok::Dec(digits, scale)) => Literal::Decimal { digits, scale },
            Some(Tok::Float(v)) => Literal::Float(v),
            Some(Tok::Str(s)) => Literal::Str(s),
            Some(Tok::Bin(b)) => Literal::Binary(b),
            _ if word("TRUE") => Literal::Bool(true),
            _ if word("FALSE") => Literal::Bool(false),
            _ if word("DATE") => Literal::Date(self.typed("date", "YYYY-MM-DD", parse_date)?),
            _ if word("TIMESTAMP") => Literal::Timestamp(self.typed(
                "timestamp",
                "YYYY-MM-DD HH:MM:SS[.ffffff]",
                parse_timestamp,
            )?),
            _ if word("NULL") => {
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
                    "expected a literal (number, 'string', X'hex', DATE 'YYYY-MM-DD', \
                     TIMESTAMP 'YYYY-MM-DD HH:MM:SS', TRUE or FALSE)",
                ))
            }
        })
    }
}

/// One part as itself, several under `join`.
fn flat(mut parts: Vec<Predicate>, join: fn(Vec<Predicate>) -> Predicate) -> Predicate {
    if parts.len() == 1 {
        parts.remove(0)
    } else {
        join(parts)
    }
}

impl FromStr for Predicate {
    type Err = PredicateError;

    /// Parses a filter; see the module documentation for the language.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let toks = lex(s)?;
        Parser {
            input: s,
            toks,
            pos: 0,
        }
        .whole()
    }
}
