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

mod ast;
mod eval;
mod exact;
mod parse;
mod prune;
mod schema;
#[cfg(test)]
mod tests;

pub use ast::{Literal, Op, Predicate, PredicateError, Term, TermError};
