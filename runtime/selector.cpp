#include "runtime/selector.hpp"

#include <atomic>
#include <mutex>

#include "generator/instance.hpp"
#include "generator/space.hpp"
#include "runtime/log.hpp"

namespace lntune::rt {
namespace {

std::mutex g_mu;
std::shared_ptr<ConfigSource> g_source;
std::atomic<std::uint64_t> g_epoch{0};

}  // namespace

std::shared_ptr<ConfigSource> set_config_source(std::shared_ptr<ConfigSource> source) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::swap(g_source, source);
  ++g_epoch;
  return source;
}

std::shared_ptr<ConfigSource> config_source() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_source;
}

std::uint64_t selection_epoch() { return g_epoch.load(); }

gen::SpaceQuery space_query(const DeviceInfo& dev, Kernel kernel, DType dtype, std::int64_t n, std::int64_t m) {
  return gen::SpaceQuery{kernel, dtype, n, m, dev.sm_count > 0 ? dev.sm_count : 132, dev.cc_major * 10 + dev.cc_minor};
}

Selection default_selection(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m) {
  return Selection{gen::default_config(space_query(dev, traits.kernel, traits.x_dtype, n, m)), "default heuristic"};
}

Selection select(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m, int vec) {
  if (auto src = config_source()) {
    std::optional<Selection> tuned;
    try {
      tuned = src->select(dev, traits, n, m);
    } catch (const std::exception& e) {
      log_warn(std::string("tuned-config lookup failed, using the default heuristic: ") + e.what());
    }
    if (tuned) {
      try {
        gen::make_instance(traits, tuned->config, n, vec);
        return *tuned;
      } catch (const Error& e) {
        log_debug("ignoring " + tuned->reason + " config (" + to_string(tuned->config) + "): " + e.what());
      }
    }
  }
  return default_selection(dev, traits, n, m);
}

}  // namespace lntune::rt
