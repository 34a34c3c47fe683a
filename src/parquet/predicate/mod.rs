//! Scan filters: a predicate language and its evaluation.
//!
//! A [`Predicate`] is an expression tree of terms under AND, OR and NOT,
//! parsed from text such as
//! `l_shipdate >= DATE '1994-01-01' AND (l_shipmode IN ('MAIL', 'SHIP') OR
//! NOT l_comment LIKE 'special%')`, or built from pyarrow/cuDF-style DNF
//! filters ([`Predicate::from_dnf`]).
//!
//! The language (keywords in any case; precedence NOT > AND > OR;
//! parentheses group):
//!
//! * comparisons `column op literal` with `= (==) != (<>) < <= > >=`;
//! * `column [NOT] BETWEEN a AND b` (both bounds included);
//! * `column [NOT] IN (v1, v2, ...)`;
//! * `column IS [NOT] NULL`;
//! * `column [NOT] LIKE 'pattern'`: `%` matches any run of characters,
//!   `_` one character (a UTF-8 code point of a string, a byte of a binary
//!   value), and a backslash makes the `%`, `_` or backslash after it
//!   plain (before anything else it is a parse error); the rest compares
//!   byte-wise. A plain prefix and one trailing `%` (`'abc%'`) prunes by
//!   statistics both ways, other patterns by their plain head only;
//! * literals: integers (`42`), exact decimals (`0.07`), floats with an
//!   exponent (`1e3`), `'strings'` (`''` for a quote), binary `X'0A1B'`,
//!   `DATE 'YYYY-MM-DD'`, `TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.ffffff]'` (up to
//!   nine fraction digits), `TRUE` / `FALSE`;
//! * column names: bare (`a`, `a.b.c` for a struct leaf) or double-quoted.
//!
//! It is evaluated at three levels:
//!
//! * [`Predicate::row_group_may_match`]: column-chunk statistics prove that a
//!   row group holds no matching row (row-group pruning);
//! * [`Predicate::pages_may_match`]: the column index proves that a page holds
//!   no matching row (page pruning);
//! * [`Predicate::evaluate`]: row-exact filtering of decoded Arrow batches.
//!
//! The two pruning levels are conservative: they only answer `false` when the
//! metadata proves that [`Predicate::evaluate`] would select no row. They
//! reason in three values: a part may be TRUE for some row, or FALSE for
//! some row; AND is ruled out when any part cannot be TRUE, OR when no part
//! can, and NOT e when e cannot be FALSE for any row (every row TRUE or
//! unknown).
//!
//! Semantics (shared by all three levels):
//!
//! * SQL's three-valued logic: a comparison, BETWEEN, IN or LIKE of a NULL
//!   value is unknown; NOT unknown is unknown; AND and OR follow Kleene
//!   (`FALSE AND unknown` is FALSE, `TRUE OR unknown` is TRUE); a row is
//!   selected only when the whole predicate is TRUE. So `NOT (x > 5)` does
//!   not select a NULL x, and `x > 5 OR y IS NULL` selects a NULL-x row
//!   whose y is NULL. `IS [NOT] NULL` is never unknown.
//! * Numbers compare exactly: decimal literals keep their digits and scale, so
//!   `price < 0.075` against a `DECIMAL(15,2)` column means `price <= 0.07`,
//!   and `x = 1.5` against an integer column matches nothing (and
//!   `x != 1.5` every non-NULL value).
//! * Against floating-point columns a literal is rounded to the column type;
//!   comparisons follow IEEE 754, as Arrow C++ compute (pyarrow's
//!   `filters=`) does: `-0.0 = 0.0`, and a NaN value makes `=`, `<`, `<=`,
//!   `>`, `>=`, BETWEEN and IN FALSE (not unknown) and `!=` TRUE, so
//!   `NOT (x < 1)` and `x NOT IN (1, 2)` select NaN; `IS NULL` is false for
//!   NaN. Parquet statistics leave NaN out of min/max, so pruning never
//!   counts on the absence of NaN (`!=` and negated float tests do not
//!   prune).
//! * Strings and binary compare byte-wise (the Parquet order for UTF-8); a
//!   binary literal against a string column compares the bytes.
//! * Dates compare with `DATE 'YYYY-MM-DD'` literals or `'YYYY-MM-DD'`
//!   strings; timestamps (any unit, any zone: the stored value is compared,
//!   UTC for zoned columns) with TIMESTAMP or DATE literals or strings in
//!   either form, exactly: `TIMESTAMP '2024-01-01 00:00:00.0005'` against
//!   a millisecond column lies between two stored values, like a decimal
//!   literal with more digits than the column's scale.

mod ast;
mod display;
mod dnf;
mod eval;
mod exact;
mod for_device;
mod lex;
mod like;
mod parse;
mod prune;
mod scalar;
mod schema;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_columns;
#[cfg(test)]
mod tests_prop;
#[cfg(test)]
mod tests_tree;
mod time;

pub use ast::{Literal, Op, Predicate, PredicateError, Term, TermError, Test};
pub use dnf::{DnfTerm, DnfValue};
pub(crate) use for_device::{device_plan, DevicePlan};
#[cfg(feature = "datafusion")]
pub(crate) use like::like_test;
pub(crate) use like::{like_parts, like_program};
