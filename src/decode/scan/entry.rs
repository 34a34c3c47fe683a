//! The one way to decode: [`decode`] takes what to read (a path or URL, a
//! list of them, or planned [`DecodeInput`]s), a [`ScanRequest`] and
//! [`DecodeOptions`] (which name the GPUs), and returns a [`DecodeStream`]
//! of device batches on one GPU or several.

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use parquet::file::metadata::ParquetMetaData;

use super::late_two_phase::LateScan;
use super::planned_stream::PlannedStream;
use super::s7_filter_rows::ExactFilter;
use super::{DecodeError, DecodeInput, DecodeOptions, DecodeReport, DeviceShare, FilterMode};
use crate::decode::array::DeviceBatch;
use crate::parquet::metadata::{load, MetadataOptions};
use crate::parquet::plan::PlanError;
use crate::parquet::spread::{spread, Spread};
use crate::parquet::{plan, Projection, ScanPlan, ScanRequest};

/// What a decode reads: files to open and plan, or files planned already.
#[derive(Debug, Clone)]
pub enum DecodeSource {
    /// Paths or URLs, opened with `DecodeOptions::store` and planned with
    /// the request; streamed as one table, in order.
    Locations(Vec<String>),
    /// Files with their metadata and plans (the request is not applied
    /// again).
    Planned(Vec<DecodeInput>),
}

impl From<&str> for DecodeSource {
    fn from(location: &str) -> Self {
        DecodeSource::Locations(vec![location.to_string()])
    }
}

impl From<String> for DecodeSource {
    fn from(location: String) -> Self {
        DecodeSource::Locations(vec![location])
    }
}

impl From<&String> for DecodeSource {
    fn from(location: &String) -> Self {
        DecodeSource::Locations(vec![location.clone()])
    }
}

impl From<Vec<String>> for DecodeSource {
    fn from(locations: Vec<String>) -> Self {
        DecodeSource::Locations(locations)
    }
}

impl From<&[String]> for DecodeSource {
    fn from(locations: &[String]) -> Self {
        DecodeSource::Locations(locations.to_vec())
    }
}

impl From<Vec<&str>> for DecodeSource {
    fn from(locations: Vec<&str>) -> Self {
        DecodeSource::Locations(locations.into_iter().map(String::from).collect())
    }
}

impl From<&[&str]> for DecodeSource {
    fn from(locations: &[&str]) -> Self {
        DecodeSource::Locations(locations.iter().map(|l| l.to_string()).collect())
    }
}

impl From<DecodeInput> for DecodeSource {
    fn from(input: DecodeInput) -> Self {
        DecodeSource::Planned(vec![input])
    }
}

impl From<Vec<DecodeInput>> for DecodeSource {
    fn from(inputs: Vec<DecodeInput>) -> Self {
        DecodeSource::Planned(inputs)
    }
}

/// The plan a decode of `request` runs on a file: the request's plan,
/// with an exact filter ([`FilterMode::Exact`], the default) its
/// projection widened by the predicate's columns (the GPU evaluates the
/// predicate on them; [`decode`] drops them after unless projected). Use
/// it to plan [`DecodeSource::Planned`] inputs. No I/O.
///
/// ```no_run
/// use gdscan::decode::scan::{decode_plan, DecodeOptions};
/// use gdscan::parquet::{Projection, ScanRequest};
/// # fn demo(metadata: &parquet::file::metadata::ParquetMetaData) -> Result<(), Box<dyn std::error::Error>> {
/// let request = ScanRequest {
///     projection: Projection::Columns(vec!["l_extendedprice".into()]),
///     predicate: Some("l_shipdate >= DATE '1994-01-01'".parse()?),
///     ..ScanRequest::default()
/// };
/// let plan = decode_plan(metadata, &request, &DecodeOptions::default())?;
/// assert_eq!(plan.leaves.len(), 2); // l_extendedprice and l_shipdate
/// # Ok(()) }
/// ```
pub fn decode_plan(
    metadata: &ParquetMetaData,
    request: &ScanRequest,
    options: &DecodeOptions,
) -> Result<ScanPlan, PlanError> {
    match (&request.predicate, &request.projection) {
        (Some(p), Projection::Columns(names)) if options.filter == FilterMode::Exact => {
            let mut wider = names.clone();
            for c in p.columns() {
                if !wider.iter().any(|n| n == c) {
                    wider.push(c.to_string());
                }
            }
            let request = ScanRequest {
                projection: Projection::Columns(wider),
                ..request.clone()
            };
            plan(metadata, &request)
        }
        _ => plan(metadata, request),
    }
}

/// Opens `location` and plans `request` on it ([`decode_plan`]).
fn plan_location(
    location: &str,
    request: &ScanRequest,
    options: &DecodeOptions,
) -> Result<DecodeInput, DecodeError> {
    let source = crate::store::open(location, &options.store)?;
    let metadata = load(&source, MetadataOptions::default())?;
    let planned =
        decode_plan(&metadata, request, options).map_err(|source| DecodeError::Request {
            file: location.to_string(),
            source,
        })?;
    Ok(DecodeInput {
        source,
        metadata,
        plan: Arc::new(planned),
    })
}

