// The host half of the GPU reference's cross-check (tuner/reference_oracle.hpp),
// no GPU: the dW/dB partition, the sampled rows, ulp distances, the
// partials' summation, and the oracle itself on a "GPU" sample made by the
// CPU (which must pass) and on corrupted copies of it (which must fail,
// naming the quantity and the place).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tuner/host_dtype.hpp"
#include "tuner/random_fill.hpp"
#include "tuner/reference.hpp"
#include "tuner/reference_oracle.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;
using Bytes = std::vector<unsigned char>;

TEST(ReferenceOracle, PartitionDependsOnMAndNOnly) {
  auto expect = [](std::int64_t m, std::int64_t n, std::int64_t chunks, std::int64_t rows) {
    const DwdbPartition p = dwdb_partition(m, n);
    EXPECT_EQ(p.chunks, chunks) << "M=" << m << " N=" << n;
    EXPECT_EQ(p.rows_per_chunk, rows) << "M=" << m << " N=" << n;
  };
  expect(37, 1, 1, 37);            // fewer rows than one chunk wants
  expect(2100, 1000, 3, 1049);     // ceil(2^20 / 1000) rows a chunk, the last one short
  expect(4096, 8192, 32, 128);
  expect(1024, 262144, 16, 64);    // at most 2^22 / N chunks
  expect(1 << 20, 256, 256, 4096);
  expect(5, std::int64_t{1} << 23, 1, 5);  // N beyond 2^22: one chunk
  for (std::int64_t m : {1, 2, 37, 1000, 4096, 65537})
    for (std::int64_t n : {1, 7, 1000, 4099, 65536, 262144}) {
      const DwdbPartition p = dwdb_partition(m, n);
      EXPECT_GE(p.chunks * p.rows_per_chunk, m);
      EXPECT_LT((p.chunks - 1) * p.rows_per_chunk, m) << "an empty chunk";
      EXPECT_LE(p.chunks * n, std::max<std::int64_t>(n, std::int64_t{1} << 22));
      EXPECT_EQ(p.row_end(p.chunks - 1, m), m);
    }
  EXPECT_THROW(dwdb_partition(0, 5), Error);
  EXPECT_THROW(dwdb_partition(5, 0), Error);
}

