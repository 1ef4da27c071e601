#!/usr/bin/env bash
# The morning report of a 500-experiment campaign with 200-turn transcripts: generation wall
# time (goal: under 2 s) and the summary page's size (goal: under 1 MB). The page's time to
# interactive in a browser is measured by tests/report/browser_test.cc.
set -euo pipefail
bin="$1/bench/report"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin/bench_report_gen" "$tmp/runs" 500 200
sync
"$bin/bench_report" "$tmp/runs" "$tmp/report"
"$bin/bench_report" "$tmp/runs" "$tmp/report"  # again, over the previous report
