//! What gdscan's codecs put on the wire: a table's options and, per file
//! of a scan, what gdscan attached to it (its location, gdscan's access
//! plan and read-ahead plan), as JSON behind a tag.
//!
//! No secrets travel: the store options are limits and timeouts; each host
//! takes its credentials from its own environment. The engine does not
//! travel either: every process reads on its own (`KVIKIO_*` settings).

use std::time::Duration;

use ::datafusion::datasource::physical_plan::parquet::{ParquetAccessPlan, RowGroupAccess};
use ::parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use serde::{Deserialize, Serialize};

use super::error::{ClusterError, WireError};
use crate::cuda::Devices;
use crate::datafusion::{
    FileScanPlan, GdsTableOptions, PlannedRowGroup, PushedPredicate, ReadAheadPolicy, TableDecode,
    GPU_SCANS, PINNED_COPY_BACK,
};
use crate::parquet::CoalesceOptions;
use crate::store::StoreOptions;

/// The first bytes of a gdscan table (logical codec).
pub(super) const TABLE_TAG: &[u8] = b"GDSCAN-TABLE-1\n";
/// The first bytes of a gdscan scan (physical codec).
pub(super) const SCAN_TAG: &[u8] = b"GDSCAN-SCAN-1\n";

/// `bytes` without `tag`, or None when they do not start with it.
pub(super) fn untag<'a>(bytes: &'a [u8], tag: &[u8]) -> Option<&'a [u8]> {
    bytes.strip_prefix(tag)
}

/// [`CoalesceOptions`] on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Coalesce {
    max_gap: u64,
    max_request: u64,
    max_overread: f64,
}

impl From<CoalesceOptions> for Coalesce {
    fn from(c: CoalesceOptions) -> Self {
        Coalesce {
            max_gap: c.max_gap,
            max_request: c.max_request,
            max_overread: c.max_overread,
        }
    }
}

impl From<Coalesce> for CoalesceOptions {
    fn from(c: Coalesce) -> Self {
        CoalesceOptions {
            max_gap: c.max_gap,
            max_request: c.max_request,
            max_overread: c.max_overread,
        }
    }
}

/// [`StoreOptions`] on the wire (durations in milliseconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Store {
    concurrency: usize,
    request_size: u64,
    footer_hint: u64,
    connect_timeout_ms: u64,
    timeout_ms: u64,
    max_retries: usize,
    retry_timeout_ms: u64,
    init_backoff_ms: u64,
    max_backoff_ms: u64,
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl From<&StoreOptions> for Store {
    fn from(s: &StoreOptions) -> Self {
        Store {
            concurrency: s.concurrency,
            request_size: s.request_size,
            footer_hint: s.footer_hint,
            connect_timeout_ms: ms(s.connect_timeout),
            timeout_ms: ms(s.timeout),
            max_retries: s.max_retries,
            retry_timeout_ms: ms(s.retry_timeout),
            init_backoff_ms: ms(s.init_backoff),
            max_backoff_ms: ms(s.max_backoff),
        }
    }
}

impl From<Store> for StoreOptions {
    fn from(s: Store) -> Self {
        StoreOptions {
            concurrency: s.concurrency,
            request_size: s.request_size,
            footer_hint: s.footer_hint,
            connect_timeout: Duration::from_millis(s.connect_timeout_ms),
            timeout: Duration::from_millis(s.timeout_ms),
            max_retries: s.max_retries,
            retry_timeout: Duration::from_millis(s.retry_timeout_ms),
            init_backoff: Duration::from_millis(s.init_backoff_ms),
            max_backoff: Duration::from_millis(s.max_backoff_ms),
            // Not sent: the pairs may hold credentials; an executor builds
            // its stores from its own environment.
            object_store: Vec::new(),
        }
    }
}

/// [`GdsTableOptions`] on the wire, without the engine (each process uses
/// its own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct TableOptions {
    file_extension: String,
    coalesce: Coalesce,
    local_coalesce: Coalesce,
    store: Store,
    read_ahead: String,
    task_size: Option<usize>,
    /// Where the executors decode: `cpu`, `gpu` or `auto` (absent from an
    /// older client: `cpu`).
    #[serde(default = "cpu")]
    decode: String,
    /// GPU decodes at once per device on each executor.
    #[serde(default = "gpu_scans")]
    gpu_scans: usize,
    /// Pinned bytes each executor's GPU copy back may hold per device.
    #[serde(default = "pinned_copy_back")]
    pinned_copy_back: usize,
    /// The GPUs each executor's GPU path spreads its partitions over
    /// (absent from an older client: device 0).
    #[serde(default = "device_zero")]
    devices: String,
}

fn device_zero() -> String {
    Devices::default().to_string()
}

fn pinned_copy_back() -> usize {
    PINNED_COPY_BACK
}