TEST(ReferenceOracle, SampledRowsAreTheEndsAndAFixedStride) {
  EXPECT_EQ(sampled_rows(1), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(sampled_rows(2), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(sampled_rows(8), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(sampled_rows(37), (std::vector<std::int64_t>{0, 5, 10, 15, 20, 25, 30, 36}));
  EXPECT_EQ(sampled_rows(4096), (std::vector<std::int64_t>{0, 585, 1170, 1755, 2340, 2925, 3510, 4095}));
  for (std::int64_t m = 1; m < 300; ++m) {
    const auto r = sampled_rows(m);
    ASSERT_FALSE(r.empty());
    EXPECT_EQ(r.front(), 0);
    EXPECT_EQ(r.back(), m - 1);
    EXPECT_LE(r.size(), 8u);
    for (std::size_t i = 1; i < r.size(); ++i) EXPECT_LT(r[i - 1], r[i]) << "M=" << m;
  }
  EXPECT_THROW(sampled_rows(0), Error);
}

TEST(ReferenceOracle, UlpDistance) {
  auto f = [](float a, float b) { return ulp_distance(DType::f32, &a, &b); };
  const float one = 1.0f, next = std::nextafter(1.0f, 2.0f), sub = std::numeric_limits<float>::denorm_min();
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(f(one, one), 0u);
  EXPECT_EQ(f(one, next), 1u);
  EXPECT_EQ(f(next, one), 1u);
  EXPECT_EQ(f(std::nextafter(next, 2.0f), one), 2u);
  EXPECT_EQ(f(0.0f, -0.0f), 0u);
  EXPECT_EQ(f(sub, -sub), 2u);  // through zero
  EXPECT_EQ(f(nan, -nan), 0u);
  EXPECT_EQ(f(nan, one), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(f(inf, std::numeric_limits<float>::max()), 1u);
  auto h = [](DType d, std::uint16_t a, std::uint16_t b) { return ulp_distance(d, &a, &b); };
  EXPECT_EQ(h(DType::f16, 0x3c00, 0x3c01), 1u);
  EXPECT_EQ(h(DType::f16, 0x8001, 0x0001), 2u);
  EXPECT_EQ(h(DType::f16, 0x7e00, 0x7c01), 0u);  // two NaNs
  EXPECT_EQ(h(DType::f16, 0x7c00, 0x7bff), 1u);  // inf, max
  EXPECT_EQ(h(DType::bf16, 0x3f80, 0x3f82), 2u);
  EXPECT_EQ(h(DType::bf16, 0x7fc0, 0x3f80), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(h(DType::bf16, 0x7f80, 0x7f7f), 1u);
  EXPECT_EQ(h(DType::bf16, 0x7f81, 0x7f80), std::numeric_limits<std::uint64_t>::max());  // NaN, inf

  const std::uint16_t got[] = {0x3f80, 0x3f81, 0x3f83, 0x3f80, 0x7fc0};
  const std::uint16_t want[] = {0x3f80, 0x3f80, 0x3f80, 0x3f81, 0x3f80};
  const UlpCount c = count_ulps(DType::bf16, got, want, 5, 1);
  EXPECT_EQ(c.compared, 5);
  EXPECT_EQ(c.within, 2);
  EXPECT_EQ(c.beyond, 2);
  EXPECT_EQ(c.first_beyond, 2);
  EXPECT_EQ(c.worst, std::numeric_limits<std::uint64_t>::max());

  // A value formed by cancellation: many ulps apart, yet within the floor
  // of the set's largest value (2^-36 of 1.0 here); a NaN never is.
  const float fg[] = {1.0f, 2.3138474e-13f, 0.5f, std::numeric_limits<float>::quiet_NaN()};
  const float fw[] = {1.0f, 2.3138503e-13f, 0.25f, 1.0f};
  const double floor = cancellation_floor(DType::f32, fw, 4);
  EXPECT_EQ(floor, std::ldexp(1.0, -36));
  const UlpCount fc = count_ulps(DType::f32, fg, fw, 4, 1, floor);
  EXPECT_EQ(fc.within, 1);
  EXPECT_EQ(fc.beyond, 2);
  EXPECT_EQ(fc.first_beyond, 2);
  EXPECT_EQ(count_ulps(DType::f32, fg, fw, 4, 1).beyond, 3);  // no floor: the small value fails
}

// The partials are summed in chunk order in double and rounded once.
TEST(ReferenceOracle, PartialsAreSummedInChunkOrderAndRoundedOnce) {
  // Column 0: 1 + (2^-8 + 2^-20) is above bf16's midpoint 1 + 2^-8: rounds
  // up (rounding the partials first would give the tie, then 1.0).
  // Column 1: 1e16 + 1 - 1e16 in that order is 0 (the 1 is lost), not 1.
  const double partials[] = {1.0, 1e16, 0x1p-8 + 0x1p-20, 1.0, 0.0, -1e16};  // 3 chunks x 2 columns
  const Bytes bf = sum_partials(partials, 3, 2, DType::bf16);
  std::uint16_t v[2];
  std::memcpy(v, bf.data(), 4);
  EXPECT_EQ(v[0], 0x3f81);
  EXPECT_EQ(v[1], 0x0000);
  const Bytes f = sum_partials(partials, 3, 2, DType::f32);
  float g[2];
  std::memcpy(g, f.data(), 8);
  EXPECT_EQ(g[0], static_cast<float>(1.0 + (0x1p-8 + 0x1p-20)));
  EXPECT_EQ(g[1], 0.0f);
  EXPECT_THROW(sum_partials(partials, 0, 2, DType::f32), Error);
  EXPECT_GT(chunk_tolerance(1), 1e-12);
  EXPECT_LT(chunk_tolerance(1), 2e-12);
  EXPECT_GT(chunk_tolerance(1 << 20), chunk_tolerance(1));
}

// ---- the oracle on a sample that the CPU makes as the GPU would ---------------------

Bytes draw(DType d, const InputDraw& in, std::int64_t count, std::uint64_t seed) {
  Bytes b(static_cast<std::size_t>(count) * dtype_size(d));
  rnd::fill(b.data(), d, count, in.offset, in.scale, seed + in.seed_offset);
  return b;
}

Bytes rows_of(const Bytes& all, DType d, const std::vector<std::int64_t>& rows, std::int64_t n) {
  const std::size_t rb = static_cast<std::size_t>(n) * dtype_size(d);
  Bytes out(rows.size() * rb);
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::memcpy(out.data() + i * rb, all.data() + static_cast<std::size_t>(rows[i]) * rb, rb);
  return out;
}

// A GPU sample as the GPU reference would produce it, from the CPU
// reference over every row (and dW/dB partials in the partition's order).
GpuReferenceSample simulate(const Traits& traits, std::int64_t m, std::int64_t n, std::uint64_t seed) {
  const Traits t = traits.canonical();
  GpuReferenceSample g;
  g.traits = t;
  g.m = m;
  g.n = n;
  g.seed = seed;
  g.rows = sampled_rows(m);
  const DType xd = t.x_dtype, wd = t.w_dtype, yd = t.out_dtype(), rd = t.input_dtype();
  const bool residual = t.residual.has_value(), backward = t.kernel != Kernel::fwd;
  const Bytes x = draw(xd, inputs::x, m * n, seed);
  Bytes w, b, r, z;
  if (t.has_weight) w = draw(wd, inputs::weight(t.zero_centered), n, seed);
  if (t.has_bias && !backward) b = draw(wd, inputs::bias, n, seed);
  if (residual) {
    r = draw(rd, inputs::residual, m * n, seed);
    z.resize(static_cast<std::size_t>(m * n) * dtype_size(rd));
  }
  ref::FwdArgs fa;
  fa.M = m;
  fa.N = n;
  fa.x_stride = fa.y_stride = fa.residual_stride = fa.z_stride = n;
  fa.x_dtype = xd;
  fa.w_dtype = wd;
  fa.x = x.data();
  fa.weight = t.has_weight ? w.data() : nullptr;
  fa.bias = b.empty() ? nullptr : b.data();
  fa.eps = static_cast<double>(inputs::kEps);
  fa.norm = t.norm;
  fa.zero_centered = t.zero_centered;
  fa.residual = residual ? r.data() : nullptr;
  fa.residual_dtype = rd;
  fa.y_dtype = yd;
  g.mean.assign(static_cast<std::size_t>(m), 0.f);
  g.rstd.assign(static_cast<std::size_t>(m), 0.f);
  const bool rms = t.norm == Norm::rms;
  if (!backward) {
    Bytes y(static_cast<std::size_t>(m * n) * dtype_size(yd));
    ref::norm_forward(fa, y.data(), rms ? nullptr : g.mean.data(), g.rstd.data(), residual ? z.data() : nullptr);
    g.main = rows_of(y, yd, g.rows, n);
    if (residual) g.z = rows_of(z, rd, g.rows, n);
    return g;
  }
  ref::norm_forward(fa, nullptr, rms ? nullptr : g.mean.data(), g.rstd.data(), residual ? z.data() : nullptr);
  if (residual) g.z = rows_of(z, rd, g.rows, n);
  const Bytes dy = draw(yd, inputs::dy, m * n, seed);
  Bytes dz;
  if (residual) dz = draw(rd, inputs::dz, m * n, seed);
  const Bytes& in = residual ? z : x;
  ref::BwdArgs ba;
  ba.M = m;
  ba.N = n;
  ba.dy_stride = ba.x_stride = ba.dx_stride = ba.dz_stride = n;
  ba.x_dtype = xd;
  ba.w_dtype = wd;
  ba.dy = dy.data();
  ba.x = in.data();
  ba.weight = t.has_weight ? w.data() : nullptr;
  ba.eps = static_cast<double>(inputs::kEps);
  ba.norm = t.norm;
  ba.zero_centered = t.zero_centered;
  ba.residual = residual;
  ba.residual_dtype = rd;
  ba.dz = residual ? dz.data() : nullptr;
  ba.y_dtype = yd;
  Bytes dx(static_cast<std::size_t>(m * n) * dtype_size(xd));
  ref::layer_norm_backward(ba, dx.data(), nullptr, nullptr);
  g.main = rows_of(dx, xd, g.rows, n);
  if (!t.has_weight && !t.has_bias) return g;
  g.partition = dwdb_partition(m, n);
  const std::int64_t chunks = g.partition.chunks;
  std::vector<double> pw(static_cast<std::size_t>(chunks * n), 0.0), pb(pw);
  std::vector<double> row(static_cast<std::size_t>(n)), scratch(row);
  for (std::int64_t c = 0; c < chunks; ++c)
    for (std::int64_t i = g.partition.row_begin(c); i < g.partition.row_end(c, m); ++i) {
      for (std::int64_t j = 0; j < n; ++j) row[static_cast<std::size_t>(j)] = ref::load_element(rd, in.data(), i * n + j);
      double mean = 0, rstd = 0;
      ref::forward_f64(1, n, row.data(), nullptr, nullptr, static_cast<double>(inputs::kEps), scratch.data(), &mean,
                       &rstd, t.norm);
      for (std::int64_t j = 0; j < n; ++j) {
        const double d = ref::load_element(yd, dy.data(), i * n + j);
        pw[static_cast<std::size_t>(c * n + j)] += d * ((row[static_cast<std::size_t>(j)] - mean) * rstd);
        pb[static_cast<std::size_t>(c * n + j)] += d;
      }
    }
  if (t.has_weight) {
    g.dw_partials = pw;
    g.dw = sum_partials(pw.data(), chunks, n, wd);
  }
  if (t.has_bias) {
    g.db_partials = pb;
    g.db = sum_partials(pb.data(), chunks, n, wd);
  }
  return g;
}

// Adds `ulps` to the element's bits (a positive finite value stays one).
void bump(Bytes& b, DType d, std::size_t i, int ulps) {
  if (d == DType::f32) {
    std::uint32_t u;
    std::memcpy(&u, b.data() + 4 * i, 4);
    u += static_cast<std::uint32_t>(ulps);
    std::memcpy(b.data() + 4 * i, &u, 4);
  } else {
    std::uint16_t u;
    std::memcpy(&u, b.data() + 2 * i, 2);
    u = static_cast<std::uint16_t>(u + ulps);
    std::memcpy(b.data() + 2 * i, &u, 2);
  }
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(ReferenceOracle, AcceptsTheCpusOwnReferenceForEveryVariant) {
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx})
    for (Norm norm : {Norm::layer, Norm::rms})
      for (int res = 0; res < 3; ++res)
        for (DType d : {DType::f32, DType::f16, DType::bf16}) {
          if (res == 2 && d != DType::bf16) continue;  // the fp32 residual: with bf16 rows
          Traits t(k, d, d, true, norm == Norm::layer);
          t.norm = norm;
          if (res == 1) t.residual = d;
          if (res == 2) t.residual = DType::f32;
          t.zero_centered = res == 1;
          const GpuReferenceSample g = simulate(t, 37, 7, 5);
          const OracleReport r = check_gpu_reference(g);
          EXPECT_TRUE(r.ok()) << t << ": " << r.error;
          EXPECT_EQ(r.compared, static_cast<std::int64_t>(g.rows.size()) * 7 * (res ? 2 : 1)) << t;
          EXPECT_EQ(r.one_ulp, 0) << t;
          EXPECT_EQ(r.dwdb_chunks_checked, k == Kernel::bwd_dx ? 1 : 0) << t;
        }
}

TEST(ReferenceOracle, FailsAForwardThatDisagrees) {
  Traits t(Kernel::fwd, DType::bf16, DType::bf16, true, true);
  t.residual = DType::f32;
  const GpuReferenceSample good = simulate(t, 37, 1000, 9);
  ASSERT_TRUE(check_gpu_reference(good).ok());
  {
    GpuReferenceSample g = good;
    bump(g.main, DType::bf16, 3 * 1000 + 17, 1);  // one ulp: counted, allowed
    const OracleReport r = check_gpu_reference(g);
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.one_ulp, 1);
  }
  {
    GpuReferenceSample g = good;
    bump(g.main, DType::bf16, 3 * 1000 + 17, 2);  // sampled row 3 is row 15
    const OracleReport r = check_gpu_reference(g);
    EXPECT_TRUE(has(r.error, "y [15, 17]")) << r.error;
    EXPECT_TRUE(has(r.error, "2 ulps")) << r.error;
    EXPECT_TRUE(has(r.error, "M=37 N=1000")) << r.error;
  }
  {
    GpuReferenceSample g = good;
    bump(g.z, DType::f32, 7 * 1000 + 999, 1);  // z must be exact; the last row
    const OracleReport r = check_gpu_reference(g);
    EXPECT_TRUE(has(r.error, "z [36, 999]")) << r.error;
  }
  {
    GpuReferenceSample g = good;
    g.mean[36] = std::nextafter(std::nextafter(g.mean[36], 1e9f), 1e9f);
    const OracleReport r = check_gpu_reference(g);
    EXPECT_TRUE(has(r.error, "mean [36]")) << r.error;
  }
  {
    GpuReferenceSample g = good;
    g.rstd[0] *= 1.001f;
    const OracleReport r = check_gpu_reference(g);
    EXPECT_TRUE(has(r.error, "rstd [0]")) << r.error;
  }
  {
    GpuReferenceSample g = good;
    g.seed = 10;  // other inputs altogether
    const OracleReport r = check_gpu_reference(g);
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(has(r.error, "more")) << r.error;  // many disagreements, the first few described
  }
}

TEST(ReferenceOracle, FailsABackwardThatDisagrees) {
  Traits t(Kernel::bwd_dx, DType::f16, DType::f32, true, true);
  const std::int64_t m = 2100, n = 1000;  // three chunks: 1049, 1049 and 2 rows
  const GpuReferenceSample good = simulate(t, m, n, 3);
  ASSERT_EQ(good.partition.chunks, 3);
  const OracleReport ok = check_gpu_reference(good);
  ASSERT_TRUE(ok.ok()) << ok.error;
  EXPECT_EQ(ok.dwdb_chunks_checked, 2);
  {
    GpuReferenceSample g = good;
    bump(g.main, DType::f16, 7 * n, 3);
    EXPECT_TRUE(has(check_gpu_reference(g).error, "dx [2099, 0]")) << check_gpu_reference(g).error;
  }
  {
    // A first-chunk partial off by far more than the tolerance, the sum made
    // to agree: (a) catches it.
    GpuReferenceSample g = good;
    g.dw_partials[5] += 1e-6 * (1.0 + std::fabs(g.dw_partials[5]));
    g.dw = sum_partials(g.dw_partials.data(), 3, n, DType::f32);
    const std::string e = check_gpu_reference(g).error;
    EXPECT_TRUE(has(e, "dweight partials of chunk 0 (rows 0..1048) column 5")) << e;
  }
  {
    GpuReferenceSample g = good;
    g.db_partials[2 * n + 999] += 1.0;  // the last chunk
    g.db = sum_partials(g.db_partials.data(), 3, n, DType::f32);
    EXPECT_TRUE(has(check_gpu_reference(g).error, "dbias partials of chunk 2 (rows 2098..2099) column 999"))
        << check_gpu_reference(g).error;
  }
  {
    // The middle chunk is not recomputed, but its partials must add up to
    // the GPU's dW: a GPU sum that disagrees with them is caught by (b).
    GpuReferenceSample g = good;
    g.dw_partials[n + 10] += 0.5;
    const std::string e = check_gpu_reference(g).error;
    EXPECT_TRUE(has(e, "dweight [10]")) << e;
    EXPECT_TRUE(has(e, "the host's sum of the GPU's partials")) << e;
  }
  {
    GpuReferenceSample g = good;
    bump(g.db, DType::f32, 0, 1);  // even one ulp: the sums must be bit for bit
    EXPECT_TRUE(has(check_gpu_reference(g).error, "dbias [0]")) << check_gpu_reference(g).error;
  }
  {
    GpuReferenceSample g = good;
    g.partition.rows_per_chunk = 1000;
    EXPECT_TRUE(has(check_gpu_reference(g).error, "partition")) << check_gpu_reference(g).error;
  }
  {
    GpuReferenceSample g = good;
    g.rstd[2099] = std::nextafter(std::nextafter(g.rstd[2099], 0.f), 0.f);
    EXPECT_TRUE(has(check_gpu_reference(g).error, "rstd [2099]")) << check_gpu_reference(g).error;
  }
}

}  // namespace
