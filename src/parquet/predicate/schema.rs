//! Columns of the schema: their kinds, and the literals they compare with.

use ::parquet::basic::{ConvertedType, LogicalType, TimeUnit, Type as PhysicalType};
use ::parquet::schema::types::{ColumnDescriptor, SchemaDescriptor};

use super::ast::*;
use super::exact::*;
use super::like::like_parts;
use super::time::*;

// ---------------------------------------------------------------------------
// Parquet columns: resolution, kinds, literal keys
// ---------------------------------------------------------------------------

/// How values of a Parquet leaf column compare.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Bool,
    /// INT32/INT64 holding `stored / 10^scale` (plain integers have scale 0).
    Int {
        scale: i32,
        unsigned: bool,
    },
    /// INT32 days since the epoch.
    Date,
    /// INT64 timestamps in units of `10^-scale` seconds (3, 6 or 9).
    Timestamp {
        scale: i32,
    },
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
    pub(super) fn scale(self) -> i32 {
        match self {
            Kind::Int { scale, .. } | Kind::DecBytes { scale, .. } | Kind::Timestamp { scale } => {
                scale
            }
            _ => 0,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Bool => "a BOOLEAN",
            Kind::Int { scale: 0, .. } => "an integer",
            Kind::Int { .. } | Kind::DecBytes { .. } => "a DECIMAL",
            Kind::Date => "a DATE",
            Kind::Timestamp { .. } => "a TIMESTAMP",
            Kind::F32 | Kind::F64 => "a floating-point",
            Kind::Bytes => "a string",
            Kind::Other(what) => what,
        }
    }
}

