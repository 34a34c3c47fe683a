//! The predicate model: operators, literals, terms, the expression tree
//! over them, and why a predicate does not fit a file.

use ::arrow::error::ArrowError;

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
}

/// A literal. Decimal literals keep their digits and scale exactly (e.g.
/// "0.07" => `Decimal { digits: 7, scale: 2 }`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// A binary literal, `X'0A1B'` (hex digits, two per byte).
    Binary(Vec<u8>),
    /// A date, `DATE 'YYYY-MM-DD'`, as days since 1970-01-01.
    Date(i32),
    /// A timestamp, `TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.fffffffff]'`, as
    /// nanoseconds since 1970-01-01 00:00:00 (no time zone: it compares
    /// with a column's stored values, UTC for zoned columns).
    Timestamp(i128),
    /// `TRUE` or `FALSE`.
    Bool(bool),
}

/// What a [`Term`] tests its column for.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Test {
    /// `column op literal`.
    Cmp(Op, Literal),
    /// `column BETWEEN low AND high` (both bounds included).
    Between(Literal, Literal),
    /// `column IN (v, ...)` (at least one value).
    In(Vec<Literal>),
    /// `column IS NULL`.
    IsNull,
    /// `column LIKE 'prefix%'`: the value starts with these bytes (the
    /// prefix unescaped).
    StartsWith(String),
    /// `column LIKE 'pattern'` for any other pattern: `%` any run of
    /// characters, `_` one character, a backslash escaping the `%`, `_` or
    /// backslash after it (the pattern as written).
    Like(String),
    /// `column op other`: two columns of the same type compared row by
    /// row (TPC-H Q12's `l_commitdate < l_receiptdate`); unknown where
    /// either is NULL; statistics never prune on it.
    CmpColumn(Op, String),
}

/// One test of one column. Negations (`IS NOT NULL`, `NOT BETWEEN`,
/// `NOT IN`, `NOT LIKE`) are [`Predicate::Not`] of a term.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Term {
    /// The column: a top-level column name or a dotted leaf path (`a.b.c`).
    pub column: String,
    /// The test.
    pub test: Test,
}

/// A filter: an expression tree of terms under SQL's three-valued logic (a
/// test of a NULL value is unknown; a row is selected only when the whole
/// predicate is TRUE).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Predicate {
    /// One term.
    Term(Term),
    /// All of these (an empty list is TRUE).
    And(Vec<Predicate>),
    /// Any of these (an empty list is FALSE).
    Or(Vec<Predicate>),
    /// The negation (NOT unknown is unknown).
    Not(Box<Predicate>),
}

/// Errors from parsing or validating a [`Predicate`].
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
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
    #[error("filter on column {column:?}: {source}")]
    Type {
        /// The column of the term.
        column: String,
        /// Why the term cannot be evaluated.
        #[source]
        source: TermError,
    },
    /// A DNF filter (see [`Predicate::from_dnf`]) that is not valid.
    #[error("invalid filters: {0}")]
    Dnf(String),
}

/// Why a term cannot be compared with its column.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TermError {
    /// A NaN literal (it would match nothing, and prune wrongly).
    #[error("NaN literals are not supported")]
    NanLiteral,
    /// The literal's kind does not fit the column's type.
    #[error("cannot compare {column} with {literal}")]
    Mismatch {
        /// The column's type, e.g. "Int64 values" (an Arrow column) or "an
        /// integer column" (a Parquet column).
        column: String,
        /// The literal, e.g. "string literal 'x'".
        literal: String,
    },
    /// The column's type has no comparisons.
    #[error("comparisons are not supported on {column_type} columns")]
    Unsupported {
        /// The column's type.
        column_type: String,
    },
    /// A string compared with a date or timestamp column is not one.
    #[error("{text:?} is not a {what} (expected '{form}')")]
    NotADate {
        /// The string.
        text: String,
        /// "date" or "timestamp".
        what: &'static str,
        /// The expected form.
        form: &'static str,
    },
    /// `LIKE` on a column that holds neither strings nor binary.
    #[error("LIKE needs a string or binary column, not {column_type}")]
    Like {
        /// The column's type.
        column_type: String,
    },
    /// A [`Test::Like`] pattern that is not one (a stray backslash).
    #[error("invalid LIKE pattern: {0}")]
    Pattern(String),
    /// A comparison on a nested (group) column.
    #[error("nested columns only support IS NULL and IS NOT NULL")]
    Nested,
    /// A comparison on a repeated column, or a null test below its top.
    #[error("repeated columns only support IS NULL and IS NOT NULL on the top-level field")]
    Repeated,
    /// The literal does not fit the column's Arrow type (e.g. a decimal's
    /// precision).
    #[error("the literal does not fit the column's type: {0}")]
    Scalar(#[source] ArrowError),
}

impl PartialEq for TermError {
    /// Equal when of the same kind with the same message (arrow-rs's error
    /// has no equality of its own).
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Term {
    /// The literals the term compares with (none for `IS NULL` and `LIKE`).
    pub fn literals(&self) -> Vec<&Literal> {
        match &self.test {
            Test::Cmp(_, v) => vec![v],
            Test::Between(lo, hi) => vec![lo, hi],
            Test::In(vs) => vs.iter().collect(),
            Test::IsNull | Test::StartsWith(_) | Test::Like(_) | Test::CmpColumn(..) => vec![],
        }
    }
}

impl Predicate {
    /// A term `column op value`.
    pub fn cmp(column: impl Into<String>, op: Op, value: Literal) -> Predicate {
        Predicate::term(column, Test::Cmp(op, value))
    }

    /// A term `column test`.
    pub fn term(column: impl Into<String>, test: Test) -> Predicate {
        Predicate::Term(Term {
            column: column.into(),
            test,
        })
    }

    /// The predicate selecting every row (an empty conjunction).
    pub fn all() -> Predicate {
        Predicate::And(Vec::new())
    }

    /// The negation of `self`.
    pub fn negate(self) -> Predicate {
        Predicate::Not(Box::new(self))
    }

    /// Every term of the tree, depth first, left to right.
    pub fn terms(&self) -> Vec<&Term> {
        let mut out = Vec::new();
        self.visit_terms(&mut |t| out.push(t));
        out
    }

    fn visit_terms<'a>(&'a self, f: &mut impl FnMut(&'a Term)) {
        match self {
            Predicate::Term(t) => f(t),
            Predicate::And(cs) | Predicate::Or(cs) => cs.iter().for_each(|c| c.visit_terms(f)),
            Predicate::Not(c) => c.visit_terms(f),
        }
    }

    /// The distinct columns of the terms (both of a column comparison),
    /// in order of appearance.
    pub fn columns(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for t in self.terms() {
            let other = match &t.test {
                Test::CmpColumn(_, other) => Some(other.as_str()),
                _ => None,
            };
            for c in std::iter::once(t.column.as_str()).chain(other) {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out
    }
}
