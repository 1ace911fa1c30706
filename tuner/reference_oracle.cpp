#include "tuner/reference_oracle.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <future>
#include <limits>
#include <sstream>
#include <thread>

#include "tuner/host_dtype.hpp"
#include "tuner/random_fill.hpp"
#include "tuner/reference.hpp"

namespace lntune::tune {

namespace {

using Bytes = std::vector<unsigned char>;

// The storage bits of element i of a dtype's array.
std::uint32_t bits_at(DType d, const void* p, std::int64_t i) {
  if (d == DType::f32) {
    std::uint32_t u;
    std::memcpy(&u, static_cast<const unsigned char*>(p) + 4 * i, 4);
    return u;
  }
  std::uint16_t h;
  std::memcpy(&h, static_cast<const unsigned char*>(p) + 2 * i, 2);
  return h;
}

bool is_nan_bits(DType d, std::uint32_t b) {
  switch (d) {
    case DType::f32: return (b & 0x7fffffffu) > 0x7f800000u;
    case DType::f16: return (b & 0x7fffu) > 0x7c00u;
    case DType::bf16: return (b & 0x7fffu) > 0x7f80u;
  }
  return false;
}

// The bits as a signed ordinal: consecutive values differ by one, +0 and -0
// are both 0.
std::int64_t ordinal(DType d, std::uint32_t b) {
  const std::uint32_t sign = d == DType::f32 ? 0x80000000u : 0x8000u;
  const std::int64_t mag = static_cast<std::int64_t>(b & (sign - 1));
  return (b & sign) ? -mag : mag;
}

std::string hex(std::uint32_t b) {
  std::ostringstream os;
  os << "0x" << std::hex << b;
  return os.str();
}

std::string value_text(DType d, const void* p, std::int64_t i) {
  std::ostringstream os;
  os.precision(9);
  os << ref::load_element(d, p, i) << " (" << hex(bits_at(d, p, i)) << ")";
  return os.str();
}

// `count` elements of an input (InputDraw) for the sampled rows, row after row.
Bytes draw_rows(DType d, const InputDraw& in, const std::vector<std::int64_t>& rows, std::int64_t n,
                std::uint64_t seed) {
  const std::size_t row_bytes = static_cast<std::size_t>(n) * dtype_size(d);
  Bytes out(rows.size() * row_bytes);
  for (std::size_t i = 0; i < rows.size(); ++i)
    rnd::fill_range(out.data() + i * row_bytes, d, rows[i] * n, n, in.offset, in.scale, seed + in.seed_offset);
  return out;
}

// Rows [r0, r1) of an input, contiguous.
Bytes draw_block(DType d, const InputDraw& in, std::int64_t r0, std::int64_t r1, std::int64_t n, std::uint64_t seed) {
  Bytes out(static_cast<std::size_t>((r1 - r0) * n) * dtype_size(d));
  rnd::fill_range(out.data(), d, r0 * n, (r1 - r0) * n, in.offset, in.scale, seed + in.seed_offset);
  return out;
}

class Checker {
 public:
  Checker(const GpuReferenceSample& g, OracleReport& r) : g_(g), r_(r) {
    std::ostringstream os;
    os << "the GPU reference of " << g.traits << " M=" << g.m << " N=" << g.n << " (seed " << g.seed << ")";
    what_ = os.str();
  }

  // Adds a disagreement (the first few are described).
  void fail(const std::string& s) {
    ++failures_;
    if (failures_ <= 3) r_.error += (r_.error.empty() ? what_ + " disagrees with the CPU's: " : "; ") + s;
  }
  void finish() {
    if (failures_ > 3) r_.error += "; and " + std::to_string(failures_ - 3) + " more";
  }

