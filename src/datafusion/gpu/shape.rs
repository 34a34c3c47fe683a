//! A decoded batch in the scan's shape: the decoder's columns (by name)
//! cast to the table's types (view types, merged schemas), a column a
//! file lacks as nulls, then the scan's projection, cut into batches of
//! DataFusion's size.

use std::sync::Arc;

use ::datafusion::arrow::array::{new_null_array, ArrayRef};
use ::datafusion::arrow::compute::{can_cast_types, cast};
use ::datafusion::arrow::datatypes::{Schema, SchemaRef};
use ::datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use ::datafusion::error::{DataFusionError, Result};
use ::datafusion::physical_expr::projection::{ProjectionExprs, Projector};
use ::datafusion::physical_expr::utils::reassign_expr_columns;

/// How a partition's decoded batches become the scan's.
#[derive(Debug)]
pub(crate) struct Shaper {
    /// The table's columns the scan reads, in table order.
    read: SchemaRef,
    /// The scan's projection over `read` (None: `read` is the output).
    projector: Option<Projector>,
}

impl Shaper {
    /// The shaper of a scan of `table` with `projection` (DataFusion's,
    /// over the table's columns).
    pub(crate) fn new(table: &SchemaRef, projection: Option<&ProjectionExprs>) -> Result<Shaper> {
        let Some(projection) = projection else {
            return Ok(Shaper {
                read: table.clone(),
                projector: None,
            });
        };
        let read = Arc::new(table.project(&projection.column_indices())?);
        let onto_read = projection
            .clone()
            .try_map_exprs(|e| reassign_expr_columns(e, &read))?;
        Ok(Shaper {
            projector: Some(onto_read.make_projector(&read)?),
            read,
        })
    }

    /// The top-level columns the decoder is asked for.
    pub(crate) fn columns(&self) -> Vec<String> {
        self.read
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    /// Why batches of `decoded` cannot be shaped (a column of a type that
    /// does not cast to the table's), or None.
    pub(crate) fn refuses(&self, decoded: &Schema) -> Option<String> {
        self.read.fields().iter().find_map(|want| {
            let (_, got) = decoded.column_with_name(want.name())?;
            (!can_cast_types(got.data_type(), want.data_type())).then(|| {
                format!(
                    "column {} decodes as {} and the table has {}",
                    want.name(),
                    got.data_type(),
                    want.data_type()
                )
            })
        })
    }

    /// `batch` (as copied back) in the scan's shape.
    pub(crate) fn shape(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let rows = batch.num_rows();
        let columns = self
            .read
            .fields()
            .iter()
            .map(|field| match batch.column_by_name(field.name()) {
                None => Ok(new_null_array(field.data_type(), rows)),
                Some(c) if c.data_type() == field.data_type() => Ok(c.clone()),
                Some(c) => cast(c, field.data_type()).map_err(DataFusionError::from),
            })
            .collect::<Result<Vec<ArrayRef>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        let read = RecordBatch::try_new_with_options(self.read.clone(), columns, &options)?;
        match &self.projector {
            None => Ok(read),
            Some(p) => p.project_batch(&read),
        }
    }
}

/// `batch` cut into batches of at most `size` rows (zero-copy slices).
pub(crate) fn slices(batch: &RecordBatch, size: usize) -> impl Iterator<Item = RecordBatch> + '_ {
    let size = size.max(1);
    (0..batch.num_rows())
        .step_by(size)
        .map(move |at| batch.slice(at, size.min(batch.num_rows() - at)))
}

#[cfg(test)]
mod tests {
    use ::datafusion::arrow::array::{Int64Array, StringArray, StringViewArray};
    use ::datafusion::arrow::datatypes::{DataType, Field};
    use ::datafusion::physical_expr::expressions::Column;
    use ::datafusion::physical_expr::projection::ProjectionExpr;

    use super::*;

    fn table() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Utf8View, true),
            Field::new("c", DataType::Int32, true),
        ]))
    }

    #[test]
    fn columns_are_cast_filled_and_projected() {
        let table = table();
        // SELECT c AS c, b AS b: columns 2 and 1 of the table.
        let projection = ProjectionExprs::new(vec![
            ProjectionExpr::new(Arc::new(Column::new("c", 2)), "c"),
            ProjectionExpr::new(Arc::new(Column::new("b", 1)), "b"),
        ]);
        let shaper = Shaper::new(&table, Some(&projection)).unwrap();
        assert_eq!(shaper.columns(), vec!["b", "c"]);
        // The decoder gives b as Utf8 and has no column c (a file of a
        // table whose other files have it).
        let decoded = Arc::new(Schema::new(vec![Field::new("b", DataType::Utf8, true)]));
        assert_eq!(shaper.refuses(&decoded), None);
        let batch = RecordBatch::try_new(
            decoded,
            vec![Arc::new(StringArray::from(vec!["x", "y", "z"]))],
        )
        .unwrap();
        let out = shaper.shape(&batch).unwrap();
        assert_eq!(out.schema().field(0).name(), "c");
        assert_eq!(out.column(0).null_count(), 3);
        let b = out.column(1).as_any().downcast_ref::<StringViewArray>();
        let b: Vec<_> = b.unwrap().iter().map(|v| v.unwrap().to_string()).collect();
        assert_eq!(b, vec!["x", "y", "z"]);
    }

    #[test]
    fn uncastable_columns_are_refused_and_batches_cut_to_size() {
        let shaper = Shaper::new(&table(), None).unwrap();
        let decoded = Schema::new(vec![Field::new(
            "a",
            DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
            true,
        )]);
        assert!(shaper.refuses(&decoded).unwrap().contains("column a"));
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)]));
        let batch =
            RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from_iter_values(0..10))])
                .unwrap();
        let sizes: Vec<usize> = slices(&batch, 4).map(|b| b.num_rows()).collect();
        assert_eq!(sizes, vec![4, 4, 2]);
    }
}
