// `lntune tune`'s default grid (tuner/grid.hpp, generator/space.hpp): its two
// M buckets, their sizes, and key de-duplication (ctest label "cpu").
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <tuple>

#include "cache/cache.hpp"
#include "generator/space.hpp"
#include "tuner/grid.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;

const std::vector<DType> kDtypes{DType::f16, DType::bf16, DType::f32};
const std::vector<Kernel> kKernels{Kernel::fwd, Kernel::bwd_dx};
constexpr int kH100Sms = 132;

std::int64_t x_bytes(const Target& t) { return t.m * t.n * static_cast<std::int64_t>(dtype_size(t.traits.x_dtype)); }

TEST(Grid, BandwidthRows) {
  EXPECT_EQ(gen::bandwidth_n_grid(), (std::vector<std::int64_t>{256, 1024, 4096, 16384, 65536, 262144}));
  EXPECT_EQ(gen::bandwidth_m(256, DType::bf16), 1048576);
  EXPECT_EQ(gen::bandwidth_m(262144, DType::f32), 512);
  EXPECT_EQ(gen::bandwidth_m(65536, DType::f16), 4096);
  // Not a divisor of 512 MiB: rounded up, as the benchmark does.
  EXPECT_EQ(gen::bandwidth_m(768, DType::bf16), 349526);
  EXPECT_EQ(gen::bandwidth_m(std::int64_t{1} << 31, DType::f32), 1);
  EXPECT_THROW(gen::bandwidth_m(0, DType::f32), lntune::Error);
}

TEST(Grid, BandwidthTargetsAreSaneAndInOrder) {
  const auto t = bandwidth_targets(kDtypes, kKernels);
  ASSERT_EQ(t.size(), kKernels.size() * kDtypes.size() * gen::bandwidth_n_grid().size());
  // Order: kernels, dtypes, N (as make_targets).
  EXPECT_EQ(t.front().traits.kernel, Kernel::fwd);
  EXPECT_EQ(t.front().traits.x_dtype, DType::f16);
  EXPECT_EQ(t.front().n, 256);
  EXPECT_EQ(t.back().traits.kernel, Kernel::bwd_dx);
  EXPECT_EQ(t.back().traits.x_dtype, DType::f32);
  EXPECT_EQ(t.back().n, 262144);
  for (const Target& x : t) {
    // x of 512 MiB, to within one row.
    EXPECT_GE(x_bytes(x), gen::kBandwidthBytes) << x.traits << " N=" << x.n;
    EXPECT_LT(x_bytes(x) - x.n * static_cast<std::int64_t>(dtype_size(x.traits.x_dtype)), gen::kBandwidthBytes);
    EXPECT_EQ(x.traits.norm, Norm::layer);
    EXPECT_TRUE(x.traits.has_weight && x.traits.has_bias);
    EXPECT_EQ(x.traits.w_dtype, x.traits.x_dtype);
  }
  // Options pass through.
  const auto nb = bandwidth_targets({DType::bf16}, {Kernel::fwd}, DType::f32, true, false);
  ASSERT_EQ(nb.size(), 6u);
  EXPECT_EQ(nb[0].traits.w_dtype, DType::f32);
  EXPECT_FALSE(nb[0].traits.has_bias);
  EXPECT_THROW(bandwidth_targets({}, kKernels), lntune::Error);
  EXPECT_THROW(bandwidth_targets(kDtypes, {Kernel::bwd_dwdb}), lntune::Error);
}

