// lntune::tune — the data one key is tuned on: device buffers for one
// (traits, M, N) with fresh random inputs, the float64 reference of its
// outputs, launchers for any config, and the correctness check.
//
// Inputs (contiguous rows, cuMemAlloc'd, so 16-byte vector access applies
// whenever N allows; tuner/reference_oracle.hpp's inputs::*, drawn by
// tuner/random_fill.hpp's counter-based generator): x ~ 0.5 + 2 N(0,1),
// weight ~ 1 + 0.5 N(0,1) (zero-centred: 0.5 N(0,1)), bias ~ 0.5 N(0,1),
// dy ~ N(0,1), residual and dz ~ N(0,1) (N(0,1) approximated by a sum of
// four uniforms). The backward's z, mean and rstd come from the reference
// forward, z in the residual's dtype and mean, rstd rounded to fp32, as a
// forward kernel would store them.
//
// Two ways to build one, with the same inputs bit for bit and the same
// tolerances:
//   * on the host (prepare(), then the constructor from its HostData): the
//     inputs are drawn on the CPU and uploaded, and the reference is the CPU
//     reference (tuner/reference.hpp), computed on a background thread while
//     the GPU benchmarks; `lntune bench`/`verify` and tests use it, and the
//     tuner with --reference cpu;
//   * on the GPU (the DeviceBuild constructor, the tuner's default): the
//     inputs are drawn there (tuner/device_fill.hpp) and the reference is
//     computed there in float64 (tuner/device_reference.hpp), about a
//     millisecond per key instead of 10-20 CPU-ns per element; only the small
//     outputs (mean, rstd, dW, dB) are downloaded. The CPU stays the oracle:
//     it draws sampled rows itself and checks the GPU's reference on them
//     (tuner/reference_oracle.hpp) on a background thread; verify() gives no
//     verdict before that check has passed, and throws KeyError (the key
//     fails) when it has not.
//
// Correctness: every output is compared with the reference, with
// ref::default_tolerance for its dtype, N, M and the inputs' actual
// magnitudes (see tuner/compare.hpp): y, z and dx on the GPU
// (tuner/device_check.hpp) when the workload has a DeviceCheck and its
// reference is on the GPU, mean, rstd, dW and dB on the host. Outputs are
// poisoned before each checked run, so unwritten elements fail.
//
// Bytes moved by one call (for GB/s; every tensor counted once per access):
//   fwd:      x read + y written (M N sx each) + weight, bias read (N sw each)
//             + mean, rstd written (4 M each)
//   bwd:      x, dy read + dx written (3 M N sx) + weight read (N sw)
//             + mean, rstd read (8 M) + partial dW/dB rows written by bwd_dx
//             and read by bwd_dwdb (2 P N 4 per gradient) + dW, dB written
//             (N sw each)
//   bwd_dwdb: partials read (P N 4 per gradient) + dW, dB written (N sw each)
#pragma once

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lntune/lntune.hpp"
#include "runtime/driver.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/launcher.hpp"
#include "runtime/problem.hpp"
#include "runtime/selector.hpp"
#include "tuner/compare.hpp"
#include "tuner/reference_oracle.hpp"

namespace lntune::tune {

class DeviceCheck;
class DeviceFill;
class DevicePool;
class DeviceReference;
class Uploader;

// What a workload built on the GPU needs (the worker's, used on the thread
// that builds it; the context current).
struct DeviceBuild {
  DeviceFill* fill = nullptr;
  DeviceReference* reference = nullptr;
  CUstream stream = nullptr;  // where the fill and the reference run (the runner's: nothing else runs then)
  // Runs the CPU's check of the GPU reference (sampled rows) on a thread of
  // its own; false: in the constructor.
  bool oracle_in_background = true;
  // For tests: called after the reference kernels and before anything is
  // downloaded, with the device reference of y (forward) or dx (backward);
  // a test corrupts it to see the oracle fail the workload.
  std::function<void(CUdeviceptr reference_main, CUstream)> after_reference;
};

class Workload {
 public:
  // traits.kernel: fwd or bwd_dx (whose workload also serves bwd_dwdb).
  // Allocates and uploads; needs the device's context current. Throws
  // rt::CudaError (e.g. out of memory) or lntune::Error.
  Workload(const Traits& traits, std::int64_t m, std::int64_t n, std::uint64_t seed);
  ~Workload();

