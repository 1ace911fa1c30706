// What does compute-sanitizer's synccheck say about the mbarrier patterns of
// templates/kernels/bwd_dx_wide.cuh, each alone? (It reports "Missing wait"
// on the wide backward's row-sum barrier, whose every phase is waited on.)
// Three kernels, one per run, each correct by construction and self-checked:
//
//   local   one CTA: init, arrive.expect_tx + cp.async.bulk, try_wait.parity,
//           4 phases (the stage barriers' pattern)
//   push    a cluster of 2: each CTA arms its barrier, then pushes a pair to
//           every CTA with st.async (complete_tx on the receiver's barrier),
//           all wait on parity, re-armed before the next push, 4 rows (the
//           row-sum barrier's pattern since 8756de2)
//   late    as push, but re-armed after the next push (remote bytes may land
//           before the local expect_tx: the tx-count goes negative, legal)
//   wide G [PAD]  the push pattern in G clusters of 16 CTAs (64 threads), PAD
//           bytes of dynamic shared memory a CTA (default 0). Session 33:
//           the wide backward's report came only with 8 clusters of 16 (7
//           and 6 passed), always at rank 9: on 132 SMs at most 7 clusters
//           of 16 run at one CTA per SM, so an 8th shares SMs between CTAs
//           of one cluster where two fit. PAD = 120000 keeps one CTA per SM
//           (the 8th cluster then waits for a free GPC instead).
//
// The mbarrier, bulk-copy and push helpers are the kernel's own
// (templates/kernels/bwd_dx_wide.cuh), so the probe runs the same instructions.
// Build and run (sm_90, not part of the CMake build, which has no nvcc; the
// headers are included as lntune/..., as NVRTC sees them):
//   mkdir -p /tmp/inc && ln -sfn "$PWD/templates" /tmp/inc/lntune
//   nvcc -arch=sm_90 -O2 -I/tmp/inc -o mbarrier_synccheck bench/probes/mbarrier_synccheck.cu
//   for k in local push late; do ./mbarrier_synccheck $k; \
//     compute-sanitizer --tool synccheck ./mbarrier_synccheck $k | grep -E "Missing|SUMMARY|ok"; done
//   compute-sanitizer --tool synccheck ./mbarrier_synccheck wide 8   (and 7; 8 120000)
// A kernel synccheck flags here is a pattern it objects to whatever the
// surrounding code does.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "lntune/kernels/bwd_dx_wide.cuh"

