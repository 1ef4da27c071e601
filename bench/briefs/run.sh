#!/usr/bin/env bash
# `kdispatch brief` on a 5,000-page committed wiki: whole-process median wall time and peak RSS,
# with the wiki's objects loose (as committed) and then packed (after `git gc`).
set -euo pipefail
build=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build"/bench/briefs/bench_gen_wiki "$work/wiki" --pages 5000
echo "loose objects:"
"$build"/bench/briefs/bench_brief_process "$build"/bin/kdispatch "$work/wiki" rms-norm v002 50
git -C "$work/wiki" gc -q
git -C "$work/wiki/raw/code/normkit" gc -q
echo "packed objects (git gc):"
"$build"/bench/briefs/bench_brief_process "$build"/bin/kdispatch "$work/wiki" rms-norm v002 50
