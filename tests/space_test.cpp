// The search space and the default heuristic: every config they produce is a
// valid instance, the rules they document hold, and clusters appear only
// where the hardware has them.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "generator/instance.hpp"
#include "generator/space.hpp"

namespace lntune::gen {
namespace {

const std::int64_t kNs[] = {1, 2, 7, 64, 100, 127, 256, 1000, 1024, 3000, 4096, 5120, 8192, 12288,
                            16384, 40001, 65536, 262144, 1048576};

// A caller for whom no shared-memory config is a valid instance.
const ConfigFilter kNoSharedMemoryConfig = [](const Config&) -> std::optional<InstanceKey> { return std::nullopt; };

TEST(Space, EveryConfigIsAValidInstance) {
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx, Kernel::bwd_dwdb})
    for (DType d : {DType::f32, DType::f16, DType::bf16})
      for (std::int64_t n : kNs)
        for (int cc : {80, 90}) {
          const SpaceQuery q{k, d, n, 4096, 132, cc};
          const auto space = search_space(q);
          ASSERT_FALSE(space.empty()) << to_string(k) << " N=" << n;
          const Traits t{k, d, d, true, true};
          for (const Config& c : space) {
            SCOPED_TRACE(std::string(to_string(k)) + " N=" + std::to_string(n) + " " + to_string(c));
            EXPECT_NO_THROW(make_instance(t, c, n, max_vec(d)));
            if (is_wide_bwd(k, c) || is_wide_fwd(k, c)) {
              EXPECT_THROW(make_instance(t, c, n, 1), Error) << "the wide-row kernels need 16-byte accesses";
            } else {
              EXPECT_NO_THROW(make_instance(t, c, n, 1));
            }
            if (cc < 90) {
              EXPECT_EQ(c.cluster_size, 1);
            }
            if (k == Kernel::bwd_dx) {
              EXPECT_GE(c.group_size_m, 1);
            }
          }
          EXPECT_NO_THROW(make_instance(t, default_config(q), n, max_vec(d))) << "default, N=" << n;
        }
}

TEST(Space, NoDuplicates) {
  const auto space = search_space({Kernel::bwd_dx, DType::bf16, 4096, 65536, 132, 90});
  std::set<std::string> seen;
  for (const Config& c : space) EXPECT_TRUE(seen.insert(to_string(c)).second) << to_string(c);
}

TEST(Space, GroupSizesClippedToRowGroups) {
  for (const Config& c : search_space({Kernel::bwd_dx, DType::f16, 1024, 3, 132, 90})) {
    const std::int64_t groups = (3 + c.rows_per_cta - 1) / c.rows_per_cta;
    EXPECT_LE(c.group_size_m, groups) << to_string(c);
  }
}

TEST(Space, DwdbRowSplitsFillTheGpuWithinTheirBounds) {
  EXPECT_EQ(max_dwdb_splits(1024), 32);
  EXPECT_EQ(max_dwdb_splits(65536), 16);
  EXPECT_EQ(max_dwdb_splits(1 << 22), 1);
  for (std::int64_t n : {1, 1000, 1024, 4096, 65536, 262144})
    for (std::int64_t p : {1, 7, 528, 4096}) {
      const SpaceQuery q{Kernel::bwd_dwdb, DType::bf16, n, p, 132, 90};
      std::set<std::string> seen;
      bool split = false;
      for (const Config& c : search_space(q)) {
        SCOPED_TRACE("N=" + std::to_string(n) + " P=" + std::to_string(p) + " " + to_string(c));
        EXPECT_TRUE(seen.insert(to_string(c)).second);
        EXPECT_GE(c.group_size_m, 1);
        EXPECT_LE(c.group_size_m, std::max<std::int64_t>(1, std::min(max_dwdb_splits(n), p / 8)));
        split = split || c.group_size_m > 1;
      }
      // Few column blocks and enough partial rows: the space splits the rows.
      if (n <= 4096 && p >= 528) {
        EXPECT_TRUE(split);
      }
    }
  // The default at training sizes: 1 to 4 CTAs per SM.
  const Config d = default_config({Kernel::bwd_dwdb, DType::bf16, 1024, 528, 132, 90});
  EXPECT_GE((1024 / d.block_size) * d.group_size_m, 132) << to_string(d);
  EXPECT_LE((1024 / d.block_size) * d.group_size_m, 4 * 132) << to_string(d);
  // 32-column blocks, one split, 512 threads while the blocks are at most
  // two per SM (measured).
  for (std::int64_t n : {2112, 3072, 8192, 8448}) {
    const Config w = default_config({Kernel::bwd_dwdb, DType::bf16, n, 132, 132, 90});
    EXPECT_EQ(w, (Config{32, 16, 1, 1})) << n << ": " << to_string(w);
  }
  // Wider rows: about two CTAs a SM of 64-256 columns, one split, row groups
  // (threads / (columns / 4)) the largest power of two up to 2P/3, 4 to 32,
  // in at most 16 warps (session 57's cold tune: the winners).
  struct Want {
    std::int64_t n, p;
    Config c;
  };
  for (const Want& w : {Want{8449, 132, {64, 16, 1, 1}}, Want{16384, 132, {64, 16, 1, 1}},
                        Want{16384, 66, {64, 16, 1, 1}}, Want{16384, 62, {64, 16, 1, 1}},
                        Want{18432, 79, {128, 16, 1, 1}}, Want{32768, 66, {128, 16, 1, 1}},
                        Want{65536, 132, {256, 16, 1, 1}}, Want{65536, 30, {256, 16, 1, 1}},
                        Want{65536, 15, {256, 16, 1, 1}}, Want{65536, 14, {256, 16, 1, 1}},
                        Want{65536, 11, {256, 8, 1, 1}}, Want{262144, 7, {256, 8, 1, 1}},
                        Want{262144, 1, {256, 8, 1, 1}}, Want{1 << 24, 4096, {256, 16, 1, 1}}}) {
    const Config c = default_config({Kernel::bwd_dwdb, DType::bf16, w.n, w.p, 132, 90});
    EXPECT_EQ(c, w.c) << "N " << w.n << ", " << w.p << " partial rows: " << to_string(c);
    const std::vector<Config> space = search_space({Kernel::bwd_dwdb, DType::bf16, w.n, w.p, 132, 90});
    EXPECT_NE(std::find(space.begin(), space.end(), c), space.end()) << "the default is in the space: " << to_string(c);
  }
  // A GPU of few SMs: the same rule over its own count.
  EXPECT_EQ(default_config({Kernel::bwd_dwdb, DType::f32, 4096, 40, 16, 90}), (Config{128, 16, 1, 1}));
}

TEST(Space, ClustersForLongRowsOnSm90Only) {
  auto has_cluster = [](const std::vector<Config>& v) {
    return std::any_of(v.begin(), v.end(), [](const Config& c) { return c.cluster_size > 1; });
  };
  EXPECT_TRUE(has_cluster(search_space({Kernel::fwd, DType::bf16, 65536, 4096, 132, 90})));
  EXPECT_FALSE(has_cluster(search_space({Kernel::fwd, DType::bf16, 65536, 4096, 132, 80})));
  EXPECT_FALSE(has_cluster(search_space({Kernel::fwd, DType::bf16, 1024, 4096, 132, 90})));
}

// Forward candidates with a slab in shared memory: sm_90, N > 8192 only;
// every one fits 227 KB, leaves no CTA of its cluster empty, and is offered
// both as a cluster per row and as one persistent wave; the default is one
// of them (a cluster per row, at most 64 KiB of x per CTA), or for fp32 rows
// a wide-row forward config of the space.
TEST(Space, SmemForwardForLongRowsOnSm90Only) {
  const auto smem_configs = [](const SpaceQuery& q) {
    std::vector<Config> out;
    for (const Config& c : search_space(q))
      if (forward_in_smem(c, q.n)) out.push_back(c);
    return out;
  };
  EXPECT_TRUE(smem_configs({Kernel::fwd, DType::f16, 65536, 4096, 132, 80}).empty());
  EXPECT_TRUE(smem_configs({Kernel::fwd, DType::f16, 8192, 4096, 132, 90}).empty());
  EXPECT_FALSE(smem_configs({Kernel::fwd, DType::f16, 8193, 4096, 132, 90}).empty());
  EXPECT_TRUE(smem_configs({Kernel::bwd_dx, DType::f16, 65536, 4096, 132, 90}).empty());
  for (DType d : {DType::f16, DType::bf16, DType::f32})
    for (std::int64_t n : {16385, 40001, 65536, 262144}) {
      const SpaceQuery q{Kernel::fwd, d, n, 4096, 132, 90};
      const auto cs = smem_configs(q);
      const auto space = search_space(q);
      ASSERT_FALSE(cs.empty()) << to_string(d) << " N=" << n;
      int per_row = 0, persistent = 0;
      std::set<int> clusters;
      for (const Config& c : cs) {
        SCOPED_TRACE(to_string(c));
        EXPECT_LE(static_cast<std::int64_t>(c.block_size) * static_cast<std::int64_t>(dtype_size(d)), kMaxDynamicSmem);
        EXPECT_LT(static_cast<std::int64_t>(c.cluster_size - 1) * c.block_size, n);
        EXPECT_GE(c.num_warps, 4);
        (c.group_size_m == 0 ? per_row : persistent)++;
        clusters.insert(c.cluster_size);
        const auto k = make_instance(Traits{Kernel::fwd, d, d, true, true}, c, n, max_vec(d));
        EXPECT_TRUE(stages_in_smem(k));
      }
      EXPECT_GT(per_row, 0);
      EXPECT_GT(persistent, 0);
      if (d == DType::f32 && n == 262144) {
        EXPECT_EQ(clusters, (std::set<int>{8, 16}));  // 128 KB and 64 KB slabs
      }
      const Config def = default_config(q);
      // fp32 rows take the wide-row forward (wide_fwd_default) where its
      // slabs split the row without an empty CTA (not N = 40001), and so do
      // 16-bit rows of more than 128K columns; the others a slab per CTA: 64
      // KiB of x per CTA, a cluster per row; fp32 up to N = 65536: 128 KiB in
      // one persistent wave.
      if ((d == DType::f32 && n != 40001) || n > 131072) {
        EXPECT_TRUE(is_wide_fwd(Kernel::fwd, def)) << to_string(def);
        EXPECT_NE(std::find(space.begin(), space.end(), def), space.end()) << "a candidate: " << to_string(def);
      } else {
        EXPECT_TRUE(forward_in_smem(def, n)) << to_string(d) << " N=" << n << ": " << to_string(def);
        const bool fp32_wave = d == DType::f32 && n <= 65536;
        EXPECT_EQ(def.group_size_m == 0, !fp32_wave) << to_string(def);
        EXPECT_LE(static_cast<std::int64_t>(def.block_size) * static_cast<std::int64_t>(dtype_size(d)),
                  (fp32_wave ? 128 : 64) * 1024);
        EXPECT_NE(std::find(cs.begin(), cs.end(), def), cs.end()) << "the default is a candidate: " << to_string(def);
      }
      const Config none = default_config(q, kNoSharedMemoryConfig);
      EXPECT_FALSE(forward_in_smem(none, n) || is_wide_fwd(Kernel::fwd, none)) << to_string(none);
    }
  EXPECT_FALSE(forward_in_smem(default_config({Kernel::fwd, DType::bf16, 65536, 4096, 132, 80}), 65536));
  // 8192 < N <= 16384: 16-bit rows take the whole row in one CTA's shared
  // memory (8 warps), with a residual too (LayerNorm; RMSNorm + add keeps its
  // register default); fp32 rows without a residual keep theirs.
  for (DType d : {DType::f16, DType::bf16})
    for (std::int64_t n : {8193, 12288, 16384}) {
      const Config def = default_config({Kernel::fwd, d, n, 4096, 132, 90});
      EXPECT_TRUE(forward_in_smem(def, n)) << to_string(d) << " N=" << n << ": " << to_string(def);
      EXPECT_EQ(def.cluster_size, 1) << to_string(def);
      EXPECT_EQ(def.num_warps, 8) << to_string(def);
      SpaceQuery r{Kernel::fwd, d, n, 4096, 132, 90};
      r.residual = true;
      EXPECT_EQ(to_string(default_config(r)), to_string(def)) << to_string(d) << " N=" << n;
      r.norm = Norm::rms;
      EXPECT_FALSE(forward_in_smem(default_config(r), n)) << to_string(d) << " N=" << n;
    }
  {
    SpaceQuery r{Kernel::fwd, DType::f32, 16384, 8192, 132, 90};
    r.residual = true;
    r.norm = Norm::rms;
    EXPECT_EQ(to_string(default_config(r)), "block_size=16384 num_warps=8 rows_per_cta=1 group_size_m=0");
    EXPECT_TRUE(forward_in_smem(default_config(r), 16384));
    r.norm = Norm::layer;  // fp32 LayerNorm + add: its register default
    EXPECT_FALSE(forward_in_smem(default_config(r), 16384));
  }
  EXPECT_FALSE(forward_in_smem(default_config({Kernel::fwd, DType::f32, 16384, 4096, 132, 90}), 16384));
  EXPECT_FALSE(forward_in_smem(default_config({Kernel::fwd, DType::bf16, 8192, 4096, 132, 90}), 8192));
}

TEST(Default, ShortRowsShareACtaAndFitRegisters) {
  const Config c = default_config({Kernel::fwd, DType::bf16, 256, 4096, 132, 90});
  EXPECT_EQ(c.block_size, 256);
  EXPECT_GT(c.rows_per_cta, 1);
  EXPECT_LE(c.block_size / c.threads_per_row(), max_items_per_thread(Kernel::fwd, c.num_warps));
}

// The long-row defaults measured best on an H100 (bench/results/h100_2026-11-23b).
TEST(Default, LongRowsTakeTheMeasuredSharedMemoryConfigs) {
  auto def = [](Kernel k, DType d, std::int64_t n, std::int64_t m) {
    return to_string(default_config({k, d, n, m, 132, 90}));
  };
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 65536, 4096), "block_size=32768 num_warps=16 rows_per_cta=1 group_size_m=0 cluster_size=2");
  // fp32, the 16-bit RMSNorm and fused forms, and 16-bit LayerNorm rows of
  // more than 128K columns: the wide-row forward (bench/results/h100_2026-11-24e,
  // h100_2026-11-25).
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 262144, 1024), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=7 cluster_size=16");
  EXPECT_EQ(def(Kernel::fwd, DType::f16, 262144, 1024), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=7 cluster_size=16");
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 65536, 2048), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=15 cluster_size=8");
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 262144, 512), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=7 cluster_size=16");
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 32768, 4096), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=66 cluster_size=2");
  SpaceQuery rms{Kernel::fwd, DType::bf16, 262144, 1024, 132, 90};
  rms.norm = Norm::rms;
  EXPECT_EQ(to_string(default_config(rms)), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=7 cluster_size=16");
  rms.n = 65536;
  EXPECT_EQ(to_string(default_config(rms)), "block_size=8192 num_warps=8 rows_per_cta=4 group_size_m=15 cluster_size=8");
  rms.residual = true;
  EXPECT_EQ(to_string(default_config(rms)), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=15 cluster_size=8");
  rms.n = 32768;  // 16-bit rows of 32K columns: a slab per CTA
  EXPECT_TRUE(forward_in_smem(default_config(rms), 32768));
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 65536, 4096), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=15 cluster_size=8");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 32768, 8192), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=66 cluster_size=2");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 131072, 2048), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=7 cluster_size=16");
  // 16-bit rows of 256K columns: 3 stages where the 16-bit weight slab leaves
  // room, two clusters of 16 fewer than fit (bench/results/h100_2026-11-25).
  // The default with the call's traits (the instance's own shared memory).
  const auto bwd_default = [](DType d, std::int64_t n, std::int64_t m, bool residual = false) {
    Traits t{Kernel::bwd_dx, d, d, true, true};
    SpaceQuery q{Kernel::bwd_dx, d, n, m, 132, 90};
    if (residual) t.residual = d;
    q.residual = residual;
    return to_string(default_config(q, instances_for(t, n, max_vec(d))));
  };
  EXPECT_EQ(bwd_default(DType::bf16, 262144, 1024), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=6 cluster_size=16");
  EXPECT_EQ(bwd_default(DType::f32, 262144, 512), "block_size=16384 num_warps=32 rows_per_cta=2 group_size_m=7 cluster_size=16");
  // Rows with a residual at 64K columns: 16 warps; 2 stages for fp32 rows.
  EXPECT_EQ(bwd_default(DType::f32, 65536, 2048, true),
            "block_size=8192 num_warps=16 rows_per_cta=2 group_size_m=15 cluster_size=8");
  EXPECT_EQ(bwd_default(DType::bf16, 65536, 4096, true),
            "block_size=8192 num_warps=16 rows_per_cta=3 group_size_m=15 cluster_size=8");
}

TEST(Default, LongRowsAreTiledOrClustered) {
  // The register kernels (sm_80, or a call no shared-memory config fits).
  const Config f = default_config({Kernel::fwd, DType::bf16, 262144, 1024, 132, 90}, kNoSharedMemoryConfig);
  EXPECT_LT(f.block_size, 262144);
  EXPECT_EQ(f.cluster_size, 1);
  const Config b = default_config({Kernel::bwd_dx, DType::bf16, 65536, 4096, 132, 90}, kNoSharedMemoryConfig);
  EXPECT_GT(b.cluster_size, 1);
  EXPECT_FALSE(is_wide_bwd(Kernel::bwd_dx, b));
  const Config b80 = default_config({Kernel::bwd_dx, DType::bf16, 65536, 4096, 132, 80});
  EXPECT_EQ(b80.cluster_size, 1);
}

// The fp32 backward over many rows of 256 to 2048 columns: one 16-byte
// access per thread and row, 512 threads, two CTAs per SM (H100, 2026-11-24,
// 97.6-100.3% of copy at x = 512 MiB); training sizes keep their rule (N =
// 1024 and 2048: one row a CTA of 4 and 8 warps, where the backward stages
// rows in shared memory; H100, session 30).
TEST(Default, Fp32BackwardOverManyShortRows) {
  auto def = [](std::int64_t n, std::int64_t m) {
    return to_string(default_config({Kernel::bwd_dx, DType::f32, n, m, 132, 90}));
  };
  EXPECT_EQ(def(256, 524288), "block_size=256 num_warps=16 rows_per_cta=8 group_size_m=264");
  EXPECT_EQ(def(512, 262144), "block_size=512 num_warps=16 rows_per_cta=4 group_size_m=264");
  EXPECT_EQ(def(1024, 131072), "block_size=1024 num_warps=16 rows_per_cta=2 group_size_m=264");
  EXPECT_EQ(def(2048, 65536), "block_size=2048 num_warps=16 rows_per_cta=1 group_size_m=264");
  EXPECT_EQ(def(1024, 4096), "block_size=1024 num_warps=4 rows_per_cta=1 group_size_m=512");
  EXPECT_EQ(def(2048, 4096), "block_size=2048 num_warps=8 rows_per_cta=1 group_size_m=264");
  for (std::int64_t n : {256, 1000, 2048}) {
    const Config c = default_config({Kernel::bwd_dx, DType::f32, n, 1 << 20, 132, 90});
    const auto cs = search_space({Kernel::bwd_dx, DType::f32, n, 1 << 20, 132, 90});
    EXPECT_NE(std::find(cs.begin(), cs.end(), c), cs.end()) << "the default is a candidate: " << to_string(c);
  }
}

