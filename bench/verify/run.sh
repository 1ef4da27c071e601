#!/usr/bin/env bash
# The hardened verification's cost and accuracy (docs/verification.md):
#  1. wall time of `kdispatch verify` on the example's honest run (kdispatch's own measurement:
#     two boxes, three workers, the parent's protocol, a signed receipt) against the kverify run
#     it replaced (kverify in a box of the verifier profile on the same snapshot), and against
#     kverify alone, in process, median of REPS;
#  2. agreement: the parent-timed speedup of a known-ratio pair (the same work done twice, 0.5)
#     against kverify's in-process measurement of the same pair.
# Usage: run.sh BUILD_DIR [REPS]
set -euo pipefail
build=$(realpath "$1")
reps=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
kd="$build/bin/kdispatch"
work=$(mktemp -d /var/tmp/kd-verify-bench.XXXXXX)  # off /tmp: boxes mount their own tmpfs there
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
now() { date +%s.%N; }
# Debian's interpreter, the one build.sh gives numpy (another python3 may come first on PATH).
py=/usr/bin/python3

"$kd" demo --run-root "$work/demo" > /dev/null
run="$work/demo/honest/runs/example/rms-norm-v002"
snap="$run/verifier/snapshot"
# The boxed kverify's scratch belongs to the box user, as the verifier's scratch does.
boxed="$work/kv-box"
mkdir -p "$boxed"
chown --reference="$run/verifier/candidate-work" "$boxed"
kverify=(verify --baseline "$snap/normkit/reference.py" --candidate "$snap/normkit/rms_norm.py"
         --mode full --family rms-norm --bar 1.02)
hard=() box=() soft=()
for i in $(seq "$reps"); do
  rm -f "$work/demo/honest/runs/example/journal.jsonl" "$run/outcome.json"
  t0=$(now); "$kd" verify --run "$run" > /dev/null || true; t1=$(now)
  hard+=("$(echo "$t1 - $t0" | bc)")
  t0=$(now)
  "$kd" sandbox exec --profile verifier --worktree "$boxed" --ro "$snap" \
    --ro "$src/examples/tools" -- "$py" "$src/examples/tools/kverify" "${kverify[@]}" \
    --artifact-dir "$boxed/art" --receipt "$boxed/art/receipt.json" > /dev/null 2>&1 || true
  t1=$(now)
  box+=("$(echo "$t1 - $t0" | bc)")
  t0=$(now)
  "$py" "$src/examples/tools/kverify" "${kverify[@]}" --artifact-dir "$work/kv" \
    --receipt "$work/kv/receipt.json" > /dev/null || true
  t1=$(now)
  soft+=("$(echo "$t1 - $t0" | bc)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
h=$(median "${hard[@]}") b=$(median "${box[@]}") s=$(median "${soft[@]}")
echo "verification wall s: hardened $h, kverify in a verifier box $b" \
     "(ratio $(echo "scale=3; $h / $b" | bc)), kverify in process $s" \
     "(ratio $(echo "scale=3; $h / $s" | bc))"

parent=$("$build/bench/verify/bench_verify_parent" "$here/known_ratio_ref.py" \
         "$here/known_ratio_slow.py" "$src/workers/kd-pyworker")
(cd "$here" && "$py" "$src/examples/tools/kverify" verify --baseline known_ratio_ref.py \
   --candidate known_ratio_slow.py --mode full --family agreement --bar 0 \
   --artifact-dir "$work/kv2" --receipt "$work/kv2/receipt.json" > /dev/null || true)
"$py" - "$parent" "$work/kv2/receipt.json" <<'PY'
import json, sys
parent, inproc = json.loads(sys.argv[1]), json.load(open(sys.argv[2]))["speedup"]
for clock in ("cpu", "wall"):
    s = parent[clock]["speedup"]
    print(f"agreement ({clock} clock): parent {s:.4f}, in-process {inproc:.4f}, "
          f"difference {abs(s - inproc) / inproc * 100:.1f}%")
PY
