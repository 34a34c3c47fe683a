//! The Arrow arrays of an assembled layout and each leaf's values.

use super::*;

/// The Arrow arrays of the top-level `fields` from their layout and each
/// leaf's non-null values (`values`, by leaf column index, of the leaf's
/// Arrow type, in level order).
pub fn build_arrays(
    fields: &[NestField],
    assembly: &Assembly,
    values: &BTreeMap<usize, ArrayRef>,
) -> Result<Vec<ArrayRef>, NestError> {
    if fields.len() != assembly.fields.len() {
        return Err(NestError::LayoutMismatch {
            what: format!("{} fields, {} layouts", fields.len(), assembly.fields.len()),
        });
    }
    fields
        .iter()
        .zip(&assembly.fields)
        .map(|(field, layout)| build_node(&field.node, layout, values))
        .collect()
}

fn build_node(
    node: &NestNode,
    layout: &NodeLayout,
    values: &BTreeMap<usize, ArrayRef>,
) -> Result<ArrayRef, NestError> {
    match (node, layout) {
        (NestNode::Leaf(leaf), NodeLayout::Leaf(l)) => build_leaf(leaf, l, values),
        (NestNode::Struct(s), NodeLayout::Struct(l)) => build_struct(s, l, values),
        (NestNode::List(list), NodeLayout::List(l)) => build_list(list, l, values),
        (NestNode::Map(map), NodeLayout::Map(l)) => build_map(map, l, values),
        _ => Err(NestError::LayoutMismatch {
            what: format!(
                "a {} node with a {} layout",
                node_kind(node),
                layout_kind(layout)
            ),
        }),
    }
}

fn node_kind(node: &NestNode) -> &'static str {
    match node {
        NestNode::Leaf(_) => "leaf",
        NestNode::Struct(_) => "struct",
        NestNode::List(_) => "list",
        NestNode::Map(_) => "map",
    }
}

fn layout_kind(layout: &NodeLayout) -> &'static str {
    match layout {
        NodeLayout::Leaf(_) => "leaf",
        NodeLayout::Struct(_) => "struct",
        NodeLayout::List(_) => "list",
        NodeLayout::Map(_) => "map",
    }
}

fn null_buffer(validity: &Option<Vec<bool>>) -> Option<NullBuffer> {
    validity.as_ref().map(|v| NullBuffer::from(v.as_slice()))
}

/// A leaf's slots: its values gathered by value index, null where a slot
/// has no value.
fn build_leaf(
    leaf: &LeafNode,
    layout: &LeafLayout,
    values: &BTreeMap<usize, ArrayRef>,
) -> Result<ArrayRef, NestError> {
    let column = leaf.column;
    let given = values
        .get(&column)
        .ok_or(NestError::MissingValues { column })?;
    let expected = &leaf.column_type.data_type;
    if given.data_type() != expected {
        return Err(NestError::ValueType {
            column,
            expected: expected.clone(),
            found: given.data_type().clone(),
        });
    }
    if given.len() != layout.values {
        return Err(NestError::ValueCount {
            column,
            expected: layout.values,
            found: given.len(),
        });
    }
    if given.is_empty() {
        return Ok(new_null_array(expected, layout.value_index.len()));
    }
    // A slot without a value points at value 0 (masked by the null).
    let last = given.len() - 1;
    let indices: Vec<u64> = layout
        .value_index
        .iter()
        .map(|&i| i.min(last) as u64)
        .collect();
    let indices = UInt64Array::new(ScalarBuffer::from(indices), null_buffer(&layout.validity));
    take(given.as_ref(), &indices, None).map_err(NestError::from)
}

fn build_struct(
    node: &StructNode,
    layout: &StructLayout,
    values: &BTreeMap<usize, ArrayRef>,
) -> Result<ArrayRef, NestError> {
    if node.fields.len() != layout.fields.len() {
        return Err(NestError::LayoutMismatch {
            what: format!(
                "a struct of {} fields, {} layouts",
                node.fields.len(),
                layout.fields.len()
            ),
        });
    }
    let children = node
        .fields
        .iter()
        .zip(&layout.fields)
        .map(|(f, l)| build_node(&f.node, l, values))
        .collect::<Result<Vec<_>, _>>()?;
    let array = StructArray::try_new_with_length(
        arrow_fields(&node.fields),
        children,
        null_buffer(&layout.validity),
        layout.slots,
    )
    .map_err(NestError::from)?;
    Ok(Arc::new(array))
}

/// Offsets as Arrow takes them, checked (non-empty, from 0 up, never
/// decreasing) so that building cannot panic.
fn offset_buffer(offsets: &[i32]) -> Result<OffsetBuffer<i32>, NestError> {
    let monotonic = offsets.windows(2).all(|w| w[0] <= w[1]);
    if offsets.first().is_none_or(|&first| first < 0) || !monotonic {
        return Err(NestError::LayoutMismatch {
            what: "offsets empty, negative or decreasing".into(),
        });
    }
    Ok(OffsetBuffer::new(ScalarBuffer::from(offsets.to_vec())))
}

fn build_list(
    node: &ListNode,
    layout: &ListLayout,
    values: &BTreeMap<usize, ArrayRef>,
) -> Result<ArrayRef, NestError> {
    let element = build_node(&node.element.node, &layout.element, values)?;
    if let Some(size) = node.fixed {
        let array = FixedSizeListArray::try_new(
            Arc::new(node.element.arrow_field()),
            size as i32,
            element,
            null_buffer(&layout.validity),
        )
        .map_err(NestError::from)?;
        return Ok(Arc::new(array));
    }
    let array = ListArray::try_new(
        Arc::new(node.element.arrow_field()),
        offset_buffer(&layout.offsets)?,
        element,
        null_buffer(&layout.validity),
    )
    .map_err(NestError::from)?;
    Ok(Arc::new(array))
}

fn build_map(
    node: &MapNode,
    layout: &MapLayout,
    values: &BTreeMap<usize, ArrayRef>,
) -> Result<ArrayRef, NestError> {
    let key = build_node(&node.key.node, &layout.key, values)?;
    let value = build_node(&node.value.node, &layout.value, values)?;
    let entries_field = node.entries_field();
    let DataType::Struct(entry_fields) = entries_field.data_type() else {
        return Err(NestError::LayoutMismatch {
            what: "map entries that are not a struct".into(),
        });
    };
    let entries = StructArray::try_new(entry_fields.clone(), vec![key, value], None)
        .map_err(NestError::from)?;
    let array = MapArray::try_new(
        Arc::new(entries_field),
        offset_buffer(&layout.offsets)?,
        entries,
        null_buffer(&layout.validity),
        false,
    )
    .map_err(NestError::from)?;
    Ok(Arc::new(array))
}
