//! Where one column's page output lies ([`ColumnOut`]): what the stage
//! allocates per plan column and the finish makes into device columns,
//! flat or as a nested leaf.

use crate::decode::array::DeviceBytes;

/// Where one column's output lies.
pub(crate) struct ColumnOut {
    pub(super) values: DeviceBytes,
    pub(super) validity: Option<DeviceBytes>,
    /// Views' data buffers (row-group bytes, decompressed scratch).
    pub(super) variadic: Vec<DeviceBytes>,
}
