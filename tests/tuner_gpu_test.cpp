// The tuner on a GPU (ctest label "gpu"): tune small keys into a temporary
// cache, then launch through that cache and check the launcher reports the
// tuned config. Skips, saying why, without a GPU.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.hpp"
#include "gpu_util.hpp"
#include "lntune/lntune.hpp"
#include "runtime/cache_binding.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc.hpp"
#include "generator/instance.hpp"
#include "runtime/runtime.hpp"
#include "tuner/report.hpp"
#include "tuner/compare.hpp"
#include "tuner/device_check.hpp"
#include "tuner/device_fill.hpp"
#include "tuner/device_reference.hpp"
#include "tuner/device_pool.hpp"
#include "tuner/random_fill.hpp"
#include "tuner/reference.hpp"
#include "tuner/reference_oracle.hpp"
#include "tuner/search.hpp"
#include "tuner/uploader.hpp"
#include "tuner/host_dtype.hpp"
#include "tuner/tuner.hpp"
#include "tuner/workload.hpp"

namespace {

namespace fs = std::filesystem;
using namespace lntune;

using lntune::testing::TempDir;

// The launcher's call on a workload's buffers (the public API's forward or
// backward, with its default config): a correct output for verify().
std::function<void(CUstream)> launcher_call(const tune::Workload& w, Kernel k) {
  return [&w, k](CUstream st) {
    if (k == Kernel::fwd) {
      ForwardArgs a = w.forward_args();
      a.stream = st;
      forward(a);
    } else {
      BackwardArgs a = w.backward_args();
      a.stream = st;
      backward(a);
    }
  };
}

// What a GPU-built workload needs: the fill and reference kernels, the
// stream they run on (a runner's) and a buffer pool.
struct GpuBuild {
  explicit GpuBuild(const rt::DeviceInfo& dev)
      : fill(dev.arch()), reference(dev.arch()), runner(dev), pool(std::size_t{1} << 30) {
    build.fill = &fill;
    build.reference = &reference;
    build.stream = runner.stream();
  }
  tune::DeviceFill fill;
  tune::DeviceReference reference;
  tune::Runner runner;
  tune::DevicePool pool;
  tune::DeviceBuild build;
};

tune::TuneOptions quick_options() {
  tune::TuneOptions o;
  o.budget_s = 120;
  o.runner.rule.min_reps = 10;
  o.runner.rule.max_reps = 60;
  o.runner.rule.max_seconds = 0.5;
  o.runner.warmup_ms = 5;
  return o;
}

TEST(TunerGpu, TunesAKeyAndTheLauncherUsesIt) {
  LNTUNE_REQUIRE_GPU();
  TempDir tmp;
  auto stack = std::make_shared<cache::CacheStack>(tmp / "c.db", std::vector<std::string>{});
  cache::Database* db = stack->writable();
  ASSERT_NE(db, nullptr);
  const auto targets = tune::make_targets({1024}, {4096}, {DType::bf16}, {Kernel::fwd, Kernel::bwd_dx});
  const tune::TuneSummary s =
      tune::run_tuning(targets, *db, std::make_shared<rt::CacheBinaryStore>(stack), quick_options());
  ASSERT_TRUE(s.fatal.empty()) << s.fatal;
  EXPECT_GT(s.copy_gbps, 100);
  ASSERT_EQ(s.keys.size(), 3u);  // fwd, bwd_dx, bwd_dwdb
  for (const auto& k : s.keys) {
    EXPECT_EQ(k.state, tune::KeyResult::State::tuned) << tune::key_label(k.key) << ": " << k.message;
    ASSERT_TRUE(k.record);
    EXPECT_EQ(*db->find(k.key), *k.record);
    EXPECT_EQ(k.outcome.best()->status, tune::Status::ok);
    EXPECT_GT(k.record->gbps, 0);
    EXPECT_GT(k.record->default_median_us, 0);
    EXPECT_EQ(k.record->prov.origin, cache::Origin::tuned);
  }
  EXPECT_GT(db->binary_count(), 0u);

  // Resume: nothing left to tune.
  const tune::TuneSummary again =
      tune::run_tuning(targets, *db, std::make_shared<rt::CacheBinaryStore>(stack), quick_options());
  for (const auto& k : again.keys) EXPECT_EQ(k.state, tune::KeyResult::State::cached) << tune::key_label(k.key);
  EXPECT_EQ(again.compile.compiled, 0u);

  // A runtime with this cache installed picks the tuned configs.
  rt::Runtime launcher;
  launcher.install_cache(stack);
  tune::Workload fw(targets[0].traits, 4096, 1024, 1);
  const Choice cf = launcher.explain_forward(fw.forward_args());
  EXPECT_EQ(cf.reason, "tuned (exact)");
  EXPECT_EQ(cf.config, s.keys[0].record->config);
  tune::Workload bw(targets[1].traits, 4096, 1024, 1);
  const Choice cb = launcher.explain_backward(bw.backward_args());
  EXPECT_EQ(cb.reason, "tuned (exact)");
  EXPECT_EQ(cb.config, s.keys[1].record->config);
  // Same bucket, another N: the nearest tuned N.
  tune::Workload near(targets[0].traits, 4096, 1536, 1);
  EXPECT_EQ(launcher.explain_forward(near.forward_args()).reason, "tuned (nearest N=1024)");
  // Warm calls compile nothing.
  const auto before = launcher.kernel_cache_stats();
  for (int i = 0; i < 5; ++i) launcher.forward(fw.forward_args());
  launcher.backward(bw.backward_args());
  rt::check(rt::driver().CtxSynchronize(), "synchronize");
  EXPECT_EQ(launcher.kernel_cache_stats().compiled, before.compiled);
  launcher.set_tuned(false);
  EXPECT_EQ(launcher.explain_forward(fw.forward_args()).reason, "default heuristic");
  // The default runtime (the public API's) was never touched by the tuner.
  EXPECT_NE(rt::default_runtime().cache_stack(), stack);
}

TEST(TunerGpu, SpentBudgetSkipsKeysAndResumeTunesThem) {
  LNTUNE_REQUIRE_GPU();
  TempDir tmp;
  auto stack = std::make_shared<cache::CacheStack>(tmp / "c.db", std::vector<std::string>{});
  cache::Database* db = stack->writable();
  const auto targets = tune::make_targets({4096}, {4096}, {DType::f16}, {Kernel::fwd});
  tune::TuneOptions o = quick_options();
  o.budget_s = 1e-6;  // spent before the first key
  const tune::TuneSummary s = tune::run_tuning(targets, *db, std::make_shared<rt::CacheBinaryStore>(stack), o);
  ASSERT_EQ(s.keys.size(), 1u);
  EXPECT_TRUE(s.budget_spent);
  const auto& k = s.keys[0];
  EXPECT_EQ(k.state, tune::KeyResult::State::skipped_budget) << k.message;
  EXPECT_FALSE(k.record);
  EXPECT_FALSE(db->find(k.key));
  o.budget_s = 0;
  const tune::TuneSummary s2 = tune::run_tuning(targets, *db, std::make_shared<rt::CacheBinaryStore>(stack), o);
  ASSERT_EQ(s2.keys.size(), 1u);
  EXPECT_EQ(s2.keys[0].state, tune::KeyResult::State::tuned) << s2.keys[0].message;
  EXPECT_TRUE(tune::is_tuned(*db, k.key));
  // Every candidate of the space was tried (or pruned), and none failed.
  for (const auto& c : s2.keys[0].outcome.candidates) {
    EXPECT_NE(c.status, tune::Status::skipped);
    EXPECT_NE(c.status, tune::Status::wrong) << to_string(c.config) << ": " << c.message;
    EXPECT_NE(c.status, tune::Status::compile_error) << to_string(c.config) << ": " << c.message;
  }
}

// Session 56's cold tune of the default grid on an H200: the bwd_dwdb search
// after a bwd_dx finalist that the launcher finishes in its own kernel
// (768 columns at M = 4096: 264 CTAs, a cooperative grid) found the pooled
// workspace's counters unzeroed, and every candidate of more than one split
// wrote nothing; after a cluster finalist whose group_size_m exceeds the
// clusters that fit at once (18432 columns: clusters of 3, 88 groups) it
// reduced partial rows at the unfitted config's offsets, and the key failed
// ("no bwd_dwdb config ran after the bwd_dx finalists"). Both keys tune, and
// no bwd_dwdb candidate is wrong.
TEST(TunerGpu, DwdbSearchAfterInKernelFinishesAndFittedClusters) {
  LNTUNE_REQUIRE_GPU();
  TempDir tmp;
  auto stack = std::make_shared<cache::CacheStack>(tmp / "c.db", std::vector<std::string>{});
  cache::Database* db = stack->writable();
  ASSERT_NE(db, nullptr);
  const auto targets = tune::make_targets({768, 18432}, {4096}, {DType::bf16}, {Kernel::bwd_dx});
  const tune::TuneSummary s =
      tune::run_tuning(targets, *db, std::make_shared<rt::CacheBinaryStore>(stack), quick_options());
  ASSERT_TRUE(s.fatal.empty()) << s.fatal;
  ASSERT_EQ(s.keys.size(), 4u);  // bwd_dx and bwd_dwdb of each N
  int dwdb_keys = 0;
  rt::Runtime launcher;
  launcher.install_cache(stack);
  for (const auto& k : s.keys) {
    EXPECT_EQ(k.state, tune::KeyResult::State::tuned) << tune::key_label(k.key) << ": " << k.message;
    if (k.key.traits.kernel != Kernel::bwd_dwdb) continue;
    ++dwdb_keys;
    for (const auto& c : k.outcome.candidates)
      EXPECT_NE(c.status, tune::Status::wrong) << tune::key_label(k.key) << " " << to_string(c.config) << ": "
                                               << c.message;
    // Stored where the launcher looks it up: the M bucket of the partial
    // rows that its plan's bwd_dx (fitted to what runs at once) writes.
    tune::Workload bw(targets[0].traits, 4096, k.key.n, 8);
    const auto plan = launcher.backward_plan(bw.bwd_problem());
    EXPECT_EQ(k.key.m_bucket, cache::m_bucket(rt::partial_rows(plan->dx.config, 4096), k.key.gpu.sm_count))
        << tune::key_label(k.key) << ", the plan's bwd_dx " << to_string(plan->dx.config);
  }
  EXPECT_EQ(dwdb_keys, 2);
}

TEST(TunerGpu, RunnerMeasuresTheCopyBandwidth) {
  LNTUNE_REQUIRE_GPU();
  const rt::DeviceInfo& dev = rt::default_runtime().current_device();
  tune::Runner runner(dev);
  const double gbps = runner.copy_gbps();
  EXPECT_GT(gbps, 100) << dev.name;
  EXPECT_LT(gbps, 20000) << dev.name;
}

// The GPU's element check counts exactly the elements ref::compare counts
// as mismatches, in every dtype: equal bits, values at and just beyond the
// tolerance, the poison pattern, NaN on either side, infinities of either
// sign, signed zeros; on an odd count that no block size divides.
TEST(DeviceCheck, CountsWhatTheHostComparisonCounts) {
  LNTUNE_REQUIRE_GPU();
  const rt::DeviceInfo& dev = rt::default_runtime().current_device();
  tune::DeviceCheck check(dev.arch());
  tune::Runner runner(dev);
  const std::int64_t n = (std::int64_t{1} << 20) + 37;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType d : {DType::f32, DType::f16, DType::bf16}) {
    const std::size_t es = dtype_size(d);
    std::vector<unsigned char> want(static_cast<std::size_t>(n) * es), got;
    auto set = [&](std::vector<unsigned char>& a, std::int64_t i, double v) {
      ref::store_element(d, a.data(), i, v);
    };
    std::mt19937_64 rng(7 + static_cast<int>(d));
    std::normal_distribution<double> normal(0.0, 3.0);
    for (std::int64_t i = 0; i < n; ++i) set(want, i, normal(rng));
    got = want;
    const ref::Tolerance tol{1e-2, 1e-2};
    std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
    for (int k = 0; k < 300; ++k) {
      const std::int64_t i = pick(rng);
      const double w = ref::load_element(d, want.data(), i);
      switch (k % 10) {
        case 0: set(got, i, w + 0.5 * (tol.atol + tol.rtol * std::fabs(w))); break;   // within
        case 1: set(got, i, w + 4.0 * (tol.atol + tol.rtol * std::fabs(w))); break;   // beyond
        case 2: ref::poison(d, got.data() + static_cast<std::size_t>(i) * es, 1); break;
        case 3: set(got, i, nan); break;
        case 4: set(want, i, nan); break;                                              // NaN vs value
        case 5: set(got, i, nan); set(want, i, nan); break;                            // both NaN: fine
        case 6: set(got, i, inf); break;
        case 7: set(got, i, -inf); set(want, i, inf); break;
        case 8: set(got, i, inf); set(want, i, inf); break;                            // equal: fine
        default: set(got, i, -0.0); set(want, i, 0.0); break;                          // signed zeros: fine
      }
    }
    const auto host = ref::compare(d, got.data(), want.data(), 1, n, n, n, tol, ref::poison_bits(d));
    ASSERT_GT(host.mismatches, 50) << "the case this test is about";
    rt::DeviceBuffer g(got.size()), w(want.size());
    lntune::testing::upload(g.get(), got.data(), got.size());
    lntune::testing::upload(w.get(), want.data(), want.size());
    EXPECT_EQ(check.failures(d, g.get(), w.get(), n, tol, ref::poison_bits(d), runner.stream()),
              static_cast<std::uint64_t>(host.mismatches))
        << to_string(d);
    EXPECT_EQ(check.failures(d, w.get(), w.get(), n, tol, ref::poison_bits(d), runner.stream()), 0u) << to_string(d);
    // Without the poison check the pattern is a NaN like any other.
    const auto host_np = ref::compare(d, got.data(), want.data(), 1, n, n, n, tol);
    EXPECT_EQ(check.failures(d, g.get(), w.get(), n, tol, std::nullopt, runner.stream()),
              static_cast<std::uint64_t>(host_np.mismatches))
        << to_string(d);
  }
}