TEST(Grid, DefaultGridHasBothBucketsAndNoDuplicateKeys) {
  const auto all = default_grid(kDtypes, kKernels);
  std::vector<Target> dropped;
  const auto grid = unique_keys(all, kH100Sms, &dropped);
  // Training: 38 N x 3 dtypes x 2 kernels of LayerNorm, and RMSNorm with
  // and without a residual for fp16 and bf16; bandwidth: 6 N x 3 x 2 of
  // LayerNorm and 6 N x 2 x 2 of each RMSNorm variant.
  const std::size_t training_ln = gen::default_n_grid().size() * 3 * 2;
  const std::size_t training = training_ln + gen::default_n_grid().size() * 2 * 2 * 2;
  ASSERT_EQ(all.size(), training + 36 + 48);
  // Dropped: fp16/bf16 N = 65536 (M = 4096: the training key itself, in
  // each of the three norms) and fp32 N = 16384 (M = 8192, bucket 4 like
  // M = 4096), fwd and bwd.
  ASSERT_EQ(dropped.size(), 14u);
  for (const Target& d : dropped) {
    EXPECT_EQ(cache::m_bucket(d.m, kH100Sms), 4);
    EXPECT_TRUE((d.n == 65536 && d.traits.x_dtype != DType::f32) || (d.n == 16384 && d.traits.x_dtype == DType::f32))
        << d.traits << " N=" << d.n;
  }
  EXPECT_EQ(grid.size(), all.size() - 14);
  // The bandwidth bucket has every variant the training bucket has.
  std::set<std::tuple<Norm, bool, int>> variants_by_bucket;
  for (const Target& t : grid)
    variants_by_bucket.emplace(t.traits.norm, t.traits.residual.has_value(),
                               cache::m_bucket(t.m, kH100Sms) == 4 ? 4 : 5);
  EXPECT_EQ(variants_by_bucket.size(), 6u);  // {LayerNorm, RMSNorm, add + RMSNorm} x {training, bandwidth}

  std::set<std::tuple<std::string, std::int64_t, int>> keys;
  std::set<int> buckets;
  std::size_t i = 0;
  for (const Target& t : grid) {
    std::ostringstream tr;
    tr << t.traits.canonical();
    const int b = cache::m_bucket(t.m, kH100Sms);
    EXPECT_TRUE(keys.emplace(tr.str(), t.n, b).second) << "duplicate key " << tr.str() << " N=" << t.n;
    buckets.insert(b);
    // Sizes: training targets first (M = 4096), bandwidth last (512 MiB).
    if (i < training) {
      EXPECT_EQ(t.m, gen::kTrainingM);
    } else {
      EXPECT_GE(x_bytes(t), gen::kBandwidthBytes);
      EXPECT_NE(b, 4) << "bandwidth N=" << t.n << " " << t.traits;
    }
    EXPECT_LE(x_bytes(t), std::int64_t{1} << 31) << "N=" << t.n << " M=" << t.m;  // at most 2 GiB of x
    ++i;
  }
  // The training bucket (4) and the bandwidth regime's (5 for N <= 16384,
  // 3 for 16-bit N = 262144 and fp32 N = 65536, 2 for fp32 N = 262144).
  EXPECT_EQ(buckets, (std::set<int>{2, 3, 4, 5}));
  std::size_t large = 0;
  for (const Target& t : grid) large += cache::m_bucket(t.m, kH100Sms) == 5;
  // N = 256..16384: LayerNorm less fp32 16384, and the two 16-bit RMSNorm variants.
  EXPECT_EQ(large, 4u * 3 * 2 - 2 + 4u * 2 * 2 * 2);
}

TEST(Grid, UniqueKeysKeepsTheFirstAndTheOrder) {
  const Traits bf{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  Traits rms = bf;
  rms.norm = Norm::rms;
  Traits no_w_dtype = bf;  // no weight, no bias: w_dtype does not matter
  no_w_dtype.has_weight = no_w_dtype.has_bias = false;
  Traits no_w_dtype2 = no_w_dtype;
  no_w_dtype2.w_dtype = DType::f32;
  const std::vector<Target> in{{bf, 4096, 4096},       {bf, 4096, 6000},         {bf, 4096, 9000},
                               {rms, 4096, 4096},      {bf, 2048, 4096},         {no_w_dtype, 1024, 4096},
                               {no_w_dtype2, 1024, 5000}};
  std::vector<Target> dropped;
  const auto out = unique_keys(in, kH100Sms, &dropped);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].m, 4096);  // the first of bucket 4 stays
  EXPECT_EQ(out[1].m, 9000);  // bucket 5
  EXPECT_EQ(out[2].traits.norm, Norm::rms);
  EXPECT_EQ(out[3].n, 2048);
  EXPECT_EQ(out[4].n, 1024);
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_EQ(dropped[0].m, 6000);
  EXPECT_EQ(dropped[1].m, 5000);
  // On a GPU with fewer SMs the buckets differ: 6000 rows is bucket 5 on
  // 66 SMs (64 * 66 = 4224), so only 9000 repeats it.
  EXPECT_EQ(unique_keys(in, 66).size(), 6u);
  EXPECT_THROW(unique_keys(in, 0), lntune::Error);
  EXPECT_TRUE(unique_keys({}, kH100Sms).empty());
}

}  // namespace
