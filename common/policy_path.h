// Where a kdispatch program finds its files: relative to its own executable (/proc/self/exe),
// never through a path fixed at build time, so an installed tree works wherever it is put and
// never reaches back into the sources it was built from. Installed (cmake --install) and in the
// build tree alike (docs/install.md):
//   PREFIX/bin/         kdispatch, kdispatch-full, kdispatch-box
//   PREFIX/share/kdispatch/policies, PREFIX/share/kdispatch/examples,
//   PREFIX/share/kdispatch/workers
// The build tree's share/kdispatch/* are links to the sources. $KDISPATCH_POLICY_DIR and
// $KDISPATCH_EXAMPLES_DIR and $KDISPATCH_WORKERS_DIR, when set, replace the data folders.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace kd {

// The running program's own file. Throws kd::Error naming /proc/self/exe.
std::filesystem::path executable_path();

// PREFIX of the running program: the first of its folder's parent and grandparent that holds
// share/kdispatch, or nullopt. The grandparent is for the build tree's tests and benchmarks,
// which sit one level deeper (BUILD/tests/ROOM/, BUILD/bench/ROOM/) than its bin/.
std::optional<std::filesystem::path> installation_prefix();

// The directory holding the default policies. Throws kd::Error naming where it looked.
std::filesystem::path policy_dir();

// policy_dir() / relative, e.g. policy_file("sandbox/author.json").
std::filesystem::path policy_file(std::string_view relative);

// The directory holding the example wiki, its home repository, the fake model's scripts, the
// CPU verify tool and the refusal cases. Throws kd::Error naming where it looked.
std::filesystem::path examples_dir();

// The directory holding the measuring parent's worker programs (kd-pyworker). Throws kd::Error
// naming where it looked.
std::filesystem::path workers_dir();

}  // namespace kd
