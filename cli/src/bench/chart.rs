//! The decode benchmark as a chart (`gdscan bench decode --plot F.svg`, or
//! `gdscan bench chart` from saved reports): per case, the PCIe floor, the
//! raw fetch of the same bytes, gdscan's decode split by where its
//! consumer's time went (waiting for I/O, host planning / checking /
//! staging, waiting for the GPU: nvCOMP and the kernels), and cuDF's total
//! when its anchor's report is given. Drawn with plotters into SVG.

use std::collections::HashMap;
use std::path::Path;

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use serde_json::Value;

use crate::error::{Error, Result};

/// One case's bars, in seconds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChartCase {
    /// all, q1, q6, ...
    pub name: String,
    /// The bytes read at the pinned host-to-device rate.
    pub pcie_floor: f64,
    /// gdscan's raw fetch of the same bytes into device memory.
    pub raw: f64,
    /// The decode's consumer waiting for reads.
    pub io_wait: f64,
    /// The decode's host work (planning, the compressed-page check, staging, queueing).
    pub host: f64,
    /// The decode's consumer waiting for the GPU (nvCOMP and the kernels).
    pub gpu_wait: f64,
    /// gdscan's file → decoded columns, median.
    pub decode: f64,
    /// cuDF's `read_parquet` of the same files and columns, median.
    pub cudf: Option<f64>,
}

fn number(v: &Value, key: &str) -> Result<f64> {
    v.get(key).and_then(Value::as_f64).ok_or_else(|| {
        Error::from(gdscan::config::ConfigError::Invalid {
            name: "decode report".into(),
            value: key.into(),
            reason: "missing or not a number".into(),
        })
    })
}

/// The one-GPU cases of a `bench decode --json` report, with cuDF's
/// medians (`benches/anchors/cudf_decode.py --json`) where given.
pub(crate) fn cases_from_json(report: &Value, cudf: Option<&Value>) -> Result<Vec<ChartCase>> {
    let cudf: HashMap<String, f64> = cudf
        .and_then(|c| c.get("cases"))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.get("median_seconds")?.as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for case in report
        .get("cases")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let one_gpu = case
            .get("devices")
            .and_then(Value::as_array)
            .is_none_or(|d| d.len() <= 1);
        if !one_gpu {
            continue;
        }
        let name = case
            .get("case")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let r = case.get("report").cloned().unwrap_or(Value::Null);
        out.push(ChartCase {
            pcie_floor: number(case, "pcie_floor_seconds")?,
            raw: number(case, "raw_seconds")?,
            io_wait: number(&r, "io_wait_seconds")?,
            host: number(&r, "host_seconds")?,
            gpu_wait: number(&r, "gpu_wait_seconds")?,
            decode: number(case, "decode_seconds")?,
            cudf: cudf.get(&name).copied(),
            name,
        });
    }
    Ok(out)
}

/// A bar: its row's label, and its segments (start, end, colour index).
type Bar = (String, Vec<(f64, f64, usize)>);

/// The rows of the chart, top to bottom. Colours: 0 floor, 1 raw, 2 I/O
/// wait, 3 host, 4 GPU wait, 5 rest of the decode, 6 cuDF.
fn bars(cases: &[ChartCase]) -> Vec<Bar> {
    let mut rows = Vec::new();
    for c in cases {
        rows.push((
            format!("{}: PCIe floor", c.name),
            vec![(0.0, c.pcie_floor, 0)],
        ));
        rows.push((
            format!("{}: gdscan raw fetch", c.name),
            vec![(0.0, c.raw, 1)],
        ));
        let mut at = 0.0;
        let mut parts = Vec::new();
        for (len, colour) in [(c.io_wait, 2), (c.host, 3), (c.gpu_wait, 4)] {
            let len = len.max(0.0).min(c.decode - at);
            if len > 0.0 {
                parts.push((at, at + len, colour));
                at += len;
            }
        }
        if c.decode > at {
            parts.push((at, c.decode, 5));
        }
        rows.push((format!("{}: gdscan decode", c.name), parts));
        if let Some(cudf) = c.cudf {
            rows.push((
                format!("{}: cuDF read_parquet", c.name),
                vec![(0.0, cudf, 6)],
            ));
        }
    }
    rows
}

const COLOURS: [RGBColor; 7] = [
    RGBColor(150, 150, 150),
    RGBColor(70, 130, 180),
    RGBColor(176, 196, 222),
    RGBColor(255, 165, 0),
    RGBColor(46, 139, 87),
    RGBColor(200, 200, 120),
    RGBColor(178, 34, 34),
];
const NAMES: [&str; 7] = [
    "PCIe floor (bytes at the pinned H2D rate)",
    "gdscan raw fetch (I/O only)",
    "decode: waiting for I/O",
    "decode: host (plan, page check, staging)",
    "decode: waiting for the GPU (nvCOMP, kernels)",
    "decode: rest",
    "cuDF read_parquet (total)",
];

