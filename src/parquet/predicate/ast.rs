//! The predicate model: operators, literals, terms, the conjunction of
//! them, and why a predicate does not fit a file.

use ::arrow::error::ArrowError;

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
    /// A string compared with a date column is not a date.
    #[error("{text:?} is not a date (expected 'YYYY-MM-DD')")]
    NotADate {
        /// The string.
        text: String,
    },
    /// A comparison without a literal.
    #[error("operator {op} needs a literal")]
    NeedsLiteral {
        /// The operator.
        op: Op,
    },
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
}
