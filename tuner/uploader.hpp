// lntune::tune — host-to-device copies of the tuner's workloads through
// page-locked staging buffers.
//
// The workloads of the next keys are uploaded on other threads while the
// GPU times the current key. A plain cuMemcpyHtoD of pageable memory (the
// driver stages it itself, synchronously) stalled the benchmarking thread's
// own driver calls: with the uploads running alongside, a warm re-tune's
// timed repetitions took about twice their wall time alone, and a stall
// between a repetition's start event and its launch is timed as the
// kernel's (bench/results/h100_2026-11-24c). Here each copy goes in chunks
// through two page-locked buffers of its own lane: the host fills one
// while the DMA engine copies the other (cuMemcpyHtoDAsync on the lane's
// stream), so the driver only ever enqueues.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace lntune::tune {

class Uploader {
 public:
  // chunk_bytes: the size of each staging buffer (two per lane).
  explicit Uploader(std::size_t chunk_bytes = std::size_t{16} << 20);
  ~Uploader();
  Uploader(const Uploader&) = delete;
  Uploader& operator=(const Uploader&) = delete;

  // Copies `bytes` from `src` (host) to `dst` (device) and waits until the
  // copy is done. Thread-safe: concurrent calls use lanes of their own
  // (created on first need, page-locked memory of the current context,
  // which must be current). Throws rt::CudaError.
  void upload(CUdeviceptr dst, const void* src, std::size_t bytes);

  std::size_t lanes() const;  // created so far

 private:
  struct Lane;
  std::unique_ptr<Lane> take();
  void give(std::unique_ptr<Lane> lane);

  std::size_t chunk_bytes_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Lane>> free_;
  std::size_t created_ = 0;
};

}  // namespace lntune::tune
