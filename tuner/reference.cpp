// lntune: CPU reference LayerNorm (see reference.hpp).
#include "tuner/reference.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tuner/host_dtype.hpp"

namespace lntune::ref {

namespace {

std::atomic<int> g_num_threads{0};

// ---- storage views ---------------------------------------------------------

// The element types the reference reads and writes: the three storage dtypes
// plus plain double (for the *_f64 entry points).
enum class Kind { f32, f16, bf16, f64 };

Kind kind_of(DType d) {
  switch (d) {
    case DType::f32: return Kind::f32;
    case DType::f16: return Kind::f16;
    case DType::bf16: return Kind::bf16;
  }
  throw Error("reference: invalid DType");
}

// A read-only 2-D array (rows of `stride` elements).
struct Src {
  Kind kind = Kind::f64;
  const void* p = nullptr;
  int64_t stride = 0;

  // out[0..n) = row `row`, columns [j0, j0 + n), widened exactly to double.
  void load(int64_t row, int64_t j0, int64_t n, double* out) const {
    const int64_t off = row * stride + j0;
    switch (kind) {
      case Kind::f32: {
        const float* s = static_cast<const float*>(p) + off;
        for (int64_t j = 0; j < n; ++j) out[j] = static_cast<double>(s[j]);
        return;
      }
      case Kind::f16: {
        const uint16_t* s = static_cast<const uint16_t*>(p) + off;
        for (int64_t j = 0; j < n; ++j) out[j] = static_cast<double>(half_to_float(s[j]));
        return;
      }
      case Kind::bf16: {
        const uint16_t* s = static_cast<const uint16_t*>(p) + off;
        for (int64_t j = 0; j < n; ++j) out[j] = static_cast<double>(bf16_to_float(s[j]));
        return;
      }
      case Kind::f64: {
        const double* s = static_cast<const double*>(p) + off;
        std::memcpy(out, s, static_cast<std::size_t>(n) * sizeof(double));
        return;
      }
    }
  }
};

// A writable 2-D array; stores round once (RNE) to the element type.
struct Dst {
  Kind kind = Kind::f64;
  void* p = nullptr;
  int64_t stride = 0;

