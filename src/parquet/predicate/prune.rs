//! Pruning: statistics and column-index bounds against the predicate tree,
//! with three-valued reasoning.

use std::cmp::Ordering;

use ::parquet::file::metadata::RowGroupMetaData;
use ::parquet::file::page_index::column_index::ColumnIndexMetaData;
use ::parquet::file::statistics::Statistics;
use ::parquet::schema::types::ColumnDescriptor;

use super::ast::*;
use super::exact::*;
use super::like::{like_parts, like_prefix_bytes};
use super::schema::*;

// ---------------------------------------------------------------------------
// Pruning with statistics and the column index
// ---------------------------------------------------------------------------

/// A min or max from statistics, in the domain of its column kind.
#[derive(Debug, Clone, Copy)]
pub(super) enum Val<'a> {
    Num(i128),
    Flt(f64),
    Bytes(&'a [u8]),
    Bool(bool),
}

/// Orders a statistics value against a key; None when they cannot be
/// ordered (NaN, mismatched kinds).
pub(super) fn cmp_val(v: Val<'_>, key: &Key, scale: i32) -> Option<Ordering> {
    match (v, key) {
        (Val::Num(u), Key::Exact(e)) => Some(cmp_exact(u, *e, scale)),
        (Val::Flt(x), Key::Flt(k)) => x.partial_cmp(k),
        (Val::Bytes(b), Key::Bytes(k)) => Some(b.cmp(k.as_slice())),
        (Val::Bool(b), Key::Bool(k)) => Some(b.cmp(k)),
        _ => None,
    }
}

/// Decodes a big-endian two's complement integer of 1..=16 bytes.
pub(super) fn be_i128(b: &[u8]) -> Option<i128> {
    if b.is_empty() || b.len() > 16 {
        return None;
    }
    let fill = if b[0] & 0x80 != 0 { 0xFF } else { 0 };
    let mut buf = [fill; 16];
    buf[16 - b.len()..].copy_from_slice(b);
    Some(i128::from_be_bytes(buf))
}

pub(super) fn int_val(v: i64, unsigned: bool, bits32: bool) -> i128 {
    match (unsigned, bits32) {
        (false, _) => i128::from(v),
        (true, true) => i128::from(v as i32 as u32),
        (true, false) => i128::from(v as u64),
    }
}

