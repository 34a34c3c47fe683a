//! What a comparison becomes on a column of a given Arrow type, as plain
//! bytes for an evaluator outside arrow-rs (the GPU filter): the literal
//! converted exactly as [`Predicate::evaluate`](super::Predicate::evaluate)
//! converts it (`scalar.rs`'s plan), then laid out as the column stores
//! one value.

use ::arrow::array::{Array, AsArray};
use ::arrow::datatypes::DataType;

use super::ast::{Literal, Op, TermError};
use super::scalar::{plan_for, Plan};

/// A term `column op literal` on a column of one Arrow type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DevicePlan {
    /// Compare each value with this one: the literal as one value of the
    /// column's type, little-endian at the type's width (booleans: one
    /// byte, 0 or 1; strings and binary: their bytes).
    Cmp(Op, Vec<u8>),
    /// TRUE for every non-NULL value (unknown for NULL).
    AllNonNull,
    /// FALSE for every non-NULL value (unknown for NULL).
    Nothing,
}

/// `op lit` on a column of type `dt`, as the host evaluator computes it; a
/// binary literal on a string column compares the bytes. Errors as the
/// host evaluator's (a mismatched literal, a type without comparisons).
pub(crate) fn device_plan(dt: &DataType, op: Op, lit: &Literal) -> Result<DevicePlan, TermError> {
    let dt = match (dt, lit) {
        (DataType::Utf8View, Literal::Binary(_)) => &DataType::BinaryView,
        (DataType::Utf8, Literal::Binary(_)) => &DataType::Binary,
        (DataType::LargeUtf8, Literal::Binary(_)) => &DataType::LargeBinary,
        _ => dt,
    };
    let (op, scalar) = match plan_for(dt, op, lit)? {
        Plan::AllNonNull => return Ok(DevicePlan::AllNonNull),
        Plan::Nothing => return Ok(DevicePlan::Nothing),
        Plan::Cmp(op, scalar) => (op, scalar),
    };
    let array = scalar.into_inner();
    let unsupported = || TermError::Unsupported {
        column_type: dt.to_string(),
    };
    if array.len() != 1 || array.is_null(0) {
        return Err(unsupported());
    }
    let bytes = match array.data_type() {
        DataType::Boolean => vec![u8::from(array.as_boolean().value(0))],
        DataType::Utf8View => array.as_string_view().value(0).as_bytes().to_vec(),
        DataType::BinaryView => array.as_binary_view().value(0).to_vec(),
        DataType::Utf8 => array.as_string::<i32>().value(0).as_bytes().to_vec(),
        DataType::LargeUtf8 => array.as_string::<i64>().value(0).as_bytes().to_vec(),
        DataType::Binary => array.as_binary::<i32>().value(0).to_vec(),
        DataType::LargeBinary => array.as_binary::<i64>().value(0).to_vec(),
        t => {
            let width = t.primitive_width().ok_or_else(unsupported)?;
            let data = array.to_data();
            let start = data.offset() * width;
            let values = data.buffers().first().ok_or_else(unsupported)?;
            values
                .as_slice()
                .get(start..start + width)
                .ok_or_else(unsupported)?
                .to_vec()
        }
    };
    Ok(DevicePlan::Cmp(op, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::arrow::datatypes::TimeUnit;

    #[test]
    fn literals_become_one_value_of_the_columns_type() {
        let plan = |dt: &DataType, op, lit| device_plan(dt, op, &lit).unwrap();
        assert_eq!(
            plan(&DataType::Int16, Op::Lt, Literal::Int(-2)),
            DevicePlan::Cmp(Op::Lt, (-2i16).to_le_bytes().to_vec())
        );
        // 0.075 on scale 2 is <= 0.07.
        assert_eq!(
            plan(
                &DataType::Decimal128(10, 2),
                Op::Lt,
                Literal::Decimal {
                    digits: 75,
                    scale: 3
                }
            ),
            DevicePlan::Cmp(Op::LtEq, 7i128.to_le_bytes().to_vec())
        );
        assert_eq!(
            plan(&DataType::Int8, Op::Lt, Literal::Int(1000)),
            DevicePlan::AllNonNull
        );
        assert_eq!(
            plan(&DataType::UInt8, Op::Lt, Literal::Int(-1)),
            DevicePlan::Nothing
        );
        assert_eq!(
            plan(
                &DataType::Timestamp(TimeUnit::Millisecond, None),
                Op::Eq,
                Literal::Timestamp(2_000_000)
            ),
            DevicePlan::Cmp(Op::Eq, 2i64.to_le_bytes().to_vec())
        );
        assert_eq!(
            plan(&DataType::Float32, Op::Eq, Literal::Float(-0.0)),
            DevicePlan::Cmp(Op::Eq, 0f32.to_le_bytes().to_vec())
        );
        assert_eq!(
            plan(&DataType::Utf8View, Op::Gt, Literal::Binary(vec![0xff])),
            DevicePlan::Cmp(Op::Gt, vec![0xff])
        );
        assert_eq!(
            plan(&DataType::Boolean, Op::Eq, Literal::Bool(true)),
            DevicePlan::Cmp(Op::Eq, vec![1])
        );
        assert!(device_plan(&DataType::Int32, Op::Eq, &Literal::Str("x".into())).is_err());
        assert!(device_plan(&DataType::Float64, Op::Eq, &Literal::Float(f64::NAN)).is_err());
    }
}