fn cpu() -> String {
    TableDecode::Cpu.name().to_string()
}

fn gpu_scans() -> usize {
    GPU_SCANS
}

fn read_ahead_name(p: ReadAheadPolicy) -> &'static str {
    match p {
        ReadAheadPolicy::Off => "off",
        ReadAheadPolicy::Uncached => "uncached",
        ReadAheadPolicy::Always => "always",
    }
}

impl From<&GdsTableOptions> for TableOptions {
    fn from(o: &GdsTableOptions) -> Self {
        TableOptions {
            file_extension: o.file_extension.clone(),
            coalesce: o.coalesce.into(),
            local_coalesce: o.local_coalesce.into(),
            store: (&o.store).into(),
            read_ahead: read_ahead_name(o.read_ahead).to_string(),
            task_size: o.task_size,
            decode: o.decode.name().to_string(),
            gpu_scans: o.gpu_scans,
            pinned_copy_back: o.pinned_copy_back,
            devices: o.devices.to_string(),
        }
    }
}

impl TableOptions {
    /// The options, on the process-wide engine.
    pub(super) fn into_options(self) -> Result<GdsTableOptions, ClusterError> {
        let read_ahead = match self.read_ahead.as_str() {
            "off" => ReadAheadPolicy::Off,
            "uncached" => ReadAheadPolicy::Uncached,
            "always" => ReadAheadPolicy::Always,
            other => return Err(WireError::ReadAhead(other.to_string()).into()),
        };
        let decode = TableDecode::from_name(&self.decode)
            .ok_or_else(|| WireError::DecodeChoice(self.decode.clone()))?;
        let devices = self
            .devices
            .parse::<Devices>()
            .map_err(|source| WireError::Devices {
                given: self.devices.clone(),
                source,
            })?;
        Ok(GdsTableOptions {
            file_extension: self.file_extension,
            coalesce: self.coalesce.into(),
            local_coalesce: self.local_coalesce.into(),
            engine: None,
            store: self.store.into(),
            read_ahead,
            task_size: self.task_size,
            decode,
            gpu_scans: self.gpu_scans.max(1),
            pinned_copy_back: self.pinned_copy_back,
            devices,
        })
    }
}

/// A gdscan table: where and with what options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Table {
    pub location: String,
    pub options: TableOptions,
}

/// One row group's access: skipped, scanned whole, or these runs of rows
/// (`(skip, rows)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
enum Access {
    Skip,
    Scan,
    Select(Vec<(bool, usize)>),
}

/// A kept row group's plan ([`PlannedRowGroup`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct RowGroup {
    index: usize,
    first_page: u64,
    chunks: Vec<(u64, u64)>,
    some_rows: bool,
}

/// What gdscan attached to one file of a scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct FileExtras {
    /// Where the file is (`GdsLocation`).
    pub location: Option<String>,
    access: Option<Vec<Access>>,
    plan: Option<(Vec<RowGroup>, bool)>,
}

impl FileExtras {
    /// What a file carries.
    pub(super) fn new(
        location: Option<String>,
        access: Option<&ParquetAccessPlan>,
        plan: Option<&FileScanPlan>,
    ) -> Self {
        let access = access.map(|a| {
            a.inner()
                .iter()
                .map(|rg| match rg {
                    RowGroupAccess::Skip => Access::Skip,
                    RowGroupAccess::Scan => Access::Scan,
                    RowGroupAccess::Selection(sel) => {
                        Access::Select(sel.iter().map(|s| (s.skip, s.row_count)).collect())
                    }
                })
                .collect()
        });
        let plan = plan.map(|p| {
            let groups = p
                .row_groups
                .iter()
                .map(|rg| RowGroup {
                    index: rg.index,
                    first_page: rg.first_page,
                    chunks: rg.chunks.iter().map(|c| (c.start, c.end)).collect(),
                    some_rows: rg.some_rows,
                })
                .collect();
            (groups, p.read_ahead)
        });
        FileExtras {
            location,
            access,
            plan,
        }
    }

    /// gdscan's access plan of the file, if it had one.
    pub(super) fn access_plan(&self) -> Option<ParquetAccessPlan> {
        let access = self.access.as_ref()?;
        Some(ParquetAccessPlan::new(
            access
                .iter()
                .map(|a| match a {
                    Access::Skip => RowGroupAccess::Skip,
                    Access::Scan => RowGroupAccess::Scan,
                    Access::Select(runs) => RowGroupAccess::Selection(RowSelection::from(
                        runs.iter()
                            .map(|&(skip, rows)| {
                                if skip {
                                    RowSelector::skip(rows)
                                } else {
                                    RowSelector::select(rows)
                                }
                            })
                            .collect::<Vec<_>>(),
                    )),
                })
                .collect(),
        ))
    }

