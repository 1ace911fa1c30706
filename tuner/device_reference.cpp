#include "tuner/device_reference.hpp"

#include <algorithm>
#include <cstring>

#include "templates/kernels/reference_params.h"

namespace lntune::tune {

namespace {

constexpr unsigned kThreads = 256;  // refk::kThreads

int code(DType d) { return static_cast<int>(d); }  // refk::kF32/kF16/kBf16 number them as DType does
static_assert(static_cast<int>(DType::f32) == refk::kF32 && static_cast<int>(DType::f16) == refk::kF16 &&
                  static_cast<int>(DType::bf16) == refk::kBf16,
              "reference_params.h numbers the dtypes as DType does");

// Threads per row: a warp for rows of up to 1024 elements, the whole CTA
// beyond (reference.cuh: the group size G, which fixes the order of the sums).
bool warp_per_row(std::int64_t n) { return n <= 1024; }

template <class Params>
void launch(CUfunction f, unsigned gx, unsigned gy, const Params& params, CUstream stream, const char* what) {
  Params p = params;
  void* args[] = {&p};
  rt::check(rt::driver().LaunchKernel(f, gx, gy, 1, kThreads, 1, 1, 0, stream, args, nullptr),
            std::string("cuLaunchKernel (") + what + ")");
}

void check_problem(const char* fn, const RefProblem& p) {
  if (p.m < 1 || p.n < 1)
    throw Error(std::string("lntune: DeviceReference::") + fn + " needs M >= 1 and N >= 1, got M=" +
                std::to_string(p.m) + " N=" + std::to_string(p.n));
  if (!(p.eps >= 0)) throw Error(std::string("lntune: DeviceReference::") + fn + ": eps must be >= 0");
}

void require(const char* fn, const char* what, CUdeviceptr ptr) {
  if (ptr == 0) throw Error(std::string("lntune: DeviceReference::") + fn + ": " + what + " must not be null");
}

}  // namespace

RefProblem RefProblem::of(const Traits& traits, std::int64_t m, std::int64_t n) {
  const Traits t = traits.canonical();
  RefProblem p;
  p.m = m;
  p.n = n;
  p.x_dtype = t.x_dtype;
  p.w_dtype = t.w_dtype;
  p.y_dtype = t.out_dtype();
  p.residual = t.residual;
  p.norm = t.norm;
  p.zero_centered = t.zero_centered;
  p.eps = static_cast<double>(inputs::kEps);
  return p;
}

DeviceReference::DeviceReference(const std::string& arch)
    : module_("lntune/kernels/reference.cuh", arch, "the tuner's float64 reference"),
      fwd32_(module_.function("lntune_ref_fwd_g32")),
      fwd256_(module_.function("lntune_ref_fwd_g256")),
      bwd32_(module_.function("lntune_ref_bwd_g32")),
      bwd256_(module_.function("lntune_ref_bwd_g256")),
      partials_(module_.function("lntune_ref_dwdb_partials")),
      sum_(module_.function("lntune_ref_dwdb_sum")),
      rstd_max_(sizeof(unsigned)) {}

std::size_t DeviceReference::partials_offset(std::int64_t m) { return static_cast<std::size_t>(2 * m) * sizeof(double); }

std::size_t DeviceReference::workspace_bytes(std::int64_t m, std::int64_t n) {
  const DwdbPartition part = dwdb_partition(m, n);
  return partials_offset(m) + static_cast<std::size_t>(2 * part.chunks * n) * sizeof(double);
}

float DeviceReference::forward(const RefProblem& p, const Forward& b, CUstream stream) {
  check_problem("forward", p);
  require("forward", "x", b.x);
  if (p.residual.has_value() != (b.residual != 0))
    throw Error("lntune: DeviceReference::forward: the residual is given iff the problem has one");
  if (b.residual) require("forward", "z (with a residual)", b.z);
  if (p.zero_centered) require("forward", "weight (zero-centred)", b.weight);
  refk::RefFwdParams k{};
  k.x = reinterpret_cast<const void*>(b.x);
  k.weight = reinterpret_cast<const void*>(b.weight);
  k.bias = reinterpret_cast<const void*>(b.bias);
  k.residual = reinterpret_cast<const void*>(b.residual);
  k.y = reinterpret_cast<void*>(b.y);
  k.z = reinterpret_cast<void*>(b.z);
  k.mean = reinterpret_cast<float*>(b.mean);
  k.rstd = reinterpret_cast<float*>(b.rstd);
  k.rstd_max = reinterpret_cast<unsigned*>(rstd_max_.get());
  k.M = p.m;
  k.N = p.n;
  k.eps = p.eps;
  k.x_dtype = code(p.x_dtype);
  k.w_dtype = code(p.w_dtype);
  k.y_dtype = code(p.y_dtype);
  k.residual_dtype = code(p.input_dtype());
  k.rms = p.norm == Norm::rms ? 1 : 0;
  k.zero_centered = p.zero_centered ? 1 : 0;
  const rt::DriverApi& d = rt::driver();
  const bool warp = warp_per_row(p.n);
  const std::int64_t rows_per_cta = warp ? kThreads / 32 : 1;
  const std::int64_t ctas = (p.m + rows_per_cta - 1) / rows_per_cta;
  const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(ctas, std::int64_t{16} * module_.sm_count()));
  rt::check(d.MemsetD32Async(rstd_max_.get(), 0, 1, stream), "cuMemsetD32Async (rstd maximum)");
  launch(warp ? fwd32_ : fwd256_, grid, 1, k, stream, "float64 reference, forward");
  rt::check(d.StreamSynchronize(stream), "cuStreamSynchronize (float64 reference, forward)");
  unsigned bits = 0;
  rt::check(d.MemcpyDtoH(&bits, rstd_max_.get(), sizeof bits), "cuMemcpyDtoH (rstd maximum)");
  float r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

void DeviceReference::backward(const RefProblem& p, const Backward& b, CUstream stream) {
  check_problem("backward", p);
  require("backward", "dy", b.dy);
  require("backward", "x", b.x);
  if (b.dz && !p.residual) throw Error("lntune: DeviceReference::backward: dz needs a residual");
  if (p.zero_centered) require("backward", "weight (zero-centred)", b.weight);
  const bool dwdb = b.dw || b.db;
  if (dwdb) {
    require("backward", "workspace (dW/dB)", b.workspace);
    const std::size_t need = workspace_bytes(p.m, p.n);
    if (b.workspace_bytes < need)
      throw Error("lntune: DeviceReference::backward: the workspace has " + std::to_string(b.workspace_bytes) +
                  " bytes, dW/dB need " + std::to_string(need));
  }
  const DwdbPartition part = dwdb_partition(p.m, p.n);
  double* row_mean = dwdb ? reinterpret_cast<double*>(b.workspace) : nullptr;
  double* row_rstd = dwdb ? row_mean + p.m : nullptr;
  double* dw_partial = b.dw ? reinterpret_cast<double*>(b.workspace + partials_offset(p.m)) : nullptr;
  double* db_partial = b.db ? reinterpret_cast<double*>(b.workspace + partials_offset(p.m)) + part.chunks * p.n
                            : nullptr;

  refk::RefBwdParams k{};
  k.dy = reinterpret_cast<const void*>(b.dy);
  k.x = reinterpret_cast<const void*>(b.x);
  k.weight = reinterpret_cast<const void*>(b.weight);
  k.dz = reinterpret_cast<const void*>(b.dz);
  k.dx = reinterpret_cast<void*>(b.dx);
  k.row_mean = row_mean;
  k.row_rstd = row_rstd;
  k.M = p.m;
  k.N = p.n;
  k.eps = p.eps;
  k.x_dtype = code(p.x_dtype);
  k.in_dtype = code(p.input_dtype());
  k.w_dtype = code(p.w_dtype);
  k.y_dtype = code(p.y_dtype);
  k.dz_dtype = code(p.input_dtype());
  k.rms = p.norm == Norm::rms ? 1 : 0;
  k.zero_centered = p.zero_centered ? 1 : 0;
  const rt::DriverApi& d = rt::driver();
  if (b.dx || dwdb) {
    const bool warp = warp_per_row(p.n);
    const std::int64_t rows_per_cta = warp ? kThreads / 32 : 1;
    const std::int64_t ctas = (p.m + rows_per_cta - 1) / rows_per_cta;
    const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(ctas, std::int64_t{16} * module_.sm_count()));
    launch(warp ? bwd32_ : bwd256_, grid, 1, k, stream, "float64 reference, backward rows");
  }
  if (dwdb) {
    refk::RefDwdbParams q{};
    q.dy = k.dy;
    q.x = k.x;
    q.row_mean = row_mean;
    q.row_rstd = row_rstd;
    q.dw_partial = dw_partial;
    q.db_partial = db_partial;
    q.M = p.m;
    q.N = p.n;
    q.chunks = part.chunks;
    q.rows_per_chunk = part.rows_per_chunk;
    q.in_dtype = k.in_dtype;
    q.y_dtype = k.y_dtype;
    const unsigned gx = static_cast<unsigned>((p.n + kThreads - 1) / kThreads);
    const unsigned gy = static_cast<unsigned>(std::min<std::int64_t>(part.chunks, 65535));
    launch(partials_, gx, gy, q, stream, "float64 reference, dW/dB partials");
    refk::RefDwdbSumParams s{};
    s.dw_partial = dw_partial;
    s.db_partial = db_partial;
    s.dw = reinterpret_cast<void*>(b.dw);
    s.db = reinterpret_cast<void*>(b.db);
    s.N = p.n;
    s.chunks = part.chunks;
    s.w_dtype = code(p.w_dtype);
    launch(sum_, gx, 1, s, stream, "float64 reference, dW/dB sums");
  }
  rt::check(d.StreamSynchronize(stream), "cuStreamSynchronize (float64 reference, backward)");
}

}  // namespace lntune::tune
