//! Filters in disjunctive normal form, as pyarrow's and cuDF's `filters=`
//! take them: an OR of ANDs of `(column, op, value)`.

use super::ast::*;

/// The value of one DNF term.
#[derive(Debug, Clone, PartialEq)]
pub enum DnfValue {
    /// `None` in Python: only with `is` / `is not`.
    Null,
    /// One literal: with the comparison operators.
    One(Literal),
    /// A list: with `in` / `not in` (at least one value).
    List(Vec<Literal>),
}

/// One `(column, op, value)` of a DNF filter. `op` is one of `=`, `==`,
/// `!=`, `<`, `<=`, `>`, `>=`, `in`, `not in`, `is`, `is not` (the words in
/// any case).
#[derive(Debug, Clone, PartialEq)]
pub struct DnfTerm {
    /// The column (a top-level name or a dotted leaf path).
    pub column: String,
    /// The operator.
    pub op: String,
    /// The value.
    pub value: DnfValue,
}

impl DnfTerm {
    /// A DNF term.
    pub fn new(column: impl Into<String>, op: impl Into<String>, value: DnfValue) -> DnfTerm {
        DnfTerm {
            column: column.into(),
            op: op.into(),
            value,
        }
    }

    fn to_predicate(&self) -> Result<Predicate, PredicateError> {
        let bad = |why: &str| {
            PredicateError::Dnf(format!(
                "({:?}, {:?}, {:?}): {why}",
                self.column, self.op, self.value
            ))
        };
        let op = self.op.trim().to_ascii_lowercase();
        let op = op.split_whitespace().collect::<Vec<_>>().join(" ");
        let cmp = match op.as_str() {
            "=" | "==" => Some(Op::Eq),
            "!=" => Some(Op::NotEq),
            "<" => Some(Op::Lt),
            "<=" => Some(Op::LtEq),
            ">" => Some(Op::Gt),
            ">=" => Some(Op::GtEq),
            _ => None,
        };
        let column = self.column.clone();
        match (cmp, op.as_str(), &self.value) {
            (Some(op), _, DnfValue::One(v)) => Ok(Predicate::cmp(column, op, v.clone())),
            (Some(_), _, DnfValue::Null) => Err(bad("compare with None through 'is' or 'is not'")),
            (Some(_), _, DnfValue::List(_)) => Err(bad("a list goes with 'in' or 'not in'")),
            (None, "in" | "not in", DnfValue::List(vs)) if !vs.is_empty() => {
                let t = Predicate::term(column, Test::In(vs.clone()));
                Ok(if op == "in" { t } else { t.negate() })
            }
            (None, "in" | "not in", _) => Err(bad("'in' and 'not in' take a non-empty list")),
            (None, "is" | "is not", DnfValue::Null) => {
                let t = Predicate::term(column, Test::IsNull);
                Ok(if op == "is" { t } else { t.negate() })
            }
            (None, "is" | "is not", _) => Err(bad("'is' and 'is not' take None")),
            _ => Err(bad(
                "unknown operator (expected =, ==, !=, <, <=, >, >=, in, not in, is, is not)",
            )),
        }
    }
}

impl Predicate {
    /// The predicate of a DNF filter: `disjuncts` is an OR of ANDs of terms
    /// (pyarrow's flat list of tuples is one AND: pass it as the only
    /// disjunct). Terms evaluate under SQL's three-valued logic like the
    /// text form (so `not in` and `!=` do not select NULL values, unlike
    /// pyarrow's `is_in`-based `not in`).
    pub fn from_dnf(disjuncts: &[Vec<DnfTerm>]) -> Result<Predicate, PredicateError> {
        if disjuncts.is_empty() {
            return Err(PredicateError::Dnf("no filters".into()));
        }
        let mut ors = Vec::with_capacity(disjuncts.len());
        for (i, conj) in disjuncts.iter().enumerate() {
            if conj.is_empty() {
                return Err(PredicateError::Dnf(format!("conjunction {i} is empty")));
            }
            let mut ands = conj
                .iter()
                .map(DnfTerm::to_predicate)
                .collect::<Result<Vec<_>, _>>()?;
            ors.push(if ands.len() == 1 {
                ands.remove(0)
            } else {
                Predicate::And(ands)
            });
        }
        Ok(if ors.len() == 1 {
            ors.remove(0)
        } else {
            Predicate::Or(ors)
        })
    }
}
