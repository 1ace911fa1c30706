// The launcher's pieces, each owned by a Runtime (runtime/runtime.hpp):
// immutable plans (config + loaded kernels per problem) in a PlanTable, the
// device table, the managed workspaces, and the launches themselves
// (stateless functions of a plan and the call's arguments).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "lntune/lntune.hpp"
#include "runtime/driver.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/problem.hpp"

namespace lntune::rt {

// A plan is immutable once built: it is shared (std::shared_ptr<const ...>)
// by every caller that looked it up, and a change of config source publishes
// new plans instead of touching this one. Its kernels belong to the Runtime
// that built it and live as long as that Runtime.
// One kernel of a plan: its config, its instance, the loaded kernel.
struct PlannedKernel {
  Config config;
  InstanceKey key;
  const LoadedKernel* kernel = nullptr;
};

struct FwdPlan {
  PlannedKernel fwd;
  std::string reason;  // why this config ("tuned (exact)", "default heuristic", ...)
};

// One plan per backward: dx and the dW/dB reduction, chosen together.
struct BwdPlan {
  PlannedKernel dx;
  PlannedKernel dwdb;  // kernel null when neither dW nor dB is wanted
  std::string reason;  // of the dx config
};

// Everything a plan depends on. M: the rows themselves below the bound from
// which the default heuristic no longer reads M (gen::default_m_bound: its
// rules and grid clips read M finely, e.g. M = 1 against 2-4, M <= 8192, a
// persistent grid clipped to the rows), that bound from it on (plan_m). A
// tuned config depends on M only through the cache's bucket
// (cache::m_bucket), a function of M. Keyed by the bucket alone, the first
// call's M decided the default plan of its whole bucket.
struct PlanKey {
  CUcontext ctx = nullptr;
  Traits traits;
  std::int64_t n = 0;
  std::int64_t m = 0;  // plan_m
  int vec = 1;
  bool want_dw = false, want_db = false;
  bool operator==(const PlanKey& o) const {
    return ctx == o.ctx && traits == o.traits && n == o.n && m == o.m && vec == o.vec && want_dw == o.want_dw &&
           want_db == o.want_db;
  }
};
std::int64_t plan_m(std::int64_t M, int sm_count);
struct PlanKeyHash {
  std::size_t operator()(const PlanKey& k) const noexcept;
};

// Published plans, each stamped with the generation of the config source it
// was built from. A lookup takes only a plan of the current generation; a
// newer source means new plans, while callers keep the ones they hold.
template <class Plan>
class PlanTable {
 public:
  using Ptr = std::shared_ptr<const Plan>;
  // Warm path: a hash lookup under a shared lock and a reference count.
  Ptr find(const PlanKey& key, std::uint64_t generation) const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end() && it->second.generation == generation) return it->second.plan;
    return nullptr;
  }
  // Publishes `plan` (built from `generation`) unless the slot already holds
  // one of that generation or newer; returns the plan callers should use (the
  // slot's one when it is of the same generation, so that all callers agree).
  Ptr publish(const PlanKey& key, std::uint64_t generation, Ptr plan) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    Slot& slot = plans_[key];
    if (slot.plan && slot.generation == generation) return slot.plan;
    if (!slot.plan || slot.generation < generation) slot = Slot{generation, plan};
    return plan;
  }

 private:
  struct Slot {
    std::uint64_t generation = 0;
    Ptr plan;
  };
  mutable std::shared_mutex mu_;
  std::unordered_map<PlanKey, Slot, PlanKeyHash> plans_;
};

// Devices by context. The calling thread remembers its last answer, so a
// warm call finds its device without a lock.
class DeviceTable {
 public:
  const DeviceInfo& of(CUcontext ctx);

 private:
  std::shared_mutex mu_;
  std::unordered_map<CUcontext, std::shared_ptr<const DeviceInfo>> by_ctx_;
};

// Workspaces lntune manages for callers who pass none: one per (context,
// stream). A backward is two launches that share the workspace, so the
// workspace stays locked until both are enqueued: two host threads using one
// stream then cannot interleave their launches (which would let one call's
// bwd_dx overwrite partials before the other's bwd_dwdb read them).
class Workspaces {
 public:
  struct Locked {
    std::unique_lock<std::mutex> lock;
    void* ptr = nullptr;
  };
  Locked acquire(CUcontext ctx, CUstream stream, std::size_t bytes);

 private:
  struct Workspace {
    std::mutex mu;
    DeviceBuffer buffer;
  };
  std::mutex mu_;
  std::map<std::pair<CUcontext, CUstream>, std::unique_ptr<Workspace>> by_stream_;
};

std::size_t workspace_bytes(const BwdProblem& p, const Config& dx_config);

