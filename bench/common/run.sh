#!/usr/bin/env bash
# Transcript chain verification throughput per line size.
set -euo pipefail
"$1"/bench/common/bench_chain --benchmark_min_time=0.5
