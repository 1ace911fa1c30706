// Tests of the CPU reference LayerNorm (tuner/reference.*), the host dtype
// conversions (tuner/host_dtype.hpp) and the tolerance checks (tuner/compare.*).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tuner/compare.hpp"
#include "tuner/host_dtype.hpp"
#include "tuner/reference.hpp"

using namespace lntune;
using namespace lntune::ref;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const DType kAllDtypes[] = {DType::f32, DType::f16, DType::bf16};

const char* name(DType d) {
  return d == DType::f32 ? "f32" : d == DType::f16 ? "f16" : "bf16";
}

// Resets the reference's thread count when a test ends.
struct ThreadGuard {
  ~ThreadGuard() { set_num_threads(0); }
};

// Typed storage: raw bytes of count elements of a dtype.
struct Buf {
  DType dt;
  std::vector<unsigned char> bytes;
  Buf(DType d, int64_t count) : dt(d), bytes(static_cast<std::size_t>(count) * element_size(d)) {}
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
  int64_t size() const { return static_cast<int64_t>(bytes.size() / element_size(dt)); }
  double get(int64_t i) const { return load_element(dt, data(), i); }
  void set(int64_t i, double v) { store_element(dt, data(), i, v); }
  std::vector<double> widen() const {
    std::vector<double> v(static_cast<std::size_t>(size()));
    for (int64_t i = 0; i < size(); ++i) v[static_cast<std::size_t>(i)] = get(i);
    return v;
  }
};

// count random values ~ scale * N(0,1) + offset, rounded to the dtype.
Buf random_buf(DType d, int64_t count, std::mt19937_64& rng, double scale = 1.0,
               double offset = 0.0) {
  std::normal_distribution<double> nd(0.0, 1.0);
  Buf b(d, count);
  for (int64_t i = 0; i < count; ++i) b.set(i, offset + scale * nd(rng));
  return b;
}

std::vector<double> random_vec(int64_t count, std::mt19937_64& rng, double scale = 1.0,
                               double offset = 0.0) {
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(count));
  for (auto& e : v) e = offset + scale * nd(rng);
  return v;
}

uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float f32_from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint64_t f64_bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

bool half_is_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0; }
bool bf16_is_nan(uint16_t h) { return (h & 0x7f80) == 0x7f80 && (h & 0x007f) != 0; }

// Brute-force RNE to a 16-bit format: the two neighbouring representable
// values found by binary search over the (monotonic) non-negative bit
// patterns, the one past the largest finite counting as 2^(emax+1).
uint16_t brute_round(double v, float (*to_float)(uint16_t), uint16_t max_finite,
                     double overflow_value) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  auto value = [&](uint32_t h) {
    return h > max_finite ? overflow_value : static_cast<double>(to_float(static_cast<uint16_t>(h)));
  };
  // largest h in [0, max_finite + 1] with value(h) <= a
  uint32_t lo = 0, hi = static_cast<uint32_t>(max_finite) + 1;
  if (a >= overflow_value) return static_cast<uint16_t>(sign | (max_finite + 1));
  while (lo < hi) {
    const uint32_t mid = (lo + hi + 1) / 2;
    if (value(mid) <= a) lo = mid; else hi = mid - 1;
  }
  if (value(lo) == a) return static_cast<uint16_t>(sign | lo);
  const double dlo = a - value(lo), dhi = value(lo + 1) - a;
  uint32_t pick;
  if (dlo < dhi) pick = lo;
  else if (dhi < dlo) pick = lo + 1;
  else pick = (lo % 2 == 0) ? lo : lo + 1;
  return static_cast<uint16_t>(sign | pick);
}

// ---- a plain fp32 LayerNorm, as a GPU kernel computes it ----------------------
// Sequential fp32 sums (the worst summation order), mean/rstd kept as fp32,
// outputs rounded from fp32. Optional bugs check that the tolerances catch
// real mistakes.
enum class Bug { none, unbiased_var, shifted_weight, no_c2, drop_row_dw };

struct Fp32Out {
  Buf y, dx, dw, db;
  std::vector<float> mean, rstd;
};

Fp32Out fp32_layer_norm(int64_t M, int64_t N, DType xd, DType wd, const Buf& x, const Buf& w,
                        const Buf& b, const Buf& dy, float eps, Bug bug = Bug::none) {
  Fp32Out o{Buf(xd, M * N), Buf(xd, M * N), Buf(wd, N), Buf(wd, N), {}, {}};
  o.mean.resize(static_cast<std::size_t>(M));
  o.rstd.resize(static_cast<std::size_t>(M));
  std::vector<float> dwacc(static_cast<std::size_t>(N), 0.f), dbacc(static_cast<std::size_t>(N), 0.f);
  std::vector<float> xhat(static_cast<std::size_t>(N)), wdy(static_cast<std::size_t>(N));
  auto W = [&](int64_t j) {
    if (bug == Bug::shifted_weight && j + 1 < N) j += 1;
    return static_cast<float>(w.get(j));
  };
  for (int64_t i = 0; i < M; ++i) {
    float s = 0;
    for (int64_t j = 0; j < N; ++j) s += static_cast<float>(x.get(i * N + j));
    const float mean = s / static_cast<float>(N);
    float v = 0;
    for (int64_t j = 0; j < N; ++j) {
      const float d = static_cast<float>(x.get(i * N + j)) - mean;
      v += d * d;
    }
    const float denom = bug == Bug::unbiased_var ? static_cast<float>(std::max<int64_t>(N - 1, 1))
                                                 : static_cast<float>(N);
    const float var = v / denom;
    const float rstd = 1.0f / std::sqrt(var + eps);
    o.mean[static_cast<std::size_t>(i)] = mean;
    o.rstd[static_cast<std::size_t>(i)] = rstd;
    float c1 = 0, c2 = 0;
    for (int64_t j = 0; j < N; ++j) {
      const auto jj = static_cast<std::size_t>(j);
      xhat[jj] = (static_cast<float>(x.get(i * N + j)) - mean) * rstd;
      o.y.set(i * N + j, static_cast<double>(xhat[jj] * W(j) + static_cast<float>(b.get(j))));
      const float g = static_cast<float>(dy.get(i * N + j));
      wdy[jj] = static_cast<float>(w.get(j)) * g;
      c1 += xhat[jj] * wdy[jj];
      c2 += wdy[jj];
      if (!(bug == Bug::drop_row_dw && i == M / 2)) {
        dwacc[jj] += g * xhat[jj];
        dbacc[jj] += g;
      }
    }
    c1 /= static_cast<float>(N);
    c2 /= static_cast<float>(N);
    if (bug == Bug::no_c2) c2 = 0;
    for (int64_t j = 0; j < N; ++j) {
      const auto jj = static_cast<std::size_t>(j);
      o.dx.set(i * N + j, static_cast<double>((wdy[jj] - (xhat[jj] * c1 + c2)) * rstd));
    }
  }
  for (int64_t j = 0; j < N; ++j) {
    o.dw.set(j, static_cast<double>(dwacc[static_cast<std::size_t>(j)]));
    o.db.set(j, static_cast<double>(dbacc[static_cast<std::size_t>(j)]));
  }
  return o;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double e : v) m = std::max(m, std::fabs(e));
  return m;
}

}  // namespace

// =============================================================================
// dtype conversions
// =============================================================================

