// The tuner's compile pool (tuner/compile_pool.hpp): NVRTC needs no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <chrono>

#include "temp_dir.hpp"
#include "generator/instance.hpp"
#include "runtime/cache_binding.hpp"
#include "runtime/nvrtc.hpp"
#include "tuner/compile_pool.hpp"
#include "tuner_test_util.hpp"

namespace {

using namespace lntune;
using namespace lntune::tune;
using namespace lntune::testing;

// ------------------------------------------------------------ compile pool
TEST(CompilePoolTest, CompilesOnceIntoTheStoreThenReusesIt) {
  TempDir tmp;
  auto stack = std::make_shared<cache::CacheStack>(tmp / "c.db", std::vector<std::string>{});
  auto backing = std::make_shared<rt::CacheBinaryStore>(stack);
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  const InstanceKey a = gen::make_instance(t, cfg(1024, 4), 1024, 8);
  const InstanceKey b = gen::make_instance(t, cfg(1024, 2), 1024, 8);
  {
    auto layered = std::make_shared<LayeredBinaryStore>(backing);
    CompilePool pool("sm_90", layered, 2);
    auto fa = pool.submit(a), fb = pool.submit(b), fa2 = pool.submit(a);
    const CompileResult ra = fa.get(), rb = fb.get();
    EXPECT_TRUE(ra.ok) << ra.error;
    EXPECT_TRUE(rb.ok) << rb.error;
    EXPECT_FALSE(ra.from_cache);
    EXPECT_TRUE(fa2.get().ok);
    const CompileStats s = pool.stats();
    EXPECT_EQ(s.compiled, 2u);  // `a` twice: compiled once
    EXPECT_EQ(s.failed, 0u);
    const std::string hash = rt::binary_hash(gen::render(a), "sm_90");
    EXPECT_TRUE(layered->in_memory(hash, "sm_90", rt::nvrtc_version()));
    EXPECT_TRUE(backing->get(hash, "sm_90", rt::nvrtc_version()));
  }
  // A second run finds both in the persistent cache.
  auto layered = std::make_shared<LayeredBinaryStore>(backing);
  CompilePool pool("sm_90", layered, 1);
  EXPECT_TRUE(pool.submit(a).get().from_cache);
  EXPECT_TRUE(pool.submit(b).get().from_cache);
  EXPECT_EQ(pool.stats().compiled, 0u);
  EXPECT_EQ(pool.stats().from_cache, 2u);
}

TEST(CompilePoolTest, FailuresAndCancellationAreResults) {
  auto layered = std::make_shared<LayeredBinaryStore>();
  CompilePool pool("sm_1", layered, 1);  // not an architecture: every compile fails
  const Traits t{Kernel::fwd, DType::f32, DType::f32, true, true};
  const CompileResult r = pool.submit(gen::make_instance(t, cfg(256, 1), 256, 4)).get();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("sm_90"), std::string::npos) << r.error;  // "architecture must look like sm_90"
  pool.cancel();
  EXPECT_EQ(pool.stats().failed, 1u);
}


TEST(CompilePoolTest, UrgentJobsGoAheadInTheirOwnOrder) {
  auto layered = std::make_shared<LayeredBinaryStore>();
  CompilePool pool("sm_90", layered, 1);
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  auto key = [&](int warps) { return gen::make_instance(t, cfg(1024, warps), 1024, 8); };
  const InstanceKey a = key(1), b = key(2), c = key(4), d = key(8), e = key(16);
  auto fa = pool.submit(a);
  // The one worker busy with `a` (a compilation of a few tenths of a second)
  // while the rest queue.
  for (int i = 0; i < 10000 && !pool.queued().empty(); ++i) std::this_thread::sleep_for(std::chrono::microseconds(100));
  auto fb = pool.submit(b), fc = pool.submit(c);
  auto fd = pool.submit(d, true), fe = pool.submit(e, true);
  auto fb2 = pool.submit(b, true);  // queued: moves up behind the urgent ones
  // Jobs start in queue order, so whatever the worker took meanwhile is a
  // prefix of this order and what is left its suffix.
  const std::vector<InstanceKey> order{d, e, b, c}, q = pool.queued();
  ASSERT_LE(q.size(), order.size());
  EXPECT_TRUE(std::equal(q.begin(), q.end(), order.end() - static_cast<std::ptrdiff_t>(q.size())))
      << q.size() << " queued";
  EXPECT_EQ(q.size(), order.size()) << "the worker finished `a` before the others were queued (a slow machine?)";
  for (auto* f : {&fa, &fb, &fc, &fd, &fe, &fb2}) EXPECT_TRUE(f->get().ok) << f->get().error;
  EXPECT_TRUE(pool.queued().empty());
  EXPECT_EQ(pool.stats().compiled, 5u);
  // Urgent jobs submitted after the queue drained keep their own order too.
  const InstanceKey f = gen::make_instance(t, cfg(2048, 4), 2048, 8);
  EXPECT_TRUE(pool.submit(f, true).get().ok);
}

}  // namespace