  void store(int64_t row, int64_t j0, int64_t n, const double* in) const {
    const int64_t off = row * stride + j0;
    switch (kind) {
      case Kind::f32: {
        float* d = static_cast<float*>(p) + off;
        for (int64_t j = 0; j < n; ++j) d[j] = static_cast<float>(in[j]);
        return;
      }
      case Kind::f16: {
        uint16_t* d = static_cast<uint16_t*>(p) + off;
        for (int64_t j = 0; j < n; ++j) d[j] = double_to_half(in[j]);
        return;
      }
      case Kind::bf16: {
        uint16_t* d = static_cast<uint16_t*>(p) + off;
        for (int64_t j = 0; j < n; ++j) d[j] = double_to_bf16(in[j]);
        return;
      }
      case Kind::f64: {
        double* d = static_cast<double*>(p) + off;
        std::memcpy(d, in, static_cast<std::size_t>(n) * sizeof(double));
        return;
      }
    }
  }
  bool wanted() const { return p != nullptr; }
};

// A length-N vector (weight or bias), widened to double; `fill` where absent.
std::vector<double> load_vector(const Src& s, int64_t N, double fill) {
  std::vector<double> v(static_cast<std::size_t>(N), fill);
  if (s.p != nullptr) s.load(0, 0, N, v.data());
  return v;
}

// ---- summation ---------------------------------------------------------------

// Pairwise summation of f(0) + ... + f(n-1): error O(log n * 2^-53) relative
// to sum |f(i)|, so long rows stay accurate.
template <class F>
double pairwise_sum(int64_t begin, int64_t end, const F& f) {
  const int64_t n = end - begin;
  if (n <= 128) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = begin;
    for (; i + 4 <= end; i += 4) {
      s0 += f(i);
      s1 += f(i + 1);
      s2 += f(i + 2);
      s3 += f(i + 3);
    }
    for (; i < end; ++i) s0 += f(i);
    return (s0 + s1) + (s2 + s3);
  }
  const int64_t mid = begin + (n / 2 + 63) / 64 * 64;  // block-aligned split
  return pairwise_sum(begin, mid, f) + pairwise_sum(mid, end, f);
}

// ---- per-row kernels -----------------------------------------------------------

struct Stats {
  double mean;
  double rstd;
};

// Mean and rstd of x[0..N). Corrected two-pass: m0 = sum(x)/N, d = x - m0,
// mean = m0 + sum(d)/N, var = (sum(d^2) - sum(d)^2/N) / N (exactly the
// variance about the refined mean). Non-finite input gives mean +-inf/NaN and
// rstd NaN, as PyTorch.
Stats row_stats(const double* x, int64_t N, double eps) {
  const double n = static_cast<double>(N);
  const double m0 = pairwise_sum(0, N, [x](int64_t j) { return x[j]; }) / n;
  const double s1 = pairwise_sum(0, N, [x, m0](int64_t j) { return x[j] - m0; });
  const double s2 = pairwise_sum(0, N, [x, m0](int64_t j) {
    const double d = x[j] - m0;
    return d * d;
  });
  double mean = m0;
  const double refined = m0 + s1 / n;
  if (std::isfinite(refined)) mean = refined;
  double var = (s2 - s1 * s1 / n) / n;
  if (var < 0) var = 0;  // rounding only; NaN stays NaN
  return {mean, 1.0 / std::sqrt(var + eps)};
}

// RMSNorm: rstd = 1/sqrt(mean(x^2) + eps), mean 0.
Stats rms_stats(const double* x, int64_t N, double eps) {
  const double ms = pairwise_sum(0, N, [x](int64_t j) { return x[j] * x[j]; }) / static_cast<double>(N);
  return {0.0, 1.0 / std::sqrt(ms + eps)};
}

Stats stats_of(Norm norm, const double* x, int64_t N, double eps) {
  return norm == Norm::rms ? rms_stats(x, N, eps) : row_stats(x, N, eps);
}

// The weight as applied: w, 1 + w (zero-centred), or ones.
std::vector<double> applied_weight(const Src& s, int64_t N, bool zero_centered) {
  std::vector<double> w = load_vector(s, N, 1.0);
  if (zero_centered && s.p != nullptr)
    for (double& v : w) v += 1.0;
  return w;
}

// Per-thread scratch rows.
struct Scratch {
  std::vector<double> a, b;
  explicit Scratch(int64_t N) : a(static_cast<std::size_t>(N)), b(static_cast<std::size_t>(N)) {}
};

// ---- threading -----------------------------------------------------------------

int effective_threads() {
  int n = g_num_threads.load(std::memory_order_relaxed);
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, n);
}

// Runs body(worker, task) for task in [0, ntasks), spreading tasks over up to
// `max_workers` threads (the calling thread is worker 0). Tasks are handed
// out dynamically; callers make results independent of the assignment.
// Exceptions thrown by body are rethrown here (the first one).
template <class Body>
void run_tasks(int64_t ntasks, int max_workers, const Body& body) {
  if (ntasks <= 0) return;
  const int workers = static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(max_workers, ntasks)));
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&](int w) {
    try {
      for (;;) {
        const int64_t t = next.fetch_add(1, std::memory_order_relaxed);
        if (t >= ntasks) break;
        body(w, t);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next.store(ntasks, std::memory_order_relaxed);
    }
  };
  if (workers == 1) {
    work(0);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(workers - 1));
    for (int w = 1; w < workers; ++w) threads.emplace_back(work, w);
    work(0);
    for (auto& t : threads) t.join();
  }
  if (error) std::rethrow_exception(error);
}

// Threads worth using for `elements` of work split into `ntasks` tasks
// (~64K elements per thread at least, no more threads than tasks).
int workers_for(int64_t elements, int64_t ntasks) {
  const int64_t by_work = std::max<int64_t>(1, elements / 65536);
  return static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>({int64_t{effective_threads()}, by_work, ntasks})));
}