    /// gdscan's read-ahead plan of the file, if it had one.
    pub(super) fn scan_plan(&self) -> Option<FileScanPlan> {
        let (groups, read_ahead) = self.plan.as_ref()?;
        Some(FileScanPlan {
            row_groups: groups
                .iter()
                .map(|rg| PlannedRowGroup {
                    index: rg.index,
                    first_page: rg.first_page,
                    chunks: rg.chunks.iter().map(|&(s, e)| s..e).collect(),
                    some_rows: rg.some_rows,
                })
                .collect(),
            read_ahead: *read_ahead,
        })
    }
}

/// A gdscan scan: the reader's options and each file's extras, file group
/// by file group (the DataFusion scan itself travels as DataFusion's
/// protobuf, after this header).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Scan {
    pub options: TableOptions,
    pub groups: Vec<Vec<FileExtras>>,
    /// The predicate gdscan's table pushed to the scan's files (one for
    /// all of them); absent in a header from before it travelled.
    #[serde(default)]
    pub pushed: Option<PushedPredicate>,
}

/// `tag`, a length-prefixed JSON header, then `rest`.
pub(super) fn encode<T: Serialize>(
    tag: &[u8],
    header: &T,
    rest: &[u8],
    buf: &mut Vec<u8>,
) -> Result<(), ClusterError> {
    let json = serde_json::to_vec(header).map_err(WireError::Encode)?;
    buf.extend_from_slice(tag);
    buf.extend_from_slice(&(json.len() as u64).to_le_bytes());
    buf.extend_from_slice(&json);
    buf.extend_from_slice(rest);
    Ok(())
}

