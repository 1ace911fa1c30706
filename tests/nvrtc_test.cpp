// NVRTC compiles every config point of the default search space (the default
// N grid, every kernel) to CUBIN for sm_80 and sm_90, and a sample to PTX. No
// GPU is needed. dtypes and traits rotate across config points so each point
// compiles at least once and every trait combination appears.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "generator/instance.hpp"
#include "generator/space.hpp"
#include "runtime/nvrtc.hpp"

namespace lntune {
namespace {

struct Point {
  Kernel kernel;
  int block, warps, rows, cluster;
  bool single;
  bool operator<(const Point& o) const {
    return std::tie(kernel, block, warps, rows, cluster, single) <
           std::tie(o.kernel, o.block, o.warps, o.rows, o.cluster, o.single);
  }
};

std::vector<Traits> trait_rotation(Kernel k) {
  std::vector<Traits> out;
  for (DType x : {DType::f16, DType::bf16, DType::f32})
    for (DType w : {x, DType::f32})
      for (int mask = 0; mask < 4; ++mask) {
        Traits t{k, x, w, (mask & 1) != 0, (mask & 2) != 0};
        if (k == Kernel::bwd_dwdb && !t.has_weight && !t.has_bias) continue;
        if (w == DType::f32 && x == DType::f32 && w != x) continue;
        out.push_back(t);
      }
  return out;
}

std::vector<InstanceKey> default_space_instances() {
  // Distinct config points over the default grid.
  std::map<Point, std::int64_t> points;  // -> an N that produces it
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx, Kernel::bwd_dwdb})
    for (std::int64_t n : gen::default_n_grid())
      for (const Config& c : gen::search_space({k, DType::f16, n, 4096, 132, 90})) {
        // The wide-row kernels' configs compile in kernel_headers_test
        // (WideSpaceCompilesWithoutSpills: each dtype, no spills);
        // they need 16-byte accesses, so this sweep's rotations would not fit.
        if (gen::is_wide_bwd(k, c) || gen::is_wide_fwd(k, c)) continue;
        points.emplace(Point{k, c.block_size, c.num_warps, c.rows_per_cta, c.cluster_size,
                             n <= static_cast<std::int64_t>(c.block_size) * c.cluster_size},
                       n);
      }
  std::vector<InstanceKey> keys;
  std::map<Kernel, std::size_t> rot;
  std::set<std::string> seen;
  for (const auto& [pt, n] : points) {
    const auto traits = trait_rotation(pt.kernel);
    Config c{pt.block, pt.warps, pt.rows, 0};
    c.cluster_size = pt.cluster;
    // The rotation's next traits that the point takes (a slab in shared
    // memory sized for f16 rows may not fit fp32's: the next traits then;
    // which point meets which traits shifts as the space grows).
    const std::size_t first = rot[pt.kernel]++;
    bool taken = false;
    for (std::size_t i = 0; i < traits.size() && !taken; ++i) {
      const Traits t = traits[(first + i) % traits.size()];
      try {
        gen::make_instance(t, c, n, gen::max_vec(t.x_dtype));
      } catch (const Error&) {
        continue;
      }
      // Every third point also without vector accesses (the misaligned path).
      for (int vec : {gen::max_vec(t.x_dtype), 1}) {
        if (vec == 1 && rot[pt.kernel] % 3 != 0 && pt.kernel != Kernel::bwd_dwdb) continue;
        const InstanceKey key = gen::make_instance(t, c, n, vec);
        if (seen.insert(key.name()).second) keys.push_back(key);
      }
      taken = true;
    }
    // (A point of the f16 space that no traits take, the f16 ones among
    // them, would be the space's bug, not a point to skip.)
    if (!taken) ADD_FAILURE() << "no traits of the rotation take " << to_string(c) << " at N = " << n;
  }
  return keys;
}

TEST(Nvrtc, VersionAndArchs) {
  EXPECT_GE(rt::nvrtc_version(), 12000);
  const auto archs = rt::supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), "sm_80"), archs.end());
  EXPECT_NE(std::find(archs.begin(), archs.end(), "sm_90"), archs.end());
}