// The backward's workspace, in order: the dW partial rows and the dB partial
// rows (partial_rows x N fp32 each), the dW/dB reduction's second-level rows
// (gen::max_dwdb_splits(N) x N fp32 each) and its counters (one per 32
// columns). Pointers of gradients not wanted are null.
struct BwdWorkspace {
  float* dw_partial = nullptr;
  float* db_partial = nullptr;
  float* dw_split = nullptr;
  float* db_split = nullptr;
  unsigned* counters = nullptr;
  std::int64_t num_counters = 0;
};
BwdWorkspace workspace_layout(const BwdProblem& p, const Config& dx_config, void* workspace);

// The row splits a bwd_dwdb config launches with over P partial rows:
// group_size_m, clipped to [1, min(P, gen::max_dwdb_splits(N))].
int dwdb_splits(const Config& dwdb_config, std::int64_t P, std::int64_t N);

// The dW/dB reduction alone, over partials bwd_dx left in `w` (P rows).
void launch_dwdb(const LoadedKernel& k, const Config& dwdb_config, const BwdWorkspace& w, std::int64_t P,
                 std::int64_t N, void* dweight, void* dbias, CUstream stream);

// The config a launch of kernel `k` runs: a persistent grid of clusters
// (cluster_size > 1 and group_size_m > 0: group_size_m clusters walk the
// rows) holds at most the clusters the GPU runs at once
// (LoadedKernel::max_active_clusters); more would run as a second wave after
// the first ends (33 clusters of 4 on an H200, which runs 30 at one CTA a
// SM: 46% of copy, bench/results/s36). Other configs unchanged.
// launch_forward and launch_backward run this; Runtime's plans hold it.
Config fit_coresident(const LoadedKernel& k, const Config& c);

// Launches with configs already chosen (the tuner uses these to time
// configs). launch_backward needs a.workspace of workspace_bytes() (see
// Runtime::launch_backward for a managed one).
void launch_forward(const LoadedKernel& k, const Config& c, const ForwardArgs& a, const FwdProblem& p);

// Where the backward's dW/dB reduction runs. automatic: as finish_path says;
// separate: always in bwd_dwdb after bwd_dx (comparisons: lntune_sweep's
// LNTUNE_SWEEP_FINISH=separate).
enum class Finish { automatic, separate };

// How an automatic backward with bwd_dx config `dx_config` finishes dW/dB
// (dW or dB wanted over M > 0 rows, no cluster; else separate):
//   alone        one CTA over rows held whole (single tile: M = 1 and the
//                like), dW/dB 16-byte aligned, no residual wider than x
//                (bwd_dx.cuh, can_finish_alone): the CTA's own sums are
//                dW/dB; a plain launch, no barrier, no partial row (M = 1 ran
//                two kernels, 0.4-0.9 us behind PyTorch's backward at
//                N <= 2048: call 6);
//   cooperative  the kernel has the entry that finishes dW/dB
//                (LoadedKernel::finish_fn), every CTA of the persistent
//                grid resident at once (LoadedKernel::cooperative_ctas) and
//                finish_fits, and beyond 256 partial rows at most two
//                CTAs a SM: a cooperative launch of that entry, a grid
//                barrier, then the grid sums the partial rows (bwd_dwdb.cuh,
//                finish_dwdb); also a grid of one CTA that cannot finish
//                alone (unaligned dW/dB, rows in tiles). If the launch is
//                refused (a context limited to part of the GPU),
//                launch_backward runs bwd_dwdb after all;
//   separate     bwd_dwdb after bwd_dx.
enum class FinishPath { separate, alone, cooperative };
FinishPath finish_path(const LoadedKernel& dx, const Config& dx_config, const BwdProblem& p);

// The in-kernel reduction of P partial rows by `ctas` CTAs of `threads`
// threads (fewer than 512: the larger ones have no finishing entry,
// gen::has_finish_entry). Two layouts, the device's choice by the same rule:
//   - row groups (the device's finish_row_groups: about 4 rows each, at most
//     threads / 8), where each thread loads its rows (at most 4) at once; it
//     fits where each CTA takes at most one block of columns. Grids of up to
//     64 (128 threads) or 128 (256 threads) partial rows: small M, where
//     bwd_dwdb's launch costs more than the reduction (call 5: M = 32 and
//     N = 1024-2048, 1.4-2.0 us less; a second round of loads at M = 256,
//     N = 1024, or M = 4096, 1-14 us more);
//   - else a warp per 4 columns of dW or dB, its lanes over the rows
//     (bwd_dwdb.cuh, finish_by_warps): it fits where each lane loads its
//     rows (at most 8) at once and every item has its own warp. Grids of
//     about one CTA a SM at training sizes (bf16 N = 1024, M = 4096, 132
//     CTAs: 3.2 us after the rows, bwd_dwdb 5.9; bench/results/s37).
int finish_row_groups(std::int64_t rows, int threads);
bool finish_fits(std::int64_t ctas, int threads, std::int64_t P, std::int64_t N);

void launch_backward(const LoadedKernel& dx, const LoadedKernel* dwdb, const Config& dx_config,
                     const Config& dwdb_config, const BackwardArgs& a, const BwdProblem& p,
                     Finish finish = Finish::automatic);

}  // namespace lntune::rt
