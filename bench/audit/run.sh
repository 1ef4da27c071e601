#!/usr/bin/env bash
# Audit throughput and memory: full rule set on Claude Code JSONL, chain-only and full on a
# kdispatch transcript, and a 1 GiB Claude Code stream through a FIFO (never stored on disk)
# to show that peak RSS does not grow with the input.
set -euo pipefail
bin="$1/bench/audit"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin/bench_audit_gen" claude 256 >"$tmp/claude.jsonl"
"$bin/bench_audit" full "$tmp/claude.jsonl"
"$bin/bench_audit_gen" kdispatch 256 >"$tmp/kdispatch.jsonl"
"$bin/bench_audit" chain "$tmp/kdispatch.jsonl"
"$bin/bench_audit" full "$tmp/kdispatch.jsonl"
"$bin/bench_audit_gen" claude 32 >"$tmp/small.jsonl"
"$bin/bench_audit" full "$tmp/small.jsonl"
mkfifo "$tmp/stream.jsonl"
"$bin/bench_audit_gen" claude 1024 >"$tmp/stream.jsonl" &
"$bin/bench_audit" full "$tmp/stream.jsonl"
wait
