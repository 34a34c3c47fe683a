//! The scans the benchmarks measure: a name, columns and a filter, and
//! TPC-H's lineitem queries as such scans.

use ::parquet::file::metadata::ParquetMetaData;

use crate::error::Result;
use gdscan::parquet::plan::{plan, Projection, ScanPlan, ScanRequest};
use gdscan::parquet::predicate::Predicate;

/// One scan to measure.
#[derive(Debug, Clone)]
pub(crate) struct ScanCase {
    /// Name, e.g. "q6".
    pub name: String,
    /// Columns.
    pub projection: Projection,
    /// Filter (pruning only: bytes, not rows, are what lands).
    pub filter: Option<Predicate>,
}

/// The lineitem cases: all columns, and the column sets and filters of Q1 and Q6.
pub(crate) fn lineitem_cases() -> Vec<ScanCase> {
    let mut cases = vec![ScanCase {
        name: "all".into(),
        projection: Projection::All,
        filter: None,
    }];
    cases.extend(["q1", "q6"].iter().filter_map(|q| lineitem_query(q)));
    cases
}

impl ScanCase {
    /// The scan request of this case (default coalescing).
    pub(crate) fn request(&self) -> ScanRequest {
        ScanRequest {
            projection: self.projection.clone(),
            predicate: self.filter.clone(),
            ..Default::default()
        }
    }

    /// This case's plan over `metadata` of the file at `location`.
    pub(crate) fn plan(&self, location: &str, metadata: &ParquetMetaData) -> Result<ScanPlan> {
        Ok(plan(metadata, &self.request()).map_err(|e| e.in_file(location))?)
    }
}

/// TPC-H Q6's filter on lineitem ([`crate::tpch::SCAN_FILTERS`]'s).
pub(crate) const Q6_FILTER: &str = crate::tpch::SCAN_FILTERS[1].filter;

fn case(name: &str, columns: &[&str], filter: &str) -> ScanCase {
    ScanCase {
        name: name.to_string(),
        projection: Projection::Columns(columns.iter().map(|s| s.to_string()).collect()),
        filter: Some(filter.parse().expect("valid filter")),
    }
}

/// The scan of a query of [`crate::tpch::SCAN_FILTERS`]: its columns and
/// its filter's (pruning only, so the filter's columns are read too).
fn scan_case(query: &str) -> Option<ScanCase> {
    let scan = crate::tpch::scan_filter(query)?;
    let filter: gdscan::parquet::Predicate = scan.filter.parse().expect("valid filter");
    let mut columns: Vec<&str> = scan.columns.to_vec();
    for c in filter.columns() {
        if !columns.contains(&c) {
            columns.push(c);
        }
    }
    Some(case(query, &columns, scan.filter))
}

/// Lineitem's column set and filter of TPC-H query `name` (q1, q6, q14,
/// q19; Q19's disjunction is over-approximated by its common conjuncts).
pub(crate) fn lineitem_query(name: &str) -> Option<ScanCase> {
    Some(match name {
        "q1" | "q6" | "q14" => return scan_case(name),
        "q19" => case(
            "q19",
            &[
                "l_partkey",
                "l_quantity",
                "l_extendedprice",
                "l_discount",
                "l_shipinstruct",
                "l_shipmode",
            ],
            "l_shipinstruct = 'DELIVER IN PERSON' AND l_quantity >= 1 AND l_quantity <= 30",
        ),
        _ => return None,
    })
}