  // The two halves of that constructor. prepare() needs no GPU and no
  // context: it draws the inputs, computes the backward's mean and rstd, and
  // starts the CPU reference on its own thread. The tuner prepares the next
  // key's workload while the GPU times the current one. The constructor from
  // its result allocates and uploads (context current).
  struct HostData;
  struct HostDataDeleter {
    void operator()(HostData* h) const noexcept;
  };
  using HostPtr = std::unique_ptr<HostData, HostDataDeleter>;
  static HostPtr prepare(const Traits& traits, std::int64_t m, std::int64_t n, std::uint64_t seed);
  // pool: device buffers are taken from it and given back to it by the
  // destructor (tuner/device_pool.hpp), which must outlive the workload;
  // none: allocated and freed. uploader: the uploads (here and in
  // upload_reference) go through its page-locked staging
  // (tuner/uploader.hpp); none: cuMemcpyHtoD.
  explicit Workload(HostPtr host, DevicePool* pool = nullptr, Uploader* uploader = nullptr);
  // Built on the GPU (see the top): the inputs drawn and the reference
  // computed on gpu.stream, synchronously (the context current), the small
  // outputs and the oracle's rows downloaded, the oracle started. Throws
  // rt::CudaError or lntune::Error (not for a disagreement of the oracle:
  // verify() and oracle() report that).
  Workload(const Traits& traits, std::int64_t m, std::int64_t n, std::uint64_t seed, const DeviceBuild& gpu,
           DevicePool* pool = nullptr);

  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  bool backward() const { return traits_.kernel != Kernel::fwd; }
  bool built_on_gpu() const { return built_on_gpu_; }
  const Traits& traits() const { return traits_; }
  std::int64_t m() const { return m_; }
  std::int64_t n() const { return n_; }
  int vec() const;  // the vector width the launcher would use for these buffers
  // The call's arguments (stream: null), for the public API (explain_*).
  const ForwardArgs& forward_args() const { return fargs_; }
  const BackwardArgs& backward_args() const { return bargs_; }
  const rt::FwdProblem& fwd_problem() const { return fwd_; }
  const rt::BwdProblem& bwd_problem() const { return bwd_; }
  // The bwd_dwdb traits (canonical) the launcher uses after this backward;
  // has_weight/has_bias false when no gradient is wanted.
  Traits dwdb_traits() const;
  // The dW/dB reduction after a backward with `dx_config` (rt::dwdb_problem).
  rt::DwdbProblem dwdb(const Config& dx_config) const;
  bool has_dwdb() const { return bwd_.want_dw || bwd_.want_db; }

  double fwd_bytes() const;
  double bwd_bytes(const Config& dx_config) const;
  double dwdb_bytes(std::int64_t partial_rows) const;

  // Grows the backward workspace for this dx config (outside timed regions).
  void reserve_workspace(const Config& dx_config);

  // Enqueue one call on `stream` (no synchronisation, no allocation).
  void launch_forward(const rt::LoadedKernel& k, const Config& c, CUstream stream) const;
  // finish: rt::Finish::separate writes the partial rows and zeroes the
  // counters for launch_dwdb even where the launcher would finish dW/dB in
  // the dx kernel.
  void launch_backward(const rt::LoadedKernel& dx, const Config& dx_config, const rt::LoadedKernel& dwdb,
                       const Config& dwdb_config, CUstream stream,
                       rt::Finish finish = rt::Finish::automatic) const;
  // The second kernel alone, reducing the partials that the last backward
  // with `dx_config` (run with rt::Finish::separate) left in the workspace,
  // in the launcher's layout. dx_config must be what the launcher runs:
  // rt::fit_coresident's (a cluster config's group_size_m bounded by the
  // clusters that fit at once sets the partial rows and the layout).
  void launch_dwdb(const rt::LoadedKernel& dwdb, const Config& dwdb_config, const Config& dx_config,
                   CUstream stream) const;

  // The element check on the GPU (tuner/device_check.hpp) for y, z and dx,
  // once the reference is on the GPU (upload_reference(), or built there):
  // verify() then downloads those outputs only when the check finds a
  // failure (for ref::compare's description). Without it (or before the
  // upload) every output is compared on the host. `check` must outlive the
  // workload's verifications.
  void use_device_check(DeviceCheck* check) { check_ = check; }
  // Waits for the CPU reference and uploads its y, z or dx (context
  // current); the tuner calls it on the thread that prepares the workload.
  // Nothing to do for a GPU-built workload.
  void upload_reference();

  // Poisons the outputs `launch` writes, runs it on `stream`, waits, and
  // compares with the reference: "" when correct, else "y: <first mismatch>".
  // Forward: y, mean, rstd. Backward: dx, dW, dB (gradients_only: dW, dB).
  std::string verify(const std::function<void(CUstream)>& launch, CUstream stream, bool gradients_only = false);
  // Seconds spent by verify() so far: in all, and of those waiting for the
  // CPU reference, and comparing (on the GPU, or downloading and comparing
  // on the host; the rest: the run).
  struct VerifyTimes {
    double total_s = 0, reference_wait_s = 0, compare_s = 0;
  };
  const VerifyTimes& verify_times() const { return verify_times_; }