// Rows per task so that a task covers ~64K elements.
int64_t rows_per_task(int64_t N) { return std::max<int64_t>(1, 65536 / std::max<int64_t>(N, 1)); }

// ---- validation ------------------------------------------------------------------

void check_shape(const char* fn, int64_t M, int64_t N) {
  if (M < 0) throw Error(std::string(fn) + ": M must be >= 0, got " + std::to_string(M));
  if (N < 1) throw Error(std::string(fn) + ": N must be >= 1, got " + std::to_string(N));
}
void check_stride(const char* fn, const char* what, int64_t stride, int64_t N) {
  if (stride < N)
    throw Error(std::string(fn) + ": " + what + " (" + std::to_string(stride) +
                ") must be >= N (" + std::to_string(N) + ")");
}
void check_ptr(const char* fn, const char* what, const void* p, int64_t M) {
  if (p == nullptr && M > 0) throw Error(std::string(fn) + ": " + what + " must not be null");
}
void check_eps(const char* fn, double eps) {
  if (!(eps >= 0)) throw Error(std::string(fn) + ": eps must be >= 0");
}

// ---- forward -----------------------------------------------------------------------

// Variant options of the implementations.
struct Variant {
  Norm norm = Norm::layer;
  bool zero_centered = false;
};

void forward_impl(int64_t M, int64_t N, const Src& x, const Src& w_src, const Src& b_src,
                  double eps, const Dst& y, const Dst& mean_out, const Dst& rstd_out, Variant v = {},
                  const Src& residual = {}, const Dst& z = {}) {
  if (M == 0) return;
  const std::vector<double> w = applied_weight(w_src, N, v.zero_centered);
  const std::vector<double> b = load_vector(b_src, N, 0.0);
  const int64_t rpt = rows_per_task(N);
  const int64_t ntasks = (M + rpt - 1) / rpt;
  const int workers = workers_for(M * N, ntasks);
  std::vector<Scratch> scratch;
  scratch.reserve(static_cast<std::size_t>(workers));
  for (int i = 0; i < workers; ++i) scratch.emplace_back(N);

  run_tasks(ntasks, workers, [&](int wk, int64_t task) {
    Scratch& s = scratch[static_cast<std::size_t>(wk)];
    double* xr = s.a.data();
    const int64_t r1 = std::min(M, (task + 1) * rpt);
    for (int64_t r = task * rpt; r < r1; ++r) {
      x.load(r, 0, N, xr);
      if (z.wanted()) {
        // z = x + residual as the kernels (and PyTorch's (x + residual).to(dtype)) form it: the fp32 sum, then
        // z's dtype; the norm is of that stored z. (The double sum of two values of at most 24 significant bits,
        // rounded to float, is the correctly rounded fp32 sum: 53 >= 2 * 24 + 2.)
        double* rr = s.b.data();
        residual.load(r, 0, N, rr);
        for (int64_t j = 0; j < N; ++j) rr[j] = static_cast<double>(static_cast<float>(rr[j] + xr[j]));
        z.store(r, 0, N, rr);
        Src{z.kind, z.p, z.stride}.load(r, 0, N, xr);
      }
      const Stats st = stats_of(v.norm, xr, N, eps);
      if (y.wanted()) {
        double* yr = xr;  // in place
        for (int64_t j = 0; j < N; ++j) yr[j] = (xr[j] - st.mean) * st.rstd * w[j] + b[j];
        y.store(r, 0, N, yr);
      }
      if (mean_out.wanted()) mean_out.store(r, 0, 1, &st.mean);
      if (rstd_out.wanted()) rstd_out.store(r, 0, 1, &st.rstd);
    }
  });
}

// ---- backward ----------------------------------------------------------------------

