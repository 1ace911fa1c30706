// lntune/kernels/flush.cuh — the tuner's L2 flush: reads a buffer of twice
// the L2 (16 bytes a thread a step, L2 only), so that the L2 ends holding
// that buffer's lines, clean. The timed kernel after it then reads its
// inputs from DRAM, and its misses evict clean lines: nothing of the flush's
// is written back on its time. (A flush that overwrote the buffer left the
// L2 full of dirty lines, and charged their write-back to the next kernel:
// a 25 MiB copy measured 76% of a large copy after it, 102% after this one;
// bench/probes/l2_flush_probe.cu, bench/results/h100_s27.)
#pragma once

#include "lntune/common.cuh"

// p: `count` 16-byte words. sink is written only when the words' xor is an
// impossible value, so that the loads stay.
extern "C" __global__ void lntune_l2_flush(const uint4* __restrict__ p, lntune::i64 count, unsigned* sink) {
  unsigned s = 0;
  const lntune::i64 stride = static_cast<lntune::i64>(gridDim.x) * blockDim.x;
  for (lntune::i64 i = static_cast<lntune::i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const uint4 v = __ldcg(p + i);
    s ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (s == 0x9e3779b9u && sink) *sink = s;
}
