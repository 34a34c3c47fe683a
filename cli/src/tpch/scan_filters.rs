//! The lineitem scans of TPC-H queries as gdscan filters: each query's
//! lineitem columns (those its plan reads after the scan) and its
//! lineitem predicate in full (Q19's disjunction of three branches, Q12's
//! column-to-column date comparisons), for the exact GPU filter's tests
//! and benchmarks.

/// One query's lineitem scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanFilter {
    /// The query, e.g. `q6`.
    pub query: &'static str,
    /// The lineitem columns the query reads besides its filter's.
    pub columns: &'static [&'static str],
    /// The query's predicate on lineitem, in gdscan's filter language.
    pub filter: &'static str,
}

/// The TPC-H queries whose lineitem scan carries a selective filter: Q1,
/// Q6, Q12, Q14 and Q19 (their WHERE clauses on lineitem; Q19's part
/// conditions dropped, its lineitem branches kept whole).
pub const SCAN_FILTERS: [ScanFilter; 5] = [
    ScanFilter {
        query: "q1",
        columns: &[
            "l_returnflag",
            "l_linestatus",
            "l_quantity",
            "l_extendedprice",
            "l_discount",
            "l_tax",
        ],
        filter: "l_shipdate <= DATE '1998-09-02'",
    },
    ScanFilter {
        query: "q6",
        columns: &["l_extendedprice", "l_discount"],
        filter: "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
                 AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
    },
    ScanFilter {
        query: "q12",
        columns: &["l_orderkey", "l_shipmode"],
        filter: "l_shipmode IN ('MAIL', 'SHIP') AND l_commitdate < l_receiptdate \
                 AND l_shipdate < l_commitdate AND l_receiptdate >= DATE '1994-01-01' \
                 AND l_receiptdate < DATE '1995-01-01'",
    },
    ScanFilter {
        query: "q14",
        columns: &["l_partkey", "l_extendedprice", "l_discount"],
        filter: "l_shipdate >= DATE '1995-09-01' AND l_shipdate < DATE '1995-10-01'",
    },
    ScanFilter {
        query: "q19",
        columns: &["l_partkey", "l_extendedprice", "l_discount"],
        filter: "(l_quantity BETWEEN 1 AND 11 AND l_shipmode IN ('AIR', 'AIR REG') \
                 AND l_shipinstruct = 'DELIVER IN PERSON') \
                 OR (l_quantity BETWEEN 10 AND 20 AND l_shipmode IN ('AIR', 'AIR REG') \
                 AND l_shipinstruct = 'DELIVER IN PERSON') \
                 OR (l_quantity BETWEEN 20 AND 30 AND l_shipmode IN ('AIR', 'AIR REG') \
                 AND l_shipinstruct = 'DELIVER IN PERSON')",
    },
];

/// The scan of `query` (`q1`, `q6`, `q12`, `q14`, `q19`), if it has one.
///
/// ```
/// let q6 = gdscan_cli::tpch::scan_filter("q6").unwrap();
/// assert_eq!(q6.columns, ["l_extendedprice", "l_discount"]);
/// ```
pub fn scan_filter(query: &str) -> Option<ScanFilter> {
    SCAN_FILTERS.iter().copied().find(|f| f.query == query)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gdscan::parquet::Predicate;

    /// Every filter parses and names only lineitem columns.
    #[test]
    fn every_filter_parses_over_lineitem_columns() {
        for f in SCAN_FILTERS {
            let p: Predicate = f
                .filter
                .parse()
                .unwrap_or_else(|e| panic!("{}: {e}", f.query));
            for c in p.columns().into_iter().chain(f.columns.iter().copied()) {
                assert!(c.starts_with("l_"), "{}: {c}", f.query);
            }
        }
        assert_eq!(scan_filter("q19").unwrap().query, "q19");
        // bench::cases::Q6_FILTER takes Q6's by its place.
        assert_eq!(SCAN_FILTERS[1].query, "q6");
        assert!(scan_filter("q3").is_none());
    }
}
