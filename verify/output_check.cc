#include "verify/output_check.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/errors.h"

namespace kd::verify {
namespace {

template <typename T>
void append(const std::string& bytes, std::vector<double>& out) {
  const std::size_t n = bytes.size() / sizeof(T);
  out.reserve(out.size() + n);
  for (std::size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    out.push_back(static_cast<double>(v));
  }
}

std::string shape_text(const WireArray& a) {
  std::string s = "(";
  for (std::size_t i = 0; i < a.shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(a.shape[i]);
  return s + ")";
}

}  // namespace

std::vector<double> as_doubles(const WireArray& a) {
  std::vector<double> out;
  const char kind = a.dtype.size() > 1 ? a.dtype[1] : '?';
  const std::size_t size = a.itemsize();
  if (kind == 'f' && size == 4)
    append<float>(a.bytes, out);
  else if (kind == 'f' && size == 8)
    append<double>(a.bytes, out);
  else if (kind == 'i' && size == 1)
    append<std::int8_t>(a.bytes, out);
  else if (kind == 'i' && size == 2)
    append<std::int16_t>(a.bytes, out);
  else if (kind == 'i' && size == 4)
    append<std::int32_t>(a.bytes, out);
  else if (kind == 'i' && size == 8)
    append<std::int64_t>(a.bytes, out);
  else if ((kind == 'u' || kind == 'b') && size == 1)
    append<std::uint8_t>(a.bytes, out);
  else if (kind == 'u' && size == 2)
    append<std::uint16_t>(a.bytes, out);
  else if (kind == 'u' && size == 4)
    append<std::uint32_t>(a.bytes, out);
  else if (kind == 'u' && size == 8)
    append<std::uint64_t>(a.bytes, out);
  else
    throw Error("an output of dtype " + quote(a.dtype) + " cannot be compared by the parent");
  return out;
}

OutputStats output_distance(const std::vector<WireArray>& got, const std::vector<WireArray>& want) {
  OutputStats s;
  if (got.size() != want.size()) {
    s.problem = std::to_string(got.size()) + " outputs where the reference has " +
                std::to_string(want.size());
    return s;
  }
  std::size_t total = 0, finite = 0;
  for (std::size_t k = 0; k < got.size(); ++k) {
    if (got[k].shape != want[k].shape) {
      s.problem = "output " + std::to_string(k) + " has shape " + shape_text(got[k]) +
                  ", the reference's " + shape_text(want[k]);
      return s;
    }
    std::vector<double> g, w;
    try {
      g = as_doubles(got[k]);
      w = as_doubles(want[k]);
    } catch (const Error& e) {
      s.problem = e.what();
      return s;
    }
    for (std::size_t i = 0; i < g.size(); ++i) {
      ++total;
      if (!std::isfinite(g[i])) continue;
      ++finite;
      const double d = std::fabs(g[i] - w[i]);
      if (!(d <= s.max_abs)) s.max_abs = std::isnan(d) ? s.max_abs : d;
      s.max_rel = std::max(s.max_rel, d / std::max(std::fabs(w[i]), 1e-30));
      s.scale = std::max(s.scale, std::fabs(w[i]));
    }
  }
  s.finite_fraction = total ? double(finite) / double(total) : 1.0;
  s.ok = true;
  return s;
}

OutputStats compare_outputs(const std::vector<WireArray>& got, const std::vector<WireArray>& want,
                            double tolerance) {
  OutputStats s = output_distance(got, want);
  if (!s.ok) return s;
  if (s.finite_fraction < 1.0) {
    s.ok = false;
    s.problem = "non-finite values in the output (finite fraction " +
                std::to_string(s.finite_fraction) + ")";
  } else if (!(s.max_abs <= tolerance)) {
    s.ok = false;
    char buf[160];
    std::snprintf(buf, sizeof buf, "max |difference| %.3g exceeds the tolerance %.3g", s.max_abs,
                  tolerance);
    s.problem = buf;
  }
  return s;
}

}  // namespace kd::verify
