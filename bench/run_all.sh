#!/usr/bin/env bash
# Runs every benchmark against a Release build directory and prints the figures.
set -euo pipefail
build=${1:-build-release}
"$build"/bench/bench_chain --benchmark_min_time=0.5