  // Sampled rows of a large output: within max_ulps, the one-ulp cases counted.
  void rows(const char* name, DType d, const Bytes& got, const Bytes& want, std::uint64_t max_ulps) {
    const std::int64_t count = static_cast<std::int64_t>(g_.rows.size()) * g_.n;
    if (got.size() != static_cast<std::size_t>(count) * dtype_size(d)) {
      fail(std::string(name) + ": " + std::to_string(got.size()) + " bytes downloaded for " + std::to_string(count) +
           " elements");
      return;
    }
    const double floor = max_ulps > 0 ? cancellation_floor(d, want.data(), count) : 0.0;
    const UlpCount c = count_ulps(d, got.data(), want.data(), count, max_ulps, floor);
    r_.compared += c.compared;
    r_.one_ulp += c.within;
    if (c.beyond == 0) return;
    const std::int64_t i = c.first_beyond;
    const std::int64_t row = g_.rows[static_cast<std::size_t>(i / g_.n)], col = i % g_.n;
    fail(std::string(name) + " [" + std::to_string(row) + ", " + std::to_string(col) +
         "]: GPU " + value_text(d, got.data(), i) + ", CPU " + value_text(d, want.data(), i) + " (" +
         std::to_string(ulp_distance(d, got.data() + i * static_cast<std::int64_t>(dtype_size(d)),
                                     want.data() + i * static_cast<std::int64_t>(dtype_size(d)))) +
         " ulps; " + std::to_string(c.beyond) + " of " + std::to_string(c.compared) + " elements beyond " +
         std::to_string(max_ulps) + " ulp" + (max_ulps == 1 ? "" : "s") + ")");
  }

  // mean or rstd of the sampled rows (the GPU's: every row) within one fp32 ulp.
  void stats(const char* name, const std::vector<float>& gpu_all, const std::vector<float>& cpu_sampled) {
    if (gpu_all.size() != static_cast<std::size_t>(g_.m)) {
      fail(std::string(name) + ": " + std::to_string(gpu_all.size()) + " values downloaded for M = " +
           std::to_string(g_.m));
      return;
    }
    std::vector<float> got;
    for (std::int64_t row : g_.rows) got.push_back(gpu_all[static_cast<std::size_t>(row)]);
    const auto count = static_cast<std::int64_t>(got.size());
    const UlpCount c = count_ulps(DType::f32, got.data(), cpu_sampled.data(), count, 1,
                                  cancellation_floor(DType::f32, cpu_sampled.data(), count));
    r_.one_ulp += c.within;
    if (c.beyond == 0) return;
    const std::size_t i = static_cast<std::size_t>(c.first_beyond);
    std::ostringstream os;
    os.precision(9);
    os << name << " [" << g_.rows[i] << "]: GPU " << got[i] << ", CPU " << cpu_sampled[i] << " ("
       << ulp_distance(DType::f32, &got[i], &cpu_sampled[i]) << " ulps; " << c.beyond << " of " << count
       << " sampled rows beyond 1 ulp)";
    fail(os.str());
  }

