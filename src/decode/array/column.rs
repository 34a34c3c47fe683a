//! One device-resident Arrow column, checked against Arrow's layout of its type.

use arrow::array::{layout, BufferSpec};
use arrow::datatypes::{DataType, Field};

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
        DataType::Utf8
            | DataType::Binary
            | DataType::LargeUtf8
            | DataType::LargeBinary
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::Map(_, _)
    )
}

/// The child fields of a nested type device columns hold (List, LargeList,
/// Map, FixedSizeList, Struct); `None` for flat and unsupported types.
pub(crate) fn child_fields(data_type: &DataType) -> Option<Vec<&Field>> {
    match data_type {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::Map(f, _)
        | DataType::FixedSizeList(f, _) => Some(vec![f.as_ref()]),
        DataType::Struct(fields) => Some(fields.iter().map(|f| f.as_ref()).collect()),
        _ => None,
    }
}

/// An Arrow column whose buffers live in device memory (or in a host
/// stand-in, see [`HostMemory`](super::HostMemory)).
///
/// `buffers` follow the C Data Interface order after the validity bitmap:
/// values (fixed-width types, booleans as bits); offsets then data
/// (Utf8/Binary and their Large forms); or views followed by the variadic
/// data buffers (Utf8View/BinaryView: a view's buffer index `i` refers to
/// `buffers[1 + i]`). The Null type has no buffers. Nested columns
/// ([`DeviceColumn::with_children`]) hold their offsets (List, LargeList,
/// Map) or nothing (Struct, FixedSizeList) and their children.
#[derive(Clone, Debug)]
pub struct DeviceColumn {
    data_type: DataType,
    offset: usize,
    len: usize,
    null_count: Option<usize>,
    validity: Option<DeviceBytes>,
    buffers: Vec<DeviceBytes>,
    children: Vec<DeviceColumn>,
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

    /// A column of arrow's Null type: `len` values, all null, no buffers
    /// (the C Data Interface's `n_buffers` 0, `null_count` `len`).
    pub fn nulls(len: usize) -> DeviceColumn {
        DeviceColumn {
            data_type: DataType::Null,
            offset: 0,
            len,
            null_count: Some(len),
            validity: None,
            buffers: Vec::new(),
            children: Vec::new(),
        }
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
        if !is_flat(&data_type) {
            return Err(DeviceArrayError::Unsupported { data_type });
        }
        DeviceColumn::checked(
            data_type,
            offset,
            len,
            null_count,
            validity,
            buffers,
            Vec::new(),
        )
    }

    /// A nested column of `len` values: a List, LargeList or Map (`buffers`
    /// is its offsets, `len + 1` of them), a FixedSizeList or a Struct (no
    /// buffers), and its `children` (one, or one per struct field, each of
    /// its field's type, on the same memory). A struct's children and a
    /// fixed-size list's child must hold the values the parent reaches; a
    /// list's offsets are device data, checked against its child when the
    /// column is copied back ([`DeviceBatch::to_host`](super::DeviceBatch::to_host)).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow::datatypes::{DataType, Field};
    /// use gdscan::decode::array::{DeviceBytes, DeviceColumn};
    ///
    /// let item = Field::new("item", DataType::Int32, false);
    /// let values = DeviceColumn::new(DataType::Int32, 3, Some(0), None,
    ///     vec![DeviceBytes::host(&[0u8; 12])]).unwrap();
    /// let offsets: Vec<u8> = [0i32, 1, 3].iter().flat_map(|o| o.to_le_bytes()).collect();
    /// let list = DeviceColumn::with_children(DataType::List(Arc::new(item)), 2, Some(0), None,
    ///     vec![DeviceBytes::host(&offsets)], vec![values]).unwrap();
    /// assert_eq!(list.children().len(), 1);
    /// ```
    pub fn with_children(
        data_type: DataType,
        len: usize,
        null_count: Option<usize>,
        validity: Option<DeviceBytes>,
        buffers: Vec<DeviceBytes>,
        children: Vec<DeviceColumn>,
    ) -> Result<DeviceColumn> {
        DeviceColumn::with_children_at(data_type, 0, len, null_count, validity, buffers, children)
    }

