// GPU correctness of the norm variants of issue 11 (ctest label "gpu"):
// RMSNorm, the fused residual add (residual in x's dtype or fp32), zero-
// centred gamma and an output dtype of its own, for both norms and every
// dtype, forward and backward (dx, dW/dB and, with a residual, the
// residual's gradient in its own dtype) through the public API, against the float64
// CPU reference (tuner/reference.hpp), with odd N, strided rows, short and
// long rows (single tile, tiled or cluster as the default heuristic picks),
// and NaN/Inf. Outputs are poisoned before each run. Skips, saying why,
// without a GPU. Tolerances: tuner/compare.hpp (its "variants" paragraph).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "generator/instance.hpp"
#include "generator/space.hpp"
#include "gpu_util.hpp"
#include "lntune/lntune.hpp"
#include "runtime/runtime.hpp"
#include "tuner/reference.hpp"

namespace lntune {
namespace {

using testing::DeviceTensor;
using testing::HostTensor;
using testing::Rng;

double max_abs(const HostTensor& h) {
  double m = 0;
  for (std::int64_t i = 0; i < h.count; ++i)
    if (std::isfinite(h.get(i))) m = std::max(m, std::fabs(h.get(i)));
  return m;
}

struct VCase {
  Norm norm = Norm::layer;
  DType x = DType::bf16, w = DType::bf16;
  bool weight = true, bias = true;
  std::optional<DType> residual;  // none: no residual add
  bool zc = false;
  std::optional<DType> y;  // none: x's dtype
  std::int64_t M = 1, N = 1, pad = 0;
  bool dz = true;    // backward with an upstream residual gradient
  bool dres = true;  // backward also writes the residual's gradient (dresidual, residual dtype)
  std::string name() const {
    std::string s = std::string(to_string(norm)) + "_" + std::string(to_string(x)) + "_w" + std::string(to_string(w)) +
                    (weight ? "_W" : "_noW") + (bias ? "B" : "noB");
    if (residual) s += "_res" + std::string(to_string(*residual)) + (dz ? "" : "_nodz") + (dres ? "" : "_nodres");
    if (zc) s += "_zc";
    if (y) s += "_out" + std::string(to_string(*y));
    return s + "_M" + std::to_string(M) + "_N" + std::to_string(N) + (pad ? "_pad" + std::to_string(pad) : "");
  }
  DType yd() const { return y.value_or(x); }
  DType rd() const { return residual.value_or(x); }
};
void PrintTo(const VCase& c, std::ostream* os) { *os << c.name(); }


struct NormRun {
  VCase c;
  std::int64_t s;  // row stride of every row tensor
  HostTensor x, r, w, b, dy, dz;
  DeviceTensor gx, gr, gw, gb, gdy, gdz, gy, gz, gmean, grstd;

  NormRun(const VCase& cs, Rng& rng) : c(cs), s(cs.N + cs.pad) {
    const std::int64_t n = c.M * s;
    x = rng.tensor(c.x, n, 0.5, 2.0);
    if (c.residual) r = rng.tensor(c.rd(), n, -0.25, 1.0);
    // Zero-centred weights are stored around 0; plain ones around 1.
    if (c.weight) w = rng.tensor(c.w, c.N, c.zc ? 0.0 : 1.0, 0.5);
    if (c.bias) b = rng.tensor(c.w, c.N, 0.0, 0.5);
    dy = rng.tensor(c.yd(), n, 0.0, 1.0);
    if (c.residual) dz = rng.tensor(c.rd(), n, 0.0, 1.0);
    gx = DeviceTensor(x);
    if (c.residual) {
      gr = DeviceTensor(r);
      gz = DeviceTensor(c.rd(), n);
      gdz = DeviceTensor(dz);
    }
    if (c.weight) gw = DeviceTensor(w);
    if (c.bias) gb = DeviceTensor(b);
    gdy = DeviceTensor(dy);
    gy = DeviceTensor(c.yd(), n);
    gmean = DeviceTensor(DType::f32, c.M);
    grstd = DeviceTensor(DType::f32, c.M);
  }

  ForwardArgs fwd() {
    ForwardArgs a;
    a.x = gx.ptr();
    a.weight = c.weight ? gw.ptr() : nullptr;
    a.bias = c.bias ? gb.ptr() : nullptr;
    a.y = gy.ptr();
    a.mean = c.norm == Norm::layer ? static_cast<float*>(gmean.ptr()) : nullptr;
    a.rstd = static_cast<float*>(grstd.ptr());
    a.M = c.M;
    a.N = c.N;
    a.x_row_stride = a.y_row_stride = s;
    a.x_dtype = c.x;
    a.w_dtype = c.w;
    a.norm = c.norm;
    a.zero_centered_weight = c.zc;
    if (c.residual) {
      a.residual = gr.ptr();
      a.residual_out = gz.ptr();
      a.residual_row_stride = a.residual_out_row_stride = s;
      a.residual_dtype = c.residual;
    }
    a.y_dtype = c.y;
    return a;
  }

  // The weight's bound as applied (1 + w when zero-centred).
  double wmag() const {
    if (!c.weight) return 1.0;
    double m = 0;
    for (std::int64_t j = 0; j < c.N; ++j) m = std::max(m, std::fabs((c.zc ? 1.0 : 0.0) + w.get(j)));
    return m;
  }

  // With `cfg`, that config instead of the one lntune would choose.
  void forward_and_check(const Config* cfg = nullptr) {
    gy.poison();
    grstd.poison();
    gmean.poison();
    if (c.residual) gz.poison();
    if (cfg) {
      const ForwardArgs a = fwd();
      const rt::FwdProblem fp = rt::check_forward(a);
      rt::Runtime& runtime = rt::default_runtime();
      CUcontext ctx = nullptr;
      const rt::DeviceInfo& dev = runtime.current_device(&ctx);
      rt::launch_forward(runtime.kernel(ctx, dev.arch(), gen::make_instance(fp.traits, *cfg, c.N, fp.vec)), *cfg, a, fp);
    } else {
      forward(fwd());
    }
    const HostTensor y = gy.download(), rstd = grstd.download();
    HostTensor y_ref(c.yd(), c.M * s), z_ref(c.rd(), c.M * s), mean_ref(DType::f32, c.M), rstd_ref(DType::f32, c.M);
    ref::FwdArgs a;
    a.M = c.M;
    a.N = c.N;
    a.x_stride = a.y_stride = a.residual_stride = a.z_stride = s;
    a.x_dtype = c.x;
    a.w_dtype = c.w;
    a.x = x.data();
    a.weight = c.weight ? w.data() : nullptr;
    a.bias = c.bias ? b.data() : nullptr;
    a.norm = c.norm;
    a.zero_centered = c.zc;
    a.residual = c.residual ? r.data() : nullptr;
    a.residual_dtype = c.rd();
    a.y_dtype = c.y;
    ref::norm_forward(a, y_ref.data(), c.norm == Norm::layer ? static_cast<float*>(mean_ref.data()) : nullptr,
                      static_cast<float*>(rstd_ref.data()), c.residual ? z_ref.data() : nullptr);
    const double mag = std::max({1.0, wmag(), c.bias ? max_abs(b) : 0.0});
    const auto ry = ref::compare(c.yd(), y.data(), y_ref.data(), c.M, c.N, s, s,
                                 ref::default_tolerance(c.yd(), ref::Quantity::y, c.N, c.M, mag), ref::poison_bits(c.yd()));
    EXPECT_TRUE(ry.ok) << "y: " << testing::describe(ry);
    if (c.residual) {
      const HostTensor z = gz.download();
      const auto rz = ref::compare(c.rd(), z.data(), z_ref.data(), c.M, c.N, s, s,
                                   ref::default_tolerance(c.rd(), ref::Quantity::y, c.N, c.M, 0.0), ref::poison_bits(c.rd()));
      EXPECT_TRUE(rz.ok) << "z (residual_out): " << testing::describe(rz);
    }
    const auto tm = ref::default_tolerance(DType::f32, ref::Quantity::mean_rstd, c.N, c.M, 3.0);
    const auto rr = ref::compare(DType::f32, rstd.data(), rstd_ref.data(), 1, c.M, c.M, c.M, tm, ref::poison_bits(DType::f32));
    EXPECT_TRUE(rr.ok) << "rstd: " << testing::describe(rr);
    if (c.norm == Norm::layer) {
      const HostTensor mean = gmean.download();
      const auto rm = ref::compare(DType::f32, mean.data(), mean_ref.data(), 1, c.M, c.M, c.M, tm, ref::poison_bits(DType::f32));
      EXPECT_TRUE(rm.ok) << "mean: " << testing::describe(rm);
    }
  }

