// Several GPUs, the pure parts (ctest label "cpu"): `--devices` parsing, the
// deterministic partition of keys over GPU workers, its cost estimate, and
// the grouping of a mixed host's GPUs by model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "generator/space.hpp"
#include "lntune/lntune.hpp"
#include "tuner/tuner.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;

std::string error_of(const std::string& spec, int count) {
  try {
    parse_devices(spec, count);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Devices, AllOrAList) {
  EXPECT_EQ(parse_devices("all", 1), (std::vector<int>{0}));
  EXPECT_EQ(parse_devices("all", 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_devices("0", 2), (std::vector<int>{0}));
  EXPECT_EQ(parse_devices("1,0", 2), (std::vector<int>{1, 0}));
  EXPECT_EQ(parse_devices("0,2,5", 8), (std::vector<int>{0, 2, 5}));
}

TEST(Devices, BadListsNameTheProblem) {
  EXPECT_EQ(error_of("", 2), "lntune: --devices: empty list (give 'all' or ordinals such as 0,1)");
  EXPECT_EQ(error_of("2", 2), "lntune: --devices: device 2 does not exist (this machine has 2 CUDA devices)");
  EXPECT_EQ(error_of("0,1", 1), "lntune: --devices: device 1 does not exist (this machine has 1 CUDA device)");
  EXPECT_EQ(error_of("0,0", 2), "lntune: --devices: device 0 is listed twice");
  EXPECT_EQ(error_of("0,,1", 2), "lntune: --devices: '' is not a device ordinal (give 'all' or ordinals such as 0,1)");
  EXPECT_EQ(error_of("0,", 2), "lntune: --devices: '' is not a device ordinal (give 'all' or ordinals such as 0,1)");
  EXPECT_EQ(error_of("-1", 2), "lntune: --devices: '-1' is not a device ordinal (give 'all' or ordinals such as 0,1)");
  EXPECT_EQ(error_of("gpu0", 2), "lntune: --devices: 'gpu0' is not a device ordinal (give 'all' or ordinals such as 0,1)");
  EXPECT_EQ(error_of(" 1", 2), "lntune: --devices: ' 1' is not a device ordinal (give 'all' or ordinals such as 0,1)");
  EXPECT_EQ(error_of("99999999999", 2),
            "lntune: --devices: '99999999999' is not a device ordinal (give 'all' or ordinals such as 0,1)");
  EXPECT_EQ(error_of("all", 0), "lntune: --devices: this machine has no CUDA device");
  EXPECT_EQ(error_of("ALL", 2), "lntune: --devices: 'ALL' is not a device ordinal (give 'all' or ordinals such as 0,1)");
}

// Every index exactly once, each worker's in ascending order.
void expect_partition(const std::vector<std::vector<std::size_t>>& p, std::size_t items) {
  std::vector<std::size_t> all;
  for (const auto& w : p) {
    EXPECT_TRUE(std::is_sorted(w.begin(), w.end()));
    all.insert(all.end(), w.begin(), w.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<std::size_t> want(items);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(all, want);
}

TEST(Partition, EqualCostsGoRoundRobin) {
  const auto p = partition_keys(std::vector<double>(7, 1.0), 3);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0], (std::vector<std::size_t>{0, 3, 6}));
  EXPECT_EQ(p[1], (std::vector<std::size_t>{1, 4}));
  EXPECT_EQ(p[2], (std::vector<std::size_t>{2, 5}));
  expect_partition(p, 7);
}

TEST(Partition, LeastLoadedFirstTiesToTheLowestWorker) {
  // 10 -> w0; 1 -> w1; 1 -> w1 (1 < 10); 1 -> w1; 8 -> w1 (3 < 10) ...
  const auto p = partition_keys({10, 1, 1, 1, 8, 2}, 2);
  EXPECT_EQ(p[0], (std::vector<std::size_t>{0, 5}));
  EXPECT_EQ(p[1], (std::vector<std::size_t>{1, 2, 3, 4}));
  // Zero-cost items (cached keys) do not move the balance.
  const auto z = partition_keys({0, 0, 5, 0}, 2);
  EXPECT_EQ(z[0], (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(z[1], (std::vector<std::size_t>{3}));
}

TEST(Partition, DeterministicAndBalancedOnTheDefaultGrid) {
  const auto targets = make_targets(gen::default_n_grid(), {4096}, {DType::f16, DType::bf16, DType::f32},
                                    {Kernel::fwd, Kernel::bwd_dx});
  std::vector<double> costs;
  for (const auto& t : targets) costs.push_back(target_cost(t));
  for (std::size_t workers : {1u, 2u, 3u, 8u}) {
    const auto p = partition_keys(costs, workers);
    EXPECT_EQ(p, partition_keys(costs, workers));  // a pure function
    ASSERT_EQ(p.size(), workers);
    expect_partition(p, costs.size());
    std::vector<double> load;
    for (const auto& w : p) {
      double s = 0;
      for (std::size_t i : w) s += costs[i];
      load.push_back(s);
    }
    // Greedy least-loaded: no worker exceeds another by more than the
    // largest single cost.
    const double max_cost = *std::max_element(costs.begin(), costs.end());
    EXPECT_LE(*std::max_element(load.begin(), load.end()) - *std::min_element(load.begin(), load.end()), max_cost + 1e-9)
        << workers << " workers";
  }
  EXPECT_EQ(partition_keys(costs, 1).front().size(), costs.size());
}

TEST(Partition, BadInputs) {
  EXPECT_THROW(partition_keys({1.0}, 0), Error);
  EXPECT_THROW(partition_keys({1.0, -1.0}, 2), Error);
  EXPECT_THROW(partition_keys({std::nan("")}, 2), Error);
  EXPECT_TRUE(partition_keys({}, 2)[0].empty());
}

TEST(Partition, CostGrowsWithTheWorkload) {
  auto cost = [](Kernel k, DType d, std::int64_t n, std::int64_t m) {
    Target t;
    t.traits = Traits{k, d, d, true, true};
    t.n = n;
    t.m = m;
    return target_cost(t);
  };
  EXPECT_GT(cost(Kernel::fwd, DType::bf16, 65536, 4096), 10 * cost(Kernel::fwd, DType::bf16, 1024, 4096));
  EXPECT_GT(cost(Kernel::bwd_dx, DType::bf16, 4096, 4096), cost(Kernel::fwd, DType::bf16, 4096, 4096));
  EXPECT_GT(cost(Kernel::fwd, DType::f32, 4096, 4096), cost(Kernel::fwd, DType::bf16, 4096, 4096));
  EXPECT_GE(cost(Kernel::fwd, DType::bf16, 1, 1), 1.0);  // the fixed part
}

TEST(Models, MixedHostsGroupByModel) {
  const cache::GpuId h100{"NVIDIA H100 80GB HBM3", 9, 0, 132};
  const cache::GpuId h100_pcie{"NVIDIA H100 PCIe", 9, 0, 114};
  const cache::GpuId a100{"NVIDIA A100-SXM4-80GB", 8, 0, 108};
  EXPECT_EQ(group_by_model({h100, h100}), (std::vector<std::vector<std::size_t>>{{0, 1}}));
  EXPECT_EQ(group_by_model({a100, h100, a100, h100_pcie, h100}),
            (std::vector<std::vector<std::size_t>>{{0, 2}, {1, 4}, {3}}));
  EXPECT_TRUE(group_by_model({}).empty());
}

// ------------------------------------------------------------ related keys
Traits ln(Kernel k, DType d) { return Traits{k, d, d, true, true}; }
Traits variant(Traits t, Norm norm, std::optional<DType> residual) {
  t.norm = norm;
  if (norm == Norm::rms) t.has_bias = false;
  t.residual = residual;
  return t.canonical();
}

TEST(Priors, EachVariantStepsToAMoreCommonKey) {
  const Traits ln_bf16 = ln(Kernel::fwd, DType::bf16), ln_fp16 = ln(Kernel::fwd, DType::f16);
  const Traits rms_bf16 = variant(ln_bf16, Norm::rms, std::nullopt);
  const Traits rms_res_bf16 = variant(ln_bf16, Norm::rms, DType::bf16);
  const Traits rms_fp16 = variant(ln_fp16, Norm::rms, std::nullopt);
  const Traits rms_res_fp16 = variant(ln_fp16, Norm::rms, DType::f16);
  // residual -> none; RMSNorm -> LayerNorm with a bias; fp16 -> bf16.
  EXPECT_EQ(prior_traits(rms_res_fp16), rms_fp16);
  EXPECT_EQ(prior_traits(rms_res_bf16), rms_bf16);
  EXPECT_EQ(prior_traits(rms_fp16), ln_fp16);
  EXPECT_EQ(prior_traits(rms_bf16), ln_bf16);
  EXPECT_EQ(prior_traits(ln_fp16), ln_bf16);
  EXPECT_EQ(prior_traits(ln(Kernel::bwd_dx, DType::f16)), ln(Kernel::bwd_dx, DType::bf16));
  // The roots: bf16 and fp32 LayerNorm; bwd_dwdb never has one.
  EXPECT_FALSE(prior_traits(ln_bf16));
  EXPECT_FALSE(prior_traits(ln(Kernel::fwd, DType::f32)));
  EXPECT_FALSE(prior_traits(ln(Kernel::bwd_dwdb, DType::f16)));
  EXPECT_EQ(prior_depth(ln_bf16), 0);
  EXPECT_EQ(prior_depth(ln_fp16), 1);
  EXPECT_EQ(prior_depth(rms_bf16), 1);
  EXPECT_EQ(prior_depth(rms_fp16), 2);
  EXPECT_EQ(prior_depth(rms_res_bf16), 2);
  EXPECT_EQ(prior_depth(rms_res_fp16), 3);
  // fp16 rows with fp32 weights keep fp32 weights; fp16 y follows x.
  Traits mixed{Kernel::fwd, DType::f16, DType::f32, true, true};
  mixed.y_dtype = DType::f32;
  const auto pm = prior_traits(mixed);
  ASSERT_TRUE(pm);
  EXPECT_EQ(pm->x_dtype, DType::bf16);
  EXPECT_EQ(pm->w_dtype, DType::f32);
  EXPECT_EQ(pm->y_dtype, DType::f32);
  // fp32 rows with an fp32 residual: the residual goes, then nothing.
  EXPECT_EQ(prior_traits(variant(ln(Kernel::bwd_dx, DType::f32), Norm::layer, DType::f32)),
            ln(Kernel::bwd_dx, DType::f32));
}

TEST(Priors, FamiliesStayOnOneWorkerAndRootsComeFirst) {
  // The default grid's shape at two N: LayerNorm in three dtypes, then
  // RMSNorm with and without a residual for the 16-bit ones.
  std::vector<Target> targets;
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx})
    for (DType d : {DType::f16, DType::bf16, DType::f32})
      for (std::int64_t n : {1024, 4096}) targets.push_back(Target{ln(k, d), n, 4096});
  const std::size_t plain = targets.size();
  for (std::optional<DType> res : {std::optional<DType>{}, std::optional<DType>{DType::f16}})
    for (std::size_t i = 0; i < plain; ++i) {
      const Target& t = targets[i];
      if (t.traits.x_dtype == DType::f32) continue;
      Target v = t;
      v.traits = variant(t.traits, Norm::rms, res ? std::optional<DType>(t.traits.x_dtype) : std::nullopt);
      targets.push_back(v);
    }
  const std::vector<double> costs(targets.size(), 1.0);
  for (std::size_t workers : {1u, 2u, 3u}) {
    const auto shares = order_targets(targets, costs, workers);
    ASSERT_EQ(shares.size(), workers);
    std::vector<int> seen(targets.size(), 0);
    for (const auto& share : shares) {
      for (std::size_t k = 0; k < share.size(); ++k) {
        const std::size_t i = share[k];
        ++seen[i];
        // Its related key, when in the run, is earlier on the same worker.
        if (const auto p = prior_traits(targets[i].traits)) {
          std::size_t found = share.size();
          for (std::size_t j = 0; j < share.size(); ++j) {
            const Target& o = targets[share[j]];
            if (o.traits == *p && o.n == targets[i].n && o.m == targets[i].m) found = j;
          }
          EXPECT_LT(found, k) << "target " << i << " (workers " << workers << ")";
        }
        if (k > 0) {
          EXPECT_LE(prior_depth(targets[share[k - 1]].traits), prior_depth(targets[i].traits));
        }
      }
    }
    for (std::size_t i = 0; i < targets.size(); ++i) EXPECT_EQ(seen[i], 1) << "target " << i;
    EXPECT_EQ(order_targets(targets, costs, workers), shares);  // deterministic
  }
  // One worker: the roots in the given order, then depth 1, 2, 3.
  const auto one = order_targets(targets, costs, 1)[0];
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < targets.size(); ++i)
    if (prior_depth(targets[i].traits) == 0) roots.push_back(i);
  EXPECT_EQ(std::vector<std::size_t>(one.begin(), one.begin() + static_cast<std::ptrdiff_t>(roots.size())), roots);
  EXPECT_THROW(order_targets(targets, std::vector<double>(2, 1.0), 1), Error);
  EXPECT_THROW(order_targets(targets, costs, 0), Error);
}

}  // namespace
