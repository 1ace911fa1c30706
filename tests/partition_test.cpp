// Several GPUs, the pure parts (ctest label "cpu"): `--devices` parsing, the
// deterministic partition of keys over GPU workers, its cost estimate, and
// the grouping of a mixed host's GPUs by model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

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

}  // namespace
