#include "runtime/selector.hpp"

#include <algorithm>

#include "generator/instance.hpp"
#include "generator/space.hpp"

namespace lntune::rt {

gen::SpaceQuery space_query(const DeviceInfo& dev, Kernel kernel, DType dtype, std::int64_t n, std::int64_t m) {
  gen::SpaceQuery q{kernel, dtype, n, m, dev.sm_count > 0 ? dev.sm_count : 132, dev.cc_major * 10 + dev.cc_minor};
  q.dram_bytes_per_sm_cycle = dev.dram_bytes_per_sm_cycle;
  return q;
}

Selection default_selection(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m, int vec) {
  const DType d = traits.kernel == Kernel::bwd_dwdb ? traits.w_dtype : traits.x_dtype;
  if (vec <= 0) vec = gen::max_vec(traits.x_dtype);
  // The shared-memory kernels' defaults are sized for the row dtype: the
  // first that is a valid instance for these traits (a variant's wider
  // slabs, e.g. an fp32 residual beside 16-bit x) and this vector width
  // (bulk copies need 16-byte aligned rows), else the register kernels.
  gen::SpaceQuery q = space_query(dev, traits.kernel, d, n, m);
  q.residual = traits.residual.has_value() && traits.kernel != Kernel::bwd_dwdb;
  q.norm = traits.norm;
  return Selection{gen::default_config(q, gen::instances_for(traits, n, vec)), "default heuristic"};
}

Selection select(const DeviceInfo& dev, const Traits& traits, std::int64_t n, std::int64_t m, int vec,
                 ConfigSource* source, const Log& log) {
  if (source) {
    std::optional<Selection> tuned;
    try {
      tuned = source->select(dev, traits, n, m);
    } catch (const std::exception& e) {
      log.warn(std::string("tuned-config lookup failed, using the default heuristic: ") + e.what());
    }
    if (tuned) {
      try {
        gen::make_instance(traits, tuned->config, n, vec);
        return *tuned;
      } catch (const Error& e) {
        if (log.debug_enabled())
          log.debug("ignoring " + tuned->reason + " config (" + to_string(tuned->config) + "): " + e.what());
      }
    }
  }
  return default_selection(dev, traits, n, m, vec);
}

std::int64_t partial_rows(const Config& c, std::int64_t M) {
  // group_size_m CTAs (or clusters) each own one partial row (a CTA sums its
  // row slots first); a cluster's CTAs write disjoint columns of it. (The
  // wide-row backward: a cluster per row at a time, rows_per_cta is its
  // staging depth.)
  const std::int64_t group = gen::rows_per_group(Kernel::bwd_dx, c);
  const std::int64_t groups = (M + group - 1) / group;
  return std::max<std::int64_t>(1, std::min<std::int64_t>(c.group_size_m, groups));
}

Traits dwdb_traits(const Traits& bwd_traits, bool want_dw, bool want_db) {
  Traits t = bwd_traits;
  t.kernel = Kernel::bwd_dwdb;
  t.has_weight = want_dw;
  t.has_bias = want_db;
  return t.canonical();
}

DwdbProblem dwdb_problem(const Traits& bwd_traits, bool want_dw, bool want_db, const Config& dx_config,
                         std::int64_t M) {
  return DwdbProblem{dwdb_traits(bwd_traits, want_dw, want_db), partial_rows(dx_config, M)};
}

Config default_dwdb_config(const DeviceInfo& dev, const DwdbProblem& p, std::int64_t n) {
  return default_selection(dev, p.traits, n, p.rows).config;
}

}  // namespace lntune::rt
