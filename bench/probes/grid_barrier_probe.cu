// Probe (standalone, nvcc): the cost of one grid barrier in a cooperative
// launch, as common.cuh's grid_barrier() does it (atom.add.release + a
// polling ld.acquire) and two variants, at the CTA counts of the persistent
// backward's grids (128-thread CTAs). Also a kernel with no barrier, for the
// launch itself. Decides how the in-kernel dW/dB finish synchronises.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>

template <int MODE>  // 0: atom + poll, 1: atom + poll with nanosleep, 2: parity read + red + poll w/ nanosleep
__device__ __forceinline__ void barrier(unsigned* word) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned expected = gridDim.x;
    const unsigned add = blockIdx.x == 0 ? 0x80000000u - (expected - 1) : 1u;
    unsigned old, now;
    if (MODE == 2) {
      asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(old) : "l"(word) : "memory");
      asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(word), "r"(add) : "memory");
    } else {
      asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(word), "r"(add) : "memory");
    }
    while (true) {
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(word) : "memory");
      if ((old ^ now) & 0x80000000u) break;
      if (MODE >= 1) __nanosleep(32);
    }
  }
  __syncthreads();
}

template <int MODE>
__global__ void k(unsigned* word, int reps) {
  for (int i = 0; i < reps; ++i) barrier<MODE>(word);
}

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

template <int MODE>
float time_it(unsigned* word, int grid, int reps, cudaStream_t s) {
  void* args[] = {&word, &reps};
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float best = 1e30f;
  for (int t = 0; t < 20; ++t) {
    cudaEventRecord(a, s);
    cudaLaunchCooperativeKernel((void*)k<MODE>, grid, 128, args, 0, s);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (ms < best) best = ms;
  }
  return best * 1000.f;
}

int main() {
  unsigned* word;
  CK(cudaMalloc(&word, 4));
  CK(cudaMemset(word, 0, 4));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  for (int grid : {16, 132, 264, 528, 1056}) {
    const float t0 = time_it<0>(word, grid, 0, s);
    const float a = time_it<0>(word, grid, 100, s), b = time_it<1>(word, grid, 100, s), c = time_it<2>(word, grid, 100, s);
    CK(cudaGetLastError());
    printf("grid %5d: launch alone %.2f us; per barrier: atom+poll %.3f us, +nanosleep %.3f us, red+nanosleep %.3f us\n",
           grid, t0, (a - t0) / 100, (b - t0) / 100, (c - t0) / 100);
  }
  return 0;
}