  // Backward through the public API from the forward's z (or x), mean, rstd.
  // in_place: the residual's gradient overwrites dresidual_out (gdz).
  // `dx_kernel`: where given with `cfg`, the bwd_dx kernel that ran (e.g. its
  // max_active_clusters, its dynamic shared memory).
  void backward_and_check(const Config* cfg = nullptr, bool in_place = false,
                          const rt::LoadedKernel** dx_kernel = nullptr) {
    DeviceTensor gdx(c.x, c.M * s), gdw, gdb, gdres;
    gdx.poison();
    const bool want_dres = c.residual && (c.dres || in_place);
    if (want_dres && !in_place) {
      gdres = DeviceTensor(c.rd(), c.M * s);
      gdres.poison();
    }
    if (c.weight) {
      gdw = DeviceTensor(c.w, c.N);
      gdw.poison();
    }
    if (c.bias) {
      gdb = DeviceTensor(c.w, c.N);
      gdb.poison();
    }
    BackwardArgs a;
    a.dy = gdy.ptr();
    a.x = c.residual ? gz.ptr() : gx.ptr();
    a.weight = c.weight ? gw.ptr() : nullptr;
    a.mean = c.norm == Norm::layer ? static_cast<const float*>(gmean.ptr()) : nullptr;
    a.rstd = static_cast<const float*>(grstd.ptr());
    a.dx = gdx.ptr();
    a.dweight = c.weight ? gdw.ptr() : nullptr;
    a.dbias = c.bias ? gdb.ptr() : nullptr;
    a.M = c.M;
    a.N = c.N;
    a.dy_row_stride = a.x_row_stride = a.dx_row_stride = s;
    a.x_dtype = c.x;
    a.w_dtype = c.w;
    a.norm = c.norm;
    a.zero_centered_weight = c.zc;
    a.residual = c.residual.has_value();
    if (c.residual && c.dz) {
      a.dresidual_out = gdz.ptr();
      a.dresidual_out_row_stride = s;
    }
    a.residual_dtype = c.residual;
    a.y_dtype = c.y;
    if (want_dres) {
      a.dresidual = in_place ? gdz.ptr() : gdres.ptr();
      a.dresidual_row_stride = s;
    }
    if (cfg) {
      const rt::BwdProblem bp = rt::check_backward(a);
      rt::Runtime& runtime = rt::default_runtime();
      CUcontext ctx = nullptr;
      const rt::DeviceInfo& dev = runtime.current_device(&ctx);
      const auto& kdx = runtime.kernel(ctx, dev.arch(), gen::make_instance(bp.traits, *cfg, c.N, bp.vec));
      if (dx_kernel) *dx_kernel = &kdx;
      const rt::DwdbProblem red = rt::dwdb_problem(bp.traits, bp.want_dw, bp.want_db, *cfg, c.M);
      const Config rc = gen::default_config({Kernel::bwd_dwdb, c.w, c.N, red.rows, dev.sm_count});
      const auto& kr = runtime.kernel(ctx, dev.arch(), gen::make_instance(red.traits, rc, c.N, 1));
      rt::DeviceBuffer ws(rt::workspace_bytes(bp, *cfg));
      a.workspace = ws.ptr();
      a.workspace_bytes = ws.size();
      rt::launch_backward(kdx, &kr, *cfg, rc, a, bp);
      rt::check(rt::driver().CtxSynchronize(), "synchronize");
    } else {
      backward(a);
    }

    // The reference from the same saved input (the GPU's z: within an ulp of
    // the reference's, and the one the kernel differentiated).
    const HostTensor in = c.residual ? gz.download() : x;
    HostTensor dx_ref(c.x, c.M * s), dw_ref(c.w, c.N), db_ref(c.w, c.N), dres_ref(c.rd(), c.M * s);
    ref::BwdArgs ra;
    ra.M = c.M;
    ra.N = c.N;
    ra.dy_stride = ra.x_stride = ra.dx_stride = ra.dz_stride = s;
    ra.x_dtype = c.x;
    ra.w_dtype = c.w;
    ra.dy = dy.data();
    ra.x = in.data();
    ra.weight = c.weight ? w.data() : nullptr;
    ra.norm = c.norm;
    ra.zero_centered = c.zc;
    ra.residual = c.residual.has_value();
    ra.residual_dtype = c.rd();
    ra.dz = c.residual && c.dz ? dz.data() : nullptr;
    ra.y_dtype = c.y;
    ra.dresidual_stride = s;
    ref::norm_backward(ra, dx_ref.data(), c.weight ? dw_ref.data() : nullptr, c.bias ? db_ref.data() : nullptr,
                       want_dres ? dres_ref.data() : nullptr);
    const double dymax = max_abs(dy), rstd_max = max_abs(grstd.download());
    const HostTensor dx = gdx.download();
    const auto rdx = ref::compare(c.x, dx.data(), dx_ref.data(), c.M, c.N, s, s,
                                  ref::default_tolerance(c.x, ref::Quantity::dx, c.N, c.M, rstd_max * wmag() * dymax),
                                  ref::poison_bits(c.x));
    EXPECT_TRUE(rdx.ok) << "dx: " << testing::describe(rdx);
    if (want_dres) {
      // The same values in the residual's dtype (rounded once from fp32, not through x's dtype).
      const HostTensor dres = in_place ? gdz.download() : gdres.download();
      const double dzmax = c.dz ? max_abs(dz) : 0.0;
      const auto rr = ref::compare(
          c.rd(), dres.data(), dres_ref.data(), c.M, c.N, s, s,
          ref::default_tolerance(c.rd(), ref::Quantity::dx, c.N, c.M, rstd_max * wmag() * dymax + dzmax),
          ref::poison_bits(c.rd()));
      EXPECT_TRUE(rr.ok) << "dresidual" << (in_place ? " (in place over dresidual_out)" : "") << ": "
                         << testing::describe(rr);
      if (in_place) gdz.upload(dz);  // dresidual_out again, for another run
    }
    const auto tw = ref::default_tolerance(c.w, ref::Quantity::dweight, c.N, c.M, dymax);
    if (c.weight) {
      const HostTensor dw = gdw.download();
      const auto rw = ref::compare(c.w, dw.data(), dw_ref.data(), 1, c.N, c.N, c.N, tw, ref::poison_bits(c.w));
      EXPECT_TRUE(rw.ok) << "dweight: " << testing::describe(rw);
    }
    if (c.bias) {
      const HostTensor db = gdb.download();
      const auto rb = ref::compare(c.w, db.data(), db_ref.data(), 1, c.N, c.N, c.N, tw, ref::poison_bits(c.w));
      EXPECT_TRUE(rb.ok) << "dbias: " << testing::describe(rb);
    }
  }
};

// Every norm x dtype x option: plain, residual (x's dtype; fp32 for 16-bit
// x, also without dz), zero-centred, output dtype, all at once; RMSNorm also
// without weight and bias, and with a weight only (its usual form).
std::vector<VCase> variant_cases() {
  std::vector<VCase> out;
  struct Shape {
    std::int64_t M, N, pad;
  };
  const Shape shapes[] = {{67, 37, 5}, {33, 4099, 3}, {7, 20001, 0}};
  for (Norm norm : {Norm::layer, Norm::rms})
    for (DType d : {DType::f32, DType::f16, DType::bf16}) {
      const DType other = d == DType::f32 ? DType::bf16 : DType::f32;
      std::vector<VCase> opts;
      VCase base;
      base.norm = norm;
      base.x = d;
      base.w = d == DType::f16 ? DType::f32 : d;  // fp16 rows with fp32 weights
      if (norm == Norm::rms) base.bias = false;
      opts.push_back(base);
      VCase v = base;
      v.residual = d;
      opts.push_back(v);
      if (d != DType::f32) {
        v.residual = DType::f32;
        opts.push_back(v);
        v.dz = false;
        v.dres = false;
        opts.push_back(v);
      }
      v = base;
      v.zc = true;
      opts.push_back(v);
      v = base;
      v.y = other;
      opts.push_back(v);
      v = base;
      v.residual = DType::f32;
      v.zc = true;
      v.y = other;
      v.bias = true;
      opts.push_back(v);
      if (norm == Norm::rms) {
        v = base;
        v.weight = false;
        opts.push_back(v);
      }
      for (const Shape& sh : shapes)
        for (VCase c : opts) {
          c.M = sh.M;
          c.N = sh.N;
          c.pad = sh.pad;
          out.push_back(c);
        }
    }
  // A fused residual add in x's dtype (RMSNorm without a bias).
  // The fused form in dtype d (x, weight, residual), rows padded by `pad`
  // elements (strided) where given.
  const auto fused = [](DType d, Norm norm, std::int64_t M, std::int64_t N, std::int64_t pad = 0) {
    VCase c;
    c.x = c.w = d;
    c.residual = d;
    c.norm = norm;
    c.bias = norm == Norm::layer;
    c.M = M;
    c.N = N;
    c.pad = pad;
    return c;
  };
  // Long rows at the wide kernels' defaults (bench/results/h100_2026-11-25):
  // fp32 rows with an fp32 residual (the forward's residual slot at 256K
  // columns; the backward's 16 warps, 2 stages at 64K), and 16-bit
  // LayerNorm rows of 256K columns (the wide forward's full slabs, the
  // backward's 3 stages).
  for (Norm norm : {Norm::layer, Norm::rms})
    for (std::int64_t n : {65536, 262144}) {
      VCase c;
      c.norm = norm;
      c.x = c.w = DType::f32;
      c.residual = DType::f32;
      if (norm == Norm::rms) c.bias = false;
      c.M = n == 65536 ? 21 : 9;
      c.N = n;
      out.push_back(c);
    }
  for (DType d : {DType::bf16, DType::f16}) {
    VCase c;
    c.x = c.w = d;
    c.M = 8;
    c.N = 262144;
    out.push_back(c);
  }
  // Rows whose defaults take clusters of other than a power of two
  // (gen::wide_clusters).
  {
    // Rows of 40000 columns: the backward's 5 slabs of 8192 (16-bit at two
    // CTAs a SM), the 16-bit forward's 3 slabs of 16384.
    VCase c;
    c.x = c.w = DType::bf16;
    c.M = 300;
    c.N = 40000;
    out.push_back(c);
    c.x = c.w = DType::f32;
    c.M = 45;
    out.push_back(c);
    // With a residual there (gen::gap_fwd_default and the backward's last
    // resort): fp32 LayerNorm beside an fp32 residual, 5 slabs of 8192 both
    // ways; RMSNorm bf16 beside a bf16 residual.
    c.residual = DType::f32;
    c.M = 23;
    out.push_back(c);
    out.push_back(fused(DType::bf16, Norm::rms, 37, 40000));
  }
  // 13 CTAs at N = 100000 and 200000, 7 for the forward at 100000; RMSNorm
  // with a residual, LayerNorm in fp32.
  for (std::int64_t n : {100000, 200000}) {
    out.push_back(fused(DType::bf16, Norm::rms, 11, n));
    VCase f;
    f.x = f.w = DType::f32;
    f.M = 7;
    f.N = n;
    out.push_back(f);
  }
  // bf16 LayerNorm at N = 150000: the forward's slabs in shared memory over
  // 10 CTAs, the backward's wide kernel over 10 (3 stages).
  {
    VCase c;
    c.x = c.w = DType::bf16;
    c.M = 5;
    c.N = 150000;
    out.push_back(c);
  }
  // Session 42's rules of a GPU whose memory outruns its SMs (an H200; an
  // H100 takes its own rules at the same shapes): over more than 8192 rows,
  // the 16-bit forward's 32 elements a thread at 640 and 2560 columns,
  // RMSNorm's 4096-column tiles at 4608, the fp32 backward's two CTAs a SM
  // at 1152 and 2304 and whole row at 7168; four 8192-column slabs for the
  // fp32 backward at 30720; the wide backward's fine split at 150000 (fp32:
  // 15 slabs of 10240) and 170000 (14 of 12288 in 32 warps); the wide
  // backward's equal slabs just above 8192 columns.
  for (const auto& [d, norm, M, N] : std::vector<std::tuple<DType, Norm, std::int64_t, std::int64_t>>{
           {DType::bf16, Norm::layer, 8200, 640},
           {DType::f16, Norm::layer, 8200, 2560},
           {DType::bf16, Norm::rms, 8200, 4608},
           {DType::f32, Norm::layer, 8200, 1152},
           {DType::f32, Norm::rms, 8200, 2304},
           {DType::f32, Norm::layer, 8200, 7168},
           {DType::f32, Norm::layer, 9, 30720},
           {DType::f32, Norm::layer, 7, 150000},
           {DType::f32, Norm::rms, 5, 170000},
           // rows just above 8192 columns: bf16 over two slabs of 6144,
           // fp32 over three equal slabs (3072 at 9216, 3584 at 10240)
           {DType::bf16, Norm::layer, 37, 9216},
           {DType::f16, Norm::rms, 29, 12288},
           {DType::f32, Norm::layer, 37, 10240},
           {DType::f32, Norm::rms, 23, 9216},
           // Session 43's forward tiles of other than a power of two
           // (16-bit, over more than 8192 rows): LayerNorm 5120 (registers,
           // 8-byte accesses), 9216 in 10240 and 18432 (shared memory);
           // RMSNorm 2304 in 3072, 10240 in 12288 (16 warps).
           {DType::bf16, Norm::layer, 8200, 5120},
           {DType::f16, Norm::layer, 8200, 9216},
           {DType::bf16, Norm::layer, 8193, 18432},
           {DType::bf16, Norm::rms, 8200, 2304},
           {DType::f16, Norm::rms, 8200, 10240},
           // and (call 3) LayerNorm 22528 (shared memory), RMSNorm 1280 in
           // 1536 and 7168 in 8192; the fp32 backward's tile of 6144 at 4608
           {DType::bf16, Norm::layer, 8193, 22528},
           {DType::bf16, Norm::rms, 8200, 1280},
           {DType::f16, Norm::rms, 8200, 7168},
           {DType::f32, Norm::layer, 8200, 4608},
           // LayerNorm 2816 in 3072 of 4 warps, RMSNorm 18432 in 20480 of
           // 16 (shared memory); the 16-bit backward at 1152 (a tile of 2048,
           // three of four warps' second access past the row's end)
           {DType::f16, Norm::layer, 8200, 2816},
           {DType::bf16, Norm::rms, 8193, 18432},
           {DType::bf16, Norm::layer, 8200, 1152},
           // Session 44's rows of other than a power of two of threads (16
           // bits, the tile of exactly N): the backward at 1152 (9 warps of
           // 2 rows; over 16-48 rows an SM 4 rows), 1536, 2304 (over 16-48
           // rows an SM 18 warps of 2), 2560 (5 warps; 10 of 2), 3072,
           // 6144; the forward at 1152 (3 warps of 2 rows) and 1280 (5 of
           // 4). (Above: 1152, 1280, 2304, 2560, 4608 and 5120 take them
           // too.)
           {DType::f16, Norm::rms, 8200, 1152},
           {DType::bf16, Norm::rms, 3001, 1152},
           {DType::bf16, Norm::layer, 8200, 1536},
           {DType::bf16, Norm::layer, 4096, 2304},
           {DType::f16, Norm::layer, 4099, 2560},
           {DType::bf16, Norm::layer, 8200, 3072},
           {DType::f16, Norm::layer, 8200, 6144},
           {DType::bf16, Norm::layer, 8200, 1280},
           // (call 3) 1408 (11 warps of 2 rows), 2816 (22 of 2), 3584 (14
           // of 2); 4097-8191 by rule (7168 above: 14 warps)
           {DType::bf16, Norm::layer, 8200, 1408},
           {DType::bf16, Norm::rms, 8200, 2816},
           {DType::f16, Norm::layer, 8200, 3584},
           // (call 7) over 16-48 rows an SM: 1280 in 10 warps of 4 rows,
           // 1536 in 6 of 2
           {DType::bf16, Norm::layer, 4096, 1280},
           {DType::f16, Norm::rms, 5000, 1536}}) {
    VCase c;
    c.x = c.w = d;
    c.norm = norm;
    c.bias = norm == Norm::layer;
    c.M = M;
    c.N = N;
    out.push_back(c);
  }
  // Fused rows of 8193-16384 columns (bench/results/h200x2_2026-11-24, call
  // 9): the forward's whole row in shared memory (LayerNorm + add, fp32
  // RMSNorm + add), the 16-bit backward's 32 warps and 4 stages.
  out.push_back(fused(DType::bf16, Norm::layer, 33, 16384));
  out.push_back(fused(DType::f32, Norm::rms, 33, 16384));
  // (session 46) the forward's row of 12289-16384 columns in registers for
  // LayerNorm + add (16 warps; fp32 strided) and 16-bit RMSNorm (32 warps).
  out.push_back(fused(DType::f32, Norm::layer, 301, 13000, 4));
  {
    VCase r;
    r.norm = Norm::rms;
    r.x = r.w = DType::bf16;
    r.bias = false;
    r.M = 8200;
    r.N = 16384;
    out.push_back(r);
  }
  out.push_back(fused(DType::bf16, Norm::rms, 33, 12288));
  // fp32 rows of 4096-8192 columns over more than 8192 rows: the wide
  // backward's default in clusters of two (bench/results/h200x2_2026-11-24,
  // call 7), with and without the residual; on an H200 LayerNorm + add of
  // 4097-8192 columns in 16 warps, its z, dy and dz staged (192 KB;
  // bench/results/s45, call 2): also 5001 columns (4-byte copies), strided.
  for (std::int64_t n : {4096, 8192, 5001}) {
    VCase c;
    c.x = c.w = DType::f32;
    c.residual = DType::f32;
    c.M = 8193;
    c.N = n;
    if (n == 5001) c.pad = 3;
    out.push_back(c);
    if (n == 8192) {
      c.residual.reset();
      c.norm = Norm::rms;
      c.bias = false;
      out.push_back(c);
    }
  }
  // The fused 16-bit backward over more than 8192 rows, with dz loaded
  // beside x and dy (bench/results/h100_2026-11-25b, calls 2-5): LayerNorm's
  // 16 columns a thread in 512 threads (rows of 1000 columns, 8 a CTA, the
  // last CTA's slots partly past M; without dz too), 8000 columns over a
  // cluster of two; RMSNorm's 1024 threads (200 and 4096 columns, strided).
  out.push_back(fused(DType::bf16, Norm::layer, 8193, 1000));
  VCase no_dz = fused(DType::bf16, Norm::layer, 8193, 1000);
  no_dz.dz = false;
  out.push_back(no_dz);
  out.push_back(fused(DType::bf16, Norm::layer, 8193, 8000));
  out.push_back(fused(DType::f16, Norm::rms, 8193, 4096, 8));
  out.push_back(fused(DType::bf16, Norm::rms, 9001, 200));
  // The fused backward's rows of other than a power of two of threads over
  // more than 48 rows an SM (an H200's defaults, session 45): 2304 columns
  // in rows of 288 threads, two a CTA; 4608 in 288 (RMSNorm, strided).
  out.push_back(fused(DType::bf16, Norm::layer, 6401, 2304));
  out.push_back(fused(DType::bf16, Norm::rms, 6401, 4608, 8));
  // The fused 16-bit backward with dz staged beside x and dy in the wide
  // kernel (an H200's defaults, session 46): 32768 columns in four
  // 8192-column slabs (without dz too: the stages then hold x and dy
  // alone), 65536 in eight (RMSNorm, strided), 131072 in eight of 16384;
  // on other GPUs what their rules pick.
  VCase w32 = fused(DType::bf16, Norm::layer, 301, 32768);
  out.push_back(w32);
  w32.dz = false;
  out.push_back(w32);
  out.push_back(fused(DType::f16, Norm::rms, 157, 65536, 8));
  out.push_back(fused(DType::bf16, Norm::layer, 61, 131072));
  // (call 5) 262144 in sixteen 16384-column slabs at 2 stages; RMSNorm +
  // add of 16384 columns, 8 warps, 3 stages (strided).
  out.push_back(fused(DType::bf16, Norm::layer, 19, 262144));
  out.push_back(fused(DType::bf16, Norm::rms, 301, 16384, 8));
  // (call 7) fp32 + add of 4097-8192 columns in 16 warps from 16 rows an
  // SM: 8192 over 4096 rows (RMSNorm), 6000 strided over 2200.
  out.push_back(fused(DType::f32, Norm::rms, 4096, 8192));
  out.push_back(fused(DType::f32, Norm::layer, 2200, 6000, 4));
  // 16-bit rows beside an fp32 residual stream (an H200's defaults, session
  // 47): 8192-column slabs in 8 warps at 2 stages, dz staged, at 16384 (two
  // slabs, strided), 65536 (eight; RMSNorm, fp16) and 131072 (sixteen, M not
  // a multiple of the 7 clusters); 262144 in sixteen 16384-column slabs in
  // 16 warps, dz through L2 (without dz too).
  const auto stream = [&](DType d, Norm norm, std::int64_t M, std::int64_t N, std::int64_t pad = 0) {
    VCase c = fused(d, norm, M, N, pad);
    c.residual = DType::f32;
    return c;
  };
  out.push_back(stream(DType::bf16, Norm::layer, 301, 16384, 8));
  out.push_back(stream(DType::f16, Norm::rms, 157, 65536));
  out.push_back(stream(DType::bf16, Norm::layer, 61, 131072));
  VCase s262 = stream(DType::bf16, Norm::rms, 19, 262144);
  out.push_back(s262);
  s262.dz = false;
  out.push_back(s262);
  // The fused backward at training sizes (16-48 rows a SM on an H200: two
  // CTAs a SM of 4 warps, dW/dB finished in the kernel over 264 partial
  // rows, session 49): a residual in x's dtype and an fp32 one, odd N.
  out.push_back(fused(DType::bf16, Norm::layer, 4096, 1000, 3));
  out.push_back(fused(DType::f16, Norm::rms, 2500, 600));
  // 16-bit add + RMSNorm of 8193-12287 columns from 16 rows an SM: the
  // 12288-column tile in 16 warps, partly masked (session 58), strided.
  out.push_back(fused(DType::bf16, Norm::rms, 2200, 9000, 8));
  out.push_back(fused(DType::f16, Norm::rms, 4096, 11000));
  out.push_back(stream(DType::bf16, Norm::layer, 4096, 1024));
  // fp32 rows without a residual at training sizes (an H200's defaults,
  // session 50: two CTAs a SM of 4 warps, 2 rows, up to 1024 columns; one
  // of 8 warps at 2048; dW/dB finished in the kernel): LayerNorm of odd N,
  // strided, and RMSNorm.
  const auto plain = [&](DType d, Norm norm, std::int64_t M, std::int64_t N, std::int64_t pad = 0) {
    VCase c = fused(d, norm, M, N, pad);
    c.residual.reset();
    return c;
  };
  out.push_back(plain(DType::f32, Norm::layer, 4096, 1000, 3));
  out.push_back(plain(DType::f32, Norm::rms, 3001, 700));
  out.push_back(plain(DType::f32, Norm::layer, 6000, 2047));
  // Past 48 rows a SM (an H200's defaults, session 50): 16-bit 513-1024
  // columns in four CTAs a SM of 4 warps (528 partial rows, bwd_dwdb after),
  // RMSNorm strided; 2048 in two of 8 warps; 4096 in one of 16 warps.
  out.push_back(plain(DType::bf16, Norm::layer, 16384, 1000));
  out.push_back(plain(DType::f16, Norm::rms, 12001, 1024, 8));
  out.push_back(plain(DType::bf16, Norm::layer, 9001, 2048));
  out.push_back(plain(DType::bf16, Norm::layer, 20000, 3000, 4));
  // The decode forward (an H200's defaults, session 51): 8192-16384 columns
  // a row a CTA of 32 warps up to a row an SM (odd N, fp32, add + RMSNorm),
  // 16 warps up to two (strided); 32768 and 65536 columns over up to 8 rows
  // in clusters of 4096-column slabs (strided).
  out.push_back(plain(DType::bf16, Norm::layer, 5, 12000));
  out.push_back(plain(DType::f32, Norm::layer, 1, 9001));
  out.push_back(fused(DType::bf16, Norm::rms, 7, 16000));
  out.push_back(plain(DType::f16, Norm::layer, 200, 16384, 8));
  out.push_back(plain(DType::bf16, Norm::layer, 3, 65536));
  out.push_back(plain(DType::f16, Norm::layer, 8, 32768, 8));
  // Past two rows an SM to 32 (16-bit LayerNorm): 16384 columns in 16 warps,
  // 12288 in 12 (strided), 8192 in 8 from four rows an SM to M = 8192.
  out.push_back(plain(DType::bf16, Norm::layer, 1001, 16384));
  out.push_back(plain(DType::f16, Norm::layer, 3001, 12288, 8));
  out.push_back(plain(DType::bf16, Norm::layer, 6001, 8192));
  out.push_back(plain(DType::bf16, Norm::layer, 30001, 12288, 8));  // 12288 in 12 warps at any M past two rows an SM
  // (session 52) the fused 16-bit forward of 12288 columns from 16 rows an
  // SM: in 16 warps (add + LayerNorm; add + RMSNorm strided), beside an
  // fp32 stream on the 16384-column tile in 32 warps (add + LayerNorm);
  // LayerNorm 1024 in four rows a CTA of 4 warps past 16 rows an SM to 32
  // (strided), 3072 on the 4096-column tile in 4 warps at 16-48 (strided);
  // 16384 columns in 16 warps past 32 rows an SM (strided). The decode rule
  // for add + LayerNorm (12288: the 16384-column tile in 32 warps) and
  // RMSNorm (fp32, odd N; past a row an SM its rules before).
  out.push_back(fused(DType::bf16, Norm::layer, 2201, 12288));
  out.push_back(fused(DType::f16, Norm::rms, 3001, 12288, 8));
  out.push_back(stream(DType::bf16, Norm::layer, 2201, 12288));
  out.push_back(plain(DType::bf16, Norm::layer, 4001, 1024, 8));
  out.push_back(plain(DType::f16, Norm::layer, 3001, 3072, 8));
  out.push_back(plain(DType::bf16, Norm::layer, 5001, 16384, 8));
  out.push_back(fused(DType::bf16, Norm::layer, 3, 12288));
  out.push_back(plain(DType::f32, Norm::rms, 1, 12000));
  out.push_back(plain(DType::bf16, Norm::rms, 200, 16384));
  // Every 16-bit form of 1024 columns four rows a CTA past 16 rows an SM to 32:
  // add + LayerNorm (strided), add + RMSNorm, RMSNorm (strided), add +
  // LayerNorm beside an fp32 stream.
  out.push_back(fused(DType::f16, Norm::layer, 3001, 1024, 8));
  out.push_back(fused(DType::bf16, Norm::rms, 4096, 1024));
  out.push_back(plain(DType::bf16, Norm::rms, 4001, 1024, 8));
  out.push_back(stream(DType::bf16, Norm::layer, 2500, 1024));
  // fp32 LayerNorm of 1024 columns likewise (strided; RMSNorm too where its
  // rule takes it); 16-bit RMSNorm of 3072 columns on the exact tile in 4
  // warps at 16-48 rows an SM (strided).
  out.push_back(plain(DType::f32, Norm::layer, 3001, 1024, 4));
  out.push_back(plain(DType::f32, Norm::rms, 4096, 1024));
  out.push_back(plain(DType::bf16, Norm::rms, 5001, 3072, 8));
  // (session 53) the fused forms' rows of 4096 and 8192 columns past 64 rows
  // an SM, two rows a CTA of 32 elements a thread: 16-bit add + LayerNorm
  // (4096 strided), fp32 add + RMSNorm 8192 (strided); M odd, so the last
  // CTA holds one row.
  out.push_back(fused(DType::f16, Norm::layer, 8501, 4096, 8));
  out.push_back(fused(DType::bf16, Norm::layer, 8501, 8192));
  out.push_back(fused(DType::f32, Norm::rms, 8501, 8192, 8));
  // The 16-bit add + RMSNorm forward of 4096 columns past 256 rows a SM
  // (addrms-fwd-4096.patch): 4 warps, 32 elements a thread.
  out.push_back(fused(DType::bf16, Norm::rms, 33793, 4096));
  // The fused form there (to 128 rows a SM): 1024 columns in two CTAs a SM
  // of 4 warps (strided), 4096 in one of 16 warps (RMSNorm).
  out.push_back(fused(DType::bf16, Norm::layer, 16000, 1000, 3));
  out.push_back(fused(DType::f16, Norm::rms, 10000, 4096));
  // (call 12) beside an fp32 stream: 2048 in one CTA a SM of 8 warps; RMSNorm
  // of 2048 columns in two.
  out.push_back(stream(DType::bf16, Norm::layer, 12000, 2000));
  out.push_back(plain(DType::bf16, Norm::rms, 16384, 2048));
  // (session 59) the forward of 768-1023 columns on the 1024-column tile
  // at 16-32 rows an SM (odd N; add + RMSNorm strided), 16-bit LayerNorm of
  // 6145-8191 columns on the 8192-column tile in 8 warps (strided); the
  // fused 16-bit backward of 16385-24576 columns over three 8192-column
  // slabs, the last partial (add + RMSNorm odd N, add + LayerNorm strided);
  // fp32 2305-3584 columns at training rows, 8 columns a thread, 2 rows
  // (2560 and 2816 on their own tiles, RMSNorm strided; 3200 on 4096).
  out.push_back(plain(DType::bf16, Norm::layer, 4096, 777));
  out.push_back(fused(DType::f16, Norm::rms, 3001, 800, 8));
  out.push_back(plain(DType::bf16, Norm::layer, 6000, 7001, 8));
  out.push_back(fused(DType::bf16, Norm::rms, 4096, 18433));
  out.push_back(fused(DType::f16, Norm::layer, 3001, 20000, 8));
  out.push_back(plain(DType::f32, Norm::layer, 4096, 2560));
  out.push_back(plain(DType::f32, Norm::rms, 3001, 2816, 4));
  out.push_back(plain(DType::f32, Norm::layer, 5000, 3200));
  // (session 59, call 5) 16-bit 1280 columns at training rows (the forward
  // on the 2048-column tile in 2 warps, the backward in 5 warps of 2 rows,
  // two CTAs a SM; RMSNorm strided), the fused backward there on the row's
  // own tile (1280, 2560, 4608, 5120), and 10240 / 11264 columns over two
  // exact halves at 2 stages.
  out.push_back(plain(DType::bf16, Norm::layer, 4000, 1280));
  out.push_back(plain(DType::f16, Norm::rms, 3001, 1280, 8));
  out.push_back(fused(DType::bf16, Norm::rms, 4096, 1280));
  out.push_back(fused(DType::f16, Norm::layer, 3001, 2560, 8));
  out.push_back(fused(DType::bf16, Norm::rms, 4096, 4608));
  out.push_back(fused(DType::bf16, Norm::layer, 5000, 5120, 8));
  out.push_back(plain(DType::bf16, Norm::layer, 4096, 10240));
  out.push_back(plain(DType::f16, Norm::rms, 3001, 11264, 8));
  // (training-rules-2) 16-bit LayerNorm 14337-16383 on the 16384 tile in 16
  // warps, RMSNorm 12801-14848 on 4096-column tiles (odd N), fp32 LayerNorm
  // 4097-6143 on N rounded up to 1024 in 8 warps, add + RMSNorm 16385-20480
  // on N rounded up to 4096 (strided); the backward: RMSNorm 4096 in 16
  // warps of 2 rows (strided), add + RMSNorm 8193-9216 over clusters of 2
  // (9216 strided); bwd_dwdb of 129-256 columns over 528 or more partial
  // rows, 32 columns a CTA (odd N strided).
  out.push_back(plain(DType::bf16, Norm::layer, 4096, 15000, 8));
  out.push_back(plain(DType::f16, Norm::rms, 3001, 13313));
  out.push_back(plain(DType::f32, Norm::layer, 4096, 4609));
  out.push_back(fused(DType::f16, Norm::rms, 3001, 17000, 8));
  out.push_back(plain(DType::f16, Norm::rms, 3001, 4096, 8));
  out.push_back(fused(DType::bf16, Norm::rms, 4096, 8704));
  out.push_back(fused(DType::f16, Norm::rms, 3001, 9216, 8));
  out.push_back(plain(DType::bf16, Norm::layer, 4096, 256));
  out.push_back(plain(DType::f16, Norm::rms, 8000, 250, 8));
  // (session 60) 16-bit LayerNorm forward 8193-9216 on the 9216 tile in 9
  // warps (odd N), RMSNorm forward from 12289 on 4096-column tiles
  // (strided), RMSNorm backward 3073-3583 on the 4096 tile in 16 warps
  // (odd N), the backward of 8193-10239 over the even split at 2 stages
  // (strided).
  out.push_back(plain(DType::bf16, Norm::layer, 4096, 8705));
  out.push_back(plain(DType::f16, Norm::rms, 3001, 12545, 8));
  out.push_back(plain(DType::bf16, Norm::rms, 4096, 3201));
  out.push_back(plain(DType::f16, Norm::layer, 3001, 9728, 8));
  return out;
}

class Variants : public ::testing::TestWithParam<VCase> {};

TEST_P(Variants, ForwardAndBackwardMatchReference) {
  LNTUNE_REQUIRE_GPU();
  // The default heuristic's configs, whatever the user cache holds: the
  // variants above name the defaults they cover (`lntune verify` checks
  // tuned records). Restored on the way out, so no other test inherits it.
  rt::Runtime& runtime = rt::default_runtime();
  struct RestoreTuned {
    rt::Runtime& r;
    bool was;
    ~RestoreTuned() { r.set_tuned(was); }
  } restore{runtime, runtime.tuned()};
  runtime.set_tuned(false);
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed()));
  NormRun run(GetParam(), rng);
  run.forward_and_check();
  run.backward_and_check();
}

