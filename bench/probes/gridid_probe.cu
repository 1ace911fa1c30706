// Probe (standalone, nvcc): is PTX %gridid distinct for every launch of a
// context (plain launches, two streams, CUDA-graph replays)? And what does a
// tiny cuMemsetD32Async between two kernels cost on the stream, against a
// second kernel launch? Decides how the in-kernel dW/dB finish of the
// backward gets counters that start from a known state.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <set>
#include <vector>

__global__ void record(unsigned long long* out, int slot) {
  unsigned long long g;
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(g));
  if (threadIdx.x == 0 && blockIdx.x == 0) out[slot] = g;
}
__global__ void tiny(float* p) { if (threadIdx.x == 0 && blockIdx.x == 0) p[0] += 1.f; }

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

int main() {
  unsigned long long* ids;
  CK(cudaMallocManaged(&ids, 64 * sizeof(unsigned long long)));
  cudaStream_t s1, s2;
  CK(cudaStreamCreate(&s1));
  CK(cudaStreamCreate(&s2));
  int slot = 0;
  for (int i = 0; i < 4; ++i) record<<<2, 32, 0, s1>>>(ids, slot++);
  for (int i = 0; i < 4; ++i) record<<<2, 32, 0, s2>>>(ids, slot++);
  CK(cudaDeviceSynchronize());
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  record<<<2, 32, 0, s1>>>(ids, 40);
  record<<<2, 32, 0, s1>>>(ids, 41);
  CK(cudaStreamEndCapture(s1, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  std::set<unsigned long long> seen;
  bool dup = false;
  for (int i = 0; i < slot; ++i) { printf("launch %d gridid %llu\n", i, ids[i]); dup |= !seen.insert(ids[i]).second; }
  for (int r = 0; r < 3; ++r) {
    CK(cudaGraphLaunch(ge, r == 1 ? s2 : s1));
    CK(cudaDeviceSynchronize());
    printf("replay %d gridid %llu %llu\n", r, ids[40], ids[41]);
    dup |= !seen.insert(ids[40]).second;
    dup |= !seen.insert(ids[41]).second;
  }
  printf("gridid distinct over all launches: %s\n", dup ? "NO" : "yes");

  float* buf;
  unsigned* ctr;
  CK(cudaMalloc(&buf, 4));
  CK(cudaMalloc(&ctr, 256));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  // One iteration: a kernel, then mode 1 a second kernel, 2 a driver
  // memset of 8 bytes, 3 a runtime memset of 8 bytes.
  const char* const names[] = {"kernel", "kernel + kernel", "kernel + cuMemsetD32Async(8 B)",
                               "kernel + cudaMemsetAsync(8 B)"};
  const auto enqueue = [&](int mode, int iters) {
    for (int i = 0; i < iters; ++i) {
      tiny<<<132, 128, 0, s1>>>(buf);
      if (mode == 1) tiny<<<1, 128, 0, s1>>>(buf);
      if (mode == 2) cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(ctr), 0, 2, s1);
      if (mode == 3) cudaMemsetAsync(ctr, 0, 8, s1);
    }
  };
  // The µs per iteration of `run` (events around it on s1), its last of `reps`.
  const auto per_iteration = [&](const auto& run, int iters, int reps) {
    float ms = 0;
    for (int rep = 0; rep < reps; ++rep) {
      cudaEventRecord(a, s1);
      run();
      cudaEventRecord(b, s1);
      cudaEventSynchronize(b);
      cudaEventElapsedTime(&ms, a, b);
    }
    return ms * 1000.f / iters;
  };
  // Eager (the host's launch rate shows), then captured in a graph (GPU-side cost).
  for (int mode = 0; mode < 4; ++mode)
    printf("%s: %.3f us per iteration\n", names[mode], per_iteration([&] { enqueue(mode, 2000); }, 2000, 2));
  for (int mode = 0; mode < 4; ++mode) {
    cudaGraph_t gg;
    cudaGraphExec_t gge;
    CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    enqueue(mode, 500);
    CK(cudaStreamEndCapture(s1, &gg));
    CK(cudaGraphInstantiate(&gge, gg, 0));
    printf("graph, %s: %.3f us per iteration\n", names[mode], per_iteration([&] { cudaGraphLaunch(gge, s1); }, 500, 3));
  }
  CK(cudaGetLastError());
  return 0;
}
