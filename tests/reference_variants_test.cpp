// The float64 CPU reference for the variants of issue 11: RMSNorm, fused
// residual add, zero-centred gamma, output dtype. Hand-worked cases, finite
// differences of the backward against the forward, and the typed path.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tuner/compare.hpp"
#include "tuner/host_dtype.hpp"
#include "tuner/reference.hpp"

namespace lntune::ref {
namespace {

std::vector<double> random_vec(int64_t count, std::mt19937_64& rng, double scale = 1.0, double offset = 0.0) {
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(count));
  for (auto& e : v) e = offset + scale * nd(rng);
  return v;
}

// ---------------------------------------------------------------- hand-worked

TEST(ReferenceVariants, RmsForwardByHand) {
  // x = [3, 4]: mean(x^2) = 12.5, eps = 0: rstd = 1/sqrt(12.5), y = x * rstd.
  const double x[2] = {3, 4};
  double y[2], rstd = 0, mean = -7;
  forward_f64(1, 2, x, nullptr, nullptr, 0.0, y, &mean, &rstd, Norm::rms);
  const double r = 1.0 / std::sqrt(12.5);
  EXPECT_NEAR(rstd, r, 1e-16);
  EXPECT_NEAR(y[0], 3 * r, 1e-15);
  EXPECT_NEAR(y[1], 4 * r, 1e-15);
  EXPECT_EQ(mean, -7);  // RMSNorm writes no mean
  // Weight and bias; no centring (unlike LayerNorm, a shift of x changes y).
  const double w[2] = {2, -1}, b[2] = {0.5, 0.25};
  forward_f64(1, 2, x, w, b, 0.0, y, nullptr, nullptr, Norm::rms);
  EXPECT_NEAR(y[0], 6 * r + 0.5, 1e-15);
  EXPECT_NEAR(y[1], -4 * r + 0.25, 1e-15);
  // N = 1: y = x / sqrt(x^2 + eps) = sign(x) for eps = 0.
  const double x1[3] = {-2, 5, 0.25};
  double y1[3];
  forward_f64(3, 1, x1, nullptr, nullptr, 0.0, y1, nullptr, nullptr, Norm::rms);
  EXPECT_EQ(y1[0], -1.0);
  EXPECT_EQ(y1[1], 1.0);
  EXPECT_EQ(y1[2], 1.0);
}

TEST(ReferenceVariants, RmsBackwardByHand) {
  // x = [3, 4], eps = 0, w = 1, dy = [1, 0]: r = 1/sqrt(12.5), xhat = r x,
  // c1 = mean(xhat dy) = 3r/2, dx = r (dy - xhat c1) = r [1 - 9r^2/2, -6r^2]
  //    = r [1 - 0.36, -0.48]; dw = dy xhat = [3r, 0].
  const double x[2] = {3, 4}, dy[2] = {1, 0};
  double dx[2], dw[2], db[2];
  backward_f64(1, 2, dy, x, nullptr, 0.0, dx, dw, db, Norm::rms);
  const double r = 1.0 / std::sqrt(12.5);
  EXPECT_NEAR(dx[0], r * 0.64, 1e-15);
  EXPECT_NEAR(dx[1], -r * 0.48, 1e-15);
  EXPECT_NEAR(dw[0], 3 * r, 1e-15);
  EXPECT_EQ(dw[1], 0.0);
  EXPECT_EQ(db[0], 1.0);
  // dx is orthogonal to x (RMSNorm is scale invariant): x . dx = 0.
  EXPECT_NEAR(x[0] * dx[0] + x[1] * dx[1], 0.0, 1e-15);
}

TEST(ReferenceVariants, ZeroCenteredGammaIsOnePlusW) {
  std::mt19937_64 rng(5);
  const int64_t M = 3, N = 7;
  const auto x = random_vec(M * N, rng), w = random_vec(N, rng, 0.1), b = random_vec(N, rng), dy = random_vec(M * N, rng);
  std::vector<double> w1(w);
  for (double& v : w1) v += 1.0;
  for (Norm norm : {Norm::layer, Norm::rms}) {
    std::vector<double> y0(M * N), y1(M * N), dx0(M * N), dx1(M * N), dw0(N), dw1(N), db0(N), db1(N);
    forward_f64(M, N, x.data(), w.data(), b.data(), 1e-5, y0.data(), nullptr, nullptr, norm, true);
    forward_f64(M, N, x.data(), w1.data(), b.data(), 1e-5, y1.data(), nullptr, nullptr, norm, false);
    backward_f64(M, N, dy.data(), x.data(), w.data(), 1e-5, dx0.data(), dw0.data(), db0.data(), norm, true);
    backward_f64(M, N, dy.data(), x.data(), w1.data(), 1e-5, dx1.data(), dw1.data(), db1.data(), norm, false);
    EXPECT_EQ(y0, y1);
    EXPECT_EQ(dx0, dx1);
    EXPECT_EQ(dw0, dw1);  // d/dw of xhat (1 + w) is xhat, as for xhat w
    EXPECT_EQ(db0, db1);
  }
}

// ---------------------------------------------------------- finite differences

// f = sum(y * dy) with y = norm(x) as chosen.
double objective(Norm norm, bool zc, int64_t M, int64_t N, const std::vector<double>& x, const std::vector<double>& w,
                 const std::vector<double>& b, const std::vector<double>& dy, double eps) {
  std::vector<double> y(static_cast<std::size_t>(M * N));
  forward_f64(M, N, x.data(), w.data(), b.data(), eps, y.data(), nullptr, nullptr, norm, zc);
  double f = 0;
  for (std::size_t k = 0; k < y.size(); ++k) f += y[k] * dy[k];
  return f;
}

template <class F>
double directional(const F& f, double h) {
  return (f(-2 * h) - 8 * f(-h) + 8 * f(h) - f(2 * h)) / (12 * h);
}

std::vector<double> axpy(const std::vector<double>& p, double t, const std::vector<double>& v) {
  std::vector<double> r(p);
  for (std::size_t k = 0; k < r.size(); ++k) r[k] += t * v[k];
  return r;
}

struct FdCase {
  Norm norm;
  bool zc;
  int64_t M, N;
};

class VariantFiniteDifference : public ::testing::TestWithParam<FdCase> {};

TEST_P(VariantFiniteDifference, Elementwise) {
  const FdCase c = GetParam();
  const double eps = 1e-3;
  std::mt19937_64 rng(static_cast<uint64_t>(c.M * 100 + c.N + (c.norm == Norm::rms ? 7 : 0)));
  const auto x = random_vec(c.M * c.N, rng, 1.0, 0.3), dy = random_vec(c.M * c.N, rng);
  const auto w = random_vec(c.N, rng, 0.5, c.zc ? 0.0 : 1.0), b = random_vec(c.N, rng);
  const auto M = c.M, N = c.N;
  std::vector<double> dx(M * N), dw(N), db(N);
  backward_f64(M, N, dy.data(), x.data(), w.data(), eps, dx.data(), dw.data(), db.data(), c.norm, c.zc);
  const auto f = [&](const std::vector<double>& xx, const std::vector<double>& ww, const std::vector<double>& bb) {
    return objective(c.norm, c.zc, M, N, xx, ww, bb, dy, eps);
  };
  for (int64_t k = 0; k < M * N; ++k) {
    std::vector<double> e(M * N, 0.0);
    e[static_cast<std::size_t>(k)] = 1;
    const double fd = directional([&](double t) { return f(axpy(x, t, e), w, b); }, 1e-3);
    EXPECT_NEAR(fd, dx[static_cast<std::size_t>(k)], 1e-8) << "dx " << k;
  }
  for (int64_t j = 0; j < N; ++j) {
    std::vector<double> e(N, 0.0);
    e[static_cast<std::size_t>(j)] = 1;
    const double fw = directional([&](double t) { return f(x, axpy(w, t, e), b); }, 1e-3);
    const double fb = directional([&](double t) { return f(x, w, axpy(b, t, e)); }, 1e-3);
    EXPECT_NEAR(fw, dw[static_cast<std::size_t>(j)], 1e-8) << "dw " << j;
    EXPECT_NEAR(fb, db[static_cast<std::size_t>(j)], 1e-8) << "db " << j;
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, VariantFiniteDifference,
                         ::testing::Values(FdCase{Norm::rms, false, 1, 1}, FdCase{Norm::rms, false, 2, 3},
                                           FdCase{Norm::rms, false, 3, 17}, FdCase{Norm::rms, true, 2, 5},
                                           FdCase{Norm::layer, true, 2, 5}, FdCase{Norm::layer, true, 3, 16}));

// ---------------------------------------------------------------- typed path

struct Buf {
  DType dt;
  std::vector<unsigned char> bytes;
  Buf(DType d, int64_t count) : dt(d), bytes(static_cast<std::size_t>(count) * element_size(d)) {}
  void* data() { return bytes.data(); }
  double get(int64_t i) const { return load_element(dt, bytes.data(), i); }
  void set(int64_t i, double v) { store_element(dt, bytes.data(), i, v); }
};

Buf random_buf(DType d, int64_t count, std::mt19937_64& rng, double scale = 1.0, double offset = 0.0) {
  std::normal_distribution<double> nd(0.0, 1.0);
  Buf b(d, count);
  for (int64_t i = 0; i < count; ++i) b.set(i, offset + scale * nd(rng));
  return b;
}

// The fused residual: z = round(x + r) is written, and y is the norm of the
// stored z, whatever the dtypes; the backward reads z and adds dz into dx.
TEST(ReferenceVariants, TypedResidualMatchesF64OnTheStoredZ) {
  std::mt19937_64 rng(17);
  const int64_t M = 5, N = 37, S = 41;  // strided rows
  for (Norm norm : {Norm::layer, Norm::rms})
    for (DType xd : {DType::f32, DType::bf16})
      for (DType rd : {DType::f32, DType::bf16, DType::f16})
        for (DType yd : {DType::f32, DType::bf16}) {
          SCOPED_TRACE(std::string(to_string(norm)) + " x=" + std::string(to_string(xd)) +
                       " r=" + std::string(to_string(rd)) + " y=" + std::string(to_string(yd)));
          Buf x = random_buf(xd, M * S, rng), r = random_buf(rd, M * S, rng);
          Buf w = random_buf(DType::f32, N, rng, 0.1), b = random_buf(DType::f32, N, rng);
          Buf y(yd, M * S), z(rd, M * S);
          std::vector<float> rstd(M);
          FwdArgs a;
          a.M = M;
          a.N = N;
          a.x_stride = a.y_stride = a.residual_stride = a.z_stride = S;
          a.x_dtype = xd;
          a.w_dtype = DType::f32;
          a.x = x.data();
          a.weight = w.data();
          a.bias = b.data();
          a.norm = norm;
          a.zero_centered = true;
          a.residual = r.data();
          a.residual_dtype = rd;
          a.y_dtype = yd;
          norm_forward(a, y.data(), nullptr, rstd.data(), z.data());
          // z is x + r rounded once to rd; y is the f64 norm of z rounded once to yd.
          std::vector<double> zd(M * N), wd(N), bd(N), yref(M * N), rref(M);
          for (int64_t j = 0; j < N; ++j) {
            wd[j] = w.get(j);
            bd[j] = b.get(j);
          }
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
              const double exact = x.get(i * S + j) + r.get(i * S + j);
              Buf one(rd, 1);
              one.set(0, exact);
              EXPECT_EQ(z.get(i * S + j), one.get(0));
              zd[i * N + j] = z.get(i * S + j);
            }
          forward_f64(M, N, zd.data(), wd.data(), bd.data(), a.eps, yref.data(), nullptr, rref.data(), norm, true);
          for (int64_t i = 0; i < M; ++i) {
            EXPECT_EQ(rstd[i], static_cast<float>(rref[i]));
            for (int64_t j = 0; j < N; ++j) {
              Buf one(yd, 1);
              one.set(0, yref[i * N + j]);
              EXPECT_EQ(y.get(i * S + j), one.get(0));
            }
          }
          // Backward: dy in yd, z in rd, dz in rd; dx (xd) = dnorm + dz.
          Buf dy = random_buf(yd, M * S, rng), dz = random_buf(rd, M * S, rng), dx(xd, M * S);
          Buf dw(DType::f32, N), db(DType::f32, N);
          BwdArgs g;
          g.M = M;
          g.N = N;
          g.dy_stride = g.x_stride = g.dx_stride = g.dz_stride = S;
          g.x_dtype = xd;
          g.w_dtype = DType::f32;
          g.dy = dy.data();
          g.x = z.data();
          g.weight = w.data();
          g.norm = norm;
          g.zero_centered = true;
          g.residual = true;
          g.residual_dtype = rd;
          g.dz = dz.data();
          g.y_dtype = yd;
          layer_norm_backward(g, dx.data(), dw.data(), db.data());
          std::vector<double> dyd(M * N), dxref(M * N), dwref(N), dbref(N);
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) dyd[i * N + j] = dy.get(i * S + j);
          backward_f64(M, N, dyd.data(), zd.data(), wd.data(), a.eps, dxref.data(), dwref.data(), dbref.data(), norm,
                       true);
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
              Buf one(xd, 1);
              one.set(0, dxref[i * N + j] + dz.get(i * S + j));
              EXPECT_EQ(dx.get(i * S + j), one.get(0)) << i << "," << j;
            }
          for (int64_t j = 0; j < N; ++j) {
            EXPECT_EQ(dw.get(j), static_cast<double>(static_cast<float>(dwref[j])));
            EXPECT_EQ(db.get(j), static_cast<double>(static_cast<float>(dbref[j])));
          }
        }
}