TEST(HostDtype, HalfKnownBitPatterns) {
  EXPECT_EQ(double_to_half(1.0), 0x3c00);
  EXPECT_EQ(double_to_half(-2.0), 0xc000);
  EXPECT_EQ(double_to_half(0.5), 0x3800);
  EXPECT_EQ(double_to_half(65504.0), 0x7bff);     // largest finite
  EXPECT_EQ(double_to_half(65519.99), 0x7bff);    // below the overflow tie
  EXPECT_EQ(double_to_half(65520.0), 0x7c00);     // tie -> even = inf
  EXPECT_EQ(double_to_half(1e10), 0x7c00);
  EXPECT_EQ(double_to_half(-1e10), 0xfc00);
  EXPECT_EQ(double_to_half(kInf), 0x7c00);
  EXPECT_EQ(double_to_half(-kInf), 0xfc00);
  EXPECT_EQ(double_to_half(0.0), 0x0000);
  EXPECT_EQ(double_to_half(-0.0), 0x8000);
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -14)), 0x0400);   // smallest normal
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -24)), 0x0001);   // smallest subnormal
  EXPECT_EQ(double_to_half(std::ldexp(1023.0, -24)), 0x03ff);  // largest subnormal
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -25)), 0x0000);   // tie -> even (0)
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -25) * (1 + 1e-12)), 0x0001);
  EXPECT_EQ(double_to_half(std::ldexp(3.0, -25)), 0x0002);   // tie 1|2 -> 2
  EXPECT_EQ(double_to_half(std::ldexp(5.0, -25)), 0x0002);   // tie 2|3 -> 2
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -30)), 0x0000);
  EXPECT_EQ(double_to_half(-std::ldexp(1.0, -30)), 0x8000);
  EXPECT_EQ(double_to_half(std::numeric_limits<double>::denorm_min()), 0x0000);
  // subnormal rounding up into the smallest normal
  EXPECT_EQ(double_to_half(std::ldexp(1023.5, -24)), 0x0400);
  // ties to even in the normal range
  EXPECT_EQ(double_to_half(1.0 + std::ldexp(1.0, -11)), 0x3c00);      // 1 | 1+2^-10 -> 1
  EXPECT_EQ(double_to_half(1.0 + std::ldexp(3.0, -11)), 0x3c02);      // odd|even -> even
  EXPECT_EQ(double_to_half(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3c01);
  EXPECT_EQ(double_to_half(2047.5 * 2), 0x6c00);  // 4095 -> tie between 4094 and 4096 -> 4096
  EXPECT_TRUE(half_is_nan(double_to_half(kNaN)));
  EXPECT_TRUE(half_is_nan(double_to_half(-kNaN)));
  EXPECT_EQ(double_to_half(kNaN) & 0x0200, 0x0200);  // quiet

  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(half_to_float(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(half_to_float(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7c01)));
  EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
}

TEST(HostDtype, DirectRoundingFromDoubleAvoidsDoubleRounding) {
  // 1 + 2^-11 + 2^-40 is just above the fp16 tie 1 | 1+2^-10: direct RNE
  // rounds up; via float it first becomes the exact tie, then rounds to even.
  const double d = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(double_to_half(d), 0x3c01);
  EXPECT_EQ(float_to_half(static_cast<float>(d)), 0x3c00);
  // The same for bf16: 1 + 2^-8 + 2^-40.
  const double e = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(double_to_bf16(e), 0x3f81);
  EXPECT_EQ(float_to_bf16(static_cast<float>(e)), 0x3f80);
}

TEST(HostDtype, TypedStorageMatchesTheDispatchedAccess) {
  // round_to<D> / to_double<D> (the fills' per-dtype loops) store and read
  // the same bits as store_element / load_element.
  const double values[] = {0.0, -0.0, 1.0 / 3, -2.5e-6, 65519.0, 1e-40, 3.0e38, kInf, -kInf, kNaN};
  auto check = [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    for (double v : values) {
      const Storage<D> typed = round_to<D>(v);
      Storage<D> dispatched{};
      store_element(D, &dispatched, 0, v);
      EXPECT_EQ(std::memcmp(&typed, &dispatched, sizeof typed), 0) << name(D) << " " << v;
      const double a = to_double<D>(typed), b = load_element(D, &dispatched, 0);
      EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << name(D) << " " << v;
    }
  };
  check(std::integral_constant<DType, DType::f32>{});
  check(std::integral_constant<DType, DType::f16>{});
  check(std::integral_constant<DType, DType::bf16>{});
}

TEST(HostDtype, FastPathsRoundLikeTheExactOne) {
  // double_to_bf16 / double_to_half go through float where that cannot round
  // twice; everything must round as the exact double -> 16-bit rounding does:
  // any finite double, moderate values, and doubles within 1e-12 of a 16-bit
  // midpoint (which the fast paths must send the exact way).
  std::uint64_t s = 3;
  auto next = [&s] {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  long checked = 0;
  for (int i = 0; i < 600000; ++i) {
    const std::uint64_t r = next();
    double v;
    if (i % 3 == 0) {
      std::memcpy(&v, &r, sizeof v);
      if (!std::isfinite(v)) continue;
    } else if (i % 3 == 1) {
      v = (static_cast<double>(r >> 11) / 9007199254740992.0 - 0.5) * 40;
    } else {
      // A bf16 midpoint (float bits ...8000) or a half one (...1000), nudged.
      float f = static_cast<float>((static_cast<double>(r >> 40) / 16777216.0 - 0.5) * 100);
      std::uint32_t b;
      std::memcpy(&b, &f, sizeof b);
      b = (r & 4) ? ((b & ~0xffffu) | 0x8000u) : ((b & ~0x1fffu) | 0x1000u);
      std::memcpy(&f, &b, sizeof f);
      v = static_cast<double>(f) * (1.0 + ((r & 3) == 0 ? 0.0 : (r & 1) ? 1e-12 : -1e-12));
    }
    ASSERT_EQ(double_to_bf16(v), detail::round_double_to_small(v, 7, 8)) << std::hexfloat << v;
    ASSERT_EQ(double_to_half(v), detail::round_double_to_small(v, 10, 5)) << std::hexfloat << v;
    ++checked;
  }
  EXPECT_GT(checked, 500000);
}

TEST(HostDtype, Bf16KnownBitPatterns) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(double_to_bf16(1.0), 0x3f80);
  EXPECT_EQ(double_to_bf16(-1.0), 0xbf80);
  EXPECT_EQ(double_to_bf16(1.00390625), 0x3f80);     // 1 + 2^-8: tie -> even (1)
  EXPECT_EQ(float_to_bf16(1.00390625f), 0x3f80);
  EXPECT_EQ(double_to_bf16(1.01171875), 0x3f82);     // 1 + 3*2^-8: tie -> even (1+2^-6)
  EXPECT_EQ(float_to_bf16(1.01171875f), 0x3f82);
  EXPECT_EQ(double_to_bf16(1.0078125), 0x3f81);      // exactly 1 + 2^-7
  EXPECT_EQ(double_to_bf16(1.00390625 + 1e-9), 0x3f81);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf
  EXPECT_EQ(double_to_bf16(static_cast<double>(std::numeric_limits<float>::max())), 0x7f80);
  EXPECT_EQ(double_to_bf16(static_cast<double>(bf16_to_float(0x7f7f))), 0x7f7f);
  EXPECT_EQ(double_to_bf16(1e300), 0x7f80);
  EXPECT_EQ(double_to_bf16(-kInf), 0xff80);
  EXPECT_EQ(double_to_bf16(std::ldexp(1.0, -133)), 0x0001);  // smallest subnormal
  EXPECT_EQ(double_to_bf16(std::ldexp(1.0, -134)), 0x0000);  // tie -> 0
  EXPECT_EQ(double_to_bf16(std::ldexp(1.0, -126)), 0x0080);  // smallest normal
  EXPECT_EQ(double_to_bf16(-0.0), 0x8000);
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_float(0xc040), -3.0f);
  // NaN preserved as a quiet NaN, payload top bits kept
  const uint16_t snan = float_to_bf16(f32_from_bits(0x7f800001u));
  EXPECT_TRUE(bf16_is_nan(snan));
  EXPECT_EQ(snan, 0x7fc0);
  EXPECT_EQ(float_to_bf16(f32_from_bits(0xffa50000u)), 0xffe5);
  EXPECT_TRUE(bf16_is_nan(double_to_bf16(kNaN)));
  EXPECT_EQ(double_to_bf16(kNaN) & 0x0040, 0x0040);
}

TEST(HostDtype, ExhaustiveRoundTrip16) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto b = static_cast<uint16_t>(h);
    const float fh = half_to_float(b);
    if (half_is_nan(b)) {
      EXPECT_TRUE(std::isnan(fh));
      EXPECT_TRUE(half_is_nan(float_to_half(fh)));
      EXPECT_TRUE(half_is_nan(double_to_half(static_cast<double>(fh))));
    } else {
      ASSERT_EQ(float_to_half(fh), b) << std::hex << h;
      ASSERT_EQ(double_to_half(static_cast<double>(fh)), b) << std::hex << h;
    }
    const float fb = bf16_to_float(b);
    if (bf16_is_nan(b)) {
      EXPECT_TRUE(std::isnan(fb));
      EXPECT_TRUE(bf16_is_nan(float_to_bf16(fb)));
      EXPECT_TRUE(bf16_is_nan(double_to_bf16(static_cast<double>(fb))));
    } else {
      ASSERT_EQ(float_to_bf16(fb), b) << std::hex << h;
      ASSERT_EQ(double_to_bf16(static_cast<double>(fb)), b) << std::hex << h;
    }
  }
}