INSTANTIATE_TEST_SUITE_P(Norms, Variants, ::testing::ValuesIn(variant_cases()),
                         [](const ::testing::TestParamInfo<VCase>& i) { return i.param.name(); });

// The current GPU, and why the wide-row backward cannot run there (empty
// where it can: sm_90 and later).
std::string wide_backward_unavailable(const rt::DeviceInfo** dev) {
  CUcontext ctx = nullptr;
  *dev = &rt::default_runtime().current_device(&ctx);
  if ((*dev)->cc_major < 9) return "the wide-row backward needs sm_90 (clusters, bulk copies); " + (*dev)->arch();
  return {};
}

// A wide-row case: rows and weight in `x`, the residual too where there is
// one, LayerNorm with a bias.
VCase wide_case(Norm norm, bool residual, DType x, std::int64_t M, std::int64_t N, std::int64_t pad) {
  VCase c;
  c.norm = norm;
  c.x = c.w = x;
  c.bias = norm == Norm::layer;
  if (residual) c.residual = x;
  c.M = M;
  c.N = N;
  c.pad = pad;
  return c;
}

// The wide backward at two CTAs a SM (16-bit rows and weight in 8192-column
// slabs, 8 warps: the fast-memory default of 8193-65536 columns,
// generator/space.cpp), each variant: the grid of twice the clusters that
// fit at one CTA a SM, which the launcher fits to the clusters that run at
// once, must run two a SM (the generator's shared-memory model) and be
// correct with each cluster's ring of stages wrapping several times.
TEST(Norms, WideBackwardAtTwoCtasASm) {
  LNTUNE_REQUIRE_GPU();
  const rt::DeviceInfo* gpu = nullptr;
  if (const std::string why = wide_backward_unavailable(&gpu); !why.empty()) GTEST_SKIP() << why;
  const rt::DeviceInfo& dev = *gpu;
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed()));
  struct Pick {
    Norm norm;
    bool residual;
    DType x;
    std::int64_t M, N, pad;
  };
  for (const Pick& k : {Pick{Norm::layer, false, DType::bf16, 700, 16384, 8}, Pick{Norm::rms, false, DType::f16, 700, 16384, 0},
                        Pick{Norm::layer, true, DType::bf16, 500, 16384, 0}, Pick{Norm::rms, true, DType::bf16, 500, 12288, 8},
                        Pick{Norm::layer, false, DType::f16, 200, 32768, 0}, Pick{Norm::rms, true, DType::bf16, 100, 65536, 0}}) {
    const VCase c = wide_case(k.norm, k.residual, k.x, k.M, k.N, k.pad);
    const int cluster = c.N <= 16384 ? 2 : c.N <= 32768 ? 4 : 8;
    const Config cfg{8192, 8, k.residual ? 2 : 3, 2 * (dev.sm_count / cluster), cluster};
    SCOPED_TRACE(c.name() + " " + to_string(cfg));
    NormRun run(c, rng);
    run.forward_and_check();
    const rt::LoadedKernel* kdx = nullptr;
    run.backward_and_check(&cfg, false, &kdx);
    const int coresident = kdx->max_active_clusters;
    EXPECT_GT(coresident, dev.sm_count / cluster) << "two CTAs a SM did not fit: " << coresident << " clusters run at once";
    std::printf("[ two/SM   ] %s: %d clusters of %d run at once\n", c.name().c_str(), coresident, cluster);
  }
}