// The pool hands back the smallest kept buffer that fits and is at most
// twice the request, allocates its size class otherwise, and keeps at most
// its limit.
TEST(DevicePool, ReusesTheSmallestFittingBufferWithinItsLimit) {
  LNTUNE_REQUIRE_GPU();
  (void)rt::default_runtime().current_device();
  constexpr std::size_t MB = std::size_t{1} << 20;
  tune::DevicePool pool(150 * MB);
  rt::DeviceBuffer a = pool.take(96 * MB), b = pool.take(32 * MB);  // both exact classes
  const CUdeviceptr pa = a.get(), pb = b.get();
  ASSERT_NE(pa, 0u);
  EXPECT_EQ(a.size(), 96 * MB);
  pool.give(std::move(a));
  pool.give(std::move(b));
  EXPECT_EQ(pool.stats().kept_bytes, 128 * MB);
  rt::DeviceBuffer c = pool.take(20 * MB);  // 32 MB fits (<= 2x): reused
  EXPECT_EQ(c.get(), pb);
  rt::DeviceBuffer d = pool.take(40 * MB);  // 96 MB is more than twice: a new one
  EXPECT_NE(d.get(), pa);
  EXPECT_EQ(d.size(), 40 * MB);
  rt::DeviceBuffer e = pool.take(60 * MB);  // 96 MB: reused
  EXPECT_EQ(e.get(), pa);
  EXPECT_EQ(pool.stats().kept_bytes, 0u);
  EXPECT_EQ(pool.stats().taken, 5u);
  EXPECT_EQ(pool.stats().reused, 2u);
  pool.give(std::move(e));
  pool.give(std::move(d));
  pool.give(std::move(c));  // 168 MB > 150: the largest (96 MB) is freed
  EXPECT_EQ(pool.stats().kept_bytes, 72 * MB);
  rt::DeviceBuffer f = pool.take(100 * MB);  // a new one, of its class
  EXPECT_EQ(f.size(), 112 * MB);
  pool.trim();
  EXPECT_EQ(pool.stats().kept_bytes, 0u);
  EXPECT_EQ(pool.take(0).get(), 0u);
}

