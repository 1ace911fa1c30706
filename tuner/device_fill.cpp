#include "tuner/device_fill.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tuner/host_dtype.hpp"
#include "tuner/random_fill.hpp"

namespace lntune::tune {

namespace {

// The value of table entry s (the storage bits of `dtype`), as a double.
double entry(const std::vector<unsigned char>& t, DType dtype, std::uint32_t s) {
  if (dtype == DType::f32) {
    float f;
    std::memcpy(&f, t.data() + 4 * std::size_t{s}, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, t.data() + 2 * std::size_t{s}, 2);
  return dtype == DType::f16 ? ref::to_double<DType::f16>(h) : ref::to_double<DType::bf16>(h);
}

}  // namespace

DeviceFill::DeviceFill(const std::string& arch)
    : module_("lntune/kernels/fill.cuh", arch, "the tuner's input fill"),
      u16_(module_.function("lntune_fill_u16")),
      u32_(module_.function("lntune_fill_u32")),
      lohi_(2 * sizeof(unsigned)) {}

const DeviceFill::Table& DeviceFill::table(DType dtype, double offset, double scale, CUstream stream) {
  const auto key = std::make_tuple(static_cast<int>(dtype), offset, scale);
  auto it = tables_.find(key);
  if (it != tables_.end()) return it->second;
  Table t;
  t.host = rnd::table(dtype, offset, scale);
  t.device = rt::DeviceBuffer(t.host.size());
  rt::check(rt::driver().MemcpyHtoDAsync(t.device.get(), t.host.data(), t.host.size(), stream),
            "cuMemcpyHtoDAsync (fill table)");
  rt::check(rt::driver().StreamSynchronize(stream), "cuStreamSynchronize (fill table)");
  return tables_.emplace(key, std::move(t)).first->second;
}

double DeviceFill::fill(CUdeviceptr out, DType dtype, std::int64_t count, double offset, double scale,
                        std::uint64_t seed, CUstream stream) {
  if (count <= 0) return 0;
  const Table& t = table(dtype, offset, scale, stream);
  const rt::DriverApi& d = rt::driver();
  CUfunction f = dtype == DType::f32 ? u32_ : u16_;
  long long n = count;
  unsigned long long s = seed;
  CUdeviceptr tab = t.device.get(), lohi = lohi_.get();
  void* args[] = {&out, &n, &s, &tab, &lohi};
  constexpr unsigned kThreads = 256;
  const long long blocks_needed = (count + kThreads * 4 - 1) / (kThreads * 4);
  const unsigned blocks = static_cast<unsigned>(std::max<long long>(1, std::min<long long>(blocks_needed, 16LL * module_.sm_count())));
  const unsigned init[2] = {0xffffffffu, 0u};
  rt::check(d.MemsetD32Async(lohi, init[0], 1, stream), "cuMemsetD32Async (fill bounds)");
  rt::check(d.MemsetD32Async(lohi + sizeof(unsigned), init[1], 1, stream), "cuMemsetD32Async (fill bounds)");
  rt::check(d.LaunchKernel(f, blocks, 1, 1, kThreads, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel (input fill)");
  rt::check(d.StreamSynchronize(stream), "cuStreamSynchronize (input fill)");
  unsigned got[2] = {0, 0};
  rt::check(d.MemcpyDtoH(got, lohi, sizeof got), "cuMemcpyDtoH (fill bounds)");
  if (got[0] > got[1] || got[1] >= rnd::kSums) throw Error("lntune: internal: the GPU fill drew no valid sum");
  return std::max(std::fabs(entry(t.host, dtype, got[0])), std::fabs(entry(t.host, dtype, got[1])));
}

}  // namespace lntune::tune
