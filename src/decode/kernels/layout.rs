//! The layout of the structs the kernels share with the host: each field's
//! name, offset and size, from which `task.rs` writes the C header's
//! asserts (for [`PageTask`](super::PageTask), `DictTask` and the nesting
//! kernels' structs alike).

/// One field of a mirrored struct: name, offset, size.
pub type FieldLayout = (&'static str, usize, usize);

/// The [`FieldLayout`]s of the named fields of a `repr(C)` struct, in
/// order.
macro_rules! fields {
    ($ty:ty; $($field:ident),+ $(,)?) => {
        &[$((
            stringify!($field),
            std::mem::offset_of!($ty, $field),
            {
                const fn size_of_field<T, F>(_: fn(&T) -> &F) -> usize { std::mem::size_of::<F>() }
                size_of_field(|t: &$ty| &t.$field)
            },
        )),+]
    };
}

pub(crate) use fields;