TEST(HostDtype, RandomValuesMatchBruteForceRne) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> exp16(-30, 17), exp_bf(-140, 130);
  std::uniform_int_distribution<int> coin(0, 1);
  for (int i = 0; i < 200000; ++i) {
    const double s = coin(rng) ? -1.0 : 1.0;
    const double vh = s * std::ldexp(mant(rng), exp16(rng));
    ASSERT_EQ(double_to_half(vh), brute_round(vh, half_to_float, 0x7bff, 65536.0)) << vh;
    const double vb = s * std::ldexp(mant(rng), exp_bf(rng));
    ASSERT_EQ(double_to_bf16(vb), brute_round(vb, bf16_to_float, 0x7f7f, std::ldexp(1.0, 128)))
        << vb;
  }
  // Exact ties and near-ties (midpoints between neighbours, +-1 double ulp).
  for (uint32_t h = 0; h < 0x7bff; h += 7) {
    const double a = static_cast<double>(half_to_float(static_cast<uint16_t>(h)));
    const double b = static_cast<double>(half_to_float(static_cast<uint16_t>(h + 1)));
    const double mid = (a + b) / 2;
    for (double v : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, kInf)})
      ASSERT_EQ(double_to_half(v), brute_round(v, half_to_float, 0x7bff, 65536.0)) << v;
  }
  for (uint32_t h = 0; h < 0x7f7f; h += 5) {
    const double a = static_cast<double>(bf16_to_float(static_cast<uint16_t>(h)));
    const double b = static_cast<double>(bf16_to_float(static_cast<uint16_t>(h + 1)));
    const double mid = (a + b) / 2;
    for (double v : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, kInf)}) {
      ASSERT_EQ(double_to_bf16(v), brute_round(v, bf16_to_float, 0x7f7f, std::ldexp(1.0, 128)))
          << v;
    }
  }
}

TEST(HostDtype, FloatToBf16AgreesWithDoublePath) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 1000000; ++i) {
    const float f = f32_from_bits(bits(rng));
    if (std::isnan(f)) {
      ASSERT_TRUE(bf16_is_nan(float_to_bf16(f)));
      continue;
    }
    ASSERT_EQ(float_to_bf16(f), double_to_bf16(static_cast<double>(f))) << f;
  }
}

TEST(HostDtype, LoadStoreElement) {
  for (DType d : kAllDtypes) {
    Buf b(d, 4);
    store_element(d, b.data(), 0, 1.0);
    store_element(d, b.data(), 1, -0.375);
    store_element(d, b.data(), 2, kInf);
    store_element(d, b.data(), 3, kNaN);
    EXPECT_EQ(load_element(d, b.data(), 0), 1.0) << name(d);
    EXPECT_EQ(load_element(d, b.data(), 1), -0.375) << name(d);
    EXPECT_EQ(load_element(d, b.data(), 2), kInf) << name(d);
    EXPECT_TRUE(std::isnan(load_element(d, b.data(), 3))) << name(d);
    EXPECT_EQ(element_size(d), d == DType::f32 ? 4u : 2u);
  }
  // f32 store is (float)v, round to nearest even from double
  Buf f(DType::f32, 1);
  const double v = 1.0 + std::ldexp(1.0, -24);  // tie -> 1.0f
  f.set(0, v);
  EXPECT_EQ(f.get(0), 1.0);
  Buf h(DType::f16, 1);
  h.set(0, 0.1);
  EXPECT_EQ(*static_cast<const uint16_t*>(h.data()), 0x2e66);
  Buf bb(DType::bf16, 1);
  bb.set(0, 0.1);
  EXPECT_EQ(*static_cast<const uint16_t*>(bb.data()), 0x3dcd);
}

// =============================================================================
// forward / backward in double: hand-computed cases
// =============================================================================

TEST(ReferenceF64, ForwardN2Exact) {
  const double x[2] = {1, 3}, w[2] = {2, 3}, b[2] = {0.5, -1};
  double y[2], mean, rstd;
  forward_f64(1, 2, x, nullptr, nullptr, 0.0, y, &mean, &rstd);
  EXPECT_EQ(mean, 2.0);
  EXPECT_EQ(rstd, 1.0);
  EXPECT_EQ(y[0], -1.0);
  EXPECT_EQ(y[1], 1.0);
  forward_f64(1, 2, x, w, b, 0.0, y, nullptr, nullptr);
  EXPECT_EQ(y[0], -1.5);
  EXPECT_EQ(y[1], 2.0);
}

TEST(ReferenceF64, ForwardN3AndN4) {
  const double x[3] = {1, 2, 3};
  double y[3], mean, rstd;
  forward_f64(1, 3, x, nullptr, nullptr, 0.0, y, &mean, &rstd);
  const double r = std::sqrt(1.5);  // var = 2/3
  EXPECT_DOUBLE_EQ(mean, 2.0);
  EXPECT_NEAR(rstd, r, 1e-15);
  EXPECT_NEAR(y[0], -r, 1e-15);
  EXPECT_NEAR(y[1], 0.0, 1e-15);
  EXPECT_NEAR(y[2], r, 1e-15);

  const double x4[4] = {0, 0, 0, 4};  // mean 1, var 3
  double y4[4];
  forward_f64(1, 4, x4, nullptr, nullptr, 1e-5, y4, &mean, &rstd);
  const double r4 = 1.0 / std::sqrt(3.0 + 1e-5);
  EXPECT_DOUBLE_EQ(mean, 1.0);
  EXPECT_NEAR(rstd, r4, 1e-15);
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(y4[j], -r4, 1e-15);
  EXPECT_NEAR(y4[3], 3 * r4, 1e-15);

  // Biased (population) variance, two rows processed independently.
  const double x2[6] = {1, 2, 3, 10, 10, 40};  // row 1: mean 20, var 200
  double y2[6], m2[2], r2[2];
  forward_f64(2, 3, x2, nullptr, nullptr, 0.0, y2, m2, r2);
  EXPECT_DOUBLE_EQ(m2[1], 20.0);
  EXPECT_NEAR(r2[1], 1.0 / std::sqrt(200.0), 1e-16);
  EXPECT_NEAR(y2[5], 20.0 / std::sqrt(200.0), 1e-15);
}

TEST(ReferenceF64, ForwardN1AndConstantRowGiveBias) {
  const double x[3] = {5, 5, 5}, w[3] = {2, 3, 4}, b[3] = {0.25, -1, 7};
  double y[3];
  forward_f64(3, 1, x, w, b, 1e-5, y, nullptr, nullptr);  // three rows of N=1
  for (int i = 0; i < 3; ++i) EXPECT_EQ(y[i], b[0]);
  forward_f64(1, 3, x, w, b, 1e-5, y, nullptr, nullptr);  // a constant row
  for (int j = 0; j < 3; ++j) EXPECT_EQ(y[j], b[j]);
}

TEST(ReferenceF64, ForwardIsAccurateForOffsetData) {
  // Large mean, small spread: a naive one-pass variance would lose all digits.
  const int64_t N = 1000;
  std::vector<double> x(N), y(N);
  for (int64_t j = 0; j < N; ++j) x[static_cast<std::size_t>(j)] = 1e8 + static_cast<double>(j % 2);
  double mean, rstd;
  forward_f64(1, N, x.data(), nullptr, nullptr, 0.0, y.data(), &mean, &rstd);
  EXPECT_DOUBLE_EQ(mean, 1e8 + 0.5);
  EXPECT_DOUBLE_EQ(rstd, 2.0);
  EXPECT_DOUBLE_EQ(y[0], -1.0);
  EXPECT_DOUBLE_EQ(y[1], 1.0);
}

TEST(ReferenceF64, BackwardN3Hand) {
  // x = [1,2,3], eps = 0: rstd r = sqrt(1.5), xhat = r[-1,0,1].
  // dy = [1,0,0], w = 1: c1 = -r/3, c2 = 1/3,
  // dx = r([1,0,0] - (xhat c1 + c2)) = r[1/6, -1/3, 1/6], dw = [-r,0,0], db = [1,0,0].
  const double x[3] = {1, 2, 3}, dy[3] = {1, 0, 0};
  double dx[3], dw[3], db[3];
  backward_f64(1, 3, dy, x, nullptr, 0.0, dx, dw, db);
  const double r = std::sqrt(1.5);
  EXPECT_NEAR(dx[0], r / 6, 1e-15);
  EXPECT_NEAR(dx[1], -r / 3, 1e-15);
  EXPECT_NEAR(dx[2], r / 6, 1e-15);
  EXPECT_NEAR(dw[0], -r, 1e-15);
  EXPECT_EQ(dw[1], 0.0);
  EXPECT_NEAR(dw[2], 0.0, 1e-15);
  EXPECT_EQ(db[0], 1.0);
  EXPECT_EQ(db[1], 0.0);
  EXPECT_EQ(db[2], 0.0);
}

