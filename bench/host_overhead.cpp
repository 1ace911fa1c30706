// Measures what a caller pays on the host: the first call of a shape
// (render + NVRTC compile + module load, or a cache hit) and a warm call
// (plan lookup + cuLaunchKernel), for the forward and the backward.
//   lntune_overhead [M N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lntune/lntune.hpp"
#include "runtime/driver.hpp"
#include "runtime/runtime.hpp"

using Clock = std::chrono::steady_clock;

static double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

int main(int argc, char** argv) {
  using namespace lntune;
  const std::int64_t M = argc > 2 ? std::atoll(argv[1]) : 64, N = argc > 2 ? std::atoll(argv[2]) : 1024;
  try {
    rt::current_context();
    const auto& d = rt::driver();
    rt::DeviceBuffer x(M * N * 2), y(M * N * 2), dy(M * N * 2), dx(M * N * 2), w(N * 2), b(N * 2), dw(N * 2),
        db(N * 2), mean(M * 4), rstd(M * 4);
    rt::check(d.MemsetD8(x.get(), 0x3c, M * N * 2), "memset");  // 1.0-ish bf16 noise is irrelevant here
    rt::check(d.MemsetD8(dy.get(), 0x3c, M * N * 2), "memset");
    CUstream stream = nullptr;
    rt::check(d.StreamCreate(&stream, CU_STREAM_NON_BLOCKING), "stream");

    ForwardArgs f;
    f.x = x.ptr(); f.weight = w.ptr(); f.bias = b.ptr(); f.y = y.ptr();
    f.mean = static_cast<float*>(mean.ptr()); f.rstd = static_cast<float*>(rstd.ptr());
    f.M = M; f.N = N; f.x_dtype = f.w_dtype = DType::bf16; f.stream = stream;
    BackwardArgs g;
    g.dy = dy.ptr(); g.x = x.ptr(); g.weight = w.ptr(); g.mean = f.mean; g.rstd = f.rstd; g.dx = dx.ptr();
    g.dweight = dw.ptr(); g.dbias = db.ptr(); g.M = M; g.N = N; g.x_dtype = g.w_dtype = DType::bf16; g.stream = stream;

    auto t0 = Clock::now();
    forward(f);
    const double first_fwd = us_since(t0);
    t0 = Clock::now();
    backward(g);
    const double first_bwd = us_since(t0);
    rt::check(d.StreamSynchronize(stream), "sync");
    const auto stats = rt::default_runtime().kernel_cache_stats();

    // Few enough calls that the launch queue never fills (a full queue makes
    // the host wait for the GPU, which would measure kernel time instead).
    const int iters = 200;
    std::vector<double> fwd_us, bwd_us;
    for (int rep = 0; rep < 20; ++rep) {
      t0 = Clock::now();
      for (int i = 0; i < iters; ++i) forward(f);
      fwd_us.push_back(us_since(t0) / iters);
      rt::check(d.StreamSynchronize(stream), "sync");
      t0 = Clock::now();
      for (int i = 0; i < iters; ++i) backward(g);
      bwd_us.push_back(us_since(t0) / iters);
      rt::check(d.StreamSynchronize(stream), "sync");
    }
    // Reference: a bare cuLaunchKernel of the same kernel costs the driver's share.
    auto best = [](std::vector<double> v) { return *std::min_element(v.begin(), v.end()); };
    std::printf("shape M=%lld N=%lld bf16\n", static_cast<long long>(M), static_cast<long long>(N));
    std::printf("first call: forward %.1f ms, backward %.1f ms (NVRTC compiles %llu, from cache store %llu)\n",
                first_fwd / 1e3, first_bwd / 1e3, static_cast<unsigned long long>(stats.compiled),
                static_cast<unsigned long long>(stats.loaded_from_store));
    std::printf("warm call host time (best of 20 x %d calls, launches queued without sync): forward %.2f us, backward %.2f us (2 launches)\n",
                iters, best(fwd_us), best(bwd_us));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
