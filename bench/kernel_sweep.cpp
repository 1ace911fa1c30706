// Kernel-development harness: for each (dtype, N) at ~512 MiB of x, times
// every config of the search space (fwd, bwd_dx + default dwdb) against the
// device-to-device copy measured in the same process. Events, L2 flushed
// before every repetition, median of 15. Prints one line per shape: default
// and best config, GB/s and % of copy.
//   lntune_sweep [fwd|bwd|train] [dtype] [N...]   (LNTUNE_SWEEP_EVERY=1: every config's time;
//   LNTUNE_SWEEP_CONFIG="<config as printed>": that config alone (its
//   fields apart by spaces or commas; several configs apart by ';');
//   LNTUNE_SWEEP_CONFIG=default: the default alone, e.g. to compare builds;
//   a config in that form that is not in the space is timed too, as long as
//   the generator accepts it, e.g. a persistent grid of more clusters)
// train: the backward at M = 4096 (training sizes), dx and dW/dB together:
// the default pair, the best bwd_dx (default dwdb after it) and then the best
// bwd_dwdb for that bwd_dx; also bwd_dwdb alone (default, one split, best)
// and the bwd_dx alone (what the pair adds for dW/dB).
// LNTUNE_SWEEP_WIDE=1 (bwd): only the wide-row backward's configs
// (gen::is_wide_bwd), each printed with its time and % of copy.
// Variants: LNTUNE_SWEEP_OP=rmsnorm (no bias; the default is layernorm) and
// LNTUNE_SWEEP_RESIDUAL=1 (the fused residual add in the row dtype: the
// forward also reads the residual and writes z, the backward also reads dz;
// =fp32, fp16 or bf16: the residual, z and dz in that dtype, e.g. an fp32
// residual stream beside 16-bit x).
// LNTUNE_SWEEP_M=<rows>: that M (e.g. decode sizes) instead of x = 512 MiB
// or train's 4096. LNTUNE_SWEEP_FLUSH=memset: the L2 flush up to session 26
// (overwriting twice the L2; it charges the next kernel the write-back of
// the dirty lines it leaves), not the tuner's read of twice the L2.
// LNTUNE_SWEEP_FINISH=separate: the backward's dW/dB always in the bwd_dwdb
// kernel (rt::Finish::separate), not in the dx kernel where it can be;
// LNTUNE_SWEEP_FINISH=both: the default also timed that way, on its line.
// Inputs: x, dy, the weight, the bias, the residual and dz drawn at random on
// the GPU as the tuner's workloads draw them (DeviceFill, tune::inputs), as
// the Python benches' are; LNTUNE_SWEEP_INPUTS=constant: constant bytes, the
// sweep's inputs up to session 37 (every row constant: the fp16 wide forward
// at N = 262144 measured 76.7% of copy with them against 81.2% with random
// rows, bf16 79.1 against 80.4; bench/results/s38, call 1).
// LNTUNE_SWEEP_W=fp32|fp16|bf16: the weight's (and bias's, dW's, dB's)
// dtype, e.g. fp32 beside 16-bit rows as PyTorch's autocast keeps a
// LayerNorm's parameters (default: the row dtype).
// Bytes counted: what must move, as bench/bench_norms.py counts them.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "generator/instance.hpp"
#include "generator/space.hpp"
#include "lntune/lntune.hpp"
#include "runtime/runtime.hpp"
#include "tuner/device_fill.hpp"
#include "tuner/l2_flush.hpp"
#include "tuner/reference_oracle.hpp"

using namespace lntune;

