#!/usr/bin/env bash
# Runs every benchmark folder's run.sh against a Release build directory.
set -euo pipefail
build=$(realpath "${1:-build-release}")
cd "$(dirname "$0")"
for script in */run.sh; do
  echo "== ${script%/run.sh}"
  "./$script" "$build"
done
