#!/usr/bin/env bash
# `kdispatch brief` on a 5,000-page committed wiki: whole-process median wall time and peak RSS.
set -euo pipefail
build=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build"/bench/briefs/bench_gen_wiki "$work/wiki" --pages 5000
"$build"/bench/briefs/bench_brief_process "$build"/dispatcher/kdispatch "$work/wiki" rms-norm v002 50
