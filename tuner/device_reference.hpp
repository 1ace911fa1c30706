// lntune::tune — the tuner's float64 reference on the GPU
// (templates/kernels/reference.cuh: its semantics, its order of operations
// and why it is deterministic). A workload built on the GPU computes the
// reference of its outputs here, where its inputs are (DeviceFill), in about
// a millisecond, instead of on the CPU (tuner/reference.hpp, 10-20 ns per
// element on one core); the CPU checks sampled rows of it
// (tuner/reference_oracle.hpp).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "lntune/types.hpp"
#include "runtime/driver.hpp"
#include "tuner/reference_oracle.hpp"
#include "tuner/tool_module.hpp"

namespace lntune::tune {

// The problem the reference runs on: M contiguous rows of N (stride N).
struct RefProblem {
  std::int64_t m = 0, n = 0;
  DType x_dtype = DType::f32, w_dtype = DType::f32, y_dtype = DType::f32;
  std::optional<DType> residual;  // the residual's (and z's, dz's) dtype; none: no residual
  Norm norm = Norm::layer;
  bool zero_centered = false;
  double eps = 1e-5;
  // Those of a workload's traits (fwd or bwd_dx), with inputs::kEps.
  static RefProblem of(const Traits& t, std::int64_t m, std::int64_t n);
  DType input_dtype() const { return residual.value_or(x_dtype); }
};

class DeviceReference {
 public:
  // Compiles the reference for `arch` with NVRTC and loads it into the
  // current context (which must stay alive as long as this object). Throws
  // rt::CompileError or rt::CudaError.
  explicit DeviceReference(const std::string& arch);
  DeviceReference(const DeviceReference&) = delete;
  DeviceReference& operator=(const DeviceReference&) = delete;

  // Device pointers (0: none). The forward: y, mean, rstd as
  // ref::norm_forward writes them; with a residual, z (required).
  struct Forward {
    CUdeviceptr x = 0, weight = 0, bias = 0, residual = 0;  // residual: iff the problem has one
    CUdeviceptr y = 0, z = 0;                               // y: y dtype; z: residual dtype
    CUdeviceptr mean = 0, rstd = 0;                         // M floats each (RMSNorm: mean written as 0)
  };
  // Runs on `stream` and waits. Returns the largest fp32 rstd that is not a
  // NaN (0 when every one is), what the host path's tolerances use.
  float forward(const RefProblem& p, const Forward& b, CUstream stream);

  // The backward: dx as ref::norm_backward writes it (statistics from the
  // stored input row, in double), dW and dB in the fixed two-level order
  // (dwdb_partition(M, N)), whose partials stay in the workspace:
  // workspace_bytes(M, N) bytes, laid out as row means [M], row rstds [M],
  // dW partials [chunks, N], dB partials [chunks, N], all doubles
  // (partials_offset: the byte offset of the dW partials). The workspace is
  // needed only for dW or dB.
  struct Backward {
    CUdeviceptr dy = 0, x = 0, weight = 0, dz = 0;  // x: the input row (z with a residual); dz: nullable
    CUdeviceptr dx = 0, dw = 0, db = 0;             // each nullable (not wanted)
    CUdeviceptr workspace = 0;
    std::size_t workspace_bytes = 0;
  };
  static std::size_t workspace_bytes(std::int64_t m, std::int64_t n);
  static std::size_t partials_offset(std::int64_t m);
  // Runs on `stream` and waits.
  void backward(const RefProblem& p, const Backward& b, CUstream stream);

 private:
  ToolModule module_;  // first: the buffers below go before it is unloaded
  CUfunction fwd32_, fwd256_, bwd32_, bwd256_;
  CUfunction partials_, sum_;
  rt::DeviceBuffer rstd_max_;
};

}  // namespace lntune::tune
