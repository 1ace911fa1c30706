// lntune::tune — one of the tuner's own kernel headers (its output check,
// input fill and float64 reference: templates::kTunerOnlyHeaders), compiled
// with NVRTC for the current device and loaded into the current context,
// which must outlive the object. DeviceCheck, DeviceFill and DeviceReference
// each own one.
#pragma once

#include <cuda.h>

#include <string>

namespace lntune::tune {

class ToolModule {
 public:
  // header: e.g. "lntune/kernels/check.cuh"; what: its role, for errors
  // ("the tuner's output check"). Throws rt::CompileError or rt::CudaError.
  ToolModule(const std::string& header, const std::string& arch, const std::string& what);
  ~ToolModule();
  ToolModule(const ToolModule&) = delete;
  ToolModule& operator=(const ToolModule&) = delete;

  // An extern "C" entry point of the header; throws rt::CudaError naming it.
  CUfunction function(const char* name) const;
  // The current device's SM count (grid sizes).
  int sm_count() const { return sm_count_; }

 private:
  CUmodule module_ = nullptr;
  int sm_count_ = 1;
};

}  // namespace lntune::tune
