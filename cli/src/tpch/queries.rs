//! The 22 TPC-H queries, with the specification's validation substitution
//! parameters (Q1 DELTA = 90, Q6 DATE = 1994-01-01, DISCOUNT = 0.06,
//! QUANTITY = 24, ...; each file's first line names its parameters). Q15's
//! view is a common table expression, and Q13's derived table names its
//! columns inside it.

/// How many queries there are.
pub const TPCH_QUERY_COUNT: usize = 22;

const QUERIES: [&str; TPCH_QUERY_COUNT] = [
    include_str!("queries/q01.sql"),
    include_str!("queries/q02.sql"),
    include_str!("queries/q03.sql"),
    include_str!("queries/q04.sql"),
    include_str!("queries/q05.sql"),
    include_str!("queries/q06.sql"),
    include_str!("queries/q07.sql"),
    include_str!("queries/q08.sql"),
    include_str!("queries/q09.sql"),
    include_str!("queries/q10.sql"),
    include_str!("queries/q11.sql"),
    include_str!("queries/q12.sql"),
    include_str!("queries/q13.sql"),
    include_str!("queries/q14.sql"),
    include_str!("queries/q15.sql"),
    include_str!("queries/q16.sql"),
    include_str!("queries/q17.sql"),
    include_str!("queries/q18.sql"),
    include_str!("queries/q19.sql"),
    include_str!("queries/q20.sql"),
    include_str!("queries/q21.sql"),
    include_str!("queries/q22.sql"),
];

/// The text of TPC-H query `n` (1 to 22), or None.
pub fn tpch_query(n: usize) -> Option<&'static str> {
    n.checked_sub(1).and_then(|i| QUERIES.get(i)).copied()
}
