//! The predicate as the GPU evaluator's program (host, pure).
//! OWNED BY THE EVALUATOR'S HELPER: replace this file.

use arrow::datatypes::SchemaRef;

use super::FilterError;
use crate::parquet::Predicate;

/// A predicate compiled against a batch schema for the GPU evaluator.
#[derive(Debug, Clone)]
pub struct GpuPredicate {
    schema: SchemaRef,
}

impl GpuPredicate {
    /// Compiles `predicate` for batches of `schema`.
    pub fn compile(predicate: &Predicate, schema: &SchemaRef) -> Result<GpuPredicate, FilterError> {
        Err(FilterError::Unsupported {
            part: predicate.to_string(),
            why: format!("not built yet ({} fields)", schema.fields().len()),
        })
    }

    /// The schema it was compiled for.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
}
