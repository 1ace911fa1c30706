// lntune/kernels/check.cuh — the tuner's correctness check on the GPU: counts
// the elements of an output that fail the comparison with the CPU reference
// (already rounded to the output dtype and uploaded), so that a correct
// candidate's output is never downloaded. The predicate is the one of
// ref::compare (tuner/compare.cpp), element for element:
//   equal bits that are not the poison pattern   pass
//   the poison pattern                           fail (unwritten)
//   NaN in got or want                           fail unless both are NaN
//   infinity in got or want                      fail unless equal
//   otherwise, in double: |got - want| <= atol + rtol * |want|
// The double arithmetic is written with _rn intrinsics, so nothing is fused
// into an FMA and every step rounds as on the host (whose compare.cpp is
// built with -ffp-contract=off for the same reason). A count above zero sends
// the tuner to ref::compare on the host for the description of the failure.
#pragma once

#include "lntune/common.cuh"

namespace lntune {
namespace check {

__device__ __forceinline__ unsigned bits_of(const float* p, i64 i) { return __float_as_uint(p[i]); }
__device__ __forceinline__ unsigned bits_of(const half_t* p, i64 i) { return p[i].bits; }
__device__ __forceinline__ unsigned bits_of(const bf16_t* p, i64 i) { return p[i].bits; }

// The value of an element's bits, exactly, as a double.
__device__ __forceinline__ double value_of(float*, unsigned b) { return static_cast<double>(__uint_as_float(b)); }
__device__ __forceinline__ double value_of(half_t*, unsigned b) {
  half_t h;
  h.bits = static_cast<unsigned short>(b);
  return static_cast<double>(to_float(h));
}
__device__ __forceinline__ double value_of(bf16_t*, unsigned b) {
  bf16_t h;
  h.bits = static_cast<unsigned short>(b);
  return static_cast<double>(to_float(h));
}

template <class T>
__device__ __forceinline__ bool fails(unsigned g, unsigned w, bool check_poison, unsigned pbits, double atol,
                                      double rtol) {
  const bool poisoned = check_poison && g == pbits;
  if (g == w && !poisoned) return false;
  if (poisoned) return true;
  const double gv = value_of(static_cast<T*>(nullptr), g), wv = value_of(static_cast<T*>(nullptr), w);
  if (isnan(gv) || isnan(wv)) return isnan(gv) != isnan(wv);
  if (isinf(gv) || isinf(wv)) return gv != wv;
  const double diff = fabs(__dsub_rn(gv, wv));
  const double allowed = __dadd_rn(atol, __dmul_rn(rtol, fabs(wv)));
  return !(diff <= allowed);
}

// Grid-stride over n contiguous elements; one atomic per thread that saw a
// failure (none for a correct output).
template <class T>
__device__ __forceinline__ void count_failures(const T* got, const T* want, i64 n, int check_poison, unsigned pbits,
                                               double atol, double rtol, unsigned long long* failures) {
  unsigned long long local = 0;
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    local += fails<T>(bits_of(got, i), bits_of(want, i), check_poison != 0, pbits, atol, rtol) ? 1 : 0;
  if (local) atomicAdd(failures, local);
}

}  // namespace check
}  // namespace lntune

extern "C" __global__ void lntune_check_f32(const float* got, const float* want, long long n, int check_poison,
                                            unsigned pbits, double atol, double rtol, unsigned long long* failures) {
  lntune::check::count_failures(got, want, n, check_poison, pbits, atol, rtol, failures);
}
extern "C" __global__ void lntune_check_f16(const lntune::half_t* got, const lntune::half_t* want, long long n,
                                            int check_poison, unsigned pbits, double atol, double rtol,
                                            unsigned long long* failures) {
  lntune::check::count_failures(got, want, n, check_poison, pbits, atol, rtol, failures);
}
extern "C" __global__ void lntune_check_bf16(const lntune::bf16_t* got, const lntune::bf16_t* want, long long n,
                                             int check_poison, unsigned pbits, double atol, double rtol,
                                             unsigned long long* failures) {
  lntune::check::count_failures(got, want, n, check_poison, pbits, atol, rtol, failures);
}