  const GpuReferenceSample& g_;
  OracleReport& r_;
  std::string what_;
  int failures_ = 0;
};

// The forward's statistics and z of rows [r0, r1) as the CPU reference forms
// them: z (a residual) and fp32 mean, rstd. The row's storage (x or z) is
// returned in *row.
void cpu_rows_forward(const GpuReferenceSample& g, const Bytes& x, const Bytes* residual, std::int64_t rows,
                      Bytes* z, std::vector<float>* mean, std::vector<float>* rstd) {
  const Traits& t = g.traits;
  ref::FwdArgs fa;
  fa.M = rows;
  fa.N = g.n;
  fa.x_stride = fa.y_stride = g.n;
  fa.x_dtype = t.x_dtype;
  fa.w_dtype = t.w_dtype;
  fa.x = x.data();
  fa.eps = static_cast<double>(inputs::kEps);
  fa.norm = t.norm;
  fa.residual = residual ? residual->data() : nullptr;
  fa.residual_dtype = t.input_dtype();
  fa.residual_stride = fa.z_stride = g.n;
  fa.y_dtype = t.out_dtype();
  mean->assign(static_cast<std::size_t>(rows), 0.f);
  rstd->assign(static_cast<std::size_t>(rows), 0.f);
  if (residual) z->resize(static_cast<std::size_t>(rows * g.n) * dtype_size(t.input_dtype()));
  ref::norm_forward(fa, nullptr, t.norm == Norm::rms ? nullptr : mean->data(), rstd->data(),
                    residual ? z->data() : nullptr);
}

void check_forward(const GpuReferenceSample& g, Checker& ck) {
  const Traits& t = g.traits;
  const std::int64_t k = static_cast<std::int64_t>(g.rows.size()), n = g.n;
  const DType xd = t.x_dtype, wd = t.w_dtype, yd = t.out_dtype(), rd = t.input_dtype();
  const bool residual = t.residual.has_value();
  const Bytes x = draw_rows(xd, inputs::x, g.rows, n, g.seed);
  Bytes w, b, r;
  if (t.has_weight) w = draw_rows(wd, inputs::weight(t.zero_centered), {0}, n, g.seed);
  if (t.has_bias) b = draw_rows(wd, inputs::bias, {0}, n, g.seed);
  if (residual) r = draw_rows(rd, inputs::residual, g.rows, n, g.seed);
  ref::FwdArgs fa;
  fa.M = k;
  fa.N = n;
  fa.x_stride = fa.y_stride = n;
  fa.x_dtype = xd;
  fa.w_dtype = wd;
  fa.x = x.data();
  fa.weight = t.has_weight ? w.data() : nullptr;
  fa.bias = t.has_bias ? b.data() : nullptr;
  fa.eps = static_cast<double>(inputs::kEps);
  fa.norm = t.norm;
  fa.zero_centered = t.zero_centered;
  fa.residual = residual ? r.data() : nullptr;
  fa.residual_dtype = rd;
  fa.residual_stride = fa.z_stride = n;
  fa.y_dtype = yd;
  Bytes y(static_cast<std::size_t>(k * n) * dtype_size(yd)), z;
  if (residual) z.resize(static_cast<std::size_t>(k * n) * dtype_size(rd));
  std::vector<float> mean(static_cast<std::size_t>(k), 0.f), rstd(static_cast<std::size_t>(k), 0.f);
  ref::norm_forward(fa, y.data(), t.norm == Norm::rms ? nullptr : mean.data(), rstd.data(),
                    residual ? z.data() : nullptr);
  ck.rows("y", yd, g.main, y, 1);
  if (residual) ck.rows("z", rd, g.z, z, 0);
  if (t.norm != Norm::rms) ck.stats("mean", g.mean, mean);
  ck.stats("rstd", g.rstd, rstd);
}

// The CPU's dW / dB sums over rows [r0, r1) (and the sums of their |terms|),
// added into aw, ab, sw, sb column by column in row order.
struct ChunkSums {
  std::vector<double> aw, ab, sw, sb;
};
ChunkSums chunk_sums(const GpuReferenceSample& g, std::int64_t r0, std::int64_t r1) {
  const Traits& t = g.traits;
  const std::int64_t n = g.n, rows = r1 - r0;
  const DType xd = t.x_dtype, yd = t.out_dtype(), rd = t.input_dtype();
  const bool residual = t.residual.has_value();
  const Bytes x = draw_block(xd, inputs::x, r0, r1, n, g.seed);
  const Bytes dy = draw_block(yd, inputs::dy, r0, r1, n, g.seed);
  Bytes r, z;
  std::vector<float> mean32, rstd32;
  if (residual) {
    r = draw_block(rd, inputs::residual, r0, r1, n, g.seed);
    cpu_rows_forward(g, x, &r, rows, &z, &mean32, &rstd32);
  }
  const Bytes& in = residual ? z : x;  // the backward's input rows
  ChunkSums out;
  out.aw.assign(static_cast<std::size_t>(n), 0.0);
  out.ab = out.sw = out.sb = out.aw;
  std::vector<double> row(static_cast<std::size_t>(n)), scratch(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < n; ++j) row[static_cast<std::size_t>(j)] = ref::load_element(rd, in.data(), i * n + j);
    double mean = 0.0, rstd = 0.0;
    ref::forward_f64(1, n, row.data(), nullptr, nullptr, static_cast<double>(inputs::kEps), scratch.data(), &mean,
                     &rstd, t.norm);
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t u = static_cast<std::size_t>(j);
      const double d = ref::load_element(yd, dy.data(), i * n + j);
      const double term = d * ((row[u] - mean) * rstd);
      out.aw[u] += term;
      out.ab[u] += d;
      out.sw[u] += std::fabs(term);
      out.sb[u] += std::fabs(d);
    }
  }
  return out;
}

