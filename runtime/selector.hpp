// Config selection: a pluggable source of tuned configs (the SQLite cache
// installs one), then the generator's default heuristic.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "generator/space.hpp"
#include "lntune/types.hpp"
#include "runtime/driver.hpp"

namespace lntune::rt {

struct Selection {
  Config config;
  std::string reason;  // "tuned (exact)", "tuned (nearest N=4096)", "default heuristic", ...
};

class ConfigSource {
 public:
  virtual ~ConfigSource() = default;
  // A config for the problem, or nullopt. Must be thread-safe.
  virtual std::optional<Selection> select(const DeviceInfo& dev, const Traits& traits, std::int64_t n,
                                          std::int64_t m) = 0;
};

// Installs the source consulted before the default (nullptr: none); returns
// the previous one. Plans memoised before the change are dropped.
std::shared_ptr<ConfigSource> set_config_source(std::shared_ptr<ConfigSource> source);
std::shared_ptr<ConfigSource> config_source();

// The search-space query for a problem on this device.
gen::SpaceQuery space_query(const DeviceInfo& dev, Kernel kernel, DType dtype, std::int64_t n, std::int64_t m);

// The default heuristic for this device.
Selection default_selection(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m);

// Tuned (when valid for this N and vector width), else default.
Selection select(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m, int vec);

// Incremented by set_config_source, so memoised plans know they are stale.
std::uint64_t selection_epoch();

}  // namespace lntune::rt
