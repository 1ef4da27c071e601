#!/usr/bin/env bash
# The cost of driving Slurm through its command-line clients (README.md): brings a loopback
# cluster up on its own port and folder, measures, takes it down. Needs root and Debian's Slurm
# packages; without them it says what is missing and measures nothing.
#   bench/slurm/run.sh [BUILD]     (BUILD unused: the figures are Slurm's, not kdispatch's code)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cluster=$here/../../tests/slurm/cluster.sh
export KD_SLURM_PORT=${KD_SLURM_PORT:-6837}
export KD_SLURM_DIR=${KD_SLURM_DIR:-/tmp/kd-slurm-bench-$KD_SLURM_PORT}
missing=$("$cluster" missing)
if [ -n "$missing" ]; then
  echo "bench/slurm: skipped, missing: $missing"
  exit 0
fi
start=$(date +%s.%N)
eval "$("$cluster" up)"
echo "cluster up: $(python3 -c "print(f'{$(date +%s.%N) - $start:.2f}')") s"
trap '"$cluster" down' EXIT
work=$(mktemp -d)
trap '"$cluster" down; rm -rf "$work"' EXIT
python3 "$here/measure.py" "$work"