    /// As [`DeviceColumn::with_children`], for a column whose values start
    /// `offset` values into its buffers (its children are whole arrays, as
    /// the C Data Interface imports them).
    pub(crate) fn with_children_at(
        data_type: DataType,
        offset: usize,
        len: usize,
        null_count: Option<usize>,
        validity: Option<DeviceBytes>,
        buffers: Vec<DeviceBytes>,
        children: Vec<DeviceColumn>,
    ) -> Result<DeviceColumn> {
        let Some(fields) = child_fields(&data_type) else {
            return Err(DeviceArrayError::Unsupported { data_type });
        };
        let bad = |problem: String| Err(DeviceArrayError::layout(&data_type, problem));
        if children.len() != fields.len() {
            return bad(format!(
                "{} children, the type has {}",
                children.len(),
                fields.len()
            ));
        }
        let end = offset.saturating_add(len);
        let reached = match &data_type {
            DataType::Struct(_) => Some(end),
            DataType::FixedSizeList(_, size) => usize::try_from(*size)
                .ok()
                .and_then(|size| size.checked_mul(end)),
            _ => None,
        };
        for (i, (field, child)) in fields.iter().zip(&children).enumerate() {
            if child.data_type() != field.data_type() {
                return bad(format!(
                    "child {i} is {} where the type says {}",
                    child.data_type(),
                    field.data_type()
                ));
            }
            if let Some(reached) = reached {
                if child.len() < reached {
                    return bad(format!(
                        "child {i} holds {} values, the column reaches {reached}",
                        child.len()
                    ));
                }
            }
        }
        DeviceColumn::checked(
            data_type, offset, len, null_count, validity, buffers, children,
        )
    }

    /// The column, after its own buffers are checked against its type's
    /// layout (the callers check the type and the children).
    fn checked(
        data_type: DataType,
        offset: usize,
        len: usize,
        null_count: Option<usize>,
        validity: Option<DeviceBytes>,
        buffers: Vec<DeviceBytes>,
        children: Vec<DeviceColumn>,
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
            children,
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

    /// The children of a nested column (empty for a flat one).
    pub fn children(&self) -> &[DeviceColumn] {
        &self.children
    }

    /// Every buffer of the column, validity first, then its children's.
    pub fn all_buffers(&self) -> impl Iterator<Item = &DeviceBytes> {
        let mut all: Vec<&DeviceBytes> = self.validity.iter().chain(self.buffers.iter()).collect();
        for child in &self.children {
            all.extend(child.all_buffers());
        }
        all.into_iter()
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
    if !is_flat(data_type) && child_fields(data_type).is_none() {
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
        // The Null leaf's constructor: the same shape, no buffers at all.
        let leaf = DeviceColumn::nulls(5);
        assert_eq!(
            (
                leaf.data_type(),
                leaf.len(),
                leaf.null_count(),
                leaf.offset()
            ),
            (&DataType::Null, 5, Some(5), 0)
        );
        assert!(leaf.validity().is_none() && leaf.buffers().is_empty());
        assert!(leaf.children().is_empty() && leaf.byte_size() == 0);
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

    fn ints(len: usize) -> DeviceColumn {
        DeviceColumn::new(DataType::Int32, len, Some(0), None, vec![host(4 * len)]).unwrap()
    }

    #[test]
    fn nested_columns_check_their_children() {
        let item = Arc::new(Field::new("item", DataType::Int32, true));
        let list = DataType::List(item.clone());
        let c = DeviceColumn::with_children(
            list.clone(),
            3,
            Some(0),
            None,
            vec![host(16)],
            vec![ints(5)],
        )
        .unwrap();
        assert_eq!(c.children().len(), 1);
        assert_eq!(c.byte_size(), 16 + 20);
        assert_eq!(c.all_buffers().count(), 2);
        assert!(problem(DeviceColumn::with_children(
            list.clone(),
            3,
            None,
            None,
            vec![host(12)],
            vec![ints(5)]
        ))
        .contains("buffer 0 holds 12 bytes"));
        assert!(problem(DeviceColumn::with_children(
            list.clone(),
            3,
            None,
            None,
            vec![host(16)],
            vec![]
        ))
        .contains("0 children, the type has 1"));
        let longs = DeviceColumn::new(DataType::Int64, 1, None, None, vec![host(8)]).unwrap();
        assert!(problem(DeviceColumn::with_children(
            list,
            3,
            None,
            None,
            vec![host(16)],
            vec![longs]
        ))
        .contains("child 0 is Int64"));
        let fields: arrow::datatypes::Fields = vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Int32, true),
        ]
        .into();
        let strukt = DataType::Struct(fields);
        DeviceColumn::with_children(
            strukt.clone(),
            4,
            None,
            Some(host(1)),
            vec![],
            vec![ints(4), ints(6)],
        )
        .unwrap();
        assert!(problem(DeviceColumn::with_children(
            strukt,
            4,
            None,
            None,
            vec![],
            vec![ints(4), ints(3)]
        ))
        .contains("child 1 holds 3 values, the column reaches 4"));
        let fixed = DataType::FixedSizeList(item, 3);
        DeviceColumn::with_children(fixed.clone(), 2, None, None, vec![], vec![ints(6)]).unwrap();
        assert!(problem(DeviceColumn::with_children(
            fixed,
            2,
            None,
            None,
            vec![],
            vec![ints(5)]
        ))
        .contains("reaches 6"));
        assert!(matches!(
            DeviceColumn::with_children(DataType::Int32, 1, None, None, vec![host(4)], vec![]),
            Err(DeviceArrayError::Unsupported { .. })
        ));
    }
}