// The wide backward in slabs of other than a power of two of threads
// (session 46): 9216 columns as two slabs of 4608 in 9 or 18 warps, 17408
// as two of 8704 in 17; LayerNorm (strided), RMSNorm, and the fused add with
// dz staged; every thread the same count of accesses.
TEST(Norms, WideBackwardOddWarps) {
  LNTUNE_REQUIRE_GPU();
  const rt::DeviceInfo* gpu = nullptr;
  if (const std::string why = wide_backward_unavailable(&gpu); !why.empty()) GTEST_SKIP() << why;
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed()));
  const std::pair<VCase, Config> picks[] = {
      {wide_case(Norm::layer, false, DType::bf16, 301, 9216, 8), Config{4608, 9, 3, 132, 2}},
      {wide_case(Norm::rms, false, DType::f16, 257, 9216, 0), Config{4608, 18, 4, 66, 2}},
      {wide_case(Norm::layer, true, DType::bf16, 263, 9216, 0), Config{4608, 9, 3, 132, 2}},
      {wide_case(Norm::layer, false, DType::f16, 199, 17408, 8), Config{8704, 17, 2, 66, 2}},
      {wide_case(Norm::rms, true, DType::bf16, 131, 17408, 0), Config{8704, 17, 3, 66, 2}}};
  for (const auto& [c, cfg] : picks) {
    SCOPED_TRACE(c.name() + " " + to_string(cfg));
    NormRun run(c, rng);
    run.forward_and_check();
    run.backward_and_check(&cfg);
  }
}