// Number of row chunks of the dw/db reduction: a function of (M, N) only, so
// that results do not depend on the thread count. At most 64 chunks, and the
// chunk buffers (2 * chunks * N doubles) are capped at 256 MiB.
int64_t dwdb_chunks(int64_t M, int64_t N) {
  const int64_t budget = (int64_t{256} << 20) / (2 * 8);  // doubles per buffer set / 2
  const int64_t by_memory = std::max<int64_t>(1, budget / N);
  return std::max<int64_t>(1, std::min<int64_t>({int64_t{64}, M, by_memory}));
}

constexpr int64_t kColBlock = 512;  // columns per dw/db reduction task

void backward_impl(int64_t M, int64_t N, const Src& dy, const Src& x, const Src& w_src,
                   double eps, const Dst& dx, const Dst& dw, const Dst& db, Variant v = {},
                   const Src& dz = {}, const Dst& dresidual = {}) {
  const bool want_dwdb = dw.wanted() || db.wanted();
  if (M == 0) {
    const std::vector<double> zeros(static_cast<std::size_t>(N), 0.0);
    if (dw.wanted()) dw.store(0, 0, N, zeros.data());
    if (db.wanted()) db.store(0, 0, N, zeros.data());
    return;
  }
  const std::vector<double> w = applied_weight(w_src, N, v.zero_centered);
  const int64_t rpt = rows_per_task(N);
  const int64_t ntasks = (M + rpt - 1) / rpt;
  const int workers = workers_for(M * N, ntasks);
  std::vector<Scratch> scratch;
  scratch.reserve(static_cast<std::size_t>(workers));
  for (int i = 0; i < workers; ++i) scratch.emplace_back(N);

  // Pass 1 (parallel over rows): row statistics, and dx if wanted.
  std::vector<double> means(static_cast<std::size_t>(M)), rstds(static_cast<std::size_t>(M));
  const double n = static_cast<double>(N);
  run_tasks(ntasks, workers, [&](int wk, int64_t task) {
    Scratch& s = scratch[static_cast<std::size_t>(wk)];
    // In place: x -> xhat -> dx in s.a, dy -> w*dy in s.b.
    double* xhat = s.a.data();
    double* wdy = s.b.data();
    const int64_t r1 = std::min(M, (task + 1) * rpt);
    for (int64_t r = task * rpt; r < r1; ++r) {
      x.load(r, 0, N, xhat);
      const Stats st = stats_of(v.norm, xhat, N, eps);
      means[static_cast<std::size_t>(r)] = st.mean;
      rstds[static_cast<std::size_t>(r)] = st.rstd;
      if (!dx.wanted() && !dresidual.wanted()) continue;
      dy.load(r, 0, N, wdy);
      for (int64_t j = 0; j < N; ++j) {
        xhat[j] = (xhat[j] - st.mean) * st.rstd;
        wdy[j] = w[j] * wdy[j];
      }
      const double c1 = pairwise_sum(0, N, [&](int64_t j) { return xhat[j] * wdy[j]; }) / n;
      const double c2 =
          v.norm == Norm::rms ? 0.0 : pairwise_sum(0, N, [&](int64_t j) { return wdy[j]; }) / n;
      double* dxr = xhat;
      for (int64_t j = 0; j < N; ++j) dxr[j] = st.rstd * (wdy[j] - (xhat[j] * c1 + c2));
      if (dz.p != nullptr) {
        // dx = dnorm + dz (the upstream gradient of z), in double, rounded once.
        dz.load(r, 0, N, wdy);
        for (int64_t j = 0; j < N; ++j) dxr[j] += wdy[j];
      }
      // dx, and the same values as the gradient of the residual, each rounded once to its dtype.
      if (dx.wanted()) dx.store(r, 0, N, dxr);
      if (dresidual.wanted()) dresidual.store(r, 0, N, dxr);
    }
  });
  if (!want_dwdb) return;

  // Pass 2 (parallel over chunk x column-block tiles): each row chunk summed
  // in row order into its own buffer.
  const int64_t chunks = dwdb_chunks(M, N);
  const int64_t col_blocks = (N + kColBlock - 1) / kColBlock;
  std::vector<double> buf_w(static_cast<std::size_t>(chunks * N));
  std::vector<double> buf_b(static_cast<std::size_t>(chunks * N));
  const int workers2 = workers_for(M * N, chunks * col_blocks);
  std::vector<std::vector<double>> seg(static_cast<std::size_t>(2 * workers2),
                                       std::vector<double>(static_cast<std::size_t>(kColBlock)));
  run_tasks(chunks * col_blocks, workers2, [&](int wk, int64_t task) {
    const int64_t c = task / col_blocks;
    const int64_t j0 = (task % col_blocks) * kColBlock;
    const int64_t nj = std::min(kColBlock, N - j0);
    const int64_t r0 = c * M / chunks;
    const int64_t r1 = (c + 1) * M / chunks;
    double* xs = seg[static_cast<std::size_t>(2 * wk)].data();
    double* dys = seg[static_cast<std::size_t>(2 * wk + 1)].data();
    double* aw = buf_w.data() + c * N + j0;
    double* ab = buf_b.data() + c * N + j0;
    for (int64_t j = 0; j < nj; ++j) aw[j] = ab[j] = 0.0;
    for (int64_t r = r0; r < r1; ++r) {
      x.load(r, j0, nj, xs);
      dy.load(r, j0, nj, dys);
      const double m = means[static_cast<std::size_t>(r)];
      const double rs = rstds[static_cast<std::size_t>(r)];
      for (int64_t j = 0; j < nj; ++j) {
        aw[j] += dys[j] * ((xs[j] - m) * rs);
        ab[j] += dys[j];
      }
    }
  });

  // Pass 3: add the chunk buffers in chunk order.
  std::vector<double> tot_w(static_cast<std::size_t>(N)), tot_b(static_cast<std::size_t>(N));
  for (int64_t j = 0; j < N; ++j) {
    double sw = 0, sb = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      sw += buf_w[static_cast<std::size_t>(c * N + j)];
      sb += buf_b[static_cast<std::size_t>(c * N + j)];
    }
    tot_w[static_cast<std::size_t>(j)] = sw;
    tot_b[static_cast<std::size_t>(j)] = sb;
  }
  if (dw.wanted()) dw.store(0, 0, N, tot_w.data());
  if (db.wanted()) db.store(0, 0, N, tot_b.data());
}

}  // namespace