TEST(Nvrtc, CompileErrorCarriesLogOptionsAndKernel) {
  gen::KernelSource bad;
  bad.kernel_name = "lntune_broken";
  bad.source = "#include \"lntune/common.cuh\"\nextern \"C\" __global__ void lntune_broken() { undefined_thing(); }\n";
  try {
    rt::compile(bad, "sm_90");
    FAIL() << "expected a CompileError";
  } catch (const rt::CompileError& e) {
    EXPECT_EQ(e.kernel(), "lntune_broken");
    EXPECT_NE(e.log().find("undefined_thing"), std::string::npos) << e.log();
    EXPECT_NE(std::string(e.what()).find("--gpu-architecture=sm_90"), std::string::npos) << e.what();
  }
}

TEST(Nvrtc, ClusterInstancesNeedSm90) {
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  Config c{16384, 16, 1, 0};
  c.cluster_size = 4;
  const auto src = gen::render(gen::make_instance(t, c, 65536, 8));
  EXPECT_THROW(rt::compile(src, "sm_80"), rt::CompileError);
  EXPECT_NO_THROW(rt::compile(src, "sm_90"));
}

// The forward's slabs in shared memory over clusters of other than a power of
// two (gen::smem_clusters: 5 of 32768 columns and 10 of 16384 at N = 150000,
// 7 and 13 at 200000, 6 of 16384 at 90000), every such config of the space in
// each dtype, LayerNorm and RMSNorm (with a residual beside 16-bit x): they
// compile for sm_90
// (the default grid's N, powers of two, never make them).
TEST(Nvrtc, SmemForwardGapClustersCompile) {
  int compiled = 0;
  for (std::int64_t n : {90000, 150000, 200000})
    for (DType d : {DType::f16, DType::bf16, DType::f32}) {
      std::set<int> clusters;
      for (const Config& c : gen::search_space({Kernel::fwd, d, n, 2048, 132, 90})) {
        if ((c.cluster_size & (c.cluster_size - 1)) == 0 || !gen::forward_in_smem(c, n) || c.group_size_m != 0) continue;
        clusters.insert(c.cluster_size);
        Traits t{Kernel::fwd, d, DType::f32, true, true};
        if (compiled % 2 == 1) {  // RMSNorm, with a residual beside 16-bit x (fp32's would not fit)
          t.norm = Norm::rms;
          t.has_bias = false;
          if (d != DType::f32) t.residual = d;
        }
        const auto src = gen::render(gen::make_instance(t, c, n, gen::max_vec(d)));
        SCOPED_TRACE(src.kernel_name);
        EXPECT_TRUE(gen::stages_in_smem(src.key));
        EXPECT_NO_THROW(rt::compile(src, "sm_90"));
        ++compiled;
      }
      EXPECT_FALSE(clusters.empty()) << "no gap cluster at N = " << n;
    }
  std::printf("[ smem gap ] %d forward instances over gap clusters compiled for sm_90\n", compiled);
}

TEST(Nvrtc, RejectsMalformedArch) { EXPECT_THROW(rt::compile_options("90", rt::BinaryKind::cubin), Error); }

TEST(Nvrtc, PtxOfEachKernel) {
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx, Kernel::bwd_dwdb}) {
    const Traits t{k, DType::bf16, DType::f32, true, true};
    const Config c = gen::default_config({k, DType::bf16, 4096, 4096, 132});
    const auto src = gen::render(gen::make_instance(t, c, 4096, 8));
    const auto ptx = rt::compile(src, "sm_90", rt::BinaryKind::ptx);
    const std::string text(ptx.binary.data());
    EXPECT_NE(text.find(".entry " + src.kernel_name), std::string::npos);
    EXPECT_NE(text.find(".target sm_90"), std::string::npos);
  }
}

