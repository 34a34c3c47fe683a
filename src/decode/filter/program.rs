//! The predicate as the GPU evaluator's program (host, pure).
//!
//! The program is postfix: each step pushes a three-valued result (FALSE,
//! TRUE, UNKNOWN) per row on a small stack, or combines the top ones
//! (Kleene AND and OR of two, NOT of one); the row is kept when the one
//! value left is TRUE. A step is four `u32`s: `code | op << 8`, a column
//! of the column table, then a literal's offset and length in the
//! literal pool. `IN` is an OR chain of equalities, `BETWEEN` the AND of
//! `>=` and `<=`; literals are converted to the column's type exactly as
//! the host evaluator converts them (`parquet::predicate`'s plan), and a
//! comparison the conversion decides for every value becomes a step that
//! is TRUE (or FALSE) wherever the column is valid. AND and OR take their
//! deepest operand first, so that the stack stays within
//! [`STACK_DEPTH`].

use arrow::datatypes::{DataType, SchemaRef};

use super::filter_columns::{resolve, ProgramColumn, ValueKind};
use super::FilterError;
use crate::parquet::predicate::{
    device_plan, like_parts, like_program, DevicePlan, Literal, Op, PredicateError, Term,
    TermError, Test,
};
use crate::parquet::Predicate;

/// The evaluator's stack, in values (`GDS_FILTER_STACK`).
pub(crate) const STACK_DEPTH: usize = 32;
/// The deepest nesting of AND, OR and NOT compiled.
pub(crate) const MAX_NESTING: usize = 256;

/// Step codes (`GDS_FILTER_STEP_*` in `filter_eval.cu`).
pub(crate) mod step {
    /// Push TRUE.
    pub(crate) const TRUE: u32 = 1;
    /// Push FALSE.
    pub(crate) const FALSE: u32 = 2;
    /// Push `value op literal` (UNKNOWN for NULL; NaN: FALSE, `!=` TRUE).
    pub(crate) const CMP: u32 = 3;
    /// Push whether the value is NULL.
    pub(crate) const IS_NULL: u32 = 4;
    /// Push whether the value starts with the literal's bytes.
    pub(crate) const STARTS_WITH: u32 = 5;
    /// Push TRUE where the value is valid, UNKNOWN where NULL.
    pub(crate) const VALID_TRUE: u32 = 6;
    /// Push FALSE where the value is valid, UNKNOWN where NULL.
    pub(crate) const VALID_FALSE: u32 = 7;
    /// Pop two, push their Kleene AND.
    pub(crate) const AND: u32 = 8;
    /// Pop two, push their Kleene OR.
    pub(crate) const OR: u32 = 9;
    /// Pop one, push its negation.
    pub(crate) const NOT: u32 = 10;
    /// Push `column op other column` (both of one type; UNKNOWN where
    /// either is NULL; a NaN on either side: FALSE, `!=` TRUE).
    pub(crate) const CMP_COLUMN: u32 = 11;
    /// Push whether the value matches the LIKE pattern of the literal
    /// ([`like_program`](crate::parquet::predicate::like_program)'s
    /// form); `op` 1: a string (`_` is one UTF-8 character), 0: binary.
    pub(crate) const LIKE: u32 = 12;
}

/// A predicate compiled against a batch schema for the GPU evaluator
/// ([`FilterGpu::evaluate`](super::FilterGpu::evaluate)): a program of
/// typed column tests and boolean steps, the columns it reads and its
/// literals.
#[derive(Debug, Clone)]
pub struct GpuPredicate {
    schema: SchemaRef,
    steps: Vec<[u32; 4]>,
    columns: Vec<ProgramColumn>,
    literals: Vec<u8>,
    depth: usize,
}

impl GpuPredicate {
    /// Compiles `predicate` for batches of `schema`: the same rows as
    /// [`Predicate::evaluate`] on the same batch. A column the schema lacks
    /// or a literal its column cannot be compared with is
    /// [`FilterError::Predicate`] (the host evaluator's error); a part the
    /// GPU evaluator does not take (a comparison on a type it does not
    /// read, such as Utf8 with offsets, or a tree deeper than its stack)
    /// is [`FilterError::Unsupported`] naming the term.
    pub fn compile(predicate: &Predicate, schema: &SchemaRef) -> Result<GpuPredicate, FilterError> {
        let depth = depth(predicate, 0)?;
        if depth > STACK_DEPTH {
            return Err(FilterError::Unsupported {
                part: predicate.to_string(),
                why: format!("it needs {depth} values of the evaluator's stack of {STACK_DEPTH}"),
            });
        }
        let mut c = Compiler {
            schema,
            steps: Vec::new(),
            columns: Vec::new(),
            literals: Vec::new(),
        };
        c.emit(predicate)?;
        Ok(GpuPredicate {
            schema: schema.clone(),
            steps: c.steps,
            columns: c.columns,
            literals: c.literals,
            depth,
        })
    }