// ---- public API ----------------------------------------------------------------------

void set_num_threads(int n) { g_num_threads.store(n, std::memory_order_relaxed); }
int num_threads() { return effective_threads(); }

void layer_norm_forward(const FwdArgs& a, void* y, float* mean, float* rstd) {
  norm_forward(a, y, mean, rstd, nullptr);
}

void norm_forward(const FwdArgs& a, void* y, float* mean, float* rstd, void* z) {
  const char* fn = "norm_forward";
  check_shape(fn, a.M, a.N);
  check_stride(fn, "x_stride", a.x_stride, a.N);
  check_stride(fn, "y_stride", a.y_stride, a.N);
  check_ptr(fn, "x", a.x, a.M);
  if (y == nullptr && mean == nullptr && rstd == nullptr && z == nullptr)
    check_ptr(fn, "y", y, a.M);  // nothing at all to compute
  check_eps(fn, a.eps);
  if (a.norm == Norm::rms && mean != nullptr) throw Error(std::string(fn) + ": RMSNorm has no mean (pass null)");
  if (a.zero_centered && a.weight == nullptr) throw Error(std::string(fn) + ": zero_centered needs a weight");
  if ((a.residual != nullptr) != (z != nullptr))
    throw Error(std::string(fn) + ": residual and z go together (both or neither)");
  if (a.residual != nullptr) {
    check_stride(fn, "residual_stride", a.residual_stride, a.N);
    check_stride(fn, "z_stride", a.z_stride, a.N);
  }
  const Kind xk = kind_of(a.x_dtype), wk = kind_of(a.w_dtype), yk = kind_of(a.y_dtype.value_or(a.x_dtype));
  const Kind rk = kind_of(a.residual_dtype);
  forward_impl(a.M, a.N, Src{xk, a.x, a.x_stride}, Src{wk, a.weight, 0}, Src{wk, a.bias, 0},
               a.eps, Dst{yk, y, a.y_stride}, Dst{Kind::f32, mean, 1}, Dst{Kind::f32, rstd, 1},
               Variant{a.norm, a.zero_centered}, Src{rk, a.residual, a.residual_stride},
               Dst{rk, z, a.z_stride});
}