namespace {

using lntune::bulk_copy_g2s;
using lntune::cluster_barrier;
using lntune::cluster_rank;
using lntune::fence_proxy_async;
using lntune::mbarrier_arrive_expect_tx;
using lntune::mbarrier_init;
using lntune::mbarrier_init_fence;
using lntune::mbarrier_wait;
using lntune::push_pair;

constexpr int kRows = 4;
constexpr int kBytes = 4096;

__global__ void local_kernel(const float* src, float* out) {
  __shared__ __align__(128) float buf[kBytes / 4];
  __shared__ __align__(8) unsigned long long bar;
  if (threadIdx.x == 0) {
    mbarrier_init(&bar, 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  float sum = 0.f;
  for (int row = 0; row < kRows; ++row) {
    if (threadIdx.x == 0) {
      fence_proxy_async();
      mbarrier_arrive_expect_tx(&bar, kBytes);
      bulk_copy_g2s(buf, src + row * (kBytes / 4), kBytes, &bar);
    }
    mbarrier_wait(&bar, static_cast<unsigned>(row & 1));
    sum += buf[threadIdx.x];
    __syncthreads();  // every thread has read buf before the next copy
  }
  out[threadIdx.x] = sum;
}

// The push pattern over a cluster of C CTAs: every CTA arms rows 0 and 1,
// pushes each row's pair to all C, waits on parity. kLate = false: re-arm
// before the push (bwd_dx_wide since 8756de2); true: after. C = 2: `push`
// and `late`; C = 16: `wide` (bwd_dx_wide.cuh's row sums at cluster_size =
// 16).
template <int C, bool kLate>
__global__ void push_kernel(float* out) {
  __shared__ __align__(8) float sums[2][C][2];  // [parity][rank][pair]
  __shared__ __align__(8) unsigned long long bar[2];
  constexpr unsigned kRowBytes = 8 * C;  // a pair from each CTA
  const unsigned rank = cluster_rank();
  if (threadIdx.x == 0) {
    mbarrier_init(&bar[0], 1);
    mbarrier_init(&bar[1], 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&bar[0], kRowBytes);  // rows 0 and 1
    mbarrier_arrive_expect_tx(&bar[1], kRowBytes);
  }
  cluster_barrier();
  if (threadIdx.x == 0)
    for (unsigned r = 0; r < C; ++r) push_pair(sums[0][rank], &bar[0], r, 1.f + rank, 0.f);
  float total = 0.f;
  for (int row = 0; row < kRows; ++row) {
    const int par = row & 1;
    mbarrier_wait(&bar[par], static_cast<unsigned>((row >> 1) & 1));
    for (int r = 0; r < C; ++r) total += sums[par][r][0];
    __syncthreads();  // every thread has read row `row`'s parts
    if (threadIdx.x == 0) {
      if (!kLate && row + 2 < kRows) mbarrier_arrive_expect_tx(&bar[par], kRowBytes);
      if (row + 1 < kRows)
        for (unsigned r = 0; r < C; ++r) push_pair(sums[par ^ 1][rank], &bar[par ^ 1], r, 1.f + rank, 0.f);
      if (kLate && row + 2 < kRows) mbarrier_arrive_expect_tx(&bar[par], kRowBytes);
    }
  }
  cluster_barrier();  // no CTA exits while a push to it may be in flight
  out[blockIdx.x * blockDim.x + threadIdx.x] = total;
}
constexpr int kWide = 16;

int check(const char* what, cudaError_t e) {
  if (e == cudaSuccess) return 0;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* k = argc > 1 ? argv[1] : "";
  float* out = nullptr;
  if (check("cudaMalloc", cudaMalloc(&out, 16 * kWide * 64 * sizeof(float)))) return 2;
  float expect = 0.f;
  int n = 0;
  if (!std::strcmp(k, "local")) {
    float host[kRows * kBytes / 4];
    for (int i = 0; i < kRows * kBytes / 4; ++i) host[i] = static_cast<float>(i / (kBytes / 4) + 1);
    float* src = nullptr;
    if (check("cudaMalloc", cudaMalloc(&src, sizeof host)) ||
        check("cudaMemcpy", cudaMemcpy(src, host, sizeof host, cudaMemcpyHostToDevice)))
      return 2;
    local_kernel<<<1, 128>>>(src, out);
    expect = 1 + 2 + 3 + 4;
    n = 128;
  } else if (!std::strcmp(k, "push") || !std::strcmp(k, "late") || !std::strcmp(k, "wide")) {
    const bool wide = !std::strcmp(k, "wide");
    const int cluster = wide ? kWide : 2;
    const int clusters = wide && argc > 2 ? std::atoi(argv[2]) : wide ? 8 : 1;
    const int pad = wide && argc > 3 ? std::atoi(argv[3]) : 0;
    if (clusters < 1 || clusters > 16 || pad < 0) {
      std::fprintf(stderr, "wide: 1 to 16 clusters and a pad >= 0, got %d and %d\n", clusters, pad);
      return 2;
    }
    void (*kernel)(float*) = wide ? push_kernel<kWide, false> : !std::strcmp(k, "late") ? push_kernel<2, true>
                                                                                         : push_kernel<2, false>;
    if (check("non-portable cluster size",
              cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1)) ||
        check("dynamic shared memory", cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, pad)))
      return 2;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(clusters * cluster);
    cfg.blockDim = dim3(64);
    cfg.dynamicSmemBytes = static_cast<size_t>(pad);
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cluster;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    if (wide) {
      int active = 0;
      if (check("max active clusters", cudaOccupancyMaxActiveClusters(&active, kernel, &cfg))) return 2;
      std::printf("wide: %d clusters of %d, pad %d: at most %d active at once\n", clusters, cluster, pad, active);
    }
    if (check("cudaLaunchKernelEx", cudaLaunchKernelEx(&cfg, kernel, out))) return 2;
    expect = kRows * (cluster + cluster * (cluster - 1) / 2.f);  // the pairs' 1 + rank over the ranks
    n = clusters * cluster * 64;
  } else {
    std::fprintf(stderr, "usage: %s local|push|late|wide [clusters [pad]]\n", argv[0]);
    return 2;
  }
  if (check("kernel", cudaDeviceSynchronize())) return 1;
  static float got[16 * kWide * 64];
  if (check("cudaMemcpy", cudaMemcpy(got, out, n * sizeof(float), cudaMemcpyDeviceToHost))) return 2;
  for (int i = 0; i < n; ++i)
    if (got[i] != expect) {
      std::printf("%s: wrong: thread %d got %g, expected %g\n", k, i, got[i], expect);
      return 1;
    }
  std::printf("%s: ok\n", k);
  return 0;
}
