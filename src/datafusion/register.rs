//! One-call registration: a table on gdscan's reader, the eight TPC-H
//! tables of a `gdscan tpch gen` folder, and (for comparisons) the same
//! folder as DataFusion's own `ListingTable`s.

use std::path::Path;
use std::sync::Arc;

use ::datafusion::prelude::{ParquetReadOptions, SessionContext};

use super::options::GdsTableOptions;
use super::table::GdsTable;
use crate::error::Result;
use crate::tpch::Table;

/// Registers the Parquet file or folder at `location` as table `name` of
/// `ctx`, read through gdscan; returns the table. Fails, with gdscan's
/// cause, when the location or a file's footer cannot be read.
pub fn register_parquet(
    ctx: &SessionContext,
    name: &str,
    location: &str,
    options: GdsTableOptions,
) -> Result<Arc<GdsTable>> {
    let parquet = ctx.state().table_options().parquet.clone();
    let table = Arc::new(GdsTable::try_new(location, options, &parquet)?);
    ctx.register_table(name, table.clone())?;
    Ok(table)
}

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
