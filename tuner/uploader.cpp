#include "tuner/uploader.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "runtime/driver.hpp"

namespace lntune::tune {

// A stream, two page-locked staging buffers and an event for each (the
// copy out of that buffer is done). Events block rather than spin: several
// lanes may wait at once, on threads that share the CPU with NVRTC.
struct Uploader::Lane {
  CUstream stream = nullptr;
  rt::PinnedBuffer staging[2];
  CUevent done[2] = {nullptr, nullptr};
  bool pending[2] = {false, false};

  explicit Lane(std::size_t chunk) {
    const rt::DriverApi& d = rt::driver();
    try {
      rt::check(d.StreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate (upload lane)");
      for (int i = 0; i < 2; ++i) {
        staging[i] = rt::PinnedBuffer(chunk);
        rt::check(d.EventCreate(&done[i], CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING),
                  "cuEventCreate (upload lane)");
      }
    } catch (...) {
      release();  // no destructor runs for a half-built lane
      throw;
    }
  }
  ~Lane() { release(); }
  void release() noexcept {
    const rt::DriverApi& d = rt::driver();
    if (stream) d.StreamSynchronize(stream);
    for (CUevent& e : done)
      if (e) d.EventDestroy(std::exchange(e, nullptr));
    if (stream) d.StreamDestroy(std::exchange(stream, nullptr));
  }
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;
};

Uploader::Uploader(std::size_t chunk_bytes) : chunk_bytes_(std::max<std::size_t>(chunk_bytes, 4096)) {}

Uploader::~Uploader() = default;

std::unique_ptr<Uploader::Lane> Uploader::take() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      std::unique_ptr<Lane> l = std::move(free_.back());
      free_.pop_back();
      return l;
    }
    ++created_;
  }
  return std::make_unique<Lane>(chunk_bytes_);
}

void Uploader::give(std::unique_ptr<Lane> lane) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(std::move(lane));
}

std::size_t Uploader::lanes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return created_;
}

void Uploader::upload(CUdeviceptr dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  const rt::DriverApi& d = rt::driver();
  std::unique_ptr<Lane> lane = take();
  const auto* from = static_cast<const unsigned char*>(src);
  // On an exception the lane is not reused (its stream may hold a failed
  // copy): its destructor waits for the stream and releases it.
  int k = 0;
  for (std::size_t off = 0; off < bytes; off += chunk_bytes_, k ^= 1) {
    const std::size_t n = std::min(chunk_bytes_, bytes - off);
    if (lane->pending[k]) rt::check(d.EventSynchronize(lane->done[k]), "cuEventSynchronize (upload lane)");
    std::memcpy(lane->staging[k].data(), from + off, n);
    rt::check(d.MemcpyHtoDAsync(dst + off, lane->staging[k].data(), n, lane->stream),
              "cuMemcpyHtoDAsync (" + std::to_string(n) + " bytes)");
    rt::check(d.EventRecord(lane->done[k], lane->stream), "cuEventRecord (upload lane)");
    lane->pending[k] = true;
  }
  for (int i = 0; i < 2; ++i) {
    if (lane->pending[i]) rt::check(d.EventSynchronize(lane->done[i]), "cuEventSynchronize (upload lane)");
    lane->pending[i] = false;
  }
  give(std::move(lane));
}

}  // namespace lntune::tune