// The training-size backward (M = 4096) and the fused residual variants:
// the configs the H100 sweeps of 2026-11-23 measured best (space.cpp says
// which run).
TEST(Default, MeasuredTrainingAndResidualRules) {
  auto def = [](Kernel k, DType d, std::int64_t n, std::int64_t m, bool residual = false) {
    SpaceQuery q{k, d, n, m, 132, 90};
    q.residual = residual;
    q.norm = Norm::rms;  // (the sweeps' variant: RMSNorm + add)
    return to_string(default_config(q));
  };
  // Rows staged in shared memory (16 bits, N = 1024 and 2048): 4 warps, two
  // CTAs per SM; one row of 256 threads per CTA, two CTAs per SM (16-bit) or
  // one (fp32).
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 4096), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 2048, 4096), "block_size=2048 num_warps=4 rows_per_cta=1 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f16, 1500, 8192), "block_size=2048 num_warps=4 rows_per_cta=1 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 2048, 4096, true), "block_size=2048 num_warps=8 rows_per_cta=1 group_size_m=264")
      << "not with a residual (not staged)";
  // Not where the call's instance would not stage the rows: 2-byte accesses
  // (odd 16-bit N), or no shared-memory config allowed.
  const auto staged_default = [](DType d, std::int64_t n, int vec, const ConfigFilter& accept) {
    const Traits t{Kernel::bwd_dx, d, d, true, true};
    ConfigFilter make = [&](const Config& c) -> std::optional<InstanceKey> { return make_instance(t, c, n, vec); };
    return to_string(default_config({Kernel::bwd_dx, d, n, 4096, 132, 90}, accept ? accept : make));
  };
  EXPECT_EQ(staged_default(DType::bf16, 2046, 2, nullptr), "block_size=2048 num_warps=4 rows_per_cta=1 group_size_m=264");
  EXPECT_EQ(staged_default(DType::bf16, 2047, 1, nullptr), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=264");
  EXPECT_EQ(staged_default(DType::f32, 1023, 1, nullptr), "block_size=1024 num_warps=4 rows_per_cta=1 group_size_m=512")
      << "fp32: 4-byte copies stage";
  EXPECT_EQ(staged_default(DType::bf16, 1024, 8, kNoSharedMemoryConfig),
            "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=512");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 2560, 4096), "block_size=4096 num_warps=8 rows_per_cta=1 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 4096, 4096), "block_size=4096 num_warps=8 rows_per_cta=1 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 4096, 4096), "block_size=4096 num_warps=8 rows_per_cta=1 group_size_m=132");
  // RMSNorm's forward stages a 16-bit row of 16384 columns in shared memory
  // (8 warps); RMSNorm + add's runs 8192-column tiles in 1024 threads.
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 16384, 16384), "block_size=16384 num_warps=8 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 16384, 16384, true), "block_size=8192 num_warps=32 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 12288, 21845, true), "block_size=8192 num_warps=32 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 12288, 16384, true), "block_size=16384 num_warps=8 rows_per_cta=1 group_size_m=0");
  {  // LayerNorm + add: fp32 the whole row in 1024 threads, 16 bits the whole row in shared memory (8 warps)
    SpaceQuery q{Kernel::fwd, DType::f32, 16384, 8192, 132, 90};
    q.residual = true;
    EXPECT_EQ(to_string(default_config(q)), "block_size=16384 num_warps=32 rows_per_cta=1 group_size_m=0");
    q.dtype = DType::bf16;
    EXPECT_EQ(to_string(default_config(q)), "block_size=16384 num_warps=8 rows_per_cta=1 group_size_m=0");
    q.n = 8192;  // (shorter rows: 16 elements a thread, the whole row in a CTA)
    EXPECT_EQ(to_string(default_config(q)), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=0");
  }
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 4096, 65536, true), def(Kernel::fwd, DType::bf16, 4096, 65536));
  // The 16-bit LayerNorm forward of 2049-8192 columns over more than 8192
  // rows, without a residual: 32 elements a thread in CTAs of 256 threads
  // (measured on an H200); not fp32, not RMSNorm (below: 16 elements a
  // thread), not 2048 columns, not at 8192 rows or fewer.
  const auto layer_fwd = [](DType d, std::int64_t n, std::int64_t m) {
    return to_string(default_config({Kernel::fwd, d, n, m, 132, 90}));
  };
  EXPECT_EQ(layer_fwd(DType::bf16, 8192, 32768), "block_size=8192 num_warps=8 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(layer_fwd(DType::f16, 6000, 8193), "block_size=8192 num_warps=8 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(layer_fwd(DType::bf16, 4096, 65536), "block_size=4096 num_warps=8 rows_per_cta=2 group_size_m=0");
  EXPECT_EQ(layer_fwd(DType::f16, 2049, 1 << 20), "block_size=4096 num_warps=8 rows_per_cta=2 group_size_m=0");
  EXPECT_EQ(layer_fwd(DType::bf16, 8192, 8192), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(layer_fwd(DType::bf16, 4096, 1), "block_size=4096 num_warps=8 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(layer_fwd(DType::bf16, 2048, 65536), "block_size=2048 num_warps=4 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(layer_fwd(DType::f32, 8192, 32768), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 8192, 32768), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=0");
  // The register backward with a residual: one 16-byte access per thread
  // and row input, 1024-thread tiles beyond; in 16 bits over many rows, 16
  // columns a thread, a row a CTA, 512 threads' worth of CTAs per SM (both
  // norms; measured on an H200, bench/results/s34, call 5).
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 1024, 131072, true), "block_size=1024 num_warps=8 rows_per_cta=1 group_size_m=264");
  // (fp32 rows of 4096 columns with the residual over many rows: the wide
  // backward, split over two; at training sizes the register rule.)
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 4096, 32768, true),
            "block_size=2048 num_warps=16 rows_per_cta=4 group_size_m=66 cluster_size=2");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 4096, 4096, true), "block_size=4096 num_warps=32 rows_per_cta=1 group_size_m=132");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 262144, true), "block_size=1024 num_warps=2 rows_per_cta=1 group_size_m=1056");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 4096, 65536, true), "block_size=4096 num_warps=8 rows_per_cta=1 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 8192, 32768, true), "block_size=8192 num_warps=32 rows_per_cta=1 group_size_m=132")
      << "RMSNorm + add at 8192 columns: 8 a thread in 1024 threads";
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 4096, true), "block_size=1024 num_warps=4 rows_per_cta=1 group_size_m=512")
      << "at training sizes, one access per thread and row input";
  {
    SpaceQuery q{Kernel::bwd_dx, DType::bf16, 4096, 65536, 132, 90};
    q.residual = true;
    EXPECT_EQ(to_string(default_config(q)), "block_size=4096 num_warps=8 rows_per_cta=1 group_size_m=264");
    q.n = 8192;  // the whole row (without the residual: two 4096-column slices over a cluster)
    q.m = 32768;
    EXPECT_EQ(to_string(default_config(q)), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132");
    q.n = 256;  // 64-thread CTAs of 4 rows, 8 per SM
    q.m = 1048576;
    EXPECT_EQ(to_string(default_config(q)), "block_size=256 num_warps=2 rows_per_cta=4 group_size_m=1056");
    q.norm = Norm::rms;  // RMSNorm at 256 and 8192 columns: 8 columns a thread in 1024 threads
    EXPECT_EQ(to_string(default_config(q)), "block_size=256 num_warps=32 rows_per_cta=32 group_size_m=132");
    q.n = 8000;
    q.m = 32768;
    EXPECT_EQ(to_string(default_config(q)), "block_size=8192 num_warps=32 rows_per_cta=1 group_size_m=132");
    q.n = 2048;
    EXPECT_EQ(to_string(default_config(q)), "block_size=2048 num_warps=4 rows_per_cta=1 group_size_m=528");
    q.norm = Norm::layer;
    q.n = 256;
    q.m = 4096;  // (training sizes: the plain rule)
    EXPECT_EQ(to_string(default_config(q)), "block_size=256 num_warps=2 rows_per_cta=4 group_size_m=512");
    q.dtype = DType::f32;
    q.m = 131072;
    q.n = 1024;
    EXPECT_EQ(to_string(default_config(q)), "block_size=1024 num_warps=8 rows_per_cta=1 group_size_m=264");
  }
  {
    SpaceQuery q{Kernel::bwd_dx, DType::f32, 8192, 8192, 132, 90};
    q.residual = true;
    q.norm = Norm::rms;
    const Config t = default_config(q);
    EXPECT_EQ(to_string(t), "block_size=4096 num_warps=32 rows_per_cta=1 group_size_m=132");
    const std::vector<Config> cs = search_space(q);
    EXPECT_NE(std::find(cs.begin(), cs.end(), t), cs.end()) << "the tiled default is a candidate";
    // (Over more rows, the wide backward: Space.Fp32BackwardAt8192IsWide.)
    q.m = 16384;
    // Short rows share a CTA; few rows (fewer than 8 a CTA would fill the
    // SMs) get a CTA per row group, not 8 rows a CTA walked in turn.
    q.n = 256;
    EXPECT_EQ(to_string(default_config(q)), "block_size=256 num_warps=2 rows_per_cta=1 group_size_m=1056");
    q.dtype = DType::bf16;
    q.m = 64;
    EXPECT_EQ(to_string(default_config(q)), "block_size=256 num_warps=2 rows_per_cta=2 group_size_m=32");
  }
  // The backward's grid at small and middling M: at least one CTA per SM
  // (or per row group, when fewer), 8 rows per CTA only beyond that.
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 4096, 8), "block_size=4096 num_warps=8 rows_per_cta=1 group_size_m=8");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 4096, 32), "block_size=4096 num_warps=8 rows_per_cta=1 group_size_m=32");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 8192, 32), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=32");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 256), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=128");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 8192, 512), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 4096, 32), "block_size=4096 num_warps=8 rows_per_cta=1 group_size_m=32");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 8192, 2048), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132");
  // Small M, rows of 513-2048 columns: M = 1, one 16-byte access a thread;
  // M = 5 to 16384 / N, 4 elements a thread in CTAs of 512 threads, a CTA
  // per row group. Not beyond, nor for rows of 4096.
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 1), "block_size=1024 num_warps=4 rows_per_cta=1 group_size_m=1");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 2048, 1), "block_size=2048 num_warps=8 rows_per_cta=1 group_size_m=1");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 1000, 1), "block_size=1024 num_warps=8 rows_per_cta=1 group_size_m=1");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 4096, 1), "block_size=4096 num_warps=8 rows_per_cta=1 group_size_m=1");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 5), "block_size=1024 num_warps=16 rows_per_cta=2 group_size_m=3");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 1024, 16), "block_size=1024 num_warps=16 rows_per_cta=2 group_size_m=8");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 17), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=9");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 32), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=16");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 2048, 8), "block_size=2048 num_warps=16 rows_per_cta=1 group_size_m=8");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 2048, 16), "block_size=2048 num_warps=4 rows_per_cta=1 group_size_m=16");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 2048, 256), "block_size=2048 num_warps=4 rows_per_cta=1 group_size_m=132");
  // Decode sizes, M = 2 to 4: one CTA holds the rows side by side (the same
  // threads per row), where a thread's elements fit its registers.
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 4096, 2), "block_size=4096 num_warps=16 rows_per_cta=2 group_size_m=1");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 4096, 2), "block_size=4096 num_warps=16 rows_per_cta=2 group_size_m=1");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 3), "block_size=1024 num_warps=8 rows_per_cta=4 group_size_m=1");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 2048, 4), "block_size=2048 num_warps=16 rows_per_cta=4 group_size_m=1");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 4096, 4), "block_size=4096 num_warps=8 rows_per_cta=1 group_size_m=4");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 8192, 2), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=2");
  // The wide backward with a residual: 32 warps on 16384-column slices, 16
  // on 8192-column slices in clusters of 8 (8 without a residual).
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 32768, 8192, true),
            "block_size=16384 num_warps=32 rows_per_cta=2 group_size_m=66 cluster_size=2");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 65536, 4096, true),
            "block_size=8192 num_warps=16 rows_per_cta=3 group_size_m=15 cluster_size=8");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 65536, 4096),
            "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=15 cluster_size=8");
}

// Every default at decode sizes is a valid instance (the M = 2-4 rule once
// gave rows of one column 0 warps: gpu_test caught it, call 11).
TEST(Default, SmallMDefaultsAreValidInstances) {
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx})
    for (DType d : {DType::f32, DType::f16, DType::bf16})
      for (std::int64_t m = 1; m <= 9; ++m)
        for (std::int64_t n : {1, 2, 3, 7, 37, 64, 100, 512, 1000, 1027, 2048, 4096, 8192}) {
          const Config c = default_config({k, d, n, m, 132, 90});
          Traits t;
          t.kernel = k;
          t.x_dtype = t.w_dtype = d;
          SCOPED_TRACE(std::string(to_string(k)) + " " + std::string(to_string(d)) + " M=" + std::to_string(m) +
                       " N=" + std::to_string(n) + " " + to_string(c));
          EXPECT_NO_THROW(make_instance(t, c, n, 1));
          EXPECT_GE(c.num_warps, 1);
        }
}

TEST(Default, PartialRowsStayFewWhenMIsSmall) {
  // One partial row per CTA, at least 8 rows per CTA.
  const Config c = default_config({Kernel::bwd_dx, DType::f16, 1024, 4096, 132, 90});
  EXPECT_LE(c.group_size_m, 4096 / 8);
}

// The wide-row backward (is_wide_bwd): sm_90+ and N >= 4096 only; the
// default for long rows is one of its candidates (wherever one fits: not
// fp32 at N = 262144); every CTA owns columns, its shared memory fits, group
// sizes fill the SMs at one CTA each (or one or two clusters fewer).
// Two equal slabs in other than a power of two of warps (16 columns a
// thread; session 46): 16-bit rows of 9216 (9 warps) to 15360 (15), at
// every stage count, two CTAs a SM up to 12 warps; not at powers of two of
// warps (8192 + 8192), not fp32. An H200's default at 9216: 9 warps, 4 stages.
TEST(Space, WideBackwardOddWarps) {
  const auto odd = [](DType d, std::int64_t n) {
    std::vector<Config> out;
    for (const Config& c : search_space({Kernel::bwd_dx, d, n, 29127, 132, 90}))
      if (is_wide_bwd(Kernel::bwd_dx, c) && (c.num_warps & (c.num_warps - 1)) != 0) out.push_back(c);
    return out;
  };
  const std::vector<Config> b9 = odd(DType::bf16, 9216);
  EXPECT_EQ(b9.size(), 6u);
  for (const Config& c : b9) {
    EXPECT_EQ(c.block_size, 4608);
    EXPECT_EQ(c.num_warps, 9);
    EXPECT_EQ(c.cluster_size, 2);
    EXPECT_NO_THROW(make_instance(Traits{Kernel::bwd_dx, DType::bf16, DType::bf16, true, true}, c, 9216, 8));
  }
  const std::vector<Config> h15 = odd(DType::f16, 15360);
  ASSERT_FALSE(h15.empty());
  EXPECT_EQ(h15.front().num_warps, 15);
  for (const Config& c : h15) EXPECT_LE(c.group_size_m, 66) << "15 warps: one CTA a SM";
  EXPECT_TRUE(odd(DType::bf16, 16384).empty());
  EXPECT_TRUE(odd(DType::bf16, 9000).empty()) << "not a multiple of 1024";
  EXPECT_TRUE(odd(DType::f32, 9216).empty());
  SpaceQuery q{Kernel::bwd_dx, DType::bf16, 9216, 29127, 132, 90};
  q.dram_bytes_per_sm_cycle = 18.8;
  EXPECT_EQ(to_string(default_config(q)), "block_size=4608 num_warps=9 rows_per_cta=4 group_size_m=132 cluster_size=2");
  q.dram_bytes_per_sm_cycle = 12.8;
  EXPECT_NE(default_config(q).num_warps, 9) << "an H100: not measured";
}

TEST(Space, WideBackwardCandidates) {
  auto wide = [](const SpaceQuery& q) {
    std::vector<Config> out;
    for (const Config& c : search_space(q))
      if (is_wide_bwd(q.kernel, c)) out.push_back(c);
    return out;
  };
  EXPECT_TRUE(wide({Kernel::bwd_dx, DType::bf16, 65536, 4096, 132, 90}).size() > 0);
  EXPECT_TRUE(wide({Kernel::bwd_dx, DType::bf16, 65536, 4096, 132, 80}).empty());
  EXPECT_TRUE(wide({Kernel::bwd_dx, DType::bf16, 4000, 4096, 132, 90}).empty());
  EXPECT_FALSE(wide({Kernel::bwd_dx, DType::bf16, 4096, 4096, 132, 90}).empty());
  EXPECT_FALSE(wide({Kernel::bwd_dx, DType::f32, 8192, 4096, 132, 90}).empty());
  EXPECT_TRUE(wide({Kernel::fwd, DType::bf16, 65536, 4096, 132, 90}).empty());
  for (DType d : {DType::f32, DType::f16, DType::bf16})
    for (std::int64_t n : {12288, 20480, 40000, 65536, 131072, 262144}) {
      const SpaceQuery q{Kernel::bwd_dx, d, n, 4096, 132, 90};
      const Traits t{Kernel::bwd_dx, d, d, true, true};
      const Config def = default_config(q);
      const auto cands = wide(q);
      if (n == 12288 || n == 65536 || n == 131072 || (n == 20480 && d != DType::f32)) {
        EXPECT_TRUE(is_wide_bwd(Kernel::bwd_dx, def)) << to_string(d) << " N=" << n << ": " << to_string(def);
      }
      if (is_wide_bwd(Kernel::bwd_dx, def)) {
        EXPECT_NE(std::find(cands.begin(), cands.end(), def), cands.end()) << "a candidate: " << to_string(def);
        EXPECT_NO_THROW(make_instance(t, def, n, max_vec(d))) << to_string(def);
      }
      if (n == 262144 && d == DType::f32) {  // no stages of x and dy fit 227 KB: x alone is staged
        ASSERT_TRUE(is_wide_bwd(Kernel::bwd_dx, def)) << to_string(def);
        EXPECT_FALSE(wide_stages_dy(make_instance(t, def, n, max_vec(d)))) << to_string(def);
        EXPECT_EQ(def.num_warps, 32) << to_string(def);
        EXPECT_EQ(def.rows_per_cta, 2) << to_string(def);
      } else if (is_wide_bwd(Kernel::bwd_dx, def)) {  // elsewhere the default stages dy too
        EXPECT_TRUE(wide_stages_dy(make_instance(t, def, n, max_vec(d)))) << to_string(d) << " N=" << n;
      }
      for (const Config& c : cands) {
        SCOPED_TRACE(std::string(to_string(d)) + " N=" + std::to_string(n) + " " + to_string(c));
        const InstanceKey key = make_instance(t, c, n, max_vec(d));
        EXPECT_TRUE(is_wide_bwd(key));
        EXPECT_LT(static_cast<std::int64_t>(c.cluster_size - 1) * c.block_size, n);
        EXPECT_GE(static_cast<std::int64_t>(c.cluster_size) * c.block_size, n);
        EXPECT_LE(dynamic_smem_bytes(key, 90), kWideSmemLimit);
        if (c.group_size_m > 132 / c.cluster_size) {
          // Two CTAs a SM: twice the grid, where two fit by shared memory
          // (228 KB a SM, 1 KB reserved a CTA) and registers (8 warps; the
          // odd counts of two equal slabs up to 12).
          EXPECT_EQ(c.group_size_m, 2 * (132 / c.cluster_size));
          EXPECT_LE(c.num_warps, (c.num_warps & (c.num_warps - 1)) != 0 ? 12 : 8);
          EXPECT_LE(2 * (dynamic_smem_bytes(key, 90) + 1024), 228 * 1024);
        } else {
          EXPECT_GE(c.group_size_m, 132 / c.cluster_size - 2);
        }
        EXPECT_EQ(rows_per_group(Kernel::bwd_dx, c), 1);
      }
    }
  // Two CTAs a SM: 16-bit rows in 8192-column slabs at 2 and 3 stages, not 4
  // (144 KB) and not in 16 warps; none for fp32 rows of 8192-column slabs.
  const auto two = [&](const SpaceQuery& q) {
    std::vector<Config> out;
    for (const Config& c : wide(q))
      if (c.group_size_m > q.sm_count / c.cluster_size) out.push_back(c);
    return out;
  };
  const auto t16 = two({Kernel::bwd_dx, DType::bf16, 16384, 4096, 132, 90});
  EXPECT_NE(std::find(t16.begin(), t16.end(), Config{8192, 8, 3, 132, 2}), t16.end());
  EXPECT_NE(std::find(t16.begin(), t16.end(), Config{8192, 8, 2, 132, 2}), t16.end());
  EXPECT_EQ(std::find(t16.begin(), t16.end(), Config{8192, 8, 4, 132, 2}), t16.end());
  EXPECT_TRUE(std::none_of(t16.begin(), t16.end(), [](const Config& c) { return c.num_warps > 8; }));
  const auto t32 = two({Kernel::bwd_dx, DType::f32, 16384, 4096, 132, 90});
  EXPECT_TRUE(std::none_of(t32.begin(), t32.end(), [](const Config& c) { return c.block_size >= 8192; }));
  // N = 262144 in 16-bit rows: slabs of 16384 columns over 16 CTAs.
  const auto w = wide({Kernel::bwd_dx, DType::bf16, 262144, 1024, 132, 90});
  EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](const Config& c) { return c.cluster_size == 16; }));
  // Few rows: the grid is clipped to the rows (one partial row per cluster, each with a row).
  for (const Config& c : wide({Kernel::bwd_dx, DType::bf16, 65536, 5, 132, 90})) EXPECT_LE(c.group_size_m, 5);
}

