// Config selection: a pluggable source of tuned configs (the SQLite cache
// provides one), then the generator's default heuristic. Pure functions of
// their arguments: the source in use belongs to a Runtime.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "generator/space.hpp"
#include "lntune/types.hpp"
#include "runtime/driver.hpp"
#include "runtime/log.hpp"

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

// The search-space query for a problem on this device.
gen::SpaceQuery space_query(const DeviceInfo& dev, Kernel kernel, DType dtype, std::int64_t n, std::int64_t m);

// The default heuristic for this device, valid for these traits at vector
// width `vec` (0: the widest for x's dtype, as for 16-byte aligned rows).
Selection default_selection(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m,
                            int vec = 0);

// `source`'s config when it has one valid for this N and vector width, else
// the default. A failing source is a warning, never an error.
Selection select(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m, int vec,
                 ConfigSource* source, const Log& log);

// Partial rows the backward writes: one per CTA (cluster), group_size_m of
// them, at most one per row group.
std::int64_t partial_rows(const Config& dx_config, std::int64_t M);

// The dW/dB reduction that follows a backward run with `dx_config`: its
// traits (bwd_dwdb, weight/bias = the gradients wanted) and its rows (the
// partial rows), as a problem of its own. The one place this is derived:
// the launcher's plans, the tuner and the CLI all use it.
struct DwdbProblem {
  Traits traits;
  std::int64_t rows = 0;
};
Traits dwdb_traits(const Traits& bwd_traits, bool want_dw, bool want_db);
DwdbProblem dwdb_problem(const Traits& bwd_traits, bool want_dw, bool want_db, const Config& dx_config,
                         std::int64_t M);
// Its default config on this device.
Config default_dwdb_config(const DeviceInfo& dev, const DwdbProblem& p, std::int64_t n);

}  // namespace lntune::rt
