#!/usr/bin/env bash
# Sandbox spawn costs side by side: a fresh sandbox vs bubblewrap with equivalent isolation vs a
# bare fork/exec, and a command inside an open box vs a bare fork/exec (bench/sandbox/README.md);
# then whole processes from the shell, kdispatch sandbox exec vs bwrap (whole_process.sh).
# As root the worktree must belong to an unprivileged user (a box never runs as host root).
set -euo pipefail
build=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
command -v bwrap >/dev/null || { echo "bwrap is not installed (apt-get install bubblewrap)" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"
mkdir "$scratch/wt"
[ "$(id -u)" -ne 0 ] || chown 65534:65534 "$scratch/wt"
"$build/bench/sandbox/bench_sandbox_spawn" "$scratch/wt" "${ROUNDS:-100}" "${BALLAST_MB:-0}"
# The same from the shell, whole processes: kdispatch sandbox exec against bwrap.
"$here/whole_process.sh" "$build"