TEST(Space, RejectsNonPositiveN) {
  EXPECT_THROW(search_space({Kernel::fwd, DType::f32, 0, 1, 132, 90}), Error);
  EXPECT_THROW(default_config({Kernel::fwd, DType::f32, -5, 1, 132, 90}), Error);
}

TEST(Space, DefaultGridCoversTheTutorialAndModelSizes) {
  const auto g = default_n_grid();
  for (std::int64_t n : {1024, 1536, 15872, 32768, 65536, 768, 5120, 12288, 14336})
    EXPECT_NE(std::find(g.begin(), g.end(), n), g.end()) << n;
  EXPECT_TRUE(std::is_sorted(g.begin(), g.end()));
}

// 16-bit backward rows of 6145 to 8192 columns over many rows: 4096-column
// slices over clusters of 2 (measured: bench/results/h100_2026-11-24c);
// not at training sizes, fp32, without clusters, or at N = 6144.
// fp32 rows of 4097-8192 columns (4096 with a residual) over many rows:
// the wide backward in clusters of two, 4 stages (measured: bench/results/
// h200x2_2026-11-24, call 7; s34, call 1); not at training sizes, not 16-bit rows, not
// before sm_90; a candidate of the space and a valid instance.
TEST(Space, Fp32BackwardAt8192IsWide) {
  for (bool residual : {false, true})
    for (std::int64_t n : {6148, 8192}) {
      SpaceQuery q{Kernel::bwd_dx, DType::f32, n, 16384, 132, 90};
      q.residual = residual;
      const Config c = default_config(q);
      EXPECT_TRUE(is_wide_bwd(Kernel::bwd_dx, c)) << to_string(c);
      // 8 warps without the residual (H200, bench/results/s34, call 1), 32 with it.
      EXPECT_EQ(to_string(c), residual ? "block_size=4096 num_warps=32 rows_per_cta=4 group_size_m=66 cluster_size=2"
                                       : "block_size=4096 num_warps=8 rows_per_cta=4 group_size_m=66 cluster_size=2");
      const std::vector<Config> cs = search_space(q);
      EXPECT_NE(std::find(cs.begin(), cs.end(), c), cs.end()) << "the default is a candidate";
      Traits t{Kernel::bwd_dx, DType::f32, DType::f32, true, true};
      if (residual) t.residual = DType::f32;
      EXPECT_NO_THROW(make_instance(t, c, n, 4)) << to_string(c);
      q.m = 4096;
      EXPECT_FALSE(is_wide_bwd(Kernel::bwd_dx, default_config(q)));
      q.m = 16384;
      q.cc = 80;
      EXPECT_FALSE(is_wide_bwd(Kernel::bwd_dx, default_config(q)));
    }
  EXPECT_FALSE(is_wide_bwd(Kernel::bwd_dx, default_config({Kernel::bwd_dx, DType::f32, 4096, 32768, 132, 90})));
  EXPECT_FALSE(is_wide_bwd(Kernel::bwd_dx, default_config({Kernel::bwd_dx, DType::bf16, 8192, 32768, 132, 90})));
}

// The wide backward's finer split (wide_bwd_fine_split): where the gap
// cluster of 16384-column slabs is 9-15 CTAs, the most CTAs up to 16 whose
// slabs of a multiple of 512 * vec columns leave every CTA columns, in the
// warps whose accesses divide the slab; not where no count beats the gap
// cluster, nor below 9.
TEST(Space, WideBackwardFineSplit) {
  const auto fine = [](DType d, std::int64_t n) {
    std::set<std::pair<int, int>> out;  // (block_size, cluster_size) of slabs not a power of two
    for (const Config& c : search_space({Kernel::bwd_dx, d, n, 1024, 132, 90}))
      if ((c.block_size & (c.block_size - 1)) != 0) {
        EXPECT_TRUE(is_wide_bwd(Kernel::bwd_dx, c)) << to_string(c);
        EXPECT_EQ(c.block_size % (32 * c.num_warps * max_vec(d)), 0) << to_string(c) << ": every thread whole accesses";
        EXPECT_LT(static_cast<std::int64_t>(c.cluster_size - 1) * c.block_size, n) << "every CTA owns columns";
        EXPECT_GE(static_cast<std::int64_t>(c.cluster_size) * c.block_size, n) << "the row fits";
        out.insert({c.block_size, c.cluster_size});
      }
    return out;
  };
  using S = std::set<std::pair<int, int>>;
  EXPECT_EQ(fine(DType::bf16, 150000), (S{{12288, 13}}));
  EXPECT_EQ(fine(DType::f16, 180000), (S{{12288, 15}}));
  EXPECT_EQ(fine(DType::f32, 150000), (S{{10240, 15}}));
  EXPECT_EQ(fine(DType::f32, 200000), (S{{14336, 14}}));
  EXPECT_EQ(fine(DType::f32, 180000), (S{{12288, 15}})) << "16 warps and 32 (three accesses a thread)";
  EXPECT_EQ(fine(DType::bf16, 200000), S{}) << "no count of 12288-column slabs holds the row in 16";
  EXPECT_EQ(fine(DType::bf16, 100000), S{}) << "7 slabs of 16384: clusters of under 9 pack the GPCs";
  EXPECT_EQ(fine(DType::bf16, 262144), S{});
  // Not a default (not yet measured): bf16 150000 keeps 10 slabs of 16384.
  EXPECT_EQ(default_config({Kernel::bwd_dx, DType::bf16, 150000, 1789, 132, 90}).block_size, 16384);
}

