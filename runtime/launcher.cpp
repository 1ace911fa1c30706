#include "runtime/launcher.hpp"

#include <algorithm>

#include "generator/instance.hpp"
#include "generator/space.hpp"
#include "runtime/selector.hpp"
#include "templates/params.h"

namespace lntune::rt {
namespace {

void launch(const LoadedKernel& k, unsigned grid, unsigned block, CUstream stream, void* params) {
  void* args[] = {params};
  const CUresult r = driver().LaunchKernel(k.fn, grid, 1, 1, block, 1, 1, k.dynamic_smem, stream, args, nullptr);
  if (r != CUDA_SUCCESS)  // the message is built only on failure: warm calls allocate nothing
    check(r, "cuLaunchKernel(" + k.name + ", grid " + std::to_string(grid) + ", block " + std::to_string(block) +
                 (k.dynamic_smem ? ", " + std::to_string(k.dynamic_smem) + " bytes of shared memory" : std::string()) +
                 ")");
}

unsigned grid_size(std::int64_t ctas, const char* what) {
  if (ctas > 0x7fffffff) throw Error(std::string("lntune: ") + what + ": too many rows for one launch");
  return static_cast<unsigned>(ctas < 1 ? 1 : ctas);
}

}  // namespace

std::size_t PlanKeyHash::operator()(const PlanKey& k) const noexcept {
  std::size_t h = std::hash<const void*>{}(k.ctx);
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(static_cast<std::size_t>(k.traits.kernel) | static_cast<std::size_t>(k.traits.x_dtype) << 4 |
      static_cast<std::size_t>(k.traits.w_dtype) << 8 | static_cast<std::size_t>(k.traits.has_weight) << 12 |
      static_cast<std::size_t>(k.traits.has_bias) << 13 | static_cast<std::size_t>(k.want_dw) << 14 |
      static_cast<std::size_t>(k.want_db) << 15);
  mix(static_cast<std::size_t>(k.traits.norm) | static_cast<std::size_t>(k.traits.zero_centered) << 2 |
      (k.traits.residual ? 1 + static_cast<std::size_t>(*k.traits.residual) : 0) << 4 |
      (k.traits.y_dtype ? 1 + static_cast<std::size_t>(*k.traits.y_dtype) : 0) << 8);
  mix(static_cast<std::size_t>(k.n));
  mix(static_cast<std::size_t>(k.m) << 8 | static_cast<std::size_t>(k.vec));
  return h;
}

std::int64_t plan_m(std::int64_t M, int sm_count) { return std::min(M, gen::default_m_bound(sm_count)); }

const DeviceInfo& DeviceTable::of(CUcontext ctx) {
  // The thread's memo of a fact about the context (shared ownership, so it
  // stays valid whichever table filled it).
  thread_local CUcontext last_ctx = nullptr;
  thread_local std::shared_ptr<const DeviceInfo> last_dev;
  if (ctx == last_ctx && last_dev) return *last_dev;
  std::shared_ptr<const DeviceInfo> found;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = by_ctx_.find(ctx);
    if (it != by_ctx_.end()) found = it->second;
  }
  if (!found) {
    CUdevice dev = 0;
    check(driver().CtxGetDevice(&dev), "cuCtxGetDevice");
    auto info = std::make_shared<const DeviceInfo>(device_info(dev));
    std::unique_lock<std::shared_mutex> lock(mu_);
    found = by_ctx_.emplace(ctx, std::move(info)).first->second;
  }
  last_ctx = ctx;
  last_dev = found;
  return *found;
}

Workspaces::Locked Workspaces::acquire(CUcontext ctx, CUstream stream, std::size_t bytes) {
  Workspace* ws = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = by_stream_[{ctx, stream}];
    if (!slot) slot = std::make_unique<Workspace>();
    ws = slot.get();
  }
  Locked out{std::unique_lock<std::mutex>(ws->mu), nullptr};
  if (ws->buffer.size() < bytes) {
    // Work already queued on this stream may still read the old buffer; the
    // stream is drained before it is freed.
    if (ws->buffer.size() > 0) check(driver().StreamSynchronize(stream), "cuStreamSynchronize (growing the workspace)");
    ws->buffer = DeviceBuffer(gen::round_up<std::size_t>(bytes, 1 << 20));
  }
  out.ptr = ws->buffer.ptr();
  return out;
}

