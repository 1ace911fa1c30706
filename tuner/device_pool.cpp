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
  return rt::DeviceBuffer(bytes);  // outside the lock: cuMemAlloc may take a while
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
