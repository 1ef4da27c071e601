#!/usr/bin/env bash
# `kdispatch mcp` under load (issue: `tools/call status` under 5 ms p99 while four dispatches run;
# no CPU while idle). A raw JSON-lines client starts the server, dispatches four families of the
# simulated campaign (the fake model paced, chip work as sleeps), times status calls round-robin
# over the four runs while all four are in flight, waits for them to end, then reads the server's
# utime+stime from /proc over an idle stretch.
# Usage: run.sh BUILD_DIR [--calls N] [--chip-s S] [--pace-ms MS] [--idle-s S]
# (BUILD_DIR needs kdispatch and bench/dispatcher's bench_gen_campaign.)
set -euo pipefail
build=$(realpath "$1")
shift
calls=2000 chip_s=8 pace_ms=120 idle_s=10
while [ $# -gt 0 ]; do
  case "$1" in
    --calls) calls=$2 ;;
    --chip-s) chip_s=$2 ;;
    --pace-ms) pace_ms=$2 ;;
    --idle-s) idle_s=$2 ;;
  esac
  shift 2
done
here=$(cd "$(dirname "$0")" && pwd)
tools=$(cd "$here/../dispatcher" && pwd)  # fixed-verify
kd="$build/bin/kdispatch"
work=$(mktemp -d /var/tmp/kd-mcp.XXXXXX)  # off /tmp: boxes mount their own tmpfs there
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
"$build/bench/dispatcher/bench_gen_campaign" "$work/wiki" --families 4 --experiments 1 >/dev/null
python3 "$tools/write_sim.py" "$work" 4 "$chip_s" "$pace_ms"

python3 - "$kd" "$work" "$tools" "$calls" "$chip_s" "$pace_ms" "$idle_s" <<'PY'
import json, os, subprocess, sys, time
kd, work, tools = sys.argv[1], sys.argv[2], sys.argv[3]
calls, chip_s, pace, idle_s = int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])

server = subprocess.Popen([kd, "mcp", "--run-root", f"{work}/mcp-runs", "--wiki", f"{work}/wiki"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=open(f"{work}/mcp.err", "w"), text=True, bufsize=1)
next_id = 0
def request(method, params):
    global next_id
    next_id += 1
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}) + "\n")
    server.stdin.flush()
    while True:
        line = server.stdout.readline()
        if not line:
            sys.exit("the server closed its output: " + open(f"{work}/mcp.err").read()[-2000:])
        msg = json.loads(line)
        if msg.get("id") == next_id:
            if "error" in msg: sys.exit(f"{method}: {msg['error']}")
            return msg["result"]
def call(tool, args):
    r = request("tools/call", {"name": tool, "arguments": args})
    if r.get("isError"): sys.exit(f"{tool}: {r['content'][0]['text']}")
    return r["structuredContent"]

request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "1"}})
server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
server.stdin.flush()
ids = [call("dispatch", {"family": f"fam{i}", "experiment": "v001", "provider": "fake",
                         "script": f"{work}/script.json", "chips": f"{work}/chips.json",
                         "tool_dirs": [tools], "verify_cmd": f"fixed-verify {chip_s} {{receipt}}"})["run_id"]
       for i in range(4)]
active = lambda: all(call("status", {"run_id": i})["state"] in ("authoring", "verifying") for i in ids)
ms = []
while len(ms) < calls and active():
    for k in range(100):
        t0 = time.perf_counter()
        call("status", {"run_id": ids[k % 4]})
        ms.append((time.perf_counter() - t0) * 1000)
if len(ms) < 100: sys.exit(f"only {len(ms)} status calls while the four runs were in flight: raise --chip-s")
ms.sort()
q = lambda p: ms[min(len(ms) - 1, int(p * len(ms)))]
print(f"status while four dispatches run: {len(ms)} calls, p50 {q(0.50):.3f} ms, p99 {q(0.99):.3f} ms, max {ms[-1]:.3f} ms")
states = {}
for i in ids:
    for _ in range(40):
        s = call("wait", {"run_id": i, "timeout_s": 45})
        if s["state"] not in ("authoring", "verifying"): break
    states[i] = s["state"] + (f" ({s['verdict']})" if "verdict" in s else "")
print("runs ended:", ", ".join(f"{k} {v}" for k, v in states.items()))
def ticks():
    f = open(f"/proc/{server.pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])  # utime, stime (fields 14 and 15)
hz = os.sysconf("SC_CLK_TCK")
t0, c0 = time.monotonic(), ticks()
time.sleep(idle_s)
t1, c1 = time.monotonic(), ticks()
print(f"idle server: {c1 - c0} clock ticks (1/{hz} s) of CPU over {t1 - t0:.1f} s")
server.stdin.close()
server.wait(timeout=30)
PY