// The register backward's space points of 9-15 warps that stage their rows
// (bwd_dx.cuh, staged_bwd), with the fused traits that stage the most: the
// finishing entry's tree takes 32 bytes a thread there (12 KB at 12 warps),
// and since 12ecf98 the rows that no longer fit static shared memory beside
// it stage in dynamic shared memory (session 56's cold tune: ptxas refused
// 16-bit RMSNorm + add at 768 columns in 4 rows and 3072 in 1). Every such
// point of the default N grid at M = 1000 (several rows a CTA, the finish in
// the kernel where the grid fits), against the reference; nvrtc_test only
// compiles them.
TEST(Norms, FusedBackwardOfNineToFifteenWarpsStagesRows) {
  LNTUNE_REQUIRE_GPU();
  rt::Runtime& runtime = rt::default_runtime();
  CUcontext ctx = nullptr;
  const rt::DeviceInfo& dev = runtime.current_device(&ctx);
  const int cc = dev.cc_major * 10 + dev.cc_minor;
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed()));
  VCase rms;
  rms.x = rms.w = DType::bf16;
  rms.residual = DType::bf16;
  rms.norm = Norm::rms;
  rms.bias = false;
  VCase ln;
  ln.x = DType::f16;
  ln.w = DType::f32;
  ln.residual = DType::f32;
  ln.zc = true;
  int checked = 0, dynamic = 0;
  for (VCase c : {rms, ln}) {
    c.M = 1000;
    Traits t{Kernel::bwd_dx, c.x, c.w, true, c.bias};
    t.norm = c.norm;
    t.residual = c.residual;
    t.zero_centered = c.zc;
    for (std::int64_t n : gen::default_n_grid()) {
      std::vector<Config> picks;
      for (const Config& cfg : gen::search_space({Kernel::bwd_dx, c.x, n, c.M, dev.sm_count, cc})) {
        if (cfg.num_warps < 9 || cfg.num_warps > 15 || gen::is_wide_bwd(Kernel::bwd_dx, cfg)) continue;
        try {
          if (gen::stages_bwd_rows(gen::make_instance(t, cfg, n, gen::max_vec(c.x)), cc)) picks.push_back(cfg);
        } catch (const Error&) {
          // invalid for these traits (the space lists it as such)
        }
      }
      if (picks.empty()) continue;
      c.N = n;
      NormRun run(c, rng);
      run.forward_and_check();
      for (const Config& cfg : picks) {
        SCOPED_TRACE(c.name() + " " + to_string(cfg));
        const rt::LoadedKernel* k = nullptr;
        run.backward_and_check(&cfg, false, &k);
        dynamic += k->dynamic_smem > 0;
        ++checked;
      }
    }
  }
  std::printf("[ configs  ] %d fused bwd_dx configs of 9-15 warps staging rows checked, %d staging dynamically\n", checked,
              dynamic);
  EXPECT_GE(checked, 4) << "session 56's four failing instances are among these points";
  EXPECT_GT(dynamic, 0) << "no config staged its rows in dynamic shared memory";
}

// Every config of the search space (single tile, rows per CTA, tiled,
// clusters), not only the default, is correct for the variants.
struct SpaceCase {
  // 0: RMSNorm, fp32 residual, zero-centred, fp32 out; 1: LayerNorm, bf16
  // residual, zero-centred; without a residual, where the backward stages
  // rows in shared memory (bwd_dx.cuh, staged_bwd): 2: LayerNorm,
  // zero-centred, fp32 out (dy's accesses twice x's bytes: 32-byte copies
  // split in two at N = 1000; 4- and 8-byte copies at N = 2002); 3: RMSNorm,
  // fp32 x, bf16 out (N = 2001: 4- and 2-byte accesses, the latter not staged);
  // 4: LayerNorm fp32, N = 4095 (4-byte copies; one row of 4096 columns
  // stages 64 KB, above the 48 KB a launch gets unasked; at M = 300 these
  // configs take the two-kernel path: gpu_test's
  // FinishingEntryStagesRowsInDynamicSharedMemory runs the finishing entry).
  int variant;
  std::int64_t N;
  Kernel kernel;
  // At least one single tile of other than a power of two must run (the
  // space's tiles at N that are not powers of two, session 43).
  bool tiles = false;
  // At least one config whose rows are other than a power of two of
  // threads must run (gen::has_segmented_rows, session 44).
  bool segmented = false;
};
void PrintTo(const SpaceCase& c, std::ostream* os) {
  *os << "v" << c.variant << "_N" << c.N << "_" << to_string(c.kernel);
}

class VariantSpace : public ::testing::TestWithParam<SpaceCase> {};