namespace {

// "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=132
// cluster_size=2" (to_string's form; cluster_size may be left out): the
// config, or nullopt where a field is missing, unknown or not a number.
std::optional<Config> parse_config(const std::string& text) {
  Config c;
  bool seen[5] = {};
  std::size_t pos = 0;
  // Fields apart by spaces or commas (commas survive a shell's word
  // splitting: bench/gpu_ab.sh's VAR=value lists).
  while (pos < text.size()) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == ',')) ++pos;
    if (pos == text.size()) break;
    const std::size_t end = std::min(text.find_first_of(" ,", pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    pos = end;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    char* stop = nullptr;
    const long v = std::strtol(value.c_str(), &stop, 10);
    if (value.empty() || *stop != '\0' || v < 0 || v > (1L << 30)) return std::nullopt;
    static const char* const keys[] = {"block_size", "num_warps", "rows_per_cta", "group_size_m", "cluster_size"};
    int* const fields[] = {&c.block_size, &c.num_warps, &c.rows_per_cta, &c.group_size_m, &c.cluster_size};
    int which = -1;
    for (int i = 0; i < 5; ++i)
      if (key == keys[i]) which = i;
    if (which < 0 || seen[which]) return std::nullopt;
    seen[which] = true;
    *fields[which] = static_cast<int>(v);
  }
  if (!seen[0] || !seen[1] || !seen[2] || !seen[3]) return std::nullopt;
  return c;
}

