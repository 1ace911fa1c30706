// lntune::tune — the verification's element check on the GPU.
//
// A tuned candidate's output is compared with the CPU reference (rounded to
// the output dtype) element by element. Downloading the output and comparing
// it on the host costs tens of milliseconds per verification at the default
// grid's sizes, more than the candidate's timing; instead the reference is
// uploaded ahead (Workload::upload_reference, on the thread that prepares the
// workload) and this kernel (templates/kernels/check.cuh) counts the
// elements that fail, with ref::compare's predicate exactly. Zero failures:
// the output is correct, nothing is downloaded. Otherwise the workload runs
// ref::compare on the host for the description of the first failure (and
// its counts and error norms).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <string>

#include "lntune/types.hpp"
#include "runtime/driver.hpp"
#include "tuner/compare.hpp"
#include "tuner/tool_module.hpp"

namespace lntune::tune {

class DeviceCheck {
 public:
  // Compiles the check for `arch` with NVRTC and loads it into the current
  // context (which must stay alive as long as this object). Throws
  // rt::CompileError or rt::CudaError.
  explicit DeviceCheck(const std::string& arch);
  DeviceCheck(const DeviceCheck&) = delete;
  DeviceCheck& operator=(const DeviceCheck&) = delete;

  // The number of the `count` contiguous elements of `got` that fail the
  // comparison with `want` (both device pointers of `dtype`) at `tol`;
  // poison_bits as for ref::compare. Runs on `stream` and waits for it.
  // Not thread-safe (one counter): one DeviceCheck per benchmarking thread.
  std::uint64_t failures(DType dtype, CUdeviceptr got, CUdeviceptr want, std::int64_t count, ref::Tolerance tol,
                         std::optional<std::uint32_t> poison_bits, CUstream stream);

 private:
  ToolModule module_;
  CUfunction f32_, f16_, bf16_;
  rt::DeviceBuffer counter_;
};

}  // namespace lntune::tune
