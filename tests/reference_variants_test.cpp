// The float64 CPU reference for the variants of issue 11: RMSNorm, fused
// residual add, zero-centred gamma, output dtype. Hand-worked cases, finite
// differences of the backward against the forward, and the typed path.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
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

// The fused residual: z = round(fp32(x + r)) is written, and y is the norm of
// the stored z, whatever the dtypes; the backward reads z and adds dz into dx,
// and writes the same value as the residual's gradient in the residual's dtype.
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
          // z is the fp32 sum x + r rounded to rd; y is the f64 norm of z rounded once to yd.
          std::vector<double> zd(M * N), wd(N), bd(N), yref(M * N), rref(M);
          for (int64_t j = 0; j < N; ++j) {
            wd[j] = w.get(j);
            bd[j] = b.get(j);
          }
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
              const double sum = static_cast<float>(x.get(i * S + j) + r.get(i * S + j));
              Buf one(rd, 1);
              one.set(0, sum);
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
          Buf dy = random_buf(yd, M * S, rng), dz = random_buf(rd, M * S, rng), dx(xd, M * S), dres(rd, M * S);
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
          g.dresidual_stride = S;
          norm_backward(g, dx.data(), dw.data(), db.data(), dres.data());
          std::vector<double> dyd(M * N), dxref(M * N), dwref(N), dbref(N);
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) dyd[i * N + j] = dy.get(i * S + j);
          backward_f64(M, N, dyd.data(), zd.data(), wd.data(), a.eps, dxref.data(), dwref.data(), dbref.data(), norm,
                       true);
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
              Buf one(xd, 1), other(rd, 1);
              one.set(0, dxref[i * N + j] + dz.get(i * S + j));
              other.set(0, dxref[i * N + j] + dz.get(i * S + j));
              EXPECT_EQ(dx.get(i * S + j), one.get(0)) << i << "," << j;
              // The residual's gradient: the same value, rounded once to rd (not through xd).
              EXPECT_EQ(dres.get(i * S + j), other.get(0)) << i << "," << j;
            }
          for (int64_t j = 0; j < N; ++j) {
            EXPECT_EQ(dw.get(j), static_cast<double>(static_cast<float>(dwref[j])));
            EXPECT_EQ(db.get(j), static_cast<double>(static_cast<float>(dbref[j])));
          }
        }
}

// Hand-worked fused residual: RMSNorm of z = x + r = [3, 4] (eps = 0), then
// the backward with dz, and the residual's gradient in fp32 next to a bf16 dx.
TEST(ReferenceVariants, ResidualByHand) {
  const float x[2] = {1, 2}, r[2] = {2, 2};
  float y[2], z[2], rstd[1];
  FwdArgs a;
  a.M = 1;
  a.N = 2;
  a.x_stride = a.y_stride = a.residual_stride = a.z_stride = 2;
  a.x = x;
  a.norm = Norm::rms;
  a.eps = 0;
  a.residual = r;
  a.residual_dtype = DType::f32;
  norm_forward(a, y, nullptr, rstd, z);
  const double rs = 1.0 / std::sqrt(12.5);
  EXPECT_EQ(z[0], 3.0f);
  EXPECT_EQ(z[1], 4.0f);
  EXPECT_EQ(rstd[0], static_cast<float>(rs));
  EXPECT_EQ(y[0], static_cast<float>(3 * rs));
  EXPECT_EQ(y[1], static_cast<float>(4 * rs));
  // dy = [1, 0]: dnorm = rs [0.64, -0.48] (RmsBackwardByHand); dz = [0.5, -0.25].
  const float dy[2] = {1, 0}, dz[2] = {0.5f, -0.25f};
  Buf dx(DType::bf16, 2);
  float dres[2], dw[2];
  BwdArgs g;
  g.M = 1;
  g.N = 2;
  g.dy_stride = g.x_stride = g.dx_stride = g.dz_stride = g.dresidual_stride = 2;
  g.x_dtype = DType::bf16;  // dx in bf16, the residual stream (z, dz, dresidual) in fp32
  g.dy = dy;
  g.x = z;
  g.eps = 0;
  g.norm = Norm::rms;
  g.residual = true;
  g.residual_dtype = DType::f32;
  g.dz = dz;
  g.y_dtype = DType::f32;
  norm_backward(g, dx.data(), dw, nullptr, dres);
  const double d0 = rs * 0.64 + 0.5, d1 = -rs * 0.48 - 0.25;
  EXPECT_FLOAT_EQ(dres[0], static_cast<float>(d0));
  EXPECT_FLOAT_EQ(dres[1], static_cast<float>(d1));
  EXPECT_NEAR(dres[0], d0, 1e-7);
  EXPECT_EQ(dx.get(0), static_cast<double>(bf16_to_float(double_to_bf16(d0))));
  EXPECT_EQ(dx.get(1), static_cast<double>(bf16_to_float(double_to_bf16(d1))));
  EXPECT_NE(static_cast<double>(dres[0]), dx.get(0));  // fp32 keeps what bf16 drops
  EXPECT_NEAR(dw[0], 3 * rs, 1e-7);  // dW is dy * xhat, dz plays no part
  EXPECT_EQ(dw[1], 0.0f);
}

