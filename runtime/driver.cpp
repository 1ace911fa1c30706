#include "runtime/driver.hpp"

#include <dlfcn.h>

#include <mutex>
#include <utility>

namespace lntune::rt {
namespace {

struct Loaded {
  DriverApi api{};
  std::string error;  // empty when loaded and initialised
  CUresult init_result = CUDA_SUCCESS;
};

template <class F>
bool resolve(void* lib, const char* symbol, F& fn, std::string& error) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
  if (!fn && error.empty()) error = std::string("the CUDA driver lacks ") + symbol;
  return fn != nullptr;
}

const Loaded& loaded() {
  static const Loaded state = [] {
    Loaded s;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      s.error = std::string("no CUDA driver: libcuda.so.1 could not be loaded (") + (e ? e : "unknown") +
                "); lntune needs an NVIDIA driver and GPU to run kernels";
      return s;
    }
    DriverApi& a = s.api;
    std::string& err = s.error;
    resolve(lib, "cuInit", a.Init, err);
    resolve(lib, "cuDriverGetVersion", a.DriverGetVersion, err);
    resolve(lib, "cuGetErrorName", a.GetErrorName, err);
    resolve(lib, "cuGetErrorString", a.GetErrorString, err);
    resolve(lib, "cuDeviceGetCount", a.DeviceGetCount, err);
    resolve(lib, "cuDeviceGet", a.DeviceGet, err);
    resolve(lib, "cuDeviceGetName", a.DeviceGetName, err);
    resolve(lib, "cuDeviceGetAttribute", a.DeviceGetAttribute, err);
    resolve(lib, "cuDevicePrimaryCtxRetain", a.DevicePrimaryCtxRetain, err);
    resolve(lib, "cuDevicePrimaryCtxRelease_v2", a.DevicePrimaryCtxRelease, err);
    resolve(lib, "cuCtxGetCurrent", a.CtxGetCurrent, err);
    resolve(lib, "cuCtxSetCurrent", a.CtxSetCurrent, err);
    resolve(lib, "cuCtxGetDevice", a.CtxGetDevice, err);
    resolve(lib, "cuCtxSynchronize", a.CtxSynchronize, err);
    resolve(lib, "cuModuleLoadData", a.ModuleLoadData, err);
    resolve(lib, "cuModuleUnload", a.ModuleUnload, err);
    resolve(lib, "cuModuleGetFunction", a.ModuleGetFunction, err);
    resolve(lib, "cuFuncGetAttribute", a.FuncGetAttribute, err);
    resolve(lib, "cuFuncSetAttribute", a.FuncSetAttribute, err);
    resolve(lib, "cuLaunchKernel", a.LaunchKernel, err);
    resolve(lib, "cuLaunchCooperativeKernel", a.LaunchCooperativeKernel, err);
    resolve(lib, "cuLaunchKernelEx", a.LaunchKernelEx, err);
    resolve(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor", a.OccupancyMaxActiveBlocksPerMultiprocessor, err);
    resolve(lib, "cuOccupancyMaxActiveClusters", a.OccupancyMaxActiveClusters, err);
    resolve(lib, "cuMemAlloc_v2", a.MemAlloc, err);
    resolve(lib, "cuMemFree_v2", a.MemFree, err);
    resolve(lib, "cuMemAllocHost_v2", a.MemAllocHost, err);
    resolve(lib, "cuMemFreeHost", a.MemFreeHost, err);
    resolve(lib, "cuMemcpyHtoD_v2", a.MemcpyHtoD, err);
    resolve(lib, "cuMemcpyHtoDAsync_v2", a.MemcpyHtoDAsync, err);
    resolve(lib, "cuMemcpyDtoH_v2", a.MemcpyDtoH, err);
    resolve(lib, "cuMemcpyDtoDAsync_v2", a.MemcpyDtoDAsync, err);
    resolve(lib, "cuMemsetD8_v2", a.MemsetD8, err);
    resolve(lib, "cuMemsetD8Async", a.MemsetD8Async, err);
    resolve(lib, "cuMemsetD32Async", a.MemsetD32Async, err);
    resolve(lib, "cuMemGetInfo_v2", a.MemGetInfo, err);
    resolve(lib, "cuStreamCreate", a.StreamCreate, err);
    resolve(lib, "cuStreamDestroy_v2", a.StreamDestroy, err);
    resolve(lib, "cuStreamSynchronize", a.StreamSynchronize, err);
    resolve(lib, "cuEventCreate", a.EventCreate, err);
    resolve(lib, "cuEventDestroy_v2", a.EventDestroy, err);
    resolve(lib, "cuEventRecord", a.EventRecord, err);
    resolve(lib, "cuEventSynchronize", a.EventSynchronize, err);
    resolve(lib, "cuEventElapsedTime", a.EventElapsedTime, err);
    if (!err.empty()) return s;
    s.init_result = a.Init(0);
    if (s.init_result != CUDA_SUCCESS) {
      const char* name = nullptr;
      a.GetErrorName(s.init_result, &name);
      s.error = std::string("no usable CUDA device: cuInit failed with ") + (name ? name : "an unknown error");
    }
    return s;
  }();
  return state;
}

}  // namespace

