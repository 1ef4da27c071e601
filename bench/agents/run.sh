#!/usr/bin/env bash
# 1,000 concurrent streaming sessions from one client thread against `kdispatch fake-llm`
# running as its own process: added latency per SSE event (p50, p99) and the client's peak RSS,
# first as bare client calls, then as whole sessions writing durable transcripts (on the build
# directory's file system, so fdatasync reaches the disk).
set -euo pipefail
build=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
sessions=${SESSIONS:-1000}
ulimit -n "$(ulimit -Hn)"
out=$(mktemp)
transcripts=$(mktemp -d "$build/bench-transcripts.XXXXXX")
"$build"/dispatcher/kdispatch fake-llm --script "$here/stream_script.json" >"$out" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out" "$transcripts"' EXIT
for _ in $(seq 50); do
  grep -q listening "$out" && break
  sleep 0.1
done
url=$(awk '/listening/ {print $2}' "$out")
for wire in anthropic openai; do
  "$build"/bench/agents/bench_agents_streams "$url" "$sessions" "$wire"
  "$build"/bench/agents/bench_agents_streams "$url" "$sessions" "$wire" "$transcripts/$wire"
done
