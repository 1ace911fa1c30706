#include "tuner/device_check.hpp"

#include <algorithm>

namespace lntune::tune {

DeviceCheck::DeviceCheck(const std::string& arch)
    : module_("lntune/kernels/check.cuh", arch, "the tuner's output check"),
      f32_(module_.function("lntune_check_f32")),
      f16_(module_.function("lntune_check_f16")),
      bf16_(module_.function("lntune_check_bf16")),
      counter_(sizeof(unsigned long long)) {}

std::uint64_t DeviceCheck::failures(DType dtype, CUdeviceptr got, CUdeviceptr want, std::int64_t count,
                                    ref::Tolerance tol, std::optional<std::uint32_t> poison_bits, CUstream stream) {
  if (count <= 0) return 0;
  if (!(tol.atol >= 0) || !(tol.rtol >= 0)) throw Error("lntune: internal: a check's atol and rtol must be >= 0");
  const rt::DriverApi& d = rt::driver();
  CUfunction f = dtype == DType::f32 ? f32_ : dtype == DType::f16 ? f16_ : bf16_;
  const std::uint32_t mask = dtype == DType::f32 ? 0xffffffffu : 0xffffu;
  long long n = count;
  int check_poison = poison_bits ? 1 : 0;
  unsigned pbits = poison_bits ? (*poison_bits & mask) : 0u;
  double atol = tol.atol, rtol = tol.rtol;
  CUdeviceptr counter = counter_.get();
  void* args[] = {&got, &want, &n, &check_poison, &pbits, &atol, &rtol, &counter};
  constexpr unsigned kThreads = 256;
  const long long blocks_needed = (count + kThreads * 4 - 1) / (kThreads * 4);
  const unsigned blocks = static_cast<unsigned>(std::max<long long>(1, std::min<long long>(blocks_needed, 8LL * module_.sm_count())));
  rt::check(d.MemsetD32Async(counter, 0, 2, stream), "cuMemsetD32Async (check counter)");
  rt::check(d.LaunchKernel(f, blocks, 1, 1, kThreads, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel (output check)");
  rt::check(d.StreamSynchronize(stream), "cuStreamSynchronize (output check)");
  unsigned long long out = 0;
  rt::check(d.MemcpyDtoH(&out, counter, sizeof out), "cuMemcpyDtoH (check counter)");
  return out;
}

}  // namespace lntune::tune
