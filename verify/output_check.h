// The parent's own comparison of outputs (it never asks a worker whether outputs agree): shapes,
// finiteness, and the floor-normalized gate of kgate's parity, where the floor is the reference's
// own error against its float64 oracle.
#pragma once

#include <string>
#include <vector>

#include "verify/worker_wire.h"

namespace kd::verify {

// An output as numbers; throws kd::Error for a dtype the parent cannot read.
std::vector<double> as_doubles(const WireArray& a);

struct OutputStats {
  bool ok = false;
  std::string problem;  // why not, when !ok
  double max_abs = 0, max_rel = 0, scale = 0, finite_fraction = 1;
};

// Compares `got` with `want` element by element; ok when shapes match, everything `got` holds is
// finite and max |got - want| <= tolerance.
OutputStats compare_outputs(const std::vector<WireArray>& got, const std::vector<WireArray>& want,
                            double tolerance);

// Just the statistics (no tolerance): max |got - want|, the scale max |want|, finiteness.
OutputStats output_distance(const std::vector<WireArray>& got, const std::vector<WireArray>& want);

}  // namespace kd::verify
