// The CUDA driver API, loaded at run time (dlopen "libcuda.so.1"), so that
// lntune links and starts on machines with no driver and no GPU: there every
// call fails with NoDriverError instead of the loader refusing the binary.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>

#include "lntune/types.hpp"

namespace lntune::rt {

class NoDriverError : public Error {
 public:
  using Error::Error;
};
class NoDeviceError : public Error {
 public:
  using Error::Error;
};
class CudaError : public Error {
 public:
  CudaError(const std::string& what, CUresult code);
  CUresult code() const { return code_; }

 private:
  CUresult code_;
};

// Entry points, resolved once. Names follow the driver's without "cu".
struct DriverApi {
  decltype(&::cuInit) Init;
  decltype(&::cuDriverGetVersion) DriverGetVersion;
  decltype(&::cuGetErrorName) GetErrorName;
  decltype(&::cuGetErrorString) GetErrorString;
  decltype(&::cuDeviceGetCount) DeviceGetCount;
  decltype(&::cuDeviceGet) DeviceGet;
  decltype(&::cuDeviceGetName) DeviceGetName;
  decltype(&::cuDeviceGetAttribute) DeviceGetAttribute;
  decltype(&::cuDevicePrimaryCtxRetain) DevicePrimaryCtxRetain;
  decltype(&::cuDevicePrimaryCtxRelease) DevicePrimaryCtxRelease;
  decltype(&::cuCtxGetCurrent) CtxGetCurrent;
  decltype(&::cuCtxSetCurrent) CtxSetCurrent;
  decltype(&::cuCtxGetDevice) CtxGetDevice;
  decltype(&::cuCtxSynchronize) CtxSynchronize;
  decltype(&::cuModuleLoadData) ModuleLoadData;
  decltype(&::cuModuleUnload) ModuleUnload;
  decltype(&::cuModuleGetFunction) ModuleGetFunction;
  decltype(&::cuFuncGetAttribute) FuncGetAttribute;
  decltype(&::cuFuncSetAttribute) FuncSetAttribute;
  decltype(&::cuLaunchKernel) LaunchKernel;
  decltype(&::cuLaunchCooperativeKernel) LaunchCooperativeKernel;
  decltype(&::cuLaunchKernelEx) LaunchKernelEx;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor) OccupancyMaxActiveBlocksPerMultiprocessor;
  decltype(&::cuOccupancyMaxActiveClusters) OccupancyMaxActiveClusters;
  decltype(&::cuMemAlloc) MemAlloc;
  decltype(&::cuMemFree) MemFree;
  decltype(&::cuMemAllocHost) MemAllocHost;
  decltype(&::cuMemFreeHost) MemFreeHost;
  decltype(&::cuMemcpyHtoD) MemcpyHtoD;
  decltype(&::cuMemcpyHtoDAsync) MemcpyHtoDAsync;
  decltype(&::cuMemcpyDtoH) MemcpyDtoH;
  decltype(&::cuMemcpyDtoDAsync) MemcpyDtoDAsync;
  decltype(&::cuMemsetD8) MemsetD8;
  decltype(&::cuMemsetD8Async) MemsetD8Async;
  decltype(&::cuMemsetD32Async) MemsetD32Async;
  decltype(&::cuMemGetInfo) MemGetInfo;
  decltype(&::cuStreamCreate) StreamCreate;
  decltype(&::cuStreamDestroy) StreamDestroy;
  decltype(&::cuStreamSynchronize) StreamSynchronize;
  decltype(&::cuEventCreate) EventCreate;
  decltype(&::cuEventDestroy) EventDestroy;
  decltype(&::cuEventRecord) EventRecord;
  decltype(&::cuEventSynchronize) EventSynchronize;
  decltype(&::cuEventElapsedTime) EventElapsedTime;
};

// The loaded and initialised driver. Throws NoDriverError (no libcuda) or
// CudaError (cuInit failed, e.g. no device). Thread-safe; loaded once.
const DriverApi& driver();

// True when the driver loads and reports at least one device; never throws.
bool gpu_available(std::string* why_not = nullptr);

// Throws CudaError "<what>: CUDA_ERROR_X (description)" when r != CUDA_SUCCESS.
void check(CUresult r, const std::string& what);

std::string error_name(CUresult r);

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int l2_bytes = 0;
  int driver_version = 0;
  // DRAM bytes a second over the SMs and the SM clock (2 x memory clock x
  // bus width / SMs / SM clock, from the driver's attributes): how far the
  // memory outruns each SM, which the default heuristic reads (an H100 SXM
  // 12.8, an H200 18.8). 0 where the driver does not report the clocks.
  double dram_bytes_per_sm_cycle = 0;
  std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
};

DeviceInfo device_info(CUdevice dev);

// The calling thread's current context; when it has none, the primary context
// of device 0 is retained (once per process) and made current, as the CUDA
// runtime does implicitly. Returns the context and its device.
CUcontext current_context(CUdevice* device = nullptr);

// RAII owners. Move-only; destructors never throw.
struct ModuleDeleter {
  void operator()(CUmod_st* m) const noexcept;
};
using UniqueModule = std::unique_ptr<CUmod_st, ModuleDeleter>;

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  CUdeviceptr get() const { return ptr_; }
  void* ptr() const { return reinterpret_cast<void*>(ptr_); }
  std::size_t size() const { return bytes_; }

 private:
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

// Page-locked host memory (cuMemAllocHost) of the current context: copies
// to and from it run at the bus's speed, without the driver's staging.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);
  PinnedBuffer(PinnedBuffer&& o) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer();
  unsigned char* data() const { return ptr_; }
  std::size_t size() const { return bytes_; }

 private:
  unsigned char* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace lntune::rt