// Chunk c's partial sums on the CPU, against the GPU's. The chunk's rows are
// split into blocks summed on their own threads, then added in block order:
// not the GPU's order, which chunk_tolerance allows (it bounds any order).
void check_chunk(const GpuReferenceSample& g, std::int64_t c, Checker& ck) {
  const std::int64_t n = g.n, r0 = g.partition.row_begin(c), r1 = g.partition.row_end(c, g.m), rows = r1 - r0;
  const bool want_w = !g.dw_partials.empty(), want_b = !g.db_partials.empty();
  const std::int64_t blocks =
      std::clamp<std::int64_t>(static_cast<std::int64_t>(std::thread::hardware_concurrency()) / 2, 1, 8);
  const std::int64_t per = (rows + blocks - 1) / blocks;
  std::vector<std::future<ChunkSums>> parts;
  for (std::int64_t b0 = r0; b0 < r1; b0 += per)
    parts.push_back(std::async(std::launch::async, chunk_sums, std::cref(g), b0, std::min(r1, b0 + per)));
  ChunkSums all = parts.front().get();
  for (std::size_t k = 1; k < parts.size(); ++k) {
    const ChunkSums p = parts[k].get();
    for (std::size_t u = 0; u < static_cast<std::size_t>(n); ++u) {
      all.aw[u] += p.aw[u];
      all.ab[u] += p.ab[u];
      all.sw[u] += p.sw[u];
      all.sb[u] += p.sb[u];
    }
  }
  const std::vector<double>&aw = all.aw, &ab = all.ab, &sw = all.sw, &sb = all.sb;
  const double tol = chunk_tolerance(rows);
  auto compare = [&](const char* name, const std::vector<double>& gpu, const std::vector<double>& cpu,
                     const std::vector<double>& mag) {
    std::int64_t bad = 0, first = -1;
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t u = static_cast<std::size_t>(j);
      const double gv = gpu[static_cast<std::size_t>(c * n + j)], cv = cpu[u];
      const bool same = (std::isnan(gv) && std::isnan(cv)) || gv == cv;
      if (same || std::fabs(gv - cv) <= tol * mag[u]) continue;
      if (bad++ == 0) first = j;
    }
    if (bad == 0) return;
    std::ostringstream os;
    os.precision(17);
    const std::size_t u = static_cast<std::size_t>(first);
    os << name << " partials of chunk " << c << " (rows " << r0 << ".." << r1 - 1 << ") column " << first << ": GPU "
       << gpu[static_cast<std::size_t>(c * n + first)] << ", CPU " << cpu[u] << ", allowed " << tol * mag[u]
       << " (" << bad << " of " << n << " columns)";
    ck.fail(os.str());
  };
  if (want_w) compare("dweight", g.dw_partials, aw, sw);
  if (want_b) compare("dbias", g.db_partials, ab, sb);
}

