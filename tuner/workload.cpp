#include "tuner/workload.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>

#include "runtime/launcher.hpp"
#include "templates/params.h"
#include "tuner/compare.hpp"
#include "tuner/compile_pool.hpp"
#include "tuner/device_check.hpp"
#include "tuner/device_fill.hpp"
#include "tuner/device_reference.hpp"
#include "tuner/device_pool.hpp"
#include "tuner/uploader.hpp"
#include "tuner/scoped_seconds.hpp"
#include "tuner/host_dtype.hpp"
#include "tuner/random_fill.hpp"
#include "tuner/reference.hpp"
#include "tuner/reference_oracle.hpp"
#include "tuner/search.hpp"

namespace lntune::tune {

namespace {

constexpr float kEps = inputs::kEps;

// An allocator that leaves new elements uninitialised (value-initialising
// them would zero every byte on one thread before the threads that fill the
// arrays touch them): for host arrays that are written in full before they
// are read.
template <class T>
struct NoInit : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInit<U>;
  };
  NoInit() = default;
  template <class U>
  NoInit(const NoInit<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using Bytes = std::vector<unsigned char, NoInit<unsigned char>>;

void download(void* dst, const rt::DeviceBuffer& src, std::size_t bytes) {
  rt::check(rt::driver().MemcpyDtoH(dst, src.get(), bytes), "cuMemcpyDtoH (" + std::to_string(bytes) + " bytes)");
}

// Fills `count` elements of `dtype` with input `in` of the workload with
// seed `seed` (tuner/random_fill.hpp). Returns max |value|.
double fill_random(Bytes& out, DType dtype, std::int64_t count, const InputDraw& in, std::uint64_t seed) {
  out.resize(static_cast<std::size_t>(count) * dtype_size(dtype));  // every element is written below
  return rnd::fill(out.data(), dtype, count, in.offset, in.scale, seed + in.seed_offset);
}

// The same on the GPU, into `out` (tuner/device_fill.hpp).
double fill_on_gpu(const DeviceBuild& gpu, const rt::DeviceBuffer& out, DType dtype, std::int64_t count,
                   const InputDraw& in, std::uint64_t seed) {
  return gpu.fill->fill(out.get(), dtype, count, in.offset, in.scale, seed + in.seed_offset, gpu.stream);
}

template <class V>
void download_into(V& dst, const rt::DeviceBuffer& src, std::size_t bytes) {
  dst.resize(bytes / sizeof(typename V::value_type));
  if (bytes) download(dst.data(), src, bytes);
}

std::string describe(const char* what, const ref::CompareResult& r) {
  return std::string(what) + ": " + r.message + " (" + std::to_string(r.mismatches) + " of " +
         std::to_string(r.checked) + " elements wrong, " + std::to_string(r.unwritten) + " unwritten)";
}

}  // namespace

struct Workload::Reference {
  Bytes main;  // y (fwd, y dtype) or dx (bwd, x_dtype)
  Bytes z;     // fwd with a residual: z = x + residual
  std::vector<float> mean, rstd;    // fwd
  Bytes dw, db;  // bwd, w_dtype
};

// The host half: inputs, the backward's mean and rstd, and the CPU reference
// (started on its own thread; the destructor waits for it, since it reads the
// inputs).
struct Workload::HostData {
  Traits traits;
  std::int64_t m = 0, n = 0;
  std::size_t x_bytes = 0, y_bytes = 0, r_bytes = 0, w_bytes = 0;
  Bytes hx, hdy, hw, hb, hr, hz, hdz;
  std::vector<float> hmean, hrstd;
  double wmax = 1, bmax = 0, dymax = 1, rstd_max = 1;
  std::future<std::shared_ptr<Reference>> pending_ref;
  ~HostData() {
    if (pending_ref.valid()) pending_ref.wait();
  }
};

void Workload::HostDataDeleter::operator()(HostData* h) const noexcept { delete h; }

namespace {

// A workload's HostData with its shape only (no inputs yet), the problem
// checked.
Workload::HostPtr shaped(const Traits& traits, std::int64_t m, std::int64_t n) {
  Workload::HostPtr hp(new Workload::HostData);
  Workload::HostData& h = *hp;
  h.traits = traits.canonical();
  h.m = m;
  h.n = n;
  const Traits& t = h.traits;
  if (t.kernel == Kernel::bwd_dwdb)
    throw Error("lntune: a workload is built for fwd or bwd_dx (bwd_dwdb shares the backward's)");
  if (m < 1 || n < 1) throw Error("lntune: a workload needs M >= 1 and N >= 1");
  const std::int64_t mn = m * n;
  h.x_bytes = static_cast<std::size_t>(mn) * dtype_size(t.x_dtype);
  h.y_bytes = static_cast<std::size_t>(mn) * dtype_size(t.out_dtype());
  h.r_bytes = static_cast<std::size_t>(mn) * dtype_size(t.input_dtype());
  h.w_bytes = static_cast<std::size_t>(n) * dtype_size(t.w_dtype);
  return hp;
}

}  // namespace

Workload::HostPtr Workload::prepare(const Traits& traits, std::int64_t m, std::int64_t n, std::uint64_t seed) {
  HostPtr hp = shaped(traits, m, n);
  HostData& h = *hp;
  const Traits& t = h.traits;
  const DType xd = t.x_dtype, wd = t.w_dtype, yd = t.out_dtype(), rd = t.input_dtype();
  const bool rms = t.norm == Norm::rms, residual = t.residual.has_value();
  const std::int64_t mn = m * n;

  fill_random(h.hx, xd, mn, inputs::x, seed);
  // Zero-centred weights are stored around 0 (applied as 1 + w).
  if (t.has_weight) {
    h.wmax = fill_random(h.hw, wd, n, inputs::weight(t.zero_centered), seed);
    if (t.zero_centered) h.wmax += 1.0;
  }
  const bool backward = t.kernel != Kernel::fwd;
  if (t.has_bias && !backward) h.bmax = fill_random(h.hb, wd, n, inputs::bias, seed);
  if (residual) fill_random(h.hr, rd, mn, inputs::residual, seed);

  ref::FwdArgs fa;
  fa.M = m;
  fa.N = n;
  fa.x_stride = n;
  fa.y_stride = n;
  fa.x_dtype = xd;
  fa.w_dtype = wd;
  fa.x = h.hx.data();
  fa.weight = t.has_weight ? h.hw.data() : nullptr;
  fa.bias = h.hb.empty() ? nullptr : h.hb.data();
  fa.eps = static_cast<double>(kEps);  // exactly the kernels' eps
  fa.norm = t.norm;
  fa.zero_centered = t.zero_centered;
  fa.residual = residual ? h.hr.data() : nullptr;
  fa.residual_dtype = rd;
  fa.residual_stride = fa.z_stride = n;
  fa.y_dtype = yd;

  if (!backward) {
    h.pending_ref = std::async(std::launch::async, [fa, yb = h.y_bytes, zb = residual ? h.r_bytes : 0, m, rms] {
      auto r = std::make_shared<Reference>();
      r->main.resize(yb);
      r->z.resize(zb);
      r->mean.resize(static_cast<std::size_t>(m));
      r->rstd.resize(static_cast<std::size_t>(m));
      ref::norm_forward(fa, r->main.data(), rms ? nullptr : r->mean.data(), r->rstd.data(),
                        zb ? r->z.data() : nullptr);
      return r;
    });
    return hp;
  }

  // Backward: mean and rstd (and z) as a forward would store them.
  h.dymax = fill_random(h.hdy, yd, mn, inputs::dy, seed);
  h.hmean.assign(static_cast<std::size_t>(m), 0.f);
  h.hrstd.resize(static_cast<std::size_t>(m));
  if (residual) h.hz.resize(h.r_bytes);
  ref::norm_forward(fa, nullptr, rms ? nullptr : h.hmean.data(), h.hrstd.data(), residual ? h.hz.data() : nullptr);
  h.rstd_max = 0;
  for (float r : h.hrstd) h.rstd_max = std::max(h.rstd_max, std::fabs(static_cast<double>(r)));
  if (residual) h.dymax = std::max(h.dymax, fill_random(h.hdz, rd, mn, inputs::dz, seed));

  ref::BwdArgs ba;
  ba.M = m;
  ba.N = n;
  ba.dy_stride = ba.x_stride = ba.dx_stride = n;
  ba.x_dtype = xd;
  ba.w_dtype = wd;
  ba.dy = h.hdy.data();
  ba.x = residual ? h.hz.data() : h.hx.data();
  ba.weight = t.has_weight ? h.hw.data() : nullptr;
  ba.eps = static_cast<double>(kEps);
  ba.norm = t.norm;
  ba.zero_centered = t.zero_centered;
  ba.residual = residual;
  ba.residual_dtype = rd;
  ba.dz = residual ? h.hdz.data() : nullptr;
  ba.dz_stride = n;
  ba.y_dtype = yd;
  // The device half asks for dW exactly when there is a weight, dB when there
  // is a bias (Workload's constructor checks that the launcher agrees).
  const bool want_dw = t.has_weight, want_db = t.has_bias;
  h.pending_ref = std::async(std::launch::async, [ba, xb = h.x_bytes, wb = h.w_bytes, want_dw, want_db] {
    auto r = std::make_shared<Reference>();
    r->main.resize(xb);
    if (want_dw) r->dw.resize(wb);
    if (want_db) r->db.resize(wb);
    ref::layer_norm_backward(ba, r->main.data(), want_dw ? r->dw.data() : nullptr, want_db ? r->db.data() : nullptr);
    return r;
  });
  return hp;
}

Workload::Workload(const Traits& traits, std::int64_t m, std::int64_t n, std::uint64_t seed)
    : Workload(prepare(traits, m, n, seed)) {}

rt::DeviceBuffer Workload::alloc(std::size_t bytes) {
  bytes = (bytes + 3) / 4 * 4;  // whole words (poison fills words)
  return pool_ ? pool_->take(bytes) : rt::DeviceBuffer(bytes);
}

rt::DeviceBuffer Workload::upload(const void* data, std::size_t bytes) {
  rt::DeviceBuffer b = alloc(bytes);
  if (bytes == 0) return b;
  if (uploader_) {
    uploader_->upload(b.get(), data, bytes);
  } else {
    rt::check(rt::driver().MemcpyHtoD(b.get(), data, bytes), "cuMemcpyHtoD (" + std::to_string(bytes) + " bytes)");
    // A pageable copy may return before its DMA lands, and the streams that
    // read the buffer next need not wait for the legacy stream.
    rt::check(rt::driver().CtxSynchronize(), "cuCtxSynchronize (after an upload)");
  }
  return b;
}

Workload::Workload(HostPtr host, DevicePool* pool, Uploader* uploader)
    : h_(std::move(host)), pool_(pool), uploader_(uploader) {
  if (!h_) throw Error("lntune: internal: a workload built from no host data");
  const HostData& h = *h_;
  traits_ = h.traits;
  m_ = h.m;
  n_ = h.n;
  x_bytes_ = h.x_bytes;
  y_bytes_ = h.y_bytes;
  r_bytes_ = h.r_bytes;
  w_bytes_ = h.w_bytes;
  const bool residual = traits_.residual.has_value();

  // The input row: x, or z for a backward with a residual (uploaded below).
  if (!backward() || !residual) x_ = upload(h.hx.data(), x_bytes_);
  if (traits_.has_weight) w_ = upload(h.hw.data(), w_bytes_);

  if (!backward()) {
    y_or_dx_ = alloc(y_bytes_);
    if (traits_.has_bias) b_ = upload(h.hb.data(), w_bytes_);
    if (residual) {
      r_ = upload(h.hr.data(), r_bytes_);
      z_ = alloc(r_bytes_);
    }
    mean_ = alloc(static_cast<std::size_t>(m_) * 4);
    rstd_ = alloc(static_cast<std::size_t>(m_) * 4);
    bind_forward();
    return;
  }

  y_or_dx_ = alloc(x_bytes_);
  dy_ = upload(h.hdy.data(), y_bytes_);
  if (residual) {
    x_ = upload(h.hz.data(), r_bytes_);  // the backward's input row is z
    dz_ = upload(h.hdz.data(), r_bytes_);
  }
  mean_ = upload(h.hmean.data(), h.hmean.size() * 4);
  rstd_ = upload(h.hrstd.data(), h.hrstd.size() * 4);
  if (traits_.has_weight) dw_ = alloc(w_bytes_);
  if (traits_.has_bias) db_ = alloc(w_bytes_);
  bind_backward();
}

void Workload::bind_forward() {
  const bool residual = traits_.residual.has_value();
  fargs_ = ForwardArgs{};
  fargs_.x = x_.ptr();
  fargs_.weight = traits_.has_weight ? w_.ptr() : nullptr;
  fargs_.bias = traits_.has_bias ? b_.ptr() : nullptr;
  fargs_.y = y_or_dx_.ptr();
  fargs_.mean = traits_.norm == Norm::rms ? nullptr : static_cast<float*>(mean_.ptr());
  fargs_.rstd = static_cast<float*>(rstd_.ptr());
  fargs_.M = m_;
  fargs_.N = n_;
  fargs_.x_dtype = traits_.x_dtype;
  fargs_.w_dtype = traits_.w_dtype;
  fargs_.eps = kEps;
  fargs_.norm = traits_.norm;
  fargs_.zero_centered_weight = traits_.zero_centered;
  if (residual) {
    fargs_.residual = r_.ptr();
    fargs_.residual_out = z_.ptr();
    fargs_.residual_dtype = traits_.input_dtype();
  }
  fargs_.y_dtype = traits_.out_dtype();
  fwd_ = rt::check_forward(fargs_);
  got_mean_.resize(static_cast<std::size_t>(m_));
  got_rstd_.resize(static_cast<std::size_t>(m_));
}

void Workload::bind_backward() {
  const bool residual = traits_.residual.has_value();
  bargs_ = BackwardArgs{};
  bargs_.dy = dy_.ptr();
  bargs_.x = x_.ptr();
  bargs_.weight = traits_.has_weight ? w_.ptr() : nullptr;
  bargs_.mean = static_cast<const float*>(mean_.ptr());
  bargs_.rstd = static_cast<const float*>(rstd_.ptr());
  bargs_.dx = y_or_dx_.ptr();
  bargs_.dweight = traits_.has_weight ? dw_.ptr() : nullptr;
  bargs_.dbias = traits_.has_bias ? db_.ptr() : nullptr;
  bargs_.M = m_;
  bargs_.N = n_;
  bargs_.x_dtype = traits_.x_dtype;
  bargs_.w_dtype = traits_.w_dtype;
  bargs_.norm = traits_.norm;
  bargs_.zero_centered_weight = traits_.zero_centered;
  if (residual) {
    bargs_.residual = true;
    bargs_.dresidual_out = dz_.ptr();
    bargs_.residual_dtype = traits_.input_dtype();
  }
  bargs_.y_dtype = traits_.out_dtype();
  bwd_ = rt::check_backward(bargs_);
  if (bwd_.want_dw != traits_.has_weight || bwd_.want_db != traits_.has_bias)
    throw Error("lntune: internal: the backward's gradients disagree with the reference's (dW " +
                std::to_string(bwd_.want_dw) + ", dB " + std::to_string(bwd_.want_db) + ")");
  got_dw_.resize(w_bytes_);
  got_db_.resize(w_bytes_);
}

// ---- built on the GPU ----------------------------------------------------------

Workload::Workload(const Traits& traits, std::int64_t m, std::int64_t n, std::uint64_t seed, const DeviceBuild& gpu,
                   DevicePool* pool)
    : pool_(pool), built_on_gpu_(true) {
  if (!gpu.fill || !gpu.reference)
    throw Error("lntune: internal: a workload built on the GPU needs a DeviceFill and a DeviceReference");
  h_ = shaped(traits, m, n);
  traits_ = h_->traits;
  m_ = m;
  n_ = n;
  x_bytes_ = h_->x_bytes;
  y_bytes_ = h_->y_bytes;
  r_bytes_ = h_->r_bytes;
  w_bytes_ = h_->w_bytes;
  ref_ = std::make_shared<Reference>();
  GpuReferenceSample sample;
  sample.traits = traits_;
  sample.m = m;
  sample.n = n;
  sample.seed = seed;
  sample.rows = sampled_rows(m);
  if (backward())
    build_backward_on_gpu(gpu, seed, sample);
  else
    build_forward_on_gpu(gpu, seed, sample);
  // The oracle: CPU work on the sampled rows (and, backward, two chunks).
  if (gpu.oracle_in_background) {
    oracle_pending_ = std::async(std::launch::async, [s = std::move(sample)] {
      background_priority(15);  // as the workloads prepared ahead (tuner/compile_pool.hpp)
      return check_gpu_reference(s);
    });
  } else {
    oracle_ = check_gpu_reference(sample);
  }
}

void Workload::give_back(rt::DeviceBuffer& b) {
  if (pool_)
    pool_->give(std::move(b));
  else
    b = rt::DeviceBuffer();
}

namespace {

// Sampled rows (N elements of `bytes_per_row`) of a device array, downloaded
// one after the other.
std::vector<unsigned char> download_rows(const rt::DeviceBuffer& src, const std::vector<std::int64_t>& rows,
                                         std::size_t row_bytes) {
  std::vector<unsigned char> out(rows.size() * row_bytes);
  for (std::size_t i = 0; i < rows.size(); ++i)
    rt::check(rt::driver().MemcpyDtoH(out.data() + i * row_bytes,
                                      src.get() + static_cast<std::size_t>(rows[i]) * row_bytes, row_bytes),
              "cuMemcpyDtoH (a sampled row of the GPU reference)");
  return out;
}

}  // namespace

void Workload::build_forward_on_gpu(const DeviceBuild& gpu, std::uint64_t seed, GpuReferenceSample& sample) {
  HostData& h = *h_;
  const Traits& t = traits_;
  const DType xd = t.x_dtype, wd = t.w_dtype, yd = t.out_dtype(), rd = t.input_dtype();
  const bool residual = t.residual.has_value();
  const std::int64_t mn = m_ * n_;
  // The inputs, drawn as prepare() draws them (the same seeds: the same bits).
  x_ = alloc(x_bytes_);
  fill_on_gpu(gpu, x_, xd, mn, inputs::x, seed);
  if (t.has_weight) {
    w_ = alloc(w_bytes_);
    h.wmax = fill_on_gpu(gpu, w_, wd, n_, inputs::weight(t.zero_centered), seed);
    if (t.zero_centered) h.wmax += 1.0;
  }
  if (t.has_bias) {
    b_ = alloc(w_bytes_);
    h.bmax = fill_on_gpu(gpu, b_, wd, n_, inputs::bias, seed);
  }
  if (residual) {
    r_ = alloc(r_bytes_);
    fill_on_gpu(gpu, r_, rd, mn, inputs::residual, seed);
    z_ = alloc(r_bytes_);
    ref_z_ = alloc(r_bytes_);
  }
  y_or_dx_ = alloc(y_bytes_);
  mean_ = alloc(static_cast<std::size_t>(m_) * 4);
  rstd_ = alloc(static_cast<std::size_t>(m_) * 4);
  ref_main_ = alloc(y_bytes_);
  // The reference: y and z stay on the GPU; mean and rstd (written into the
  // kernels' own buffers, poisoned before every verification) come down.
  DeviceReference::Forward b;
  b.x = x_.get();
  b.weight = w_.get();
  b.bias = b_.get();
  b.residual = r_.get();
  b.y = ref_main_.get();
  b.z = ref_z_.get();
  b.mean = mean_.get();
  b.rstd = rstd_.get();
  gpu.reference->forward(RefProblem::of(t, m_, n_), b, gpu.stream);
  if (gpu.after_reference) gpu.after_reference(ref_main_.get(), gpu.stream);
  download_into(ref_->mean, mean_, static_cast<std::size_t>(m_) * 4);
  download_into(ref_->rstd, rstd_, static_cast<std::size_t>(m_) * 4);
  bind_forward();
  // The oracle's sample.
  sample.main = download_rows(ref_main_, sample.rows, static_cast<std::size_t>(n_) * dtype_size(yd));
  if (residual) sample.z = download_rows(ref_z_, sample.rows, static_cast<std::size_t>(n_) * dtype_size(rd));
  sample.mean = ref_->mean;
  sample.rstd = ref_->rstd;
}

void Workload::build_backward_on_gpu(const DeviceBuild& gpu, std::uint64_t seed, GpuReferenceSample& sample) {
  HostData& h = *h_;
  const Traits& t = traits_;
  const DType xd = t.x_dtype, wd = t.w_dtype, yd = t.out_dtype(), rd = t.input_dtype();
  const bool residual = t.residual.has_value();
  const std::int64_t mn = m_ * n_;
  const RefProblem problem = RefProblem::of(t, m_, n_);
  // x; with a residual, x and the residual go into the forward reference,
  // which writes z, the backward's input row, into x_.
  rt::DeviceBuffer x_in, r_in;
  if (residual) {
    x_in = alloc(x_bytes_);
    r_in = alloc(r_bytes_);
    x_ = alloc(r_bytes_);
  } else {
    x_ = alloc(x_bytes_);
  }
  fill_on_gpu(gpu, residual ? x_in : x_, xd, mn, inputs::x, seed);
  if (t.has_weight) {
    w_ = alloc(w_bytes_);
    h.wmax = fill_on_gpu(gpu, w_, wd, n_, inputs::weight(t.zero_centered), seed);
    if (t.zero_centered) h.wmax += 1.0;
  }
  if (residual) fill_on_gpu(gpu, r_in, rd, mn, inputs::residual, seed);
  dy_ = alloc(y_bytes_);
  h.dymax = fill_on_gpu(gpu, dy_, yd, mn, inputs::dy, seed);
  if (residual) {
    dz_ = alloc(r_bytes_);
    h.dymax = std::max(h.dymax, fill_on_gpu(gpu, dz_, rd, mn, inputs::dz, seed));
  }
  // z, mean and rstd as the forward reference stores them.
  mean_ = alloc(static_cast<std::size_t>(m_) * 4);
  rstd_ = alloc(static_cast<std::size_t>(m_) * 4);
  {
    DeviceReference::Forward f;
    f.x = residual ? x_in.get() : x_.get();
    f.weight = w_.get();
    f.residual = r_in.get();
    f.z = residual ? x_.get() : 0;
    f.mean = mean_.get();
    f.rstd = rstd_.get();
    h.rstd_max = static_cast<double>(gpu.reference->forward(problem, f, gpu.stream));
  }
  if (residual) {
    give_back(x_in);
    give_back(r_in);
  }
  // dx (stays on the GPU), dW and dB (into the kernels' own buffers,
  // poisoned before every verification, and downloaded).
  y_or_dx_ = alloc(x_bytes_);
  ref_main_ = alloc(x_bytes_);
  if (t.has_weight) dw_ = alloc(w_bytes_);
  if (t.has_bias) db_ = alloc(w_bytes_);
  const bool dwdb = t.has_weight || t.has_bias;
  rt::DeviceBuffer ws;
  if (dwdb) ws = alloc(DeviceReference::workspace_bytes(m_, n_));
  DeviceReference::Backward b;
  b.dy = dy_.get();
  b.x = x_.get();
  b.weight = w_.get();
  b.dz = dz_.get();
  b.dx = ref_main_.get();
  b.dw = dw_.get();
  b.db = db_.get();
  b.workspace = ws.get();
  b.workspace_bytes = ws.size();
  gpu.reference->backward(problem, b, gpu.stream);
  if (gpu.after_reference) gpu.after_reference(ref_main_.get(), gpu.stream);
  if (t.has_weight) download_into(ref_->dw, dw_, w_bytes_);
  if (t.has_bias) download_into(ref_->db, db_, w_bytes_);
  bind_backward();
  // The oracle's sample: sampled rows of dx and z, every mean and rstd, and
  // the dW/dB partials.
  sample.main = download_rows(ref_main_, sample.rows, static_cast<std::size_t>(n_) * dtype_size(xd));
  if (residual) sample.z = download_rows(x_, sample.rows, static_cast<std::size_t>(n_) * dtype_size(rd));
  download_into(sample.mean, mean_, static_cast<std::size_t>(m_) * 4);
  download_into(sample.rstd, rstd_, static_cast<std::size_t>(m_) * 4);
  if (dwdb) {
    sample.partition = dwdb_partition(m_, n_);
    const std::size_t partial_bytes = static_cast<std::size_t>(sample.partition.chunks * n_) * sizeof(double);
    const CUdeviceptr partials = ws.get() + DeviceReference::partials_offset(m_);
    if (t.has_weight) {
      sample.dw_partials.resize(partial_bytes / sizeof(double));
      rt::check(rt::driver().MemcpyDtoH(sample.dw_partials.data(), partials, partial_bytes),
                "cuMemcpyDtoH (the reference's dW partials)");
      sample.dw.assign(ref_->dw.begin(), ref_->dw.end());
    }
    if (t.has_bias) {
      sample.db_partials.resize(partial_bytes / sizeof(double));
      rt::check(rt::driver().MemcpyDtoH(sample.db_partials.data(), partials + partial_bytes, partial_bytes),
                "cuMemcpyDtoH (the reference's dB partials)");
      sample.db.assign(ref_->db.begin(), ref_->db.end());
    }
    give_back(ws);
  }
}

const OracleReport& Workload::oracle() {
  if (!oracle_) {
    if (!oracle_pending_.valid()) {
      oracle_ = OracleReport{};  // host-built: the CPU reference is the oracle itself
    } else {
      try {
        oracle_ = oracle_pending_.get();
      } catch (const std::exception& e) {
        OracleReport r;
        r.error = std::string("the CPU's check of the GPU reference failed to run: ") + e.what();
        oracle_ = r;
      }
    }
  }
  return *oracle_;
}

Workload::~Workload() {
  if (!pool_) return;
  for (rt::DeviceBuffer* b : {&r_, &z_, &dz_, &x_, &y_or_dx_, &dy_, &w_, &b_, &mean_, &rstd_, &dw_, &db_, &ws_,
                              &ref_main_, &ref_z_})
    pool_->give(std::move(*b));
}

int Workload::vec() const { return backward() ? bwd_.vec : fwd_.vec; }

Traits Workload::dwdb_traits() const { return rt::dwdb_traits(bwd_.traits, bwd_.want_dw, bwd_.want_db); }

rt::DwdbProblem Workload::dwdb(const Config& dx_config) const {
  return rt::dwdb_problem(bwd_.traits, bwd_.want_dw, bwd_.want_db, dx_config, m_);
}

double Workload::fwd_bytes() const {
  const double mn = static_cast<double>(m_) * static_cast<double>(n_);
  const double sx = static_cast<double>(dtype_size(traits_.x_dtype));
  const double sy = static_cast<double>(dtype_size(traits_.out_dtype()));
  const double sr = traits_.residual ? static_cast<double>(dtype_size(*traits_.residual)) : 0.0;
  const double sw = static_cast<double>(dtype_size(traits_.w_dtype));
  // x (and residual) read, y (and z) written; mean (LayerNorm) and rstd.
  return mn * (sx + sy + 2 * sr) +
         ((traits_.has_weight ? 1 : 0) + (traits_.has_bias ? 1 : 0)) * static_cast<double>(n_) * sw +
         (traits_.norm == Norm::rms ? 4.0 : 8.0) * static_cast<double>(m_);
}

double Workload::dwdb_bytes(std::int64_t partial_rows) const {
  const int grads = (bwd_.want_dw ? 1 : 0) + (bwd_.want_db ? 1 : 0);
  const double sw = static_cast<double>(dtype_size(traits_.w_dtype));
  return grads * (static_cast<double>(partial_rows) * static_cast<double>(n_) * 4 + static_cast<double>(n_) * sw);
}

double Workload::bwd_bytes(const Config& dx_config) const {
  const double mn = static_cast<double>(m_) * static_cast<double>(n_);
  const double sx = static_cast<double>(dtype_size(traits_.x_dtype));
  const double sy = static_cast<double>(dtype_size(traits_.out_dtype()));
  const double sin = static_cast<double>(dtype_size(traits_.input_dtype()));
  const double sdz = traits_.residual ? static_cast<double>(dtype_size(*traits_.residual)) : 0.0;
  const double sw = static_cast<double>(dtype_size(traits_.w_dtype));
  const std::int64_t P = rt::partial_rows(dx_config, m_);
  const int grads = (bwd_.want_dw ? 1 : 0) + (bwd_.want_db ? 1 : 0);
  // dy, x (or z) and dz read, dx written; bwd_dx writes the partials;
  // dwdb_bytes counts reading them and writing dW/dB.
  return mn * (sy + sin + sdz + sx) + (traits_.has_weight ? static_cast<double>(n_) * sw : 0.0) +
         (traits_.norm == Norm::rms ? 4.0 : 8.0) * static_cast<double>(m_) +
         grads * static_cast<double>(P) * static_cast<double>(n_) * 4 + dwdb_bytes(P);
}

void Workload::reserve_workspace(const Config& dx_config) {
  const std::size_t need = rt::workspace_bytes(bwd_, dx_config);
  if (need > ws_.size()) {
    rt::check(rt::driver().CtxSynchronize(), "cuCtxSynchronize (before growing the workspace)");
    if (pool_) pool_->give(std::move(ws_));
    ws_ = alloc(need);
  }
}

void Workload::launch_forward(const rt::LoadedKernel& k, const Config& c, CUstream stream) const {
  ForwardArgs a = fargs_;
  a.stream = stream;
  rt::launch_forward(k, c, a, fwd_);
}

void Workload::launch_backward(const rt::LoadedKernel& dx, const Config& dx_config, const rt::LoadedKernel& dwdb,
                               const Config& dwdb_config, CUstream stream, rt::Finish finish) const {
  BackwardArgs a = bargs_;
  a.stream = stream;
  a.workspace = ws_.ptr();
  a.workspace_bytes = ws_.size();
  if (rt::workspace_bytes(bwd_, dx_config) > ws_.size())
    throw Error("lntune: internal: workspace not reserved for " + to_string(dx_config));
  rt::launch_backward(dx, has_dwdb() ? &dwdb : nullptr, dx_config, dwdb_config, a, bwd_, finish);
}

void Workload::launch_dwdb(const rt::LoadedKernel& dwdb, const Config& rc, const Config& dx_config,
                           CUstream stream) const {
  const std::size_t need = rt::workspace_bytes(bwd_, dx_config);
  if (need == 0 || need > ws_.size())
    throw Error("lntune: internal: no backward partials for " + to_string(dx_config));
  rt::launch_dwdb(dwdb, rc, rt::workspace_layout(bwd_, dx_config, ws_.ptr()), rt::partial_rows(dx_config, m_), n_,
                  bargs_.dweight, bargs_.dbias, stream);
}

void Workload::poison(const rt::DeviceBuffer& b, DType d, std::size_t bytes, CUstream stream) const {
  if (!b.get() || bytes == 0) return;
  std::uint32_t bits = ref::poison_bits(d);
  if (dtype_size(d) == 2) bits = (bits & 0xffffu) | ((bits & 0xffffu) << 16);
  rt::check(rt::driver().MemsetD32Async(b.get(), bits, (bytes + 3) / 4, stream), "cuMemsetD32Async (poison)");
}

void Workload::upload_reference() {
  if (built_on_gpu_) return;  // already there
  const Reference& r = reference(nullptr);  // off the benchmarking thread: not a verification's wait
  ref_main_ = upload(r.main.data(), r.main.size());
  if (!r.z.empty()) ref_z_ = upload(r.z.data(), r.z.size());
}

std::string Workload::check_rows(const char* what, DType d, const rt::DeviceBuffer& got,
                                 const rt::DeviceBuffer& want_dev, const unsigned char* want_host, std::size_t bytes,
                                 ref::Tolerance tol, rt::PinnedBuffer& staging, CUstream stream) {
  if (check_ && want_dev.get() &&
      check_->failures(d, got.get(), want_dev.get(), m_ * n_, tol, ref::poison_bits(d), stream) == 0)
    return "";
  // No check on the GPU, or a failure there: the host's comparison, for the
  // description (and as the verdict when the GPU had no reference).
  if (staging.size() < bytes) staging = rt::PinnedBuffer(bytes);
  download(staging.data(), got, bytes);
  Bytes want_copy;  // a reference that is on the GPU only (GPU-built): downloaded for the description
  if (!want_host) {
    if (!want_dev.get()) throw Error(std::string("lntune: internal: no reference of ") + what + " anywhere");
    want_copy.resize(bytes);
    download(want_copy.data(), want_dev, bytes);
    want_host = want_copy.data();
  }
  const auto c = ref::compare(d, staging.data(), want_host, m_, n_, n_, n_, tol, ref::poison_bits(d));
  return c.ok ? "" : describe(what, c);
}

const Workload::Reference& Workload::reference(double* wait_s) {
  if (!ref_) {
    ScopedSeconds wait(wait_s);
    ref_ = h_->pending_ref.get();
  }
  if (built_on_gpu_) {
    // No verdict before the CPU has checked the GPU's reference.
    if (!oracle_) {
      ScopedSeconds wait(wait_s);
      oracle();
    }
    if (!oracle_->ok()) throw KeyError("lntune: " + oracle_->error);
  }
  return *ref_;
}

std::string Workload::verify(const std::function<void(CUstream)>& launch, CUstream stream, bool gradients_only) {
  ScopedSeconds total(&verify_times_.total_s);
  const rt::DriverApi& d = rt::driver();
  const DType xd = traits_.x_dtype, wd = traits_.w_dtype, yd = traits_.out_dtype(), rd = traits_.input_dtype();
  const bool rms = traits_.norm == Norm::rms;
  if (!backward()) {
    poison(y_or_dx_, yd, y_bytes_, stream);
    if (traits_.residual) poison(z_, rd, r_bytes_, stream);
    poison(mean_, DType::f32, static_cast<std::size_t>(m_) * 4, stream);
    poison(rstd_, DType::f32, static_cast<std::size_t>(m_) * 4, stream);
  } else {
    if (!gradients_only) poison(y_or_dx_, xd, x_bytes_, stream);
    if (bwd_.want_dw) poison(dw_, wd, w_bytes_, stream);
    if (bwd_.want_db) poison(db_, wd, w_bytes_, stream);
  }
  launch(stream);
  rt::check(d.StreamSynchronize(stream), "cuStreamSynchronize (verification run)");
  const Reference& r = reference(&verify_times_.reference_wait_s);
  ScopedSeconds downloads_and_compares(&verify_times_.compare_s);
  std::string out;
  auto add = [&out](const std::string& s) {
    if (!s.empty()) out += (out.empty() ? "" : "; ") + s;
  };
  if (!backward()) {
    const double mag = std::max({1.0, h_->wmax, h_->bmax});
    const auto ty = ref::default_tolerance(yd, ref::Quantity::y, n_, m_, mag);
    add(check_rows("y", yd, y_or_dx_, ref_main_, r.main.empty() ? nullptr : r.main.data(), y_bytes_, ty, got_main_,
                   stream));
    if (traits_.residual) {
      const auto tz = ref::default_tolerance(rd, ref::Quantity::y, n_, m_, 0.0);
      add(check_rows("z", rd, z_, ref_z_, r.z.empty() ? nullptr : r.z.data(), r_bytes_, tz, got_z_, stream));
    }
    download(got_mean_.data(), mean_, got_mean_.size() * 4);
    download(got_rstd_.data(), rstd_, got_rstd_.size() * 4);
    const auto ts = ref::default_tolerance(DType::f32, ref::Quantity::mean_rstd, n_, m_, inputs::x.scale);
    if (!rms) {
      const auto cm = ref::compare(DType::f32, got_mean_.data(), r.mean.data(), 1, m_, m_, m_, ts,
                                   ref::poison_bits(DType::f32));
      if (!cm.ok) add(describe("mean", cm));
    }
    const auto cr = ref::compare(DType::f32, got_rstd_.data(), r.rstd.data(), 1, m_, m_, m_, ts,
                                 ref::poison_bits(DType::f32));
    if (!cr.ok) add(describe("rstd", cr));
    return out;
  }
  if (!gradients_only) {
    const auto tdx = ref::default_tolerance(xd, ref::Quantity::dx, n_, m_, h_->rstd_max * h_->wmax * h_->dymax);
    add(check_rows("dx", xd, y_or_dx_, ref_main_, r.main.empty() ? nullptr : r.main.data(), x_bytes_, tdx, got_main_,
                   stream));
  }
  const auto tw = ref::default_tolerance(wd, ref::Quantity::dweight, n_, m_, h_->dymax);
  if (bwd_.want_dw) {
    download(got_dw_.data(), dw_, w_bytes_);
    const auto c = ref::compare(wd, got_dw_.data(), r.dw.data(), 1, n_, n_, n_, tw, ref::poison_bits(wd));
    if (!c.ok) add(describe("dweight", c));
  }
  if (bwd_.want_db) {
    download(got_db_.data(), db_, w_bytes_);
    const auto c = ref::compare(wd, got_db_.data(), r.db.data(), 1, n_, n_, n_, tw, ref::poison_bits(wd));
    if (!c.ok) add(describe("dbias", c));
  }
  return out;
}

Workload::Snapshot Workload::snapshot() {
  Snapshot out;
  auto get = [](std::vector<unsigned char>& dst, const rt::DeviceBuffer& src, std::size_t bytes) {
    if (src.get()) download_into(dst, src, bytes);
  };
  const bool residual = traits_.residual.has_value();
  get(out.x, x_, backward() && residual ? r_bytes_ : x_bytes_);
  get(out.weight, w_, w_bytes_);
  if (!backward()) {
    get(out.bias, b_, w_bytes_);
    get(out.residual, r_, r_bytes_);
  } else {
    get(out.dy, dy_, y_bytes_);
    get(out.dz, dz_, r_bytes_);
    download_into(out.mean, mean_, static_cast<std::size_t>(m_) * 4);
    download_into(out.rstd, rstd_, static_cast<std::size_t>(m_) * 4);
  }
  // A GPU-built reference as it is, whatever the oracle says (tests compare
  // it themselves); a host-built one once the CPU has computed it.
  const Reference& r = built_on_gpu_ ? *ref_ : reference(nullptr);
  if (built_on_gpu_) {
    get(out.ref_main, ref_main_, backward() ? x_bytes_ : y_bytes_);
    if (!backward()) get(out.ref_z, ref_z_, residual ? r_bytes_ : 0);
  } else {
    out.ref_main.assign(r.main.begin(), r.main.end());
    out.ref_z.assign(r.z.begin(), r.z.end());
  }
  if (!backward()) {
    out.ref_mean = r.mean;
    out.ref_rstd = r.rstd;
  } else {
    out.ref_dw.assign(r.dw.begin(), r.dw.end());
    out.ref_db.assign(r.db.begin(), r.db.end());
  }
  out.wmax = h_->wmax;
  out.bmax = h_->bmax;
  out.dymax = h_->dymax;
  out.rstd_max = h_->rstd_max;
  return out;
}

}  // namespace lntune::tune