// Uploads through the staging lanes arrive intact: sizes around the chunk
// (one byte, a partial chunk, whole chunks, an odd tail), several threads at
// once (each on its own lane).
TEST(Uploader, CopiesEveryByteFromSeveralThreads) {
  LNTUNE_REQUIRE_GPU();
  (void)rt::default_runtime().current_device();
  CUcontext ctx = nullptr;
  ASSERT_EQ(rt::driver().CtxGetCurrent(&ctx), CUDA_SUCCESS);
  constexpr std::size_t kChunk = 64 * 1024;
  tune::Uploader up(kChunk);
  const std::vector<std::size_t> sizes = {1, 1000, kChunk, 2 * kChunk, 5 * kChunk + 77, 3 * 1000 * 1000 + 1};
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < errors.size(); ++t) {
    threads.emplace_back([&, t] {
      try {
        rt::check(rt::driver().CtxSetCurrent(ctx), "cuCtxSetCurrent");
        for (std::size_t bytes : sizes) {
          std::vector<unsigned char> src(bytes), back(bytes, 0);
          for (std::size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>((i * 131 + t * 7 + bytes) >> 3);
          rt::DeviceBuffer dst(bytes);
          rt::check(rt::driver().MemsetD8(dst.get(), 0xA5, bytes), "cuMemsetD8");
          // The memset may still be running (it returns early for device
          // memory) and the upload lanes are non-blocking streams: without
          // this, the poison can land on top of the upload.
          rt::check(rt::driver().CtxSynchronize(), "cuCtxSynchronize");
          up.upload(dst.get(), src.data(), bytes);
          rt::check(rt::driver().MemcpyDtoH(back.data(), dst.get(), bytes), "cuMemcpyDtoH");
          if (back != src) {
            errors[t] = "thread " + std::to_string(t) + ": " + std::to_string(bytes) + " bytes differ";
            return;
          }
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  EXPECT_GE(up.lanes(), 1u);
  EXPECT_LE(up.lanes(), errors.size());
}

// The GPU draws the host's inputs bit for bit (tuner/random_fill.hpp), with
// the same magnitude: small and tabulated sizes, an odd count, every dtype,
// two seeds, two (offset, scale) pairs.
TEST(DeviceFill, DrawsTheHostsBitsAndMagnitude) {
  LNTUNE_REQUIRE_GPU();
  const rt::DeviceInfo& dev = rt::default_runtime().current_device();
  tune::DeviceFill gpu(dev.arch());
  tune::Runner runner(dev);
  for (DType d : {DType::f32, DType::f16, DType::bf16})
    for (std::int64_t count : {std::int64_t{1}, std::int64_t{65537}, std::int64_t{4} * tune::rnd::kSums + 4097})
      for (std::uint64_t seed : {std::uint64_t{7}, std::uint64_t{0x1234567887654321ULL}})
        for (auto [offset, scale] : {std::pair{0.5, 2.0}, std::pair{0.0, 1.0}}) {
          const std::size_t bytes = static_cast<std::size_t>(count) * dtype_size(d);
          std::vector<unsigned char> host(bytes), back(bytes, 0);
          const double hm = tune::rnd::fill(host.data(), d, count, offset, scale, seed);
          rt::DeviceBuffer buf(bytes);
          ASSERT_EQ(rt::driver().MemsetD8(buf.get(), 0xA5, bytes), CUDA_SUCCESS);
          // The runner's stream does not wait for the legacy stream's memset
          // (call 7: with other processes on the GPU, 2 MB of poison landed
          // on top of the fill).
          ASSERT_EQ(rt::driver().CtxSynchronize(), CUDA_SUCCESS);
          const double gm = gpu.fill(buf.get(), d, count, offset, scale, seed, runner.stream());
          ASSERT_EQ(rt::driver().MemcpyDtoH(back.data(), buf.get(), bytes), CUDA_SUCCESS);
          EXPECT_EQ(std::memcmp(host.data(), back.data(), bytes), 0)
              << to_string(d) << " count " << count << " seed " << seed << " offset " << offset;
          EXPECT_EQ(gm, hm) << to_string(d) << " count " << count;
        }
}

// A workload that verifies on the GPU passes a correct output without
// downloading it, and fails a wrong one with the host's description.
TEST(DeviceCheck, WorkloadVerificationOnTheGpu) {
  LNTUNE_REQUIRE_GPU();
  const rt::DeviceInfo& dev = rt::default_runtime().current_device();
  tune::DeviceCheck check(dev.arch());
  tune::Runner runner(dev);
  // Buffers from a pool, given back and taken again by the second workload
  // (garbage from the first: the verification must not care).
  tune::DevicePool buffers(std::size_t{1} << 30);
  tune::Uploader uploader(256 * 1024);  // small chunks: several per input
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx}) {
    Traits t;
    t.kernel = k;
    t.x_dtype = t.w_dtype = DType::bf16;
    tune::Workload w(tune::Workload::prepare(t, 1000, 1537, 11), &buffers, &uploader);
    w.use_device_check(&check);
    w.upload_reference();
    const CUstream s = runner.stream();
    const auto correct = launcher_call(w, k);
    EXPECT_EQ(w.verify(correct, s), "") << to_string(k);
    // One element changed after the kernel: caught, and described.
    void* out = k == Kernel::fwd ? w.forward_args().y : w.backward_args().dx;
    const CUdeviceptr bad = reinterpret_cast<CUdeviceptr>(out) + 2 * (999 * 1537 + 1536);
    const std::string why = w.verify(
        [&](CUstream st) {
          correct(st);
          const std::uint16_t v = 0x4480;  // 1024 in bf16
          ASSERT_EQ(rt::driver().StreamSynchronize(st), CUDA_SUCCESS);
          lntune::testing::upload(bad, &v, 2);
        },
        s);
    const std::string what = k == Kernel::fwd ? "y: " : "dx: ";
    EXPECT_EQ(why.rfind(what, 0), 0u) << why;
    EXPECT_NE(why.find("[999, 1536]"), std::string::npos) << why;
    EXPECT_NE(why.find("1 of 1537000 elements wrong"), std::string::npos) << why;
    // Nothing written: every element is the poison pattern.
    const std::string none = w.verify([](CUstream) {}, s);
    EXPECT_NE(none.find("unwritten"), std::string::npos) << none;
  }
}

// ---- the float64 reference on the GPU (tuner/device_reference.hpp) ---------------------

// The device's double -> dtype rounding (reference.cuh's store: fp32 by
// __double2float_rn, fp16 and bf16 by round_small) gives the host's bits
// (ref::store_element: one RNE rounding), on ties, just beside them, values
// that a rounding through fp32 would round twice, subnormals, overflow,
// infinities, NaNs, and a million random magnitudes.
TEST(DeviceReference, RoundsDoublesAsTheHostDoes) {
  LNTUNE_REQUIRE_GPU();
  const rt::DeviceInfo& dev = rt::default_runtime().current_device();
  gen::KernelSource src;
  src.kernel_name = "round_all";
  src.source =
      "#include \"lntune/kernels/reference.cuh\"\n"
      "extern \"C\" __global__ void round_all(const double* v, long long n, int dtype, void* out) {\n"
      "  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n"
      "  if (i < n) lntune::refk::store(out, dtype, i, v[i]);\n"
      "}\n";
  const rt::CompiledKernel k = rt::compile(src, dev.arch());
  CUmodule mod = nullptr;
  ASSERT_EQ(rt::driver().ModuleLoadData(&mod, k.binary.data()), CUDA_SUCCESS);
  CUfunction f = nullptr;
  ASSERT_EQ(rt::driver().ModuleGetFunction(&f, mod, "round_all"), CUDA_SUCCESS);

  auto bits = [](std::uint64_t b) {
    double d;
    std::memcpy(&d, &b, 8);
    return d;
  };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0, -0.0, inf, -inf, std::numeric_limits<double>::quiet_NaN(),
                           bits(0x7ff8000000000123ULL), bits(0xfff0000000000001ULL), bits(0x7ff4000000000000ULL),
                           4.9e-324, -4.9e-324, std::numeric_limits<double>::min(),
                           // fp16: max, beside and at its overflow tie, subnormals and their ties
                           65504.0, 65519.99, 65520.0, 65536.0, -65520.0, 0x1p-24, 0x1p-25, 0x1p-25 * 1.0000001,
                           0x1p-26, 1.5 * 0x1p-24, 2.5 * 0x1p-24, 0x1p-14, 0x1p-14 - 0x1p-25, 0x1p-14 - 0x1p-26,
                           // a double just above an fp16 tie that fp32 would round onto it
                           1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-11 - 0x1p-40, 1.0 + 0x1p-11, 1.0 + 3 * 0x1p-11,
                           // bf16: ties, beside them, max, overflow, subnormals
                           1.0 + 0x1p-8, 1.0 + 3 * 0x1p-8, 1.0 + 0x1p-8 + 0x1p-40, 1.0 + 0x1p-8 - 0x1p-40,
                           3.3895313892515355e38, 3.3961e38, 3.4e38, 1e39, 1e-40, 9.2e-41, 0x1p-134, 0x1p-133 * 1.5,
                           // fp32: ties and beside them, subnormals
                           1.0 + 0x1p-24, 1.0 + 0x1p-24 + 0x1p-60, 1.0 + 3 * 0x1p-24, 0x1p-149, 0x1p-150,
                           0x1p-150 * 1.0000001, 3.4028235677973366e38, 3.4028236e38};
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> mant(-2.0, 2.0);
  std::uniform_int_distribution<int> expo(-160, 140);
  std::uniform_int_distribution<std::uint32_t> word;
  for (int i = 0; i < 1000000; ++i) {
    switch (i % 4) {
      case 0: v.push_back(std::ldexp(mant(rng), expo(rng))); break;
      case 1: {  // an exact midpoint of two fp16 values (or of bf16 ones), perhaps nudged
        const std::uint16_t h = static_cast<std::uint16_t>(word(rng) & 0x7bff);
        const double a = ref::to_double<DType::f16>(h), b = ref::to_double<DType::f16>(static_cast<std::uint16_t>(h + 1));
        v.push_back((a + b) / 2 * (i % 8 == 1 ? 1.0 : 1.0 + 0x1p-45));
        break;
      }
      case 2: {
        const std::uint16_t h = static_cast<std::uint16_t>(word(rng) & 0x7f7f);
        const double a = ref::to_double<DType::bf16>(h), b = ref::to_double<DType::bf16>(static_cast<std::uint16_t>(h + 1));
        v.push_back(-(a + b) / 2 * (i % 8 == 2 ? 1.0 : 1.0 - 0x1p-45));
        break;
      }
      default: {  // a midpoint of two fp32 values
        float a;
        const std::uint32_t u = word(rng) & 0x7f7fffffu;
        std::memcpy(&a, &u, 4);
        v.push_back(static_cast<double>(a) + static_cast<double>(std::nextafter(a, std::numeric_limits<float>::infinity()) - a) / 2);
      }
    }
  }
  const long long n = static_cast<long long>(v.size());
  rt::DeviceBuffer in(v.size() * 8), out(v.size() * 4);
  lntune::testing::upload(in.get(), v.data(), v.size() * 8);
  for (DType d : {DType::f32, DType::f16, DType::bf16}) {
    CUdeviceptr pin = in.get(), pout = out.get();
    long long count = n;
    int dt = static_cast<int>(d);
    void* args[] = {&pin, &count, &dt, &pout};
    ASSERT_EQ(rt::driver().LaunchKernel(f, static_cast<unsigned>((n + 255) / 256), 1, 1, 256, 1, 1, 0, nullptr, args,
                                        nullptr),
              CUDA_SUCCESS);
    ASSERT_EQ(rt::driver().CtxSynchronize(), CUDA_SUCCESS);
    const std::size_t es = dtype_size(d);
    std::vector<unsigned char> got(v.size() * es), want(v.size() * es);
    ASSERT_EQ(rt::driver().MemcpyDtoH(got.data(), out.get(), got.size()), CUDA_SUCCESS);
    for (std::size_t i = 0; i < v.size(); ++i) ref::store_element(d, want.data(), static_cast<std::int64_t>(i), v[i]);
    int bad = 0;
    for (std::size_t i = 0; i < v.size() && bad < 10; ++i) {
      const bool same = d == DType::f32 ? tune::ulp_distance(d, got.data() + 4 * i, want.data() + 4 * i) == 0 &&
                                              (std::isnan(v[i]) || std::memcmp(got.data() + 4 * i, want.data() + 4 * i, 4) == 0)
                                        : std::memcmp(got.data() + 2 * i, want.data() + 2 * i, 2) == 0;
      if (!same) {
        ++bad;
        ADD_FAILURE() << to_string(d) << ": " << std::hexfloat << v[i] << std::defaultfloat << " rounds to GPU "
                      << ref::load_element(d, got.data(), static_cast<std::int64_t>(i)) << ", host "
                      << ref::load_element(d, want.data(), static_cast<std::int64_t>(i));
      }
    }
  }
  rt::driver().ModuleUnload(mod);
}

// Equal bytes, or a failure naming the first difference.
void expect_same_bytes(const std::string& what, const std::vector<unsigned char>& gpu,
                       const std::vector<unsigned char>& host) {
  ASSERT_EQ(gpu.size(), host.size()) << what;
  for (std::size_t i = 0; i < gpu.size(); ++i)
    if (gpu[i] != host[i]) {
      ADD_FAILURE() << what << ": byte " << i << " of " << gpu.size() << " differs (GPU " << int{gpu[i]} << ", host "
                    << int{host[i]} << ")";
      return;
    }
}

// Counts y/dx-like elements within one ulp; every element beyond is a failure.
struct UlpTally {
  std::int64_t compared = 0, one_ulp = 0;
};
void expect_ulps(const std::string& what, DType d, const void* gpu, const void* host, std::int64_t count,
                 std::uint64_t max_ulps, UlpTally& tally) {
  const tune::UlpCount c =
      tune::count_ulps(d, gpu, host, count, max_ulps, max_ulps > 0 ? tune::cancellation_floor(d, host, count) : 0.0);
  tally.compared += c.compared;
  tally.one_ulp += c.within;
  if (c.beyond == 0) return;
  const std::int64_t i = c.first_beyond;
  ADD_FAILURE() << what << ": " << c.beyond << " of " << count << " elements beyond " << max_ulps << " ulp; first ["
                << i << "]: GPU " << ref::load_element(d, gpu, i) << ", CPU " << ref::load_element(d, host, i);
}
template <class V>
void expect_ulps(const std::string& what, DType d, const V& gpu, const V& host, std::uint64_t max_ulps, UlpTally& t) {
  ASSERT_EQ(gpu.size(), host.size()) << what;
  const std::int64_t count =
      static_cast<std::int64_t>(gpu.size() * sizeof(typename V::value_type) / dtype_size(d));
  expect_ulps(what, d, gpu.data(), host.data(), count, max_ulps, t);
}

// Hand-made rows through DeviceReference directly, against the CPU
// reference: ordinary rows, a constant row (variance 0), huge and tiny
// values, a spike, and rows with NaN, +inf, and -inf with +inf (whose
// outputs are NaN on both sides, and which make every dW/dB column NaN);
// LayerNorm and RMSNorm, fp32 and bf16 rows, a warp per row (N = 7) and a
// CTA per row (N = 1500). Everything within one ulp, NaN where the CPU has
// NaN; dW/dB also on the finite rows alone.
TEST(DeviceReference, HandMadeRowsMatchTheCpu) {
  LNTUNE_REQUIRE_GPU();
  const rt::DeviceInfo& dev = rt::default_runtime().current_device();
  tune::DeviceReference gpu(dev.arch());
  tune::Runner runner(dev);
  const CUstream s = runner.stream();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  UlpTally tally;
  for (std::int64_t n : {std::int64_t{7}, std::int64_t{1500}})
    for (DType d : {DType::f32, DType::bf16})
      for (Norm norm : {Norm::layer, Norm::rms}) {
        SCOPED_TRACE(std::string(to_string(d)) + std::string(norm == Norm::rms ? " rms" : " layer") + " N=" + std::to_string(n));
        const std::int64_t m = 9;
        std::mt19937_64 rng(static_cast<std::uint64_t>(n) * 31 + static_cast<std::uint64_t>(d));
        std::normal_distribution<double> normal(0.0, 1.0);
        std::vector<unsigned char> x(static_cast<std::size_t>(m * n) * dtype_size(d));
        auto set = [&](std::int64_t r, std::int64_t j, double v) { ref::store_element(d, x.data(), r * n + j, v); };
        for (std::int64_t j = 0; j < n; ++j) {
          set(0, j, 1.0 + 3.0 * normal(rng));
          set(1, j, 2.5);
          set(2, j, 1e30 * normal(rng));
          set(3, j, 1e-30 * normal(rng));
          set(4, j, j == n / 2 ? 1000.0 : 0.0);
          set(5, j, j == n / 2 ? nan : normal(rng));
          set(6, j, j == 0 ? inf : normal(rng));
          set(7, j, j == 0 ? -inf : j == n - 1 ? inf : normal(rng));
          set(8, j, -0.5 + normal(rng));
        }
        std::vector<unsigned char> w(static_cast<std::size_t>(n) * dtype_size(d)), b(w.size()),
            dy(x.size());
        for (std::int64_t j = 0; j < n; ++j) {
          ref::store_element(d, w.data(), j, 1.0 + 0.5 * normal(rng));
          ref::store_element(d, b.data(), j, 0.5 * normal(rng));
        }
        for (std::int64_t i = 0; i < m * n; ++i) ref::store_element(d, dy.data(), i, normal(rng));
        const bool bias = norm == Norm::layer;
        tune::RefProblem p;
        p.m = m;
        p.n = n;
        p.x_dtype = p.w_dtype = p.y_dtype = d;
        p.norm = norm;
        p.eps = 1e-5f;
        rt::DeviceBuffer x_dev(x.size()), w_dev(w.size()), b_dev(w.size()), dy_dev(x.size());
        rt::DeviceBuffer dx_(x.size()), dw_(w.size()), db_(w.size()), y_(x.size()),
            mean_(static_cast<std::size_t>(m) * 4), rstd_(static_cast<std::size_t>(m) * 4);
        rt::DeviceBuffer ws(tune::DeviceReference::workspace_bytes(m, n));
        lntune::testing::upload(x_dev.get(), x.data(), x.size());
        lntune::testing::upload(w_dev.get(), w.data(), w.size());
        lntune::testing::upload(b_dev.get(), b.data(), b.size());
        lntune::testing::upload(dy_dev.get(), dy.data(), dy.size());
        // Forward.
        tune::DeviceReference::Forward f;
        f.x = x_dev.get();
        f.weight = w_dev.get();
        f.bias = bias ? b_dev.get() : 0;
        f.y = y_.get();
        f.mean = mean_.get();
        f.rstd = rstd_.get();
        const float rstd_max = gpu.forward(p, f, s);
        std::vector<unsigned char> gy(x.size()), hy(x.size());
        std::vector<float> gm(static_cast<std::size_t>(m)), gr(gm), hm(gm.size(), 0.f), hr(gm);
        ASSERT_EQ(rt::driver().MemcpyDtoH(gy.data(), y_.get(), gy.size()), CUDA_SUCCESS);
        ASSERT_EQ(rt::driver().MemcpyDtoH(gm.data(), mean_.get(), gm.size() * 4), CUDA_SUCCESS);
        ASSERT_EQ(rt::driver().MemcpyDtoH(gr.data(), rstd_.get(), gr.size() * 4), CUDA_SUCCESS);
        ref::FwdArgs fa;
        fa.M = m;
        fa.N = n;
        fa.x_stride = fa.y_stride = n;
        fa.x_dtype = fa.w_dtype = d;
        fa.x = x.data();
        fa.weight = w.data();
        fa.bias = bias ? b.data() : nullptr;
        fa.eps = p.eps;
        fa.norm = norm;
        ref::norm_forward(fa, hy.data(), norm == Norm::rms ? nullptr : hm.data(), hr.data(), nullptr);
        expect_ulps("y", d, gy, hy, 1, tally);
        expect_ulps("mean", DType::f32, gm, hm, 1, tally);
        expect_ulps("rstd", DType::f32, gr, hr, 1, tally);
        // The non-finite rows' rstd: NaN (RMSNorm: NaN for the NaN row; 1/sqrt(inf) = 0 for the infinite ones).
        if (norm == Norm::layer)
          EXPECT_TRUE(std::isnan(gr[5]) && std::isnan(gr[6]) && std::isnan(gr[7]));
        else
          EXPECT_TRUE(std::isnan(gr[5]) && gr[6] == 0.f && gr[7] == 0.f);
        float want_max = 0;
        for (float r : hr)
          if (!std::isnan(r)) want_max = std::max(want_max, r);
        EXPECT_LE(tune::ulp_distance(DType::f32, &rstd_max, &want_max), 1u) << rstd_max << " vs " << want_max;
        // Backward: every row (dW/dB NaN in every column), then the finite rows alone.
        for (std::int64_t rows : {m, std::int64_t{5}}) {
          tune::RefProblem q = p;
          q.m = rows;
          tune::DeviceReference::Backward bw;
          bw.dy = dy_dev.get();
          bw.x = x_dev.get();
          bw.weight = w_dev.get();
          bw.dx = dx_.get();
          bw.dw = dw_.get();
          bw.db = bias ? db_.get() : 0;
          bw.workspace = ws.get();
          bw.workspace_bytes = ws.size();
          gpu.backward(q, bw, s);
          const std::size_t xb = static_cast<std::size_t>(rows * n) * dtype_size(d);
          std::vector<unsigned char> gdx(xb), hdx(xb), gdw(w.size()), hdw(w.size()), gdb(w.size()), hdb(w.size());
          ASSERT_EQ(rt::driver().MemcpyDtoH(gdx.data(), dx_.get(), xb), CUDA_SUCCESS);
          ASSERT_EQ(rt::driver().MemcpyDtoH(gdw.data(), dw_.get(), w.size()), CUDA_SUCCESS);
          if (bias) {
            ASSERT_EQ(rt::driver().MemcpyDtoH(gdb.data(), db_.get(), w.size()), CUDA_SUCCESS);
          }
          ref::BwdArgs ba;
          ba.M = rows;
          ba.N = n;
          ba.dy_stride = ba.x_stride = ba.dx_stride = n;
          ba.x_dtype = ba.w_dtype = d;
          ba.dy = dy.data();
          ba.x = x.data();
          ba.weight = w.data();
          ba.eps = p.eps;
          ba.norm = norm;
          ref::layer_norm_backward(ba, hdx.data(), hdw.data(), bias ? hdb.data() : nullptr);
          expect_ulps("dx (" + std::to_string(rows) + " rows)", d, gdx, hdx, 1, tally);
          expect_ulps("dweight (" + std::to_string(rows) + " rows)", d, gdw, hdw, 1, tally);
          if (bias) expect_ulps("dbias (" + std::to_string(rows) + " rows)", d, gdb, hdb, 1, tally);
        }
      }
  std::printf("[ hand-made rows ] %lld values compared, %lld one ulp apart\n", static_cast<long long>(tally.compared),
              static_cast<long long>(tally.one_ulp));
  EXPECT_LE(tally.one_ulp, tally.compared / 1000 + 2);
}

// ---- workloads built on the GPU (tuner/workload.hpp) ------------------------------------

// The variants of the GPU reference tests: LayerNorm (with a bias) and
// RMSNorm (without), no residual, a residual in the row dtype, an fp32
// residual with bf16 rows; zero-centred or not; fp32, fp16, bf16.
std::vector<Traits> reference_variants(Kernel k) {
  std::vector<Traits> out;
  for (Norm norm : {Norm::layer, Norm::rms})
    for (DType d : {DType::f32, DType::f16, DType::bf16})
      for (int res = 0; res < 3; ++res)
        for (bool zc : {false, true}) {
          if (res == 2 && d != DType::bf16) continue;
          Traits t(k, d, d, true, norm == Norm::layer);
          t.norm = norm;
          if (res == 1) t.residual = d;
          if (res == 2) t.residual = DType::f32;
          t.zero_centered = zc;
          out.push_back(t);
        }
  return out;
}

std::string label(const Traits& t, std::int64_t m, std::int64_t n) {
  std::ostringstream os;
  os << t << " M=" << m << " N=" << n;
  return os.str();
}

// A workload built on the GPU has the host-built workload's inputs bit for
// bit (same seed), the same magnitudes for its tolerances, and a reference
// within one ulp of the CPU reference (counted, and bounded: at most one
// element in a thousand); its oracle passes. Every variant, forward and
// backward, M = 37 and N = 1, 7, 1000, 4099.
TEST(GpuWorkload, InputsAndReferenceMatchTheHostBuiltWorkload) {
  LNTUNE_REQUIRE_GPU();
  const rt::DeviceInfo& dev = rt::default_runtime().current_device();
  GpuBuild parts(dev);
  tune::DevicePool& pool = parts.pool;
  const tune::DeviceBuild& build = parts.build;
  UlpTally tally;
  std::int64_t oracle_one_ulp = 0, workloads = 0;
  const std::int64_t m = 37;
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx})
    for (const Traits& t : reference_variants(k))
      for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{1000}, std::int64_t{4099}}) {
        const std::string what = label(t, m, n);
        SCOPED_TRACE(what);
        const std::uint64_t seed = 1000 + static_cast<std::uint64_t>(n);
        tune::Workload host(tune::Workload::prepare(t, m, n, seed));
        tune::Workload gpu(t, m, n, seed, build, &pool);
        ASSERT_TRUE(gpu.built_on_gpu());
        const tune::OracleReport& o = gpu.oracle();
        EXPECT_TRUE(o.ok()) << o.error;
        oracle_one_ulp += o.one_ulp;
        ++workloads;
        const tune::Workload::Snapshot h = host.snapshot(), g = gpu.snapshot();
        // Inputs: bit for bit (z, the backward's input row with a residual, too).
        expect_same_bytes("x (or z)", g.x, h.x);
        expect_same_bytes("weight", g.weight, h.weight);
        expect_same_bytes("bias", g.bias, h.bias);
        expect_same_bytes("residual", g.residual, h.residual);
        expect_same_bytes("dy", g.dy, h.dy);
        expect_same_bytes("dz", g.dz, h.dz);
        EXPECT_EQ(g.wmax, h.wmax);
        EXPECT_EQ(g.bmax, h.bmax);
        EXPECT_EQ(g.dymax, h.dymax);
        // The backward's mean and rstd inputs, and its rstd maximum: from
        // fp32 roundings of double statistics, so within one fp32 ulp.
        expect_ulps("mean (input)", DType::f32, g.mean, h.mean, 1, tally);
        expect_ulps("rstd (input)", DType::f32, g.rstd, h.rstd, 1, tally);
        const float gr = static_cast<float>(g.rstd_max), hr = static_cast<float>(h.rstd_max);
        EXPECT_LE(tune::ulp_distance(DType::f32, &gr, &hr), 1u) << g.rstd_max << " vs " << h.rstd_max;
        // The reference.
        const DType main_dtype = k == Kernel::fwd ? t.out_dtype() : t.x_dtype;
        expect_ulps(k == Kernel::fwd ? "y" : "dx", main_dtype, g.ref_main, h.ref_main, 1, tally);
        expect_same_bytes("z", g.ref_z, h.ref_z);
        expect_ulps("mean", DType::f32, g.ref_mean, h.ref_mean, 1, tally);
        expect_ulps("rstd", DType::f32, g.ref_rstd, h.ref_rstd, 1, tally);
        expect_ulps("dweight", t.w_dtype, g.ref_dw, h.ref_dw, 1, tally);
        expect_ulps("dbias", t.w_dtype, g.ref_db, h.ref_db, 1, tally);
      }
  std::printf("[ GPU reference ] %lld workloads, %lld values compared with the host-built ones, %lld one ulp apart; "
              "the oracles counted %lld one-ulp values\n",
              static_cast<long long>(workloads), static_cast<long long>(tally.compared),
              static_cast<long long>(tally.one_ulp), static_cast<long long>(oracle_one_ulp));
  EXPECT_GT(tally.compared, 0);
  EXPECT_LE(tally.one_ulp, tally.compared / 1000 + 2);
}