namespace {

struct WorkspaceSizes {
  std::size_t partials = 0, splits = 0, counters = 0;  // bytes per gradient (counters: in all)
  std::int64_t num_counters = 0;
};

WorkspaceSizes workspace_sizes(const BwdProblem& p, const Config& c) {
  WorkspaceSizes s;
  if (p.M == 0 || (!p.want_dw && !p.want_db)) return s;
  const auto n = static_cast<std::size_t>(p.N);
  s.partials = gen::round_up<std::size_t>(static_cast<std::size_t>(partial_rows(c, p.M)) * n * 4, 256);
  s.splits = gen::round_up<std::size_t>(static_cast<std::size_t>(gen::max_dwdb_splits(p.N)) * n * 4, 256);
  s.num_counters = (p.N + 31) / 32;
  s.counters = gen::round_up<std::size_t>(static_cast<std::size_t>(s.num_counters) * 4, 256);
  return s;
}

}  // namespace

std::size_t workspace_bytes(const BwdProblem& p, const Config& c) {
  const WorkspaceSizes s = workspace_sizes(p, c);
  const std::size_t grads = (p.want_dw ? 1 : 0) + (p.want_db ? 1 : 0);
  return grads * (s.partials + s.splits) + s.counters;
}

BwdWorkspace workspace_layout(const BwdProblem& p, const Config& c, void* workspace) {
  BwdWorkspace w;
  const WorkspaceSizes s = workspace_sizes(p, c);
  if (s.partials == 0 || !workspace) return w;
  char* at = static_cast<char*>(workspace);
  auto take = [&at](std::size_t bytes) {
    char* r = at;
    at += bytes;
    return reinterpret_cast<float*>(r);
  };
  if (p.want_dw) w.dw_partial = take(s.partials);
  if (p.want_db) w.db_partial = take(s.partials);
  if (p.want_dw) w.dw_split = take(s.splits);
  if (p.want_db) w.db_split = take(s.splits);
  w.counters = reinterpret_cast<unsigned*>(take(s.counters));
  w.num_counters = s.num_counters;
  return w;
}

int dwdb_splits(const Config& rc, std::int64_t P, std::int64_t N) {
  const std::int64_t most = std::max<std::int64_t>(1, std::min(P, gen::max_dwdb_splits(N)));
  return static_cast<int>(std::clamp<std::int64_t>(rc.group_size_m, 1, most));
}

void launch_dwdb(const LoadedKernel& k, const Config& rc, const BwdWorkspace& w, std::int64_t P, std::int64_t N,
                 void* dweight, void* dbias, CUstream stream) {
  DwdbParams r{w.dw_partial, w.db_partial, dweight, dbias, w.dw_split, w.db_split, w.counters, P, N};
  const unsigned blocks = grid_size((N + rc.block_size - 1) / rc.block_size, "backward dW/dB");
  // No counters (no workspace: M = 0): one split, which needs none.
  const auto splits = static_cast<unsigned>(w.counters ? dwdb_splits(rc, P, N) : 1);
  void* args[] = {&r};
  // sm_90+ (LoadedKernel::programmatic): a programmatic dependent of the
  // bwd_dx before it, so its launch and its CTAs' start overlap bwd_dx's last
  // CTAs; the kernel waits for bwd_dx's writes before it reads
  // (wait_for_prior_grids). Without the attribute, a plain launch.
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig cfg{};
  cfg.gridDimX = blocks;
  cfg.gridDimY = splits;
  cfg.gridDimZ = 1;
  cfg.blockDimX = static_cast<unsigned>(rc.threads());
  cfg.blockDimY = 1;
  cfg.blockDimZ = 1;
  cfg.hStream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = k.programmatic ? 1 : 0;
  const CUresult res = driver().LaunchKernelEx(&cfg, k.fn, args, nullptr);
  if (res != CUDA_SUCCESS)
    check(res, "cuLaunchKernelEx(" + k.name + ", grid " + std::to_string(blocks) + " x " + std::to_string(splits) +
                   ", block " + std::to_string(rc.threads()) + ")");
}