/// The top-level columns that `names` (top-level names or dotted leaf
/// paths, as a projection takes them) select, in schema order.
fn top_level_names(metadata: &ParquetMetaData, names: &[String]) -> Vec<String> {
    let mut tops: Vec<String> = Vec::new();
    for column in metadata.file_metadata().schema_descr().columns() {
        let Some(top) = column.path().parts().first() else {
            continue;
        };
        let path = column.path().string();
        let selected = names.iter().any(|n| *n == path || n == top);
        if selected && !tops.contains(top) {
            tops.push(top.clone());
        }
    }
    tops
}

/// Starts decoding `source` into the GPUs of `options.devices`: every
/// device is opened first (a bad ordinal reads nothing), then each location
/// is opened and planned with `request`, and every column is checked
/// against the decoder's coverage before any data is read. With a
/// predicate, statistics prune row groups and pages and (with
/// `options.filter` at its default, [`FilterMode::Exact`]) the GPU keeps
/// exactly the rows where it is TRUE: the predicate's columns are decoded
/// for it and dropped after the filter unless projected (planned
/// inputs must include them), and a row group that keeps no row yields no
/// batch. With one GPU,
/// one decoder takes every row group; with several, the row groups are
/// spread over them by bytes and handed out in plan order.
///
/// ```no_run
/// use gdscan::cuda::Devices;
/// use gdscan::decode::scan::{decode, DecodeOptions};
/// use gdscan::parquet::ScanRequest;
///
/// let options = DecodeOptions { devices: Devices::All, ..DecodeOptions::from_env()? };
/// let stream = decode("lineitem.parquet", ScanRequest::default(), options)?;
/// for batch in stream {
///     let batch = batch?; // Arrow columns in GPU memory
///     println!("{} rows on GPU {:?}", batch.num_rows(), batch.device_ordinal());
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn decode(
    source: impl Into<DecodeSource>,
    request: ScanRequest,
    options: DecodeOptions,
) -> Result<DecodeStream, DecodeError> {
    // nvCOMP and NVRTC open beside the GPU's context (waited for on return).
    let _libraries = super::warm_up::warm_up();
    let ordinals: Vec<usize> = options
        .devices
        .open()?
        .iter()
        .map(|d| d.ordinal())
        .collect();
    let exact = options.filter != FilterMode::PruneOnly;
    let inputs: Vec<DecodeInput> = match source.into() {
        DecodeSource::Planned(inputs) => inputs,
        DecodeSource::Locations(locations) => locations
            .iter()
            .map(|l| plan_location(l, &request, &options))
            .collect::<Result<_, _>>()?,
    };
    // The columns handed out: those the projection names (the plan may
    // hold the predicate's too).
    let keep = match (&request.projection, inputs.first()) {
        (Projection::Columns(names), Some(first)) => Some(top_level_names(&first.metadata, names)),
        _ => None,
    };
    let inner = match request.predicate {
        // A predicate that reads no column (an empty AND or OR: TRUE or
        // FALSE for every row) has no first phase: it filters in one pass.
        Some(predicate)
            if options.filter == FilterMode::Late
                && !inputs.is_empty()
                && !predicate.columns().is_empty() =>
        {
            Inner::Late(Box::new(LateScan::start(inputs, predicate, keep, options)?))
        }
        predicate => {
            let filter = predicate
                .filter(|_| exact)
                .map(|predicate| ExactFilter { predicate, keep });
            Inner::Planned(PlannedStream::start(inputs, options, ordinals, filter)?)
        }
    };
    Ok(DecodeStream { inner })
}

/// Device batches of a decode, one per row group (with a filter, one per
/// row group that keeps a row), in plan order; each lives on the GPU that
/// decoded it. Dropping the stream stops every decoder (and waits for
/// their threads); batches already handed out stay valid.
#[derive(Debug)]
pub struct DecodeStream {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    /// One pass over planned inputs, on one GPU or several.
    Planned(PlannedStream),
    /// Late materialization: the filter's columns first, then the payload.
    Late(Box<LateScan>),
}

impl DecodeStream {
    /// The batches' schema.
    pub fn schema(&self) -> &SchemaRef {
        match &self.inner {
            Inner::Planned(s) => s.schema(),
            Inner::Late(s) => s.schema(),
        }
    }

    /// The GPUs, in share order.
    pub fn devices(&self) -> Vec<usize> {
        match &self.inner {
            Inner::Planned(s) => s.devices(),
            Inner::Late(s) => s.shares().iter().map(|s| s.device).collect(),
        }
    }

    /// Which row group went to which share (index into
    /// [`DecodeStream::devices`]); with late materialization, the payload
    /// phase's (empty without payload columns).
    pub fn spread(&self) -> &Spread {
        static EMPTY: std::sync::OnceLock<Spread> = std::sync::OnceLock::new();
        match &self.inner {
            Inner::Planned(s) => s.spread(),
            Inner::Late(s) => s
                .spread()
                .unwrap_or_else(|| EMPTY.get_or_init(|| spread(&[], 1))),
        }
    }

    /// What each GPU has done so far (one share per GPU).
    pub fn shares(&self) -> Vec<DeviceShare> {
        match &self.inner {
            Inner::Planned(s) => s.shares(),
            Inner::Late(s) => s.shares(),
        }
    }

    /// The decoders' reports so far, added together.
    pub fn report(&self) -> DecodeReport {
        match &self.inner {
            Inner::Planned(s) => s.report(),
            Inner::Late(s) => s.report(),
        }
    }
}

impl Iterator for DecodeStream {
    type Item = Result<DeviceBatch, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::Planned(s) => s.next(),
            Inner::Late(s) => s.next(),
        }
    }
}
