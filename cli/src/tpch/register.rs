//! The eight TPC-H tables of a `gdscan tpch gen` folder registered in a
//! DataFusion session: on gdscan's reader, and (for comparisons) as
//! DataFusion's own `ListingTable`s.

use std::path::Path;

use ::datafusion::prelude::{ParquetReadOptions, SessionContext};

use super::table::Table;
use crate::error::Result;
use gdscan::datafusion::{register_parquet, GdsTableOptions};

fn table_location(dir: &Path, table: Table) -> String {
    dir.join(table.name()).display().to_string()
}

/// Registers the eight TPC-H tables of a `gdscan tpch gen` folder
/// (`DIR/<table>/part-<i>.parquet`) under their names, read through gdscan.
pub fn register_tpch(ctx: &SessionContext, dir: &Path, options: GdsTableOptions) -> Result<()> {
    for table in Table::ALL {
        register_parquet(
            ctx,
            table.name(),
            &table_location(dir, table),
            options.clone(),
        )?;
    }
    Ok(())
}

/// Registers the same eight tables as DataFusion's own `ListingTable`s
/// (`SessionContext::register_parquet`, DataFusion's reader and caches):
/// the baseline gdscan's provider is compared with.
pub async fn register_tpch_listing(ctx: &SessionContext, dir: &Path) -> Result<()> {
    for table in Table::ALL {
        let location = format!("{}/", table_location(dir, table));
        ctx.register_parquet(table.name(), &location, ParquetReadOptions::default())
            .await?;
    }
    Ok(())
}