TEST_P(VariantSpace, EveryConfigIsCorrect) {
  LNTUNE_REQUIRE_GPU();
  const SpaceCase sc = GetParam();
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed()));
  VCase c;
  c.x = DType::bf16;
  c.w = DType::f32;
  c.zc = true;
  if (sc.variant == 0) {
    c.norm = Norm::rms;
    c.residual = DType::f32;
    c.y = DType::f32;
    c.bias = false;
  } else if (sc.variant == 1) {
    c.residual = DType::bf16;
  } else if (sc.variant == 2) {
    c.y = DType::f32;
  } else if (sc.variant == 3) {
    c.norm = Norm::rms;
    c.x = c.w = DType::f32;
    c.y = DType::bf16;
    c.zc = false;
    c.bias = false;
  } else {
    c.x = c.w = DType::f32;
    c.zc = false;
  }
  c.M = 300;
  c.N = sc.N;
  NormRun run(c, rng);
  rt::Runtime& runtime = rt::default_runtime();
  CUcontext ctx = nullptr;
  const rt::DeviceInfo& dev = runtime.current_device(&ctx);
  int checked = 0, tiles = 0, segmented = 0;
  run.forward_and_check();  // z, mean and rstd for the backward
  for (const Config& cfg : gen::search_space({sc.kernel, c.x, c.N, c.M, dev.sm_count, dev.cc_major * 10 + dev.cc_minor})) {
    SCOPED_TRACE(c.name() + " " + std::string(to_string(sc.kernel)) + " " + to_string(cfg));
    // (Rows of other than a power of two of threads are odd tiles too; they
    // count apart, so that neither requirement is met by the other kind.)
    const bool segmented_rows = gen::has_segmented_rows(sc.kernel, cfg);
    const bool tile = gen::is_odd_tile(cfg) && !segmented_rows;
    if (sc.kernel == Kernel::fwd) {
      run.forward_and_check(&cfg);
    } else {
      try {
        run.backward_and_check(&cfg);
      } catch (const Error& e) {
        // The wide-row backward's space sizes shared memory from the row
        // dtype: with an fp32 residual and output some stagings do not fit
        // (an invalid instance, as the tuner records it).
        if (!gen::is_wide_bwd(sc.kernel, cfg) || std::string(e.what()).find("shared memory") == std::string::npos)
          throw;
        continue;
      }
    }
    ++checked;
    tiles += tile;
    segmented += segmented_rows;
  }
  EXPECT_GT(checked, 0);
  if (sc.tiles) {
    EXPECT_GT(tiles, 0) << "no single tile of other than a power of two ran";
  }
  if (sc.segmented) {
    EXPECT_GT(segmented, 0) << "no config with rows of other than a power of two of threads ran";
  }
  std::printf("[ configs  ] %s %s N=%lld: %d configs checked (%d tiles of other than a power of two, %d in rows of "
              "other than a power of two of threads)\n",
              c.name().c_str(), std::string(to_string(sc.kernel)).c_str(), static_cast<long long>(c.N), checked, tiles,
              segmented);
}

INSTANTIATE_TEST_SUITE_P(
    Norms, VariantSpace,
    ::testing::Values(SpaceCase{0, 1000, Kernel::fwd}, SpaceCase{0, 1000, Kernel::bwd_dx},
                      SpaceCase{0, 12288, Kernel::fwd, true}, SpaceCase{0, 12288, Kernel::bwd_dx},
                      SpaceCase{1, 1000, Kernel::fwd}, SpaceCase{1, 1000, Kernel::bwd_dx},
                      SpaceCase{1, 12288, Kernel::fwd, true}, SpaceCase{1, 12288, Kernel::bwd_dx},
                      SpaceCase{2, 1000, Kernel::bwd_dx}, SpaceCase{2, 2002, Kernel::bwd_dx},
                      SpaceCase{3, 1000, Kernel::bwd_dx}, SpaceCase{3, 2001, Kernel::bwd_dx},
                      SpaceCase{4, 4095, Kernel::bwd_dx},
                      // the backward's single tiles of other than a power of
                      // two (session 43; 16-byte accesses): fp32 6144 in 16
                      // warps, 1536 in 4, 3072 in 8; and (session 44) rows
                      // of other than a power of two of threads: fp32 4608
                      // in 576 and 384, 1152 in 288 and 96, RMSNorm fp32
                      // 2304 in 576 and 288
                      SpaceCase{4, 4608, Kernel::bwd_dx, true, true}, SpaceCase{4, 1152, Kernel::bwd_dx, true, true},
                      SpaceCase{3, 2304, Kernel::bwd_dx, true, true},
                      // 1152 bf16 columns in rows of 144 threads (segments
                      // of 16 lanes: a warp ends one row and starts the
                      // next) and of 72 (segments of 8); 2560 in 160 (5
                      // warps) and 320; the forward at 1152 and 2560
                      SpaceCase{2, 1152, Kernel::bwd_dx, false, true}, SpaceCase{2, 2560, Kernel::bwd_dx, false, true},
                      SpaceCase{2, 1152, Kernel::fwd, false, true}, SpaceCase{4, 2560, Kernel::fwd, false, true},
                      // the fused backward's (session 45): bf16 z and dz
                      // beside bf16 x, fp32 beside bf16 (RMSNorm)
                      SpaceCase{1, 2304, Kernel::bwd_dx, false, true}, SpaceCase{0, 1152, Kernel::bwd_dx, false, true}),
    [](const ::testing::TestParamInfo<SpaceCase>& i) {
      return "v" + std::to_string(i.param.variant) + "_N" + std::to_string(i.param.N) + "_" +
             std::string(to_string(i.param.kernel));
    });

// The forward with a slab in shared memory (fwd_smem.cuh, sm_90+): every
// such config of the search space against the reference, for both norms,
// every dtype, residuals, output dtypes, a row that leaves its last CTA
// partly empty, clusters of 16 (fp32, N = 262144), and row strides that
// narrow the accesses (cp.async of 8 and 2 bytes instead of bulk copies).
struct SmemCase {
  VCase c;
  std::string label;
  bool wide = false;  // the space has wide-row forward configs valid for it (fwd_wide.cuh): some must run
  // Every forward config, in registers too, and at least one single tile
  // of other than a power of two (block_size != next_pow2(N)) must run.
  bool tiles = false;
};
void PrintTo(const SmemCase& c, std::ostream* os) { *os << c.label; }

std::vector<SmemCase> smem_cases() {
  std::vector<SmemCase> out;
  const auto add = [&out](VCase c, const std::string& label, bool wide = false, bool tiles = false) {
    out.push_back({c, label, wide, tiles});
  };
  VCase c;
  c.M = 64;
  c.N = 65536;
  c.x = c.w = DType::f16;
  add(c, "ln_fp16_N65536", true);
  // 8192 < N <= 16384: the default for 16-bit rows without a residual.
  c.x = c.w = DType::bf16;
  c.M = 33;
  c.N = 12296;
  add(c, "ln_bf16_N12296");
  c.norm = Norm::rms;
  c.x = c.w = DType::f16;
  c.bias = false;
  c.N = 16384;
  add(c, "rms_fp16_N16384");
  c = VCase{};
  c.x = DType::bf16;
  c.w = DType::f32;
  c.N = 40000;
  c.M = 50;
  add(c, "ln_bf16_wfp32_N40000");
  c = VCase{};
  c.norm = Norm::rms;
  c.x = c.w = DType::f32;
  c.bias = false;
  c.M = 20;
  c.N = 262144;
  add(c, "rms_fp32_N262144", true);
  c = VCase{};
  c.x = c.w = DType::f32;
  c.residual = DType::f32;
  c.zc = true;
  c.y = DType::bf16;
  c.M = 30;
  c.N = 65536;
  add(c, "ln_fp32_resfp32_zc_outbf16_N65536", true);
  c = VCase{};
  c.norm = Norm::rms;
  c.x = c.w = DType::bf16;
  c.residual = DType::bf16;
  c.M = 24;
  c.N = 65536;
  c.pad = 1;  // 2-byte accesses
  add(c, "rms_bf16_resbf16_N65536_pad1");
  c = VCase{};
  c.x = DType::f16;
  c.w = DType::f32;
  c.residual = DType::f32;
  c.y = DType::f32;
  c.M = 40;
  c.N = 32768;
  c.pad = 4;  // x: 8-byte accesses (cp.async); the fp32 residual: 16 bytes (bulk)
  add(c, "ln_fp16_resfp32_outfp32_N32768_pad4");
  // The wide-row forward too (fwd_wide.cuh): clusters of 16 with 3 staged
  // rows (fp32, N = 262144; M not a multiple of the grid), a residual in
  // another dtype with RMSNorm, a last CTA partly empty (N = 20488).
  c = VCase{};
  c.x = c.w = DType::f32;
  c.M = 21;
  c.N = 262144;
  add(c, "ln_fp32_N262144", true);
  c = VCase{};
  c.norm = Norm::rms;
  c.x = c.w = DType::bf16;
  c.residual = DType::f32;
  c.bias = false;
  c.M = 37;
  c.N = 65536;
  add(c, "rms_bf16_resfp32_N65536", true);
  c = VCase{};
  c.x = DType::bf16;
  c.w = DType::f32;
  c.zc = true;
  c.M = 29;
  c.N = 20488;  // clusters of 2: the last CTA holds 4104 of its 16384 columns
  c.pad = 8;
  add(c, "ln_bf16_zc_N20488_pad8", true);
  // A cluster whose CTAs run both instantiations of the wide forward: 16-bit
  // LayerNorm in clusters of 16, the first 15 slabs full (no bounds checks,
  // the row kept in registers), the last holding 8 of its 16384 columns.
  c = VCase{};
  c.x = c.w = DType::bf16;
  c.M = 11;
  c.N = 245768;
  add(c, "ln_bf16_N245768", true);
  // fp32 rows and residual of 256K columns: at 2 stages the wide forward
  // gives the residual a slot of its own, at 3 it reads the residual from
  // global memory (z written over x either way).
  c = VCase{};
  c.x = c.w = DType::f32;
  c.residual = DType::f32;
  c.M = 19;
  c.N = 262144;
  add(c, "ln_fp32_resfp32_N262144", true);
  // Clusters of other than a power of two (gen::wide_clusters): 7 slabs of
  // 16384 columns or 13 of 8192 (N = 100000, the last holding 1696), 13 of
  // 16384 (N = 200000, RMSNorm with an fp32 weight).
  c = VCase{};
  c.x = c.w = DType::bf16;
  c.M = 17;
  c.N = 100000;
  add(c, "ln_bf16_N100000", true);
  c = VCase{};
  c.norm = Norm::rms;
  c.x = DType::f16;
  c.w = DType::f32;
  c.bias = false;
  c.M = 9;
  c.N = 200000;
  add(c, "rms_fp16_N200000", true);
  // The slabs in shared memory over gap clusters (gen::smem_clusters): 5 of
  // 32768 columns or 10 of 16384 at N = 150000 (the default, 8 warps).
  c = VCase{};
  c.x = c.w = DType::bf16;
  c.M = 6;
  c.N = 150000;
  add(c, "ln_bf16_N150000", true);
  // The forward's single tile of other than a power of two (session 42):
  // 5120 columns in 8 warps of 4-element accesses (registers) or 4 warps
  // (a slab in shared memory), strided; 4608 and 9216 (in shared memory);
  // fp32 5120 in 16 warps of 2-element accesses; RMSNorm with an fp32
  // weight at 2560.
  struct Tile {
    const char* label;
    DType x, w;
    Norm norm;
    std::int64_t M, N, pad;
  };
  for (const Tile& t : {Tile{"ln_bf16_N5120_pad8", DType::bf16, DType::bf16, Norm::layer, 300, 5120, 8},
                        Tile{"ln_bf16_N4608", DType::bf16, DType::bf16, Norm::layer, 300, 4608, 0},
                        Tile{"ln_bf16_N9216", DType::bf16, DType::bf16, Norm::layer, 37, 9216, 0},
                        Tile{"ln_fp32_N5120", DType::f32, DType::f32, Norm::layer, 300, 5120, 0},
                        Tile{"rms_bf16_wfp32_N2560", DType::bf16, DType::f32, Norm::rms, 300, 2560, 0}}) {
    c = VCase{};
    c.x = t.x;
    c.w = t.w;
    c.norm = t.norm;
    c.bias = t.norm == Norm::layer;
    c.M = t.M;
    c.N = t.N;
    c.pad = t.pad;
    add(c, t.label, false, true);
  }
  // RMSNorm with zero-centred gamma over fp32 rows and residual of 256K
  // columns. (From session 40 to 42 this case took the fields of the case
  // inserted before it, bf16 or fp16 rows of 150000-200000 columns, under
  // this label: spelled out since.)
  c = VCase{};
  c.norm = Norm::rms;
  c.x = c.w = DType::f32;
  c.residual = DType::f32;
  c.bias = false;
  c.zc = true;
  c.M = 9;
  c.N = 262144;
  add(c, "rms_fp32_resfp32_zc_N262144", true);
  return out;
}

