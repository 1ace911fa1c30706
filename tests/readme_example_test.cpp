// The README's C++ example, compiled from README.md itself (tests/CMakeLists.txt
// extracts the block) and run: on a GPU it must run and produce finite
// outputs; without one it must fail with the clear no-driver/no-device error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "readme_example_includes.inc"
#include "runtime/driver.hpp"

namespace {

// The names the example uses, as a caller would have them.
struct Buffers {
  std::vector<std::unique_ptr<lntune::rt::DeviceBuffer>> owned;
  void* get(std::size_t bytes) {
    owned.push_back(std::make_unique<lntune::rt::DeviceBuffer>(bytes));
    return owned.back()->ptr();
  }
};

void readme_example(void* x, void* w, void* b, void* y, float* mean, float* rstd, void* dy, void* dx, void* dw,
                    void* db, std::int64_t rows, std::int64_t cols, CUstream stream, Buffers& buffers) {
  auto my_alloc = [&buffers](std::size_t bytes) { return buffers.get(bytes); };
#include "readme_example_body.inc"
}

TEST(ReadmeExample, RunsOrFailsClearlyWithoutAGpu) {
  const std::int64_t rows = 64, cols = 1024;
  std::string why;
  if (!lntune::rt::gpu_available(&why)) {
    // Aligned fake pointers pass the argument checks; the call then needs the driver.
    auto fake = [](std::uintptr_t a) { return reinterpret_cast<void*>(a); };
    Buffers none;
    try {
      readme_example(fake(0x10000), fake(0x20000), fake(0x30000), fake(0x40000), static_cast<float*>(fake(0x50000)),
                     static_cast<float*>(fake(0x60000)), fake(0x70000), fake(0x80000), fake(0x90000), fake(0xa0000),
                     rows, cols, nullptr, none);
      ADD_FAILURE() << "the example ran without a GPU";
    } catch (const lntune::Error& e) {
      const std::string msg = e.what();
      EXPECT_TRUE(msg.find("no CUDA driver") != std::string::npos || msg.find("no CUDA device") != std::string::npos ||
                  msg.find("no usable CUDA device") != std::string::npos)
          << msg;
      std::printf("[ no-gpu   ] the README example fails with: %s\n", msg.c_str());
    }
    return;
  }
  lntune::rt::current_context();
  const lntune::rt::DriverApi& d = lntune::rt::driver();
  Buffers buffers;
  const std::size_t mn = static_cast<std::size_t>(rows * cols) * 2, n = static_cast<std::size_t>(cols) * 2;
  void* x = buffers.get(mn);
  void* dy = buffers.get(mn);
  void* w = buffers.get(n);
  void* b = buffers.get(n);
  auto fill = [&d](void* p, unsigned char v, std::size_t bytes) {
    lntune::rt::check(d.MemsetD8(reinterpret_cast<CUdeviceptr>(p), v, bytes), "cuMemsetD8");
  };
  fill(x, 0x3c, mn);
  fill(dy, 0x3c, mn);
  fill(w, 0x3c, n);
  fill(b, 0, n);
  void* y = buffers.get(mn);
  void* dx = buffers.get(mn);
  void* dw = buffers.get(n);
  void* db = buffers.get(n);
  auto* mean = static_cast<float*>(buffers.get(static_cast<std::size_t>(rows) * 4));
  auto* rstd = static_cast<float*>(buffers.get(static_cast<std::size_t>(rows) * 4));
  ASSERT_NO_THROW(readme_example(x, w, b, y, mean, rstd, dy, dx, dw, db, rows, cols, nullptr, buffers));
  lntune::rt::check(d.CtxSynchronize(), "synchronize");
  std::vector<float> host(static_cast<std::size_t>(rows));
  lntune::rt::check(d.MemcpyDtoH(host.data(), reinterpret_cast<CUdeviceptr>(mean), host.size() * 4), "download");
  for (float m : host) EXPECT_TRUE(std::isfinite(m));
}

}  // namespace