/// Draws the chart as an SVG document.
pub(crate) fn svg(cases: &[ChartCase], title: &str) -> Result<String> {
    let rows = bars(cases);
    let xmax = rows
        .iter()
        .flat_map(|(_, parts)| parts.iter().map(|p| p.1))
        .fold(0.0f64, f64::max)
        .max(1e-3)
        * 1.12;
    let height = 140 + 34 * rows.len() as u32;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (1000, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let n = rows.len();
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(230)
            .build_cartesian_2d(0f64..xmax, (0..n).into_segmented())
            .map_err(draw_error)?;
        let labels: Vec<String> = rows.iter().rev().map(|(l, _)| l.clone()).collect();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc("seconds (median)")
            .y_labels(n)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .draw()
            .map_err(draw_error)?;
        for colour in 0..COLOURS.len() {
            let rects: Vec<Rectangle<(f64, SegmentValue<usize>)>> = rows
                .iter()
                .enumerate()
                .flat_map(|(r, (_, parts))| {
                    let row = n - 1 - r;
                    parts.iter().filter(move |p| p.2 == colour).map(move |p| {
                        Rectangle::new(
                            [
                                (p.0, SegmentValue::Exact(row)),
                                (p.1, SegmentValue::Exact(row + 1)),
                            ],
                            COLOURS[colour].filled(),
                        )
                    })
                })
                .collect();
            if rects.is_empty() {
                continue;
            }
            chart
                .draw_series(rects)
                .map_err(draw_error)?
                .label(NAMES[colour])
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], COLOURS[colour].filled())
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    Ok(text)
}

/// A plotters failure, kept as the error's source.
fn draw_error<E: std::error::Error + Send + Sync + 'static>(e: E) -> Error {
    Error::io("<chart>", "draw", std::io::Error::other(e))
}

/// Writes the chart of `cases` to `path`.
pub(crate) fn write(cases: &[ChartCase], title: &str, path: &Path) -> Result<()> {
    let text = svg(cases, title)?;
    std::fs::write(path, text).map_err(|e| Error::io(&path.display().to_string(), "write", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Value {
        serde_json::json!({
            "device": "0: test",
            "cases": [
                {"case": "all", "devices": [0], "pcie_floor_seconds": 0.04, "raw_seconds": 0.05,
                 "decode_seconds": 0.30,
                 "report": {"io_wait_seconds": 0.01, "host_seconds": 0.15, "gpu_wait_seconds": 0.12}},
                {"case": "all", "devices": [0, 1], "pcie_floor_seconds": 0.02, "raw_seconds": 0.05,
                 "decode_seconds": 0.2,
                 "report": {"io_wait_seconds": 0.01, "host_seconds": 0.1, "gpu_wait_seconds": 0.05}},
                {"case": "q1", "devices": [0], "pcie_floor_seconds": 0.01, "raw_seconds": 0.012,
                 "decode_seconds": 0.1,
                 "report": {"io_wait_seconds": 0.02, "host_seconds": 0.09, "gpu_wait_seconds": 0.03}}
            ]
        })
    }

    #[test]
    fn one_gpu_cases_with_cudf_where_given() {
        let cudf = serde_json::json!({"cases": {"all": {"median_seconds": 0.157}}});
        let cases = cases_from_json(&report(), Some(&cudf)).unwrap();
        assert_eq!(cases.len(), 2, "the two-GPU case is left out");
        assert_eq!(cases[0].name, "all");
        assert_eq!(cases[0].cudf, Some(0.157));
        assert_eq!(cases[1].cudf, None);
        assert_eq!(cases[1].host, 0.09);
    }

    /// The decode's segments never pass its total (the parts overlap in a
    /// pipeline; what does not fit is cut), and cover it exactly.
    #[test]
    fn the_decode_bar_is_its_total() {
        let cases = cases_from_json(&report(), None).unwrap();
        for (label, parts) in bars(&cases) {
            if label.ends_with("gdscan decode") {
                let total = cases
                    .iter()
                    .find(|c| label.starts_with(&c.name))
                    .unwrap()
                    .decode;
                assert_eq!(parts.first().unwrap().0, 0.0);
                assert!((parts.last().unwrap().1 - total).abs() < 1e-12, "{label}");
                for w in parts.windows(2) {
                    assert_eq!(w[0].1, w[1].0, "contiguous");
                }
            }
        }
    }

    #[test]
    fn a_missing_figure_is_an_error() {
        let bad = serde_json::json!({"cases": [{"case": "all", "devices": [0]}]});
        assert!(cases_from_json(&bad, None).is_err());
    }

    #[test]
    fn the_svg_names_every_row() {
        let cudf = serde_json::json!({"cases": {"all": {"median_seconds": 0.157}}});
        let cases = cases_from_json(&report(), Some(&cudf)).unwrap();
        let text = svg(&cases, "test").unwrap();
        assert!(text.starts_with("<svg"));
        for label in [
            "all: PCIe floor",
            "all: gdscan decode",
            "all: cuDF read_parquet",
            "q1: gdscan raw fetch",
        ] {
            assert!(text.contains(label), "{label}");
        }
    }
}