void check_backward(const GpuReferenceSample& g, Checker& ck) {
  const Traits& t = g.traits;
  const std::int64_t k = static_cast<std::int64_t>(g.rows.size()), n = g.n;
  const DType xd = t.x_dtype, wd = t.w_dtype, yd = t.out_dtype(), rd = t.input_dtype();
  const bool residual = t.residual.has_value();
  const Bytes x = draw_rows(xd, inputs::x, g.rows, n, g.seed);
  const Bytes dy = draw_rows(yd, inputs::dy, g.rows, n, g.seed);
  Bytes w, r, dz, z;
  if (t.has_weight) w = draw_rows(wd, inputs::weight(t.zero_centered), {0}, n, g.seed);
  if (residual) {
    r = draw_rows(rd, inputs::residual, g.rows, n, g.seed);
    dz = draw_rows(rd, inputs::dz, g.rows, n, g.seed);
  }
  // The inputs the kernels under test read: z (exact), mean and rstd.
  std::vector<float> mean, rstd;
  cpu_rows_forward(g, x, residual ? &r : nullptr, k, &z, &mean, &rstd);
  if (residual) ck.rows("z", rd, g.z, z, 0);
  if (t.norm != Norm::rms) ck.stats("mean", g.mean, mean);
  ck.stats("rstd", g.rstd, rstd);
  // dx.
  ref::BwdArgs ba;
  ba.M = k;
  ba.N = n;
  ba.dy_stride = ba.x_stride = ba.dx_stride = n;
  ba.x_dtype = xd;
  ba.w_dtype = wd;
  ba.dy = dy.data();
  ba.x = residual ? z.data() : x.data();
  ba.weight = t.has_weight ? w.data() : nullptr;
  ba.eps = static_cast<double>(inputs::kEps);
  ba.norm = t.norm;
  ba.zero_centered = t.zero_centered;
  ba.residual = residual;
  ba.residual_dtype = rd;
  ba.dz = residual ? dz.data() : nullptr;
  ba.dz_stride = n;
  ba.y_dtype = yd;
  Bytes dx(static_cast<std::size_t>(k * n) * dtype_size(xd));
  ref::layer_norm_backward(ba, dx.data(), nullptr, nullptr);
  ck.rows("dx", xd, g.main, dx, 1);

  // dW / dB.
  const bool want_w = !g.dw_partials.empty(), want_b = !g.db_partials.empty();
  if (want_w != t.has_weight || want_b != t.has_bias) {
    ck.fail(std::string("dW/dB partials downloaded for ") + (want_w ? "dW " : "") + (want_b ? "dB " : "") +
            "but the traits want " + (t.has_weight ? "dW " : "") + (t.has_bias ? "dB" : ""));
    return;
  }
  if (!want_w && !want_b) return;
  const DwdbPartition part = dwdb_partition(g.m, n);
  if (g.partition.chunks != part.chunks || g.partition.rows_per_chunk != part.rows_per_chunk) {
    ck.fail("the partials' partition (" + std::to_string(g.partition.chunks) + " chunks of " +
            std::to_string(g.partition.rows_per_chunk) + " rows) is not dwdb_partition's (" +
            std::to_string(part.chunks) + " of " + std::to_string(part.rows_per_chunk) + ")");
    return;
  }
  const std::size_t want_size = static_cast<std::size_t>(part.chunks * n);
  if ((want_w && g.dw_partials.size() != want_size) || (want_b && g.db_partials.size() != want_size)) {
    ck.fail("the partials have the wrong size (want " + std::to_string(want_size) + " doubles each)");
    return;
  }
  // (a) the first and the last chunk, recomputed.
  check_chunk(g, 0, ck);
  ++ck.r_.dwdb_chunks_checked;
  if (part.chunks > 1) {
    check_chunk(g, part.chunks - 1, ck);
    ++ck.r_.dwdb_chunks_checked;
  }
  // (b) the partials summed in chunk order: the GPU's dW / dB bit for bit.
  auto sums = [&](const char* name, const std::vector<double>& partials, const Bytes& gpu) {
    const Bytes host = sum_partials(partials.data(), part.chunks, n, wd);
    if (gpu.size() != host.size()) {
      ck.fail(std::string(name) + ": " + std::to_string(gpu.size()) + " bytes downloaded for N = " +
              std::to_string(n));
      return;
    }
    if (std::memcmp(host.data(), gpu.data(), host.size()) == 0) return;
    // Bit for bit, but any NaN equals any NaN (the GPU's fp32 rounding of a
    // NaN keeps no payload).
    std::int64_t bad = 0, first = -1;
    for (std::int64_t j = 0; j < n; ++j) {
      const std::uint32_t h = bits_at(wd, host.data(), j), d = bits_at(wd, gpu.data(), j);
      if (h == d || (is_nan_bits(wd, h) && is_nan_bits(wd, d))) continue;
      if (bad++ == 0) first = j;
    }
    if (bad == 0) return;
    ck.fail(std::string(name) + " [" + std::to_string(first) + "]: GPU " + value_text(wd, gpu.data(), first) +
            ", the host's sum of the GPU's partials " + value_text(wd, host.data(), first) + " (" +
            std::to_string(bad) + " of " + std::to_string(n) + " columns differ)");
  };
  if (want_w) sums("dweight", g.dw_partials, g.dw);
  if (want_b) sums("dbias", g.db_partials, g.db);
}

}  // namespace

DwdbPartition dwdb_partition(std::int64_t m, std::int64_t n) {
  if (m < 1 || n < 1)
    throw Error("lntune: dwdb_partition needs M >= 1 and N >= 1, got M=" + std::to_string(m) +
                " N=" + std::to_string(n));
  constexpr std::int64_t kMinChunkElements = std::int64_t{1} << 20, kMaxPartialElements = std::int64_t{1} << 22;
  const std::int64_t most_chunks = std::max<std::int64_t>(1, kMaxPartialElements / n);
  std::int64_t rows = std::max((kMinChunkElements + n - 1) / n, (m + most_chunks - 1) / most_chunks);
  rows = std::min(rows, m);
  DwdbPartition p;
  p.rows_per_chunk = rows;
  p.chunks = (m + rows - 1) / rows;
  return p;
}

