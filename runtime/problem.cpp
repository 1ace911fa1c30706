#include "runtime/problem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "generator/instance.hpp"

namespace lntune::rt {
namespace {

[[noreturn]] void fail(const char* op, const std::string& what) { throw Error(std::string("lntune: ") + op + ": " + what); }

void check_dtype(const char* op, const char* name, DType d) {
  if (d != DType::f32 && d != DType::f16 && d != DType::bf16)
    fail(op, std::string(name) + " is not a supported dtype (fp32, fp16, bf16): " + std::to_string(static_cast<int>(d)));
}

void check_shape(const char* op, std::int64_t M, std::int64_t N) {
  if (M < 0) fail(op, "M must be >= 0, got " + std::to_string(M));
  if (N <= 0) fail(op, "N must be >= 1, got " + std::to_string(N));
  if (M > (std::int64_t{1} << 40)) fail(op, "M is too large: " + std::to_string(M));
  if (N > (std::int64_t{1} << 31)) fail(op, "N is too large (at most 2^31): " + std::to_string(N));
}

// Rows of a tensor span (M - 1) * stride + N elements; at most 2^48 (more
// than any GPU's address space holds), so that no offset or size computed
// from M and a stride, in elements or bytes, overflows 64 bits.
constexpr std::int64_t kMaxSpan = std::int64_t{1} << 48;

std::int64_t resolve_stride(const char* op, const char* name, std::int64_t stride, std::int64_t M, std::int64_t N) {
  if (stride == 0) return N;
  if (stride < N)
    fail(op, std::string(name) + " (" + std::to_string(stride) + ") must be 0 (contiguous) or at least N (" +
                 std::to_string(N) + ")");
  if (stride > kMaxSpan)
    fail(op, std::string(name) + " (" + std::to_string(stride) + ") is too large (at most 2^48 elements)");
  // N <= 2^31 and stride <= 2^48 (checked): no overflow below.
  if (M > 1 && stride > (kMaxSpan - N) / (M - 1))
    fail(op, std::string(name) + " (" + std::to_string(stride) + ") is too large for M = " + std::to_string(M) +
                 ": the rows span more than 2^48 elements");
  return stride;
}

void require(const char* op, const char* name, const void* p) {
  if (!p) fail(op, std::string(name) + " must not be null");
}

void check_aligned(const char* op, const char* name, const void* p, std::size_t bytes) {
  if (p && reinterpret_cast<std::uintptr_t>(p) % bytes != 0)
    fail(op, std::string(name) + " is not aligned to its element size (" + std::to_string(bytes) + " bytes)");
}

// Widest power-of-two access (elements, at most 16 bytes) that keeps every
// access of every row aligned. Kernels split a vector into accesses of at
// most 16 bytes, so a pointer needs min(16, size * vec) bytes of alignment.
int widest_vec(DType d, std::int64_t N, std::initializer_list<std::int64_t> strides,
               std::initializer_list<const void*> ptrs, int start) {
  int v = start;
  const std::size_t es = dtype_size(d);
  auto ok = [&](int w) {
    if (N % w) return false;
    for (auto s : strides)
      if (s % w) return false;
    const std::size_t align = std::min<std::size_t>(16, es * static_cast<std::size_t>(w));
    for (auto p : ptrs)
      if (p && reinterpret_cast<std::uintptr_t>(p) % align) return false;
    return true;
  };
  while (v > 1 && !ok(v)) v /= 2;
  return v;
}

void check_w_dtype(const char* op, DType x, DType w, bool used) {
  if (used && w != x && w != DType::f32)
    fail(op, std::string("w_dtype must be the x dtype (") + std::string(to_string(x)) + ") or fp32, got " +
                 std::string(to_string(w)));
}

void check_norm(const char* op, Norm n) {
  if (n != Norm::layer && n != Norm::rms)
    fail(op, "norm is not a supported norm (layernorm, rmsnorm): " + std::to_string(static_cast<int>(n)));
}

}  // namespace

FwdProblem check_forward(const ForwardArgs& a) {
  const char* op = "forward";
  check_dtype(op, "x_dtype", a.x_dtype);
  check_dtype(op, "w_dtype", a.w_dtype);
  check_shape(op, a.M, a.N);
  check_norm(op, a.norm);
  const DType yd = a.y_dtype.value_or(a.x_dtype), rd = a.residual_dtype.value_or(a.x_dtype);
  check_dtype(op, "y_dtype", yd);
  check_dtype(op, "residual_dtype", rd);
  // Any finite eps, as torch allows (a negative one gives NaN where variance + eps < 0, as in torch).
  if (!std::isfinite(a.eps)) fail(op, "eps must be a finite number, got " + std::to_string(a.eps));
  if (a.norm == Norm::rms && a.mean)
    fail(op, "mean must be null for RMSNorm (it has no mean; rstd is what the backward needs)");
  if (a.zero_centered_weight && !a.weight)
    fail(op, "zero_centered_weight needs a weight (y = xhat * (1 + w) + b)");
  const bool residual = a.residual != nullptr;
  if (a.residual_out && !residual) fail(op, "residual_out was given without residual (z = x + residual needs both)");
  if (residual && !a.residual_out)
    fail(op, "residual was given without residual_out (z = x + residual is written there; both or neither)");
  FwdProblem p;
  p.M = a.M;
  p.N = a.N;
  p.x_stride = resolve_stride(op, "x_row_stride", a.x_row_stride, a.M, a.N);
  p.y_stride = resolve_stride(op, "y_row_stride", a.y_row_stride, a.M, a.N);
  if (residual) {
    p.residual_stride = resolve_stride(op, "residual_row_stride", a.residual_row_stride, a.M, a.N);
    p.z_stride = resolve_stride(op, "residual_out_row_stride", a.residual_out_row_stride, a.M, a.N);
  }
  const bool affine = a.weight || a.bias;
  check_w_dtype(op, a.x_dtype, a.w_dtype, affine);
  Traits t{Kernel::fwd, a.x_dtype, a.w_dtype, a.weight != nullptr, a.bias != nullptr};
  t.norm = a.norm;
  if (residual) t.residual = rd;
  t.zero_centered = a.zero_centered_weight;
  t.y_dtype = yd;
  p.traits = t.canonical();
  // Every pointer given is checked, whatever M is.
  const std::size_t xs = dtype_size(a.x_dtype), ws = dtype_size(a.w_dtype);
  check_aligned(op, "x", a.x, xs);
  check_aligned(op, "y", a.y, dtype_size(yd));
  if (residual) {
    check_aligned(op, "residual", a.residual, dtype_size(rd));
    check_aligned(op, "residual_out", a.residual_out, dtype_size(rd));
  }
  check_aligned(op, "weight", a.weight, ws);
  check_aligned(op, "bias", a.bias, ws);
  check_aligned(op, "mean", a.mean, 4);
  check_aligned(op, "rstd", a.rstd, 4);
  if (a.M == 0) return p;
  require(op, "x", a.x);
  require(op, "y", a.y);
  p.vec = widest_vec(a.x_dtype, a.N, {p.x_stride}, {a.x}, gen::max_vec(a.x_dtype));
  // Every other stream is accessed with the same vector width, in its own dtype.
  p.vec = widest_vec(yd, a.N, {p.y_stride}, {a.y}, p.vec);
  if (residual) p.vec = widest_vec(rd, a.N, {p.residual_stride, p.z_stride}, {a.residual, a.residual_out}, p.vec);
  if (affine) p.vec = widest_vec(a.w_dtype, a.N, {}, {a.weight, a.bias}, p.vec);
  return p;
}

BwdProblem check_backward(const BackwardArgs& a) {
  const char* op = "backward";
  check_dtype(op, "x_dtype", a.x_dtype);
  check_dtype(op, "w_dtype", a.w_dtype);
  check_shape(op, a.M, a.N);
  check_norm(op, a.norm);
  const DType yd = a.y_dtype.value_or(a.x_dtype), rd = a.residual_dtype.value_or(a.x_dtype);
  check_dtype(op, "y_dtype", yd);
  check_dtype(op, "residual_dtype", rd);
  if (a.dweight && !a.weight) fail(op, "dweight was given but weight is null (a LayerNorm without weight has no dW)");
  if (a.zero_centered_weight && !a.weight)
    fail(op, "zero_centered_weight needs a weight (y = xhat * (1 + w) + b)");
  if (a.dresidual_out && !a.residual)
    fail(op, "dresidual_out was given but residual is false (it is the gradient of a fused residual add's z)");
  if (a.dresidual && !a.residual)
    fail(op, "dresidual was given but residual is false (it is the gradient of a fused residual add's residual)");
  if (a.dresidual && a.dresidual == a.dx)
    fail(op, "dresidual must not be dx (it is written in the residual's dtype; with equal dtypes, leave it null)");
  BwdProblem p;
  p.M = a.M;
  p.N = a.N;
  p.dy_stride = resolve_stride(op, "dy_row_stride", a.dy_row_stride, a.M, a.N);
  p.x_stride = resolve_stride(op, "x_row_stride", a.x_row_stride, a.M, a.N);
  p.dx_stride = resolve_stride(op, "dx_row_stride", a.dx_row_stride, a.M, a.N);
  if (a.dresidual_out) p.dz_stride = resolve_stride(op, "dresidual_out_row_stride", a.dresidual_out_row_stride, a.M, a.N);
  if (a.dresidual) {
    p.dresidual_stride = resolve_stride(op, "dresidual_row_stride", a.dresidual_row_stride, a.M, a.N);
    // In place over dresidual_out: each element is read, then written, by one thread, only with the same rows.
    if (a.dresidual == a.dresidual_out && p.dresidual_stride != p.dz_stride)
      fail(op, "dresidual is dresidual_out with another row stride (" + std::to_string(p.dresidual_stride) + " vs " +
                   std::to_string(p.dz_stride) + "): in place needs the same rows");
  }
  p.want_dw = a.dweight != nullptr;
  p.want_db = a.dbias != nullptr;
  const bool affine = a.weight || a.dbias;
  check_w_dtype(op, a.x_dtype, a.w_dtype, affine);
  Traits t{Kernel::bwd_dx, a.x_dtype, a.w_dtype, a.weight != nullptr, p.want_db};
  t.norm = a.norm;
  if (a.residual) t.residual = rd;
  t.zero_centered = a.zero_centered_weight;
  t.y_dtype = yd;
  p.traits = t.canonical();
  // Every pointer given is checked, whatever M is: a zero-row backward
  // still writes dweight and dbias (zeros).
  const std::size_t xs = dtype_size(a.x_dtype), ws = dtype_size(a.w_dtype);
  const DType in = a.residual ? rd : a.x_dtype;  // the saved row: z or x
  check_aligned(op, "dy", a.dy, dtype_size(yd));
  check_aligned(op, "x", a.x, dtype_size(in));
  check_aligned(op, "dx", a.dx, xs);
  check_aligned(op, "dresidual_out", a.dresidual_out, dtype_size(rd));
  check_aligned(op, "dresidual", a.dresidual, dtype_size(rd));
  check_aligned(op, "weight", a.weight, ws);
  check_aligned(op, "dweight", a.dweight, ws);
  check_aligned(op, "dbias", a.dbias, ws);
  check_aligned(op, "mean", a.mean, 4);
  check_aligned(op, "rstd", a.rstd, 4);
  if (a.workspace && reinterpret_cast<std::uintptr_t>(a.workspace) % 16)
    fail(op, "workspace must be 16-byte aligned");
  if (a.M == 0) return p;
  require(op, "dy", a.dy);
  require(op, "x", a.x);
  if (a.norm == Norm::layer) require(op, "mean", a.mean);
  require(op, "rstd", a.rstd);
  require(op, "dx", a.dx);
  p.vec = widest_vec(a.x_dtype, a.N, {p.dx_stride}, {a.dx}, gen::max_vec(a.x_dtype));
  p.vec = widest_vec(yd, a.N, {p.dy_stride}, {a.dy}, p.vec);
  p.vec = widest_vec(in, a.N, {p.x_stride}, {a.x}, p.vec);
  if (a.dresidual_out) p.vec = widest_vec(rd, a.N, {p.dz_stride}, {a.dresidual_out}, p.vec);
  if (a.dresidual) p.vec = widest_vec(rd, a.N, {p.dresidual_stride}, {a.dresidual}, p.vec);
  if (a.weight) p.vec = widest_vec(a.w_dtype, a.N, {}, {a.weight}, p.vec);
  const auto aligned = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  p.grads_aligned = (!p.want_dw || aligned(a.dweight)) && (!p.want_db || aligned(a.dbias));
  return p;
}

}  // namespace lntune::rt
