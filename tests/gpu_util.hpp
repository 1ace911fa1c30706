// Helpers for the GPU tests: skipping with a visible reason, device buffers
// with host mirrors, fresh random data in any dtype.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/driver.hpp"
#include "tuner/compare.hpp"
#include "tuner/host_dtype.hpp"

namespace lntune::testing {

// Skips the test, printing why, when this machine has no usable GPU.
#define LNTUNE_REQUIRE_GPU()                                             \
  do {                                                                   \
    std::string why_;                                                    \
    if (!::lntune::rt::gpu_available(&why_)) GTEST_SKIP() << "no GPU: " << why_; \
    ::lntune::rt::current_context();                                     \
  } while (0)

// Copies host bytes to the device and waits until they have landed: a
// pageable cuMemcpyHtoD may return before its DMA does, and kernels on a
// non-blocking stream (the tuner's runner, the stress tests' streams) do
// not wait for the legacy stream (session 60: a DeviceCheck test counted
// 217 failures against the host's 180, its buffers partly still holding
// the previous round's data).
inline void upload(CUdeviceptr dst, const void* src, std::size_t bytes) {
  rt::check(rt::driver().MemcpyHtoD(dst, src, bytes), "upload (" + std::to_string(bytes) + " bytes)");
  rt::check(rt::driver().CtxSynchronize(), "synchronize after an upload");
}

// Host bytes of a tensor in some dtype, and its device copy.
struct HostTensor {
  DType dtype = DType::f32;
  std::int64_t count = 0;
  std::vector<unsigned char> bytes;
  HostTensor() = default;
  HostTensor(DType d, std::int64_t n) : dtype(d), count(n), bytes(static_cast<std::size_t>(n) * dtype_size(d)) {}
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
  double get(std::int64_t i) const { return ref::load_element(dtype, bytes.data(), i); }
  void set(std::int64_t i, double v) { ref::store_element(dtype, bytes.data(), i, v); }
};

struct DeviceTensor {
  rt::DeviceBuffer buf;
  DType dtype = DType::f32;
  std::int64_t count = 0;
  DeviceTensor() = default;
  DeviceTensor(DType d, std::int64_t n) : buf(static_cast<std::size_t>(n) * dtype_size(d) + 64), dtype(d), count(n) {}
  explicit DeviceTensor(const HostTensor& h) : DeviceTensor(h.dtype, h.count) { upload(h); }
  void* ptr() const { return buf.ptr(); }
  std::size_t bytes() const { return static_cast<std::size_t>(count) * dtype_size(dtype); }
  void upload(const HostTensor& h) { lntune::testing::upload(buf.get(), h.data(), h.bytes.size()); }
  HostTensor download() const {
    HostTensor h(dtype, count);
    rt::check(rt::driver().CtxSynchronize(), "synchronize before download");
    rt::check(rt::driver().MemcpyDtoH(h.data(), buf.get(), h.bytes.size()), "download");
    return h;
  }
  // Fill with the poison pattern, so unwritten elements are caught.
  void poison() {
    HostTensor h(dtype, count);
    ref::poison(dtype, h.data(), count);
    upload(h);
  }
};

// Fresh random data per test; the seed is printed so a failure can be replayed.
class Rng {
 public:
  Rng() : seed_(std::random_device{}() * 0x9e3779b97f4a7c15ULL + 12345), gen_(seed_) {}
  std::uint64_t seed() const { return seed_; }
  // Approximately normal (sum of four uniforms), fast enough for 1e8 elements.
  double normal() {
    double s = 0;
    for (int i = 0; i < 4; ++i) s += uniform();
    return (s - 2.0) * 1.7320508075688772;  // unit variance
  }
  double uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  HostTensor tensor(DType d, std::int64_t n, double offset, double scale) {
    HostTensor h(d, n);
    for (std::int64_t i = 0; i < n; ++i) h.set(i, offset + scale * normal());
    return h;
  }

 private:
  std::uint64_t seed_;
  std::mt19937_64 gen_;
};

inline std::string describe(const ref::CompareResult& r) {
  return r.message + " (checked " + std::to_string(r.checked) + ", mismatches " + std::to_string(r.mismatches) +
         ", unwritten " + std::to_string(r.unwritten) + ", max abs err " + std::to_string(r.max_abs_err) + ")";
}

}  // namespace lntune::testing
