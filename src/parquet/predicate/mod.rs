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

use ::arrow::array::BooleanArray;
use ::arrow::buffer::BooleanBuffer;
use ::arrow::compute::and;
use ::arrow::error::ArrowError;
use ::arrow::record_batch::RecordBatch;
use ::parquet::file::metadata::RowGroupMetaData;
use ::parquet::file::page_index::column_index::ColumnIndexMetaData;
use ::parquet::schema::types::SchemaDescriptor;

mod eval;
mod exact;
mod parse;
mod prune;
mod schema;
#[cfg(test)]
mod tests;

use eval::*;
use exact::*;
use parse::*;
use prune::*;
use schema::*;

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
    #[error("filter on column {column:?}: {reason}")]
    Type {
        /// The column of the term.
        column: String,
        /// Why the term cannot be evaluated.
        reason: String,
    },
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

    /// The terms that [`Predicate::validate`] accepts for `schema` (a term
    /// on a column the file lacks, or with a literal of another type, is
    /// left out); None when none is left.
    pub fn fitting(&self, schema: &SchemaDescriptor) -> Option<Predicate> {
        let terms: Vec<Term> = self
            .terms
            .iter()
            .filter(|t| check_term(schema, t).is_ok())
            .cloned()
            .collect();
        (!terms.is_empty()).then_some(Predicate { terms })
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
