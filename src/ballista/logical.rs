//! The logical codec: a gdscan table travels from the client to the
//! scheduler as its location and options; the scheduler opens it again
//! (its files' footers, through gdscan) and checks that the schema is the
//! one the client planned with.

use std::sync::Arc;

use ::datafusion::arrow::datatypes::SchemaRef;
use ::datafusion::catalog::TableProvider;
use ::datafusion::common::config::TableParquetOptions;
use ::datafusion::common::TableReference;
use ::datafusion::datasource::file_format::FileFormatFactory;
use ::datafusion::error::Result;
use ::datafusion::execution::TaskContext;
use ::datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion_proto::logical_plan::LogicalExtensionCodec;

use super::error::ClusterError;
use super::wire::{self, Table, TableOptions, TABLE_TAG};
use crate::datafusion::{to_datafusion, GdsTable};

/// Ballista's logical codec with gdscan's tables: a [`GdsTable`] is written
/// by gdscan, everything else by `inner` (Ballista's own).
#[derive(Debug)]
pub struct GdsLogicalCodec {
    inner: Arc<dyn LogicalExtensionCodec>,
}

impl GdsLogicalCodec {
    /// gdscan's tables on top of `inner`.
    pub fn new(inner: Arc<dyn LogicalExtensionCodec>) -> Self {
        GdsLogicalCodec { inner }
    }
}

impl Default for GdsLogicalCodec {
    /// gdscan's tables on top of Ballista's codec.
    fn default() -> Self {
        GdsLogicalCodec::new(Arc::new(
            ballista_core::serde::BallistaLogicalExtensionCodec::default(),
        ))
    }
}

/// The Parquet options of the session that decodes (the schema of a
/// table depends on them, as it does on the client).
fn parquet_options(ctx: &TaskContext) -> TableParquetOptions {
    TableParquetOptions {
        global: ctx.session_config().options().execution.parquet.clone(),
        ..TableParquetOptions::default()
    }
}

impl LogicalExtensionCodec for GdsLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        let Some(bytes) = wire::untag(buf, TABLE_TAG) else {
            return self
                .inner
                .try_decode_table_provider(buf, table_ref, schema, ctx);
        };
        let (table, _): (Table, _) = wire::decode(bytes)?;
        let options = table.options.into_options()?;
        let opened = GdsTable::try_new(&table.location, options, &parquet_options(ctx))
            .map_err(to_datafusion)?;
        if opened.schema().fields() != schema.fields() {
            return Err(ClusterError::SchemaChanged {
                location: table.location,
                here: opened.schema().to_string(),
                client: schema.to_string(),
            }
            .into());
        }
        Ok(Arc::new(opened))
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let Some(table) = node.downcast_ref::<GdsTable>() else {
            return self.inner.try_encode_table_provider(table_ref, node, buf);
        };
        let wire = Table {
            location: table.location().to_string(),
            options: TableOptions::from(table.options()),
        };
        wire::encode(TABLE_TAG, &wire, &[], buf)?;
        Ok(())
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }
}