std::vector<std::int64_t> sampled_rows(std::int64_t m) {
  if (m < 1) throw Error("lntune: sampled_rows needs M >= 1, got " + std::to_string(m));
  constexpr std::int64_t kSteps = 7;
  std::vector<std::int64_t> rows;
  const std::int64_t stride = std::max<std::int64_t>(1, (m - 1) / kSteps);
  for (std::int64_t k = 0; k < kSteps && k * stride < m - 1; ++k) rows.push_back(k * stride);
  rows.push_back(m - 1);
  return rows;
}

std::uint64_t ulp_distance(DType dtype, const void* a, const void* b) {
  const std::uint32_t x = bits_at(dtype, a, 0), y = bits_at(dtype, b, 0);
  const bool nx = is_nan_bits(dtype, x), ny = is_nan_bits(dtype, y);
  if (nx || ny) return nx && ny ? 0 : std::numeric_limits<std::uint64_t>::max();
  const std::int64_t d = ordinal(dtype, x) - ordinal(dtype, y);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

UlpCount count_ulps(DType dtype, const void* got, const void* want, std::int64_t count, std::uint64_t max_ulps,
                    double abs_floor) {
  UlpCount c;
  const std::size_t es = dtype_size(dtype);
  const auto* g = static_cast<const unsigned char*>(got);
  const auto* w = static_cast<const unsigned char*>(want);
  for (std::int64_t i = 0; i < count; ++i) {
    ++c.compared;
    const std::uint64_t u = ulp_distance(dtype, g + static_cast<std::size_t>(i) * es, w + static_cast<std::size_t>(i) * es);
    c.worst = std::max(c.worst, u);
    if (u == 0) continue;
    const auto near = [&] {
      const double a = ref::load_element(dtype, got, i), b = ref::load_element(dtype, want, i);
      return std::isfinite(a) && std::isfinite(b) && std::fabs(a - b) <= abs_floor;
    };
    if (u <= max_ulps || (abs_floor > 0.0 && near())) {
      ++c.within;
    } else if (c.beyond++ == 0) {
      c.first_beyond = i;
    }
  }
  return c;
}

double cancellation_floor(DType dtype, const void* want, std::int64_t count) {
  double most = 0.0;
  for (std::int64_t i = 0; i < count; ++i) {
    const double v = std::fabs(ref::load_element(dtype, want, i));
    if (std::isfinite(v)) most = std::max(most, v);
  }
  return std::ldexp(most, -36);
}

std::vector<unsigned char> sum_partials(const double* partials, std::int64_t chunks, std::int64_t n, DType dtype) {
  if (chunks < 1 || n < 1) throw Error("lntune: sum_partials needs chunks >= 1 and N >= 1");
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * dtype_size(dtype));
  for (std::int64_t j = 0; j < n; ++j) {
    double s = 0.0;
    for (std::int64_t c = 0; c < chunks; ++c) s += partials[static_cast<std::size_t>(c * n + j)];
    ref::store_element(dtype, out.data(), j, s);
  }
  return out;
}

double chunk_tolerance(std::int64_t rows) {
  return 1e-12 + 2.0 * static_cast<double>(std::max<std::int64_t>(rows, 1)) * 0x1p-53;
}

OracleReport check_gpu_reference(const GpuReferenceSample& g) {
  const Traits& t = g.traits;
  if (t.kernel == Kernel::bwd_dwdb) throw Error("lntune: check_gpu_reference: the kernel is fwd or bwd_dx");
  if (g.m < 1 || g.n < 1) throw Error("lntune: check_gpu_reference needs M >= 1 and N >= 1");
  if (g.rows != sampled_rows(g.m)) throw Error("lntune: check_gpu_reference: the rows are not sampled_rows(M)");
  OracleReport r;
  Checker ck(g, r);
  if (t.kernel == Kernel::fwd)
    check_forward(g, ck);
  else
    check_backward(g, ck);
  ck.finish();
  return r;
}

}  // namespace lntune::tune