// z is the fp32 sum, then z's dtype (as the kernels and PyTorch's
// (x + r).to(dtype) form it), which differs from rounding the exact sum once
// when x is fp32 and z is 16-bit: x = 2^-8 + 2^-31, r = 1. The exact sum lies
// just above the bf16 midpoint 1 + 2^-8 (once: 1 + 2^-7); its fp32 sum is
// the midpoint itself, which rounds to even (1).
TEST(ReferenceVariants, ResidualSumIsFp32ThenTheResidualDtype) {
  const float x[1] = {std::ldexp(1.0f, -8) + std::ldexp(1.0f, -31)};
  ASSERT_EQ(static_cast<double>(x[0]), std::ldexp(1.0, -8) + std::ldexp(1.0, -31));  // exact in fp32
  Buf r(DType::bf16, 1), z(DType::bf16, 1);
  r.set(0, 1.0);
  float y[1];
  FwdArgs a;
  a.M = 1;
  a.N = 1;
  a.x_stride = a.y_stride = a.residual_stride = a.z_stride = 1;
  a.x = x;
  a.residual = r.data();
  a.residual_dtype = DType::bf16;
  norm_forward(a, y, nullptr, nullptr, z.data());
  EXPECT_EQ(z.get(0), 1.0);
  // An fp32 z is the fp32 sum, 1 + 2^-8.
  float r32[1] = {1.0f}, z32[1];
  a.residual = r32;
  a.residual_dtype = DType::f32;
  norm_forward(a, y, nullptr, nullptr, z32);
  EXPECT_EQ(z32[0], 1.0f + std::ldexp(1.0f, -8));
  // bf16 x with an fp32 residual: the fp32 sum is the single rounding.
  Buf xb(DType::bf16, 1);
  xb.set(0, 1.0 + std::ldexp(1.0, -7));
  float rr[1] = {std::ldexp(1.0f, -26)};  // below half an fp32 ulp of the sum: rounds away
  a.x_dtype = DType::bf16;
  a.x = xb.data();
  a.residual = rr;
  norm_forward(a, y, nullptr, nullptr, z32);
  EXPECT_EQ(z32[0], 1.0f + std::ldexp(1.0f, -7));
}

