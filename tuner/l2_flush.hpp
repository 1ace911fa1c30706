// lntune::tune — the L2 flush before a timed repetition: a read of a buffer
// of twice the L2 (templates/kernels/flush.cuh), which leaves the L2 holding
// clean lines of that buffer. The timed kernel then reads its inputs from
// DRAM, as a real call after other work does, and pays no write-back of the
// flush's own data: a flush by cuMemsetD32Async left 50 MiB of dirty lines
// on an H100 and charged their write-back to the next kernel (a 25 MiB copy
// measured 23.1 us after it, 17.2 us after the read; bench/results/h100_s27).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>

#include "runtime/driver.hpp"
#include "tuner/tool_module.hpp"

namespace lntune::tune {

class L2Flush {
 public:
  // Compiles the flush for `arch`, loads it into the current context (which
  // must outlive this object) and fills a buffer of 2 * l2_bytes (at least
  // 8 MiB) once. Throws rt::CompileError or rt::CudaError.
  L2Flush(const std::string& arch, std::size_t l2_bytes);
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;

  // Enqueues the flush on `stream`. Throws rt::CudaError.
  void enqueue(CUstream stream) const;

 private:
  ToolModule module_;  // first: the buffers below go before it is unloaded
  CUfunction read_ = nullptr;
  rt::DeviceBuffer buffer_, sink_;
};

}  // namespace lntune::tune
