//! Query results as text: an aligned table, CSV with a header line, or a
//! JSON array of objects.

use std::str::FromStr;

use ::datafusion::arrow::csv::WriterBuilder as CsvWriterBuilder;
use ::datafusion::arrow::datatypes::SchemaRef;
use ::datafusion::arrow::json::ArrayWriter;
use ::datafusion::arrow::record_batch::RecordBatch;
use ::datafusion::arrow::util::pretty::pretty_format_batches;

use super::error::Result;
use super::error::SqlError;

/// How results are printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// An aligned text table.
    #[default]
    Table,
    /// CSV with a header line.
    Csv,
    /// A JSON array with one object per row.
    Json,
}

impl FromStr for OutputFormat {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "table" => Ok(OutputFormat::Table),
            "csv" => Ok(OutputFormat::Csv),
            "json" => Ok(OutputFormat::Json),
            other => Err(format!(
                "unknown format {other:?}: expected table, csv or json"
            )),
        }
    }
}

fn failed(
    format: &'static str,
    source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> SqlError {
    SqlError::Output {
        format,
        source: source.into(),
    }
}

/// `batches` (of `schema`, which gives the header when there is no row)
/// as text in `format`.
pub fn format_batches(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    format: OutputFormat,
) -> Result<String> {
    let empty = [RecordBatch::new_empty(schema.clone())];
    let batches = if batches.is_empty() {
        &empty[..]
    } else {
        batches
    };
    let bytes = match format {
        OutputFormat::Table => {
            let table = pretty_format_batches(batches).map_err(|e| failed("a table", e))?;
            return Ok(format!("{table}\n"));
        }
        OutputFormat::Csv => {
            let mut out = Vec::new();
            {
                let mut writer = CsvWriterBuilder::new().with_header(true).build(&mut out);
                for b in batches {
                    writer.write(b).map_err(|e| failed("CSV", e))?;
                }
            }
            out
        }
        OutputFormat::Json => {
            let mut writer = ArrayWriter::new(Vec::new());
            for b in batches {
                writer.write(b).map_err(|e| failed("JSON", e))?;
            }
            writer.finish().map_err(|e| failed("JSON", e))?;
            let mut out = writer.into_inner();
            if out.is_empty() {
                out.extend_from_slice(b"[]");
            }
            out.push(b'\n');
            out
        }
    };
    String::from_utf8(bytes).map_err(|e| failed("UTF-8 text", e))
}