    /// The schema it was compiled for.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The top-level columns of the schema the program reads (indices,
    /// ascending, each once; a struct path reads its top-level column).
    pub fn columns(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self.columns.iter().map(|c| c.path[0]).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The steps of the program.
    pub fn steps(&self) -> usize {
        self.steps.len()
    }

    /// The most values the program holds on the evaluator's stack.
    pub fn stack_depth(&self) -> usize {
        self.depth
    }

    /// The program's steps as the kernel reads them (little-endian, four
    /// `u32`s a step).
    #[cfg(feature = "internals")]
    pub fn program_bytes(&self) -> Vec<u8> {
        self.program_le()
    }

    /// The literal pool.
    #[cfg(feature = "internals")]
    pub fn literal_bytes(&self) -> &[u8] {
        &self.literals
    }

    pub(crate) fn program_le(&self) -> Vec<u8> {
        self.steps
            .iter()
            .flat_map(|s| s.iter().flat_map(|w| w.to_le_bytes()))
            .collect()
    }

    pub(crate) fn literals(&self) -> &[u8] {
        &self.literals
    }

    pub(crate) fn program_columns(&self) -> &[ProgramColumn] {
        &self.columns
    }
}

/// The stack the program of `p` needs, AND and OR taking their deepest
/// operand first.
fn depth(p: &Predicate, nesting: usize) -> Result<usize, FilterError> {
    if nesting > MAX_NESTING {
        return Err(FilterError::Unsupported {
            part: "the predicate".to_string(),
            why: format!("AND, OR and NOT nested deeper than {MAX_NESTING}"),
        });
    }
    Ok(match p {
        Predicate::Term(t) => match &t.test {
            Test::Between(..) => 2,
            Test::In(vs) if vs.len() > 1 => 2,
            _ => 1,
        },
        Predicate::Not(c) => depth(c, nesting + 1)?,
        Predicate::And(cs) | Predicate::Or(cs) => {
            let mut ds = cs
                .iter()
                .map(|c| depth(c, nesting + 1))
                .collect::<Result<Vec<_>, _>>()?;
            ds.sort_unstable_by(|a, b| b.cmp(a));
            match ds.as_slice() {
                [] => 1,
                [d] => *d,
                [d0, d1, ..] => (*d0).max(d1 + 1),
            }
        }
    })
}

struct Compiler<'a> {
    schema: &'a SchemaRef,
    steps: Vec<[u32; 4]>,
    columns: Vec<ProgramColumn>,
    literals: Vec<u8>,
}