pub(super) fn leaf_kind(cd: &ColumnDescriptor) -> Kind {
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
                (Some(LogicalType::Timestamp(t)), _)
                    if cd.physical_type() == PhysicalType::INT64 =>
                {
                    Kind::Timestamp {
                        scale: match t.unit {
                            TimeUnit::MILLIS => 3,
                            TimeUnit::MICROS => 6,
                            TimeUnit::NANOS => 9,
                        },
                    }
                }
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
                (None, ConvertedType::TIMESTAMP_MILLIS)
                    if cd.physical_type() == PhysicalType::INT64 =>
                {
                    Kind::Timestamp { scale: 3 }
                }
                (None, ConvertedType::TIMESTAMP_MICROS)
                    if cd.physical_type() == PhysicalType::INT64 =>
                {
                    Kind::Timestamp { scale: 6 }
                }
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
pub(super) struct Resolved {
    /// The leaf column, or None for a top-level group (struct, list, map).
    pub(super) leaf: Option<usize>,
    /// Whether the name is a top-level field name.
    pub(super) top_level: bool,
}

pub(super) fn resolve(schema: &SchemaDescriptor, name: &str) -> Option<Resolved> {
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
pub(super) enum Key {
    Exact(Exact),
    Flt(f64),
    Bytes(Vec<u8>),
    Bool(bool),
}

pub(super) fn key_for(kind: Kind, lit: &Literal) -> Result<Key, TermError> {
    if nan_literal(lit) {
        return Err(TermError::NanLiteral);
    }
    let mismatch = || TermError::Mismatch {
        column: format!("{} column", kind.name()),
        literal: describe(lit),
    };
    match kind {
        Kind::Other(what) => Err(TermError::Unsupported {
            column_type: what.to_string(),
        }),
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
        Kind::Timestamp { .. } => timestamp_of(lit)
            .map(|n| Key::Exact(Exact::Val(n, 9)))
            .map_err(|e| e.unwrap_or_else(mismatch)),
        Kind::F32 => lit_f32(lit)
            .map(|v| Key::Flt(f64::from(v)))
            .ok_or_else(mismatch),
        Kind::F64 => lit_f64(lit).map(Key::Flt).ok_or_else(mismatch),
        Kind::Bytes => match lit {
            Literal::Str(s) => Ok(Key::Bytes(s.as_bytes().to_vec())),
            Literal::Binary(b) => Ok(Key::Bytes(b.clone())),
            _ => Err(mismatch()),
        },
    }
}

/// Nanoseconds since the epoch of a timestamp or date literal, or of a
/// `'YYYY-MM-DD HH:MM:SS[.f]'` (or `'YYYY-MM-DD'`) string; Err(Some) for a
/// string that is neither, Err(None) for other literals.
pub(super) fn timestamp_of(lit: &Literal) -> Result<i128, Option<TermError>> {
    match lit {
        Literal::Timestamp(n) => Ok(*n),
        Literal::Date(d) => Ok(i128::from(*d) * DAY_NANOS),
        Literal::Str(s) => parse_timestamp(s)
            .or_else(|| parse_date(s).map(|d| i128::from(d) * DAY_NANOS))
            .ok_or_else(|| {
                Some(TermError::NotADate {
                    text: s.clone(),
                    what: "timestamp",
                    form: "YYYY-MM-DD HH:MM:SS[.ffffff]",
                })
            }),
        _ => Err(None),
    }
}

/// Days of a date literal or `'YYYY-MM-DD'` string; Err(Some) for a string
/// that is not a date, Err(None) for other literals.
pub(super) fn date_of(lit: &Literal) -> Result<i32, Option<TermError>> {
    match lit {
        Literal::Date(d) => Ok(*d),
        Literal::Str(s) => parse_date(s).ok_or_else(|| {
            Some(TermError::NotADate {
                text: s.clone(),
                what: "date",
                form: "YYYY-MM-DD",
            })
        }),
        _ => Err(None),
    }
}

pub(super) fn check_term(schema: &SchemaDescriptor, term: &Term) -> Result<(), PredicateError> {
    let resolved = resolve(schema, &term.column)
        .ok_or_else(|| PredicateError::UnknownColumn(term.column.clone()))?;
    let type_err = |source: TermError| PredicateError::Type {
        column: term.column.clone(),
        source,
    };
    let null_test = term.test == Test::IsNull;
    let Some(leaf) = resolved.leaf else {
        return if null_test {
            Ok(())
        } else {
            Err(type_err(TermError::Nested))
        };
    };
    let cd = schema.column(leaf);
    if cd.max_rep_level() > 0 {
        return if null_test && resolved.top_level {
            Ok(())
        } else {
            Err(type_err(TermError::Repeated))
        };
    }
    let kind = leaf_kind(&cd);
    if let Test::CmpColumn(_, other) = &term.test {
        return check_other_column(schema, term, other, kind);
    }
    if matches!(term.test, Test::StartsWith(_) | Test::Like(_)) && kind != Kind::Bytes {
        return Err(type_err(TermError::Like {
            column_type: format!("{} column", kind.name()),
        }));
    }
    if let Test::Like(pattern) = &term.test {
        like_parts(pattern).map_err(|(_, why)| type_err(TermError::Pattern(why)))?;
    }
    term.literals()
        .into_iter()
        .try_for_each(|lit| key_for(kind, lit).map(|_| ()))
        .map_err(type_err)
}

/// The right column of `term` (a column comparison) must be a flat leaf
/// of the left one's kind, `kind`.
fn check_other_column(
    schema: &SchemaDescriptor,
    term: &Term,
    other: &str,
    kind: Kind,
) -> Result<(), PredicateError> {
    let resolved =
        resolve(schema, other).ok_or_else(|| PredicateError::UnknownColumn(other.to_string()))?;
    let type_err = |source: TermError| PredicateError::Type {
        column: other.to_string(),
        source,
    };
    let Some(leaf) = resolved.leaf else {
        return Err(type_err(TermError::Nested));
    };
    let cd = schema.column(leaf);
    if cd.max_rep_level() > 0 {
        return Err(type_err(TermError::Repeated));
    }
    let other_kind = leaf_kind(&cd);
    if other_kind != kind {
        return Err(type_err(TermError::Mismatch {
            column: format!("{} column", other_kind.name()),
            literal: format!("{} column {}", kind.name(), term.column),
        }));
    }
    Ok(())
}

/// The part of `p` that fits `schema`, selecting every row `p` selects
/// (`positive`), or every row `p` does not select (under an odd number of
/// NOTs): a term that does not fit drops out of an AND in positive places
/// and out of an OR in negative ones, and elsewhere takes its parent with
/// it. None when nothing is left.
fn fit(p: &Predicate, schema: &SchemaDescriptor, positive: bool) -> Option<Predicate> {
    match p {
        Predicate::Term(t) => check_term(schema, t).is_ok().then(|| p.clone()),
        Predicate::Not(c) => fit(c, schema, !positive).map(Predicate::negate),
        Predicate::And(cs) | Predicate::Or(cs) => {
            let and = matches!(p, Predicate::And(_));
            let fitted: Vec<Option<Predicate>> =
                cs.iter().map(|c| fit(c, schema, positive)).collect();
            let mut kept: Vec<Predicate> = if and == positive {
                // Dropping a part widens an AND (narrows an OR under NOT).
                fitted.into_iter().flatten().collect()
            } else {
                fitted.into_iter().collect::<Option<Vec<_>>>()?
            };
            if kept.len() <= 1 {
                return kept.pop();
            }
            Some(if and {
                Predicate::And(kept)
            } else {
                Predicate::Or(kept)
            })
        }
    }
}

impl Predicate {
    /// Checks every column exists (as a top-level column name or a dotted
    /// leaf path like "a.b.c") and that each literal can be compared with the
    /// column's type; returns PredicateError otherwise.
    ///
    /// Nested (group) and repeated columns only support `IS [NOT] NULL`, on
    /// their top-level name; comparisons need a primitive, non-repeated leaf
    /// (top-level or inside structs) of a supported type: boolean, integer,
    /// decimal, date, timestamp (INT64), float, string or binary; `LIKE`
    /// needs a string or binary column.
    pub fn validate(&self, schema: &SchemaDescriptor) -> Result<(), PredicateError> {
        self.terms()
            .into_iter()
            .try_for_each(|t| check_term(schema, t))
    }

    /// A predicate that [`Predicate::validate`] accepts for `schema` and
    /// that selects every row `self` selects (a superset): terms on columns
    /// the file lacks, or with literals of another type, are left out where
    /// leaving them out only widens the selection (out of an AND; an OR or
    /// a negated AND holding one goes as a whole). None when nothing is
    /// left.
    pub fn fitting(&self, schema: &SchemaDescriptor) -> Option<Predicate> {
        fit(self, schema, true)
    }
}
