//! One-call registration of a Parquet file or folder on gdscan's reader.

use std::sync::Arc;

use ::datafusion::prelude::SessionContext;

use super::error::Result;
use super::options::GdsTableOptions;
use super::table::GdsTable;

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