// A GPU-built workload verifies a correct launcher output as "", and fails
// one changed element (described, with its place) and an unwritten output:
// forward and backward, LayerNorm and RMSNorm, without and with residuals,
// zero-centred or not, every dtype (one N per case, so that few kernels
// compile).
TEST(GpuWorkload, VerifiesCorrectOutputsAndFailsWrongOnes) {
  LNTUNE_REQUIRE_GPU();
  const rt::DeviceInfo& dev = rt::default_runtime().current_device();
  GpuBuild gpu(dev);
  tune::DevicePool& pool = gpu.pool;
  const tune::DeviceBuild& build = gpu.build;
  tune::DeviceCheck check(dev.arch());
  const CUstream s = gpu.runner.stream();
  const std::int64_t m = 37;
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx}) {
    const std::vector<Traits> variants = reference_variants(k);
    for (std::size_t j = 0; j < variants.size(); ++j) {
      // Half of them: each variant with or without zero-centring, in turn.
      const std::size_t base = j / 2;
      const Traits& t = variants[j];
      if (t.zero_centered != (base % 2 == 1)) continue;
      const std::int64_t n = base % 3 == 0 ? 7 : 1000;
      const std::string what = label(t, m, n);
      SCOPED_TRACE(what);
      tune::Workload w(t, m, n, 77, build, &pool);
      w.use_device_check(&check);
      const auto correct = launcher_call(w, k);
      EXPECT_EQ(w.verify(correct, s), "");
      // One element changed after the kernel (row 20, the last column): caught, and described.
      const DType d = k == Kernel::fwd ? t.out_dtype() : t.x_dtype;
      void* out = k == Kernel::fwd ? w.forward_args().y : w.backward_args().dx;
      const CUdeviceptr bad = reinterpret_cast<CUdeviceptr>(out) + dtype_size(d) * static_cast<std::size_t>(20 * n + n - 1);
      const std::string why = w.verify(
          [&](CUstream st) {
            correct(st);
            std::vector<unsigned char> v(dtype_size(d));
            ref::store_element(d, v.data(), 0, 1024.0);
            ASSERT_EQ(rt::driver().StreamSynchronize(st), CUDA_SUCCESS);
            lntune::testing::upload(bad, v.data(), v.size());
          },
          s);
      const std::string prefix = k == Kernel::fwd ? "y: " : "dx: ";
      EXPECT_EQ(why.rfind(prefix, 0), 0u) << why;
      EXPECT_NE(why.find("[20, " + std::to_string(n - 1) + "]"), std::string::npos) << why;
      EXPECT_NE(why.find("1 of " + std::to_string(m * n) + " elements wrong"), std::string::npos) << why;
      // Nothing written: every element is the poison pattern.
      const std::string none = w.verify([](CUstream) {}, s);
      EXPECT_NE(none.find("unwritten"), std::string::npos) << none;
      // And a correct run still passes afterwards.
      EXPECT_EQ(w.verify(correct, s), "");
    }
  }
}