TEST(ReferenceF64, BackwardN1GivesZeroDx) {
  const double x[4] = {1, -2, 3.5, 0}, dy[4] = {0.5, 2, -1, 3}, w[1] = {1.5};
  double dx[4], dw[1], db[1];
  backward_f64(4, 1, dy, x, w, 1e-5, dx, dw, db);
  for (double v : dx) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(dw[0], 0.0);
  EXPECT_EQ(db[0], 4.5);
}

TEST(ReferenceF64, BackwardM0GivesZeroDwDb) {
  double dw[3] = {1, 1, 1}, db[3] = {1, 1, 1};
  backward_f64(0, 3, nullptr, nullptr, nullptr, 1e-5, nullptr, dw, db);
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(dw[j], 0.0);
    EXPECT_EQ(db[j], 0.0);
  }
}

TEST(ReferenceF64, BackwardRowInvariants) {
  // With eps = 0: sum_j dx_j = 0 and sum_j dx_j xhat_j = 0 for every row.
  std::mt19937_64 rng(3);
  const int64_t M = 5, N = 37;
  auto x = random_vec(M * N, rng, 2.0, 1.0), dy = random_vec(M * N, rng), w = random_vec(N, rng);
  std::vector<double> dx(M * N), y(M * N), mean(M), rstd(M);
  backward_f64(M, N, dy.data(), x.data(), w.data(), 0.0, dx.data(), nullptr, nullptr);
  forward_f64(M, N, x.data(), nullptr, nullptr, 0.0, y.data(), mean.data(), rstd.data());
  for (int64_t i = 0; i < M; ++i) {
    double s = 0, sx = 0, sa = 0;
    for (int64_t j = 0; j < N; ++j) {
      const auto k = static_cast<std::size_t>(i * N + j);
      s += dx[k];
      sx += dx[k] * y[k];  // y = xhat (no weight/bias)
      sa += std::fabs(dx[k]);
    }
    EXPECT_NEAR(s, 0.0, 1e-13 * sa);
    EXPECT_NEAR(sx, 0.0, 1e-13 * sa);
  }
}

// =============================================================================
// finite differences: backward_f64 against forward_f64
// =============================================================================

namespace {

// f = sum(y * dy)
double objective(int64_t M, int64_t N, const std::vector<double>& x, const std::vector<double>& w,
                 const std::vector<double>& b, const std::vector<double>& dy, double eps) {
  std::vector<double> y(static_cast<std::size_t>(M * N));
  forward_f64(M, N, x.data(), w.data(), b.data(), eps, y.data(), nullptr, nullptr);
  double f = 0;
  for (std::size_t k = 0; k < y.size(); ++k) f += y[k] * dy[k];
  return f;
}

// 4-point central difference of t -> f(p + t v) at t = 0 (error O(h^4)).
template <class F>
double directional(const F& f, double h) {
  return (f(-2 * h) - 8 * f(-h) + 8 * f(h) - f(2 * h)) / (12 * h);
}

std::vector<double> axpy(const std::vector<double>& p, double t, const std::vector<double>& v) {
  std::vector<double> r(p);
  for (std::size_t k = 0; k < r.size(); ++k) r[k] += t * v[k];
  return r;
}

}  // namespace

class FiniteDifference : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, double>> {};

