#!/usr/bin/env python3
"""Renders `onboard-bench --json` results as the markdown table of docs/benchmarks.md.

Usage: python3 Benchmarks/render_results.py results.json
"""
import json
import sys


def number(value):
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.1f}"
    if abs(value) >= 10:
        return f"{value:.2f}"
    return f"{value:.3g}"


def main(path):
    results = json.load(open(path))["results"]
    print("| name | value | unit | baseline | baseline value | ratio (min–max) | target | met |")
    print("| --- | ---: | --- | --- | ---: | --- | --- | --- |")
    for row in results:
        ratio = "—"
        if row.get("ratio") is not None:
            ratio = number(row["ratio"])
            if row.get("ratio_min") is not None and row.get("ratio_max") is not None:
                ratio += f" ({number(row['ratio_min'])}–{number(row['ratio_max'])})"
        met = {True: "**yes**", False: "no", None: "—"}[row.get("met")]
        print(f"| `{row['name']}` | {number(row.get('value'))} | {row.get('unit', '')} | {row.get('baseline') or '—'} "
              f"| {number(row.get('baseline_value'))} | {ratio} | {row.get('target') or '—'} | {met} |")
    measured = [row for row in results if row.get("met") is not None]
    print(f"\n{sum(1 for row in measured if row['met'])} of {len(measured)} measured targets met.")


if __name__ == "__main__":
    main(sys.argv[1])
