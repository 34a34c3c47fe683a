//! The eight TPC-H tables, and orders_nested derived from two of them:
//! names, schemas, sizes, generators.

use std::str::FromStr;

use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use serde::Serialize;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow, RegionArrow,
    SupplierArrow,
};

use super::nested;

/// A TPC-H table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Table {
    /// nation: 25 rows at every scale factor.
    Nation,
    /// region: 5 rows at every scale factor.
    Region,
    /// part: 200 000 × SF rows.
    Part,
    /// supplier: 10 000 × SF rows.
    Supplier,
    /// partsupp: 800 000 × SF rows (four per part).
    PartSupp,
    /// customer: 150 000 × SF rows.
    Customer,
    /// orders: 1 500 000 × SF rows.
    Orders,
    /// lineitem: about 6 000 000 × SF rows (1 to 7 per order).
    LineItem,
    /// orders_nested, not a TPC-H table and written only when named: one
    /// row per order, the nine orders columns and `o_lineitems`, the
    /// order's lineitems as `list<struct<...>>` (the schema and how it is
    /// generated: `cli/src/tpch/nested.rs`).
    #[serde(rename = "orders_nested")]
    OrdersNested,
}

impl Table {
    /// All eight tables.
    pub const ALL: [Table; 8] = [
        Table::Nation,
        Table::Region,
        Table::Part,
        Table::Supplier,
        Table::PartSupp,
        Table::Customer,
        Table::Orders,
        Table::LineItem,
    ];

    /// The tables derived from the eight, written only when named (never
    /// by default, nor registered with the eight).
    pub const DERIVED: [Table; 1] = [Table::OrdersNested];

    /// The table's name, as in TPC-H and in the folder names: `partsupp`,
    /// `lineitem`, ..., `orders_nested`.
    pub fn name(self) -> &'static str {
        match self {
            Table::Nation => "nation",
            Table::Region => "region",
            Table::Part => "part",
            Table::Supplier => "supplier",
            Table::PartSupp => "partsupp",
            Table::Customer => "customer",
            Table::Orders => "orders",
            Table::LineItem => "lineitem",
            Table::OrdersNested => "orders_nested",
        }
    }

    /// The Arrow schema of the generated table.
    pub fn schema(self) -> SchemaRef {
        match self {
            Table::Nation => NationArrow::schema_ref(),
            Table::Region => RegionArrow::schema_ref(),
            Table::Part => PartArrow::schema_ref(),
            Table::Supplier => SupplierArrow::schema_ref(),
            Table::PartSupp => PartSuppArrow::schema_ref(),
            Table::Customer => CustomerArrow::schema_ref(),
            Table::Orders => OrderArrow::schema_ref(),
            Table::LineItem => LineItemArrow::schema_ref(),
            Table::OrdersNested => nested::schema(),
        }
    }

    /// Whether tpchgen splits the table into parts (all but nation and region).
    pub fn is_partitioned(self) -> bool {
        !matches!(self, Table::Nation | Table::Region)
    }

    /// The table's row count at `scale_factor`: exact for all tables but
    /// lineitem, whose count (1 to 7 lines per order, 4 on average) is
    /// estimated as 4 × orders (orders_nested has a row per order).
    pub fn estimated_rows(self, scale_factor: f64) -> u64 {
        let rows = match self {
            Table::Nation => 25,
            Table::Region => 5,
            Table::Part => PartGenerator::calculate_row_count(scale_factor, 1, 1),
            Table::Supplier => SupplierGenerator::calculate_row_count(scale_factor, 1, 1),
            Table::PartSupp => 4 * PartSuppGenerator::calculate_row_count(scale_factor, 1, 1),
            Table::Customer => CustomerGenerator::calculate_row_count(scale_factor, 1, 1),
            Table::Orders | Table::OrdersNested => {
                OrderGenerator::calculate_row_count(scale_factor, 1, 1)
            }
            Table::LineItem => 4 * OrderGenerator::calculate_row_count(scale_factor, 1, 1),
        };
        rows.max(0) as u64
    }

    /// The rows that size the table's files and generated slices: its own
    /// estimated rows, except for orders_nested, sized by the lineitems it
    /// carries, so that it is cut into the same files and tpchgen parts as
    /// lineitem (each of its files holds the orders of lineitem's file of
    /// the same number).
    pub fn sizing_rows(self, scale_factor: f64) -> u64 {
        match self {
            Table::OrdersNested => Table::LineItem.estimated_rows(scale_factor),
            other => other.estimated_rows(scale_factor),
        }
    }

    /// The generator of tpchgen's `part` (1-based) of `part_count`, as Arrow batches.
    pub(super) fn batches(
        self,
        scale_factor: f64,
        part: i32,
        part_count: i32,
        batch_rows: usize,
    ) -> Box<dyn Iterator<Item = std::result::Result<RecordBatch, ArrowError>> + Send> {
        let (sf, p, n, b) = (scale_factor, part, part_count, batch_rows);
        match self {
            Table::Nation => {
                Box::new(NationArrow::new(NationGenerator::new(sf, p, n)).with_batch_size(b))
            }
            Table::Region => {
                Box::new(RegionArrow::new(RegionGenerator::new(sf, p, n)).with_batch_size(b))
            }
            Table::Part => {
                Box::new(PartArrow::new(PartGenerator::new(sf, p, n)).with_batch_size(b))
            }
            Table::Supplier => {
                Box::new(SupplierArrow::new(SupplierGenerator::new(sf, p, n)).with_batch_size(b))
            }
            Table::PartSupp => {
                Box::new(PartSuppArrow::new(PartSuppGenerator::new(sf, p, n)).with_batch_size(b))
            }
            Table::Customer => {
                Box::new(CustomerArrow::new(CustomerGenerator::new(sf, p, n)).with_batch_size(b))
            }
            Table::Orders => {
                Box::new(OrderArrow::new(OrderGenerator::new(sf, p, n)).with_batch_size(b))
            }
            Table::LineItem => {
                Box::new(LineItemArrow::new(LineItemGenerator::new(sf, p, n)).with_batch_size(b))
            }
            Table::OrdersNested => nested::batches(sf, p, n, b),
        }
    }
}

impl std::fmt::Display for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Table {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let wanted = s.trim().to_ascii_lowercase();
        let every = || Table::ALL.into_iter().chain(Table::DERIVED);
        every().find(|t| t.name() == wanted).ok_or_else(|| {
            let names: Vec<&str> = every().map(|t| t.name()).collect();
            format!(
                "unknown TPC-H table {s:?}: expected one of {}",
                names.join(", ")
            )
        })
    }
}
