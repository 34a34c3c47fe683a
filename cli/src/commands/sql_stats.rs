//! `gdscan sql --stats`: what gdscan's scans did, as text for standard
//! error (this process's scans; a Ballista cluster's executors report
//! their own).

use gdscan::datafusion::ScanTotals;

/// The totals as lines: bytes and reads, then, for tables that decode on
/// the GPU, files and rows per path, the GPU's and the copy back's time,
/// and where each file was decoded (and why not on the GPU).
pub(crate) fn render_stats(t: &ScanTotals) -> String {
    let mut out = format!(
        "gdscan: scans read {} bytes ({} needed) in {} requests, {:.3} s waiting for I/O\n",
        t.bytes_read,
        t.bytes_needed,
        t.requests,
        t.io_time.as_secs_f64()
    );
    let d = &t.decode;
    if d.files.is_empty() {
        return out;
    }
    out.push_str(&format!(
        "gdscan: decode: {} files on the GPU ({} rows), {} on the CPU ({} rows); \
         {:.3} s waiting for the GPU; {} bytes copied back in {:.3} s\n",
        d.gpu_files,
        d.gpu_rows,
        d.fallback_files,
        d.cpu_rows,
        d.gpu_decode_time.as_secs_f64(),
        d.copy_back_bytes,
        d.copy_back_time.as_secs_f64()
    ));
    for f in &d.files {
        match f.reason.as_str() {
            "" => out.push_str(&format!("gdscan: decode: {}: {}\n", f.file, f.path)),
            why => out.push_str(&format!("gdscan: decode: {}: {} ({why})\n", f.file, f.path)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use gdscan::datafusion::{DecodeTotals, FileDecoded};

    use super::*;

    #[test]
    fn each_file_is_shown_with_its_path_and_reason() {
        let totals = ScanTotals {
            bytes_read: 10,
            decode: DecodeTotals {
                gpu_files: 1,
                fallback_files: 1,
                files: vec![
                    FileDecoded {
                        file: "a.parquet".into(),
                        path: "gpu".into(),
                        reason: String::new(),
                    },
                    FileDecoded {
                        file: "b.parquet".into(),
                        path: "cpu".into(),
                        reason: "no usable GPU".into(),
                    },
                ],
                ..DecodeTotals::default()
            },
            ..ScanTotals::default()
        };
        let text = render_stats(&totals);
        assert!(text.contains("1 files on the GPU"), "{text}");
        assert!(text.contains("gdscan: decode: a.parquet: gpu\n"), "{text}");
        assert!(text.contains("b.parquet: cpu (no usable GPU)"), "{text}");
        let plain = render_stats(&ScanTotals::default());
        assert_eq!(plain.lines().count(), 1);
    }
}