  // The CPU's check of a GPU-built reference, waited for (a host-built
  // workload's: an empty report, ok). verify() throws KeyError with its
  // error, if any, before giving a verdict.
  const OracleReport& oracle();

  // For tests: every input as the kernels under test read it, and the
  // reference, downloaded (context current; waits for a host-built
  // reference; a GPU-built one is returned whatever its oracle says).
  struct Snapshot {
    std::vector<unsigned char> x;  // fwd: x; bwd: x, or z with a residual
    std::vector<unsigned char> weight, bias, residual, dy, dz;
    std::vector<float> mean, rstd;  // bwd: the kernels' inputs (fwd: empty)
    std::vector<unsigned char> ref_main, ref_z;  // y or dx, and z (fwd with a residual)
    std::vector<float> ref_mean, ref_rstd;       // fwd
    std::vector<unsigned char> ref_dw, ref_db;   // bwd
    double wmax = 0, bmax = 0, dymax = 0, rstd_max = 0;
  };
  Snapshot snapshot();

  struct Reference;

 private:
  rt::DeviceBuffer alloc(std::size_t bytes);  // whole words, from pool_ or cuMemAlloc
  // A buffer of at least `bytes` (alloc) holding `data`.
  rt::DeviceBuffer upload(const void* data, std::size_t bytes);
  void give_back(rt::DeviceBuffer& b);  // to pool_, or freed
  // The arguments of the kernels under test and their problems, from the
  // device buffers (both constructors).
  void bind_forward();
  void bind_backward();
  // The GPU build's halves (the DeviceBuild constructor).
  void build_forward_on_gpu(const DeviceBuild& gpu, std::uint64_t seed, GpuReferenceSample& sample);
  void build_backward_on_gpu(const DeviceBuild& gpu, std::uint64_t seed, GpuReferenceSample& sample);
  void poison(const rt::DeviceBuffer& b, DType d, std::size_t bytes, CUstream stream) const;
  // The reference, waited for (its seconds added to *wait_s, if given);
  // rethrows the reference's exception, if any. A GPU-built one: its small
  // outputs, after the oracle's check (KeyError when that failed).
  const Reference& reference(double* wait_s);
  // Compares one large output (y, z or dx: m x n of `d`) with the reference:
  // on the GPU when its reference is on the device, on the host otherwise or
  // when the GPU finds failures. want_host null: the reference is on the
  // device only (GPU-built), downloaded for the host's comparison. "" or the
  // failure's description.
  std::string check_rows(const char* what, DType d, const rt::DeviceBuffer& got, const rt::DeviceBuffer& want_dev,
                         const unsigned char* want_host, std::size_t bytes, ref::Tolerance tol,
                         rt::PinnedBuffer& staging, CUstream stream);

  Traits traits_;
  std::int64_t m_ = 0, n_ = 0;
  std::size_t x_bytes_ = 0, w_bytes_ = 0, y_bytes_ = 0, r_bytes_ = 0;
  // Host inputs (kept for the reference), their magnitudes and the reference
  // job (HostData, workload.cpp).
  HostPtr h_;
  // Variants: the residual (forward), z (the forward's residual_out; the
  // backward's input), dz (the backward's upstream gradient of z).
  rt::DeviceBuffer r_, z_, dz_;
  rt::PinnedBuffer got_z_;
  // Device buffers.
  rt::DeviceBuffer x_, y_or_dx_, dy_, w_, b_, mean_, rstd_, dw_, db_, ws_;
  ForwardArgs fargs_;
  BackwardArgs bargs_;
  rt::FwdProblem fwd_;
  rt::BwdProblem bwd_;
  // Host copies of downloaded outputs (reused by every verify).
  // got_main_ (y in the y dtype, or dx in the x dtype) and got_z_ are
  // page-locked, allocated by the first host comparison that needs them
  // (none when the GPU's check passes).
  rt::PinnedBuffer got_main_;
  std::vector<unsigned char> got_dw_, got_db_;
  std::vector<float> got_mean_, got_rstd_;
  std::shared_ptr<Reference> ref_;
  VerifyTimes verify_times_;
  DeviceCheck* check_ = nullptr;
  DevicePool* pool_ = nullptr;
  Uploader* uploader_ = nullptr;
  rt::DeviceBuffer ref_main_, ref_z_;  // the reference's y or dx, and z, on the GPU (upload_reference, or GPU-built)
  bool built_on_gpu_ = false;
  std::future<OracleReport> oracle_pending_;  // GPU-built: the CPU's check, running
  std::optional<OracleReport> oracle_;        // its report, once waited for
};

}  // namespace lntune::tune
