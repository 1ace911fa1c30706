// lntune: typed vocabulary shared by every layer (generator, runtime, tuner,
// cache, CLI). No string ever stands in for one of these: parse once at the
// edge (CLI, C ABI, SQLite row) and carry the typed value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "lntune/export.h"

namespace lntune {

// Element type of x, y, dy, dx (and, separately, of weight/bias and their
// gradients). Statistics (mean, rstd) and all accumulation are fp32.
enum class DType : int { f32 = 0, f16 = 1, bf16 = 2 };

// The three kernels of a fused LayerNorm.
enum class Kernel : int {
  fwd = 0,       // y, mean, rstd from x, weight, bias
  bwd_dx = 1,    // dx from dy, x, weight, mean, rstd; plus per-CTA partial dW/dB
  bwd_dwdb = 2,  // dW/dB from the partials, in a fixed (deterministic) order
};

LNTUNE_API std::size_t dtype_size(DType d);
LNTUNE_API std::string_view to_string(DType d);    // "fp32", "fp16", "bf16"
LNTUNE_API std::string_view to_string(Kernel k);   // "fwd", "bwd_dx", "bwd_dwdb"
LNTUNE_API std::optional<DType> parse_dtype(std::string_view s);   // accepts fp32/f32/float32, ...
LNTUNE_API std::optional<Kernel> parse_kernel(std::string_view s);
LNTUNE_API std::ostream& operator<<(std::ostream& os, DType d);   // to_string (also what gtest prints)
LNTUNE_API std::ostream& operator<<(std::ostream& os, Kernel k);

// Which normalisation a kernel computes.
//   layer: xhat = (x - mean) * rstd, rstd = 1/sqrt(var + eps)     (LayerNorm)
//   rms:   xhat = x * rstd,          rstd = 1/sqrt(mean(x^2) + eps) (RMSNorm; no mean)
enum class Norm : int { layer = 0, rms = 1 };
LNTUNE_API std::string_view to_string(Norm n);  // "layernorm", "rmsnorm"
LNTUNE_API std::optional<Norm> parse_norm(std::string_view s);  // layernorm/layer_norm/ln, rmsnorm/rms_norm/rms

// What the problem is, independent of how it is run.
struct Traits {
  Traits() = default;
  // The LayerNorm traits (the variant fields keep their defaults; set them
  // by name).
  Traits(Kernel k, DType x, DType w, bool weight, bool bias)
      : kernel(k), x_dtype(x), w_dtype(w), has_weight(weight), has_bias(bias) {}

  Kernel kernel = Kernel::fwd;
  DType x_dtype = DType::f32;  // x, y, dy, dx
  DType w_dtype = DType::f32;  // weight, bias, dweight, dbias (ignored when both absent)
  bool has_weight = true;
  bool has_bias = true;
  // The variant. The defaults are plain LayerNorm, as before these existed.
  Norm norm = Norm::layer;
  // Fused residual add, in this dtype (none: no residual). Forward: z = x +
  // residual is written out (in this dtype) and y = norm(z). Backward: the
  // saved input is z (in this dtype) and the upstream gradient of z is added
  // into dx (dz = dnorm + dresidual_out).
  std::optional<DType> residual;
  // Zero-centred gamma: y = xhat * (1 + w) + b (needs a weight).
  bool zero_centered = false;
  // dtype of y (forward) and dy (backward); none: x_dtype.
  std::optional<DType> y_dtype;

  DType out_dtype() const { return y_dtype.value_or(x_dtype); }
  DType input_dtype() const { return residual.value_or(x_dtype); }  // the normalised row's storage

