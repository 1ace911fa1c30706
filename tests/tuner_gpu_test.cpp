// The tuner on a GPU (ctest label "gpu"): tune small keys into a temporary
// cache, then launch through that cache and check the launcher reports the
// tuned config. Skips, saying why, without a GPU.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.hpp"
#include "gpu_util.hpp"
#include "lntune/lntune.hpp"
#include "runtime/cache_binding.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/runtime.hpp"
#include "tuner/report.hpp"
#include "tuner/compare.hpp"
#include "tuner/device_check.hpp"
#include "tuner/device_fill.hpp"
#include "tuner/device_pool.hpp"
#include "tuner/random_fill.hpp"
#include "tuner/uploader.hpp"
#include "tuner/host_dtype.hpp"
#include "tuner/tuner.hpp"
#include "tuner/workload.hpp"

namespace {

namespace fs = std::filesystem;
using namespace lntune;

using lntune::testing::TempDir;

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
    ASSERT_EQ(rt::driver().MemcpyHtoD(g.get(), got.data(), got.size()), CUDA_SUCCESS);
    ASSERT_EQ(rt::driver().MemcpyHtoD(w.get(), want.data(), want.size()), CUDA_SUCCESS);
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
    auto correct = [&](CUstream st) {
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
    EXPECT_EQ(w.verify(correct, s), "") << to_string(k);
    // One element changed after the kernel: caught, and described.
    void* out = k == Kernel::fwd ? w.forward_args().y : w.backward_args().dx;
    const CUdeviceptr bad = reinterpret_cast<CUdeviceptr>(out) + 2 * (999 * 1537 + 1536);
    const std::string why = w.verify(
        [&](CUstream st) {
          correct(st);
          const std::uint16_t v = 0x4480;  // 1024 in bf16
          ASSERT_EQ(rt::driver().StreamSynchronize(st), CUDA_SUCCESS);
          ASSERT_EQ(rt::driver().MemcpyHtoD(bad, &v, 2), CUDA_SUCCESS);
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

}  // namespace
