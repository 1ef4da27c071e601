#!/usr/bin/env bash
# The whole process from a shell, as a person or a script runs it: `kdispatch sandbox exec
# --worktree W -- /bin/true` against bubblewrap with the isolation of run.sh's bubblewrap
# variant, timed by hyperfine without a shell (bench/sandbox/README.md). PAIRS (default 3)
# alternating rounds of RUNS (default 100) runs each, so drift on a shared machine reaches both.
# As root the worktree belongs to an unprivileged user (a box never runs as host root).
set -euo pipefail
build=$(realpath "$1")
for tool in bwrap hyperfine; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed (./build.sh bench installs it)" >&2; exit 1; }
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"
wt="$scratch/wt"
mkdir "$wt"
[ "$(id -u)" -ne 0 ] || chown 65534:65534 "$wt"
kdispatch="$build/bin/kdispatch sandbox exec --worktree $wt -- /bin/true"
bubblewrap="bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $wt $wt --unshare-all"
bubblewrap+=" --die-with-parent --cap-drop ALL /bin/true"
for ((round = 1; round <= ${PAIRS:-3}; round++)); do
  hyperfine --shell=none --warmup 10 --runs "${RUNS:-100}" --style none \
    --export-json "$scratch/round$round.json" -n kdispatch "$kdispatch" -n bubblewrap "$bubblewrap"
done
python3 - "$scratch" "${PAIRS:-3}" <<'PY'
import json, statistics, sys
scratch, rounds = sys.argv[1], int(sys.argv[2])
per = {"kdispatch": [], "bubblewrap": []}
for r in range(1, rounds + 1):
    for res in json.load(open(f"{scratch}/round{r}.json"))["results"]:
        per[res["command"]].append(res)
print("                                  median ms per round          user+sys ms (mean)")
for name, results in per.items():
    medians = " / ".join(f"{1000 * x['median']:6.2f}" for x in results)
    cpu = statistics.mean(1000 * (x["user"] + x["system"]) for x in results)
    print(f"{name:<34}{medians}      {cpu:6.2f}")
ratios = [k["median"] / b["median"] for k, b in zip(per["kdispatch"], per["bubblewrap"])]
print(f"{'kdispatch / bubblewrap':<34}" + " / ".join(f"{r:5.2f}x" for r in ratios)
      + "   (target <= 1.0x)")
PY
