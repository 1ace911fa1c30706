// Compilations in worker processes (tuner/compile_process.hpp): the lntune
// CLI's `_compile-worker`, driven over a socket. NVRTC needs no GPU.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <thread>

#include "generator/instance.hpp"
#include "runtime/nvrtc.hpp"
#include "tuner/compile_pool.hpp"
#include "tuner/compile_process.hpp"
#include "tuner_test_util.hpp"

#ifndef LNTUNE_CLI
#error "LNTUNE_CLI must be the path of the lntune binary"
#endif

namespace {

using namespace lntune;
using namespace lntune::tune;
using namespace lntune::testing;

gen::KernelSource fwd_source(int warps) {
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  return gen::render(gen::make_instance(t, cfg(1024, warps), 1024, 8));
}

TEST(CompileProcessTest, GivesTheInProcessCubinByteForByte) {
  CompileProcess p(LNTUNE_CLI);
  ASSERT_TRUE(p.alive());
  for (int warps : {2, 4}) {
    const gen::KernelSource src = fwd_source(warps);
    const rt::CompiledKernel a = p.compile(src, "sm_90");
    const rt::CompiledKernel b = rt::compile(src, "sm_90");
    EXPECT_EQ(a.binary, b.binary) << src.kernel_name;
    EXPECT_EQ(a.kernel_name, src.kernel_name);
    EXPECT_EQ(a.source_hash, src.hash);
    EXPECT_EQ(a.arch, "sm_90");
  }
}

TEST(CompileProcessTest, NvrtcErrorsComeBackAsCompileErrorsAndTheWorkerServesOn) {
  CompileProcess p(LNTUNE_CLI);
  gen::KernelSource bad = fwd_source(2);
  bad.source += "\nthis is not CUDA;\n";
  try {
    p.compile(bad, "sm_90");
    FAIL() << "a source with an error compiled";
  } catch (const rt::CompileError& e) {
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
    EXPECT_EQ(e.kernel(), bad.kernel_name);
    EXPECT_FALSE(e.options().empty());
  }
  try {
    p.compile(fwd_source(2), "sm_1");  // not an architecture: rt::compile's own Error
    FAIL() << "sm_1 compiled";
  } catch (const rt::CompileError&) {
    FAIL() << "an argument error came back as an NVRTC error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sm_90"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(p.alive());
  EXPECT_FALSE(p.compile(fwd_source(2), "sm_90").binary.empty());
}

TEST(CompileProcessTest, AWorkerThatDiedIsAnErrorNamingIt) {
  CompileProcess p(LNTUNE_CLI);
  ASSERT_EQ(::kill(p.pid(), SIGKILL), 0);
  try {
    p.compile(fwd_source(2), "sm_90");
    FAIL() << "compiled in a killed worker";
  } catch (const rt::CompileError&) {
    FAIL() << "a dead worker is not an NVRTC error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compile worker"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(p.alive());
  EXPECT_THROW(p.compile(fwd_source(2), "sm_90"), Error);
}

TEST(CompileProcessTest, AnExecutableThatIsNoWorkerIsAnError) {
  EXPECT_THROW(CompileProcess("/nonexistent/lntune"), Error);
  // /bin/true starts, reads nothing and exits: the first compile fails.
  CompileProcess p("/bin/true");
  EXPECT_THROW(p.compile(fwd_source(2), "sm_90"), Error);
  EXPECT_FALSE(p.alive());
}

TEST(CompileProcessTest, TheServerRejectsMalformedRequests) {
  auto serve = [](const std::string& bytes) {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    EXPECT_EQ(::write(sv[0], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ::shutdown(sv[0], SHUT_WR);
    const int rc = serve_compile_requests(sv[1]);
    ::close(sv[0]);
    ::close(sv[1]);
    return rc;
  };
  EXPECT_EQ(serve(""), 0);  // end of file at once: a clean end
  EXPECT_EQ(serve("garbage!"), 2);
  const std::uint32_t magic = 0x4c4e5443, v1 = 1, v9 = 9;
  std::string header(reinterpret_cast<const char*>(&magic), 4);
  EXPECT_EQ(serve(header + std::string(reinterpret_cast<const char*>(&v9), 4)), 2);  // unknown version
  const std::uint64_t huge = 1ull << 40;
  EXPECT_EQ(serve(header + std::string(reinterpret_cast<const char*>(&v1), 4) +
                  std::string(reinterpret_cast<const char*>(&huge), 8)),
            2);  // a string length no request has
  EXPECT_EQ(serve(header + std::string(reinterpret_cast<const char*>(&v1), 4) + "\x05"), 2);  // cut short
}

TEST(CompileProcessTest, ThePoolCompilesInWorkersAndFallsBackInProcess) {
  const Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, true};
  const InstanceKey a = gen::make_instance(t, cfg(1024, 4), 1024, 8);
  const InstanceKey b = gen::make_instance(t, cfg(1024, 2), 1024, 8);
  {
    auto store = std::make_shared<LayeredBinaryStore>();
    CompilePool pool("sm_90", store, 2, LNTUNE_CLI);
    const CompileResult ra = pool.submit(a).get(), rb = pool.submit(b).get();
    EXPECT_TRUE(ra.ok && ra.in_worker) << ra.error;
    EXPECT_TRUE(rb.ok && rb.in_worker) << rb.error;
    EXPECT_EQ(pool.stats().in_worker_processes, 2u);
    const gen::KernelSource src = gen::render(a);
    EXPECT_EQ(*store->get(rt::binary_hash(src, "sm_90"), "sm_90", rt::nvrtc_version()),
              rt::compile(src, "sm_90").binary);
  }
  {
    // A worker that cannot run: every compilation in-process, still correct.
    auto store = std::make_shared<LayeredBinaryStore>();
    CompilePool pool("sm_90", store, 1, "/nonexistent/lntune");
    const CompileResult ra = pool.submit(a).get(), rb = pool.submit(b).get();
    EXPECT_TRUE(ra.ok && !ra.in_worker) << ra.error;
    EXPECT_TRUE(rb.ok && !rb.in_worker) << rb.error;
    EXPECT_EQ(pool.stats().compiled, 2u);
    EXPECT_EQ(pool.stats().in_worker_processes, 0u);
  }
  {
    // NVRTC's errors stay results of the job, from a worker as in-process.
    auto store = std::make_shared<LayeredBinaryStore>();
    CompilePool pool("sm_1", store, 1, LNTUNE_CLI);
    const CompileResult r = pool.submit(a).get();
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("sm_90"), std::string::npos) << r.error;
  }
}

}  // namespace