TEST_P(FiniteDifference, DirectionalDerivatives) {
  // (no structured bindings: C++17 lambdas cannot capture them)
  const int64_t M = std::get<0>(GetParam()), N = std::get<1>(GetParam());
  const double eps = std::get<2>(GetParam());
  std::mt19937_64 rng(static_cast<uint64_t>(M * 1000 + N));
  const auto x = random_vec(M * N, rng, 1.5, 0.7), dy = random_vec(M * N, rng);
  const auto w = random_vec(N, rng, 0.5, 1.0), b = random_vec(N, rng, 0.3);
  std::vector<double> dx(M * N), dw(N), db(N);
  backward_f64(M, N, dy.data(), x.data(), w.data(), eps, dx.data(), dw.data(), db.data());

  for (int dir = 0; dir < 3; ++dir) {
    const auto vx = random_vec(M * N, rng), vw = random_vec(N, rng), vb = random_vec(N, rng);
    double analytic = 0, scale = 0;
    for (std::size_t k = 0; k < dx.size(); ++k) {
      analytic += dx[k] * vx[k];
      scale += std::fabs(dx[k] * vx[k]);
    }
    const double fd = directional(
        [&](double t) { return objective(M, N, axpy(x, t, vx), w, b, dy, eps); }, 1e-3);
    EXPECT_NEAR(fd, analytic, 1e-7 * std::max(1.0, scale)) << "dx M=" << M << " N=" << N;

    double aw = 0, ab = 0, sw = 0, sb = 0;
    for (std::size_t j = 0; j < dw.size(); ++j) {
      aw += dw[j] * vw[j];
      ab += db[j] * vb[j];
      sw += std::fabs(dw[j] * vw[j]);
      sb += std::fabs(db[j] * vb[j]);
    }
    const double fw = directional(
        [&](double t) { return objective(M, N, x, axpy(w, t, vw), b, dy, eps); }, 1e-3);
    const double fb = directional(
        [&](double t) { return objective(M, N, x, w, axpy(b, t, vb), dy, eps); }, 1e-3);
    EXPECT_NEAR(fw, aw, 1e-7 * std::max(1.0, sw)) << "dw M=" << M << " N=" << N;
    EXPECT_NEAR(fb, ab, 1e-7 * std::max(1.0, sb)) << "db M=" << M << " N=" << N;
  }
  if (N == 1) {
    for (double v : dx) EXPECT_EQ(v, 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FiniteDifference,
    ::testing::Values(std::make_tuple(int64_t{1}, int64_t{1}, 1e-5),
                      std::make_tuple(int64_t{3}, int64_t{1}, 1e-5),
                      std::make_tuple(int64_t{2}, int64_t{2}, 1e-5),
                      std::make_tuple(int64_t{4}, int64_t{3}, 1e-5),
                      std::make_tuple(int64_t{5}, int64_t{17}, 1e-5),
                      std::make_tuple(int64_t{3}, int64_t{64}, 0.5),
                      std::make_tuple(int64_t{70}, int64_t{9}, 1e-5),
                      std::make_tuple(int64_t{2}, int64_t{1000}, 1e-5)));

TEST(FiniteDifferenceElementwise, SmallShape) {
  const int64_t M = 2, N = 3;
  const double eps = 0.1;
  std::mt19937_64 rng(11);
  const auto x = random_vec(M * N, rng), dy = random_vec(M * N, rng);
  const auto w = random_vec(N, rng, 0.5, 1.0), b = random_vec(N, rng);
  std::vector<double> dx(M * N), dw(N), db(N);
  backward_f64(M, N, dy.data(), x.data(), w.data(), eps, dx.data(), dw.data(), db.data());
  for (int64_t k = 0; k < M * N; ++k) {
    std::vector<double> e(M * N, 0.0);
    e[static_cast<std::size_t>(k)] = 1;
    const double fd = directional(
        [&](double t) { return objective(M, N, axpy(x, t, e), w, b, dy, eps); }, 1e-3);
    EXPECT_NEAR(fd, dx[static_cast<std::size_t>(k)], 1e-9) << k;
  }
  for (int64_t j = 0; j < N; ++j) {
    std::vector<double> e(N, 0.0);
    e[static_cast<std::size_t>(j)] = 1;
    const double fw = directional(
        [&](double t) { return objective(M, N, x, axpy(w, t, e), b, dy, eps); }, 1e-3);
    const double fb = directional(
        [&](double t) { return objective(M, N, x, w, axpy(b, t, e), dy, eps); }, 1e-3);
    EXPECT_NEAR(fw, dw[static_cast<std::size_t>(j)], 1e-9) << j;
    EXPECT_NEAR(fb, db[static_cast<std::size_t>(j)], 1e-9) << j;
  }
}

// =============================================================================
// typed path
// =============================================================================

TEST(ReferenceTyped, ForwardSmallExactValues) {
  // x = [1, 3], no weight/bias, eps = 0 -> y = [-1, 1] exactly in every dtype.
  for (DType d : kAllDtypes) {
    Buf x(d, 2), y(d, 2);
    x.set(0, 1);
    x.set(1, 3);
    FwdArgs a;
    a.M = 1;
    a.N = 2;
    a.x_stride = a.y_stride = 2;
    a.x_dtype = a.w_dtype = d;
    a.x = x.data();
    a.eps = 0;
    float mean = 0, rstd = 0;
    layer_norm_forward(a, y.data(), &mean, &rstd);
    EXPECT_EQ(y.get(0), -1.0) << name(d);
    EXPECT_EQ(y.get(1), 1.0) << name(d);
    EXPECT_EQ(mean, 2.0f);
    EXPECT_EQ(rstd, 1.0f);
  }
  // With eps: y = +-1/sqrt(1 + 1e-5) rounded once.
  Buf x(DType::f16, 2), y(DType::f16, 2);
  x.set(0, 1);
  x.set(1, 3);
  FwdArgs a;
  a.M = 1;
  a.N = 2;
  a.x_stride = a.y_stride = 2;
  a.x_dtype = a.w_dtype = DType::f16;
  a.x = x.data();
  a.eps = 1e-5;
  layer_norm_forward(a, y.data(), nullptr, nullptr);
  EXPECT_EQ(static_cast<const uint16_t*>(y.data())[1], double_to_half(1.0 / std::sqrt(1.00001)));
}

class TypedVsF64 : public ::testing::TestWithParam<std::tuple<DType, DType, bool>> {};

TEST_P(TypedVsF64, BitExactAgreement) {
  const auto [xd, wd, affine] = GetParam();
  const int64_t M = 37, N = 200;
  const double eps = 1e-5;
  std::mt19937_64 rng(5);
  const Buf x = random_buf(xd, M * N, rng, 2.0, 0.5), dy = random_buf(xd, M * N, rng);
  const Buf w = random_buf(wd, N, rng, 0.5, 1.0), b = random_buf(wd, N, rng, 0.2);
  const auto xv = x.widen(), dyv = dy.widen(), wv = w.widen(), bv = b.widen();

  // forward
  Buf y(xd, M * N);
  std::vector<float> mean(M), rstd(M);
  FwdArgs fa;
  fa.M = M;
  fa.N = N;
  fa.x_stride = fa.y_stride = N;
  fa.x_dtype = xd;
  fa.w_dtype = wd;
  fa.x = x.data();
  fa.weight = affine ? w.data() : nullptr;
  fa.bias = affine ? b.data() : nullptr;
  fa.eps = eps;
  layer_norm_forward(fa, y.data(), mean.data(), rstd.data());
  std::vector<double> y64(M * N), m64(M), r64(M);
  forward_f64(M, N, xv.data(), affine ? wv.data() : nullptr, affine ? bv.data() : nullptr, eps,
              y64.data(), m64.data(), r64.data());
  Buf yexp(xd, M * N);
  for (int64_t k = 0; k < M * N; ++k) yexp.set(k, y64[static_cast<std::size_t>(k)]);
  EXPECT_EQ(y.bytes, yexp.bytes);
  for (int64_t i = 0; i < M; ++i) {
    EXPECT_EQ(f32_bits(mean[static_cast<std::size_t>(i)]),
              f32_bits(static_cast<float>(m64[static_cast<std::size_t>(i)])));
    EXPECT_EQ(f32_bits(rstd[static_cast<std::size_t>(i)]),
              f32_bits(static_cast<float>(r64[static_cast<std::size_t>(i)])));
  }

  // backward
  Buf dx(xd, M * N), dw(wd, N), db(wd, N);
  BwdArgs ba;
  ba.M = M;
  ba.N = N;
  ba.dy_stride = ba.x_stride = ba.dx_stride = N;
  ba.x_dtype = xd;
  ba.w_dtype = wd;
  ba.dy = dy.data();
  ba.x = x.data();
  ba.weight = affine ? w.data() : nullptr;
  ba.eps = eps;
  layer_norm_backward(ba, dx.data(), dw.data(), db.data());
  std::vector<double> dx64(M * N), dw64(N), db64(N);
  backward_f64(M, N, dyv.data(), xv.data(), affine ? wv.data() : nullptr, eps, dx64.data(),
               dw64.data(), db64.data());
  Buf dxe(xd, M * N), dwe(wd, N), dbe(wd, N);
  for (int64_t k = 0; k < M * N; ++k) dxe.set(k, dx64[static_cast<std::size_t>(k)]);
  for (int64_t j = 0; j < N; ++j) {
    dwe.set(j, dw64[static_cast<std::size_t>(j)]);
    dbe.set(j, db64[static_cast<std::size_t>(j)]);
  }
  EXPECT_EQ(dx.bytes, dxe.bytes);
  EXPECT_EQ(dw.bytes, dwe.bytes);
  EXPECT_EQ(db.bytes, dbe.bytes);

  // Each output is nullable; asking for fewer outputs changes nothing.
  Buf dw_only(wd, N);
  layer_norm_backward(ba, nullptr, dw_only.data(), nullptr);
  EXPECT_EQ(dw_only.bytes, dw.bytes);
  Buf dx_only(xd, M * N);
  layer_norm_backward(ba, dx_only.data(), nullptr, nullptr);
  EXPECT_EQ(dx_only.bytes, dx.bytes);
}

INSTANTIATE_TEST_SUITE_P(
    Dtypes, TypedVsF64,
    ::testing::Combine(::testing::Values(DType::f32, DType::f16, DType::bf16),
                       ::testing::Values(DType::f32, DType::f16, DType::bf16),
                       ::testing::Bool()));

TEST(ReferenceTyped, StridedRows) {
  const int64_t M = 9, N = 13, xs = N + 5, ys = N + 3;
  const DType d = DType::bf16;
  std::mt19937_64 rng(9);
  const Buf xc = random_buf(d, M * N, rng), dyc = random_buf(d, M * N, rng);
  const Buf w = random_buf(DType::f32, N, rng, 1.0, 1.0);
  Buf xp(d, M * xs), dyp(d, M * xs);
  for (int64_t k = 0; k < M * xs; ++k) {
    xp.set(k, kNaN);  // padding: must never be read
    dyp.set(k, kNaN);
  }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      xp.set(i * xs + j, xc.get(i * N + j));
      dyp.set(i * xs + j, dyc.get(i * N + j));
    }

  // forward: contiguous vs strided
  FwdArgs a;
  a.M = M;
  a.N = N;
  a.x_dtype = d;
  a.w_dtype = DType::f32;
  a.weight = w.data();
  a.x = xc.data();
  a.x_stride = a.y_stride = N;
  Buf yc(d, M * N);
  layer_norm_forward(a, yc.data(), nullptr, nullptr);
  Buf yp(d, M * ys);
  for (int64_t k = 0; k < M * ys; ++k) yp.set(k, 12288.0);  // sentinel in the padding
  a.x = xp.data();
  a.x_stride = xs;
  a.y_stride = ys;
  layer_norm_forward(a, yp.data(), nullptr, nullptr);
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) EXPECT_EQ(yp.get(i * ys + j), yc.get(i * N + j));
    for (int64_t j = N; j < ys; ++j) EXPECT_EQ(yp.get(i * ys + j), 12288.0);
  }

  // backward
  BwdArgs b;
  b.M = M;
  b.N = N;
  b.x_dtype = d;
  b.w_dtype = DType::f32;
  b.weight = w.data();
  b.x = xc.data();
  b.dy = dyc.data();
  b.x_stride = b.dy_stride = b.dx_stride = N;
  Buf dxc(d, M * N), dwc(DType::f32, N), dbc(DType::f32, N);
  layer_norm_backward(b, dxc.data(), dwc.data(), dbc.data());
  const int64_t dxs = N + 1;
  Buf dxp(d, M * dxs), dwp(DType::f32, N), dbp(DType::f32, N);
  for (int64_t k = 0; k < M * dxs; ++k) dxp.set(k, -7.0);
  b.x = xp.data();
  b.dy = dyp.data();
  b.x_stride = b.dy_stride = xs;
  b.dx_stride = dxs;
  layer_norm_backward(b, dxp.data(), dwp.data(), dbp.data());
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) EXPECT_EQ(dxp.get(i * dxs + j), dxc.get(i * N + j));
    EXPECT_EQ(dxp.get(i * dxs + N), -7.0);
  }
  EXPECT_EQ(dwp.bytes, dwc.bytes);
  EXPECT_EQ(dbp.bytes, dbc.bytes);
}