void layer_norm_backward(const BwdArgs& a, void* dx, void* dweight, void* dbias) {
  norm_backward(a, dx, dweight, dbias, nullptr);
}

void norm_backward(const BwdArgs& a, void* dx, void* dweight, void* dbias, void* dresidual) {
  const char* fn = "norm_backward";
  check_shape(fn, a.M, a.N);
  check_stride(fn, "dy_stride", a.dy_stride, a.N);
  check_stride(fn, "x_stride", a.x_stride, a.N);
  if (dx != nullptr) check_stride(fn, "dx_stride", a.dx_stride, a.N);
  check_ptr(fn, "x", a.x, a.M);
  check_ptr(fn, "dy", a.dy, a.M);
  check_eps(fn, a.eps);
  if (a.zero_centered && a.weight == nullptr) throw Error(std::string(fn) + ": zero_centered needs a weight");
  if (a.dz != nullptr && !a.residual) throw Error(std::string(fn) + ": dz needs residual");
  if (a.dz != nullptr) check_stride(fn, "dz_stride", a.dz_stride, a.N);
  if (dresidual != nullptr && !a.residual) throw Error(std::string(fn) + ": dresidual needs residual");
  if (dresidual != nullptr) check_stride(fn, "dresidual_stride", a.dresidual_stride, a.N);
  const Kind xk = kind_of(a.x_dtype), wk = kind_of(a.w_dtype), yk = kind_of(a.y_dtype.value_or(a.x_dtype));
  const Kind rk = kind_of(a.residual_dtype);
  const Kind ink = a.residual ? rk : xk;  // the saved row: z or x
  backward_impl(a.M, a.N, Src{yk, a.dy, a.dy_stride}, Src{ink, a.x, a.x_stride},
                Src{wk, a.weight, 0}, a.eps, Dst{xk, dx, a.dx_stride}, Dst{wk, dweight, 0},
                Dst{wk, dbias, 0}, Variant{a.norm, a.zero_centered}, Src{rk, a.dz, a.dz_stride},
                Dst{rk, dresidual, a.dresidual_stride});
}

void forward_f64(int64_t M, int64_t N, const double* x, const double* w, const double* b,
                 double eps, double* y, double* mean, double* rstd, Norm norm, bool zero_centered) {
  const char* fn = "forward_f64";
  check_shape(fn, M, N);
  check_ptr(fn, "x", x, M);
  check_ptr(fn, "y", y, M);
  check_eps(fn, eps);
  forward_impl(M, N, Src{Kind::f64, x, N}, Src{Kind::f64, w, 0}, Src{Kind::f64, b, 0}, eps,
               Dst{Kind::f64, y, N}, Dst{Kind::f64, norm == Norm::rms ? nullptr : mean, 1},
               Dst{Kind::f64, rstd, 1}, Variant{norm, zero_centered});
}

void backward_f64(int64_t M, int64_t N, const double* dy, const double* x, const double* w,
                  double eps, double* dx, double* dw, double* db, Norm norm, bool zero_centered) {
  const char* fn = "backward_f64";
  check_shape(fn, M, N);
  check_ptr(fn, "x", x, M);
  check_ptr(fn, "dy", dy, M);
  check_eps(fn, eps);
  backward_impl(M, N, Src{Kind::f64, dy, N}, Src{Kind::f64, x, N}, Src{Kind::f64, w, 0}, eps,
                Dst{Kind::f64, dx, N}, Dst{Kind::f64, dw, 0}, Dst{Kind::f64, db, 0},
                Variant{norm, zero_centered});
}

}  // namespace lntune::ref
