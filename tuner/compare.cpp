// lntune: tolerance checks against the CPU reference (see compare.hpp).
#include "tuner/compare.hpp"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "tuner/host_dtype.hpp"

namespace lntune::ref {

namespace {

constexpr double kU32 = 5.9604644775390625e-08;  // 2^-24
constexpr double kLambda = 4.0;                  // probabilistic bound factor
constexpr double kXhatMax = 8.0;                 // assumed max |xhat|

double unit_roundoff(DType d) {
  switch (d) {
    case DType::f32: return kU32;                       // 2^-24
    case DType::f16: return 4.8828125e-04;              // 2^-11
    case DType::bf16: return 3.90625e-03;               // 2^-8
  }
  throw Error("default_tolerance: invalid DType");
}

double min_subnormal(DType d) {
  switch (d) {
    case DType::f32: return std::ldexp(1.0, -149);
    case DType::f16: return std::ldexp(1.0, -24);
    case DType::bf16: return std::ldexp(1.0, -133);
  }
  throw Error("default_tolerance: invalid DType");
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::f32: return "fp32";
    case DType::f16: return "fp16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

uint32_t raw_bits(DType d, const void* base, int64_t index) {
  if (d == DType::f32) {
    uint32_t b;
    std::memcpy(&b, static_cast<const unsigned char*>(base) + index * 4, 4);
    return b;
  }
  return static_cast<const uint16_t*>(base)[index];
}

std::string fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

}  // namespace

Tolerance default_tolerance(DType out, Quantity q, int64_t N, int64_t M, double magnitude) {
  if (N < 1) throw Error("default_tolerance: N must be >= 1");
  if (M < 0) throw Error("default_tolerance: M must be >= 0");
  if (!(magnitude >= 0) || std::isinf(magnitude))
    throw Error("default_tolerance: magnitude must be finite and >= 0");
  if (q == Quantity::mean_rstd) out = DType::f32;

  const double u = kU32;
  const double uo = unit_roundoff(out);
  const double so = min_subnormal(out);
  const double lam = kLambda, X = kXhatMax, mag = magnitude;
  const double s = std::sqrt(static_cast<double>(N));
  const double one_ulp = 2.0 * uo / (1.0 - uo);
  const double e_mean = 2.0 * lam * s * u;
  const double e_r = 0.5 * lam * s * u + 3.0 * u;

  Tolerance t;
  switch (q) {
    case Quantity::y:
      t.rtol = one_ulp + (1.0 + uo) * (e_r + 5.0 * u);  // +u: zero-centred 1 + w
      t.atol = (1.0 + uo) * mag * (e_mean + e_r + 6.0 * u) + so;
      break;
    case Quantity::dx:
      t.rtol = one_ulp + (1.0 + uo) * (2.0 * e_r + 8.0 * u);  // +2u: 1 + w, + dz
      t.atol = (1.0 + uo) * mag *
                   ((X + 1.0) * e_mean + (X + 2.0) * e_r + (X + 1.0) * lam * s * u +
                    (2.0 * X + 15.0) * u) +
               so;
      break;
    case Quantity::dweight: {
      const double m = static_cast<double>(M);
      t.rtol = one_ulp;
      t.atol = (1.0 + uo) * mag * lam * std::sqrt(m) * (m * u + e_mean + X * (e_r + 3.0 * u)) + so;
      break;
    }
    case Quantity::mean_rstd:
      t.rtol = one_ulp + e_r + 2.0 * u;
      t.atol = mag * (e_mean + u) + so;
      break;
  }
  return t;
}

uint32_t poison_bits(DType dtype) {
  switch (dtype) {
    case DType::f32: return 0x7fbadbadu;
    case DType::f16: return 0x7fbbu;
    case DType::bf16: return 0x7fbbu;
  }
  throw Error("poison_bits: invalid DType");
}

void poison(DType dtype, void* data, int64_t count) {
  if (count <= 0) return;
  const uint32_t p = poison_bits(dtype);
  if (dtype == DType::f32) {
    auto* d = static_cast<unsigned char*>(data);
    for (int64_t i = 0; i < count; ++i) std::memcpy(d + i * 4, &p, 4);
  } else {
    auto* d = static_cast<uint16_t*>(data);
    const auto p16 = static_cast<uint16_t>(p);
    for (int64_t i = 0; i < count; ++i) d[i] = p16;
  }
}

namespace {

// One block of rows [row0, row_end) of compare(): its counts, maxima, the
// sums behind the relative l2 error and its first failure.
struct Block {
  CompareResult r;
  double sum_d2 = 0, sum_w2 = 0;
  std::string first;
};

// An element's bits and value in dtype D (no per-element dispatch).
template <DType D>
inline uint32_t bits_of(const void* base, int64_t index) {
  if constexpr (D == DType::f32) {
    uint32_t b;
    std::memcpy(&b, static_cast<const unsigned char*>(base) + index * 4, 4);
    return b;
  } else {
    return static_cast<const uint16_t*>(base)[index];
  }
}
template <DType D>
inline double value_of(uint32_t bits) {
  if constexpr (D == DType::f32) {
    float f;
    std::memcpy(&f, &bits, 4);
    return static_cast<double>(f);
  } else if constexpr (D == DType::bf16) {
    return static_cast<double>(bf16_to_float(static_cast<uint16_t>(bits)));
  } else {
    return static_cast<double>(half_to_float(static_cast<uint16_t>(bits)));
  }
}

template <DType D>
Block compare_rows(const void* got, const void* want, int64_t row0, int64_t row_end, int64_t cols,
                   int64_t got_stride, int64_t want_stride, Tolerance tol, bool check_poison, uint32_t pbits) {
  constexpr DType dtype = D;
  Block b;
  // Equal bits that are not the poison pattern: no error, only |want|^2 to
  // add (a NaN or infinite want adds nothing).
  auto same = [check_poison, pbits](uint32_t gbits, uint32_t wbits) {
    return gbits == wbits && !(check_poison && gbits == pbits);
  };
  auto square = [](double w) { return std::isfinite(w) ? w * w : 0.0; };
  // One element, in general.
  auto element = [&](int64_t i, int64_t j) {
    const int64_t gi = i * got_stride + j, wi = i * want_stride + j;
    const uint32_t gbits = bits_of<D>(got, gi);
    const uint32_t wbits = bits_of<D>(want, wi);
    if (same(gbits, wbits)) {
      b.sum_w2 += square(value_of<D>(wbits));
      return;
    }
    const double g = value_of<D>(gbits);
    const double w = value_of<D>(wbits);
    const char* why = nullptr;
    double diff = 0, allowed = 0;

    if (check_poison && gbits == pbits) {
      ++b.r.unwritten;
      why = "unwritten (poison pattern)";
    } else if (std::isnan(g) || std::isnan(w)) {
      if (std::isnan(g) != std::isnan(w)) {
        ++b.r.nan_mismatch;
        why = "NaN mismatch";
      }
    } else if (std::isinf(g) || std::isinf(w)) {
      if (g != w) why = "infinity mismatch";
    } else {
      diff = std::fabs(g - w);
      allowed = tol.atol + tol.rtol * std::fabs(w);
      if (diff > b.r.max_abs_err) b.r.max_abs_err = diff;
      if (w != 0) {
        const double rel = diff / std::fabs(w);
        if (rel > b.r.max_rel_err) b.r.max_rel_err = rel;
      }
      b.sum_d2 += diff * diff;
      b.sum_w2 += w * w;
      if (!(diff <= allowed)) why = "outside tolerance";
    }

    if (why != nullptr) {
      if (b.r.mismatches == 0) {
        b.r.first_bad_row = i;
        b.r.first_bad_col = j;
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "first bad element [%" PRId64 ", %" PRId64 "]: got %.9g (0x%0*x) want "
                      "%.9g (0x%0*x): %s",
                      i, j, g, dtype == DType::f32 ? 8 : 4, raw_bits(dtype, got, gi), w,
                      dtype == DType::f32 ? 8 : 4, raw_bits(dtype, want, wi), why);
        b.first = buf;
        if (std::string(why) == "outside tolerance")
          b.first += ", |diff| " + fmt("%.3g", diff) + " > " + fmt("%.3g", allowed);
      }
      ++b.r.mismatches;
    }
  };
  for (int64_t i = row0; i < row_end; ++i) {
    // Four elements at a time while all four are equal (most of a correct
    // output), their squares in four sums; any other group element-wise.
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t j = 0;
    for (; j + 4 <= cols; j += 4) {
      const int64_t gi = i * got_stride + j, wi = i * want_stride + j;
      const uint32_t g0 = bits_of<D>(got, gi), g1 = bits_of<D>(got, gi + 1), g2 = bits_of<D>(got, gi + 2),
                     g3 = bits_of<D>(got, gi + 3);
      const uint32_t w0 = bits_of<D>(want, wi), w1 = bits_of<D>(want, wi + 1), w2 = bits_of<D>(want, wi + 2),
                     w3 = bits_of<D>(want, wi + 3);
      if (same(g0, w0) & same(g1, w1) & same(g2, w2) & same(g3, w3)) {
        s0 += square(value_of<D>(w0));
        s1 += square(value_of<D>(w1));
        s2 += square(value_of<D>(w2));
        s3 += square(value_of<D>(w3));
        continue;
      }
      for (int k = 0; k < 4; ++k) element(i, j + k);
    }
    for (; j < cols; ++j) element(i, j);
    b.sum_w2 += (s0 + s1) + (s2 + s3);
  }
  return b;
}

}  // namespace

CompareResult compare(DType dtype, const void* got, const void* want, int64_t rows,
                      int64_t cols, int64_t got_stride, int64_t want_stride, Tolerance tol,
                      std::optional<uint32_t> poison_pattern) {
  if (rows < 0 || cols < 0) throw Error("compare: rows and cols must be >= 0");
  if (rows > 0 && cols > 0) {
    if (got == nullptr || want == nullptr) throw Error("compare: null array");
    if (rows > 1 && (got_stride < cols || want_stride < cols))
      throw Error("compare: strides must be >= cols");
  }
  if (!(tol.atol >= 0) || !(tol.rtol >= 0))
    throw Error("compare: atol and rtol must be >= 0 (got " + fmt("%g", tol.atol) + ", " + fmt("%g", tol.rtol) + ")");
  const uint32_t pmask = dtype == DType::f32 ? 0xffffffffu : 0xffffu;
  const bool check_poison = poison_pattern.has_value();
  const uint32_t pbits = check_poison ? (*poison_pattern & pmask) : 0;

  CompareResult r;
  r.checked = rows * cols;
  double sum_d2 = 0, sum_w2 = 0;
  std::string first;  // description of the first failure

  // Row blocks on threads (large arrays only: verification of a tuned
  // candidate compares up to 2^28 elements, which one thread takes seconds
  // for); a fixed number of blocks merged in row order, so that the result
  // does not depend on the number of threads.
  const int64_t blocks = r.checked >= (int64_t{1} << 20) ? std::min<int64_t>(rows, 64) : 1;
  std::vector<Block> parts(static_cast<std::size_t>(std::max<int64_t>(blocks, 1)));
  auto run_block = [&](int64_t k) {
    const int64_t lo = rows * k / blocks, hi = rows * (k + 1) / blocks;
    Block& part = parts[static_cast<std::size_t>(k)];
    switch (dtype) {
      case DType::f32:
        part = compare_rows<DType::f32>(got, want, lo, hi, cols, got_stride, want_stride, tol, check_poison, pbits);
        break;
      case DType::bf16:
        part = compare_rows<DType::bf16>(got, want, lo, hi, cols, got_stride, want_stride, tol, check_poison, pbits);
        break;
      case DType::f16:
        part = compare_rows<DType::f16>(got, want, lo, hi, cols, got_stride, want_stride, tol, check_poison, pbits);
        break;
    }
  };
  if (blocks <= 1) {
    if (rows > 0) run_block(0);
  } else {
    const int64_t threads =
        std::min<int64_t>(blocks, std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency())));
    std::atomic<int64_t> next{0};
    auto work = [&] {
      for (int64_t k; (k = next.fetch_add(1)) < blocks;) run_block(k);
    };
    std::vector<std::thread> pool;
    for (int64_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
  }
  for (const Block& b : parts) {
    if (b.r.mismatches > 0 && r.mismatches == 0) {
      r.first_bad_row = b.r.first_bad_row;
      r.first_bad_col = b.r.first_bad_col;
      first = b.first;
    }
    r.mismatches += b.r.mismatches;
    r.unwritten += b.r.unwritten;
    r.nan_mismatch += b.r.nan_mismatch;
    r.max_abs_err = std::max(r.max_abs_err, b.r.max_abs_err);
    r.max_rel_err = std::max(r.max_rel_err, b.r.max_rel_err);
    sum_d2 += b.sum_d2;
    sum_w2 += b.sum_w2;
  }


  if (sum_w2 > 0)
    r.rel_l2_err = std::sqrt(sum_d2 / sum_w2);
  else
    r.rel_l2_err = sum_d2 > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  r.ok = r.mismatches == 0;

  char head[256];
  std::snprintf(head, sizeof head,
                "%s: %" PRId64 " of %" PRId64 " %s elements mismatch (%" PRId64
                " unwritten, %" PRId64 " NaN mismatches; atol %.3g rtol %.3g; max abs err %.3g, "
                "max rel err %.3g, rel l2 err %.3g)",
                r.ok ? "ok" : "FAIL", r.mismatches, r.checked, dtype_name(dtype), r.unwritten,
                r.nan_mismatch, tol.atol, tol.rtol, r.max_abs_err, r.max_rel_err, r.rel_l2_err);
  r.message = head;
  if (!r.ok) r.message += "; " + first;
  return r;
}

}  // namespace lntune::ref
