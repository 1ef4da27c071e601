#!/usr/bin/env bash
# A real Slurm cluster on loopback for the tests and benchmarks (docs/slurm.md, "Testing"):
#   tests/slurm/cluster.sh up       bring it up (idempotent); prints `export SLURM_CONF=...`
#   tests/slurm/cluster.sh down     stop the daemons this script started, remove the folder
#   tests/slurm/cluster.sh status   exit 0 when the controller answers and every node is usable
# Everything lives in one folder; the knobs, all optional:
#   KD_SLURM_DIR    the folder (default /tmp/kd-slurm-$KD_SLURM_PORT)
#   KD_SLURM_PORT   slurmctld's port; the slurmd of node i listens on KD_SLURM_PORT+i (default 6817)
#   KD_SLURM_CHIPS  fake chips per node, GRES gpu:tpu:N (default 4)
#   KD_SLURM_NODES  1 or 2 slurmd on this host, nodes kd1 and kd2 (default 1)
#   KD_SLURM_UP_TIMEOUT  seconds `up` may take before it fails with the logs (default 20)
# Needs root (daemons as SlurmUser=root, mknod) and Debian's munge slurmctld slurmd slurm-client;
# without them `up` exits 77 (ctest's skip code) naming what is missing, as `missing` prints it.
set -euo pipefail

port=${KD_SLURM_PORT:-6817}
dir=${KD_SLURM_DIR:-/tmp/kd-slurm-$port}
chips=${KD_SLURM_CHIPS:-4}
nodes=${KD_SLURM_NODES:-1}
up_timeout=${KD_SLURM_UP_TIMEOUT:-20}
conf=$dir/etc/slurm.conf

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