// Invariants of the variants.
TEST(ReferenceVariants, Invariants) {
  std::mt19937_64 rng(23);
  const int64_t M = 4, N = 9;
  const auto x = random_vec(M * N, rng, 1.0, 0.3), dy = random_vec(M * N, rng), w = random_vec(N, rng, 0.3, 1.0);
  // RMSNorm is scale invariant (eps = 0): y(a x) = y(x), dx(a x) = dx(x) / a, and x . dx = 0 per row.
  const double alpha = 4.0;  // a power of two: a x is exact
  std::vector<double> xa(x), y0(M * N), y1(M * N), dx0(M * N), dx1(M * N), dw0(N), dw1(N);
  for (double& v : xa) v *= alpha;
  forward_f64(M, N, x.data(), w.data(), nullptr, 0.0, y0.data(), nullptr, nullptr, Norm::rms);
  forward_f64(M, N, xa.data(), w.data(), nullptr, 0.0, y1.data(), nullptr, nullptr, Norm::rms);
  backward_f64(M, N, dy.data(), x.data(), w.data(), 0.0, dx0.data(), dw0.data(), nullptr, Norm::rms);
  backward_f64(M, N, dy.data(), xa.data(), w.data(), 0.0, dx1.data(), dw1.data(), nullptr, Norm::rms);
  for (int64_t k = 0; k < M * N; ++k) {
    EXPECT_NEAR(y1[k], y0[k], 1e-14) << k;
    EXPECT_NEAR(dx1[k] * alpha, dx0[k], 1e-13) << k;
  }
  for (int64_t j = 0; j < N; ++j) EXPECT_NEAR(dw1[j], dw0[j], 1e-13) << j;
  for (int64_t i = 0; i < M; ++i) {
    double dot = 0;
    for (int64_t j = 0; j < N; ++j) dot += x[i * N + j] * dx0[i * N + j];
    EXPECT_NEAR(dot, 0.0, 1e-13) << "row " << i;
  }
  // LayerNorm's dx sums to zero per row (it is shift invariant); RMSNorm's need not.
  backward_f64(M, N, dy.data(), x.data(), w.data(), 1e-5, dx0.data(), nullptr, nullptr, Norm::layer);
  for (int64_t i = 0; i < M; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < N; ++j) sum += dx0[i * N + j];
    EXPECT_NEAR(sum, 0.0, 1e-13) << "row " << i;
  }
  // Zero-centred gamma with w = 0 is the weight-free norm, for both norms.
  const std::vector<double> zeros(N, 0.0);
  for (Norm norm : {Norm::layer, Norm::rms}) {
    forward_f64(M, N, x.data(), zeros.data(), nullptr, 1e-5, y0.data(), nullptr, nullptr, norm, true);
    forward_f64(M, N, x.data(), nullptr, nullptr, 1e-5, y1.data(), nullptr, nullptr, norm, false);
    EXPECT_EQ(y0, y1);
    backward_f64(M, N, dy.data(), x.data(), zeros.data(), 1e-5, dx0.data(), nullptr, nullptr, norm, true);
    backward_f64(M, N, dy.data(), x.data(), nullptr, 1e-5, dx1.data(), nullptr, nullptr, norm, false);
    EXPECT_EQ(dx0, dx1);
  }
  // Typed: a zero residual leaves z = x and y as without one; a zero dz leaves
  // dx as without one; with the residual in x's dtype, dresidual is dx.
  for (DType d : {DType::f32, DType::f16, DType::bf16}) {
    SCOPED_TRACE(std::string(to_string(d)));
    Buf xt = random_buf(d, M * N, rng, 1.0, 0.3), zero(d, M * N), y_plain(d, M * N), y_res(d, M * N), z(d, M * N);
    for (int64_t k = 0; k < M * N; ++k) zero.set(k, 0.0);
    FwdArgs a;
    a.M = M;
    a.N = N;
    a.x_stride = a.y_stride = a.residual_stride = a.z_stride = N;
    a.x_dtype = a.w_dtype = d;
    a.x = xt.data();
    a.norm = Norm::rms;
    norm_forward(a, y_plain.data(), nullptr, nullptr, nullptr);
    a.residual = zero.data();
    a.residual_dtype = d;
    norm_forward(a, y_res.data(), nullptr, nullptr, z.data());
    EXPECT_EQ(z.bytes, xt.bytes);
    EXPECT_EQ(y_res.bytes, y_plain.bytes);
    Buf dyt = random_buf(d, M * N, rng), dx_plain(d, M * N), dx_res(d, M * N), dres(d, M * N);
    BwdArgs g;
    g.M = M;
    g.N = N;
    g.dy_stride = g.x_stride = g.dx_stride = g.dz_stride = g.dresidual_stride = N;
    g.x_dtype = g.w_dtype = d;
    g.dy = dyt.data();
    g.x = xt.data();
    g.norm = Norm::rms;
    norm_backward(g, dx_plain.data(), nullptr, nullptr, nullptr);
    g.residual = true;
    g.residual_dtype = d;
    g.dz = zero.data();
    norm_backward(g, dx_res.data(), nullptr, nullptr, dres.data());
    EXPECT_EQ(dx_res.bytes, dx_plain.bytes);
    EXPECT_EQ(dres.bytes, dx_res.bytes);
  }
}

