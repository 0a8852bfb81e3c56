#!/usr/bin/env bash
# Regenerates docs/lab-report.png, the screenshot docs/lab.md § The report shows: the report of
# `onboard lab sweep` on a generated workload (100,000 events, seed 1), opened in Debian's
# headless Chromium at 1280×1600 by tools/lab_report_browser.py (which also checks it: no console
# error, every SVG drawn). Needs chromium, chromium-driver and python3-selenium (tools/setup.sh).
# About two minutes with a debug build, most of it the sweep.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product onboard
onboard=.build/debug/onboard
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$onboard" generate --events 100000 --seed 1 --output "$scratch/workload.jsonl"
"$onboard" lab sweep "$scratch/workload.jsonl" --limit 3..20 --window 1m..1h --report "$scratch/report.html" >/dev/null
/usr/bin/python3 tools/lab_report_browser.py --screenshot docs/lab-report.png "$scratch/report.html"
ls -l docs/lab-report.png
