//! Columns of the schema: their kinds, and the literals they compare with.

use ::parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use ::parquet::schema::types::{ColumnDescriptor, SchemaDescriptor};

use super::ast::*;
use super::exact::*;
use super::parse::*;

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
            Kind::Int { scale, .. } | Kind::DecBytes { scale, .. } => scale,
            _ => 0,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Bool => "a BOOLEAN",
            Kind::Int { scale: 0, .. } => "an integer",
            Kind::Int { .. } | Kind::DecBytes { .. } => "a DECIMAL",
            Kind::Date => "a DATE",
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
        Kind::F32 => lit_f32(lit)
            .map(|v| Key::Flt(f64::from(v)))
            .ok_or_else(mismatch),
        Kind::F64 => lit_f64(lit).map(Key::Flt).ok_or_else(mismatch),
        Kind::Bytes => match lit {
            Literal::Str(s) => Ok(Key::Bytes(s.as_bytes().to_vec())),
            _ => Err(mismatch()),
        },
    }
}

/// Days of a date literal or `'YYYY-MM-DD'` string; Err(Some) for a string
/// that is not a date, Err(None) for other literals.
pub(super) fn date_of(lit: &Literal) -> Result<i32, Option<TermError>> {
    match lit {
        Literal::Date(d) => Ok(*d),
        Literal::Str(s) => {
            parse_date(s).ok_or_else(|| Some(TermError::NotADate { text: s.clone() }))
        }
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
    let null_test = matches!(term.op, Op::IsNull | Op::IsNotNull);
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
    if null_test {
        return Ok(());
    }
    let lit = term
        .value
        .as_ref()
        .ok_or_else(|| type_err(TermError::NeedsLiteral { op: term.op }))?;
    key_for(leaf_kind(&cd), lit).map(|_| ()).map_err(type_err)
}

impl Predicate {
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
}
