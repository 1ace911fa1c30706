// lntune/kernels/fill.cuh — the tuner's random inputs drawn on the GPU, bit
// for bit those of tuner/random_fill.cpp (the generator is written out in
// tuner/random_fill.hpp): element i is table[sum], where sum is the sum of
// the four 16-bit fields of splitmix64's mix(seed ^ (c * 0xd1b54a32d192ed03)
// + (k + 1) * 0x9e3779b97f4a7c15), c = i >> 16, k = i & 0xffff, and table
// holds every sum's value already rounded to the dtype (uploaded by the
// host, rnd::table). lohi[0] and lohi[1] receive the least and the greatest
// sum drawn (atomicMin / atomicMax; the host sets them to ~0 and 0 first):
// the values are monotonic in the sum, so the fill's largest magnitude is
// that of table[lohi[0]] or table[lohi[1]], as the host fill finds it.
#pragma once

#include "lntune/common.cuh"

namespace lntune {
namespace fill {

__device__ __forceinline__ unsigned long long mix(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Grid-stride over `count` elements of E (the storage bits: unsigned short
// for fp16 and bf16, unsigned for fp32).
template <class E>
__device__ __forceinline__ void draw(E* out, i64 count, unsigned long long seed, const E* table, unsigned* lohi) {
  unsigned lo = 0xffffffffu, hi = 0;
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const unsigned long long c = static_cast<unsigned long long>(i) >> 16;
    const unsigned long long k = static_cast<unsigned long long>(i) & 0xffffULL;
    const unsigned long long r = mix((seed ^ (c * 0xd1b54a32d192ed03ULL)) + (k + 1) * 0x9e3779b97f4a7c15ULL);
    const unsigned sum = static_cast<unsigned>((r & 0xffff) + ((r >> 16) & 0xffff) + ((r >> 32) & 0xffff) + (r >> 48));
    out[i] = table[sum];
    lo = min(lo, sum);
    hi = max(hi, sum);
  }
  for (int o = 16; o > 0; o >>= 1) {
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, o));
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, o));
  }
  if ((threadIdx.x & 31) == 0 && lo <= hi) {
    atomicMin(lohi, lo);
    atomicMax(lohi + 1, hi);
  }
}

}  // namespace fill
}  // namespace lntune

extern "C" __global__ void lntune_fill_u16(unsigned short* out, long long count, unsigned long long seed,
                                           const unsigned short* table, unsigned* lohi) {
  lntune::fill::draw(out, count, seed, table, lohi);
}
extern "C" __global__ void lntune_fill_u32(unsigned* out, long long count, unsigned long long seed,
                                           const unsigned* table, unsigned* lohi) {
  lntune::fill::draw(out, count, seed, table, lohi);
}