[[ $port =~ ^[0-9]+$ ]] && ((port > 1023 && port < 65000)) || die "KD_SLURM_PORT=$port: not a port in 1024..64999"
[[ $chips =~ ^[0-9]+$ ]] && ((chips >= 1 && chips <= 64)) || die "KD_SLURM_CHIPS=$chips: not in 1..64"
[[ $nodes == 1 || $nodes == 2 ]] || die "KD_SLURM_NODES=$nodes: 1 or 2"
[[ $dir == /* && $dir != / ]] || die "KD_SLURM_DIR=$dir: not an absolute folder"

# Every client call is bounded: a Slurm client retries for minutes when the controller is gone.
probe() { SLURM_CONF=$conf timeout 3 "$@" 2>/dev/null; }

node_name() { echo "kd$1"; }

# Prints what is missing to run a cluster here, nothing when all is present.
missing() {
  local m=() p
  for p in munged munge slurmctld slurmd sbatch squeue scontrol sinfo scancel; do
    command -v "$p" >/dev/null || m+=("$p")
  done
  [ "$(id -u)" -eq 0 ] || m+=("root")
  echo "${m[*]}"
}

# A pid from our pid file, only while it is still the daemon we started (same program, our
# folder on its command line), so a recycled pid is never signalled.
our_pid() {  # our_pid PIDFILE PROGRAM
  local pid
  [ -s "$1" ] || return 1
  pid=$(<"$1")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir/" || return 1
  echo "$pid"
}

daemons() {  # the PIDFILE:PROGRAM pairs this script may have started
  local f
  echo "$dir/run/slurmctld.pid:slurmctld"
  for f in "$dir"/run/slurmd-*.pid; do echo "$f:slurmd"; done
  echo "$dir/run/munged.pid:munged"
}

healthy() {
  [ -f "$conf" ] || return 1
  probe scontrol ping | grep -q 'is UP' || return 1
  local states
  states=$(probe sinfo -h -N -o '%N %T') || return 1
  [ "$(grep -cE ' (idle|mixed|allocated|completing)$' <<<"$states")" -eq "$nodes" ]
}

down() {
  [ -d "$dir" ] || return 0
  if [ -f "$conf" ] && probe scontrol ping | grep -q 'is UP'; then
    # Jobs end while their slurmd still runs to kill them: a slurmstepd outlives its slurmd.
    probe scancel --full --quiet --partition=kd || true
    local t=100
    while ((t-- > 0)) && [ -n "$(probe squeue -h -o %i -t R,CG,CF,S)" ]; do sleep 0.1; done
  fi
  local entry pid pids=()
  # The Slurm daemons first, munged last: they need it to shut down cleanly.
  for entry in $(daemons); do
    pid=$(our_pid "${entry%%:*}" "${entry##*:}") || continue
    if [ "${entry##*:}" = munged ]; then
      munged_pid=$pid
      continue
    fi
    kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
  done
  wait_gone 10 "${pids[@]}"
  kill_leftover_jobs
  if [ -n "${munged_pid:-}" ]; then
    kill -TERM "$munged_pid" 2>/dev/null && wait_gone 5 "$munged_pid"
  fi
  rm -rf -- "$dir"
}

# Waits up to SECONDS for the pids to exit; SIGKILLs those still there (a slurmd that lost its
# controller ignores SIGTERM).
wait_gone() {  # wait_gone SECONDS PID...
  local t=$(($1 * 10)) p alive
  shift
  while ((t-- > 0)); do
    alive=0
    for p in "$@"; do [ -d "/proc/$p" ] && alive=1; done
    ((alive)) || return 0
    sleep 0.1
  done
  for p in "$@"; do kill -KILL "$p" 2>/dev/null || true; done
}

# A job step whose slurmd was stopped under it keeps running: its slurmstepd (working folder in
# ours) and the job's processes (its script in our spool, in a session of its own) are killed.
kill_leftover_jobs() {
  local p pgid own
  own=$(ps -o pgid= -p $$ | tr -d ' ')
  for p in $(pgrep -x slurmstepd); do
    [[ $(readlink "/proc/$p/cwd" 2>/dev/null) == "$dir"/* ]] && kill -KILL "$p" 2>/dev/null
  done
  for p in $(pgrep -f -- "$dir/state/"); do
    pgid=$(ps -o pgid= -p "$p" | tr -d ' ')
    [ -n "$pgid" ] && [ "$pgid" != "$own" ] && kill -KILL -- "-$pgid" 2>/dev/null
  done
  return 0
}

fail_up() {
  echo "cluster.sh up: $*" >&2
  local f
  for f in "$dir"/log/*.log; do
    [ -f "$f" ] || continue
    echo "--- tail of $f" >&2
    tail -n 15 "$f" >&2
  done
  down
  exit 1
}

start_munge() {
  # A munged that already answers on the default socket is reused (a machine with Slurm runs
  # one as a service). Otherwise this cluster gets its own on a socket in its folder, so its
  # `down` never takes away a munged another cluster relies on.
  if timeout 3 munge -n </dev/null 2>/dev/null | timeout 3 unmunge >/dev/null 2>&1; then
    return 0
  fi
  install -d -m 0755 "$dir/munge"
  install -d -m 0700 "$dir/munge/private"
  head -c 128 /dev/urandom >"$dir/munge/private/munge.key"
  chmod 0400 "$dir/munge/private/munge.key"
  timeout 5 munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/private/munge.key" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/private/munged.seed" ||
    fail_up "munged did not start"
  munge_socket=$dir/munge/munge.socket
}

write_config() {
  local i n gres_files
  {
    echo "# Written by tests/slurm/cluster.sh; removed by its down."
    echo "ClusterName=kd$port"
    echo "SlurmctldHost=localhost"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    [ -n "${munge_socket:-}" ] && echo "AuthInfo=socket=$munge_socket"
    echo "SlurmctldPort=$port"
    echo "SlurmdPort=$((port + 1))"
    echo "StateSaveLocation=$dir/state/ctld"
    # %n: each slurmd of a two-node cluster keeps its own spool, pid file and log.
    echo "SlurmdSpoolDir=$dir/state/%n"
    echo "SlurmctldPidFile=$dir/run/slurmctld.pid"
    echo "SlurmdPidFile=$dir/run/slurmd-%n.pid"
    echo "SlurmctldLogFile=$dir/log/slurmctld.log"
    echo "SlurmdLogFile=$dir/log/slurmd-%n.log"
    echo "MailProg=/bin/true"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    # Without a database, finished jobs' permanent record (squeue forgets them after MinJobAge).
    echo "JobCompType=jobcomp/filetxt"
    echo "JobCompLoc=$dir/log/jobcomp.txt"
    echo "SchedulerType=sched/backfill"
    # The default 3 s delay would make every batch job wait for it.
    echo "SchedulerParameters=batch_sched_delay=0"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    # More CPUs than the host has (config_overrides accepts them), so the chips, not the cores,
    # bound how many jobs run at once.
    echo "SlurmdParameters=config_overrides"
    echo "ReturnToService=2"
    echo "MpiDefault=none"
    echo "GresTypes=gpu"
    echo "TaskProlog=$dir/etc/taskprolog.sh"
    for ((i = 1; i <= nodes; i++)); do
      n=$(node_name "$i")
      echo "NodeName=$n NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((port + i))" \
        "CPUs=$((chips * 2)) RealMemory=1000 Gres=gpu:tpu:$chips State=UNKNOWN"
    done
    echo "PartitionName=kd Nodes=$(node_name 1)$( ((nodes == 2)) && echo ",$(node_name 2)") Default=YES MaxTime=INFINITE State=UP"
  } >"$conf"
  : >"$dir/etc/gres.conf"
  for ((i = 1; i <= nodes; i++)); do
    n=$(node_name "$i")
    mkdir -p "$dir/dev/$n"
    # gres/gpu accepts only device files; 240 is the experimental major, so nothing opens them.
    for ((c = 0; c < chips; c++)); do mknod "$dir/dev/$n/tpu$c" c 240 "$c"; done
    gres_files="$dir/dev/$n/tpu[0-$((chips - 1))]"
    ((chips == 1)) && gres_files="$dir/dev/$n/tpu0"
    # no_gpu_env: no CUDA_/ROCR_ variables; the TaskProlog names the chip for TPU code.
    echo "NodeName=$n Name=gpu Type=tpu File=$gres_files Flags=no_gpu_env" >>"$dir/etc/gres.conf"
  done
  cat >"$dir/etc/taskprolog.sh" <<'EOF'
#!/bin/sh
# Slurm's TaskProlog: each `export K=V` line it prints enters the task's environment. The chip
# index Slurm assigned (global, also under device cgroups) becomes TPU_VISIBLE_DEVICES.
ids="${SLURM_STEP_GPUS:-$SLURM_JOB_GPUS}"
[ -n "$ids" ] && echo "export TPU_VISIBLE_DEVICES=$ids"
exit 0
EOF
  chmod 0755 "$dir/etc/taskprolog.sh"
}

up() {
  if healthy; then
    echo "export SLURM_CONF=$conf"
    return 0
  fi
  local m
  m=$(missing)
  if [ -n "$m" ]; then
    echo "cluster.sh: cannot run a cluster here, missing: $m" >&2
    exit 77
  fi
  down
  local deadline=$((SECONDS + up_timeout)) i
  mkdir -p "$dir"/{etc,state/ctld,log,run,dev}
  for ((i = 1; i <= nodes; i++)); do mkdir -p "$dir/state/$(node_name "$i")"; done
  start_munge
  write_config
  timeout 5 slurmctld -f "$conf" || fail_up "slurmctld -f $conf failed"
  until probe scontrol ping | grep -q 'is UP'; do
    ((SECONDS < deadline)) || fail_up "slurmctld did not answer within ${up_timeout}s"
    sleep 0.1
  done
  for ((i = 1; i <= nodes; i++)); do
    timeout 5 slurmd -f "$conf" -N "$(node_name "$i")" || fail_up "slurmd -N $(node_name "$i") failed"
  done
  until healthy; do
    ((SECONDS < deadline)) || fail_up "the nodes were not idle within ${up_timeout}s"
    sleep 0.1
  done
  echo "export SLURM_CONF=$conf"
}

status() {
  if healthy; then
    probe sinfo -N -o '%N %T %G'
    echo "export SLURM_CONF=$conf"
  else
    echo "cluster.sh: no healthy cluster in $dir" >&2
    return 1
  fi
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  missing) missing ;;
  *)
    echo "usage: tests/slurm/cluster.sh up|down|status|missing" >&2
    exit 64
    ;;
esac
