//! The host's decompression jobs of a row group (BROTLI pages, legacy LZ4
//! pages without the Hadoop framing, GZIP pages of several members): run
//! on the worker threads while the row group is planned, in parallel over
//! its pages, into one host buffer that the stage uploads into the
//! scratch places the plan gave them ([`HostJob::dst_offset`]).

use super::decode_error::DecodeError;
use crate::decode::page::host_codec::decompress_into;
use crate::decode::page::{DecodePlan, HostJob};

/// A row group's pages decompressed on the host.
#[derive(Debug, Default)]
pub(crate) struct HostPages {
    /// Every host job's output, one after the other in plan order.
    pub(crate) bytes: Vec<u8>,
    /// Per host job of the plan: (offset in `bytes`, its scratch offset,
    /// bytes).
    pub(crate) places: Vec<(usize, usize, usize)>,
}

/// Runs `plan`'s host jobs on the stored bytes `host` (in parallel); the
/// first page, in plan order, that does not decompress to exactly its
/// header's size is a [`DecodeError::HostDecompress`] naming it.
pub(crate) fn decompress_host_pages(
    file: &str,
    plan: &DecodePlan,
    host: &[u8],
) -> Result<HostPages, DecodeError> {
    use rayon::prelude::*;
    let jobs = &plan.host_jobs;
    if jobs.is_empty() {
        return Ok(HostPages::default());
    }
    let total: usize = jobs.iter().map(|j| j.dst_len).sum();
    let mut bytes = vec![0u8; total];
    let mut places = Vec::with_capacity(jobs.len());
    let mut outputs = Vec::with_capacity(jobs.len());
    let (mut rest, mut at) = (&mut bytes[..], 0usize);
    for j in jobs {
        let (out, tail) = std::mem::take(&mut rest).split_at_mut(j.dst_len);
        places.push((at, j.dst_offset, j.dst_len));
        outputs.push(out);
        rest = tail;
        at += j.dst_len;
    }
    let results: Vec<Result<(), crate::decode::page::HostCodecError>> = jobs
        .par_iter()
        .zip(outputs.into_par_iter())
        .map(|(j, out)| decompress_into(j.codec, stored(j, host), out))
        .collect();
    for (j, result) in jobs.iter().zip(results) {
        result.map_err(|source| DecodeError::HostDecompress {
            file: file.to_string(),
            column: plan.columns[j.column].column.clone(),
            row_group: plan.row_group,
            page: j.page,
            codec: j.codec,
            source,
        })?;
    }
    Ok(HostPages { bytes, places })
}

/// A job's stored bytes (the planner placed them inside the row group's
/// bytes; none when it did not, which the codec then refuses as empty).
fn stored<'a>(j: &HostJob, host: &'a [u8]) -> &'a [u8] {
    j.src_offset
        .checked_add(j.src_len)
        .and_then(|end| host.get(j.src_offset..end))
        .unwrap_or(&[])
}