// The current context's GPU, as the shared-memory forward tests use it.
struct CurrentGpu {
  rt::Runtime& runtime = rt::default_runtime();
  CUcontext ctx = nullptr;
  const rt::DeviceInfo& dev = runtime.current_device(&ctx);
  int cc = dev.cc_major * 10 + dev.cc_minor;
};
std::string smem_forward_needs_sm90(int cc) {
  return "the forward with a slab in shared memory is searched on sm_90+ only (this GPU: sm_" + std::to_string(cc) + ")";
}

class SmemForward : public ::testing::TestWithParam<SmemCase> {};

TEST_P(SmemForward, EveryConfigIsCorrect) {
  LNTUNE_REQUIRE_GPU();
  const CurrentGpu gpu;
  if (gpu.cc < 90) GTEST_SKIP() << smem_forward_needs_sm90(gpu.cc);
  const VCase& c = GetParam().c;
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed()));
  NormRun run(c, rng);
  const rt::FwdProblem fp = rt::check_forward(run.fwd());
  int checked = 0, wide_checked = 0, tiles_checked = 0, skipped = 0;
  for (const Config& cfg : gen::search_space({Kernel::fwd, c.x, c.N, c.M, gpu.dev.sm_count, gpu.cc})) {
    const bool wide = gen::is_wide_fwd(Kernel::fwd, cfg);
    if (!GetParam().tiles && !gen::forward_in_smem(cfg, c.N) && !wide) continue;
    const bool tile = gen::is_odd_tile(cfg);
    SCOPED_TRACE(c.name() + " " + to_string(cfg));
    try {
      gen::make_instance(fp.traits, cfg, c.N, fp.vec);
    } catch (const Error& e) {
      // The residual's slab does not fit this config's shared memory, or
      // (the wide forward's bulk copies) the accesses are narrower than 16 bytes.
      const std::string what = e.what();
      if (what.find("shared memory") == std::string::npos && (!wide || what.find("16-byte") == std::string::npos)) throw;
      ++skipped;
      continue;
    }
    run.forward_and_check(&cfg);
    // Twice: the second launch reuses the loaded kernel; results are bitwise the same.
    const HostTensor y1 = run.gy.download();
    run.forward_and_check(&cfg);
    const HostTensor y2 = run.gy.download();
    EXPECT_TRUE(y1.bytes == y2.bytes) << "two launches differ: not deterministic";
    ++checked;
    if (wide) ++wide_checked;
    if (tile) ++tiles_checked;
  }
  EXPECT_GT(checked, 0);
  if (GetParam().wide) {
    EXPECT_GT(wide_checked, 0) << "no wide-row forward config ran";
  }
  if (GetParam().tiles) {
    EXPECT_GT(tiles_checked, 0) << "no single tile of other than a power of two ran";
  }
  std::printf("[ smem fwd ] %s: %d configs checked (%d wide-row, %d tiles of other than a power of two), %d invalid for "
              "these traits\n",
              c.name().c_str(), checked, wide_checked, tiles_checked, skipped);
}

INSTANTIATE_TEST_SUITE_P(Norms, SmemForward, ::testing::ValuesIn(smem_cases()),
                         [](const ::testing::TestParamInfo<SmemCase>& i) { return i.param.label; });

// Every shared-memory and wide-row forward config of the space for `c`
// that is an instance for its traits (`fp`'s): fn(config, key, wide), under
// a trace naming both.
template <class Fn>
void for_each_slab_forward(const CurrentGpu& gpu, const VCase& c, const rt::FwdProblem& fp, Fn&& fn) {
  for (const Config& cfg : gen::search_space({Kernel::fwd, c.x, c.N, c.M, gpu.dev.sm_count, gpu.cc})) {
    const bool wide = gen::is_wide_fwd(Kernel::fwd, cfg);
    if (!gen::forward_in_smem(cfg, c.N) && !wide) continue;
    SCOPED_TRACE(c.name() + " " + to_string(cfg));
    InstanceKey key;
    try {
      key = gen::make_instance(fp.traits, cfg, c.N, fp.vec);
    } catch (const Error&) {
      continue;  // not an instance for these traits (e.g. narrower accesses than the wide kernel's)
    }
    fn(cfg, key, wide);
  }
}

// Rows far from zero against their spread (mean / standard deviation 64 for
// bf16, 512 for fp16): every shared-memory and wide-row forward config
// against the float64 reference. The wide forward's full slabs take their
// statistics in one pass, each thread's deviations from its first column
// (fwd_wide.cuh, kOnePass), where the sum of x alone would lose the
// variance to cancellation.
TEST(SmemForwardExactness, RowsFarFromZeroKeepTheirVariance) {
  LNTUNE_REQUIRE_GPU();
  const CurrentGpu gpu;
  if (gpu.cc < 90) GTEST_SKIP() << smem_forward_needs_sm90(gpu.cc);
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed()));
  int checked = 0, wide_checked = 0;
  struct Pick {
    DType d;
    std::int64_t n;
    double offset;
  };
  for (const Pick& k : {Pick{DType::bf16, 65536, 64.0}, Pick{DType::f16, 262144, 512.0}, Pick{DType::bf16, 245768, 64.0},
                        Pick{DType::f16, 32768, 512.0}, Pick{DType::bf16, 100000, 64.0}}) {
    VCase c;
    c.x = c.w = k.d;
    c.M = 9;
    c.N = k.n;
    NormRun run(c, rng);
    run.x = rng.tensor(k.d, c.M * c.N, k.offset, 1.0);
    run.gx = DeviceTensor(run.x);
    for_each_slab_forward(gpu, c, rt::check_forward(run.fwd()), [&](const Config& cfg, const InstanceKey&, bool wide) {
      run.forward_and_check(&cfg);
      ++checked;
      if (wide) ++wide_checked;
    });
  }
  EXPECT_GT(wide_checked, 0) << "no wide-row forward config ran";
  std::printf("[ offset   ] rows far from zero: %d shared-memory forward configs checked (%d wide-row)\n", checked,
              wide_checked);
}

// A constant row (variance exactly 0) gives y = bias bit for bit in every
// shared-memory and wide-row forward config, whatever its slabs' column
// counts: the wide forward's cluster sum once left a residue where the last
// CTA's columns were not a power of two (16-bit N = 20000; found by
// Gpu.DegenerateRowsAreExact once an H200's default took that kernel).
TEST(SmemForwardExactness, ConstantRowsGiveTheBias) {
  LNTUNE_REQUIRE_GPU();
  const CurrentGpu gpu;
  if (gpu.cc < 90) GTEST_SKIP() << smem_forward_needs_sm90(gpu.cc);
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed()));
  int checked = 0, wide_checked = 0;
  for (const auto& [d, n] : std::vector<std::pair<DType, std::int64_t>>{
           {DType::bf16, 20000}, {DType::f16, 20000}, {DType::bf16, 245768}, {DType::f32, 40001}, {DType::f32, 200000},
           {DType::bf16, 150000}}) {
    VCase c;
    c.x = c.w = d;
    c.M = 7;
    c.N = n;
    NormRun run(c, rng);
    // Values whose sums are exact in fp32: the row's variance is exactly 0.
    for (std::int64_t i = 0; i < c.M * c.N; ++i) run.x.set(i, 0.25 * static_cast<double>((i / c.N) % 17 - 8));
    run.gx = DeviceTensor(run.x);
    const ForwardArgs a = run.fwd();
    const rt::FwdProblem fp = rt::check_forward(a);
    for_each_slab_forward(gpu, c, fp, [&](const Config& cfg, const InstanceKey& key, bool wide) {
      run.gy.poison();
      rt::launch_forward(gpu.runtime.kernel(gpu.ctx, gpu.dev.arch(), key), cfg, a, fp);
      ++checked;
      const HostTensor y = run.gy.download();
      std::int64_t wrong = 0;
      for (std::int64_t i = 0; i < c.M * c.N; ++i) wrong += y.get(i) != run.b.get(i % c.N);
      EXPECT_EQ(wrong, 0) << "y != bias in " << wrong << " of " << c.M * c.N << " elements";
      if (wide) ++wide_checked;
    });
  }
  EXPECT_GT(wide_checked, 0) << "no wide-row forward config ran";
  std::printf("[ exact    ] constant rows: %d shared-memory forward configs checked for y = bias (%d wide-row)\n", checked,
              wide_checked);
}

