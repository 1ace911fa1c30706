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

}  // namespace

FwdProblem check_forward(const ForwardArgs& a) {
  const char* op = "forward";
  check_dtype(op, "x_dtype", a.x_dtype);
  check_dtype(op, "w_dtype", a.w_dtype);
  check_shape(op, a.M, a.N);
  // Any finite eps, as torch allows (a negative one gives NaN where variance + eps < 0, as in torch).
  if (!std::isfinite(a.eps)) fail(op, "eps must be a finite number, got " + std::to_string(a.eps));
  FwdProblem p;
  p.M = a.M;
  p.N = a.N;
  p.x_stride = resolve_stride(op, "x_row_stride", a.x_row_stride, a.M, a.N);
  p.y_stride = resolve_stride(op, "y_row_stride", a.y_row_stride, a.M, a.N);
  const bool affine = a.weight || a.bias;
  check_w_dtype(op, a.x_dtype, a.w_dtype, affine);
  p.traits = Traits{Kernel::fwd, a.x_dtype, a.w_dtype, a.weight != nullptr, a.bias != nullptr}.canonical();
  // Every pointer given is checked, whatever M is.
  const std::size_t xs = dtype_size(a.x_dtype), ws = dtype_size(a.w_dtype);
  check_aligned(op, "x", a.x, xs);
  check_aligned(op, "y", a.y, xs);
  check_aligned(op, "weight", a.weight, ws);
  check_aligned(op, "bias", a.bias, ws);
  check_aligned(op, "mean", a.mean, 4);
  check_aligned(op, "rstd", a.rstd, 4);
  if (a.M == 0) return p;
  require(op, "x", a.x);
  require(op, "y", a.y);
  p.vec = widest_vec(a.x_dtype, a.N, {p.x_stride, p.y_stride}, {a.x, a.y}, gen::max_vec(a.x_dtype));
  // Weight and bias are read with the same vector width, in their own dtype.
  if (affine) p.vec = widest_vec(a.w_dtype, a.N, {}, {a.weight, a.bias}, p.vec);
  return p;
}

BwdProblem check_backward(const BackwardArgs& a) {
  const char* op = "backward";
  check_dtype(op, "x_dtype", a.x_dtype);
  check_dtype(op, "w_dtype", a.w_dtype);
  check_shape(op, a.M, a.N);
  if (a.dweight && !a.weight) fail(op, "dweight was given but weight is null (a LayerNorm without weight has no dW)");
  BwdProblem p;
  p.M = a.M;
  p.N = a.N;
  p.dy_stride = resolve_stride(op, "dy_row_stride", a.dy_row_stride, a.M, a.N);
  p.x_stride = resolve_stride(op, "x_row_stride", a.x_row_stride, a.M, a.N);
  p.dx_stride = resolve_stride(op, "dx_row_stride", a.dx_row_stride, a.M, a.N);
  p.want_dw = a.dweight != nullptr;
  p.want_db = a.dbias != nullptr;
  const bool affine = a.weight || a.dbias;
  check_w_dtype(op, a.x_dtype, a.w_dtype, affine);
  p.traits = Traits{Kernel::bwd_dx, a.x_dtype, a.w_dtype, a.weight != nullptr, p.want_db}.canonical();
  // Every pointer given is checked, whatever M is: a zero-row backward
  // still writes dweight and dbias (zeros).
  const std::size_t xs = dtype_size(a.x_dtype), ws = dtype_size(a.w_dtype);
  check_aligned(op, "dy", a.dy, xs);
  check_aligned(op, "x", a.x, xs);
  check_aligned(op, "dx", a.dx, xs);
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
  require(op, "mean", a.mean);
  require(op, "rstd", a.rstd);
  require(op, "dx", a.dx);
  p.vec = widest_vec(a.x_dtype, a.N, {p.dy_stride, p.x_stride, p.dx_stride}, {a.dy, a.x, a.dx},
                     gen::max_vec(a.x_dtype));
  if (a.weight) p.vec = widest_vec(a.w_dtype, a.N, {}, {a.weight}, p.vec);
  return p;
}

}  // namespace lntune::rt
