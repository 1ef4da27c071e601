#!/usr/bin/env bash
# The simulated overnight campaign (issue: 24 experiments on 8 chips): the fake model with
# latency, chip work as sleeps (the author's run_on_chip and the verifier's command), real
# worktrees, boxes, locks and journals. Reports the makespan against its lower bound,
# kdispatch's own CPU time and where the last family's chain went, then the same campaign one
# experiment at a time. With --slurm 1 the campaign runs once on local chips and once through a
# loopback Slurm cluster with as many chips (tests/slurm/cluster.sh), and the run_on_chip calls'
# durations of the two are compared.
# Usage: run.sh BUILD_DIR [--families F] [--experiments E] [--chip-s S] [--pace-ms MS] [--serial 0|1]
#                         [--slurm 0|1] [--mode full|screen]
# --mode is the verification's (kdispatch run --mode): screen times 8 rounds instead of 20, so the
# cross-checks, which share this host's cores on the simulated chips, weigh less.
set -euo pipefail
build=$(realpath "$1")
shift
families=8 experiments=3 chip_s=1.0 pace_ms=120 serial=1 slurm=0 mode=full
while [ $# -gt 0 ]; do
  case "$1" in
    --families) families=$2 ;;
    --experiments) experiments=$2 ;;
    --chip-s) chip_s=$2 ;;
    --pace-ms) pace_ms=$2 ;;
    --serial) serial=$2 ;;
    --slurm) slurm=$2 ;;
    --mode) mode=$2 ;;
  esac
  shift 2
done
here=$(cd "$(dirname "$0")" && pwd)
kd="$build/bin/kdispatch"
work=$(mktemp -d /var/tmp/kd-campaign.XXXXXX)  # off /tmp: boxes mount their own tmpfs there
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

python3 "$here/write_sim.py" "$work" "$families" "$chip_s" "$pace_ms"

# The model is a boundary we do not own: the fake one runs as its own process, so kdispatch's CPU
# time is the dispatcher's alone.
"$kd" fake-llm --script "$work/script.json" >"$work/fake.out" 2>&1 &
fake=$!
trap 'kill $fake 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do
  grep -q listening "$work/fake.out" && break
  sleep 0.1
done
url=$(awk '/listening/ {print $2}' "$work/fake.out")