// bwd_dx instances without a cluster in CTAs under 512 threads have a second
// entry, `<name>_finish`, and only it calls the dW/dB finish (its registers
// would bound the plain entry's occupancy, gpu_test checks the counts); the
// others have one entry.
TEST(Nvrtc, FinishHasItsOwnEntry) {
  const Traits t{Kernel::bwd_dx, DType::bf16, DType::bf16, true, true};
  struct Want {
    Config c;
    bool finish;
  };
  for (const Want& w : {Want{Config{1024, 8, 1, 132}, true}, Want{Config{1024, 4, 2, 132}, true},
                        Want{Config{1024, 16, 2, 132}, false}, Want{Config{512, 4, 1, 132, 2}, false}}) {
    const auto src = gen::render(gen::make_instance(t, w.c, 1024, 8));
    SCOPED_TRACE(src.kernel_name);
    EXPECT_EQ(gen::has_finish_entry(src.key), w.finish);
    EXPECT_EQ(src.finish_kernel_name, w.finish ? src.kernel_name + "_finish" : "");
    const auto ptx = rt::compile(src, "sm_90", rt::BinaryKind::ptx);
    const std::string text(ptx.binary.data());
    const std::size_t plain = text.find(".entry " + src.kernel_name + "(");
    ASSERT_NE(plain, std::string::npos);
    const std::size_t fin = text.find(".entry " + src.kernel_name + "_finish(");
    EXPECT_EQ(fin != std::string::npos, w.finish);
    // The plain entry's body (up to the next entry or the end) calls nothing.
    const std::size_t next = text.find(".entry ", plain + 1);
    const std::string body = text.substr(plain, next == std::string::npos ? std::string::npos : next - plain);
    EXPECT_EQ(body.find("finish_dwdb"), std::string::npos) << "the plain entry calls the finish";
    if (w.finish) {
      const std::string fbody = text.substr(fin, text.find(".entry ", fin + 1) - fin);
      EXPECT_NE(fbody.find("finish_dwdb"), std::string::npos) << "the finishing entry calls no finish";
    }
  }
}

struct Job {
  const InstanceKey* key;
  const char* arch;
};

// Compiles every job to CUBIN on every hardware thread; each failure is a
// test failure naming the instance and its architecture.
void compile_all(const std::vector<Job>& jobs) {
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex mu;
  std::vector<std::string> failures;
  const auto start = std::chrono::steady_clock::now();
  const unsigned workers = std::max(2u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      for (std::size_t i; (i = next++) < jobs.size();) {
        try {
          const auto bin = rt::compile(gen::render(*jobs[i].key), jobs[i].arch);
          if (bin.binary.size() < 64) throw Error("tiny CUBIN");
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(mu);
          failures.push_back(jobs[i].key->name() + " " + jobs[i].arch + ": " + e.what());
        }
        ++done;
      }
    });
  for (auto& t : pool) t.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ sweep    ] compiled %zu CUBINs in %.1f s on %u threads\n", done.load(), secs, workers);
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_TRUE(failures.empty());
}

// The finishing entry's tree beside rows staged in static shared memory:
// CTAs of 12 warps take 12 KB for it, not the 8 KB that bwd_stage_static
// once set aside, and session 56's cold tune lost four 16-bit RMSNorm + add
// instances of its space to ptxas ("uses too much shared data", 52 KB):
// both entries compile, and their rows are staged in dynamic shared memory.
TEST(Nvrtc, FinishTreeFitsBesideStagedRows) {
  for (DType d : {DType::bf16, DType::f16})
    for (const auto& [c, n] : {std::pair{Config{768, 12, 4, 264}, std::int64_t{768}},
                               std::pair{Config{3072, 12, 1, 264}, std::int64_t{3072}}}) {
      Traits t{Kernel::bwd_dx, d, d, true, false};
      t.norm = Norm::rms;
      t.residual = d;
      const InstanceKey key = gen::make_instance(t, c, n, gen::max_vec(d));
      SCOPED_TRACE(key.name());
      ASSERT_TRUE(gen::has_finish_entry(key));
      EXPECT_GT(gen::dynamic_smem_bytes(key, 90), 0) << "rows staged statically beside the finish's 12 KB tree";
      const auto src = gen::render(key);
      EXPECT_NO_THROW(rt::compile(src, "sm_90"));
    }
}

