//! One device-resident Arrow column, checked against Arrow's layout of its type.

use arrow::array::{layout, BufferSpec};
use arrow::datatypes::DataType;

use super::{DeviceArrayError, DeviceBytes, MemoryLocation, Result};

/// Whether `data_type` is a flat type: no children, no dictionary. These are
/// the types device columns hold.
pub(crate) fn is_flat(data_type: &DataType) -> bool {
    !matches!(
        data_type,
        DataType::List(_)
            | DataType::LargeList(_)
            | DataType::ListView(_)
            | DataType::LargeListView(_)
            | DataType::FixedSizeList(_, _)
            | DataType::Struct(_)
            | DataType::Union(_, _)
            | DataType::Dictionary(_, _)
            | DataType::Map(_, _)
            | DataType::RunEndEncoded(_, _)
    )
}

/// Whether the first buffer of `data_type` holds offsets (`len + 1` entries).
pub(crate) fn has_offsets(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary
    )
}

/// A flat Arrow column whose buffers live in device memory (or in a host
/// stand-in, see [`HostMemory`](super::HostMemory)).
///
/// `buffers` follow the C Data Interface order after the validity bitmap:
/// values (fixed-width types, booleans as bits); offsets then data
/// (Utf8/Binary and their Large forms); or views followed by the variadic
/// data buffers (Utf8View/BinaryView: a view's buffer index `i` refers to
/// `buffers[1 + i]`). The Null type has no buffers.
#[derive(Clone, Debug)]
pub struct DeviceColumn {
    data_type: DataType,
    offset: usize,
    len: usize,
    null_count: Option<usize>,
    validity: Option<DeviceBytes>,
    buffers: Vec<DeviceBytes>,
}

impl DeviceColumn {
    /// A column of `len` values starting at the beginning of its buffers.
    ///
    /// `null_count` is `None` while unknown (the C export then says -1, as the
    /// C Data Interface allows); `validity` is `None` when no value is null.
    /// Fails when the type is not flat, or when the buffers are too few, too
    /// many or too short for `len` values of the type.
    pub fn new(
        data_type: DataType,
        len: usize,
        null_count: Option<usize>,
        validity: Option<DeviceBytes>,
        buffers: Vec<DeviceBytes>,
    ) -> Result<DeviceColumn> {
        DeviceColumn::with_offset(data_type, 0, len, null_count, validity, buffers)
    }

    /// As [`DeviceColumn::new`], for a column whose values start `offset`
    /// values (bits, for bitmaps) into its buffers, as Arrow's array offset.
    pub fn with_offset(
        data_type: DataType,
        offset: usize,
        len: usize,
        null_count: Option<usize>,
        validity: Option<DeviceBytes>,
        buffers: Vec<DeviceBytes>,
    ) -> Result<DeviceColumn> {
        let null_count = check(
            &data_type,
            offset,
            len,
            null_count,
            validity.as_ref(),
            &buffers,
        )?;
        Ok(DeviceColumn {
            data_type,
            offset,
            len,
            null_count,
            validity,
            buffers,
        })
    }

    /// The Arrow type.
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// The Arrow offset (in values) of the first value in the buffers.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the column has no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of nulls, when known.
    pub fn null_count(&self) -> Option<usize> {
        self.null_count
    }

    /// The validity bitmap (bit set = valid), if any value may be null.
    pub fn validity(&self) -> Option<&DeviceBytes> {
        self.validity.as_ref()
    }

    /// The buffers after the validity bitmap, in C Data Interface order.
    pub fn buffers(&self) -> &[DeviceBytes] {
        &self.buffers
    }

    /// For Utf8View/BinaryView: the variadic data buffers (after the views).
    pub fn variadic_buffers(&self) -> &[DeviceBytes] {
        if is_view(&self.data_type) {
            &self.buffers[1..]
        } else {
            &[]
        }
    }

