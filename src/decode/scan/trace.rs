//! A timeline of one scan, for finding where its time goes when no
//! system profiler is at hand (the GPU machine has Nsight Compute, which
//! serialises kernels, but not Nsight Systems).
//!
//! With `DecodeOptions::trace` (default: `GDSCAN_DECODE_TRACE=FILE`), the
//! decoder records timed CUDA events at
//! the points where its GPU work changes phase (a row group's upload done,
//! nvCOMP's call for a group starting and ending, each kernel of a row group
//! ending) and host spans around its own waits, and writes them when the
//! scan ends as JSON lines: `{"side":"gpu"|"host","what":…,"group":…,
//! "row_group":…,"stream":…,"ms":…}` (GPU marks: milliseconds from the scan's
//! origin to the event) or `…,"start_ms":…,"end_ms":…}` (host spans). The
//! origin is an event recorded and waited for when the scan starts, so both
//! sides share one clock to within a few microseconds. Without the variable
//! nothing is recorded and nothing costs.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use crate::cuda::{CudaError, Device, Event, Stream};

/// The stream index of marks on the nvCOMP stream.
pub(crate) const NVCOMP_STREAM: usize = usize::MAX;
/// The stream index of marks on the upload stream.
pub(crate) const UPLOAD_STREAM: usize = usize::MAX - 1;
/// The stream index of marks on the check stream.
pub(crate) const CHECK_STREAM: usize = usize::MAX - 2;

/// One timed event in a stream.
struct GpuMark {
    what: &'static str,
    group: usize,
    row_group: Option<usize>,
    stream: usize,
    event: Event,
}

/// One span of the decoder's own thread.
struct HostSpan {
    what: &'static str,
    group: usize,
    start: Instant,
    end: Instant,
}

/// The timeline being recorded (see the module's documentation).
pub(crate) struct Trace {
    path: PathBuf,
    device: Device,
    origin: Event,
    origin_host: Instant,
    gpu: Vec<GpuMark>,
    host: Vec<HostSpan>,
}

impl Trace {
    /// A trace to be written to `path`, with its origin recorded on
    /// `stream` and waited for.
    pub(crate) fn start(
        path: PathBuf,
        device: Device,
        stream: &Stream,
    ) -> Result<Trace, CudaError> {
        let mut origin = Event::timed(device)?;
        origin.record(stream)?;
        origin.wait()?;
        Ok(Trace {
            path,
            device,
            origin,
            origin_host: Instant::now(),
            gpu: Vec::new(),
            host: Vec::new(),
        })
    }

    /// Records a timed event named `what` at the current end of `stream`
    /// (the `stream_index`-th of the scan's row-group streams, or
    /// [`NVCOMP_STREAM`] or [`UPLOAD_STREAM`]).
    pub(crate) fn mark(
        &mut self,
        what: &'static str,
        group: usize,
        row_group: Option<usize>,
        stream_index: usize,
        stream: &Stream,
    ) -> Result<(), CudaError> {
        let mut event = Event::timed(self.device)?;
        event.record(stream)?;
        self.gpu.push(GpuMark {
            what,
            group,
            row_group,
            stream: stream_index,
            event,
        });
        Ok(())
    }

    /// Records a span of the decoder's thread.
    pub(crate) fn span(&mut self, what: &'static str, group: usize, start: Instant) {
        self.host.push(HostSpan {
            what,
            group,
            start,
            end: Instant::now(),
        });
    }

    /// Records a span of another host thread (the planner's).
    pub(crate) fn span_between(
        &mut self,
        what: &'static str,
        group: usize,
        start: Instant,
        end: Instant,
    ) {
        self.host.push(HostSpan {
            what,
            group,
            start,
            end,
        });
    }

    /// Waits for every event and writes the timeline.
    pub(crate) fn write(&self) -> std::io::Result<()> {
        let ms = |t: Instant| t.saturating_duration_since(self.origin_host).as_secs_f64() * 1e3;
        let mut out = std::io::BufWriter::new(std::fs::File::create(&self.path)?);
        for m in &self.gpu {
            let at = m
                .event
                .wait()
                .and_then(|()| m.event.elapsed_ms_since(&self.origin));
            let Ok(at) = at else { continue };
            let stream = match m.stream {
                NVCOMP_STREAM => "\"nvcomp\"".to_string(),
                UPLOAD_STREAM => "\"upload\"".to_string(),
                CHECK_STREAM => "\"check\"".to_string(),
                n => n.to_string(),
            };
            let row_group = m.row_group.map_or("null".to_string(), |r| r.to_string());
            writeln!(
                out,
                "{{\"side\":\"gpu\",\"what\":\"{}\",\"group\":{},\"row_group\":{row_group},\"stream\":{stream},\"ms\":{at:.4}}}",
                m.what, m.group
            )?;
        }
        for h in &self.host {
            writeln!(
                out,
                "{{\"side\":\"host\",\"what\":\"{}\",\"group\":{},\"start_ms\":{:.4},\"end_ms\":{:.4}}}",
                h.what,
                h.group,
                ms(h.start),
                ms(h.end)
            )?;
        }
        out.flush()
    }
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trace")
            .field("path", &self.path)
            .field("gpu_marks", &self.gpu.len())
            .finish()
    }
}