run_campaign() {  # run_campaign NAME PARALLEL [CHIPS_FILE]
  local wiki="$work/$1-wiki" chips_file=${3:-$work/chips.json}
  "$build/bench/dispatcher/bench_gen_campaign" "$wiki" --families "$families" --experiments "$experiments" >/dev/null
  local fams=()
  for ((i = 0; i < families; i++)); do fams+=(--family "fam$i"); done
  local rc=0
  ANTHROPIC_API_KEY=bench "$kd" run --wiki "$wiki" "${fams[@]}" --provider anthropic --base-url "$url" \
    --chips "$chips_file" --run-root "$work/$1-runs" --parallel "$2" --status-every 3600 --mode "$mode" \
    --tool-dir "$here" --verify-cmd "fixed-verify $chip_s {receipt}" >"$work/$1.out" 2>"$work/$1.err" || rc=$?
  # 0 or 2: every experiment has its verdict (2 when some are not supported: the simulated tool's
  # speedup is not the parent's); anything else is the benchmark failing.
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then
    cat "$work/$1.err" >&2
    exit 1
  fi
  # Also writes each run_on_chip call's seconds, call to result, into $work/NAME-calls.txt.
  python3 - "$work/$1-runs" "$work/$1.out" "$chip_s" "$families" "$1" "$work/$1-calls.txt" <<'PY' || { cat "$work/$1.err" >&2; exit 1; }
import collections, datetime, glob, json, re, sys
runs, out, chip_s, chips, name, calls_file = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
text = open(out).read()
m = re.search(r"(\d+) experiments, wall ([0-9.]+) s, kdispatch cpu ([0-9.]+) s", text)
if not m:
    sys.exit(f"{name}: the campaign printed no summary (refused before dispatch?): see its stderr")
n, wall, cpu = int(m[1]), float(m[2]), float(m[3])
verdicts = collections.Counter(l.split()[1] for l in text.splitlines() if l.startswith("fam"))
ts = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
# Per family: its model time (request to response) and its run_on_chip calls (call to result).
chain, calls, durations = collections.defaultdict(float), collections.defaultdict(float), []
for t in glob.glob(f"{runs}/*/*/author/transcript.jsonl"):
    family = t.split("/")[-3].rsplit("-", 1)[0]
    sent, called = None, {}
    for line in open(t):
        r = json.loads(line)
        d = r.get("data", {})
        if r["type"] == "request": sent = ts(r["ts"])
        if r["type"] == "response" and sent is not None: chain[family] += ts(r["ts"]) - sent
        if r["type"] == "tool_call" and d.get("name") == "run_on_chip": called[d["id"]] = ts(r["ts"])
        if r["type"] == "tool_result" and d.get("id") in called:
            durations.append(ts(r["ts"]) - called.pop(d["id"]))
            calls[family] += durations[-1]
open(calls_file, "w").write("".join(f"{x}\n" for x in durations))
# Chip work: the simulated seconds of each run_on_chip and verify command, plus each
# verification's cross-check, the parent's own measurement on the chip (outcome.json). On this
# benchmark's CPU chips the cross-checks share the host's cores and slow each other down several
# times over; the campaign's fastest one stands for the work itself.
checks = collections.defaultdict(float)  # per family, the cross-checks' wall seconds
cross = []
for o in glob.glob(f"{runs}/*/*/outcome.json"):
    cross.append((json.load(open(o)).get("measurement", {}).get("cross_check") or {}).get("wall_s", 0.0))
    checks[o.split("/")[-2].rsplit("-", 1)[0]] += cross[-1]
cross_s = min(cross, default=0.0)
sim = {f: 2 * chip_s * (n // len(chain)) for f in chain}
work = (2 * chip_s + cross_s) * n
longest = max(chain[f] + sim[f] + cross_s * (n // len(chain)) for f in chain)
lb = max(work / chips, longest)
lb_sim = max(2 * chip_s * n / chips, max(chain[f] + sim[f] for f in chain))
print(f"{name}: {n} experiments on {chips} chips, verdicts {dict(verdicts)}")
print(f"  makespan {wall:.1f} s; lower bound {lb:.1f} s (chip work {work:.0f} s / {chips} chips = {work/chips:.1f} s; "
      f"longest chain {longest:.1f} s; a cross-check {cross_s:.2f} s, slowest {max(cross, default=0):.2f} s); "
      f"makespan/bound {wall/lb:.3f}")
print(f"  against the simulated chip time alone (no cross-check): bound {lb_sim:.1f} s, makespan/bound {wall/lb_sim:.3f}")
print(f"  kdispatch cpu {cpu:.2f} s = {100*cpu/wall:.2f}% of wall")
# Where the chain of the family that finished last went: model turns, run_on_chip calls (call to
# result), verifications (the author's finish to the verdict) and their cross-checks, the rest.
records = [json.loads(l) for j in glob.glob(f"{runs}/*/journal.jsonl") for l in open(j)]
start = min(ts(r["ts"]) for r in records)
began, end, finished, verify = {}, {}, {}, collections.defaultdict(float)
for r in records:
    e, t = r.get("experiment", ""), ts(r["ts"])
    f = e.split("/")[0]
    if r["type"] == "dispatched": began.setdefault(f, t)
    if r["type"] == "finished": finished[e] = t
    if r["type"] == "verdict" and e in finished:
        verify[f] += t - finished[e]
        end[f] = max(end.get(f, t), t)
last = max(end, key=end.get)
took = end[last] - began[last]  # from its first dispatch: a serial campaign's queue is not its chain
print(f"  the last family to finish, {last} at {end[last] - start:.1f} s: {took:.1f} s from its first dispatch, "
      f"model {chain[last]:.1f} s, run_on_chip {calls[last]:.1f} s, verifications {verify[last]:.1f} s "
      f"(cross-checks {checks[last]:.1f} s), the rest {took - chain[last] - calls[last] - verify[last]:.1f} s")
PY
}

echo "campaign: $families families x $experiments experiments, chip work ${chip_s} s per run, fake model pace ${pace_ms} ms/event, verification $mode"
run_campaign parallel 0
if [ "$slurm" = 1 ]; then
  cluster=$here/../../tests/slurm/cluster.sh
  export KD_SLURM_PORT=${KD_SLURM_PORT:-6847} KD_SLURM_CHIPS=$families
  export KD_SLURM_DIR=$work/slurm-cluster
  missing=$("$cluster" missing)
  [ -z "$missing" ] || { echo "bench/dispatcher: no Slurm cluster, missing: $missing" >&2; exit 1; }
  eval "$("$cluster" up)"
  trap 'kill $fake 2>/dev/null; "$cluster" down >/dev/null; rm -rf "$work"' EXIT
  # CPU chips, as the local campaign's: the simulated work is CPU time, and a cpu chip needs no
  # device nodes.
  printf '%s\n' '{"scheduler": "slurm", "partition": "kd", "gres": "gpu:tpu:1",' \
    '"chip_env": "TPU_VISIBLE_DEVICES", "kind": "cpu"}' >"$work/slurm-chips.json"
  sleep 3  # a cold controller's first scheduling pass; not kdispatch's latency
  run_campaign slurm 0 "$work/slurm-chips.json"
  python3 - "$work/parallel-calls.txt" "$work/slurm-calls.txt" <<'PY'
import statistics, sys
local, slurm = ([float(x) for x in open(f)] for f in sys.argv[1:3])
q = lambda v, p: sorted(v)[min(len(v) - 1, int(p * len(v)))]
print(f"run_on_chip, call to result: local median {statistics.median(local):.3f} s p99 {q(local, .99):.3f} s; "
      f"slurm median {statistics.median(slurm):.3f} s p99 {q(slurm, .99):.3f} s")
print(f"  added by Slurm: median {statistics.median(slurm) - statistics.median(local):.3f} s, "
      f"p99 {q(slurm, .99) - q(local, .99):.3f} s")
PY
fi
[ "$serial" = 0 ] || run_campaign serial 1