TEST(ReferenceVariants, NanAndInfPropagateToTheirRowOnly) {
  const int64_t M = 3, N = 8;
  std::mt19937_64 rng(3);
  Buf x = random_buf(DType::f32, M * N, rng), y(DType::bf16, M * N);
  x.set(1 * N + 2, std::numeric_limits<double>::quiet_NaN());
  x.set(2 * N + 5, std::numeric_limits<double>::infinity());
  FwdArgs a;
  a.M = M;
  a.N = N;
  a.x_stride = a.y_stride = N;
  a.x = x.data();
  a.norm = Norm::rms;
  a.y_dtype = DType::bf16;
  std::vector<float> rstd(M);
  norm_forward(a, y.data(), nullptr, rstd.data(), nullptr);
  for (int64_t j = 0; j < N; ++j) {
    EXPECT_TRUE(std::isfinite(y.get(j)));
    EXPECT_TRUE(std::isnan(y.get(1 * N + j)));
  }
  EXPECT_EQ(rstd[2], 0.0f);  // mean(x^2) = inf: rstd = 0
  EXPECT_TRUE(std::isnan(y.get(2 * N + 5)));  // inf * 0
}

TEST(ReferenceVariants, InvalidCombinationsThrow) {
  float x[4] = {1, 2, 3, 4}, y[4], z[4], m[1];
  FwdArgs a;
  a.M = 1;
  a.N = 4;
  a.x_stride = a.y_stride = 4;
  a.x = x;
  a.norm = Norm::rms;
  EXPECT_THROW(norm_forward(a, y, m, nullptr, nullptr), Error);  // RMSNorm has no mean
  a.norm = Norm::layer;
  a.zero_centered = true;
  EXPECT_THROW(norm_forward(a, y, nullptr, nullptr, nullptr), Error);  // no weight
  a.zero_centered = false;
  EXPECT_THROW(norm_forward(a, y, nullptr, nullptr, z), Error);  // z without residual
  a.residual = x;
  EXPECT_THROW(norm_forward(a, y, nullptr, nullptr, nullptr), Error);  // residual without z
  BwdArgs g;
  g.M = 1;
  g.N = 4;
  g.dy_stride = g.x_stride = g.dx_stride = 4;
  g.x = x;
  g.dy = x;
  g.dz = x;
  EXPECT_THROW(layer_norm_backward(g, y, nullptr, nullptr), Error);  // dz without residual
}

TEST(ReferenceVariants, ToleranceCoversTheVariantRoundings) {
  // The variant terms (+u for 1 + w, +2u for dx) are in the defaults.
  const double u = std::ldexp(1.0, -24);
  const Tolerance y = default_tolerance(DType::f32, Quantity::y, 1, 1, 0.0);
  const Tolerance dx = default_tolerance(DType::f32, Quantity::dx, 1, 1, 0.0);
  const double one_ulp = 2.0 * u / (1.0 - u);
  EXPECT_GE(y.rtol, one_ulp + 5 * u);
  EXPECT_GE(dx.rtol, one_ulp + 8 * u);
}

}  // namespace
}  // namespace lntune::ref