/// Min and max of a column chunk as bounds for `kind`; None where unknown or
/// unusable.
pub(super) fn stats_bounds(kind: Kind, stats: &Statistics) -> (Option<Val<'_>>, Option<Val<'_>>) {
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
        (Kind::Timestamp { .. }, Statistics::Int64(s)) => (
            s.min_opt().map(|v| Val::Num(i128::from(*v))),
            s.max_opt().map(|v| Val::Num(i128::from(*v))),
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
pub(super) fn page_bounds(
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
        (Kind::Timestamp { .. }, ColumnIndexMetaData::INT64(ix)) => (
            ix.min_value(p).map(|v| Val::Num(i128::from(*v))),
            ix.max_value(p).map(|v| Val::Num(i128::from(*v))),
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
pub(super) struct Bounds<'a> {
    pub(super) min: Option<Val<'a>>,
    pub(super) max: Option<Val<'a>>,
    /// Number of NULLs, if known.
    pub(super) nulls: Option<u64>,
    /// Whether every value is known to be NULL.
    pub(super) all_null: bool,
}

/// False only when `bounds` prove that no value satisfies `op key` (NaN,
/// left out of statistics, aside: see [`term_may`]).
pub(super) fn cmp_may(op: Op, key: &Key, kind: Kind, b: &Bounds<'_>) -> bool {
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
    };
    !pruned
}

/// The operator true exactly where `op` is false (for non-NULL, non-NaN
/// values).
fn complement(op: Op) -> Op {
    match op {
        Op::Eq => Op::NotEq,
        Op::NotEq => Op::Eq,
        Op::Lt => Op::GtEq,
        Op::LtEq => Op::Gt,
        Op::Gt => Op::LtEq,
        Op::GtEq => Op::Lt,
    }
}

/// False only when `bounds` prove that no row makes `op key` evaluate to
/// `want` (TRUE or FALSE; NULL rows are neither). NaN, absent from
/// statistics, makes every comparison FALSE except `!=`, which it makes
/// TRUE.
fn op_may(op: Op, key: &Key, kind: Kind, b: &Bounds<'_>, want: bool) -> bool {
    let float = matches!(kind, Kind::F32 | Kind::F64);
    match (want, float) {
        _ if b.all_null => false,
        (true, true) if op == Op::NotEq => true,
        (false, true) if op != Op::NotEq => true,
        (true, _) => cmp_may(op, key, kind, b),
        (false, _) => cmp_may(complement(op), key, kind, b),
    }
}

/// False only when `bounds` prove that no value starts with `prefix`
/// (`want`), or that every non-NULL value does (not `want`).
fn prefix_may(prefix: &[u8], b: &Bounds<'_>, want: bool) -> bool {
    if b.all_null {
        return false;
    }
    let bytes = |v: Option<Val<'_>>| match v {
        Some(Val::Bytes(x)) => Some(x.to_vec()),
        _ => None,
    };
    let (min, max) = (bytes(b.min), bytes(b.max));
    if !want {
        // The values with the prefix form an interval of the byte order.
        return !(min.as_ref().is_some_and(|m| m.starts_with(prefix))
            && max.as_ref().is_some_and(|m| m.starts_with(prefix)));
    }
    // Below the prefix, or above every value starting with it.
    let below = max.is_some_and(|m| m.as_slice() < prefix);
    let above = min.is_some_and(|m| m.as_slice() > prefix && !m.starts_with(prefix));
    !(below || above)
}

/// False only when `bounds` prove that no row makes the term evaluate to
/// `want` (TRUE or FALSE).
pub(super) fn term_may(term: &Term, kind: Kind, b: &Bounds<'_>, want: bool) -> bool {
    let key = |lit: &Literal| key_for(kind, lit).ok();
    let float = matches!(kind, Kind::F32 | Kind::F64);
    match &term.test {
        Test::IsNull if want => b.nulls != Some(0),
        Test::IsNull => !b.all_null,
        Test::Cmp(op, lit) => key(lit).is_none_or(|k| op_may(*op, &k, kind, b, want)),
        Test::Between(lo, hi) => match (key(lo), key(hi)) {
            (Some(lo), Some(hi)) if want => {
                cmp_may(Op::GtEq, &lo, kind, b) && cmp_may(Op::LtEq, &hi, kind, b)
            }
            (Some(lo), Some(hi)) => {
                !b.all_null
                    && (float || cmp_may(Op::Lt, &lo, kind, b) || cmp_may(Op::Gt, &hi, kind, b))
            }
            _ => true,
        },
        Test::In(values) => {
            let Some(keys) = values.iter().map(key).collect::<Option<Vec<Key>>>() else {
                return true;
            };
            if want {
                keys.iter().any(|k| cmp_may(Op::Eq, k, kind, b))
            } else {
                // A FALSE row holds a value unlike every listed one.
                !b.all_null && (float || keys.iter().all(|k| cmp_may(Op::NotEq, k, kind, b)))
            }
        }
        Test::StartsWith(prefix) if kind == Kind::Bytes => prefix_may(prefix.as_bytes(), b, want),
        Test::StartsWith(_) => true,
        // Only the pattern's plain head bounds the values, and only for
        // rows that match (a row that does not may still share the head).
        Test::Like(pattern) if kind == Kind::Bytes && want => match like_parts(pattern) {
            Ok(parts) => prefix_may(&like_prefix_bytes(&parts), b, true),
            Err(_) => true,
        },
        Test::Like(_) => true,
        // Two columns' statistics bound nothing about their rows' order.
        Test::CmpColumn(..) => true,
    }
}

/// False only when the bounds `of` gives for the terms prove that no row
/// makes `p` evaluate to `want`; `of` answers None for a term it knows
/// nothing about (any row may be TRUE, FALSE or unknown).
pub(super) fn tree_may<'a>(
    p: &Predicate,
    want: bool,
    of: &dyn Fn(&Term) -> Option<(Kind, Bounds<'a>)>,
) -> bool {
    match p {
        Predicate::Term(t) => of(t).is_none_or(|(kind, b)| term_may(t, kind, &b, want)),
        Predicate::Not(c) => tree_may(c, !want, of),
        // AND is TRUE where every part is, FALSE where any part is; OR the
        // other way round.
        Predicate::And(cs) if want => cs.iter().all(|c| tree_may(c, true, of)),
        Predicate::And(cs) => cs.iter().any(|c| tree_may(c, false, of)),
        Predicate::Or(cs) if want => cs.iter().any(|c| tree_may(c, true, of)),
        Predicate::Or(cs) => cs.iter().all(|c| tree_may(c, false, of)),
    }
}

/// The kind of a leaf column usable for pruning: None for nested or
/// repeated leaves (conservative).
pub(super) fn prunable_kind(cd: &ColumnDescriptor) -> Option<Kind> {
    (cd.max_rep_level() == 0 && cd.path().parts().len() == 1).then(|| leaf_kind(cd))
}

impl Predicate {
    /// false only when the row group's column-chunk statistics prove that no
    /// row satisfies the predicate; true when unsure (no statistics,
    /// unsupported type, ...).
    ///
    /// Only top-level, non-repeated columns are used; terms on nested
    /// columns, invalid terms and unknown columns count as "anything".
    pub fn row_group_may_match(&self, rg: &RowGroupMetaData) -> bool {
        if rg.num_rows() == 0 {
            return false;
        }
        let schema = rg.schema_descr();
        let of = |t: &Term| {
            let leaf = resolve(schema, &t.column)?.leaf?;
            let chunk = rg.column(leaf);
            let kind = prunable_kind(chunk.column_descr())?;
            let stats = chunk.statistics()?;
            let nulls = stats.null_count_opt();
            let (min, max) = stats_bounds(kind, stats);
            let bounds = Bounds {
                min,
                max,
                nulls,
                all_null: nulls.is_some_and(|n| i64::try_from(n).ok() == Some(rg.num_rows())),
            };
            Some((kind, bounds))
        };
        tree_may(self, true, &of)
    }

    /// For the leaf column `leaf` (index into the schema's leaves) and its
    /// column index in one row group: for each page, whether that page may
    /// contain rows satisfying the predicate, knowing only this column's
    /// page bounds (terms on other columns may be anything). None when the
    /// index is ColumnIndexMetaData::NONE or no term concerns this column.
    ///
    /// A page of NULLs only matches `IS NULL` (and what NULL makes TRUE,
    /// e.g. `x IS NULL OR x > 5`). For nested or repeated leaves every page
    /// may match.
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
        let on_leaf = |t: &Term| resolve(schema, &t.column).and_then(|r| r.leaf) == Some(leaf);
        if !self.terms().into_iter().any(on_leaf) {
            return None;
        }
        let pages = usize::try_from(index.num_pages()).ok()?;
        let Some(kind) = prunable_kind(rg.column(leaf).column_descr()) else {
            return Some(vec![true; pages]);
        };
        let out = (0..pages)
            .map(|p| {
                let of = |t: &Term| {
                    on_leaf(t).then(|| {
                        let (min, max) = page_bounds(kind, index, p);
                        let bounds = Bounds {
                            min,
                            max,
                            nulls: index.null_count(p).and_then(|n| u64::try_from(n).ok()),
                            all_null: index.is_null_page(p),
                        };
                        (kind, bounds)
                    })
                };
                tree_may(self, true, &of)
            })
            .collect();
        Some(out)
    }
}
