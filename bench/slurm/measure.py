#!/usr/bin/env python3
"""Measures, on the cluster SLURM_CONF names: sbatch's latency, submit-to-start of a one-chip
job, and the cost of one `squeue --json` poll (wall and CPU of the squeue process) with 10 and
100 jobs in Slurm's table. Prints one line per figure (README.md)."""
import json
import os
import resource
import statistics
import subprocess
import sys
import time

work = sys.argv[1]
print("load average before: %.2f %.2f %.2f on %d CPUs" % (*os.getloadavg(), os.cpu_count()))


def run(argv, env=None):
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=30,
                          env=env).stdout


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def script(name, body):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return path


def sbatch(path, *extra):
    # As kdispatch submits (dispatcher/slurm_client.cc): --export=ALL of PATH and SLURM_* alone.
    env = {k: v for k, v in os.environ.items() if k == "PATH" or k.startswith(("SLURM_", "SBATCH_"))}
    return run(["sbatch", "--parsable", "--export=ALL", "--no-requeue", "--chdir=" + work,
                "--output=" + os.path.join(work, "%j.out"), *extra, path], env=env).strip()


def wait_gone(ids, limit=180):
    end = time.time() + limit
    while time.time() < end:
        states = {str(j["job_id"]): j["job_state"] for j in json.loads(run(["squeue", "--json"]))["jobs"]}
        if all(states.get(i) not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING") for i in ids):
            return
        time.sleep(0.2)
    sys.exit("bench/slurm: jobs did not finish within %d s" % limit)


# 1. sbatch latency: held jobs, so the scheduler does not run them meanwhile.
held = script("held.sh", "true")
lat = []
ids = []
for _ in range(20):
    t = time.monotonic()
    ids.append(sbatch(held, "--hold"))
    lat.append((time.monotonic() - t) * 1000)
run(["scancel", *ids])
print(f"sbatch --parsable: median {statistics.median(lat):.1f} ms, p90 {pct(lat, 90):.1f} ms (20 calls)")

# 2. submit -> start of one-chip jobs, one at a time, each job writing its own start time; after
# one warm-up job, since slurmctld's first scheduling pass comes seconds after it starts.
starter = script("start.sh", "date +%s.%N")
wait_gone([sbatch(starter, "--gres=gpu:tpu:1")])
delays = []
for _ in range(10):
    t = time.time()
    job = sbatch(starter, "--gres=gpu:tpu:1")
    wait_gone([job])
    with open(os.path.join(work, job + ".out")) as f:
        delays.append(float(f.read().split()[0]) - t)
    time.sleep(0.37)  # not aligned with the scheduler's 1 s tick
print(f"submit -> start (one chip): median {statistics.median(delays):.2f} s, "
      f"min {min(delays):.2f}, max {max(delays):.2f} (10 jobs)")


# 3. one squeue --json poll with N jobs in the table (held: pending, listed, not running).
def poll_cost(n_jobs):
    ids = [sbatch(held, "--hold") for _ in range(n_jobs)]
    walls, cpus, size = [], [], 0
    for _ in range(20):
        c = children_cpu()
        t = time.monotonic()
        out = run(["squeue", "--json"])
        walls.append((time.monotonic() - t) * 1000)
        cpus.append((children_cpu() - c) * 1000)
        size = len(out)
    listed = len(json.loads(out)["jobs"])
    run(["scancel", *ids])
    return walls, cpus, size, listed


for n in (10, 100):
    # Slurm lists finished jobs for MinJobAge (300 s): the table holds the earlier ones too.
    walls, cpus, size, listed = poll_cost(n)
    print(f"squeue --json, {listed} jobs listed ({n} pending): wall median {statistics.median(walls):.1f} ms "
          f"p90 {pct(walls, 90):.1f} ms, CPU median {statistics.median(cpus):.1f} ms, "
          f"{size // 1024} KiB")