// Rows of one element: LayerNorm gives exactly the bias and dx = 0; RMSNorm
// gives w * x / sqrt(x^2 + eps), with the residual summed first.
TEST(GpuNorms, SingleElementRows) {
  LNTUNE_REQUIRE_GPU();
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed()));
  for (Norm norm : {Norm::layer, Norm::rms})
    for (bool residual : {false, true}) {
      VCase c;
      c.norm = norm;
      c.x = c.w = DType::f32;
      c.bias = norm == Norm::layer;
      if (residual) c.residual = DType::f32;
      c.M = 41;
      c.N = 1;
      SCOPED_TRACE(c.name());
      NormRun run(c, rng);
      run.forward_and_check();
      run.backward_and_check();
    }
}

// The residual's gradient written in place over dresidual_out (same rows),
// for a single-tile and a tiled row: bf16 x, fp32 residual stream.
TEST(GpuNorms, DresidualInPlaceOverDresidualOut) {
  LNTUNE_REQUIRE_GPU();
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed()));
  // 16384 with a bf16 residual: the wide backward with dz staged beside x
  // and dy (gen::wide_stages_dz), copied before the row's dresidual is
  // written over it.
  for (std::int64_t n : {std::int64_t{1003}, std::int64_t{40001}, std::int64_t{16384}})
    for (Norm norm : {Norm::layer, Norm::rms}) {
      VCase c;
      c.norm = norm;
      c.x = DType::bf16;
      c.w = DType::f32;
      c.bias = norm == Norm::layer;
      c.residual = n == 16384 ? DType::bf16 : DType::f32;
      c.M = n == 16384 ? 301 : 29;
      c.N = n;
      c.pad = 4;
      SCOPED_TRACE(c.name());
      NormRun run(c, rng);
      run.forward_and_check();
      run.backward_and_check(nullptr, true);
    }
}

TEST(GpuNorms, NanAndInfStayInTheirRows) {
  LNTUNE_REQUIRE_GPU();
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed()));
  const double inf = std::numeric_limits<double>::infinity();
  for (Norm norm : {Norm::layer, Norm::rms})
    for (DType d : {DType::f32, DType::bf16}) {
      VCase c;
      c.norm = norm;
      c.x = c.w = d;
      c.bias = false;
      c.residual = DType::f32;
      c.M = 8;
      c.N = 1001;
      SCOPED_TRACE(c.name());
      NormRun run(c, rng);
      run.x.set(1 * run.s + 5, std::nan(""));
      run.r.set(3 * run.s + 1000, inf);  // in the residual
      run.x.set(5 * run.s + 0, -inf);
      run.gx.upload(run.x);
      run.gr.upload(run.r);
      run.forward_and_check();  // the reference has the same non-finite rows
      const HostTensor y = run.gy.download();
      // A NaN spoils its whole row; an infinity spoils a LayerNorm row (its
      // mean), while an RMSNorm row gets rstd = 0: zeros, NaN where x is inf.
      EXPECT_TRUE(std::isnan(y.get(1 * run.s + 500)));
      for (std::int64_t row : {3, 5}) {
        if (norm == Norm::layer) {
          EXPECT_FALSE(std::isfinite(y.get(row * run.s + 500))) << "row " << row;
        } else {
          EXPECT_EQ(y.get(row * run.s + 500), 0.0) << "row " << row;
        }
      }
      for (std::int64_t row : {0, 2, 4, 6, 7}) EXPECT_TRUE(std::isfinite(y.get(row * run.s + 500))) << "row " << row;
      run.backward_and_check();
    }
}

// 64-bit indexing with the variants: RMSNorm, bf16 rows, fp32 residual and
// z, M * N > 2^31. Rows repeat with a period, so the reference runs on one
// period; sampled rows (including those past 2^31 elements) are compared.
TEST(GpuNorms, MoreThan2Pow31ElementsWithResidual) {
  LNTUNE_REQUIRE_GPU();
  const std::int64_t N = 65536, M = 32769, period = 512;  // M * N = 2^31 + 65536
  ASSERT_GT(M * N, std::int64_t{1} << 31);
  std::size_t free_bytes = 0, total = 0;
  rt::check(rt::driver().MemGetInfo(&free_bytes, &total), "cuMemGetInfo");
  // x, y, dy, dx (bf16) and residual, z, dz (fp32), plus slack.
  const std::size_t need = static_cast<std::size_t>(M * N) * (4 * 2 + 3 * 4) + (std::size_t{1} << 30);
  if (free_bytes < need) GTEST_SKIP() << "needs " << (need >> 30) << " GiB of GPU memory, " << (free_bytes >> 30) << " free";
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed()));
  const DType d = DType::bf16, rd = DType::f32, wd = DType::f32;
  const auto tile = [&](const HostTensor& p) {  // M rows repeating p's `period` rows
    HostTensor big(p.dtype, M * N);
    const std::size_t row = static_cast<std::size_t>(N) * dtype_size(p.dtype);
    for (std::int64_t i = 0; i < M; ++i)
      std::memcpy(big.bytes.data() + static_cast<std::size_t>(i) * row,
                  p.bytes.data() + static_cast<std::size_t>(i % period) * row, row);
    return DeviceTensor(big);
  };
  HostTensor xp = rng.tensor(d, period * N, 0.5, 2.0), rp = rng.tensor(rd, period * N, 0.0, 1.0);
  HostTensor dyp = rng.tensor(d, period * N, 0.0, 1.0), dzp = rng.tensor(rd, period * N, 0.0, 1.0);
  HostTensor w = rng.tensor(wd, N, 1.0, 0.5);
  DeviceTensor gx = tile(xp), gr = tile(rp), gw(w), gy(d, M * N), gz(rd, M * N), grstd(DType::f32, M);
  gy.poison();
  gz.poison();
  ForwardArgs a;
  a.x = gx.ptr();
  a.weight = gw.ptr();
  a.y = gy.ptr();
  a.rstd = static_cast<float*>(grstd.ptr());
  a.M = M;
  a.N = N;
  a.x_dtype = d;
  a.w_dtype = wd;
  a.norm = Norm::rms;
  a.residual = gr.ptr();
  a.residual_out = gz.ptr();
  a.residual_dtype = rd;
  forward(a);
  gx = DeviceTensor();
  gr = DeviceTensor();
  HostTensor yref(d, period * N), zref(rd, period * N), rref(DType::f32, period);
  ref::FwdArgs r;
  r.M = period;
  r.N = N;
  r.x_stride = r.y_stride = r.residual_stride = r.z_stride = N;
  r.x_dtype = d;
  r.w_dtype = wd;
  r.x = xp.data();
  r.weight = w.data();
  r.norm = Norm::rms;
  r.residual = rp.data();
  r.residual_dtype = rd;
  ref::norm_forward(r, yref.data(), nullptr, static_cast<float*>(rref.data()), zref.data());
  const std::int64_t rows[] = {0, period - 1, (std::int64_t{1} << 31) / N, M - 2, M - 1};
  {
    const HostTensor yh = gy.download(), zh = gz.download();
    const auto ty = ref::default_tolerance(d, ref::Quantity::y, N, M, max_abs(w));
    const auto tz = ref::default_tolerance(rd, ref::Quantity::y, N, M, 0.0);
    for (std::int64_t row : rows) {
      const auto cy = ref::compare(d, yh.bytes.data() + row * N * 2, yref.bytes.data() + (row % period) * N * 2, 1, N,
                                   N, N, ty, ref::poison_bits(d));
      EXPECT_TRUE(cy.ok) << "y row " << row << ": " << testing::describe(cy);
      const auto cz = ref::compare(rd, zh.bytes.data() + row * N * 4, zref.bytes.data() + (row % period) * N * 4, 1, N,
                                   N, N, tz, ref::poison_bits(rd));
      EXPECT_TRUE(cz.ok) << "z row " << row << ": " << testing::describe(cz);
    }
  }
  gy = DeviceTensor();
  // Backward from z, with dz.
  DeviceTensor gdy = tile(dyp), gdz = tile(dzp), gdx(d, M * N), gdw(wd, N);
  gdx.poison();
  gdw.poison();
  BackwardArgs b;
  b.dy = gdy.ptr();
  b.x = gz.ptr();
  b.weight = gw.ptr();
  b.rstd = static_cast<const float*>(grstd.ptr());
  b.dx = gdx.ptr();
  b.dweight = gdw.ptr();
  b.M = M;
  b.N = N;
  b.x_dtype = d;
  b.w_dtype = wd;
  b.norm = Norm::rms;
  b.residual = true;
  b.dresidual_out = gdz.ptr();
  b.residual_dtype = rd;
  backward(b);
  const HostTensor dxh = gdx.download(), dwh = gdw.download();
  HostTensor dxref(d, period * N), dwA(DType::f32, N), dwB(DType::f32, N), scratch(d, period * N);
  ref::BwdArgs rb;
  rb.M = period;
  rb.N = N;
  rb.dy_stride = rb.x_stride = rb.dx_stride = rb.dz_stride = N;
  rb.x_dtype = d;
  rb.w_dtype = wd;
  rb.dy = dyp.data();
  rb.x = zref.data();
  rb.weight = w.data();
  rb.norm = Norm::rms;
  rb.residual = true;
  rb.residual_dtype = rd;
  rb.dz = dzp.data();
  ref::layer_norm_backward(rb, dxref.data(), dwA.data(), nullptr);
  rb.M = M % period;
  ref::layer_norm_backward(rb, scratch.data(), dwB.data(), nullptr);
  const auto tdx = ref::default_tolerance(d, ref::Quantity::dx, N, M, max_abs(rref) * max_abs(w) * max_abs(dyp));
  for (std::int64_t row : rows) {
    const auto c = ref::compare(d, dxh.bytes.data() + row * N * 2, dxref.bytes.data() + (row % period) * N * 2, 1, N, N,
                                N, tdx, ref::poison_bits(d));
    EXPECT_TRUE(c.ok) << "dx row " << row << ": " << testing::describe(c);
  }
  const double q = static_cast<double>(M / period);
  HostTensor dwref(wd, N);
  for (std::int64_t j = 0; j < N; ++j) dwref.set(j, q * dwA.get(j) + dwB.get(j));
  const auto tw = ref::default_tolerance(wd, ref::Quantity::dweight, N, M, max_abs(dyp));
  const auto cw = ref::compare(wd, dwh.data(), dwref.data(), 1, N, N, N, tw, ref::poison_bits(wd));
  EXPECT_TRUE(cw.ok) << "dweight: " << testing::describe(cw);
}

}  // namespace
}  // namespace lntune