// An output dtype narrower than x's: y is rounded once from double, and
// overflows to infinity where the narrow format ends (fp16: 65504).
TEST(ReferenceVariants, NarrowOutputRoundsOnceAndOverflows) {
  const float x[2] = {-1, 1}, w[2] = {70000, 1.5f}, b[2] = {0, 0};
  Buf y(DType::f16, 2);
  FwdArgs a;
  a.M = 1;
  a.N = 2;
  a.x_stride = a.y_stride = 2;
  a.x = x;
  a.weight = w;
  a.bias = b;
  a.eps = 0;
  a.y_dtype = DType::f16;  // LayerNorm of [-1, 1]: xhat = [-1, 1]
  norm_forward(a, y.data(), nullptr, nullptr, nullptr);
  EXPECT_EQ(y.get(0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(y.get(1), 1.5);
}

// z = x + r feeds both the norm and the next layer (through dz): the gradient
// of f = sum(y dy) + sum(z dz) is the same for x and for r, dnorm(z) + dz,
// which is why one kernel writes both dx and dresidual.
TEST(ReferenceVariants, ResidualGradientIsTheSameForXAndR) {
  std::mt19937_64 rng(31);
  const int64_t M = 2, N = 6;
  const double eps = 1e-3;
  const auto x = random_vec(M * N, rng, 1.0, 0.3), r = random_vec(M * N, rng), dy = random_vec(M * N, rng),
             dz = random_vec(M * N, rng), w = random_vec(N, rng, 0.3, 1.0);
  for (Norm norm : {Norm::layer, Norm::rms}) {
    SCOPED_TRACE(std::string(to_string(norm)));
    const auto f = [&](const std::vector<double>& xx, const std::vector<double>& rr) {
      std::vector<double> z(static_cast<std::size_t>(M * N)), y(z.size());
      for (std::size_t k = 0; k < z.size(); ++k) z[k] = xx[k] + rr[k];
      forward_f64(M, N, z.data(), w.data(), nullptr, eps, y.data(), nullptr, nullptr, norm);
      double s = 0;
      for (std::size_t k = 0; k < z.size(); ++k) s += y[k] * dy[k] + z[k] * dz[k];
      return s;
    };
    std::vector<double> z(static_cast<std::size_t>(M * N)), dx(z.size());
    for (std::size_t k = 0; k < z.size(); ++k) z[k] = x[k] + r[k];
    backward_f64(M, N, dy.data(), z.data(), w.data(), eps, dx.data(), nullptr, nullptr, norm);
    for (std::size_t k = 0; k < z.size(); ++k) {
      std::vector<double> e(z.size(), 0.0);
      e[k] = 1;
      const double gx = directional([&](double t) { return f(axpy(x, t, e), r); }, 1e-3);
      const double gr = directional([&](double t) { return f(x, axpy(r, t, e)); }, 1e-3);
      EXPECT_NEAR(gx, dx[k] + dz[k], 1e-8) << k;
      EXPECT_NEAR(gr, dx[k] + dz[k], 1e-8) << k;
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
  g.dz = nullptr;
  g.dresidual_stride = 4;
  EXPECT_THROW(norm_backward(g, y, nullptr, nullptr, z), Error);  // dresidual without residual
  g.residual = true;
  g.dresidual_stride = 3;
  EXPECT_THROW(norm_backward(g, y, nullptr, nullptr, z), Error);  // dresidual_stride < N
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
