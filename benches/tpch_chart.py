#!/usr/bin/env python3
"""The TPC-H chart of BENCHMARKS.md: seconds per query, one bar per reader,
from the JSON reports of one run (no plotting library: plain SVG).

    python3 benches/tpch_chart.py --gpu tpch-pinned.json [--pushdown tpch-pushdown.json]
        [--cpu tpch-cpu.json] [--duckdb duckdb-times.json] --out docs/tpch-chart.svg

--gpu: `gdscan bench tpch --engine datafusion --decode gpu --json` (gdscan's
GPU provider and DataFusion's own reader at its defaults); --pushdown: the
same with --listing-pushdown (DataFusion's reader with row filters: the bar
shows the better of its two settings per query); --cpu: the same bench with
--decode cpu (gdscan's CPU provider); --duckdb: benches/anchors/tpch_duckdb.py
--time N --json. Medians as the reports give them."""

import argparse
import json


def medians(path, side):
    with open(path) as f:
        report = json.load(f)
    return {q["query"]: q[f"{side}_median"] for q in report["queries"]}


def duckdb(path):
    with open(path) as f:
        report = json.load(f)
    return {int(k[1:]): v["median_seconds"] for k, v in report["queries"].items()}


def svg(series, title):
    """Grouped horizontal bars: a group per query, a bar per series."""
    queries = sorted({q for _, values, _ in series for q in values})
    top = max(v for _, values, _ in series for v in values.values())
    bar, gap, left, width = 7, 6, 52, 560
    group = bar * len(series) + gap
    legend = 18 * len(series) + 10
    height = 40 + legend + group * len(queries) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="10" y="20" font-size="13" font-weight="bold">{title}</text>']
    for i, (name, _, color) in enumerate(series):
        y = 36 + 18 * i
        out.append(f'<rect x="{left}" y="{y}" width="12" height="10" fill="{color}"/>')
        out.append(f'<text x="{left + 18}" y="{y + 9}">{name}</text>')
    y0 = 40 + legend
    for qi, q in enumerate(queries):
        gy = y0 + qi * group
        out.append(f'<text x="{left - 6}" y="{gy + group / 2}" text-anchor="end">Q{q}</text>')
        for si, (_, values, color) in enumerate(series):
            if q not in values:
                continue
            w = values[q] / top * width
            y = gy + si * bar
            out.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar - 1}" fill="{color}"/>')
            out.append(f'<text x="{left + w + 3:.1f}" y="{y + bar - 1}" font-size="8">{values[q]:.3f}</text>')
    axis = y0 + group * len(queries) + 4
    out.append(f'<line x1="{left}" y1="{axis}" x2="{left + width}" y2="{axis}" stroke="#444"/>')
    out.append(f'<text x="{left + width}" y="{axis + 14}" text-anchor="end">{top:.2f} s</text>')
    out.append(f'<text x="{left}" y="{axis + 14}">0 s</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gpu", required=True)
    p.add_argument("--pushdown")
    p.add_argument("--cpu")
    p.add_argument("--duckdb")
    p.add_argument("--title", default="TPC-H SF 10, seconds per query (median, warm)")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    datafusion = medians(a.gpu, "datafusion")
    if a.pushdown:
        other = medians(a.pushdown, "datafusion")
        datafusion = {q: min(t, other.get(q, t)) for q, t in datafusion.items()}
    series = [("DataFusion's reader (best of its settings)" if a.pushdown else "DataFusion's reader",
               datafusion, "#9e9e9e")]
    if a.duckdb:
        series.append(("DuckDB", duckdb(a.duckdb), "#e0a030"))
    if a.cpu:
        series.append(("gdscan, CPU decode", medians(a.cpu, "gdscan"), "#6a8fc8"))
    series.append(("gdscan, GPU decode", medians(a.gpu, "gdscan"), "#2e7d32"))
    with open(a.out, "w") as f:
        f.write(svg(series, a.title))
    for name, values, _ in series:
        print(f"{name}: sum {sum(values.values()):.3f} s over {len(values)} queries")


if __name__ == "__main__":
    main()