// 16-bit LayerNorm rows of 6145-8192 columns over many rows: the whole row
// in 16 warps, one CTA per SM, where its instance stages the rows (measured:
// bench/results/s32, call 1); split in two over a cluster where it
// would not (odd N: accesses under 4 bytes; no shared-memory config).
TEST(Space, SixteenBitBackwardAt8192KeepsTheStagedRowWhole) {
  const auto at = [](DType d, std::int64_t n, int vec, const ConfigFilter& accept) {
    const Traits t{Kernel::bwd_dx, d, d, true, true};
    ConfigFilter make = [&](const Config& c) -> std::optional<InstanceKey> { return make_instance(t, c, n, vec); };
    const Config c = default_config({Kernel::bwd_dx, d, n, 32768, 132, 90}, accept ? accept : make);
    EXPECT_NO_THROW(make_instance(t, c, n, vec)) << to_string(c);
    return c;
  };
  for (DType d : {DType::bf16, DType::f16})
    for (std::int64_t n : {7000, 8192}) {
      const Config whole = at(d, n, max_vec(d), nullptr);
      EXPECT_EQ(to_string(whole), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132") << n;
      EXPECT_EQ(to_string(default_config({Kernel::bwd_dx, d, n, 32768, 132, 90})), to_string(whole))
          << "no filter: taken as staging";
      for (const Config& split : {at(d, n - 1, 1, nullptr), at(d, n, max_vec(d), kNoSharedMemoryConfig)}) {
        EXPECT_EQ(split.cluster_size, 2) << to_string(split);
        EXPECT_EQ(split.block_size, 4096) << to_string(split);
        EXPECT_EQ(split.num_warps, 8) << to_string(split);
        EXPECT_EQ(split.group_size_m, 132) << to_string(split);
      }
    }
  EXPECT_EQ(default_config({Kernel::bwd_dx, DType::bf16, 8192, 4096, 132, 90}).cluster_size, 1);
  EXPECT_EQ(default_config({Kernel::bwd_dx, DType::bf16, 6144, 32768, 132, 90}).cluster_size, 1);
  EXPECT_EQ(default_config({Kernel::bwd_dx, DType::bf16, 8192, 32768, 132, 80}).cluster_size, 1);
  // RMSNorm: the whole row in 16 warps (measured faster before the staging too).
  SpaceQuery rms{Kernel::bwd_dx, DType::bf16, 8192, 32768, 132, 90};
  rms.norm = Norm::rms;
  EXPECT_EQ(to_string(default_config(rms)), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132");
  EXPECT_EQ(default_config({Kernel::fwd, DType::bf16, 8192, 32768, 132, 90}).cluster_size, 1);
}

// The 16-bit forward of rows of 256 or 512 columns: 512-thread CTAs
// (measured: bench/results/h100_2026-11-24d, calls 10 and 13); not other N
// (N = 200 measured slower), not fp32, not with a residual, not the backward.
TEST(Space, SixteenBitForwardOfShortRowsFillsWideCtas) {
  for (DType d : {DType::bf16, DType::f16}) {
    const Config c256 = default_config({Kernel::fwd, d, 256, 4096, 132, 90});
    EXPECT_EQ(c256.num_warps, 16) << to_string(c256);
    EXPECT_EQ(c256.rows_per_cta, 32) << to_string(c256);
    const Config c200 = default_config({Kernel::fwd, d, 200, 1, 132, 90});
    EXPECT_EQ(c200.num_warps, 2) << to_string(c200);
    const Config c512 = default_config({Kernel::fwd, d, 512, 4096, 132, 90});
    EXPECT_EQ(c512.num_warps, 16) << to_string(c512);
    EXPECT_EQ(c512.rows_per_cta, 16) << to_string(c512);
    const Traits t{Kernel::fwd, d, d, true, true};
    EXPECT_NO_THROW(make_instance(t, c256, 256, max_vec(d)));
    EXPECT_NO_THROW(make_instance(t, c512, 512, max_vec(d)));
    SpaceQuery r{Kernel::fwd, d, 256, 4096, 132, 90};
    r.residual = true;
    EXPECT_EQ(default_config(r).num_warps, 2) << to_string(default_config(r));
  }
  EXPECT_EQ(default_config({Kernel::fwd, DType::f32, 256, 4096, 132, 90}).num_warps, 2);
  EXPECT_EQ(default_config({Kernel::fwd, DType::bf16, 128, 4096, 132, 90}).num_warps, 2);
  EXPECT_LT(default_config({Kernel::bwd_dx, DType::bf16, 256, 4096, 132, 90}).num_warps, 16);
}

// A GPU whose memory outruns its SMs (an H200: 18.8 DRAM bytes per SM cycle)
// takes the rules measured on one (bench/results/s35, calls 1-3); an H100
// (12.8), or a GPU whose clocks are unknown (0), keeps the H100's.
// A query on a 132-SM sm_90 GPU of `bytes_per_cycle` DRAM bytes per SM
// cycle (H100 12.8, H200 18.8: fast_memory's rules from 16).
SpaceQuery query(Kernel k, DType d, std::int64_t n, std::int64_t m, double bytes_per_cycle) {
  SpaceQuery q{k, d, n, m, 132, 90};
  q.dram_bytes_per_sm_cycle = bytes_per_cycle;
  return q;
}

TEST(Default, FastMemoryRules) {
  const auto def = [&](Kernel k, DType d, std::int64_t n, std::int64_t m, double bpc = 18.8) {
    return to_string(default_config(query(k, d, n, m, bpc)));
  };
  EXPECT_FALSE(fast_memory(query(Kernel::fwd, DType::bf16, 1, 1, 0)));
  EXPECT_FALSE(fast_memory(query(Kernel::fwd, DType::bf16, 1, 1, 12.8)));
  EXPECT_FALSE(fast_memory(query(Kernel::fwd, DType::bf16, 1, 1, 15.99)));
  EXPECT_TRUE(fast_memory(query(Kernel::fwd, DType::bf16, 1, 1, 16)));
  // The 16-bit LayerNorm forward.
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 16384, 16384), "block_size=16384 num_warps=16 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(Kernel::fwd, DType::f16, 16384, 16384), "block_size=16384 num_warps=16 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 32768, 8192), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=66 cluster_size=2");
  // 65536 columns: four full slices of 16384 in clusters of 4 (33 here; the
  // launcher fits them to the driver's count), else the slab in shared memory.
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 65536, 4096), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=33 cluster_size=4");
  EXPECT_EQ(def(Kernel::fwd, DType::f16, 65536, 4096), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=33 cluster_size=4");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 65528, 4096), "block_size=32768 num_warps=16 rows_per_cta=1 group_size_m=198 cluster_size=2");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 63488, 4096), "block_size=32768 num_warps=16 rows_per_cta=1 group_size_m=198 cluster_size=2");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 57344, 4096), "block_size=32768 num_warps=16 rows_per_cta=1 group_size_m=198 cluster_size=2");
  // Where the wide forward is no valid instance (bulk copies need 16-byte
  // rows): the slab in shared memory, else the H100's rules.
  {
    SpaceQuery q = query(Kernel::fwd, DType::bf16, 65536, 4096, 18.8);
    const auto no_wide = [](const Config& c) -> std::optional<InstanceKey> {
      if (c.cluster_size == 4) return std::nullopt;
      return InstanceKey{};
    };
    EXPECT_EQ(to_string(default_config(q, no_wide)),
              "block_size=32768 num_warps=16 rows_per_cta=1 group_size_m=198 cluster_size=2");
  }
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 131072, 2048), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=15 cluster_size=8");
  // More than 128K columns: the wide forward in clusters of 16 (its full
  // slabs' statistics in one pass), bf16 as fp16; where a slab would be empty
  // (N = 229384), the 15 CTAs the row needs (session 41; before, bf16 took
  // the slab in shared memory over clusters of 8, as it still does from
  // 237569 columns).
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 262144, 1024), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=7 cluster_size=16");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 229384, 1024), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=7 cluster_size=15");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 262144, 40), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=7 cluster_size=16");
  EXPECT_EQ(def(Kernel::fwd, DType::f16, 262144, 1024), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=7 cluster_size=16");
  // The backward of the fused add at 65536 columns (session 46): eight
  // 8192-column slabs, dz staged, 4 stages, the 15 clusters of 8 that run at
  // once; 32768 in four, 131072 in eight of 16384 at 2 stages, one cluster
  // fewer; RMSNorm and LayerNorm without it: 8192-column slabs in clusters
  // of 8 at two CTAs a SM (32 here; the launcher fits them).
  {
    SpaceQuery b = query(Kernel::bwd_dx, DType::bf16, 65536, 4096, 18.8);
    b.norm = Norm::rms;
    EXPECT_EQ(to_string(default_config(b)), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=32 cluster_size=8");
    b.norm = Norm::layer;
    b.residual = true;
    EXPECT_EQ(to_string(default_config(b)), "block_size=8192 num_warps=16 rows_per_cta=4 group_size_m=15 cluster_size=8");
    b.norm = Norm::rms;
    EXPECT_EQ(to_string(default_config(b)), "block_size=8192 num_warps=16 rows_per_cta=4 group_size_m=15 cluster_size=8");
    // With the call's traits: dz staged where the residual is in x's dtype;
    // beside an fp32 residual stream (session 47) 8192-column slabs in 8
    // warps at 2 stages, dz staged too (176 KB), one cluster of 8 spare.
    Traits t;
    t.kernel = Kernel::bwd_dx;
    t.x_dtype = t.w_dtype = DType::bf16;
    t.norm = Norm::layer;
    t.residual = DType::bf16;
    b.norm = Norm::layer;
    const Config staged = default_config(b, instances_for(t, 65536, 8));
    EXPECT_EQ(to_string(staged), "block_size=8192 num_warps=16 rows_per_cta=4 group_size_m=15 cluster_size=8");
    EXPECT_TRUE(wide_stages_dz(make_instance(t, staged, 65536, 8)));
    t.residual = DType::f32;
    {
      const Config f = default_config(b, instances_for(t, 65536, 8));
      EXPECT_EQ(to_string(f), "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=14 cluster_size=8");
      EXPECT_TRUE(wide_stages_dz(make_instance(t, f, 65536, 8)));
      // The other N of the fp32 stream's table: as many 8192-column slabs as
      // the row has, the clusters that run at once; 262144 in sixteen of
      // 16384 columns, 16 warps (dz through L2: no room).
      const struct {
        std::int64_t n, m;
        const char* config;
        bool dz;
      } stream[] = {{16384, 16384, "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=66 cluster_size=2", true},
                    {32768, 8192, "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=33 cluster_size=4", true},
                    {131072, 2048, "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=7 cluster_size=16", true},
                    {262144, 1024, "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=7 cluster_size=16", false}};
      for (Norm norm : {Norm::layer, Norm::rms})
        for (const auto& e : stream) {
          SpaceQuery fq = b;
          fq.n = e.n;
          fq.m = e.m;
          fq.norm = norm;
          Traits ft = t;
          ft.norm = norm;
          ft.has_bias = norm == Norm::layer;
          const Config fc = default_config(fq, instances_for(ft, e.n, 8));
          EXPECT_EQ(to_string(fc), e.config) << e.n;
          EXPECT_EQ(wide_stages_dz(make_instance(ft, fc, e.n, 8)), e.dz) << e.n;
          // Not without the call's traits (the residual then taken in x's
          // dtype; at 262144 that table's config is the same), nor on an H100.
          if (e.n != 262144) {
            EXPECT_NE(to_string(default_config(fq)), e.config) << e.n;
          }
          SpaceQuery h100 = fq;
          h100.dram_bytes_per_sm_cycle = 12.8;
          EXPECT_NE(to_string(default_config(h100, instances_for(ft, e.n, 8))), e.config) << e.n;
        }
      // fp16 rows take the same (measured with bf16 rows only; the kernel
      // is the same per byte).
      Traits h = t;
      h.x_dtype = h.w_dtype = DType::f16;
      SpaceQuery hq = b;
      hq.dtype = DType::f16;
      EXPECT_EQ(to_string(default_config(hq, instances_for(h, 65536, 8))),
                "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=14 cluster_size=8");
    }
    t.residual = DType::bf16;
    b.n = 32768;
    b.m = 8192;
    EXPECT_EQ(to_string(default_config(b, instances_for(t, 32768, 8))),
              "block_size=8192 num_warps=16 rows_per_cta=4 group_size_m=33 cluster_size=4");
    b.n = 131072;
    b.m = 2048;
    const Config wide = default_config(b, instances_for(t, 131072, 8));
    EXPECT_EQ(to_string(wide), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=14 cluster_size=8");
    EXPECT_TRUE(wide_stages_dz(make_instance(t, wide, 131072, 8)));
    b.n = 262144;
    b.m = 1024;
    const Config w16 = default_config(b, instances_for(t, 262144, 8));
    EXPECT_EQ(to_string(w16), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=7 cluster_size=16");
    EXPECT_TRUE(wide_stages_dz(make_instance(t, w16, 262144, 8)));
    // RMSNorm + add of 16384 columns: 8 warps, 3 stages; LayerNorm + add
    // keeps 16 warps at 4.
    b.n = 16384;
    b.m = 16384;
    EXPECT_EQ(to_string(default_config(b, instances_for(t, 16384, 8))),
              "block_size=8192 num_warps=16 rows_per_cta=4 group_size_m=66 cluster_size=2");
    b.norm = t.norm = Norm::rms;
    t.has_bias = false;
    EXPECT_EQ(to_string(default_config(b, instances_for(t, 16384, 8))),
              "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=66 cluster_size=2");
    b.norm = Norm::layer;
    b.n = 65536;
    b.m = 4096;
    b.residual = false;
    EXPECT_EQ(to_string(default_config(b)), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=32 cluster_size=8");
    b.norm = Norm::rms;
    b.n = 65528;
    EXPECT_NE(default_config(b).cluster_size, 4) << "the last slice part empty";
  }
  // The same shapes on an H100, and where no rule was measured: the H100's.
  for (double h100 : {0.0, 12.8}) {
    EXPECT_EQ(def(Kernel::fwd, DType::bf16, 65536, 4096, h100), "block_size=32768 num_warps=16 rows_per_cta=1 group_size_m=0 cluster_size=2");
    EXPECT_EQ(def(Kernel::fwd, DType::bf16, 262144, 1024, h100), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=7 cluster_size=16");
  }
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 16384, 4096), "block_size=16384 num_warps=16 rows_per_cta=1 group_size_m=0")
      << "session 51: 16 warps to 32 rows an SM";
  EXPECT_NE(def(Kernel::fwd, DType::bf16, 16384, 4096, 12.8), "block_size=16384 num_warps=16 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 12288, 16384), "block_size=12288 num_warps=12 rows_per_cta=1 group_size_m=0")
      << "session 51: 32 elements a thread, not session 43's tile in shared memory";
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 10240, 16384), "block_size=10240 num_warps=8 rows_per_cta=1 group_size_m=0")
      << "session 43: a tile in shared memory";
  EXPECT_NE(def(Kernel::fwd, DType::bf16, 12288, 16384, 12.8), "block_size=12288 num_warps=8 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 12289, 16384), "block_size=16384 num_warps=16 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 65536, 2048), def(Kernel::fwd, DType::f32, 65536, 2048, 12.8));
  SpaceQuery rms = query(Kernel::fwd, DType::bf16, 131072, 2048, 18.8);
  rms.norm = Norm::rms;
  SpaceQuery rms_h100 = rms;
  rms_h100.dram_bytes_per_sm_cycle = 12.8;
  // RMSNorm at 128K as LayerNorm (since session 40; the H100 keeps its rule),
  // at 65536 the wide forward in clusters of 4 at 3 stages.
  EXPECT_EQ(to_string(default_config(rms)), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=15 cluster_size=8");
  EXPECT_EQ(to_string(default_config(rms_h100)), "block_size=32768 num_warps=16 rows_per_cta=1 group_size_m=0 cluster_size=4");
  rms.n = rms_h100.n = 65536;
  rms.m = rms_h100.m = 4096;
  EXPECT_EQ(to_string(default_config(rms)), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=33 cluster_size=4");
  rms.n = 65528;
  EXPECT_EQ(to_string(default_config(rms)), "block_size=32768 num_warps=16 rows_per_cta=1 group_size_m=198 cluster_size=2")
      << "the last slice part empty: the slab in shared memory";
  rms.n = 65536;
  rms.n = 262144;
  rms.m = 1024;
  EXPECT_EQ(to_string(default_config(rms)), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=7 cluster_size=16");
  rms.kernel = Kernel::bwd_dx;  // the wide backward's rule: all 7 clusters of 16
  {
    Traits t{Kernel::bwd_dx, DType::bf16, DType::bf16, true, true};
    t.norm = Norm::rms;
    const auto with_traits = [&](const SpaceQuery& q) {
      return to_string(default_config(q, instances_for(t, q.n, max_vec(q.dtype))));
    };
    // (3 stages where the 16-bit weight slab leaves room for them.)
    EXPECT_EQ(with_traits(rms), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=7 cluster_size=16");
    SpaceQuery h100 = rms;
    h100.dram_bytes_per_sm_cycle = 12.8;
    EXPECT_EQ(with_traits(h100), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=6 cluster_size=16");
  }
  rms.dtype = DType::f32;
  rms.m = 512;
  // (32 warps since session 47's whole stores.)
  EXPECT_EQ(to_string(default_config(rms)), "block_size=16384 num_warps=32 rows_per_cta=2 group_size_m=7 cluster_size=16");
  rms.residual = true;
  EXPECT_EQ(to_string(default_config(rms)), "block_size=16384 num_warps=32 rows_per_cta=2 group_size_m=7 cluster_size=16");
  rms.kernel = Kernel::fwd;
  rms.n = 16384;
  for (std::int64_t m : {1, 4096, 8192}) {  // at any M: no threshold inside a plan bucket
    rms.m = m;
    EXPECT_EQ(to_string(default_config(rms)), "block_size=16384 num_warps=16 rows_per_cta=1 group_size_m=0") << "M=" << m;
  }
  // The 16-bit LayerNorm backward, the fp32 one of 256K columns.
  // 8193-65536 columns in 8192-column slabs (every CTA owning some), 8 warps,
  // two CTAs a SM (bench/results/s38, calls 2-3): 3 stages, 2 with a
  // residual (up to 32768 columns); elsewhere the rules before.
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 12288, 16384), "block_size=6144 num_warps=8 rows_per_cta=3 group_size_m=132 cluster_size=2")
      << "8193-12288 columns: two equal slabs of 6144 (session 42)";
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 10240, 6553), "block_size=3584 num_warps=4 rows_per_cta=3 group_size_m=88 cluster_size=3");
  // (16384 columns, plain LayerNorm: one cluster per two SMs, session 45,
  // in 16 warps at 4 stages since session 47; RMSNorm two.)
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f16, 16384, 16384), "block_size=8192 num_warps=16 rows_per_cta=4 group_size_m=66 cluster_size=2");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 16384, 4096), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=66 cluster_size=2")
      << "training sizes keep session 45's rule (call 5)";
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 16384, 16384, 12.8), def(Kernel::bwd_dx, DType::bf16, 16384, 16384, 0.0))
      << "the H100 keeps its rule";
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 13312, 16384), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=132 cluster_size=2")
      << "a partly empty second slab: two a SM (session 45, call 5)";
  SpaceQuery rms16k = query(Kernel::bwd_dx, DType::bf16, 16384, 16384, 18.8);
  rms16k.norm = Norm::rms;
  EXPECT_EQ(to_string(default_config(rms16k)), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=132 cluster_size=2");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 32768, 8192), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=66 cluster_size=4");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 65536, 4096), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=32 cluster_size=8");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 65536, 20), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=20 cluster_size=8") << "few rows";
  // Where a fourth (eighth) 8192-column slab would be empty: as many as the
  // row needs (session 40); with a residual three (session 59), not more.
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 20000, 8192), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=88 cluster_size=3");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 40000, 8192), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=52 cluster_size=5");
  {
    SpaceQuery r = query(Kernel::bwd_dx, DType::bf16, 20000, 8192, 18.8);
    r.residual = true;
    EXPECT_EQ(to_string(default_config(r)), "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=88 cluster_size=3");
    r.norm = Norm::rms;
    r.n = 18432;
    r.m = 4096;
    EXPECT_EQ(to_string(default_config(r)), "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=88 cluster_size=3");
    r.n = 20000;
    r.dram_bytes_per_sm_cycle = 12.8;
    EXPECT_NE(default_config(r).cluster_size, 3) << "the H100 keeps its rule";
  }
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 8192, 16384), def(Kernel::bwd_dx, DType::bf16, 8192, 16384, 12.8));
  {
    // An fp32 weight beside 16-bit rows: 3 stages do not fit twice; LayerNorm
    // in clusters of 8 takes 2 stages at two CTAs a SM, RMSNorm the rule
    // before (one CTA a SM; not measured at two).
    const auto with_w32 = [](SpaceQuery q, Norm norm) {
      q.norm = norm;
      Traits t{Kernel::bwd_dx, DType::bf16, DType::f32, true, norm == Norm::layer};
      t.norm = norm;
      return to_string(default_config(q, instances_for(t, q.n, max_vec(q.dtype))));
    };
    const SpaceQuery q = query(Kernel::bwd_dx, DType::bf16, 65536, 4096, 18.8);
    EXPECT_EQ(with_w32(q, Norm::layer), "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=32 cluster_size=8");
    // In clusters of 2 (N = 16384) one CTA a SM (2 stages at two measured
    // slower), 8 warps at 3 stages (session 47's 16 warps at 4 were measured
    // with a 16-bit weight only).
    const SpaceQuery q16 = query(Kernel::bwd_dx, DType::bf16, 16384, 16384, 18.8);
    EXPECT_EQ(with_w32(q16, Norm::layer), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=66 cluster_size=2");
    EXPECT_EQ(with_w32(q, Norm::rms), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=33 cluster_size=4");
  }
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 16384, 16384), def(Kernel::bwd_dx, DType::f32, 16384, 16384, 12.8));
  {
    SpaceQuery r = query(Kernel::bwd_dx, DType::bf16, 12288, 16384, 18.8);
    r.residual = true;
    EXPECT_EQ(to_string(default_config(r)), "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=132 cluster_size=2");
    // An fp32 residual stream (not measured at two CTAs a SM): the rule before.
    Traits t{Kernel::bwd_dx, DType::bf16, DType::bf16, true, true};
    t.residual = DType::f32;
    const Config c = default_config(r, instances_for(t, r.n, max_vec(r.dtype)));
    EXPECT_EQ(to_string(c), "block_size=8192 num_warps=16 rows_per_cta=4 group_size_m=66 cluster_size=2");
  }
  // 16 slabs of 8192 columns at two CTAs a SM (since session 40), and as
  // many as a row of 65537-131071 columns needs (gen::wide_clusters: 15 at
  // N = 122880, 13 at 100000, the last partial).
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 131072, 2048), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=16 cluster_size=16");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 122880, 2048), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=16 cluster_size=15");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 100000, 2048), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=20 cluster_size=13");
  // 16384-column slabs, as many as the row needs: 13 at N = 200000; the
  // forward's 7 at 100000, 13 at 200000.
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 200000, 1024), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=9 cluster_size=13");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f16, 200000, 1024), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=9 cluster_size=13")
      << "without traits the weight slab is sized fp32: 3 stages do not fit";
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 100000, 2048), "block_size=16384 num_warps=8 rows_per_cta=1 group_size_m=113 cluster_size=7")
      << "the slabs in shared memory over the 7 CTAs (session 41)";
  // 16-bit rows of more than 64K columns whose 16384-column slabs are 5-13:
  // the slabs in shared memory over the gap clusters (8 warps, one wave;
  // session 41).
  EXPECT_EQ(def(Kernel::fwd, DType::f16, 200000, 1024), "block_size=16384 num_warps=8 rows_per_cta=1 group_size_m=60 cluster_size=13");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 150000, 1789), "block_size=16384 num_warps=8 rows_per_cta=1 group_size_m=79 cluster_size=10");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 230000, 1167), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=7 cluster_size=15")
      << "15 CTAs: the wide forward (105 SMs at once)";
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 220000, 1167), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=8 cluster_size=14");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 240000, 1118), "block_size=32768 num_warps=16 rows_per_cta=1 group_size_m=49 cluster_size=8")
      << "the fifteenth slab more than half full: bf16 keeps the slabs in shared memory over clusters of 8";
  EXPECT_EQ(def(Kernel::fwd, DType::f16, 240000, 1118), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=7 cluster_size=15");
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 200000, 1024), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=9 cluster_size=13");
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 100000, 1024), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=18 cluster_size=7");
  // 16385-65536 columns: the fp32 backward over as many 8192-column slabs as
  // the row needs (5 at N = 40000, 7 at 50000); the 16-bit LayerNorm forward
  // in one CTA's shared memory up to 24576 columns, over three 16384-column
  // slabs from 32769 to 49152 columns, then the slabs in shared memory as
  // before; the fp32 forward over 3, 5 or 6 slabs of 8192 columns, four of
  // 16384 for 7 (RMSNorm from 5 slabs), the rules before at 4 and 8.
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 40000, 3355), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=26 cluster_size=5");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 50000, 2684), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=18 cluster_size=7");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 40000, 6710), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=44 cluster_size=3");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 50000, 5368), "block_size=32768 num_warps=16 rows_per_cta=1 group_size_m=198 cluster_size=2");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 34000, 6710), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=44 cluster_size=3")
      << "a third slab less than a quarter full (session 41: 36000, 20% full, 72.5% of copy against 61.6)";
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 20000, 13421), "block_size=20480 num_warps=8 rows_per_cta=1 group_size_m=0")
      << "session 43: a tile of 20480 columns in shared memory";
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 23000, 11671), "block_size=32768 num_warps=16 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 28000, 9586), "block_size=16384 num_warps=16 rows_per_cta=4 group_size_m=66 cluster_size=2")
      << "the second slab part empty: 4 stages (session 42)";
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 32768, 8192), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=66 cluster_size=2");
  // Session 42: 16-bit rows of 1025-4095 columns that are not a power of
  // two, 32 elements a thread, one row a CTA (bandwidth regime only); fp32
  // backward rows of 4097-8191 columns on the register kernel's whole row;
  // the wide backward's fine split for 131073-245760 columns.
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 1536, 174762), "block_size=2048 num_warps=2 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(Kernel::fwd, DType::f16, 3328, 80659), "block_size=4096 num_warps=4 rows_per_cta=1 group_size_m=0");
  EXPECT_NE(def(Kernel::fwd, DType::bf16, 2560, 4096), "block_size=4096 num_warps=4 rows_per_cta=1 group_size_m=0")
      << "M = 4096 keeps its rule";
  EXPECT_NE(def(Kernel::fwd, DType::bf16, 2048, 131072), "block_size=2048 num_warps=2 rows_per_cta=1 group_size_m=0")
      << "a power of two keeps its rule";
  EXPECT_NE(def(Kernel::fwd, DType::bf16, 3840, 69905), "block_size=4096 num_warps=4 rows_per_cta=1 group_size_m=0")
      << "3840 columns keep theirs (99.4% of copy against 98.9)";
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 5120, 26214), "block_size=6144 num_warps=16 rows_per_cta=1 group_size_m=132")
      << "session 43: a tile of 6144 up to 6144 columns";
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 6145, 26214), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 1152, 116508), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 3328, 40329), "block_size=4096 num_warps=8 rows_per_cta=1 group_size_m=264");
  EXPECT_NE(def(Kernel::bwd_dx, DType::f32, 1920, 69905), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=264")
      << "7/8 of the power of two above or more: the rule before";
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 30720, 4369), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=33 cluster_size=4");
  EXPECT_EQ(def(Kernel::fwd, DType::bf16, 640, 419430), "block_size=1024 num_warps=2 rows_per_cta=2 group_size_m=0");
  {
    SpaceQuery q = query(Kernel::fwd, DType::bf16, 4608, 58254, 18.8);
    q.norm = Norm::rms;
    EXPECT_EQ(to_string(default_config(q)), "block_size=6144 num_warps=8 rows_per_cta=1 group_size_m=0")
        << "RMSNorm 4097-6144: one tile of 6144 (session 43)";
    q.norm = Norm::layer;
    EXPECT_EQ(to_string(default_config(q)), "block_size=5120 num_warps=8 rows_per_cta=1 group_size_m=0")
        << "LayerNorm: tiles of a multiple of 1024";
  }
  // Session 43: the 16-bit forward's single tiles of other than a power of
  // two, no residual, from 16 rows an SM (2112 on 132 SMs), an H200's rule.
  {
    const auto tile = [&](Norm norm, DType d, std::int64_t n, std::int64_t m, double bw = 18.8, bool residual = false) {
      SpaceQuery q = query(Kernel::fwd, d, n, m, bw);
      q.norm = norm;
      q.residual = residual;
      const Config c = default_config(q);
      return std::to_string(c.block_size) + "/" + std::to_string(c.num_warps) + "/" + std::to_string(c.rows_per_cta) +
             (c.cluster_size > 1 ? "/c" + std::to_string(c.cluster_size) : "");
    };
    const Norm L = Norm::layer, R = Norm::rms;
    struct Edge {
      Norm norm;
      DType d;
      std::int64_t n;
      const char* want;  // block/warps/rows; "!" + config: anything but it
      const char* why;
    };
    for (const Edge& e : std::vector<Edge>{
             {L, DType::bf16, 2049, "2560/4/1", ""},
             {L, DType::f16, 2560, "2560/4/1", ""},
             {L, DType::bf16, 2561, "3072/4/1", ""},
             {L, DType::bf16, 3071, "3072/4/1", ""},
             {L, DType::bf16, 3072, "4096/4/1", "session 42's 32 elements a thread"},
             {L, DType::bf16, 4097, "5120/8/1", ""},
             {L, DType::bf16, 6144, "6144/8/1", ""},
             {L, DType::bf16, 7168, "!7168/8/1", "89.4% of copy against 98.5 for its rule"},
             {L, DType::bf16, 8193, "10240/8/1", ""},
             {L, DType::bf16, 9216, "10240/8/1", "16-byte copies, not 9216 of 8-byte"},
             {L, DType::bf16, 12289, "16384/16/1", "the register row above"},
             {L, DType::bf16, 16384, "16384/16/1", "a power of two keeps its rule"},
             {L, DType::bf16, 16385, "18432/8/1", ""},
             {L, DType::bf16, 20480, "20480/8/1", ""},
             {L, DType::bf16, 22528, "22528/8/1", ""},
             {L, DType::bf16, 22529, "32768/16/1", ""},
             {R, DType::bf16, 1025, "1536/4/1", ""},
             {R, DType::bf16, 1536, "!1536/4/1", "1536 keeps session 42's rule"},
             {R, DType::bf16, 2049, "3072/4/1", ""},
             {R, DType::f16, 5632, "6144/8/1", ""},
             {R, DType::bf16, 6145, "8192/8/1", ""},
             {R, DType::f16, 8191, "8192/8/1", ""},
             {R, DType::bf16, 8193, "12288/16/1", ""},
             {R, DType::bf16, 12288, "12288/16/1", ""},
             {R, DType::bf16, 16385, "20480/16/1", ""},
             {R, DType::f16, 20480, "20480/16/1", ""},
             {R, DType::bf16, 20481, "!20480/16/1", ""}}) {
      SCOPED_TRACE(std::string(e.norm == L ? "LayerNorm " : "RMSNorm ") + std::string(to_string(e.d)) + " N=" +
                   std::to_string(e.n));
      const std::string got = tile(e.norm, e.d, e.n, 100000);
      if (e.want[0] == '!') {
        EXPECT_NE(got, e.want + 1) << e.why;
      } else {
        EXPECT_EQ(got, e.want) << e.why;
      }
    }
    EXPECT_EQ(tile(L, DType::bf16, 5120, 2112), "5120/8/1") << "16 rows an SM";
    EXPECT_NE(tile(L, DType::bf16, 5120, 2111), "5120/8/1") << "fewer rows";
    EXPECT_NE(tile(L, DType::bf16, 5120, 100000, 12.8), "5120/8/1") << "an H100";
    EXPECT_NE(tile(L, DType::bf16, 5120, 100000, 18.8, true), "5120/8/1") << "with a residual";
    EXPECT_NE(tile(L, DType::f32, 5120, 100000), "5120/8/1") << "fp32 rows";
  }
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 7168, 18724), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 8192, 16384), "block_size=4096 num_warps=8 rows_per_cta=4 group_size_m=66 cluster_size=2");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 150000, 1789), "block_size=12288 num_warps=16 rows_per_cta=3 group_size_m=9 cluster_size=13");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 150000, 894), "block_size=10240 num_warps=16 rows_per_cta=2 group_size_m=7 cluster_size=15");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 170000, 789), "block_size=12288 num_warps=32 rows_per_cta=3 group_size_m=8 cluster_size=14");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 200000, 1342), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=9 cluster_size=13")
      << "no finer split beats 13 slabs of 16384";
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 20000, 6710), "block_size=8192 num_warps=8 rows_per_cta=4 group_size_m=44 cluster_size=3");
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 45000, 2982), "block_size=8192 num_warps=8 rows_per_cta=4 group_size_m=22 cluster_size=6");
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 57000, 2354), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=33 cluster_size=4");
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 28000, 4793), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=66 cluster_size=2")
      << "four slabs of 8192: the rule before";
  // (The H100's rules take the gap clusters of 8192-column slabs as well, at
  // one CTA a SM; not measured there.)
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 50000, 2048, 12.8), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=18 cluster_size=7");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 131072, 2048, 12.8), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=7 cluster_size=16")
      << "the H100's rule";
  // fp32 rows of more than 128K columns, forward: 3 stages (2 on an H100, and
  // with an fp32 residual beside).
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 262144, 512), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=7 cluster_size=16");
  EXPECT_EQ(def(Kernel::fwd, DType::f32, 262144, 512, 12.8), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=7 cluster_size=16");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f16, 262144, 1024), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=7 cluster_size=16")
      << "without traits the weight slab is sized fp32: 3 stages do not fit";
  {
    // 16-bit rows of 256K columns with a 16-bit weight: 3 stages (bf16 since
    // session 41, with the lane sums; with an fp32 weight 3 stages of x and
    // dy do not fit).
    const SpaceQuery q = query(Kernel::bwd_dx, DType::f16, 262144, 1024, 18.8);
    const auto with_w = [&](DType x, DType w) {
      SpaceQuery qq = q;
      qq.dtype = x;
      return to_string(default_config(qq, instances_for(Traits{Kernel::bwd_dx, x, w, true, true}, q.n, max_vec(x))));
    };
    EXPECT_EQ(with_w(DType::f16, DType::f16), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=7 cluster_size=16");
    EXPECT_EQ(with_w(DType::bf16, DType::bf16), "block_size=16384 num_warps=16 rows_per_cta=3 group_size_m=7 cluster_size=16");
    EXPECT_EQ(with_w(DType::f16, DType::f32), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=7 cluster_size=16");
  }
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 262144, 512), "block_size=16384 num_warps=32 rows_per_cta=2 group_size_m=7 cluster_size=16");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 262144, 512, 12.8), "block_size=16384 num_warps=32 rows_per_cta=2 group_size_m=7 cluster_size=16")
      << "the H100's rule (wide_bwd_default: 32 warps there since session 32)";
  // Training sizes (16-48 rows a SM): the 16-bit LayerNorm backward of
  // 1025-4096 columns in one CTA a SM (bench/results/s37, call 5), of
  // 513-1024 in two of 4 warps (s49, call 2; the H100's rule gives the same
  // there); not RMSNorm, fp32 or other M (the fused add: its own rule,
  // below).
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 4096), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f16, 600, 2112), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 2048, 6336), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=132");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 3000, 4096), "block_size=4096 num_warps=16 rows_per_cta=2 group_size_m=132");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 512, 4096), "block_size=512 num_warps=4 rows_per_cta=2 group_size_m=264");
  for (const auto& [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{256, 4096}, {4097, 4096}, {1024, 2111}, {1024, 6337}})
    EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, n, m), def(Kernel::bwd_dx, DType::bf16, n, m, 12.8)) << n << " x " << m;
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 4096, 12.8), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264");
  // fp32 rows of 257-2048 columns (LayerNorm, RMSNorm) over more than 16
  // rows a SM take the same configs on an H200 (session 50, calls 2-3); the
  // H100 keeps its rule, and 16 rows a SM and 4096 columns the rules after.
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 1024, 4096), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 512, 6336), "block_size=512 num_warps=4 rows_per_cta=2 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 2048, 4096), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=132");
  EXPECT_NE(def(Kernel::bwd_dx, DType::f32, 1024, 4096, 12.8), def(Kernel::bwd_dx, DType::f32, 1024, 4096));
  EXPECT_NE(def(Kernel::bwd_dx, DType::f32, 1024, 2112), def(Kernel::bwd_dx, DType::f32, 1024, 4096)) << "16 rows a SM";
  EXPECT_NE(def(Kernel::bwd_dx, DType::f32, 4096, 4096), "block_size=4096 num_warps=16 rows_per_cta=2 group_size_m=132");
  // fp32 rows of 2305-3584 columns there (session 59): 8 columns a thread,
  // 2 rows, one CTA a SM, on the row's tile to 3072 where a multiple of 256.
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 2560, 4096), "block_size=2560 num_warps=10 rows_per_cta=2 group_size_m=132");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 3072, 6336), "block_size=3072 num_warps=12 rows_per_cta=2 group_size_m=132");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 3200, 2113), "block_size=4096 num_warps=16 rows_per_cta=2 group_size_m=132");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 3584, 4096), "block_size=4096 num_warps=16 rows_per_cta=2 group_size_m=132");
  EXPECT_NE(def(Kernel::bwd_dx, DType::f32, 2304, 4096), "block_size=2304 num_warps=9 rows_per_cta=2 group_size_m=132");
  EXPECT_NE(def(Kernel::bwd_dx, DType::f32, 2560, 6337), "block_size=2560 num_warps=10 rows_per_cta=2 group_size_m=132");
  EXPECT_NE(def(Kernel::bwd_dx, DType::f32, 2560, 4096, 12.8), "block_size=2560 num_warps=10 rows_per_cta=2 group_size_m=132");
  EXPECT_NE(def(Kernel::bwd_dx, DType::f32, 256, 4096), "block_size=256 num_warps=4 rows_per_cta=2 group_size_m=264");
  // Past 48 rows a SM (session 50, call 6): 16-bit 513-1024 columns in two
  // CTAs a SM to 64 rows, four to 256 (RMSNorm too); 2048 in two of 8 warps
  // to 128 rows; 4096 in one of 16 warps to 256 rows (LayerNorm); fp32 of up
  // to 1024 columns on the training config to 64 rows; then the rules after.
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 8448), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1000, 8449), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=528");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f16, 768, 33792), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=528");
  EXPECT_NE(def(Kernel::bwd_dx, DType::bf16, 1024, 33793), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=528");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 2048, 16896), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=264");
  EXPECT_NE(def(Kernel::bwd_dx, DType::bf16, 2048, 16897), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 3000, 33792), "block_size=4096 num_warps=16 rows_per_cta=2 group_size_m=132");
  EXPECT_NE(def(Kernel::bwd_dx, DType::bf16, 4096, 33793), "block_size=4096 num_warps=16 rows_per_cta=2 group_size_m=132");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::f32, 1024, 8448), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264");
  EXPECT_NE(def(Kernel::bwd_dx, DType::f32, 1024, 8449), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264");
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1024, 16384, 12.8), "block_size=1024 num_warps=2 rows_per_cta=1 group_size_m=1056")
      << "the H100 keeps its rule (as before session 50)";
  {
    SpaceQuery q = query(Kernel::bwd_dx, DType::bf16, 1024, 16384, 18.8);
    q.norm = Norm::rms;
    EXPECT_EQ(to_string(default_config(q)), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=528") << "RMSNorm";
    q.n = 2048;
    EXPECT_EQ(to_string(default_config(q)), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=264")
        << "RMSNorm 2048 to 128 rows a SM (call 12)";
    q.n = 4096;
    EXPECT_EQ(to_string(default_config(q)), "block_size=4096 num_warps=16 rows_per_cta=2 group_size_m=132") << "RMSNorm 4096";
    q.m = 16897;
    EXPECT_NE(to_string(default_config(q)), "block_size=4096 num_warps=16 rows_per_cta=2 group_size_m=132")
        << "RMSNorm 4096 past 128 rows a SM";
    q.m = 16384;
    q.n = 2048;
    q.norm = Norm::layer;
    q.residual = true;
    EXPECT_EQ(to_string(default_config(q)), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=264")
        << "the fused form's own rule, the same config (call 8)";
  }
  {
    SpaceQuery q = query(Kernel::bwd_dx, DType::f32, 1024, 4096, 18.8);
    q.norm = Norm::rms;
    EXPECT_EQ(to_string(default_config(q)), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264") << "RMSNorm";
  }
  for (bool rms_norm : {true, false}) {
    SpaceQuery q = query(Kernel::bwd_dx, DType::bf16, 1024, 4096, 18.8);
    q.norm = rms_norm ? Norm::rms : Norm::layer;
    q.residual = !rms_norm;
    SpaceQuery h100 = q;
    h100.dram_bytes_per_sm_cycle = 12.8;
    if (rms_norm) {
      EXPECT_EQ(to_string(default_config(q)), to_string(default_config(h100))) << "RMSNorm: not under the rule";
    } else {
      // The fused add: a rule of its own since session 49, the same config.
      EXPECT_EQ(to_string(default_config(q)), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264");
      EXPECT_NE(to_string(default_config(q)), to_string(default_config(h100))) << "an H200 rule";
    }
  }
  // The fused backward of 16-bit rows at training sizes (257-2048 columns,
  // 16-48 rows a SM), LayerNorm or RMSNorm (session 49, call 4).
  for (Norm norm : {Norm::layer, Norm::rms}) {
    SpaceQuery q = query(Kernel::bwd_dx, DType::bf16, 512, 4096, 18.8);
    q.norm = norm;
    q.residual = true;
    EXPECT_EQ(to_string(default_config(q)), "block_size=512 num_warps=4 rows_per_cta=2 group_size_m=264");
    q.n = 2048;
    EXPECT_EQ(to_string(default_config(q)), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=132");
    q.n = 1000;
    q.m = 2112;
    EXPECT_EQ(to_string(default_config(q)), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264");
    q.m = 16897;
    EXPECT_NE(to_string(default_config(q)), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264")
        << "past 128 rows a SM (48 until session 50's call 8)";
  }
  // Beside an fp32 residual stream the same configs at every N of the rule
  // (session 50, call 1; session 49 had taken 1024 alone), as the launcher
  // sees them: through the instances of those traits.
  for (Norm norm : {Norm::layer, Norm::rms})
    for (const auto& [n, want] : std::vector<std::pair<std::int64_t, std::string>>{
             {512, "block_size=512 num_warps=4 rows_per_cta=2 group_size_m=264"},
             {1024, "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264"},
             {2048, "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=132"}}) {
      SpaceQuery q = query(Kernel::bwd_dx, DType::bf16, n, 4096, 18.8);
      q.norm = norm;
      q.residual = true;
      Traits t{Kernel::bwd_dx, DType::bf16, DType::bf16, true, norm == Norm::layer};
      t.norm = norm;
      t.residual = DType::f32;
      EXPECT_EQ(to_string(default_config(q, instances_for(t, n, max_vec(DType::bf16)))), want)
          << "fp32 stream, " << to_string(norm) << " " << n;
    }
  // Past 48 rows a SM, to 128, a residual in x's dtype (session 50, call 8):
  // 1024 columns two CTAs a SM of 4 warps; 2048 two of 8 warps (LayerNorm);
  // 4096 one of 16 warps; not beside an fp32 stream, nor past 128 rows.
  for (Norm norm : {Norm::layer, Norm::rms}) {
    SpaceQuery q = query(Kernel::bwd_dx, DType::bf16, 1024, 16384, 18.8);
    q.norm = norm;
    q.residual = true;
    Traits t{Kernel::bwd_dx, DType::bf16, DType::bf16, true, norm == Norm::layer};
    t.norm = norm;
    t.residual = DType::bf16;
    const auto at = [&](std::int64_t n, std::int64_t m, DType stream = DType::bf16) {
      SpaceQuery qq = q;
      qq.n = n;
      qq.m = m;
      Traits tt = t;
      tt.residual = stream;
      return to_string(default_config(qq, instances_for(tt, n, max_vec(DType::bf16))));
    };
    EXPECT_EQ(at(1000, 16384), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264");
    EXPECT_EQ(at(4096, 8192), "block_size=4096 num_warps=16 rows_per_cta=2 group_size_m=132");
    EXPECT_NE(at(1024, 16897), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264") << "past 128 rows a SM";
    if (norm == Norm::layer) {
      EXPECT_EQ(at(1024, 16384, DType::f32), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264") << "fp32 stream";
      EXPECT_EQ(at(2048, 16384, DType::f32), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=132") << "fp32 stream";
      EXPECT_NE(at(4096, 16384, DType::f32), "block_size=4096 num_warps=16 rows_per_cta=2 group_size_m=132")
          << "fp32 stream 4096: not measured";
    } else {
      EXPECT_NE(at(1024, 16384, DType::f32), "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264")
          << "RMSNorm beside an fp32 stream: not measured there";
    }
    if (norm == Norm::layer) {
      EXPECT_EQ(at(2048, 16384), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=264");
    } else {
      EXPECT_NE(at(2048, 16384), "block_size=2048 num_warps=8 rows_per_cta=2 group_size_m=264") << "RMSNorm 2048";
    }
  }
  {
    // 16-bit RMSNorm + add of 4096 columns past 256 rows a SM: 4 warps (32
    // elements a thread; s50 call 2); not at M = 4096.
    SpaceQuery f = query(Kernel::fwd, DType::bf16, 4096, 65536, 18.8);
    f.norm = Norm::rms;
    f.residual = true;
    EXPECT_EQ(to_string(default_config(f)), "block_size=4096 num_warps=4 rows_per_cta=1 group_size_m=0");
    f.m = 4096;
    EXPECT_NE(to_string(default_config(f)), "block_size=4096 num_warps=4 rows_per_cta=1 group_size_m=0");
  }
  // The fp32 backward of a fused residual add: 8 columns a thread.
  const auto fused = [&](std::int64_t n, Norm norm, double bpc = 18.8) {
    SpaceQuery q = query(Kernel::bwd_dx, DType::f32, n, (std::int64_t{1} << 27) / n, bpc);
    q.residual = true;
    q.norm = norm;
    return to_string(default_config(q));
  };
  EXPECT_EQ(fused(256, Norm::layer), "block_size=256 num_warps=8 rows_per_cta=8 group_size_m=264");
  EXPECT_EQ(fused(1024, Norm::rms), "block_size=1024 num_warps=8 rows_per_cta=2 group_size_m=264");
  EXPECT_EQ(fused(4096, Norm::layer), "block_size=4096 num_warps=16 rows_per_cta=1 group_size_m=132");
  EXPECT_EQ(fused(8192, Norm::rms), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132");
  // LayerNorm + add at 4097-8192 too since its rows are staged (192 KB); the
  // H100 keeps the wide kernel.
  EXPECT_EQ(fused(8192, Norm::layer), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132");
  EXPECT_EQ(fused(6000, Norm::layer), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132");
  EXPECT_NE(fused(8192, Norm::layer, 12.8), fused(8192, Norm::layer)) << "an H100: not measured";
  // The forward's row of 12289-16384 columns in registers (session 46):
  // LayerNorm + add in 16 warps, 16-bit RMSNorm in 32; the H100 keeps its rules.
  for (double bpc : {18.8, 12.8}) {
    SpaceQuery f = query(Kernel::fwd, DType::bf16, 16384, 16384, bpc);
    f.residual = true;
    const std::string add16 = to_string(default_config(f));
    f.dtype = DType::f32;
    f.m = 8192;
    const std::string addf = to_string(default_config(f));
    f.residual = false;
    f.norm = Norm::rms;
    f.dtype = DType::bf16;
    const std::string rms16 = to_string(default_config(f));
    if (bpc > 16) {
      EXPECT_EQ(add16, "block_size=16384 num_warps=16 rows_per_cta=1 group_size_m=0");
      EXPECT_EQ(addf, "block_size=16384 num_warps=16 rows_per_cta=1 group_size_m=0");
      EXPECT_EQ(rms16, "block_size=16384 num_warps=32 rows_per_cta=1 group_size_m=0");
    } else {
      EXPECT_NE(add16, "block_size=16384 num_warps=16 rows_per_cta=1 group_size_m=0");
      EXPECT_NE(addf, "block_size=16384 num_warps=16 rows_per_cta=1 group_size_m=0");
      EXPECT_NE(rms16, "block_size=16384 num_warps=32 rows_per_cta=1 group_size_m=0");
    }
  }
  // And from 16 rows an SM (session 46: M = 4096, 94.7% of copy against 58.8
  // for 4096-column tiles), not below, nor at 4096 columns.
  for (std::int64_t m : {2112, 4096, 8192}) {
    for (Norm norm : {Norm::layer, Norm::rms}) {
      SpaceQuery q = query(Kernel::bwd_dx, DType::f32, 8192, m, 18.8);
      q.residual = true;
      q.norm = norm;
      EXPECT_EQ(to_string(default_config(q)), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132") << m;
      q.m = 1024;
      EXPECT_NE(to_string(default_config(q)), "block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132");
      // 4096 columns keep the rules after it (the rule's config there: a
      // row of 512 threads, one CTA an SM).
      q.m = m;
      q.n = 4096;
      EXPECT_NE(to_string(default_config(q)), "block_size=4096 num_warps=16 rows_per_cta=1 group_size_m=132");
    }
  }
  {  // 16-bit rows with a residual of 16384 columns: LayerNorm 16 warps, not the H100's 32
     // (RMSNorm: 8 warps, 3 stages, one CTA a SM with dz staged; session 46).
    SpaceQuery q = query(Kernel::bwd_dx, DType::bf16, 16384, 16384, 18.8);
    q.residual = true;
    EXPECT_EQ(to_string(default_config(q)), "block_size=8192 num_warps=16 rows_per_cta=4 group_size_m=66 cluster_size=2");
    q.norm = Norm::rms;
    EXPECT_EQ(to_string(default_config(q)), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=66 cluster_size=2");
    q.norm = Norm::layer;
    q.dram_bytes_per_sm_cycle = 12.8;
    EXPECT_EQ(to_string(default_config(q)), "block_size=8192 num_warps=32 rows_per_cta=4 group_size_m=66 cluster_size=2");
  }
  EXPECT_NE(fused(4096, Norm::layer), fused(4096, Norm::layer, 12.8));
  // Every fast-memory default is a valid instance, and a config of the space
  // where it is not the H100's.
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx})
    for (DType d : {DType::f32, DType::f16, DType::bf16})
      for (std::int64_t n : kNs)
        for (std::int64_t m : {std::int64_t{1}, std::int64_t{4096}, std::max<std::int64_t>(1, (std::int64_t{1} << 28) / n)})
          for (bool residual : {false, true})
            for (Norm norm : {Norm::layer, Norm::rms}) {
              SpaceQuery q = query(k, d, n, m, 18.8);
              q.residual = residual;
              q.norm = norm;
              Traits t{k, d, d, true, true};
              t.norm = norm;
              if (residual) t.residual = d;
              const ConfigFilter valid = instances_for(t, n, max_vec(d));
              const Config c = default_config(q, valid);
              SpaceQuery h100 = q;
              h100.dram_bytes_per_sm_cycle = 12.8;
              const bool own_rule = !(c == default_config(h100, valid));
              SCOPED_TRACE(std::string(to_string(k)) + " " + std::string(to_string(d)) + " N=" + std::to_string(n) +
                           " M=" + std::to_string(m) + (residual ? " residual" : "") + " " + to_string(c));
              EXPECT_NO_THROW(make_instance(t, c, n, max_vec(d)));
              if (own_rule) {
                // The space the tuner searches (rt::space_query: no residual,
                // no norm in the query; the fused forward's exact tiles are
                // in it so).
                const auto space = search_space(query(k, d, n, m, 18.8));
                EXPECT_NE(std::find(space.begin(), space.end(), c), space.end()) << "not in the search space";
              }
            }
}

// From default_m_bound(sm_count) rows on, the default does not depend on M:
// the launcher keys default plans by M only below it (rt::PlanKey), so an M
// rule or a grid clip above it would make a plan depend on which M came
// first. Every kernel, dtype, norm, residual and memory speed, N from 1 to
// 262144 (odd ones too), three SM counts.
TEST(Default, NoMRuleFromTheBound) {
  EXPECT_EQ(default_m_bound(132), 67584);
  EXPECT_EQ(default_m_bound(78), 39936);
  EXPECT_EQ(default_m_bound(8), 8193);
  EXPECT_EQ(default_m_bound(0), 8193);
  int checked = 0;
  for (int sms : {132, 114, 78})
    for (Kernel k : {Kernel::fwd, Kernel::bwd_dx, Kernel::bwd_dwdb})
      for (DType d : {DType::f32, DType::f16, DType::bf16})
        for (std::int64_t n : {1, 7, 256, 1000, 1024, 2048, 3000, 4096, 6000, 8192, 12288, 12289, 16384, 20000, 32768,
                               50001, 65536, 100000, 131072, 200000, 262144})
          for (Norm norm : {Norm::layer, Norm::rms})
            for (bool residual : {false, true})
              for (double bpc : {0.0, 12.8, 18.8}) {
                const std::int64_t bound = default_m_bound(sms);
                SpaceQuery q{k, d, n, bound, sms, 90};
                q.norm = norm;
                q.residual = residual && k != Kernel::bwd_dwdb;
                q.dram_bytes_per_sm_cycle = bpc;
                const Config at_bound = default_config(q);
                for (std::int64_t m : {bound + 1, 2 * bound + 3, std::int64_t{1} << 20, std::int64_t{1} << 31}) {
                  q.m = m;
                  ASSERT_EQ(to_string(default_config(q)), to_string(at_bound))
                      << "M = " << m << " against " << bound << ": kernel " << static_cast<int>(k) << " dtype "
                      << static_cast<int>(d) << " N = " << n << " norm " << static_cast<int>(norm) << " residual "
                      << residual << " " << bpc << " B/cycle, " << sms << " SMs";
                  ++checked;
                }
              }
  EXPECT_GT(checked, 10000);
}

// Rows of 16385-262144 columns on sm_90 read x once: the default is never a
// tiled kernel (a row over several tiles of one CTA, x read twice, dW/dB
// through global memory), at any length. Rows whose slab count is not a
// power of two fell back to tiles before session 40 (the bf16 backward at
// N = 100000 ran at 20% of copy on an H200, 40000 at 34.5%): N here is
// every length in steps that cross each slab boundary, in each dtype, norm,
// residual (in x's dtype) and weight dtype, on an H100's and an H200's
// rules, with the launcher's filter (the call's traits).
TEST(Default, LongRowsReadXOnce) {
  int checked = 0;
  std::vector<std::string> tiled;
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx})
    for (DType d : {DType::f32, DType::f16, DType::bf16})
      for (DType w : {d, DType::f32})
        for (Norm norm : {Norm::layer, Norm::rms})
          for (bool residual : {false, true})
            for (double bpc : {12.8, 18.8})
              for (std::int64_t n = 16384 + 8; n <= 262144; n += 2056) {
                if (w != d && d == DType::f32) continue;
                Traits t{k, d, w, true, norm == Norm::layer};
                t.norm = norm;
                if (residual) t.residual = d;
                SpaceQuery q{k, d, n, (std::int64_t{512} << 20) / (n * static_cast<std::int64_t>(dtype_size(d))), 132, 90};
                q.norm = norm;
                q.residual = residual;
                q.dram_bytes_per_sm_cycle = bpc;
                const Config c = default_config(q, instances_for(t, n, max_vec(d)));
                ++checked;
                if (static_cast<std::int64_t>(c.block_size) * std::max(1, c.cluster_size) < n)
                  tiled.push_back((k == Kernel::fwd ? "fwd " : "bwd ") + std::string(to_string(d)) + " w" +
                                  std::string(to_string(w)) + (norm == Norm::rms ? " rms" : "") + (residual ? " +res" : "") +
                                  " N=" + std::to_string(n) + " bpc " + std::to_string(bpc) + ": " + to_string(c));
              }
  EXPECT_GT(checked, 5000);
  for (const std::string& s : tiled) ADD_FAILURE() << s;
  // E.g. fp32 rows beside an fp32 residual at N = 40000: the forward over
  // three 16384-column slabs (a slot for the residual), the backward over
  // five of 8192; RMSNorm + add in bf16 keeps the slabs in shared memory
  // forward (as before), the backward five of 8192.
  const auto with = [](Kernel k, DType d, Norm norm) {
    Traits t{k, d, d, true, norm == Norm::layer};
    t.norm = norm;
    t.residual = d;
    SpaceQuery q{k, d, 40000, 3000, 132, 90};
    q.norm = norm;
    q.residual = true;
    q.dram_bytes_per_sm_cycle = 18.8;
    return to_string(default_config(q, instances_for(t, q.n, max_vec(d))));
  };
  EXPECT_EQ(with(Kernel::fwd, DType::f32, Norm::layer), "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=44 cluster_size=3");
  EXPECT_EQ(with(Kernel::bwd_dx, DType::f32, Norm::layer), "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=26 cluster_size=5");
  EXPECT_NE(with(Kernel::fwd, DType::bf16, Norm::rms).find("block_size=32768 num_warps=16 rows_per_cta=1"), std::string::npos);
  EXPECT_EQ(with(Kernel::bwd_dx, DType::bf16, Norm::rms), "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=26 cluster_size=5");
  std::printf("[ long     ] %d long-row defaults, %zu tiled\n", checked, tiled.size());
}

// The forward's whole row in one tile of other than a power of two (session
// 42): N rounded up to a multiple of the CTA's 16- or 8-byte accesses, one
// row a CTA of 4, 8 or 16 warps; not at a power of two, with a residual, at
// 1024 columns or fewer, nor (where a thread would hold more than 32
// elements) below sm_90; every such config a valid instance. The
// backward's (session 43): in registers and 16-byte accesses alone.
TEST(Space, ForwardTilesOfAnyMultiple) {
  // (Rows of other than a power of two of threads: Space.SegmentedRows.)
  const auto odd_blocks = [](SpaceQuery q) {
    std::vector<Config> out;
    for (const Config& c : search_space(q))
      if (is_odd_tile(c) && !has_segmented_rows(q.kernel, c)) out.push_back(c);
    return out;
  };
  const SpaceQuery bf16 = query(Kernel::fwd, DType::bf16, 5120, 52428, 18.8);
  const std::vector<Config> got = odd_blocks(bf16);
  EXPECT_NE(std::find(got.begin(), got.end(), Config{5120, 8, 1, 0}), got.end());
  EXPECT_NE(std::find(got.begin(), got.end(), Config{5120, 4, 1, 0}), got.end());
  for (const Config& c : got) {
    SCOPED_TRACE(to_string(c));
    const InstanceKey key = make_instance(Traits{Kernel::fwd, DType::bf16, DType::bf16, true, true}, c, 5120, 8);
    EXPECT_EQ(key.block_size % (32 * key.num_warps * key.vec), 0);
    EXPECT_LT(key.block_size, 8192);
  }
  EXPECT_TRUE(odd_blocks(query(Kernel::fwd, DType::bf16, 4096, 65536, 18.8)).empty()) << "a power of two";
  EXPECT_TRUE(odd_blocks(query(Kernel::fwd, DType::bf16, 1000, 65536, 18.8)).empty()) << "1024 columns or fewer";
  // The backward's tiles in registers alone (at most 16 elements a thread),
  // in 16-byte accesses alone.
  std::vector<Config> bwd;
  for (const Config& c : odd_blocks(query(Kernel::bwd_dx, DType::f32, 4608, 29127, 18.8)))
    if (std::none_of(bwd.begin(), bwd.end(), [&c](const Config& o) { return o.block_size == c.block_size && o.num_warps == c.num_warps; }))
      bwd.push_back(Config{c.block_size, c.num_warps, c.rows_per_cta, 0});
  EXPECT_EQ(bwd, (std::vector<Config>{Config{6144, 16, 1, 0}})) << "fp32 4608: 6144 in 16 warps alone";
  EXPECT_TRUE(odd_blocks(query(Kernel::bwd_dx, DType::bf16, 4608, 58254, 18.8)).empty())
      << "bf16 4608: 6144 in 16 warps would take 8-byte accesses";
  for (const Config& c : odd_blocks(query(Kernel::bwd_dx, DType::f32, 1152, 116508, 18.8))) {
    SCOPED_TRACE(to_string(c));
    const InstanceKey key = make_instance(Traits{Kernel::bwd_dx, DType::f32, DType::f32, true, true}, c, 1152, 4);
    EXPECT_EQ(key.block_size % (32 * key.num_warps * key.vec), 0);
    EXPECT_LE(key.block_size / (32 * key.num_warps), 16);
  }
  EXPECT_FALSE(odd_blocks(query(Kernel::bwd_dx, DType::f32, 1152, 116508, 18.8)).empty());
  EXPECT_TRUE(odd_blocks(query(Kernel::bwd_dx, DType::bf16, 9216, 29127, 18.8)).empty()) << "more than 16 elements a thread";
  SpaceQuery res = bf16;
  res.residual = true;
  EXPECT_TRUE(odd_blocks(res).empty()) << "with a residual";
  SpaceQuery a100 = bf16;
  a100.cc = 80;
  EXPECT_FALSE(odd_blocks(a100).empty()) << "the register tiles stay below sm_90";
  for (const Config& c : odd_blocks(a100)) EXPECT_LE(c.block_size / (32 * c.num_warps), 32) << to_string(c);
  EXPECT_FALSE(odd_blocks(query(Kernel::fwd, DType::f32, 9216, 14563, 18.8)).empty());
}

// Session 48's forward of 16-bit LayerNorm rows of 512 columns on an H200
// (bench/results/s48, calls 7-8): 16 threads a row in 512-thread CTAs from
// default_m_bound rows on; not below it (M = 4096 measured slower), not for
// RMSNorm, a residual, fp32, N = 256 or an H100.
TEST(Default, HalfLayerNorm512On16ThreadsARow) {
  const auto def = [](DType d, std::int64_t n, std::int64_t m, Norm norm = Norm::layer, double bpc = 18.8,
                      bool residual = false) {
    SpaceQuery q = query(Kernel::fwd, d, n, m, bpc);
    q.norm = norm;
    q.residual = residual;
    return to_string(default_config(q));
  };
  const std::string rule = to_string(Config{512, 16, 32, 0});
  const std::int64_t bound = default_m_bound(132);
  for (DType d : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(std::string(to_string(d)));
    EXPECT_EQ(def(d, 512, bound), rule);
    EXPECT_EQ(def(d, 512, 524288), rule);
    EXPECT_NE(def(d, 512, bound - 1), rule);
    EXPECT_NE(def(d, 512, 4096), rule);
    EXPECT_NE(def(d, 512, 524288, Norm::rms), rule);
    EXPECT_NE(def(d, 512, 524288, Norm::layer, 18.8, true), rule);
    EXPECT_NE(def(d, 512, 524288, Norm::layer, 12.8), rule);
    EXPECT_NE(def(d, 256, 1048576), rule);
  }
  EXPECT_NE(def(DType::f32, 512, 262144), rule);
}

// Session 55's rows of 256 columns on an H200 (bench/results/s55, calls 5-6),
// since a CTA's rows store their statistics together: 16-bit LayerNorm in 8
// warps of 16 rows, fp32 LayerNorm in 16 warps of 16 rows, 16-bit add +
// LayerNorm in 4 warps of 8 rows, from default_m_bound rows on; not below
// it, not for RMSNorm or fp32 add + LayerNorm, not on an H100 (whose 16-bit
// rows keep 512-thread CTAs of 32 rows).
TEST(Default, Rows256FewerRowsACta) {
  const auto def = [](DType d, std::int64_t m, Norm norm = Norm::layer, bool residual = false, double bpc = 18.8) {
    SpaceQuery q = query(Kernel::fwd, d, 256, m, bpc);
    q.norm = norm;
    q.residual = residual;
    return to_string(default_config(q));
  };
  const std::int64_t bound = default_m_bound(132);
  const std::string half = to_string(Config{256, 8, 16, 0}), fused = to_string(Config{256, 4, 8, 0});
  const std::string single = to_string(Config{256, 16, 16, 0});
  for (DType d : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(std::string(to_string(d)));
    EXPECT_EQ(def(d, bound), half);
    EXPECT_EQ(def(d, 1048576), half);
    EXPECT_EQ(def(d, 1048576, Norm::layer, true), fused);
    EXPECT_NE(def(d, bound - 1), half);
    EXPECT_NE(def(d, 4096), half);
    EXPECT_NE(def(d, 1048576, Norm::rms), half);
    EXPECT_NE(def(d, 1048576, Norm::rms, true), fused);
    EXPECT_EQ(def(d, 1048576, Norm::layer, false, 12.8), to_string(Config{256, 16, 32, 0}));
  }
  EXPECT_EQ(def(DType::f32, 524288), single);
  EXPECT_NE(def(DType::f32, bound - 1), single);
  EXPECT_NE(def(DType::f32, 524288, Norm::rms), single);
  EXPECT_NE(def(DType::f32, 524288, Norm::layer, true), fused);
  EXPECT_NE(def(DType::f32, 524288, Norm::layer, false, 12.8), single);
}

// Session 55's fused forwards past 64 rows an SM on an H200 (bench/results/
// s55, calls 7-9): fp32 add + norm of 8192 columns in 32 warps of 2 rows,
// 16-bit add + RMSNorm of 8192 and 16384 columns the whole row in 32 warps;
// not at 64 rows an SM or fewer, not 16-bit add + LayerNorm (session 53's
// two rows in n / 512 warps stay), not without a residual, not an H100.
TEST(Default, FusedRowsIn32Warps) {
  const auto def = [](DType d, std::int64_t n, std::int64_t m, Norm norm, bool residual = true, double bpc = 18.8) {
    SpaceQuery q = query(Kernel::fwd, d, n, m, bpc);
    q.norm = norm;
    q.residual = residual;
    return to_string(default_config(q));
  };
  const std::int64_t past = 64 * 132 + 1;
  const std::string fp32 = to_string(Config{8192, 32, 2, 0});
  for (Norm norm : {Norm::layer, Norm::rms}) {
    EXPECT_EQ(def(DType::f32, 8192, past, norm), fp32);
    EXPECT_EQ(def(DType::f32, 8192, 65536, norm), fp32);
    EXPECT_NE(def(DType::f32, 8192, past - 1, norm), fp32);
    EXPECT_NE(def(DType::f32, 8192, 65536, norm, false), fp32);
    EXPECT_NE(def(DType::f32, 8192, 65536, norm, true, 12.8), fp32);
  }
  for (DType d : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(std::string(to_string(d)));
    for (std::int64_t n : {8192, 16384}) {
      const std::string rule = to_string(Config{static_cast<int>(n), 32, 1, 0});
      EXPECT_EQ(def(d, n, past, Norm::rms), rule);
      EXPECT_NE(def(d, n, past - 1, Norm::rms), rule);
      EXPECT_NE(def(d, n, 65536, Norm::rms, true, 12.8), rule);
    }
    EXPECT_EQ(def(d, 8192, 65536, Norm::layer), to_string(Config{8192, 16, 2, 0}));
    // 4096 columns keep session 50's rule (4 warps, past 256 rows an SM).
    EXPECT_EQ(def(d, 4096, 65536, Norm::rms), to_string(Config{4096, 4, 1, 0}));
  }
}

// Session 44's defaults in rows of other than a power of two of threads
// (an H200's, 16-bit rows, no residual, from 16 rows an SM): the
// backward's table (its own entries over 16-48 rows an SM where measured),
// the forward at 1152 and 1280; not an H100's, not with a residual, not
// below 16 rows an SM, not at N the table does not name.
TEST(Default, SegmentedRows) {
  const auto def = [](Kernel k, DType d, std::int64_t n, std::int64_t m, Norm norm = Norm::layer, double bpc = 18.8,
                      bool residual = false) {
    SpaceQuery q = query(k, d, n, m, bpc);
    q.norm = norm;
    q.residual = residual;
    return to_string(default_config(q));
  };
  const auto cfg = [](int n, int w, int r, int g) { return to_string(Config{n, w, r, g}); };
  // {kernel, dtype, N, M, norm, the default}; (call 3) 1408, 2816, 3584,
  // and 4097-8191 columns a multiple of 512 by rule.
  struct Want {
    Kernel k;
    DType d;
    std::int64_t n, m;
    Norm norm;
    int block, warps, rows, groups;
  };
  const Kernel b = Kernel::bwd_dx, f = Kernel::fwd;
  const Norm ln = Norm::layer, rms = Norm::rms;
  for (const Want& w : std::vector<Want>{
           {b, DType::bf16, 1152, 233016, ln, 1152, 9, 2, 1056}, {b, DType::f16, 1152, 233016, rms, 1152, 9, 2, 1056},
           {b, DType::bf16, 1152, 4096, ln, 1152, 9, 4, 132},    {b, DType::bf16, 1280, 209715, ln, 1280, 5, 2, 1056},
           {b, DType::bf16, 1536, 174762, ln, 1536, 6, 1, 528},  {b, DType::bf16, 2304, 116508, ln, 2304, 9, 1, 1056},
           {b, DType::bf16, 2304, 4096, ln, 2304, 18, 2, 132},   {b, DType::bf16, 2560, 104857, ln, 2560, 5, 1, 1056},
           {b, DType::bf16, 2560, 6336, ln, 2560, 10, 2, 132},   {b, DType::bf16, 2560, 6337, ln, 2560, 5, 1, 1056},
           {b, DType::bf16, 3072, 87381, ln, 3072, 12, 1, 264},  {b, DType::bf16, 4608, 58254, ln, 4608, 9, 1, 132},
           {b, DType::bf16, 5120, 4096, ln, 5120, 10, 1, 132},   {b, DType::bf16, 6144, 43690, rms, 6144, 12, 1, 132},
           {f, DType::bf16, 1152, 233016, ln, 1152, 3, 2, 0},    {f, DType::f16, 1280, 2112, ln, 1280, 5, 4, 0},
           {f, DType::bf16, 1152, 2112, rms, 1152, 3, 2, 0},     {b, DType::bf16, 1408, 190650, ln, 1408, 11, 2, 264},
           {b, DType::bf16, 2816, 95325, ln, 2816, 22, 2, 132},  {b, DType::bf16, 3584, 74898, ln, 3584, 14, 2, 132},
           {b, DType::bf16, 5632, 47662, ln, 5632, 11, 1, 132},  {b, DType::f16, 7168, 4096, rms, 7168, 14, 1, 132},
           {b, DType::bf16, 7680, 37449, ln, 7680, 15, 1, 132}})
    EXPECT_EQ(def(w.k, w.d, w.n, w.m, w.norm), cfg(w.block, w.warps, w.rows, w.groups))
        << to_string(w.k) << " " << to_string(w.d) << " " << w.n << " " << w.m;
  // Session 59 (call 5): 1280 at training rows in 5 warps of 2 rows, two
  // CTAs a SM; the LayerNorm forward there on the 2048-column tile in 2
  // warps (16-32 rows an SM; at 16 the rule of 80-thread rows); the fused
  // backward there on the row's own tile; 10240 and 11264 over two exact
  // halves at 2 stages.
  EXPECT_EQ(def(b, DType::bf16, 1280, 4096), cfg(1280, 5, 2, 264));
  EXPECT_EQ(def(b, DType::f16, 1280, 6336, Norm::rms), cfg(1280, 5, 2, 264));
  EXPECT_EQ(def(f, DType::bf16, 1280, 4096), cfg(2048, 2, 1, 0));
  EXPECT_EQ(def(f, DType::f16, 1280, 4224), cfg(2048, 2, 1, 0));
  EXPECT_EQ(def(f, DType::bf16, 1280, 4225), cfg(1280, 5, 4, 0));
  EXPECT_NE(def(f, DType::bf16, 1280, 4096, rms), cfg(2048, 2, 1, 0));
  EXPECT_EQ(def(b, DType::bf16, 1280, 4096, rms, 18.8, true), cfg(1280, 5, 2, 264));
  EXPECT_EQ(def(b, DType::f16, 2560, 2112, ln, 18.8, true), cfg(2560, 10, 1, 264));
  EXPECT_EQ(def(b, DType::bf16, 4608, 6336, rms, 18.8, true), cfg(4608, 18, 1, 132));
  EXPECT_EQ(def(b, DType::bf16, 5120, 4096, ln, 18.8, true), cfg(5120, 20, 1, 132));
  EXPECT_NE(def(b, DType::bf16, 4608, 6337, rms, 18.8, true), cfg(4608, 18, 1, 132));
  EXPECT_NE(def(b, DType::bf16, 4608, 4096, rms, 12.8, true), cfg(4608, 18, 1, 132));
  EXPECT_NE(def(b, DType::f32, 4608, 4096, rms, 18.8, true), cfg(4608, 18, 1, 132));
  EXPECT_EQ(def(b, DType::bf16, 10240, 4096), to_string(Config{5120, 10, 2, 132, 2}));
  EXPECT_EQ(def(b, DType::f16, 11264, 2112, rms), to_string(Config{5632, 11, 2, 132, 2}));
  EXPECT_NE(def(b, DType::bf16, 10240, 6337), to_string(Config{5120, 10, 2, 132, 2}));
  EXPECT_NE(def(b, DType::bf16, 10240, 4096, ln, 18.8, true), to_string(Config{5120, 10, 2, 132, 2}));
  EXPECT_EQ(def(b, DType::bf16, 1536, 4096), cfg(1536, 6, 2, 132));
  EXPECT_EQ(def(b, DType::bf16, 3584, 6336), cfg(3584, 14, 2, 132));
  EXPECT_NE(def(f, DType::bf16, 1280, 2112, rms), cfg(1280, 5, 4, 0)) << "RMSNorm 1280 lost (call 3)";
  // Every entry and the rule's N: 16-byte accesses (make_instance would
  // lower vec where the tile is no multiple of the row's 16-byte accesses).
  for (std::int64_t n : {1152, 1280, 1408, 1536, 2304, 2560, 2816, 3072, 3584, 4608, 5120, 5632, 6144, 6656, 7168, 7680})
    for (std::int64_t m : {4096, 233016}) {
      const Config c = default_config(query(Kernel::bwd_dx, DType::bf16, n, m, 18.8));
      SCOPED_TRACE(std::to_string(n) + " " + std::to_string(m) + " " + to_string(c));
      ASSERT_EQ(c.block_size, n);
      EXPECT_TRUE(has_segmented_rows(Kernel::bwd_dx, c));
      EXPECT_EQ(make_instance(Traits{Kernel::bwd_dx, DType::bf16, DType::bf16, true, true}, c, n, 8).vec, 8);
    }
  for (std::int64_t n : {4352, 7936, 4104})  // N / 16 threads not whole warps
    EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, n, 37449).find("block_size=" + std::to_string(n)), std::string::npos) << n;
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx}) {
    SCOPED_TRACE(std::string(to_string(k)));
    const std::string seg = def(k, DType::bf16, 1152, 233016);
    EXPECT_NE(def(k, DType::bf16, 1152, 233016, Norm::layer, 12.8), seg) << "an H100";
    EXPECT_NE(def(k, DType::bf16, 1152, 233016, Norm::layer, 18.8, true), seg) << "a residual";
    EXPECT_NE(def(k, DType::bf16, 1152, 2111), seg) << "under 16 rows an SM";
    EXPECT_EQ(def(k, DType::bf16, 1160, 233016).find("block_size=1160"), std::string::npos) << "no entry";
    EXPECT_EQ(def(k, DType::f32, 1152, 233016).find("num_warps=9"), std::string::npos) << "fp32";
  }
  EXPECT_EQ(def(Kernel::bwd_dx, DType::bf16, 1152, 2111).find("block_size=1152"), std::string::npos);
  // The fused backward's entries (session 45, call 3), the residual in x's
  // dtype, over more than 48 rows an SM, one CTA an SM; not at 1152 (level),
  // at training sizes, on an H100, or with an fp32 residual.
  const auto fused = [&](std::int64_t n, std::int64_t m, Norm norm = Norm::layer, double bpc = 18.8) {
    return def(b, DType::bf16, n, m, norm, bpc, true);
  };
  EXPECT_EQ(fused(2304, 116508), cfg(2304, 18, 2, 132));
  EXPECT_EQ(fused(2560, 104857, rms), cfg(2560, 20, 2, 132));
  EXPECT_EQ(fused(4608, 58254), cfg(4608, 9, 1, 132));
  EXPECT_EQ(fused(3072, 87381), cfg(3072, 12, 2, 132));
  EXPECT_EQ(fused(5120, 52428, rms), cfg(5120, 10, 1, 132));
  EXPECT_EQ(fused(1152, 233016).find("block_size=1152"), std::string::npos) << "1152: level";
  EXPECT_EQ(fused(2304, 6336).find("block_size=2304"), std::string::npos) << "48 rows an SM";
  EXPECT_EQ(fused(2304, 116508, ln, 12.8).find("block_size=2304"), std::string::npos) << "an H100";
  Traits wide{Kernel::bwd_dx, DType::bf16, DType::bf16, true, true};
  wide.residual = DType::f32;
  SpaceQuery q = query(b, DType::bf16, 2304, 116508, 18.8);
  q.residual = true;
  const Config c = default_config(q, [&](const Config& cc) -> std::optional<InstanceKey> {
    return make_instance(wide, cc, 2304, 8);
  });
  EXPECT_NE(c.block_size, 2304) << "an fp32 residual beside bf16 x: not measured";
}

// Rows of other than a power of two of threads (session 44): the tile of
// exactly N columns, T = N / (16 bytes' elements * k) threads a row (a
// multiple of 8, not a power of two), as many rows as make whole warps and
// twice and four times that; at most max_items elements a thread (half
// above 16 warps); valid instances whose rows are exactly T threads; none
// at a power of two, with a residual, or where N is not a multiple of the
// 16-byte access.
TEST(Space, SegmentedRows) {
  const auto segmented = [](SpaceQuery q) {
    std::vector<Config> out;
    for (const Config& c : search_space(q))
      if (has_segmented_rows(q.kernel, c) &&
          std::none_of(out.begin(), out.end(), [&c](const Config& o) {
            return o.block_size == c.block_size && o.num_warps == c.num_warps && o.rows_per_cta == c.rows_per_cta;
          }))
        out.push_back(Config{c.block_size, c.num_warps, c.rows_per_cta, 0});
    return out;
  };
  // bf16 1152: 144 accesses of 8; rows of 144 threads (2, 4 a CTA) and of
  // 72 (4 a CTA; 8 would be 18 warps at 16 elements a thread).
  EXPECT_EQ(segmented(query(Kernel::bwd_dx, DType::bf16, 1152, 233016, 18.8)),
            (std::vector<Config>{Config{1152, 9, 2, 0}, Config{1152, 18, 4, 0}, Config{1152, 9, 4, 0}}));
  // bf16 2560: rows of 320 (10 warps; 2 a CTA) and 160 (5 warps; 2 a CTA;
  // 4 would be 20 warps at 16 elements a thread).
  EXPECT_EQ(segmented(query(Kernel::bwd_dx, DType::bf16, 2560, 104857, 18.8)),
            (std::vector<Config>{Config{2560, 10, 1, 0}, Config{2560, 20, 2, 0}, Config{2560, 5, 1, 0},
                                 Config{2560, 10, 2, 0}}));
  EXPECT_TRUE(segmented(query(Kernel::bwd_dx, DType::bf16, 9216, 29127, 18.8)).empty())
      << "1152 threads, or 16 elements a thread in 18 warps";
  EXPECT_TRUE(segmented(query(Kernel::bwd_dx, DType::bf16, 4096, 65536, 18.8)).empty()) << "a power of two";
  EXPECT_TRUE(segmented(query(Kernel::bwd_dx, DType::bf16, 1156, 65536, 18.8)).empty()) << "not a multiple of 8";
  // With a residual: the backward's (its rows staged), not the forward's.
  SpaceQuery res = query(Kernel::bwd_dx, DType::bf16, 1152, 65536, 18.8);
  SpaceQuery plain = res;
  res.residual = true;
  EXPECT_EQ(segmented(res), segmented(plain)) << "the backward with a residual";
  EXPECT_FALSE(segmented(res).empty());
  SpaceQuery fres = query(Kernel::fwd, DType::bf16, 1152, 65536, 18.8);
  fres.residual = true;
  EXPECT_TRUE(segmented(fres).empty()) << "the forward with a residual";
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx})
    for (DType d : {DType::bf16, DType::f32})
      for (std::int64_t n : {768, 1152, 1536, 2304, 2560, 4608, 5120, 6144, 12288}) {
        const std::vector<Config> got = segmented(query(k, d, n, 65536, 18.8));
        for (const Config& c : got) {
          SCOPED_TRACE(std::string(to_string(k)) + " " + std::string(to_string(d)) + " " + to_string(c));
          const InstanceKey key = make_instance(Traits{k, d, d, true, true}, c, n, max_vec(d));
          const int tpr = 32 * key.num_warps / key.rows_per_cta;
          EXPECT_TRUE(has_segmented_rows(key));
          EXPECT_EQ(key.block_size, n);
          EXPECT_EQ(key.vec, max_vec(d));
          EXPECT_EQ(tpr % 8, 0);
          EXPECT_NE(next_pow2(tpr), tpr);
          EXPECT_EQ(n % (tpr * key.vec), 0);
          EXPECT_LE(n / tpr, max_items_per_thread(k, key.num_warps));
          EXPECT_LE(32 * key.num_warps, 1024);
        }
      }
  // The rules for such rows, by name.
  const Traits bwd{Kernel::bwd_dx, DType::bf16, DType::bf16, true, true};
  const auto message = [&bwd](Config c, std::int64_t n) {
    try {
      make_instance(bwd, c, n, 8);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(Config{1024, 3, 1, 0}, 1024).find("threads_per_row * vec"), std::string::npos);
  EXPECT_NE(message(Config{1152, 9, 5, 0}, 1152).find("rows_per_cta (5) must divide"), std::string::npos);
  EXPECT_NE(message(Config{96, 3, 16, 0}, 96).find("multiple of 8"), std::string::npos);  // 6 threads a row
  EXPECT_NE(message(Config{1152, 9, 2, 0}, 4000).find("only a single tile"), std::string::npos);  // tiled rows
  EXPECT_EQ(message(Config{4608, 18, 1, 0}, 4608), "");  // 18 segments of 32 lanes
  Config cluster{2304, 9, 1, 0};
  cluster.cluster_size = 2;
  EXPECT_NE(message(cluster, 4608).find("only a single tile in one CTA"), std::string::npos);
}

// Session 51's forward defaults for few rows (an H200's, bench/results/s51,
// calls 4-8): 8192-16384 columns, a row a CTA, in 32 warps up to a row an
// SM and 16 up to two (LayerNorm of 16 and 32 bits, 16-bit add + LayerNorm
// and add + RMSNorm with the residual in x's dtype; RMSNorm of either width
// to a row an SM; session 52 added RMSNorm and add + LayerNorm); 16-bit
// LayerNorm of 32768 and 65536 columns over up to 8 rows in clusters of
// 4096-column slabs, a cluster a row; past two rows an SM, 16-bit LayerNorm of 16384 columns in
// 16 warps at any M (to 32 rows an SM until session 52), 12288 in 12 at any
// M, 8192 in 8 from four rows an SM. Not past those rows, not an H100's,
// not an fp32 residual, not 4096 columns.
// A fused forward call's H200 default with its residual in dtype r (the
// call's traits decide the stream: an fp32 one beside 16-bit rows, or x's
// dtype).
std::string with_stream(DType d, DType r, Norm norm, std::int64_t n, std::int64_t m) {
  SpaceQuery q = query(Kernel::fwd, d, n, m, 18.8);
  q.norm = norm;
  q.residual = true;
  Traits t{Kernel::fwd, d, d, true, norm == Norm::layer};
  t.residual = r;
  t.norm = norm;
  return to_string(default_config(q, instances_for(t, n, max_vec(d))));
}

TEST(Default, DecodeRows) {
  const auto def = [](DType d, std::int64_t n, std::int64_t m, Norm norm = Norm::layer, bool residual = false,
                      double bpc = 18.8) {
    SpaceQuery q = query(Kernel::fwd, d, n, m, bpc);
    q.norm = norm;
    q.residual = residual;
    return to_string(default_config(q));
  };
  const std::string w32 = "block_size=16384 num_warps=32 rows_per_cta=1 group_size_m=0";
  const std::string w16 = "block_size=16384 num_warps=16 rows_per_cta=1 group_size_m=0";
  EXPECT_EQ(def(DType::bf16, 16384, 1), w32);
  EXPECT_EQ(def(DType::bf16, 16384, 132), w32);
  EXPECT_EQ(def(DType::bf16, 16384, 133), w16);
  EXPECT_EQ(def(DType::bf16, 16384, 264), w16);
  EXPECT_EQ(def(DType::bf16, 16384, 265), w16);  // 16-bit LayerNorm: 16 warps to 32 rows an SM
  EXPECT_EQ(def(DType::f16, 16384, 4224), w16);
  EXPECT_EQ(def(DType::bf16, 16384, 4225), w16);  // session 52: past 32 rows an SM too
  EXPECT_EQ(def(DType::bf16, 16384, 6000), w16);
  EXPECT_EQ(def(DType::bf16, 16384, 200, Norm::rms), w32);  // RMSNorm: the rule to a row an SM
  EXPECT_NE(def(DType::bf16, 12288, 200, Norm::rms), w16);
  EXPECT_EQ(def(DType::bf16, 16384, 200, Norm::layer, true), w16);
  EXPECT_EQ(def(DType::bf16, 12288, 1, Norm::rms), w32);
  EXPECT_EQ(def(DType::f32, 16384, 1, Norm::rms), w32);
  EXPECT_NE(def(DType::bf16, 16384, 265, Norm::rms), w16);
  EXPECT_EQ(def(DType::bf16, 12288, 265), "block_size=12288 num_warps=12 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(DType::f16, 12288, 4224), "block_size=12288 num_warps=12 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(DType::bf16, 12288, 21845), "block_size=12288 num_warps=12 rows_per_cta=1 group_size_m=0");  // 512 MiB
  EXPECT_NE(def(DType::bf16, 12288, 21845, Norm::rms), "block_size=12288 num_warps=12 rows_per_cta=1 group_size_m=0");
  EXPECT_NE(def(DType::bf16, 10000, 1000), "block_size=12288 num_warps=12 rows_per_cta=1 group_size_m=0");
  const std::string w8 = "block_size=8192 num_warps=8 rows_per_cta=1 group_size_m=0";
  EXPECT_NE(def(DType::bf16, 8192, 527), w8);  // two to four rows an SM: 16 warps
  EXPECT_EQ(def(DType::bf16, 8192, 528), w8);
  EXPECT_EQ(def(DType::f16, 8192, 8192), w8);
  EXPECT_EQ(def(DType::bf16, 8192, 8193), w8);  // the rule for many rows
  EXPECT_NE(def(DType::bf16, 8192, 528, Norm::layer, true), w8);
  // Session 59: 16-bit LayerNorm of 6145-8191 columns on that tile too, from
  // four rows an SM to M = 8192.
  EXPECT_EQ(def(DType::bf16, 6145, 528), w8);
  EXPECT_EQ(def(DType::f16, 7168, 4096), w8);
  EXPECT_EQ(def(DType::bf16, 8000, 8192), w8);
  EXPECT_NE(def(DType::bf16, 6144, 4096), w8);
  EXPECT_NE(def(DType::bf16, 7168, 527), w8);
  EXPECT_NE(def(DType::bf16, 7168, 4096, Norm::layer, true), w8);
  EXPECT_EQ(def(DType::f16, 12288, 8), w32);
  EXPECT_EQ(def(DType::bf16, 10000, 64), w32);
  EXPECT_EQ(def(DType::f32, 16384, 1), w32);
  EXPECT_EQ(def(DType::f32, 8192, 1), "block_size=8192 num_warps=32 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(DType::bf16, 8192, 100), "block_size=8192 num_warps=32 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(DType::bf16, 16384, 1, Norm::rms, true), w32);
  EXPECT_EQ(def(DType::bf16, 16384, 1, Norm::layer, true), w32);
  EXPECT_EQ(def(DType::f16, 12288, 64, Norm::layer, true), w32);
  EXPECT_NE(def(DType::f32, 16384, 1, Norm::rms, true), w32);
  EXPECT_NE(def(DType::bf16, 16384, 1, Norm::layer, false, 12.8), w32);  // an H100
  EXPECT_NE(def(DType::bf16, 4096, 1), "block_size=4096 num_warps=32 rows_per_cta=1 group_size_m=0");
  EXPECT_EQ(def(DType::bf16, 32768, 1), "block_size=4096 num_warps=4 rows_per_cta=2 group_size_m=1 cluster_size=8");
  EXPECT_EQ(def(DType::f16, 32768, 8), "block_size=4096 num_warps=4 rows_per_cta=2 group_size_m=8 cluster_size=8");
  EXPECT_EQ(def(DType::bf16, 65536, 5), "block_size=4096 num_warps=4 rows_per_cta=2 group_size_m=5 cluster_size=16");
  EXPECT_NE(def(DType::bf16, 65536, 9), "block_size=4096 num_warps=4 rows_per_cta=2 group_size_m=9 cluster_size=16");
  EXPECT_NE(def(DType::f32, 65536, 1), "block_size=4096 num_warps=4 rows_per_cta=2 group_size_m=1 cluster_size=16");
  EXPECT_NE(def(DType::bf16, 32768, 1, Norm::rms), "block_size=4096 num_warps=4 rows_per_cta=2 group_size_m=1 cluster_size=8");
  // Session 52's rules past two rows an SM: the 16-bit fused forward of
  // 12288 columns from 16 rows an SM on the exact tile in 16 warps (the
  // residual in x's dtype) or on the 16384-column tile in 32 (add +
  // LayerNorm with an fp32 residual stream); rows of 1024
  // columns four rows a CTA of 4 warps past 16 rows an SM to 32 (every
  // form, fp32 LayerNorm and RMSNorm too), of 3072 columns the 4096-column
  // tile in 4 warps over 16-48 (RMSNorm: the exact tile).
  const std::string t12 = "block_size=12288 num_warps=16 rows_per_cta=1 group_size_m=0";
  EXPECT_EQ(def(DType::bf16, 12288, 21845, Norm::layer, true), t12);
  EXPECT_EQ(def(DType::f16, 12288, 2112, Norm::rms, true), t12);
  EXPECT_NE(def(DType::bf16, 12288, 2111, Norm::layer, true), t12);
  EXPECT_NE(def(DType::f32, 12288, 21845, Norm::layer, true), t12);
  // Session 58: 16-bit add + RMSNorm of 8193-12287 columns on that tile
  // too (add + LayerNorm keeps its rule there: not measured).
  EXPECT_EQ(def(DType::bf16, 8193, 2112, Norm::rms, true), t12);
  EXPECT_EQ(def(DType::f16, 10000, 21845, Norm::rms, true), t12);
  EXPECT_NE(def(DType::bf16, 8192, 4096, Norm::rms, true), t12);
  EXPECT_NE(def(DType::bf16, 10000, 2111, Norm::rms, true), t12);
  EXPECT_NE(def(DType::bf16, 10000, 4096, Norm::layer, true), t12);
  const std::string r4 = "block_size=1024 num_warps=4 rows_per_cta=4 group_size_m=0";
  EXPECT_EQ(def(DType::bf16, 1024, 2113), r4);
  EXPECT_NE(def(DType::bf16, 1024, 2112), r4);  // 16 rows an SM: level in 16 bits, lost in fp32
  EXPECT_EQ(def(DType::f16, 1024, 4224), r4);
  EXPECT_NE(def(DType::f16, 1024, 4225), r4);
  EXPECT_NE(def(DType::bf16, 1024, 6337), r4);
  EXPECT_EQ(def(DType::bf16, 1024, 4096, Norm::rms), r4);  // every 16-bit form
  EXPECT_EQ(def(DType::f16, 1024, 2113, Norm::layer, true), r4);
  EXPECT_EQ(def(DType::bf16, 1024, 4224, Norm::rms, true), r4);
  EXPECT_EQ(def(DType::f32, 1024, 4096), r4);  // fp32 LayerNorm and RMSNorm too
  EXPECT_EQ(def(DType::f32, 1024, 4224, Norm::rms), r4);
  EXPECT_NE(def(DType::f32, 1024, 2112), r4);
  EXPECT_NE(def(DType::f32, 1024, 4096, Norm::layer, true), r4);
  // beside an fp32 stream: add + LayerNorm, not add + RMSNorm
  EXPECT_EQ(with_stream(DType::bf16, DType::f32, Norm::layer, 1024, 4096), r4);
  EXPECT_NE(with_stream(DType::bf16, DType::f32, Norm::rms, 1024, 4096), r4);
  EXPECT_NE(def(DType::bf16, 1024, 4225, Norm::layer, true), r4);
  // Session 59: 768-1023 columns on the 1024-column tile likewise.
  EXPECT_EQ(def(DType::bf16, 1000, 4096), r4);
  EXPECT_EQ(def(DType::f16, 768, 2113), r4);
  EXPECT_EQ(def(DType::f32, 777, 4224), r4);
  EXPECT_EQ(def(DType::bf16, 800, 4096, Norm::rms, true), r4);
  EXPECT_NE(def(DType::bf16, 767, 4096), r4);
  EXPECT_NE(def(DType::bf16, 768, 2112), r4);
  EXPECT_NE(def(DType::bf16, 768, 4225), r4);
  const std::string t3 = "block_size=4096 num_warps=4 rows_per_cta=1 group_size_m=0";
  EXPECT_EQ(def(DType::bf16, 3072, 2112), t3);
  EXPECT_EQ(def(DType::f16, 3072, 6336), t3);
  EXPECT_NE(def(DType::bf16, 3072, 2111), t3);
  EXPECT_NE(def(DType::bf16, 3072, 6337), t3);
  EXPECT_NE(def(DType::bf16, 3072, 4096, Norm::rms), t3);
  const std::string e3 = "block_size=3072 num_warps=4 rows_per_cta=1 group_size_m=0";  // RMSNorm: the exact tile
  EXPECT_EQ(def(DType::bf16, 3072, 2112, Norm::rms), e3);
  EXPECT_EQ(def(DType::f16, 3072, 6336, Norm::rms), e3);
  EXPECT_NE(def(DType::bf16, 3072, 6337, Norm::rms), e3);
  EXPECT_NE(def(DType::f32, 3072, 4096, Norm::rms), e3);
  // The fp32 residual stream beside 16-bit rows.
  const std::string s32 = "block_size=16384 num_warps=32 rows_per_cta=1 group_size_m=0";
  EXPECT_EQ(with_stream(DType::bf16, DType::f32, Norm::layer, 12288, 21845), s32);
  EXPECT_EQ(with_stream(DType::f16, DType::f32, Norm::layer, 12288, 2112), s32);
  EXPECT_NE(with_stream(DType::bf16, DType::f32, Norm::layer, 12288, 2111), s32);
  EXPECT_NE(with_stream(DType::bf16, DType::f32, Norm::rms, 12288, 21845), s32);
  EXPECT_EQ(with_stream(DType::bf16, DType::bf16, Norm::layer, 12288, 21845), t12);
}

// Session 53: the fused forms' rows of 4096 and 8192 columns past 64 rows an
// SM (8448 on 132 SMs) take two rows a CTA of 32 elements a thread, with the
// residual in x's dtype only: 16-bit add + LayerNorm, fp32 add + RMSNorm
// 8192; not fp32 add + LayerNorm, not an fp32 stream, not at 64 rows an SM.
TEST(Default, FusedTwoRowsPast64RowsAnSm) {
  const std::string t4096 = "block_size=4096 num_warps=8 rows_per_cta=2 group_size_m=0";
  const std::string t8192 = "block_size=8192 num_warps=16 rows_per_cta=2 group_size_m=0";
  EXPECT_EQ(with_stream(DType::bf16, DType::bf16, Norm::layer, 4096, 65536), t4096);
  EXPECT_EQ(with_stream(DType::f16, DType::f16, Norm::layer, 4096, 8449), t4096);
  EXPECT_NE(with_stream(DType::bf16, DType::bf16, Norm::layer, 4096, 8448), t4096);
  EXPECT_EQ(with_stream(DType::bf16, DType::bf16, Norm::layer, 8192, 32768), t8192);
  // fp32 add + RMSNorm 8192 took these 16 warps until session 55
  // (FusedRowsIn32Warps).
  EXPECT_EQ(with_stream(DType::f32, DType::f32, Norm::rms, 8192, 16384), "block_size=8192 num_warps=32 rows_per_cta=2 group_size_m=0");
  EXPECT_NE(with_stream(DType::f32, DType::f32, Norm::layer, 8192, 16384), t8192);
  EXPECT_NE(with_stream(DType::bf16, DType::f32, Norm::layer, 4096, 65536), t4096);
  EXPECT_NE(with_stream(DType::bf16, DType::bf16, Norm::rms, 8192, 32768), t8192);
}
// The default config of a query, as text (an H200's DRAM bytes a SM cycle
// unless `bpc` says otherwise): the cold tunes' rules below.
std::string default_text(Kernel k, DType d, std::int64_t n, std::int64_t m, Norm norm = Norm::layer,
                         bool residual = false, double bpc = 18.8) {
  SpaceQuery q = query(k, d, n, m, bpc);
  q.norm = norm;
  q.residual = residual;
  return to_string(default_config(q));
}

// (training-rules-2, bench/experiments) more training-size rules from
// session 58's cold tune, fast-memory GPUs only.
TEST(Default, TrainingRulesFromTheColdTune) {
  const Kernel f = Kernel::fwd, b = Kernel::bwd_dx, r = Kernel::bwd_dwdb;
  const Norm ln = Norm::layer, rms = Norm::rms;
  // 16-bit LayerNorm 14337-16383 at 16-32 rows an SM: the 16384 tile in 16 warps.
  EXPECT_EQ(default_text(f, DType::bf16, 15000, 4096), to_string(Config{16384, 16, 1, 0}));
  EXPECT_EQ(default_text(f, DType::f16, 14337, 2113), to_string(Config{16384, 16, 1, 0}));
  EXPECT_NE(default_text(f, DType::bf16, 15000, 4225), to_string(Config{16384, 16, 1, 0}));
  EXPECT_NE(default_text(f, DType::bf16, 14336, 4096), to_string(Config{16384, 16, 1, 0}));
  // 16-bit RMSNorm 12801-14848 there: 4096-column tiles in 16 warps.
  EXPECT_EQ(default_text(f, DType::f16, 13313, 3001, rms), to_string(Config{4096, 16, 1, 0}));
  EXPECT_EQ(default_text(f, DType::bf16, 14848, 4224, rms), to_string(Config{4096, 16, 1, 0}));
  EXPECT_EQ(default_text(f, DType::bf16, 12800, 4096, rms), to_string(Config{4096, 16, 1, 0}));  // from 12289 (session 60)
  EXPECT_EQ(default_text(f, DType::f16, 12289, 3001, rms), to_string(Config{4096, 16, 1, 0}));
  EXPECT_NE(default_text(f, DType::bf16, 12288, 4096, rms), to_string(Config{4096, 16, 1, 0}));
  EXPECT_NE(default_text(f, DType::bf16, 13824, 2112, rms), to_string(Config{4096, 16, 1, 0}));
  EXPECT_NE(default_text(f, DType::bf16, 13824, 4096, rms, false, 12.8), to_string(Config{4096, 16, 1, 0}));
  // fp32 LayerNorm 4097-6143: N rounded up to 1024 in 8 warps.
  EXPECT_EQ(default_text(f, DType::f32, 4609, 4096), to_string(Config{5120, 8, 1, 0}));
  EXPECT_EQ(default_text(f, DType::f32, 5632, 4096), to_string(Config{6144, 8, 1, 0}));
  EXPECT_NE(default_text(f, DType::f32, 4609, 4096, rms), to_string(Config{5120, 8, 1, 0}));
  EXPECT_NE(default_text(f, DType::f32, 4609, 6000), to_string(Config{5120, 8, 1, 0}));
  // 16-bit add + RMSNorm 16385-20480: N rounded up to 4096 in 16 warps.
  EXPECT_EQ(default_text(f, DType::bf16, 18432, 4096, rms, true), to_string(Config{20480, 16, 1, 0}));
  EXPECT_EQ(default_text(f, DType::f16, 16385, 3001, rms, true), to_string(Config{20480, 16, 1, 0}));
  EXPECT_NE(default_text(f, DType::bf16, 18432, 4096, ln, true), to_string(Config{20480, 16, 1, 0}));
  EXPECT_NE(default_text(f, DType::bf16, 20481, 4096, rms, true), to_string(Config{24576, 16, 1, 0}));
  // The backward: 16-bit RMSNorm 4096 in 16 warps of 2 rows, one CTA a SM.
  EXPECT_EQ(default_text(b, DType::f16, 4096, 3001, rms), to_string(Config{4096, 16, 2, 132}));
  EXPECT_EQ(default_text(b, DType::bf16, 4096, 4096, ln), to_string(Config{4096, 16, 2, 132}));  // LayerNorm's training config
  EXPECT_NE(default_text(b, DType::bf16, 4096, 2111, rms), to_string(Config{4096, 16, 2, 132}));
  // 16-bit add + RMSNorm 8193-9216 over clusters of 2 at 2 stages.
  EXPECT_EQ(default_text(b, DType::bf16, 8704, 4096, rms, true), to_string(Config{6144, 8, 2, 132, 2}));
  EXPECT_EQ(default_text(b, DType::f16, 9216, 3001, rms, true), to_string(Config{4608, 9, 2, 132, 2}));
  EXPECT_NE(default_text(b, DType::bf16, 8704, 4096, ln, true), to_string(Config{6144, 8, 2, 132, 2}));
  // bwd_dwdb of 129-256 columns over 528 or more partial rows: 32 columns
  // a CTA, about one CTA a SM (17 splits), 8 warps, 16 from 1056 rows.
  EXPECT_EQ(default_text(r, DType::bf16, 256, 528), to_string(Config{32, 8, 1, 17}));
  EXPECT_EQ(default_text(r, DType::f32, 200, 1056), to_string(Config{32, 16, 1, 19}));  // 7 blocks: 132 / 7
  EXPECT_EQ(default_text(r, DType::bf16, 256, 527), to_string(Config{128, 16, 1, 32}));
  EXPECT_EQ(default_text(r, DType::bf16, 256, 528, ln, false, 12.8), to_string(Config{128, 16, 1, 32}));
  EXPECT_NE(default_text(r, DType::bf16, 512, 528), to_string(Config{32, 8, 1, 17}));
}

// Session 60's rules from its cold tune at M = 4096 (bench/results/s60,
// calls 4-5), each at its edges.
TEST(Default, TrainingRulesFromSession60) {
  const Kernel f = Kernel::fwd, b = Kernel::bwd_dx;
  const Norm ln = Norm::layer, rms = Norm::rms;
  // 16-bit LayerNorm forward of 8193-9216 at 16-32 rows an SM: the 9216 tile in 9 warps.
  EXPECT_EQ(default_text(f, DType::bf16, 8704, 4096), to_string(Config{9216, 9, 1, 0}));
  EXPECT_EQ(default_text(f, DType::f16, 8193, 2113), to_string(Config{9216, 9, 1, 0}));
  EXPECT_EQ(default_text(f, DType::bf16, 9216, 4224), to_string(Config{9216, 9, 1, 0}));
  EXPECT_NE(default_text(f, DType::bf16, 9217, 4096), to_string(Config{9216, 9, 1, 0}));
  EXPECT_NE(default_text(f, DType::bf16, 8704, 8192), to_string(Config{9216, 9, 1, 0}));
  EXPECT_NE(default_text(f, DType::bf16, 8704, 4096, rms), to_string(Config{9216, 9, 1, 0}));
  EXPECT_NE(default_text(f, DType::f32, 8704, 4096), to_string(Config{9216, 9, 1, 0}));
  EXPECT_NE(default_text(f, DType::bf16, 8704, 4096, ln, false, 12.8), to_string(Config{9216, 9, 1, 0}));
  // 16-bit RMSNorm backward of 3073-3583 at training rows: the 4096 tile in 16 warps, two CTAs a SM.
  EXPECT_EQ(default_text(b, DType::bf16, 3200, 4096, rms), to_string(Config{4096, 16, 1, 264}));
  EXPECT_EQ(default_text(b, DType::f16, 3583, 3001, rms), to_string(Config{4096, 16, 1, 264}));
  EXPECT_NE(default_text(b, DType::bf16, 3072, 4096, rms), to_string(Config{4096, 16, 1, 264}));
  EXPECT_NE(default_text(b, DType::bf16, 3584, 4096, rms), to_string(Config{4096, 16, 1, 264}));
  EXPECT_NE(default_text(b, DType::bf16, 3200, 4096, ln), to_string(Config{4096, 16, 1, 264}));
  // 16-bit backward of 8193-10239 (not 9216) at training rows: the even split at 2 stages.
  EXPECT_EQ(default_text(b, DType::bf16, 8704, 4096), to_string(Config{6144, 8, 2, 132, 2}));
  EXPECT_EQ(default_text(b, DType::f16, 9728, 3001, rms), to_string(Config{6144, 8, 2, 132, 2}));
  EXPECT_EQ(default_text(b, DType::bf16, 8704, 8192), to_string(Config{6144, 8, 3, 132, 2}));  // past training rows: 3 stages
  EXPECT_NE(default_text(b, DType::bf16, 9216, 4096), to_string(Config{6144, 8, 2, 132, 2}));
}

}  // namespace
}  // namespace lntune::gen