/// The header and the rest of bytes that [`encode`] wrote (without the tag).
pub(super) fn decode<T: for<'de> Deserialize<'de>>(
    bytes: &[u8],
) -> Result<(T, &[u8]), ClusterError> {
    let short = || WireError::Short { len: bytes.len() };
    let (len, rest) = bytes.split_first_chunk::<8>().ok_or_else(short)?;
    let len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| short())?;
    if rest.len() < len {
        return Err(short().into());
    }
    let (json, rest) = rest.split_at(len);
    let header = serde_json::from_slice(json).map_err(WireError::Decode)?;
    Ok((header, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_options_come_back_as_they_left_without_the_engine() {
        let options = GdsTableOptions {
            file_extension: ".pq".into(),
            coalesce: CoalesceOptions {
                max_gap: 7,
                max_request: 9,
                max_overread: 0.25,
            },
            read_ahead: ReadAheadPolicy::Always,
            task_size: Some(3 << 20),
            store: StoreOptions {
                concurrency: 3,
                timeout: Duration::from_millis(1500),
                ..StoreOptions::default()
            },
            ..GdsTableOptions::default()
        };
        let wire = TableOptions::from(&options);
        let mut buf = Vec::new();
        encode(TABLE_TAG, &wire, b"tail", &mut buf).unwrap();
        let (back, rest): (TableOptions, _) = decode(untag(&buf, TABLE_TAG).unwrap()).unwrap();
        assert_eq!(rest, b"tail");
        let back = back.into_options().unwrap();
        assert_eq!(back.file_extension, ".pq");
        assert_eq!(back.coalesce, options.coalesce);
        assert_eq!(back.local_coalesce, options.local_coalesce);
        assert_eq!(back.store, options.store);
        assert_eq!(back.read_ahead, ReadAheadPolicy::Always);
        assert_eq!(back.task_size, Some(3 << 20));
        assert!(back.engine.is_none());
        assert_eq!(back.decode, TableDecode::Cpu);
    }

    #[test]
    fn the_decode_choice_travels_and_an_older_header_means_cpu() {
        for choice in [TableDecode::Gpu, TableDecode::Auto, TableDecode::Cpu] {
            let options = GdsTableOptions {
                decode: choice,
                gpu_scans: 3,
                pinned_copy_back: 1 << 20,
                devices: Devices::List(vec![1, 0]),
                ..GdsTableOptions::default()
            };
            let mut buf = Vec::new();
            encode(TABLE_TAG, &TableOptions::from(&options), b"", &mut buf).unwrap();
            let (back, _): (TableOptions, _) = decode(untag(&buf, TABLE_TAG).unwrap()).unwrap();
            let back = back.into_options().unwrap();
            assert_eq!((back.decode, back.gpu_scans), (choice, 3));
            assert_eq!(back.pinned_copy_back, 1 << 20);
            assert_eq!(back.devices, Devices::List(vec![1, 0]));
        }
        // A header without the fields (an older client) decodes on the CPU.
        let mut json =
            serde_json::to_value(TableOptions::from(&GdsTableOptions::default())).unwrap();
        let fields = json.as_object_mut().unwrap();
        fields.remove("decode");
        fields.remove("gpu_scans");
        fields.remove("pinned_copy_back");
        fields.remove("devices");
        let older: TableOptions = serde_json::from_value(json.clone()).unwrap();
        let older = older.into_options().unwrap();
        assert_eq!(
            (older.decode, older.gpu_scans, older.pinned_copy_back),
            (TableDecode::Cpu, GPU_SCANS, PINNED_COPY_BACK)
        );
        assert_eq!(older.devices, Devices::List(vec![0]));
        // A device list that does not parse is refused.
        let mut odd = json.clone();
        odd["devices"] = "0,0".into();
        let odd: TableOptions = serde_json::from_value(odd).unwrap();
        assert!(odd.into_options().unwrap_err().to_string().contains("0,0"));
        // An unknown choice is refused.
        json["decode"] = "tpu".into();
        let bad: TableOptions = serde_json::from_value(json).unwrap();
        assert!(bad.into_options().unwrap_err().to_string().contains("tpu"));
    }

    #[test]
    fn the_pushed_predicate_travels_with_every_literal_and_an_older_header_has_none() {
        use crate::parquet::predicate::{Literal, Op, Predicate, Test};
        let literals = [
            Literal::Int(i128::MAX),
            Literal::Decimal {
                digits: -7,
                scale: 2,
            },
            Literal::Float(2.5),
            Literal::Str("é'\"".into()),
            Literal::Binary(vec![0, 255]),
            Literal::Date(-1),
            Literal::Timestamp(-1_000_000_001),
            Literal::Bool(true),
        ];
        let mut parts: Vec<Predicate> = literals
            .iter()
            .map(|l| Predicate::cmp("a", Op::LtEq, l.clone()))
            .collect();
        parts.push(Predicate::term("b", Test::In(literals.to_vec())).negate());
        parts.push(Predicate::term("c", Test::StartsWith("x".into())));
        parts.push(Predicate::term("d", Test::CmpColumn(Op::Lt, "e".into())));
        parts.push(Predicate::Or(vec![Predicate::term("f", Test::IsNull)]));
        let pushed = PushedPredicate {
            predicate: Predicate::And(parts),
            exact: true,
        };
        let scan = Scan {
            options: TableOptions::from(&GdsTableOptions::default()),
            groups: vec![vec![]],
            pushed: Some(pushed.clone()),
        };
        let mut buf = Vec::new();
        encode(SCAN_TAG, &scan, b"", &mut buf).unwrap();
        let (back, _): (Scan, _) = decode(untag(&buf, SCAN_TAG).unwrap()).unwrap();
        assert_eq!(back.pushed, Some(pushed));
        // A header from before the predicate travelled has no such field.
        let mut json = serde_json::to_value(Scan {
            pushed: None,
            ..scan
        })
        .unwrap();
        json.as_object_mut().unwrap().remove("pushed");
        let older: Scan = serde_json::from_value(json).unwrap();
        assert_eq!(older.pushed, None);
    }

    #[test]
    fn a_files_access_and_read_ahead_plans_come_back_as_they_left() {
        let selection = RowSelection::from(vec![
            RowSelector::skip(3),
            RowSelector::select(5),
            RowSelector::skip(2),
        ]);
        let access = ParquetAccessPlan::new(vec![
            RowGroupAccess::Skip,
            RowGroupAccess::Scan,
            RowGroupAccess::Selection(selection),
        ]);
        let plan = FileScanPlan {
            row_groups: vec![PlannedRowGroup {
                index: 2,
                first_page: 40,
                chunks: vec![40..90, 95..120],
                some_rows: true,
            }],
            read_ahead: true,
        };
        let extras = FileExtras::new(Some("/d/f.parquet".into()), Some(&access), Some(&plan));
        let json = serde_json::to_vec(&extras).unwrap();
        let back: FileExtras = serde_json::from_slice(&json).unwrap();
        assert_eq!(back.location.as_deref(), Some("/d/f.parquet"));
        assert_eq!(back.scan_plan(), Some(plan));
        assert_eq!(
            format!("{:?}", back.access_plan().unwrap().inner()),
            format!("{:?}", access.inner())
        );
        let none = FileExtras::new(None, None, None);
        assert!(none.access_plan().is_none() && none.scan_plan().is_none());
    }

    #[test]
    fn short_or_foreign_bytes_are_errors() {
        assert!(untag(b"\x0a\x02xy", SCAN_TAG).is_none());
        assert!(matches!(
            decode::<Scan>(&[1, 0, 0]),
            Err(ClusterError::Wire(WireError::Short { len: 3 }))
        ));
        let mut buf = Vec::new();
        buf.extend_from_slice(&100u64.to_le_bytes());
        buf.extend_from_slice(b"{}");
        assert!(matches!(
            decode::<Scan>(&buf),
            Err(ClusterError::Wire(WireError::Short { .. }))
        ));
    }
}
