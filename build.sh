#!/usr/bin/env bash
# The one entry point for building kdispatch on Debian 12: ./build.sh COMMAND (usage below).
# KD_WERROR=ON in the environment makes g++'s warnings errors (CI sets it: .ci/run); the clang
# fuzz build keeps its warnings as warnings.
set -euo pipefail
cd "$(dirname "$0")"

usage() {
  cat >&2 <<'EOF'
usage: ./build.sh COMMAND
  demo      install missing packages, build, run `kdispatch demo`
  test      install missing packages, build, run the whole test suite
  sanitize  the test suite under AddressSanitizer + UndefinedBehaviorSanitizer
  fuzz      build the libFuzzer targets with clang and run each briefly
  bench     build in Release and run the benchmarks (bench/README.md)
EOF
}

packages=(g++ cmake ninja-build pkg-config git ca-certificates python3 python3-numpy
  libcurl4-openssl-dev nlohmann-json3-dev libboost-dev libseccomp-dev libgit2-dev libzstd-dev
  libssl-dev zlib1g-dev libgtest-dev libgmock-dev libbenchmark-dev)
# What the test suite needs beyond the build: the report's browser tests drive Debian's headless
# Chromium (tests/report/browser_test.cc), and fail naming this package when it is missing;
# the supervision tests answer `author --supervise` in a real terminal through tmux
# (tests/dispatcher/supervise_tmux_test.cc), and fail naming tmux when it is missing; the Slurm
# tests run real jobs on a loopback cluster of Debian's Slurm (tests/slurm/cluster.sh, started
# by ctest's Slurm.ClusterUp as root), and skip naming what is missing where it cannot run.
test_packages=(chromium tmux munge slurmctld slurmd slurm-client)

install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "installing: ${missing[*]}" >&2
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() {  # build DIR [cmake args...]
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -Wno-dev -DKD_WERROR="${KD_WERROR:-OFF}" "$@" >/dev/null
  cmake --build "$dir" -j "$(nproc)"
}

# The official MCP TypeScript SDK, the client of tests/mcp/sdk_client.mjs, into the build tree.
install_mcp_sdk() {  # install_mcp_sdk DIR
  # Debian's nodejs and npm only where the machine has no Node.js yet: a Node.js from another
  # source bundles its own npm, and its package conflicts with Debian's npm.
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    install_missing nodejs npm
  fi
  [ -d "$1/mcp-sdk/node_modules/@modelcontextprotocol/sdk" ] && return 0
  npm install --prefix "$1/mcp-sdk" --no-audit --no-fund --silent @modelcontextprotocol/sdk@1.32.2
}

run_tests() {  # run_tests DIR
  # One test per core: each is a process, and the sandbox tests spawn many more.
  ctest --test-dir "$1" --output-on-failure -j "$(nproc)"
}

case "${1:-}" in
  demo)
    install_missing "${packages[@]}"
    build build -DCMAKE_BUILD_TYPE=RelWithDebInfo
    exec build/bin/kdispatch demo "${@:2}"
    ;;
  test)
    install_missing "${packages[@]}" "${test_packages[@]}"
    build build -DCMAKE_BUILD_TYPE=RelWithDebInfo
    install_mcp_sdk build
    run_tests build
    ;;
  sanitize)
    install_missing "${packages[@]}" "${test_packages[@]}"
    build build-asan -DCMAKE_BUILD_TYPE=Debug -DKD_SANITIZE=ON -DKD_BENCH=OFF
    install_mcp_sdk build-asan
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 run_tests build-asan
    ;;
  fuzz)
    install_missing "${packages[@]}" clang libclang-rt-14-dev
    CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -Wno-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DKD_FUZZ=ON -DKD_TESTS=OFF -DKD_BENCH=OFF >/dev/null
    cmake --build build-fuzz -j "$(nproc)" --target fuzzers
    for f in build-fuzz/tests/fuzz/fuzz_*; do
      [ -f "$f" ] && [ -x "$f" ] || continue
      corpus="build-fuzz/corpus/$(basename "$f")"
      mkdir -p "$corpus"
      "$f" -max_total_time="${FUZZ_SECONDS:-60}" -rss_limit_mb=2048 "$corpus" tests/fuzz/seeds/"$(basename "$f")"
    done
    ;;
  bench)
    install_missing "${packages[@]}" bubblewrap hyperfine
    build build-release -DCMAKE_BUILD_TYPE=Release -DKD_TESTS=OFF
    bench/run_all.sh build-release
    ;;
  *)
    usage
    exit 64
    ;;
esac