Config fit_coresident(const LoadedKernel& k, const Config& c) {
  Config out = c;
  if (c.cluster_size > 1 && c.group_size_m > 0 && k.max_active_clusters > 0)
    out.group_size_m = std::min(c.group_size_m, k.max_active_clusters);
  return out;
}

void launch_forward(const LoadedKernel& k, const Config& config, const ForwardArgs& a, const FwdProblem& p) {
  const Config c = fit_coresident(k, config);
  FwdParams params{a.x,      a.weight,   a.bias,       a.y,       a.mean,          a.rstd,
                   p.M,      p.N,        p.x_stride,   p.y_stride, a.eps,          a.residual,
                   a.residual_out, p.residual_stride, p.z_stride};
  // Clusters are persistent: group_size_m of them walk the rows. A slab in
  // shared memory (gen::forward_in_smem) or the wide-row forward
  // (gen::is_wide_fwd): group_size_m clusters (CTAs) walk the rows, or, when
  // it is 0, one per row.
  std::int64_t ctas = 0;
  if (gen::forward_in_smem(c, p.N) || gen::is_wide_fwd(Kernel::fwd, c)) {
    const std::int64_t clusters = c.group_size_m > 0 ? std::min<std::int64_t>(c.group_size_m, p.M) : p.M;
    ctas = std::max<std::int64_t>(1, clusters) * c.cluster_size;
  } else if (c.cluster_size > 1) {
    ctas = std::max<std::int64_t>(1, std::min<std::int64_t>(c.group_size_m, p.M)) * c.cluster_size;
  } else {
    ctas = (p.M + c.rows_per_cta - 1) / c.rows_per_cta;
  }
  launch(k, grid_size(ctas, "forward"), static_cast<unsigned>(c.threads()), static_cast<CUstream>(a.stream), &params);
}

int finish_row_groups(std::int64_t rows, int threads) {
  int rg = 1;
  while (rg * 2 <= threads / 8 && rg * 2 * 4 <= rows) rg *= 2;
  return rg;
}

bool finish_fits(std::int64_t ctas, int threads, std::int64_t P, std::int64_t N) {
  // The device's constants (bwd_dwdb.cuh): rows a thread of finish_item
  // loads at once (FinishShape::kUnroll), rows a lane of finish_by_warps
  // loads at once (WarpFinish), columns an item (4).
  constexpr int kItemRows = 4, kCols = 4;
  // (WarpFinish::kUnroll rows of 16-byte loads, kUnrollScalar where N % 4.)
  const int warp_rows = N % kCols == 0 ? 16 : 8;
  if (threads >= 512) return false;
  const int rg = finish_row_groups(P, threads);
  if ((P + rg - 1) / rg <= kItemRows) {
    const std::int64_t width = kCols * (threads / rg);
    return (N + width - 1) / width <= ctas;
  }
  // finish_by_warps: one round of loads, a warp an item of dW or dB.
  return P <= warp_rows * 32 && 2 * ((N + kCols - 1) / kCols) <= ctas * (threads / 32);
}

namespace {
// Partial rows that any cooperative grid finishes by warps (8 rows a lane,
// as up to session 48); past them, only grids of up to two CTAs a SM.
constexpr std::int64_t kFinishRowsAnyGrid = 8 * 32;
}  // namespace

