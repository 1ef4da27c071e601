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
# The fake model and the client run on different cores when there are two, so the model's CPU
# does not show up as the client's queueing delay. PIN=0 turns this off. The transcript mode
# leaves the client unpinned: its transcript threads would inherit the streaming thread's core,
# which measures kdispatch confined to one core, not one streaming thread.
server_cpu=() client_cpu=()
if [[ ${PIN:-1} != 0 ]] && command -v taskset >/dev/null && (($(nproc) >= 2)); then
  server_cpu=(taskset -c 1) client_cpu=(taskset -c 0)
fi
out=$(mktemp)
transcripts=$(mktemp -d "$build/bench-transcripts.XXXXXX")
"${server_cpu[@]}" "$build"/bin/kdispatch fake-llm --script "$here/stream_script.json" >"$out" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out" "$transcripts"' EXIT
for _ in $(seq 50); do
  grep -q listening "$out" && break
  sleep 0.1
done
url=$(awk '/listening/ {print $2}' "$out")
for wire in anthropic openai; do
  "${client_cpu[@]}" "$build"/bench/agents/bench_agents_streams "$url" "$sessions" "$wire"
  "$build"/bench/agents/bench_agents_streams "$url" "$sessions" "$wire" "$transcripts/$wire"
done
# Long sessions against the in-process fake server's emulation: the cost of caching on both
# wires, a 500-turn session in a 200k window, 200 sessions sharing a rate limiter.
"$build"/bench/agents/bench_agents_long_sessions all
