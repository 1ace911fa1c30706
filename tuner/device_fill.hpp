// lntune::tune — the tuner's random inputs drawn on the GPU
// (templates/kernels/fill.cuh), bit for bit those of rnd::fill
// (tuner/random_fill.hpp), so that a workload's inputs need not be uploaded:
// the host draws only the rows it computes its reference for.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "lntune/types.hpp"
#include "runtime/driver.hpp"
#include "tuner/tool_module.hpp"

namespace lntune::tune {

class DeviceFill {
 public:
  // Compiles the fill for `arch` with NVRTC and loads it into the current
  // context (which must stay alive as long as this object). Throws
  // rt::CompileError or rt::CudaError.
  explicit DeviceFill(const std::string& arch);
  DeviceFill(const DeviceFill&) = delete;
  DeviceFill& operator=(const DeviceFill&) = delete;

  // Writes what rnd::fill(out, dtype, count, offset, scale, seed) writes to
  // `count` elements at `out` (device memory) on `stream`, waits, and
  // returns what it returns (the largest |value|). The table of rounded
  // values is uploaded on first use of each (dtype, offset, scale). Not
  // thread-safe (one counter): one DeviceFill per thread that draws.
  double fill(CUdeviceptr out, DType dtype, std::int64_t count, double offset, double scale, std::uint64_t seed,
              CUstream stream);

 private:
  struct Table {
    rt::DeviceBuffer device;
    std::vector<unsigned char> host;
  };
  // Uploaded on `stream` and waited for: a cuMemcpyHtoD on the legacy
  // stream would not order before a fill on a non-blocking stream (the
  // tuner's), which then read part of the table before it landed.
  const Table& table(DType dtype, double offset, double scale, CUstream stream);

  ToolModule module_;  // first: the buffers below go before it is unloaded
  CUfunction u16_, u32_;
  rt::DeviceBuffer lohi_;
  std::map<std::tuple<int, double, double>, Table> tables_;
};

}  // namespace lntune::tune
