#include "verify/output_check.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/errors.h"

namespace kd::verify {
namespace {

// Elements [from, from + n) of `bytes` as doubles, into `out`.
template <typename T>
void widen(const std::string& bytes, std::size_t from, std::size_t n, double* out) {
  const char* p = bytes.data() + from * sizeof(T);
  for (std::size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
  }
}

using Widen = void (*)(const std::string&, std::size_t, std::size_t, double*);

// The reader of a dtype the parent compares; throws kd::Error for any other.
Widen widener(const WireArray& a) {
  const char kind = a.dtype.size() > 1 ? a.dtype[1] : '?';
  const std::size_t size = a.itemsize();
  if (kind == 'f' && size == 4) return widen<float>;
  if (kind == 'f' && size == 8) return widen<double>;
  if (kind == 'i' && size == 1) return widen<std::int8_t>;
  if (kind == 'i' && size == 2) return widen<std::int16_t>;
  if (kind == 'i' && size == 4) return widen<std::int32_t>;
  if (kind == 'i' && size == 8) return widen<std::int64_t>;
  if ((kind == 'u' || kind == 'b') && size == 1) return widen<std::uint8_t>;
  if (kind == 'u' && size == 2) return widen<std::uint16_t>;
  if (kind == 'u' && size == 4) return widen<std::uint32_t>;
  if (kind == 'u' && size == 8) return widen<std::uint64_t>;
  throw Error("an output of dtype " + quote(a.dtype) + " cannot be compared by the parent");
}

std::string shape_text(const WireArray& a) {
  std::string s = "(";
  for (std::size_t i = 0; i < a.shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(a.shape[i]);
  return s + ")";
}

// How many elements of `g` are not within `tolerance` of `w` (a NaN or an infinity is never
// within): one comparison and one sum per element, read in place.
template <typename T>
std::size_t count_beyond(const std::string& g, const std::string& w, std::size_t n,
                         double tolerance) {
  std::size_t beyond = 0;
  for (std::size_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, g.data() + i * sizeof(T), sizeof(T));
    std::memcpy(&b, w.data() + i * sizeof(T), sizeof(T));
    beyond += !(std::fabs(double(a) - double(b)) <= tolerance);
  }
  return beyond;
}

}  // namespace

OutputStats output_distance(std::span<const WireArray> got, std::span<const WireArray> want) {
  OutputStats s;
  if (got.size() != want.size()) {
    s.problem = std::to_string(got.size()) + " outputs where the reference has " +
                std::to_string(want.size());
    return s;
  }
  std::size_t total = 0, finite = 0;
  double max_abs = 0, max_rel = 0, scale = 0;
  for (std::size_t k = 0; k < got.size(); ++k) {
    if (got[k].shape != want[k].shape) {
      s.problem = "output " + std::to_string(k) + " has shape " + shape_text(got[k]) +
                  ", the reference's " + shape_text(want[k]);
      return s;
    }
    Widen read_got = nullptr, read_want = nullptr;
    try {
      read_got = widener(got[k]);
      read_want = widener(want[k]);
    } catch (const Error& e) {
      s.problem = e.what();
      return s;
    }
    // A chunk at a time through two small buffers: outputs of hundreds of megabytes are compared
    // without a copy of their size, and the loop stays in the cache.
    constexpr std::size_t kChunk = 4096;
    double g[kChunk], w[kChunk];
    const std::size_t n = std::min(got[k].bytes.size() / got[k].itemsize(),
                                   want[k].bytes.size() / want[k].itemsize());
    for (std::size_t from = 0; from < n; from += kChunk) {
      const std::size_t m = std::min(kChunk, n - from);
      read_got(got[k].bytes, from, m, g);
      read_want(want[k].bytes, from, m, w);
      // Without branches, so the compiler can vectorize it: a non-finite output counts as not
      // finite and adds no difference; a NaN difference (a NaN in the reference) adds none.
      for (std::size_t i = 0; i < m; ++i) {
        const bool ok = std::isfinite(g[i]);
        finite += ok;
        double d = std::fabs(g[i] - w[i]);
        d = ok && d == d ? d : 0.0;
        const double aw = ok ? std::fabs(w[i]) : 0.0;
        const double r = d / (aw > 1e-30 ? aw : 1e-30);
        max_abs = d > max_abs ? d : max_abs;
        max_rel = r > max_rel ? r : max_rel;
        scale = aw > scale ? aw : scale;
      }
    }
    total += n;
  }
  s.max_abs = max_abs;
  s.max_rel = max_rel;
  s.scale = scale;
  s.finite_fraction = total ? double(finite) / double(total) : 1.0;
  s.ok = true;
  return s;
}

bool agrees_within(std::span<const WireArray> got, std::span<const WireArray> want,
                   double tolerance) {
  if (got.size() != want.size()) return false;
  for (std::size_t k = 0; k < got.size(); ++k) {
    const WireArray &g = got[k], &w = want[k];
    if (g.shape != w.shape || g.dtype != w.dtype || g.bytes.size() != w.bytes.size()) return false;
    const std::size_t n = g.itemsize() ? g.bytes.size() / g.itemsize() : 0;
    std::size_t beyond = 1;
    if (g.dtype == "<f4")
      beyond = count_beyond<float>(g.bytes, w.bytes, n, tolerance);
    else if (g.dtype == "<f8")
      beyond = count_beyond<double>(g.bytes, w.bytes, n, tolerance);
    if (beyond != 0) return false;
  }
  return true;
}

OutputStats compare_outputs(std::span<const WireArray> got, std::span<const WireArray> want,
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