CudaError::CudaError(const std::string& what, CUresult code) : Error(what), code_(code) {}

const DriverApi& driver() {
  const Loaded& s = loaded();
  if (!s.error.empty()) {
    if (s.init_result == CUDA_ERROR_NO_DEVICE) throw NoDeviceError("lntune: " + s.error);
    if (s.init_result != CUDA_SUCCESS) throw CudaError("lntune: " + s.error, s.init_result);
    throw NoDriverError("lntune: " + s.error);
  }
  return s.api;
}

bool gpu_available(std::string* why_not) {
  try {
    const DriverApi& d = driver();
    int count = 0;
    CUresult r = d.DeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count == 0) {
      if (why_not) *why_not = "no CUDA device (cuDeviceGetCount: " + error_name(r) + ", count " + std::to_string(count) + ")";
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    if (why_not) *why_not = e.what();
    return false;
  }
}

std::string error_name(CUresult r) {
  const Loaded& s = loaded();
  const char* name = nullptr;
  if (s.api.GetErrorName) s.api.GetErrorName(r, &name);
  return name ? name : "CUDA error " + std::to_string(static_cast<int>(r));
}

void check(CUresult r, const std::string& what) {
  if (r == CUDA_SUCCESS) return;
  const Loaded& s = loaded();
  const char* desc = nullptr;
  if (s.api.GetErrorString) s.api.GetErrorString(r, &desc);
  throw CudaError("lntune: " + what + ": " + error_name(r) + (desc ? std::string(" (") + desc + ")" : ""), r);
}

DeviceInfo device_info(CUdevice dev) {
  const DriverApi& d = driver();
  DeviceInfo info;
  info.ordinal = static_cast<int>(dev);
  char name[256] = {};
  check(d.DeviceGetName(name, sizeof(name), dev), "cuDeviceGetName");
  info.name = name;
  auto attr = [&](CUdevice_attribute a, const char* what) {
    int v = 0;
    check(d.DeviceGetAttribute(&v, a, dev), std::string("cuDeviceGetAttribute(") + what + ")");
    return v;
  };
  info.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability major");
  info.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability minor");
  info.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count");
  info.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 cache size");
  // The clocks only tune the defaults: a driver that does not report one
  // leaves the ratio unknown (0) rather than failing the device.
  auto soft_attr = [&](CUdevice_attribute a) {
    int v = 0;
    return d.DeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS ? static_cast<double>(v) : 0.0;
  };
  const double mem_khz = soft_attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  const double bus_bits = soft_attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  const double sm_khz = soft_attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  if (mem_khz > 0 && bus_bits > 0 && sm_khz > 0 && info.sm_count > 0)
    info.dram_bytes_per_sm_cycle = 2 * mem_khz * (bus_bits / 8) / (info.sm_count * sm_khz);
  check(d.DriverGetVersion(&info.driver_version), "cuDriverGetVersion");
  return info;
}

CUcontext current_context(CUdevice* device) {
  const DriverApi& d = driver();
  CUcontext ctx = nullptr;
  check(d.CtxGetCurrent(&ctx), "cuCtxGetCurrent");
  if (!ctx) {
    // Like the CUDA runtime: the primary context of device 0, retained for the
    // life of the process.
    static CUcontext primary = [&d] {
      int count = 0;
      check(d.DeviceGetCount(&count), "cuDeviceGetCount");
      if (count == 0) throw NoDeviceError("lntune: no CUDA device");
      CUdevice dev = 0;
      check(d.DeviceGet(&dev, 0), "cuDeviceGet(0)");
      CUcontext c = nullptr;
      check(d.DevicePrimaryCtxRetain(&c, dev), "cuDevicePrimaryCtxRetain(device 0)");
      return c;
    }();
    check(d.CtxSetCurrent(primary), "cuCtxSetCurrent(primary context of device 0)");
    ctx = primary;
  }
  if (device) check(d.CtxGetDevice(device), "cuCtxGetDevice");
  return ctx;
}

void ModuleDeleter::operator()(CUmod_st* m) const noexcept {
  if (m) driver().ModuleUnload(m);
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  current_context();
  check(driver().MemAlloc(&ptr_, bytes), "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, 0)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) driver().MemFree(ptr_);
    ptr_ = std::exchange(o.ptr_, 0);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) driver().MemFree(ptr_);
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  current_context();
  void* p = nullptr;
  check(driver().MemAllocHost(&p, bytes), "cuMemAllocHost(" + std::to_string(bytes) + " bytes)");
  ptr_ = static_cast<unsigned char*>(p);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) driver().MemFreeHost(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

PinnedBuffer::~PinnedBuffer() {
  if (ptr_) driver().MemFreeHost(ptr_);
}

}  // namespace lntune::rt
