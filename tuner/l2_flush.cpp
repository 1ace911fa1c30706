#include "tuner/l2_flush.hpp"

#include <algorithm>

namespace lntune::tune {

L2Flush::L2Flush(const std::string& arch, std::size_t l2_bytes)
    : module_("lntune/kernels/flush.cuh", arch, "the tuner's L2 flush"),
      read_(module_.function("lntune_l2_flush")),
      // Whole 16-byte words, twice the L2 (8 MiB when the driver reports none).
      buffer_((std::max(2 * l2_bytes, std::size_t{8} << 20) + 15) / 16 * 16),
      sink_(4) {
  const rt::DriverApi& d = rt::driver();
  rt::check(d.MemsetD8(buffer_.get(), 0x5f, buffer_.size()), "cuMemsetD8 (L2 flush buffer)");
}

void L2Flush::enqueue(CUstream stream) const {
  long long count = static_cast<long long>(buffer_.size() / 16);
  CUdeviceptr p = buffer_.get(), sink = sink_.get();
  void* args[] = {&p, &count, &sink};
  rt::check(rt::driver().LaunchKernel(read_, static_cast<unsigned>(8 * module_.sm_count()), 1, 1, 512, 1, 1, 0, stream,
                                      args, nullptr),
            "cuLaunchKernel (L2 flush)");
}

}  // namespace lntune::tune