TEST(Nvrtc, DefaultSpaceCompilesForSm80AndSm90) {
  const auto keys = default_space_instances();
  std::map<Kernel, int> per_kernel;
  for (const auto& k : keys) per_kernel[k.traits.kernel]++;
  int clusters = 0;
  for (const auto& k : keys) clusters += k.cluster_size > 1;
  std::printf("[ sweep    ] %zu instances: fwd %d, bwd_dx %d, bwd_dwdb %d (%d with clusters, sm_90 only); sm_80 and sm_90\n",
              keys.size(), per_kernel[Kernel::fwd], per_kernel[Kernel::bwd_dx], per_kernel[Kernel::bwd_dwdb], clusters);
  std::vector<Job> jobs;
  for (const auto& k : keys)
    for (const char* arch : {"sm_80", "sm_90"})
      if (k.cluster_size == 1 || std::string(arch) == "sm_90")  // clusters are sm_90+
        jobs.push_back({&k, arch});

  compile_all(jobs);
}

// The bwd_dx points of the space with 9-15 warps that stage their rows,
// where the finishing entry's tree outgrows 8 KB,
// with the fused forms' traits whose staged rows take the most shared
// memory: a residual of x's dtype (RMSNorm, bf16) and an fp32 residual
// beside fp16 rows (LayerNorm, zero-centred gamma). The LayerNorm rotation
// above stages less: session 56's cold tune found four RMSNorm + add
// instances that ptxas refused (static shared memory past 48 KB beside the
// tree), which no test had compiled.
TEST(Nvrtc, FusedBackwardSpaceCompilesForSm90) {
  std::map<Point, std::int64_t> at;  // -> an N that produces it
  for (std::int64_t n : gen::default_n_grid())
    for (const Config& c : gen::search_space({Kernel::bwd_dx, DType::f16, n, 4096, 132, 90})) {
      if (gen::is_wide_bwd(Kernel::bwd_dx, c)) continue;
      at.emplace(Point{Kernel::bwd_dx, c.block_size, c.num_warps, c.rows_per_cta, c.cluster_size,
                       n <= static_cast<std::int64_t>(c.block_size) * c.cluster_size},
                 n);
    }
  Traits rms{Kernel::bwd_dx, DType::bf16, DType::bf16, true, false};
  rms.norm = Norm::rms;
  rms.residual = DType::bf16;
  Traits ln{Kernel::bwd_dx, DType::f16, DType::f32, true, true};
  ln.residual = DType::f32;
  ln.zero_centered = true;
  std::vector<InstanceKey> keys;
  for (const auto& [pt, n] : at) {
    Config c{pt.block, pt.warps, pt.rows, 0};
    c.cluster_size = pt.cluster;
    for (const Traits& t : {rms, ln}) {
      try {
        auto key = gen::make_instance(t, c, n, gen::max_vec(t.x_dtype));
        // Only where the finishing entry's tree outgrows 8 KB (9-15 warps)
        // beside staged rows, static or dynamic: the whole list took ten
        // minutes of CI's two cores.
        if (key.num_warps > 8 && key.num_warps < 16 && gen::stages_bwd_rows(key, 90))
          keys.push_back(std::move(key));
      } catch (const Error&) {
        // Invalid for these traits (a residual's row past what the config's
        // shared memory holds): the space lists it as such.
      }
    }
  }
  std::printf("[ sweep    ] %zu fused bwd_dx instances of 9-15 warps staging rows, of %zu points, sm_90\n",
              keys.size(), at.size());
  ASSERT_GE(keys.size(), 4u) << "session 56's four failing instances are among these points";
  std::vector<Job> jobs;
  for (const auto& k : keys) jobs.push_back({&k, "sm_90"});
  compile_all(jobs);
}

}  // namespace
}  // namespace lntune
