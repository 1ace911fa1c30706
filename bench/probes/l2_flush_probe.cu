// l2_flush_probe — what an L2 "flush" charges the kernel timed after it.
//
// A flush that overwrites a buffer of twice the L2 (cuMemsetD32Async, as the
// tuner and lntune_sweep did) leaves the L2 full of dirty lines; the next
// kernel's misses must write them back before they can allocate, so a small
// kernel pays for the flush's writes. A flush that reads a buffer of twice
// the L2 leaves it full of clean lines instead. This probe times, after each
// kind of flush, an empty kernel and a copy kernel of S bytes (S = 8, 25, 50,
// 100 MiB), and the copy with no flush over 8 rotating buffer pairs (the
// working set far above the L2). Reported: median of 41 event-timed
// repetitions, and GB/s (read + written) as a % of a 1 GiB cudaMemcpyAsync
// device-to-device copy measured in the same process.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o l2_flush_probe bench/probes/l2_flush_probe.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "probe_util.cuh"  // CK

__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// Reads every 16 bytes; writes only when the sum is an impossible value, so
// the loads stay.
__global__ void read_kernel(const uint4* __restrict__ p, size_t n, unsigned* sink) {
  unsigned s = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(p + i);
    s ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (s == 0x9e3779b9u) *sink = s;
}

__global__ void empty_kernel() {}

int main() {
  int dev = 0, sms = 0, l2 = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  std::printf("GPU %s, %d SMs, L2 %d MiB\n", prop.name, sms, l2 >> 20);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  const size_t fbytes = 2 * size_t(l2);
  void *fa, *fb;
  unsigned* sink;
  CK(cudaMalloc(&fa, fbytes));
  CK(cudaMalloc(&fb, fbytes));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMemset(fb, 1, fbytes));
  const int grid = sms * 8, block = 512;
  auto median = [&](const std::function<void(int)>& pre, const std::function<void()>& f) {
    for (int i = 0; i < 5; ++i) {
      pre(i);
      f();
    }
    std::vector<float> t;
    for (int i = 0; i < 41; ++i) {
      pre(i);
      CK(cudaEventRecord(a, s));
      f();
      CK(cudaEventRecord(b, s));
      CK(cudaEventSynchronize(b));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms * 1e3f);
    }
    std::nth_element(t.begin(), t.begin() + 20, t.end());
    return double(t[20]);
  };
  auto memset_flush = [&](int i) { if (cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(fa), unsigned(i), fbytes / 4, s) != CUDA_SUCCESS) {
      std::fprintf(stderr, "cuMemsetD32Async failed\n");
      std::exit(1);
    } };
  auto read_flush = [&](int) { read_kernel<<<grid, block, 0, s>>>(static_cast<const uint4*>(fb), fbytes / 16, sink); };
  auto both_flush = [&](int i) {
    memset_flush(i);
    read_flush(i);
  };
  auto none = [&](int) {};

  // The reference: a 1 GiB device-to-device copy.
  const size_t big = size_t(1) << 30;
  void *ba, *bb;
  CK(cudaMalloc(&ba, big));
  CK(cudaMalloc(&bb, big));
  CK(cudaMemset(ba, 2, big));
  const double t_big = median(none, [&] { CK(cudaMemcpyAsync(bb, ba, big, cudaMemcpyDeviceToDevice, s)); });
  const double copy_gbps = 2.0 * big / t_big / 1e3;
  std::printf("copy 1 GiB: %.1f us, %.0f GB/s (the reference)\n", t_big, copy_gbps);
  CK(cudaFree(ba));
  CK(cudaFree(bb));

  std::printf("empty kernel: after memset flush %.2f us | after read flush %.2f us | after memset+read %.2f us | no flush %.2f us\n",
              median(memset_flush, [&] { empty_kernel<<<1, 32, 0, s>>>(); }),
              median(read_flush, [&] { empty_kernel<<<1, 32, 0, s>>>(); }),
              median(both_flush, [&] { empty_kernel<<<1, 32, 0, s>>>(); }),
              median(none, [&] { empty_kernel<<<1, 32, 0, s>>>(); }));
  for (size_t mib : {8, 25, 50, 100}) {
    const size_t S = mib << 20;
    std::vector<void*> src(8), dst(8);
    for (int k = 0; k < 8; ++k) {
      CK(cudaMalloc(&src[k], S));
      CK(cudaMalloc(&dst[k], S));
      CK(cudaMemset(src[k], k, S));
    }
    int rot = 0;
    auto copy0 = [&] { copy_kernel<<<grid, block, 0, s>>>(static_cast<const uint4*>(src[0]), static_cast<uint4*>(dst[0]), S / 16); };
    auto copy_rot = [&] {
      const int k = rot++ % 8;
      copy_kernel<<<grid, block, 0, s>>>(static_cast<const uint4*>(src[k]), static_cast<uint4*>(dst[k]), S / 16);
    };
    const double tm = median(memset_flush, copy0), tr = median(read_flush, copy0), tb = median(both_flush, copy0),
                 tn = median(none, copy0), tt = median(none, copy_rot);
    auto pct = [&](double t) { return 100.0 * (2.0 * S / t / 1e3) / copy_gbps; };
    std::printf("copy %3zu MiB: memset flush %7.2f us %5.1f%% | read flush %7.2f us %5.1f%% | memset+read %7.2f us %5.1f%% | "
                "no flush (same buffers) %7.2f us %5.1f%% | rotating 8 pairs %7.2f us %5.1f%%\n",
                mib, tm, pct(tm), tr, pct(tr), tb, pct(tb), tn, pct(tn), tt, pct(tt));
    for (int k = 0; k < 8; ++k) {
      CK(cudaFree(src[k]));
      CK(cudaFree(dst[k]));
    }
  }
  return 0;
}