FinishPath finish_path(const LoadedKernel& dx, const Config& dc, const BwdProblem& p) {
  if (p.M == 0 || (!p.want_dw && !p.want_db) || dc.cluster_size != 1) return FinishPath::separate;
  const std::int64_t ctas = partial_rows(dc, p.M);
  // Not for a residual wider than x (bwd_dx.cuh, can_finish_alone).
  const bool wide_residual = p.traits.residual && dtype_size(*p.traits.residual) > dtype_size(p.traits.x_dtype);
  if (ctas == 1 && p.N <= dc.block_size && p.grads_aligned && !wide_residual) return FinishPath::alone;
  // Past kFinishRowsAnyGrid partial rows, only grids of up to two CTAs a
  // SM: on an H200 at M = 4096 (bench/results/s49, call 2), bf16 N = 1024
  // in 264 CTAs of 4 warps 14.7 us finished in the kernel against 17.0 with
  // bwd_dwdb after it, but fp32 N = 1024 in 512 CTAs of 4 warps 23.6
  // against 21.3.
  const bool many = ctas > kFinishRowsAnyGrid && ctas > 2 * static_cast<std::int64_t>(dx.sm_count);
  if (dx.finish_fn && ctas <= dx.cooperative_ctas && !many && finish_fits(ctas, dc.threads(), ctas, p.N))
    return FinishPath::cooperative;
  return FinishPath::separate;
}

void launch_backward(const LoadedKernel& dx, const LoadedKernel* dwdb, const Config& dx_config, const Config& rc,
                     const BackwardArgs& a, const BwdProblem& p, Finish finish) {
  // Fewer partial rows than dx_config's, never more: a.workspace sized for
  // dx_config suffices.
  const Config dc = fit_coresident(dx, dx_config);
  const std::int64_t P = partial_rows(dc, p.M);
  const std::size_t need = workspace_bytes(p, dc);
  CUstream stream = static_cast<CUstream>(a.stream);
  char* ws = static_cast<char*>(a.workspace);
  if (need > 0 && (!ws || need > a.workspace_bytes))
    throw Error("lntune: backward: workspace_bytes (" + std::to_string(ws ? a.workspace_bytes : 0) +
                ") is smaller than the " + std::to_string(need) + " bytes this call needs (see backward_workspace_size)");
  const BwdWorkspace w = workspace_layout(p, dc, ws);
  BwdParams params{a.dy,       a.x,   a.weight, a.mean,        a.rstd,        a.dx,
                   w.dw_partial, w.db_partial, w.counters, w.num_counters, p.M, p.N,
                   p.dy_stride, p.x_stride, p.dx_stride, a.dresidual_out, p.dz_stride,
                   a.dresidual, p.dresidual_stride,
                   nullptr,    nullptr, P};
  const unsigned grid = grid_size(P * dc.cluster_size, "backward");
  const FinishPath path = finish == Finish::automatic ? finish_path(dx, dc, p) : FinishPath::separate;
  if (path != FinishPath::separate) {
    // dW/dB in the dx kernel (finish_path): no counters, no bwd_dwdb.
    BwdParams in = params;
    in.dw = p.want_dw ? a.dweight : nullptr;
    in.db = p.want_db ? a.dbias : nullptr;
    in.counters = nullptr;
    in.num_counters = 0;
    if (path == FinishPath::alone) {
      launch(dx, grid, static_cast<unsigned>(dc.threads()), stream, &in);
      return;
    }
    void* args[] = {&in};
    const CUresult r = driver().LaunchCooperativeKernel(dx.finish_fn, grid, 1, 1, static_cast<unsigned>(dc.threads()),
                                                        1, 1, dx.dynamic_smem, stream, args);
    if (r == CUDA_SUCCESS) return;
    // Fewer CTAs fit than the kernel's occupancy promised (a context limited
    // to part of the GPU, e.g. by MPS): the two-kernel backward below.
    if (r != CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)
      check(r, "cuLaunchCooperativeKernel(" + dx.name + "_finish, grid " + std::to_string(grid) + ", block " +
                   std::to_string(dc.threads()) + ")");
  }
  launch(dx, grid, static_cast<unsigned>(dc.threads()), stream, &params);
  if (dwdb && (p.want_dw || p.want_db)) launch_dwdb(*dwdb, rc, w, P, p.N, a.dweight, a.dbias, stream);
}

}  // namespace lntune::rt
