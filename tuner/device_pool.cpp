#include "tuner/device_pool.hpp"

#include <iterator>
#include <utility>
#include <vector>

namespace lntune::tune {

rt::DeviceBuffer DevicePool::take(std::size_t bytes) {
  if (bytes == 0) return rt::DeviceBuffer();
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.taken;
    auto it = free_.lower_bound(bytes);
    if (it != free_.end() && it->first / 2 <= bytes) {
      rt::DeviceBuffer b = std::move(it->second);
      stats_.kept_bytes -= it->first;
      free_.erase(it);
      ++stats_.reused;
      return b;
    }
  }
  // Outside the lock: cuMemAlloc may take a while.
  const std::size_t size = size_class(bytes);
  try {
    return rt::DeviceBuffer(size);
  } catch (const rt::CudaError& e) {
    if (e.code() != CUDA_ERROR_OUT_OF_MEMORY) throw;
  }
  trim();
  return rt::DeviceBuffer(size);
}

std::size_t DevicePool::size_class(std::size_t bytes) {
  constexpr std::size_t kMin = 4096;
  if (bytes <= kMin) return kMin;
  int k = 0;  // 2^k <= bytes < 2^(k+1)
  while (k < 63 && (bytes >> (k + 1)) != 0) ++k;
  const std::size_t step = std::size_t{1} << (k - 2);
  return (bytes + step - 1) / step * step;
}

void DevicePool::trim() noexcept {
  std::multimap<std::size_t, rt::DeviceBuffer> all;  // freed after the lock is released
  std::lock_guard<std::mutex> lock(mu_);
  all.swap(free_);
  stats_.kept_bytes = 0;
}

void DevicePool::give(rt::DeviceBuffer&& b) noexcept {
  if (!b.get()) return;
  std::vector<rt::DeviceBuffer> excess;  // freed after the lock is released
  try {
    std::lock_guard<std::mutex> lock(mu_);
    const std::size_t size = b.size();
    free_.emplace(size, std::move(b));
    stats_.kept_bytes += size;
    // Over the limit: let the largest go.
    while (stats_.kept_bytes > keep_bytes_ && !free_.empty()) {
      auto last = std::prev(free_.end());
      stats_.kept_bytes -= last->first;
      excess.push_back(std::move(last->second));
      free_.erase(last);
    }
  } catch (...) {
    // No memory for a map node or the vector: what was not kept is freed by
    // its owner's destructor.
  }
}

DevicePool::Stats DevicePool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace lntune::tune