TEST(ReferenceTyped, NanAndInfPropagateToTheirRowOnly) {
  const int64_t M = 4, N = 8;
  std::mt19937_64 rng(13);
  Buf x = random_buf(DType::f32, M * N, rng);
  const Buf dy = random_buf(DType::f32, M * N, rng);
  x.set(1 * N + 3, kInf);  // row 1: +inf
  x.set(2 * N + 0, kNaN);  // row 2: NaN
  FwdArgs a;
  a.M = M;
  a.N = N;
  a.x_stride = a.y_stride = N;
  a.x = x.data();
  Buf y(DType::f32, M * N);
  std::vector<float> mean(M), rstd(M);
  layer_norm_forward(a, y.data(), mean.data(), rstd.data());
  for (int64_t j = 0; j < N; ++j) {
    EXPECT_TRUE(std::isnan(y.get(1 * N + j))) << j;
    EXPECT_TRUE(std::isnan(y.get(2 * N + j))) << j;
  }
  EXPECT_EQ(mean[1], std::numeric_limits<float>::infinity());  // as PyTorch
  EXPECT_TRUE(std::isnan(rstd[1]));
  EXPECT_TRUE(std::isnan(mean[2]));
  EXPECT_TRUE(std::isnan(rstd[2]));
  // Rows 0 and 3 equal the same rows normalised on their own.
  for (int64_t i : {int64_t{0}, int64_t{3}}) {
    FwdArgs one = a;
    one.M = 1;
    one.x = static_cast<const float*>(x.data()) + i * N;
    Buf y1(DType::f32, N);
    float m1, r1;
    layer_norm_forward(one, y1.data(), &m1, &r1);
    for (int64_t j = 0; j < N; ++j) EXPECT_EQ(y.get(i * N + j), y1.get(j));
    EXPECT_EQ(m1, mean[static_cast<std::size_t>(i)]);
    EXPECT_EQ(r1, rstd[static_cast<std::size_t>(i)]);
    EXPECT_TRUE(std::isfinite(m1));
  }

  // A row of -inf and +inf: mean NaN.
  Buf x2(DType::f32, 2);
  x2.set(0, -kInf);
  x2.set(1, kInf);
  FwdArgs a2;
  a2.M = 1;
  a2.N = 2;
  a2.x_stride = a2.y_stride = 2;
  a2.x = x2.data();
  Buf y2(DType::f32, 2);
  float m2, r2;
  layer_norm_forward(a2, y2.data(), &m2, &r2);
  EXPECT_TRUE(std::isnan(m2));
  EXPECT_TRUE(std::isnan(y2.get(0)) && std::isnan(y2.get(1)));

  // backward: dx NaN in the bad rows only; dw NaN everywhere, db finite.
  BwdArgs b;
  b.M = M;
  b.N = N;
  b.dy_stride = b.x_stride = b.dx_stride = N;
  b.x = x.data();
  b.dy = dy.data();
  Buf dx(DType::f32, M * N), dw(DType::f32, N), db(DType::f32, N);
  layer_norm_backward(b, dx.data(), dw.data(), db.data());
  for (int64_t j = 0; j < N; ++j) {
    EXPECT_TRUE(std::isnan(dx.get(1 * N + j)));
    EXPECT_TRUE(std::isnan(dx.get(2 * N + j)));
    EXPECT_TRUE(std::isfinite(dx.get(0 * N + j)));
    EXPECT_TRUE(std::isfinite(dx.get(3 * N + j)));
    EXPECT_TRUE(std::isnan(dw.get(j)));
    EXPECT_TRUE(std::isfinite(db.get(j)));
  }
  BwdArgs one = b;
  one.M = 1;
  one.x = static_cast<const float*>(x.data()) + 3 * N;
  one.dy = static_cast<const float*>(dy.data()) + 3 * N;
  Buf dx1(DType::f32, N);
  layer_norm_backward(one, dx1.data(), nullptr, nullptr);
  for (int64_t j = 0; j < N; ++j) EXPECT_EQ(dx.get(3 * N + j), dx1.get(j));
}

TEST(ReferenceTyped, ResultsIndependentOfThreadCount) {
  ThreadGuard guard;
  const int64_t M = 2000, N = 700;  // 64 dw/db chunks, 2 column blocks
  std::mt19937_64 rng(21);
  const Buf x = random_buf(DType::f16, M * N, rng, 3.0, 1.0), dy = random_buf(DType::f16, M * N, rng);
  const Buf w = random_buf(DType::f32, N, rng, 0.5, 1.0);
  BwdArgs b;
  b.M = M;
  b.N = N;
  b.dy_stride = b.x_stride = b.dx_stride = N;
  b.x_dtype = DType::f16;
  b.w_dtype = DType::f32;
  b.x = x.data();
  b.dy = dy.data();
  b.weight = w.data();
  FwdArgs a;
  a.M = M;
  a.N = N;
  a.x_stride = a.y_stride = N;
  a.x_dtype = DType::f16;
  a.w_dtype = DType::f32;
  a.x = x.data();
  a.weight = w.data();

  std::vector<std::vector<unsigned char>> results;
  for (int threads : {1, 3, 8, 0}) {
    set_num_threads(threads);
    EXPECT_GE(num_threads(), 1);
    Buf dx(DType::f16, M * N), dw(DType::f32, N), db(DType::f32, N), y(DType::f16, M * N);
    layer_norm_backward(b, dx.data(), dw.data(), db.data());
    layer_norm_forward(a, y.data(), nullptr, nullptr);
    std::vector<unsigned char> all;
    for (const Buf* p : {&dx, &dw, &db, &y}) all.insert(all.end(), p->bytes.begin(), p->bytes.end());
    results.push_back(std::move(all));
  }
  for (std::size_t k = 1; k < results.size(); ++k) EXPECT_TRUE(results[k] == results[0]) << k;
  // dw in double: independent of threads bit for bit, too.
  std::vector<double> xv = x.widen(), dyv = dy.widen(), dw1(N), dw2(N);
  set_num_threads(1);
  backward_f64(M, N, dyv.data(), xv.data(), nullptr, 1e-5, nullptr, dw1.data(), nullptr);
  set_num_threads(6);
  backward_f64(M, N, dyv.data(), xv.data(), nullptr, 1e-5, nullptr, dw2.data(), nullptr);
  for (int64_t j = 0; j < N; ++j)
    EXPECT_EQ(f64_bits(dw1[static_cast<std::size_t>(j)]), f64_bits(dw2[static_cast<std::size_t>(j)]));
}

TEST(ReferenceTyped, InvalidArgumentsThrow) {
  float x[4] = {1, 2, 3, 4}, y[4];
  FwdArgs a;
  a.M = 1;
  a.N = 4;
  a.x_stride = a.y_stride = 4;
  a.x = x;
  EXPECT_NO_THROW(layer_norm_forward(a, y, nullptr, nullptr));
  FwdArgs bad = a;
  bad.N = 0;
  EXPECT_THROW(layer_norm_forward(bad, y, nullptr, nullptr), lntune::Error);
  bad = a;
  bad.x_stride = 3;
  EXPECT_THROW(layer_norm_forward(bad, y, nullptr, nullptr), lntune::Error);
  bad = a;
  bad.M = -1;
  EXPECT_THROW(layer_norm_forward(bad, y, nullptr, nullptr), lntune::Error);
  EXPECT_THROW(layer_norm_forward(a, nullptr, nullptr, nullptr), lntune::Error);
  bad = a;
  bad.eps = kNaN;
  EXPECT_THROW(layer_norm_forward(bad, y, nullptr, nullptr), lntune::Error);
  BwdArgs b;
  b.M = 1;
  b.N = 4;
  b.x_stride = b.dy_stride = b.dx_stride = 4;
  b.x = x;
  b.dy = nullptr;
  EXPECT_THROW(layer_norm_backward(b, y, nullptr, nullptr), lntune::Error);
  b.dy = x;
  b.dx_stride = 2;
  EXPECT_THROW(layer_norm_backward(b, y, nullptr, nullptr), lntune::Error);
}

// =============================================================================
// compare() and tolerances
// =============================================================================

TEST(Compare, IdenticalArraysPass) {
  for (DType d : kAllDtypes) {
    std::mt19937_64 rng(1);
    const Buf a = random_buf(d, 60, rng);
    const auto r = compare(d, a.data(), a.data(), 6, 10, 10, 10, Tolerance{0, 0});
    EXPECT_TRUE(r.ok) << r.message;
    EXPECT_EQ(r.checked, 60);
    EXPECT_EQ(r.mismatches, 0);
    EXPECT_EQ(r.first_bad_row, -1);
    EXPECT_EQ(r.max_abs_err, 0.0);
    EXPECT_EQ(r.rel_l2_err, 0.0);
  }
}