// A GPU reference that disagrees with the CPU on a sampled row fails the
// workload: oracle() names the quantity and the place, and verify() throws
// KeyError (which the search does not turn into a candidate's failure: the
// key fails) instead of giving a verdict.
TEST(GpuWorkload, AWrongReferenceFailsTheKey) {
  LNTUNE_REQUIRE_GPU();
  const rt::DeviceInfo& dev = rt::default_runtime().current_device();
  GpuBuild gpu(dev);
  tune::DeviceCheck check(dev.arch());
  tune::Runner& runner = gpu.runner;
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx}) {
    Traits t(k, DType::bf16, DType::bf16, true, true);
    tune::DeviceBuild build = gpu.build;
    // Row 0, column 3 of the reference's y or dx: 1024 (far from any
    // normalised value).
    build.after_reference = [](CUdeviceptr main, CUstream st) {
      ASSERT_EQ(rt::driver().StreamSynchronize(st), CUDA_SUCCESS);
      const std::uint16_t v = 0x4480;
      lntune::testing::upload(main + 2 * 3, &v, 2);
    };
    tune::Workload w(t, 37, 1000, 5, build);
    w.use_device_check(&check);
    const tune::OracleReport& o = w.oracle();
    const std::string what = k == Kernel::fwd ? "y [0, 3]" : "dx [0, 3]";
    EXPECT_NE(o.error.find(what), std::string::npos) << o.error;
    EXPECT_NE(o.error.find("M=37 N=1000"), std::string::npos) << o.error;
    const auto correct = launcher_call(w, k);
    try {
      (void)w.verify(correct, runner.stream());
      ADD_FAILURE() << "verify gave a verdict on a wrong reference";
    } catch (const tune::KeyError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
}

// A tuning run with the CPU reference (--reference cpu) still tunes.
TEST(TunerGpu, TunesWithTheCpuReference) {
  LNTUNE_REQUIRE_GPU();
  TempDir tmp;
  auto stack = std::make_shared<cache::CacheStack>(tmp / "c.db", std::vector<std::string>{});
  cache::Database* db = stack->writable();
  ASSERT_NE(db, nullptr);
  const auto targets = tune::make_targets({1024}, {2048}, {DType::f16}, {Kernel::fwd});
  tune::TuneOptions o = quick_options();
  o.reference = tune::ReferenceMode::cpu;
  const tune::TuneSummary s = tune::run_tuning(targets, *db, std::make_shared<rt::CacheBinaryStore>(stack), o);
  ASSERT_TRUE(s.fatal.empty()) << s.fatal;
  for (const auto& k : s.keys)
    EXPECT_EQ(k.state, tune::KeyResult::State::tuned) << tune::key_label(k.key) << ": " << k.message;
}

}  // namespace