impl Compiler<'_> {
    fn push(&mut self, code: u32, column: u32) {
        self.steps.push([code, column, 0, 0]);
    }

    fn emit(&mut self, p: &Predicate) -> Result<(), FilterError> {
        match p {
            Predicate::Term(t) => self.term(t),
            Predicate::Not(c) => {
                self.emit(c)?;
                self.push(step::NOT, 0);
                Ok(())
            }
            Predicate::And(cs) => self.fold(cs, step::TRUE, step::AND),
            Predicate::Or(cs) => self.fold(cs, step::FALSE, step::OR),
        }
    }

    /// `cs` combined with `combine`, deepest first; `empty` without any.
    fn fold(&mut self, cs: &[Predicate], empty: u32, combine: u32) -> Result<(), FilterError> {
        let mut order = cs
            .iter()
            .map(|c| depth(c, 0).map(|d| (d, c)))
            .collect::<Result<Vec<_>, _>>()?;
        order.sort_by_key(|o| std::cmp::Reverse(o.0));
        if order.is_empty() {
            self.push(empty, 0);
        }
        for (i, (_, c)) in order.into_iter().enumerate() {
            self.emit(c)?;
            if i > 0 {
                self.push(combine, 0);
            }
        }
        Ok(())
    }

    /// The column table index of `name`, added when new.
    fn column(&mut self, name: &str) -> Result<usize, FilterError> {
        if let Some(i) = self.columns.iter().position(|c| c.name == name) {
            return Ok(i);
        }
        let column = resolve(self.schema, name)?;
        self.columns.push(column);
        Ok(self.columns.len() - 1)
    }

    fn term(&mut self, t: &Term) -> Result<(), FilterError> {
        let col = self.column(&t.column)?;
        match &t.test {
            Test::IsNull => self.push(step::IS_NULL, col as u32),
            Test::Cmp(op, lit) => self.cmp(t, col, *op, lit)?,
            Test::Between(lo, hi) => {
                self.cmp(t, col, Op::GtEq, lo)?;
                self.cmp(t, col, Op::LtEq, hi)?;
                self.push(step::AND, 0);
            }
            Test::In(values) => {
                if values.is_empty() {
                    self.push(step::FALSE, 0);
                }
                for (i, v) in values.iter().enumerate() {
                    self.cmp(t, col, Op::Eq, v)?;
                    if i > 0 {
                        self.push(step::OR, 0);
                    }
                }
            }
            Test::StartsWith(prefix) => {
                self.bytes_test(t, col, step::STARTS_WITH, prefix.as_bytes())?
            }
            Test::Like(pattern) => {
                let parts = like_parts(pattern)
                    .map_err(|(_, why)| type_error(t, TermError::Pattern(why)))?;
                self.bytes_test(t, col, step::LIKE, &like_program(&parts))?
            }
            Test::CmpColumn(op, other) => self.cmp_column(t, col, *op, other)?,
        }
        Ok(())
    }

    /// `column op other` for two columns of one type the kernel reads.
    fn cmp_column(&mut self, t: &Term, col: usize, op: Op, other: &str) -> Result<(), FilterError> {
        let right = self.column(other)?;
        let (a, b) = (&self.columns[col], &self.columns[right]);
        if a.data_type != b.data_type {
            return Err(type_error(
                t,
                TermError::Mismatch {
                    column: format!("{} values", a.data_type),
                    literal: format!("{} values of {other}", b.data_type),
                },
            ));
        }
        let readable = match a.kind {
            ValueKind::Signed | ValueKind::Unsigned | ValueKind::Bool | ValueKind::View => true,
            ValueKind::Float => matches!(a.width, 4 | 8),
            ValueKind::Opaque | ValueKind::Null => false,
        };
        if !readable {
            return Err(FilterError::Unsupported {
                part: t.to_string(),
                why: format!("comparisons of two {} columns", a.data_type),
            });
        }
        self.steps.push([
            step::CMP_COLUMN | op_code(op) << 8,
            col as u32,
            right as u32,
            0,
        ]);
        Ok(())
    }

    /// `bytes` appended to the pool: (offset, length).
    fn literal(&mut self, t: &Term, bytes: &[u8]) -> Result<(u32, u32), FilterError> {
        let too_long = || FilterError::Unsupported {
            part: t.to_string(),
            why: "literals of more than 4 GiB".to_string(),
        };
        let offset = u32::try_from(self.literals.len()).map_err(|_| too_long())?;
        let len = u32::try_from(bytes.len()).map_err(|_| too_long())?;
        offset.checked_add(len).ok_or_else(too_long)?;
        self.literals.extend_from_slice(bytes);
        Ok((offset, len))
    }

    fn cmp(&mut self, t: &Term, col: usize, op: Op, lit: &Literal) -> Result<(), FilterError> {
        let column = &self.columns[col];
        let plan =
            device_plan(&column.data_type, op, lit).map_err(|source| type_error(t, source))?;
        let (op, bytes) = match plan {
            DevicePlan::AllNonNull => {
                self.push(step::VALID_TRUE, col as u32);
                return Ok(());
            }
            DevicePlan::Nothing => {
                self.push(step::VALID_FALSE, col as u32);
                return Ok(());
            }
            DevicePlan::Cmp(op, bytes) => (op, bytes),
        };
        let fits = match column.kind {
            ValueKind::Signed | ValueKind::Unsigned | ValueKind::Float => {
                bytes.len() == column.width as usize
            }
            ValueKind::Bool => bytes.len() == 1,
            ValueKind::View => true,
            ValueKind::Opaque | ValueKind::Null => false,
        };
        if !fits {
            return Err(FilterError::Unsupported {
                part: t.to_string(),
                why: format!("comparisons of {} values", column.data_type),
            });
        }
        let (offset, len) = self.literal(t, &bytes)?;
        self.steps
            .push([step::CMP | op_code(op) << 8, col as u32, offset, len]);
        Ok(())
    }

    /// A LIKE step (`code`: STARTS_WITH or LIKE) of a view column with
    /// `literal`.
    fn bytes_test(
        &mut self,
        t: &Term,
        col: usize,
        code: u32,
        literal: &[u8],
    ) -> Result<(), FilterError> {
        let dt = &self.columns[col].data_type;
        let utf8 = match dt {
            DataType::Utf8View => 1,
            DataType::BinaryView => 0,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => {
                return Err(FilterError::Unsupported {
                    part: t.to_string(),
                    why: format!("LIKE on {dt} values (the GPU reads views)"),
                })
            }
            other => {
                let column_type = format!("{other} values");
                return Err(type_error(t, TermError::Like { column_type }));
            }
        };
        let (offset, len) = self.literal(t, literal)?;
        self.steps.push([code | utf8 << 8, col as u32, offset, len]);
        Ok(())
    }
}

/// The comparison's code (`GDS_FILTER_OP_*`).
pub(crate) fn op_code(op: Op) -> u32 {
    match op {
        Op::Eq => 0,
        Op::NotEq => 1,
        Op::Lt => 2,
        Op::LtEq => 3,
        Op::Gt => 4,
        Op::GtEq => 5,
    }
}

fn type_error(t: &Term, source: TermError) -> FilterError {
    FilterError::Predicate(PredicateError::Type {
        column: t.column.clone(),
        source,
    })
}