TEST(Compare, LargeArraysInRowBlocksGiveTheSameResultAsOneThread) {
  // >= 2^20 elements: compared in row blocks on threads, merged in row
  // order; the counts, the first failure and the maxima are those of a
  // row-by-row comparison (each row alone is below the threshold).
  const int64_t rows = 1024, cols = 1024;
  Buf want(DType::f32, rows * cols), got(DType::f32, rows * cols);
  for (int64_t k = 0; k < rows * cols; ++k) want.set(k, 1.0 + static_cast<double>(k % 97) / 16);
  got.bytes = want.bytes;
  got.set(700 * cols + 5, 100.0);
  got.set(300 * cols + 9, -3.0);
  got.set(1023 * cols + 1023, 2.5);
  poison(DType::f32, got.bytes.data() + (900 * cols + 2) * 4, 1);
  const Tolerance tol{1e-6, 1e-6};
  const auto r = compare(DType::f32, got.data(), want.data(), rows, cols, cols, cols, tol, poison_bits(DType::f32));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.checked, rows * cols);
  EXPECT_EQ(r.mismatches, 4);
  EXPECT_EQ(r.unwritten, 1);
  EXPECT_EQ(r.first_bad_row, 300);
  EXPECT_EQ(r.first_bad_col, 9);
  EXPECT_NE(r.message.find("[300, 9]"), std::string::npos) << r.message;
  int64_t mismatches = 0;
  double max_abs = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const auto one = compare(DType::f32, got.bytes.data() + i * cols * 4, want.bytes.data() + i * cols * 4, 1, cols, cols, cols,
                             tol, poison_bits(DType::f32));
    mismatches += one.mismatches;
    max_abs = std::max(max_abs, one.max_abs_err);
  }
  EXPECT_EQ(r.mismatches, mismatches);
  EXPECT_EQ(r.max_abs_err, max_abs);
  EXPECT_TRUE(compare(DType::f32, want.data(), want.data(), rows, cols, cols, cols, tol).ok);
}

TEST(Compare, WithinAndOutsideTolerance) {
  Buf want(DType::f32, 6), got(DType::f32, 6);
  for (int k = 0; k < 6; ++k) want.set(k, 1.0 + k);
  got.bytes = want.bytes;
  const Tolerance tol{0.01, 0.001};  // allowed at want = 5: 0.015
  got.set(4, 5.0 + 0.0149);
  auto r = compare(DType::f32, got.data(), want.data(), 2, 3, 3, 3, tol);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_NEAR(r.max_abs_err, 0.0149, 1e-6);
  EXPECT_NEAR(r.max_rel_err, 0.0149 / 5, 1e-6);
  got.set(4, 5.0 + 0.0151);
  got.set(5, 6.0 - 1.0);
  r = compare(DType::f32, got.data(), want.data(), 2, 3, 3, 3, tol);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.first_bad_row, 1);
  EXPECT_EQ(r.first_bad_col, 1);
  EXPECT_NE(r.message.find("[1, 1]"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("got 5.0151"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("want 5"), std::string::npos) << r.message;
  EXPECT_NEAR(r.max_abs_err, 1.0, 1e-6);
  EXPECT_GT(r.rel_l2_err, 0.0);
}

TEST(Compare, StridesAreHonoured) {
  // got has stride 4 with garbage in the padding column; want is contiguous.
  Buf want(DType::f16, 6), got(DType::f16, 8);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      want.set(i * 3 + j, i * 10 + j);
      got.set(i * 4 + j, i * 10 + j);
    }
  got.set(3, kNaN);
  got.set(7, 1e4);
  const auto r = compare(DType::f16, got.data(), want.data(), 2, 3, 4, 3, Tolerance{0, 0});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(Compare, DetectsUnwrittenPoison) {
  for (DType d : kAllDtypes) {
    const int64_t n = 50;
    Buf want(d, n), got(d, n);
    for (int64_t k = 0; k < n; ++k) want.set(k, 0.5 * static_cast<double>(k));
    poison(d, got.data(), n);
    EXPECT_TRUE(std::isnan(got.get(0))) << name(d);  // the pattern is a NaN
    for (int64_t k = 0; k < n; ++k)
      if (k != 17) got.set(k, want.get(k));
    const auto r = compare(d, got.data(), want.data(), 5, 10, 10, 10, Tolerance{1e-3, 1e-3},
                           poison_bits(d));
    EXPECT_FALSE(r.ok) << name(d);
    EXPECT_EQ(r.unwritten, 1);
    EXPECT_EQ(r.mismatches, 1);
    EXPECT_EQ(r.first_bad_row, 1);
    EXPECT_EQ(r.first_bad_col, 7);
    EXPECT_NE(r.message.find("unwritten"), std::string::npos) << r.message;
    // Without the poison check it is still caught, as a NaN mismatch.
    const auto r2 = compare(d, got.data(), want.data(), 5, 10, 10, 10, Tolerance{1e-3, 1e-3});
    EXPECT_FALSE(r2.ok);
    EXPECT_EQ(r2.unwritten, 0);
    EXPECT_EQ(r2.nan_mismatch, 1);
  }
  EXPECT_EQ(poison_bits(DType::f32), 0x7fbadbadu);
  EXPECT_EQ(poison_bits(DType::f16), 0x7fbbu);
  EXPECT_EQ(poison_bits(DType::bf16), 0x7fbbu);
}

TEST(Compare, PoisonedWantNaNIsNotConfusedWithArithmeticNaN) {
  // A got NaN produced by arithmetic (not the pattern) where want is NaN: ok.
  Buf want(DType::f32, 2), got(DType::f32, 2);
  want.set(0, kNaN);
  want.set(1, 1.0);
  got.set(0, kNaN);
  got.set(1, 1.0);
  const auto r = compare(DType::f32, got.data(), want.data(), 1, 2, 2, 2, Tolerance{0, 0},
                         poison_bits(DType::f32));
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(Compare, NanMismatchBothWays) {
  for (DType d : kAllDtypes) {
    Buf want(d, 4), got(d, 4);
    const double wv[4] = {kNaN, 1.0, kNaN, 2.0}, gv[4] = {kNaN, kNaN, 3.0, 2.0};
    for (int k = 0; k < 4; ++k) {
      want.set(k, wv[k]);
      got.set(k, gv[k]);
    }
    const auto r = compare(d, got.data(), want.data(), 1, 4, 4, 4, Tolerance{10, 10});
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.nan_mismatch, 2);
    EXPECT_EQ(r.mismatches, 2);
    EXPECT_EQ(r.first_bad_col, 1);
    EXPECT_NE(r.message.find("NaN"), std::string::npos) << r.message;
  }
}

TEST(Compare, Infinities) {
  Buf want(DType::bf16, 4), got(DType::bf16, 4);
  const double wv[4] = {kInf, -kInf, kInf, 1e30}, gv[4] = {kInf, -kInf, -kInf, kInf};
  for (int k = 0; k < 4; ++k) {
    want.set(k, wv[k]);
    got.set(k, gv[k]);
  }
  const auto r = compare(DType::bf16, got.data(), want.data(), 1, 4, 4, 4, Tolerance{1e38, 1e38});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 2);  // +inf vs -inf, and inf vs finite
  EXPECT_EQ(r.first_bad_col, 2);
  EXPECT_EQ(r.nan_mismatch, 0);
  const auto ok = compare(DType::bf16, got.data(), want.data(), 1, 2, 4, 4, Tolerance{0, 0});
  EXPECT_TRUE(ok.ok) << ok.message;
}

TEST(Compare, EqualElementsCountInTheRelativeL2Error) {
  // Equal elements take a shortcut (no error to measure): they must still
  // count in ||want||_2, and NaN/infinity pairs in neither sum.
  Buf want(DType::bf16, 5), got(DType::bf16, 5);
  const double wv[5] = {3.0, 4.0, 2.0, kNaN, kInf}, gv[5] = {3.0, 4.0, 2.5, kNaN, kInf};
  for (int k = 0; k < 5; ++k) {
    want.set(k, wv[k]);
    got.set(k, gv[k]);
  }
  const auto r = compare(DType::bf16, got.data(), want.data(), 1, 5, 5, 5, Tolerance{1, 0});
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_DOUBLE_EQ(r.rel_l2_err, 0.5 / std::sqrt(9.0 + 16.0 + 4.0));
  EXPECT_DOUBLE_EQ(r.max_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(r.max_rel_err, 0.25);
}

TEST(Compare, RejectsNegativeOrNaNTolerances) {
  Buf a(DType::f32, 4);
  for (int k = 0; k < 4; ++k) a.set(k, k);
  for (const Tolerance bad : {Tolerance{-1e-3, 0}, Tolerance{0, -1e-3}, Tolerance{kNaN, 0}, Tolerance{0, kNaN}}) {
    try {
      compare(DType::f32, a.data(), a.data(), 1, 4, 4, 4, bad);
      FAIL() << "accepted atol " << bad.atol << " rtol " << bad.rtol;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("atol and rtol must be >= 0"), std::string::npos) << e.what();
    }
  }
}

