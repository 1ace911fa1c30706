// A C++ program using an installed lntune (find_package(lntune), target
// lntune::lntune). It runs a bf16 LayerNorm forward and backward on M x N
// rows, checks the forward against a CPU computation, and prints which config
// lntune chose and why: "tuned (exact)" when a cache tuned for this GPU and
// shape is on the search path (LNTUNE_CACHE, or a shipped one on
// LNTUNE_CACHE_PATH), "default heuristic" without one.
//
//   cpp_consumer [N [M]]        (default N = 4096, M = 4096)
// Exit codes: 0 ok; 1 failure (message on stderr); 77 no usable GPU (lntune
// says why: no driver, or no device).
//
// Device memory comes from the CUDA runtime here; in an application it is
// whatever the framework allocates. lntune takes device pointers and a
// CUstream / cudaStream_t (the same handle).
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "lntune/lntune.hpp"

namespace {

// bf16 <-> fp32 on the host (round to nearest even).
std::uint16_t to_bf16(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<std::uint16_t>(u >> 16);
}
float from_bf16(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

// The CUDA runtime could not give us the GPU. Ask lntune why: planning a call
// reaches the driver without needing any buffer, so explaining a zero-row call
// fails with lntune's own message ("lntune: no CUDA driver: ...", "lntune: no
// usable CUDA device: ...").
int no_gpu(const char* what, cudaError_t err, std::int64_t n) {
  lntune::ForwardArgs probe;
  probe.M = 0;
  probe.N = n;
  probe.x_dtype = probe.w_dtype = lntune::DType::bf16;
  try {
    lntune::explain_forward(probe);
  } catch (const lntune::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 77;
  }
  // lntune sees a GPU, the CUDA runtime does not (e.g. a driver older than
  // this CUDA runtime): the runtime's error is the one to report.
  std::fprintf(stderr, "cpp_consumer: %s: %s\n", what, cudaGetErrorString(err));
  return 1;
}

struct DeviceBuffer {
  void* p = nullptr;
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t N = argc > 1 ? std::atoll(argv[1]) : 4096;
  const std::int64_t M = argc > 2 ? std::atoll(argv[2]) : 4096;
  if (N < 1 || M < 1) {
    std::fprintf(stderr, "usage: cpp_consumer [N [M]] (both >= 1)\n");
    return 2;
  }
  std::printf("lntune %s (headers %s), bf16 LayerNorm, M=%lld N=%lld\n", lntune::version(), LNTUNE_VERSION,
              static_cast<long long>(M), static_cast<long long>(N));
  if (std::strcmp(lntune::version(), LNTUNE_VERSION) != 0)
    std::fprintf(stderr, "cpp_consumer: warning: built against lntune %s headers, running with %s\n",
                 LNTUNE_VERSION, lntune::version());

  // Host data.
  const std::size_t elems = static_cast<std::size_t>(M * N);
  std::vector<std::uint16_t> hx(elems), hdy(elems), hw(static_cast<std::size_t>(N)), hb(static_cast<std::size_t>(N));
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (auto& v : hx) v = to_bf16(normal(rng) * 2.f + 0.5f);
  for (auto& v : hdy) v = to_bf16(normal(rng));
  for (auto& v : hw) v = to_bf16(1.f + 0.1f * normal(rng));
  for (auto& v : hb) v = to_bf16(0.1f * normal(rng));

  // Device buffers.
  DeviceBuffer x, y, dy, dx, w, b, dw, db, mean, rstd;
  const std::size_t row_bytes = elems * 2, vec_bytes = static_cast<std::size_t>(N) * 2, stat_bytes = static_cast<std::size_t>(M) * 4;
  const std::pair<DeviceBuffer*, std::size_t> buffers[] = {
      {&x, row_bytes}, {&y, row_bytes}, {&dy, row_bytes},  {&dx, row_bytes},    {&w, vec_bytes},
      {&b, vec_bytes}, {&dw, vec_bytes}, {&db, vec_bytes}, {&mean, stat_bytes}, {&rstd, stat_bytes}};
  for (const auto& [buf, bytes] : buffers) {
    const cudaError_t err = cudaMalloc(&buf->p, bytes);
    if (err != cudaSuccess) return no_gpu("cudaMalloc", err, N);
  }
  cudaMemcpy(x.p, hx.data(), row_bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(dy.p, hdy.data(), row_bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(w.p, hw.data(), vec_bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(b.p, hb.data(), vec_bytes, cudaMemcpyHostToDevice);
  cudaStream_t stream = nullptr;
  cudaStreamCreate(&stream);

  try {
    lntune::ForwardArgs f;
    f.x = x.p;
    f.weight = w.p;
    f.bias = b.p;
    f.y = y.p;
    f.mean = static_cast<float*>(mean.p);
    f.rstd = static_cast<float*>(rstd.p);
    f.M = M;
    f.N = N;
    f.x_dtype = f.w_dtype = lntune::DType::bf16;
    f.eps = 1e-5f;
    f.stream = stream;

    const lntune::Choice fc = lntune::explain_forward(f);
    std::printf("forward:  %s (%s): %s\n", fc.instance.c_str(), lntune::to_string(fc.config).c_str(), fc.reason.c_str());
    lntune::forward(f);

    lntune::BackwardArgs g;
    g.dy = dy.p;
    g.x = x.p;
    g.weight = w.p;
    g.mean = static_cast<const float*>(mean.p);
    g.rstd = static_cast<const float*>(rstd.p);
    g.dx = dx.p;
    g.dweight = dw.p;
    g.dbias = db.p;
    g.M = M;
    g.N = N;
    g.x_dtype = g.w_dtype = lntune::DType::bf16;
    g.stream = stream;
    const lntune::Choice bc = lntune::explain_backward(g);
    std::printf("backward: %s (%s): %s\n", bc.instance.c_str(), lntune::to_string(bc.config).c_str(), bc.reason.c_str());
    lntune::backward(g);  // workspace managed by lntune (pass one to keep allocations out of graph capture)
  } catch (const lntune::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  const cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "cpp_consumer: %s\n", cudaGetErrorString(err));
    return 1;
  }

  // Check a few rows of the forward against the CPU (double), within bf16's
  // rounding of y (2^-8 relative) plus a little.
  std::vector<std::uint16_t> hy(elems);
  cudaMemcpy(hy.data(), y.p, row_bytes, cudaMemcpyDeviceToHost);
  double worst = 0;
  for (std::int64_t r : {std::int64_t{0}, M / 2, M - 1}) {
    const std::uint16_t* xr = &hx[static_cast<std::size_t>(r * N)];
    double s = 0, s2 = 0;
    for (std::int64_t i = 0; i < N; ++i) s += from_bf16(xr[i]);
    const double mu = s / static_cast<double>(N);
    for (std::int64_t i = 0; i < N; ++i) s2 += (from_bf16(xr[i]) - mu) * (from_bf16(xr[i]) - mu);
    const double rs = 1.0 / std::sqrt(s2 / static_cast<double>(N) + 1e-5);
    for (std::int64_t i = 0; i < N; ++i) {
      const double want = (from_bf16(xr[i]) - mu) * rs * from_bf16(hw[static_cast<std::size_t>(i)]) +
                          from_bf16(hb[static_cast<std::size_t>(i)]);
      const double got = from_bf16(hy[static_cast<std::size_t>(r * N + i)]);
      worst = std::fmax(worst, std::fabs(got - want) / (std::fabs(want) + 1e-2));
    }
  }
  cudaStreamDestroy(stream);
  if (!(worst < 2e-2)) {
    std::fprintf(stderr, "cpp_consumer: forward mismatch: worst relative error %.3g\n", worst);
    return 1;
  }
  std::printf("ok: forward matches the CPU (worst relative error %.2g); backward ran\n", worst);
  return 0;
}