// L2 flush before every repetition: the tuner's (a read of twice the L2,
// tuner/l2_flush.hpp), or with memset_flush the one used up to session 26
// (overwriting twice the L2, which leaves it dirty), for comparisons.
struct Timer {
  CUstream s = nullptr;
  CUevent a = nullptr, b = nullptr;
  tune::L2Flush read_flush;
  rt::DeviceBuffer flush;
  bool memset_flush;
  Timer(const std::string& arch, std::size_t l2, bool memset)
      : read_flush(arch, l2), flush(memset ? rt::DeviceBuffer(2 * l2) : rt::DeviceBuffer()), memset_flush(memset) {
    const auto& d = rt::driver();
    rt::check(d.StreamCreate(&s, CU_STREAM_NON_BLOCKING), "stream");
    rt::check(d.EventCreate(&a, CU_EVENT_DEFAULT), "event");
    rt::check(d.EventCreate(&b, CU_EVENT_DEFAULT), "event");
  }
  double median_us(const std::function<void(CUstream)>& f, int reps = 15) {
    const auto& d = rt::driver();
    for (int i = 0; i < 3; ++i) f(s);
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      if (memset_flush)
        rt::check(d.MemsetD32Async(flush.get(), static_cast<unsigned>(i), flush.size() / 4, s), "flush");
      else
        read_flush.enqueue(s);
      rt::check(d.EventRecord(a, s), "record");
      f(s);
      rt::check(d.EventRecord(b, s), "record");
      rt::check(d.EventSynchronize(b), "sync");
      float ms = 0;
      rt::check(d.EventElapsedTime(&ms, a, b), "elapsed");
      t.push_back(ms * 1e3);
    }
    std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
    return t[static_cast<std::size_t>(reps / 2)];
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "fwd";
  const DType dt = argc > 2 ? *parse_dtype(argv[2]) : DType::bf16;
  std::vector<std::int64_t> Ns;
  for (int i = 3; i < argc; ++i) Ns.push_back(std::atoll(argv[i]));
  if (Ns.empty()) Ns = {256, 512, 1024, 2048, 4096, 8192, 16384, 65536, 262144};
  // LNTUNE_SWEEP_EVERY=1: a line per config, not only the default and the best.
  const char* every_env = std::getenv("LNTUNE_SWEEP_EVERY");
  const bool every = every_env && std::string(every_env) == "1";
  const bool only_wide = std::getenv("LNTUNE_SWEEP_WIDE") != nullptr;
  // LNTUNE_SWEEP_CONFIG="block_size=... cluster_size=...": that config alone
  // (to_string's form; in the space or not), e.g. to profile one kernel under
  // ncu; "default": the default alone.
  const char* only_env = std::getenv("LNTUNE_SWEEP_CONFIG");
  const bool only_default = only_env && std::string(only_env) == "default";
  // Several configs apart by ';': those alone, in that order.
  std::vector<Config> only;  // the configs to time, where named
  if (only_env && *only_env && !only_default) {
    const std::string list = only_env;
    for (std::size_t pos = 0; pos <= list.size();) {
      const std::size_t end = std::min(list.find(';', pos), list.size());
      const std::string item = list.substr(pos, end - pos);
      pos = end + 1;
      if (item.find_first_not_of(" ,") == std::string::npos) continue;
      const std::optional<Config> c = parse_config(item);
      if (!c) {
        std::fprintf(stderr, "lntune_sweep: LNTUNE_SWEEP_CONFIG '%s' is not 'default' or 'block_size=B num_warps=W rows_per_cta=R group_size_m=G[ cluster_size=C]' (several apart by ';')\n",
                     item.c_str());
        return 2;
      }
      only.push_back(*c);
    }
  }
  const char* op_env = std::getenv("LNTUNE_SWEEP_OP");
  const std::string op = op_env ? op_env : "layernorm";
  if (op != "layernorm" && op != "rmsnorm") {
    std::fprintf(stderr, "lntune_sweep: LNTUNE_SWEEP_OP must be layernorm or rmsnorm, got '%s'\n", op.c_str());
    return 2;
  }
  const bool rms = op == "rmsnorm";
  // LNTUNE_SWEEP_FLUSH=memset: the L2 flush by overwriting (see Timer).
  const char* flush_env = std::getenv("LNTUNE_SWEEP_FLUSH");
  const bool memset_flush = flush_env && std::string(flush_env) == "memset";
  // LNTUNE_SWEEP_M=<rows>: that M instead of x = 512 MiB (or 4096 for train).
  const char* m_env = std::getenv("LNTUNE_SWEEP_M");
  char* m_end = nullptr;
  const std::int64_t m_rows = m_env ? std::strtoll(m_env, &m_end, 10) : 0;
  if (m_env && (m_rows < 1 || m_end == m_env || *m_end != '\0')) {
    std::fprintf(stderr, "lntune_sweep: LNTUNE_SWEEP_M must be a row count >= 1, got '%s'\n", m_env);
    return 2;
  }
  const char* finish_env = std::getenv("LNTUNE_SWEEP_FINISH");
  const std::string finish_mode = finish_env ? finish_env : "";
  if (!finish_mode.empty() && finish_mode != "separate" && finish_mode != "both") {
    std::fprintf(stderr, "lntune_sweep: LNTUNE_SWEEP_FINISH must be separate or both, got '%s'\n", finish_env);
    return 2;
  }
  const rt::Finish finish = finish_mode == "separate" ? rt::Finish::separate : rt::Finish::automatic;
  const char* inputs_env = std::getenv("LNTUNE_SWEEP_INPUTS");
  const std::string inputs = inputs_env ? inputs_env : "random";
  if (inputs != "constant" && inputs != "random") {
    std::fprintf(stderr, "lntune_sweep: LNTUNE_SWEEP_INPUTS must be constant or random, got '%s'\n", inputs_env);
    return 2;
  }
  const char* w_env = std::getenv("LNTUNE_SWEEP_W");
  const std::optional<DType> w_parsed = w_env ? parse_dtype(w_env) : std::optional<DType>(dt);
  if (!w_parsed) {
    std::fprintf(stderr, "lntune_sweep: LNTUNE_SWEEP_W must be fp32, fp16 or bf16, got '%s'\n", w_env);
    return 2;
  }
  const DType wdt = *w_parsed;
  // LNTUNE_SWEEP_RESIDUAL=1: the fused residual add, the residual in x's
  // dtype; =fp32 / fp16 / bf16: in that dtype (e.g. an fp32 residual stream).
  const char* res_env = std::getenv("LNTUNE_SWEEP_RESIDUAL");
  const bool residual = res_env && *res_env && std::string(res_env) != "0";
  const std::optional<DType> res_parsed =
      !residual || std::string(res_env) == "1" ? std::optional<DType>(dt) : parse_dtype(res_env);
  if (!res_parsed) {
    std::fprintf(stderr, "lntune_sweep: LNTUNE_SWEEP_RESIDUAL must be 0, 1, fp32, fp16 or bf16, got '%s'\n", res_env);
    return 2;
  }
  const DType rdt = *res_parsed;
  try {
    rt::Runtime& runtime = rt::default_runtime();  // its binary store: the user cache's CUBINs
    CUcontext ctx = nullptr;
    const rt::DeviceInfo& dev = runtime.current_device(&ctx);
    const auto& d = rt::driver();
    const std::size_t es = dtype_size(dt), bytes = std::size_t{512} << 20;
    Timer timer(dev.arch(), static_cast<std::size_t>(dev.l2_bytes), memset_flush);
    rt::DeviceBuffer cs(bytes), cd(bytes);
    std::optional<tune::DeviceFill> fill;
    if (inputs == "random") fill.emplace(dev.arch());
    std::uint64_t seed = 1;
    // Random inputs (the default; drawn as the tuner's workloads draw them,
    // tune::inputs), or with LNTUNE_SWEEP_INPUTS=constant the constant bytes.
    auto init = [&](const rt::DeviceBuffer& buf, std::size_t count, int byte, const tune::InputDraw& draw,
                    DType type) {
      if (fill)
        fill->fill(buf.get(), type, static_cast<std::int64_t>(count), draw.offset, draw.scale, seed++, nullptr);
      else
        rt::check(d.MemsetD8(buf.get(), static_cast<unsigned char>(byte), count * dtype_size(type)), "init");
    };
    const std::size_t w_es = dtype_size(wdt);
    const double copy_us = timer.median_us([&](CUstream s) { rt::check(d.MemcpyDtoDAsync(cd.get(), cs.get(), bytes, s), "copy"); });
    const double copy_gbps = 2.0 * static_cast<double>(bytes) / copy_us / 1e3;
    const bool fast = gen::fast_memory(rt::space_query(dev, Kernel::fwd, dt, 1, 1));
    std::string variant = rms ? "  RMSNorm" : "";
    if (residual) variant += "  fused residual add";
    if (residual && rdt != dt) variant += ", residual " + std::string(to_string(rdt));
    if (wdt != dt) variant += "  weight " + std::string(to_string(wdt));
    std::printf("%s  copy %.0f GB/s (512 MiB D2D, read+write)  DRAM %.1f B a SM cycle (%s rules)%s\n",
                dev.name.c_str(), copy_gbps, dev.dram_bytes_per_sm_cycle, fast ? "fast-memory" : "H100",
                variant.c_str());
    for (std::int64_t N : Ns) {
      const bool train = which == "train";
      const std::int64_t M = m_rows ? m_rows : train ? 4096 : static_cast<std::int64_t>(bytes / es) / N;
      rt::DeviceBuffer x(M * N * es), y(M * N * es), dy(M * N * es), w(N * w_es), b(N * w_es), dw(N * w_es), db(N * w_es),
          mean(M * 4), rstd(M * 4);
      const auto rows = static_cast<std::size_t>(M * N), cols = static_cast<std::size_t>(N);
      init(x, rows, 0x3e, tune::inputs::x, dt);
      init(dy, rows, 0x3d, tune::inputs::dy, dt);
      init(w, cols, 0x3c, tune::inputs::weight(false), wdt);
      init(b, cols, 0x01, tune::inputs::bias, wdt);
      ForwardArgs f;
      f.x = x.ptr(); f.weight = w.ptr(); f.bias = b.ptr(); f.y = y.ptr();
      f.mean = static_cast<float*>(mean.ptr()); f.rstd = static_cast<float*>(rstd.ptr());
      f.M = M; f.N = N; f.x_dtype = dt; f.w_dtype = wdt;
      BackwardArgs g;
      g.dy = dy.ptr(); g.x = x.ptr(); g.weight = w.ptr(); g.mean = f.mean; g.rstd = f.rstd; g.dx = y.ptr();
      g.dweight = dw.ptr(); g.dbias = db.ptr(); g.M = M; g.N = N; g.x_dtype = dt; g.w_dtype = wdt;
      // The variant: both structs before the checks that derive the traits.
      std::optional<rt::DeviceBuffer> r, z, dz;  // residual, z, dz: the fused add only
      if (rms) {
        f.norm = g.norm = Norm::rms;
        f.mean = nullptr;
        g.mean = nullptr;
        f.bias = nullptr;
        g.dbias = nullptr;
      }
      if (residual) {
        const auto rbytes = static_cast<std::size_t>(M * N) * dtype_size(rdt);
        r.emplace(rbytes);
        z.emplace(rbytes);
        dz.emplace(rbytes);
        init(*r, rows, 0x3b, tune::inputs::residual, rdt);
        init(*dz, rows, 0x3a, tune::inputs::dz, rdt);
        f.residual = r->ptr();
        f.residual_out = z->ptr();
        f.residual_dtype = g.residual_dtype = rdt;
        g.residual = true;
        g.x = z->ptr();
        g.dresidual_out = dz->ptr();
      }
      const rt::FwdProblem fp = rt::check_forward(f);
      const rt::BwdProblem bp = rt::check_backward(g);
      forward(f);
      const bool fwd = which == "fwd";
      const Kernel k = fwd ? Kernel::fwd : Kernel::bwd_dx;
      const gen::SpaceQuery q{k, dt, N, M, dev.sm_count};
      // What the launcher runs for this call (the variant's traits and vector
      // width decide which shared-memory config is valid).
      const Config def = fwd ? rt::default_selection(dev, fp.traits, N, M, fp.vec).config
                             : rt::default_selection(dev, bp.traits, N, M, bp.vec).config;
      Traits rtt = bp.traits;
      rtt.kernel = Kernel::bwd_dwdb;
      // The default dwdb config for a bwd_dx config's partial rows.
      auto dwdb_default = [&](const Config& dc) {
        return gen::default_config({Kernel::bwd_dwdb, wdt, N, rt::partial_rows(dc, M), dev.sm_count});
      };
      auto dwdb_kernel = [&](const Config& rc) -> const rt::LoadedKernel& {
        return runtime.kernel(ctx, dev.arch(), gen::make_instance(rtt, rc, N, 1));
      };
      // Workspace for the largest of the default's and the space's partial
      // rows (a fixed 256 MiB was too small for N = 262144's defaults).
      std::vector<Config> space = gen::search_space(q);
      // LNTUNE_SWEEP_CONFIG's configs alone, in the space or not
      // (make_instance turns down what the generator cannot build; reported
      // below).
      if (!only.empty()) space = only;
      std::size_t ws_bytes = std::size_t{1} << 20;
      if (!fwd) {
        ws_bytes = std::max(ws_bytes, rt::workspace_bytes(bp, def));
        for (const Config& c : space) ws_bytes = std::max(ws_bytes, rt::workspace_bytes(bp, c));
      }
      rt::DeviceBuffer ws(ws_bytes);
      g.workspace = ws.ptr();
      g.workspace_bytes = ws.size();
      // The fwd or bwd_dx kernel of a config for this call.
      auto row_kernel = [&](const Config& c) -> const rt::LoadedKernel& {
        return runtime.kernel(ctx, dev.arch(), gen::make_instance(fwd ? fp.traits : bp.traits, c, N, fp.vec));
      };
      auto time_pair = [&](const Config& c, const Config& rc, rt::Finish how) {
        const auto& kern = row_kernel(c);
        if (fwd) return timer.median_us([&](CUstream s) { f.stream = s; rt::launch_forward(kern, c, f, fp); });
        const auto& rk = dwdb_kernel(rc);
        return timer.median_us([&](CUstream s) { g.stream = s; rt::launch_backward(kern, &rk, c, rc, g, bp, how); });
      };
      auto time_cfg = [&](const Config& c) { return time_pair(c, fwd ? Config{} : dwdb_default(c), finish); };
      // x (and residual) read, y (and z) written; backward: x (z), dy (and dz) read, dx written.
      // x, y, dy and dx in x's bytes; the residual, z and dz in the
      // residual's (an fp32 residual stream beside 16-bit x).
      const double rs = static_cast<double>(dtype_size(rdt)), xs = static_cast<double>(es);
      const double moved = static_cast<double>(M * N) *
                           (fwd ? (residual ? 2 * xs + 2 * rs : 2 * xs) : (residual ? 2 * xs + 2 * rs : 3 * xs));
      auto gbps = [&](double us) { return moved / us / 1e3; };
      const double t_def = time_cfg(def);
      double t_best = t_def;
      Config best = def;
      int n = 0;
      for (const Config& c : space) {
        if (only_default) break;
        if (only_wide && !gen::is_wide_bwd(k, c) && !gen::is_wide_fwd(k, c)) continue;
        double t = 0;
        try {
          t = time_cfg(c);
        } catch (const std::exception& e) {
          std::printf("   %s: %s\n", to_string(c).c_str(), e.what());
          continue;
        }
        ++n;
        if (every) {
          // Clusters: how many the GPU runs at once, against the grid's.
          const int active = row_kernel(c).max_active_clusters;
          const std::string coresident =
              active > 0 ? "  [" + std::to_string(active) + " co-resident]" : std::string();
          std::printf("   %-70s %9.1f us  %5.1f%% of copy%s%s\n", to_string(c).c_str(), t, 100.0 * gbps(t) / copy_gbps,
                      fwd && gen::forward_in_smem(c, N)  ? "  (slab in shared memory)"
                      : gen::is_wide_fwd(k, c)           ? "  (wide, staged)"
                                                         : "",
                      coresident.c_str());
        }
        if (only_wide)
          std::printf("   wide %s: %8.1f us %5.1f%% of copy\n", to_string(c).c_str(), t, 100 * gbps(t) / copy_gbps);
        if (t < t_best) {
          t_best = t;
          best = c;
        }
      }
      if (train) {
        // The best dx's dW/dB reduction: alone (default, one split, best of
        // the space), then the whole backward with the best one.
        const std::int64_t P = rt::partial_rows(best, M);
        const rt::BwdWorkspace wl = rt::workspace_layout(bp, best, ws.ptr());
        auto time_dwdb = [&](const Config& rc) {
          const auto& rk = dwdb_kernel(rc);
          return timer.median_us([&](CUstream s) { rt::launch_dwdb(rk, rc, wl, P, N, g.dweight, g.dbias, s); });
        };
        const Config rdef = dwdb_default(best);
        const double r_def = time_dwdb(rdef);
        const double r_one = time_dwdb(Config{32, 16, 1, 1});
        double r_best = r_def;
        Config rbest = rdef;
        for (const Config& rc : gen::search_space({Kernel::bwd_dwdb, wdt, N, P, dev.sm_count})) {
          const double t = time_dwdb(rc);
          if (t < r_best) {
            r_best = t;
            rbest = rc;
          }
        }
        const double t_pair = time_pair(best, rbest, finish);
        // The dx kernel alone (no bwd_dwdb after it): the pair less this is
        // what dW/dB's reduction adds to the backward, the most that fewer
        // partial rows could take off it.
        const auto& kb = row_kernel(best);
        const double t_dx = timer.median_us([&](CUstream s) {
          g.stream = s;
          rt::launch_backward(kb, nullptr, best, rbest, g, bp, rt::Finish::separate);
        });
        std::printf("train  %-4s N=%-6lld P=%-5lld dwdb alone: default %6.1f us (%s) | 32x16 one split %6.1f us | best %6.1f us (%s) | "
                    "dx+dwdb best pair %7.1f us %5.1f%% of copy | dx alone %6.1f us (the pair adds %4.1f us)\n",
                    std::string(to_string(dt)).c_str(), static_cast<long long>(N), static_cast<long long>(P), r_def,
                    to_string(rdef).c_str(), r_one, r_best, to_string(rbest).c_str(), t_pair,
                    100 * gbps(t_pair) / copy_gbps, t_dx, t_pair - t_dx);
      }
      if (!fwd && finish_mode == "both") {
        const double t_sep = time_pair(def, dwdb_default(def), rt::Finish::separate);
        const auto& kd = row_kernel(def);
        std::printf("finish %-4s N=%-7lld M=%-8lld default: dW/dB %s %8.1f us %5.1f%% | bwd_dwdb after it %8.1f us %5.1f%%  (%s)\n",
                    std::string(to_string(dt)).c_str(), static_cast<long long>(N), static_cast<long long>(M),
                    rt::finish_path(kd, def, bp) != rt::FinishPath::separate ? "in the dx kernel" : "in bwd_dwdb (not eligible)", t_def,
                    100 * gbps(t_def) / copy_gbps, t_sep, 100 * gbps(t_sep) / copy_gbps, to_string(def).c_str());
      }
      std::printf("%-6s %-4s N=%-7lld M=%-8lld default %8.1f us %5.0f GB/s %5.1f%% | best of %3d %8.1f us %5.0f GB/s %5.1f%%  %s\n",
                  which.c_str(), std::string(to_string(dt)).c_str(), static_cast<long long>(N), static_cast<long long>(M),
                  t_def, gbps(t_def), 100 * gbps(t_def) / copy_gbps, n, t_best, gbps(t_best), 100 * gbps(t_best) / copy_gbps,
                  to_string(best).c_str());
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