TEST(Tolerance, DerivedFromPrecision) {
  const double u = std::ldexp(1.0, -24);
  // y: one ulp of the output format dominates the relative part in 16 bits.
  const auto f16 = default_tolerance(DType::f16, Quantity::y, 1024, 1);
  const auto b16 = default_tolerance(DType::bf16, Quantity::y, 1024, 1);
  const auto f32 = default_tolerance(DType::f32, Quantity::y, 1024, 1);
  EXPECT_GE(f16.rtol, std::ldexp(1.0, -10));
  EXPECT_LT(f16.rtol, 1.1 * std::ldexp(1.0, -10));
  EXPECT_GE(b16.rtol, std::ldexp(1.0, -7));
  EXPECT_LT(b16.rtol, 1.1 * std::ldexp(1.0, -7));
  EXPECT_GE(f32.rtol, 2 * u);
  EXPECT_LT(f32.rtol, 1e-5);
  // atol grows like sqrt(N) and with the magnitude.
  const auto big = default_tolerance(DType::f32, Quantity::y, 1024 * 64, 1);
  EXPECT_NEAR(big.atol / f32.atol, 8.0, 0.2);
  const auto mag = default_tolerance(DType::f32, Quantity::y, 1024, 1, 10.0);
  EXPECT_NEAR(mag.atol / f32.atol, 10.0, 1e-6);
  // dweight grows with M; mean_rstd ignores the dtype.
  EXPECT_GT(default_tolerance(DType::f32, Quantity::dweight, 64, 4096).atol,
            default_tolerance(DType::f32, Quantity::dweight, 64, 256).atol);
  const auto m1 = default_tolerance(DType::bf16, Quantity::mean_rstd, 100, 1);
  const auto m2 = default_tolerance(DType::f32, Quantity::mean_rstd, 100, 1);
  EXPECT_EQ(m1.atol, m2.atol);
  EXPECT_EQ(m1.rtol, m2.rtol);
  EXPECT_LT(m2.rtol, 1e-5);
  EXPECT_THROW(default_tolerance(DType::f32, Quantity::y, 0, 1), lntune::Error);
}

// The default tolerances accept a plain fp32 implementation (sequential fp32
// sums, the worst summation order) and reject implementations with bugs.
class ToleranceCalibration
    : public ::testing::TestWithParam<std::tuple<DType, int64_t, int64_t>> {};

TEST_P(ToleranceCalibration, Fp32KernelPassesBugsFail) {
  const auto [d, M, N] = GetParam();
  const DType wd = d;
  const double eps = 1e-5;
  std::mt19937_64 rng(static_cast<uint64_t>(M * 7 + N));
  const Buf x = random_buf(d, M * N, rng, 3.0, 1.0), dy = random_buf(d, M * N, rng);
  const Buf w = random_buf(wd, N, rng, 0.5, 1.0), b = random_buf(wd, N, rng, 0.5);

  // reference
  Buf y(d, M * N), dx(d, M * N), dw(wd, N), db(wd, N);
  std::vector<float> mean(M), rstd(M);
  FwdArgs fa;
  fa.M = M;
  fa.N = N;
  fa.x_stride = fa.y_stride = N;
  fa.x_dtype = d;
  fa.w_dtype = wd;
  fa.x = x.data();
  fa.weight = w.data();
  fa.bias = b.data();
  fa.eps = eps;
  layer_norm_forward(fa, y.data(), mean.data(), rstd.data());
  BwdArgs ba;
  ba.M = M;
  ba.N = N;
  ba.dy_stride = ba.x_stride = ba.dx_stride = N;
  ba.x_dtype = d;
  ba.w_dtype = wd;
  ba.dy = dy.data();
  ba.x = x.data();
  ba.weight = w.data();
  ba.eps = eps;
  layer_norm_backward(ba, dx.data(), dw.data(), db.data());

  // magnitudes (documented in compare.hpp): y: max|w|, max|b|;
  // dx: max rstd * max|w dy|; dw: max|dy|; mean_rstd: std(x) ~ 3.
  const double wmax = max_abs(w.widen()), bmax = max_abs(b.widen()), dymax = max_abs(dy.widen());
  double rmax = 0;
  for (float r : rstd) rmax = std::max(rmax, static_cast<double>(r));
  const auto ty = default_tolerance(d, Quantity::y, N, M, std::max(wmax, bmax));
  const auto tdx = default_tolerance(d, Quantity::dx, N, M, rmax * wmax * dymax);
  const auto tdw = default_tolerance(wd, Quantity::dweight, N, M, dymax);
  const auto tms = default_tolerance(d, Quantity::mean_rstd, N, M, 3.0);

  const auto g = fp32_layer_norm(M, N, d, wd, x, w, b, dy, static_cast<float>(eps));
  auto cy = compare(d, g.y.data(), y.data(), M, N, N, N, ty);
  auto cdx = compare(d, g.dx.data(), dx.data(), M, N, N, N, tdx);
  auto cdw = compare(wd, g.dw.data(), dw.data(), 1, N, N, N, tdw);
  auto cdb = compare(wd, g.db.data(), db.data(), 1, N, N, N, tdw);
  auto cm = compare(DType::f32, g.mean.data(), mean.data(), 1, M, M, M, tms);
  auto cr = compare(DType::f32, g.rstd.data(), rstd.data(), 1, M, M, M, tms);
  EXPECT_TRUE(cy.ok) << "y " << cy.message;
  EXPECT_TRUE(cdx.ok) << "dx " << cdx.message;
  EXPECT_TRUE(cdw.ok) << "dw " << cdw.message;
  EXPECT_TRUE(cdb.ok) << "db " << cdb.message;
  EXPECT_TRUE(cm.ok) << "mean " << cm.message;
  EXPECT_TRUE(cr.ok) << "rstd " << cr.message;

  // Bugs. The shifted weight and the missing c2 are caught at every size;
  // the dropped dw row and the unbiased variance (a 1/(2N) relative change)
  // only where they exceed the output precision.
  const auto sw = fp32_layer_norm(M, N, d, wd, x, w, b, dy, static_cast<float>(eps), Bug::shifted_weight);
  EXPECT_FALSE(compare(d, sw.y.data(), y.data(), M, N, N, N, ty).ok);
  if (N > 1) {
    const auto nc = fp32_layer_norm(M, N, d, wd, x, w, b, dy, static_cast<float>(eps), Bug::no_c2);
    EXPECT_FALSE(compare(d, nc.dx.data(), dx.data(), M, N, N, N, tdx).ok);
  }
  // A dropped row changes db by |dy| ~ 1, below one bf16 ulp of |db| ~ sqrt(M)
  // once M is in the thousands.
  if (wd != DType::bf16 || M <= 1000) {
    const auto dr =
        fp32_layer_norm(M, N, d, wd, x, w, b, dy, static_cast<float>(eps), Bug::drop_row_dw);
    EXPECT_FALSE(compare(wd, dr.db.data(), db.data(), 1, N, N, N, tdw).ok);
  }
  if (d == DType::f32 && N <= 1024) {
    const auto uv = fp32_layer_norm(M, N, d, wd, x, w, b, dy, static_cast<float>(eps), Bug::unbiased_var);
    EXPECT_FALSE(compare(d, uv.y.data(), y.data(), M, N, N, N, ty).ok);
    EXPECT_FALSE(compare(DType::f32, uv.rstd.data(), rstd.data(), 1, M, M, M, tms).ok);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ToleranceCalibration,
    ::testing::Combine(::testing::Values(DType::f32, DType::f16, DType::bf16),
                       ::testing::Values(int64_t{64}),
                       ::testing::Values(int64_t{1000}, int64_t{4096}, int64_t{16384})));

INSTANTIATE_TEST_SUITE_P(
    ManyRows, ToleranceCalibration,
    ::testing::Combine(::testing::Values(DType::f32, DType::f16, DType::bf16),
                       ::testing::Values(int64_t{512}),
                       ::testing::Values(int64_t{256}, int64_t{2048})));

INSTANTIATE_TEST_SUITE_P(
    LongColumns, ToleranceCalibration,
    ::testing::Combine(::testing::Values(DType::f32, DType::f16, DType::bf16),
                       ::testing::Values(int64_t{8192}),
                       ::testing::Values(int64_t{16}, int64_t{64})));