  // The same traits with fields that cannot matter set to a canonical value,
  // so that equal problems compare and hash equal (e.g. w_dtype when there is
  // neither weight nor bias; y_dtype equal to x_dtype; zero_centered without a
  // weight; for bwd_dwdb, which only sums fp32 partials, every variant field).
  LNTUNE_API Traits canonical() const;
  friend LNTUNE_API bool operator==(const Traits& a, const Traits& b);
  friend bool operator!=(const Traits& a, const Traits& b) { return !(a == b); }
};
LNTUNE_API std::ostream& operator<<(std::ostream& os, const Traits& t);

// How the problem is run: the tuning parameters.
//   block_size   fwd/bwd_dx: columns of a row processed per tile (power of two);
//                a row of N <= block_size is held in registers, longer rows are
//                processed in ceil(N / block_size) tiles.
//                bwd_dwdb: columns per CTA.
//   num_warps    warps per CTA (1..32).
//   rows_per_cta fwd/bwd_dx: rows processed side by side by one CTA, each by
//                32*num_warps/rows_per_cta threads (power of two). bwd_dwdb: 1.
//   group_size_m bwd_dx: number of CTAs (clusters, with cluster_size > 1) of
//                the persistent backward, hence the number of partial dW/dB
//                rows (times rows_per_cta) that bwd_dwdb reduces. 0 for the
//                other kernels. It is a launch parameter: it never changes
//                the compiled code.
//   cluster_size fwd/bwd_dx: CTAs of a thread-block cluster (sm_90+) that
//                share one row, each holding block_size columns of it in
//                registers; row sums go through distributed shared memory.
//                1 = no cluster.
struct Config {
  int block_size = 0;
  int num_warps = 0;
  int rows_per_cta = 1;
  int group_size_m = 0;
  int cluster_size = 1;

  int threads() const { return 32 * num_warps; }
  int threads_per_row() const { return threads() / rows_per_cta; }
  friend bool operator==(const Config& a, const Config& b) {
    return a.block_size == b.block_size && a.num_warps == b.num_warps &&
           a.rows_per_cta == b.rows_per_cta && a.group_size_m == b.group_size_m &&
           a.cluster_size == b.cluster_size;
  }
  friend bool operator!=(const Config& a, const Config& b) { return !(a == b); }
};
LNTUNE_API std::ostream& operator<<(std::ostream& os, const Config& c);
LNTUNE_API std::string to_string(const Config& c);  // "block_size=1024 num_warps=4 rows_per_cta=1 group_size_m=0[ cluster_size=2]"

// Everything that determines a compiled kernel's source: traits, the compile-
// time parts of the config, and two facts about the call that the code is
// specialised for (vector width allowed by alignment; whether a row fits one
// tile). Launch-only parameters (group_size_m) are excluded.
struct InstanceKey {
  Traits traits;
  int block_size = 0;
  int num_warps = 0;
  int rows_per_cta = 1;
  int vec = 1;             // elements per vector access (1, 2, 4, 8)
  bool single_tile = true; // N <= block_size * cluster_size (fwd/bwd_dx); unused by bwd_dwdb
  int cluster_size = 1;

  friend LNTUNE_API bool operator==(const InstanceKey& a, const InstanceKey& b);
  friend bool operator!=(const InstanceKey& a, const InstanceKey& b) { return !(a == b); }
  // Stable, readable, e.g. "fwd_bf16_wbf16_wb_b1024_w4_r1_v8_s"; variants add
  // a suffix ("_rms", "_rfp32" residual, "_zc", "_ofp32" output dtype), so
  // LayerNorm names are what they were.
  LNTUNE_API std::string name() const;
};
LNTUNE_API std::ostream& operator<<(std::ostream& os, const InstanceKey& k);

// Thrown (C++ API) for invalid arguments; the C ABI maps it to a status.
class LNTUNE_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace lntune

template <>
struct std::hash<lntune::Config> {
  std::size_t operator()(const lntune::Config& c) const noexcept;
};

template <>
struct std::hash<lntune::InstanceKey> {
  LNTUNE_API std::size_t operator()(const lntune::InstanceKey& k) const noexcept;
};