    /// Every buffer of the column, validity first.
    pub fn all_buffers(&self) -> impl Iterator<Item = &DeviceBytes> {
        self.validity.iter().chain(self.buffers.iter())
    }

    /// Bytes held by the column's buffers (ranges, not whole allocations).
    pub fn byte_size(&self) -> usize {
        self.all_buffers().map(DeviceBytes::len).sum()
    }

    /// Where the column's buffers live (`None` for a column without buffers).
    pub fn location(&self) -> Option<MemoryLocation> {
        self.all_buffers().next().map(DeviceBytes::location)
    }
}

fn is_view(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Utf8View | DataType::BinaryView)
}

/// Checks a column against Arrow's layout of its type; returns the null
/// count to keep (the Null type's is always its length).
fn check(
    data_type: &DataType,
    offset: usize,
    len: usize,
    null_count: Option<usize>,
    validity: Option<&DeviceBytes>,
    buffers: &[DeviceBytes],
) -> Result<Option<usize>> {
    if !is_flat(data_type) {
        return Err(DeviceArrayError::Unsupported {
            data_type: data_type.clone(),
        });
    }
    let bad = |problem: String| Err(DeviceArrayError::layout(data_type, problem));
    let Some(end) = offset.checked_add(len) else {
        return bad(format!("offset {offset} + length {len} overflows"));
    };
    let spec = layout(data_type);
    let count_ok = if spec.variadic {
        buffers.len() >= spec.buffers.len()
    } else {
        buffers.len() == spec.buffers.len()
    };
    if !count_ok {
        return bad(format!(
            "{} buffers after the validity bitmap, the type has {}{}",
            buffers.len(),
            spec.buffers.len(),
            if spec.variadic { " or more" } else { "" }
        ));
    }
    for (i, (buffer_spec, buffer)) in spec.buffers.iter().zip(buffers).enumerate() {
        let need = match buffer_spec {
            BufferSpec::FixedWidth { byte_width, .. } => {
                let values = if i == 0 && has_offsets(data_type) && end > 0 {
                    end + 1
                } else {
                    end
                };
                values.checked_mul(*byte_width)
            }
            BufferSpec::BitMap => Some(end.div_ceil(8)),
            BufferSpec::VariableWidth | BufferSpec::AlwaysNull => Some(0),
        };
        match need {
            Some(need) if buffer.len() >= need => {}
            _ => {
                return bad(format!(
                    "buffer {i} holds {} bytes, {end} values need {}",
                    buffer.len(),
                    need.map_or_else(|| "more".to_string(), |n| n.to_string())
                ))
            }
        }
    }
    if let Some(validity) = validity {
        if !spec.can_contain_null_mask {
            return bad("a validity bitmap on a type that has none".to_string());
        }
        if validity.len() < end.div_ceil(8) {
            return bad(format!(
                "validity bitmap holds {} bytes, {end} values need {}",
                validity.len(),
                end.div_ceil(8)
            ));
        }
    }
    if *data_type == DataType::Null {
        return match null_count {
            None => Ok(Some(len)),
            Some(n) if n == len => Ok(Some(len)),
            Some(n) => bad(format!("a Null column of {len} values with {n} nulls")),
        };
    }
    match null_count {
        Some(n) if n > len => bad(format!("{n} nulls in {len} values")),
        Some(n) if n > 0 && validity.is_none() => bad(format!("{n} nulls and no validity bitmap")),
        _ => Ok(null_count),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::Field;
    use std::sync::Arc;

    fn host(len: usize) -> DeviceBytes {
        DeviceBytes::host(&vec![0u8; len])
    }

    fn problem(result: Result<DeviceColumn>) -> String {
        match result {
            Err(DeviceArrayError::Layout { problem, .. }) => problem,
            other => panic!("expected a layout error, got {other:?}"),
        }
    }

    #[test]
    fn accepts_columns_that_match_the_layout() {
        let c =
            DeviceColumn::new(DataType::Int32, 10, Some(2), Some(host(2)), vec![host(40)]).unwrap();
        assert_eq!((c.len(), c.null_count(), c.byte_size()), (10, Some(2), 42));
        assert!(c.variadic_buffers().is_empty());
        DeviceColumn::new(DataType::Boolean, 17, Some(0), None, vec![host(3)]).unwrap();
        DeviceColumn::new(DataType::Decimal128(12, 2), 3, None, None, vec![host(48)]).unwrap();
        DeviceColumn::new(DataType::Utf8, 2, None, None, vec![host(12), host(0)]).unwrap();
        DeviceColumn::new(DataType::Utf8, 0, None, None, vec![host(0), host(0)]).unwrap();
        let views =
            DeviceColumn::new(DataType::Utf8View, 2, Some(0), None, vec![host(32)]).unwrap();
        assert!(views.variadic_buffers().is_empty());
        let views = DeviceColumn::new(
            DataType::BinaryView,
            2,
            Some(0),
            None,
            vec![host(32), host(100), host(7)],
        )
        .unwrap();
        assert_eq!(views.variadic_buffers().len(), 2);
        let nulls = DeviceColumn::new(DataType::Null, 5, None, None, vec![]).unwrap();
        assert_eq!(nulls.null_count(), Some(5));
        assert_eq!(nulls.location(), None);
        // An offset counts: 4 + 4 values of 8 bytes, bitmap bits 4..8.
        DeviceColumn::with_offset(DataType::Int64, 4, 4, None, Some(host(1)), vec![host(64)])
            .unwrap();
    }

    #[test]
    fn rejects_columns_that_do_not_match() {
        assert!(problem(DeviceColumn::new(
            DataType::Int32,
            10,
            None,
            None,
            vec![host(39)]
        ))
        .contains("buffer 0 holds 39 bytes"));
        assert!(problem(DeviceColumn::new(
            DataType::Int32,
            10,
            Some(1),
            Some(host(1)),
            vec![host(40)]
        ))
        .contains("validity bitmap holds 1 bytes"));
        assert!(
            problem(DeviceColumn::new(DataType::Int32, 1, None, None, vec![]))
                .contains("0 buffers")
        );
        assert!(problem(DeviceColumn::new(
            DataType::Int32,
            1,
            None,
            None,
            vec![host(4), host(4)]
        ))
        .contains("2 buffers"));
        assert!(
            problem(DeviceColumn::new(DataType::Utf8View, 1, None, None, vec![]))
                .contains("or more")
        );
        assert!(problem(DeviceColumn::new(
            DataType::Utf8,
            2,
            None,
            None,
            vec![host(8), host(0)]
        ))
        .contains("buffer 0 holds 8 bytes"));
        assert!(problem(DeviceColumn::new(
            DataType::Int8,
            2,
            Some(3),
            Some(host(1)),
            vec![host(2)]
        ))
        .contains("3 nulls in 2 values"));
        assert!(problem(DeviceColumn::new(
            DataType::Int8,
            2,
            Some(1),
            None,
            vec![host(2)]
        ))
        .contains("no validity bitmap"));
        assert!(problem(DeviceColumn::new(
            DataType::Null,
            2,
            None,
            Some(host(1)),
            vec![]
        ))
        .contains("has none"));
        assert!(
            problem(DeviceColumn::new(DataType::Null, 2, Some(1), None, vec![]))
                .contains("Null column")
        );
        assert!(problem(DeviceColumn::with_offset(
            DataType::Int8,
            usize::MAX,
            2,
            None,
            None,
            vec![host(2)]
        ))
        .contains("overflows"));
        let nested = DataType::List(Arc::new(Field::new("item", DataType::Int32, true)));
        assert!(matches!(
            DeviceColumn::new(nested, 0, None, None, vec![]),
            Err(DeviceArrayError::Unsupported { .. })
        ));
    }
}
