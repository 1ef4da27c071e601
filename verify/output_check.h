// The parent's own comparison of outputs (it never asks a worker whether outputs agree): shapes,
// finiteness, and the floor-normalized gate of kgate's parity, where the floor is the reference's
// own error against its float64 oracle.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "verify/worker_wire.h"

namespace kd::verify {

struct OutputStats {
  bool ok = false;
  std::string problem;  // why not, when !ok
  double max_abs = 0, max_rel = 0, scale = 0, finite_fraction = 1;
};

// Compares `got` with `want` element by element; ok when shapes match, everything `got` holds is
// finite and max |got - want| <= tolerance.
OutputStats compare_outputs(std::span<const WireArray> got, std::span<const WireArray> want,
                            double tolerance);

// The quick test of a timed round: true when every output has the reference's dtype and shape
// and each element is within `tolerance` of it (float32 and float64 only; anything else, and
// any doubt, is false). compare_outputs then says what differs.
bool agrees_within(std::span<const WireArray> got, std::span<const WireArray> want,
                   double tolerance);

// Just the statistics (no tolerance): max |got - want|, the scale max |want|, finiteness.
OutputStats output_distance(std::span<const WireArray> got, std::span<const WireArray> want);

}  // namespace kd::verify
