// lntune: checking a GPU output against the CPU reference.
//
// Both arrays are stored in the same DType. An element passes when
//
//     |got - want| <= atol + rtol * |want|
//
// NaN in want requires NaN in got at that element and vice versa; infinities
// must match exactly (same sign). With a poison pattern, an element of got
// whose bits still equal the pattern is reported as unwritten (a failure).
//
// ---------------------------------------------------------------------------
// Default tolerances: derived from the precision of the formats, never tuned
// to make a test pass.
//
// Notation
//   u    = 2^-24, unit roundoff of fp32, the kernels' arithmetic and
//          accumulation type
//   uo   = unit roundoff of the output dtype: 2^-24 (fp32), 2^-11 (fp16),
//          2^-8 (bf16)
//   so   = smallest positive subnormal of the output dtype: 2^-149 (fp32),
//          2^-24 (fp16), 2^-133 (bf16)
//   s    = sqrt(N), N the row length
//   lam  = 4, the confidence factor of the probabilistic rounding-error bound
//          (Higham & Mary 2019): a reduction of n terms t_i in fp32, in any
//          order, has |error| <= lam * sqrt(n) * u * sum|t_i| with probability
//          >= 1 - 2 exp(-lam^2 / 2) ~ 0.9993 even for same-sign terms (the
//          worst-case bound n*u*sum|t_i| is never approached in practice).
//   X    = 8, the largest |xhat| assumed by terms that scale with |xhat|
//          (Gaussian rows of up to 1e8 elements stay below ~6).
//   mag  = the `magnitude` argument (default 1), the scale of the inputs in
//          the units given for each quantity below.
//
// The reference is exact to within half an ulp of the output (it rounds a
// double result once), so:
//   * the GPU rounds its fp32 result r' = r + d (d its fp32 arithmetic error)
//     to the output format, the reference rounds the exact r; then
//     |got - want| <= (1 + uo) * d + 2 uo/(1 - uo) * |want|, i.e. one ulp of
//     the output (rtol term `one_ulp` = 2uo/(1-uo)) plus the arithmetic error;
//     near zero the rounding error is absolute (half a subnormal step each),
//     covered by the `so` in every atol.
//
// Building blocks (fp32 kernel errors, dimensionless):
//   e_mean = 2 lam s u           error of mean(x) in units of std(x): the
//                                mean of N terms, sum|x|/N <= 2 std(x) when
//                                |mean(x)| <= sqrt(3) std(x) (assumed; for
//                                offset data pass mag = (|mean|+std)/std)
//   e_r    = (lam/2) s u + 3u    relative error of rstd: var is a mean of N
//                                same-sign terms (lam s u relative), halved by
//                                the square root; +2u for rsqrtf (CUDA's
//                                bound; the kernels take rstd = rsqrtf(var +
//                                eps)), +1u for var = sum * (1/N) (the
//                                rounding of 1/N and of the product)
//
// y = xhat * w + b,  mag >= max|w|, max|b|  (xhat = O(1) by construction):
//   xhat's error is rstd * d_mean + |xhat| e_r + 2u|xhat| (x - mean, * rstd);
//   w*xhat and + b add u each. Errors proportional to |xhat w| are bounded
//   through |xhat w| <= |y| + |b| <= |want| + mag, so they go into rtol and
//   atol both (no X needed):
//     rtol_y = one_ulp + (1+uo) (e_r + 5u)          (+u: zero-centred 1 + w)
//     atol_y = (1+uo) mag (e_mean + e_r + 6u) + so
//
// dx = rstd (wdy - xhat c1 - c2),  mag >= rstd * max|w dy|  (rstd = 1/std(x)):
//   |rstd c1|, |rstd c2| <= mag (Cauchy-Schwarz, mean(xhat^2) <= 1);
//   rstd*d_c2 <= lam s u mag (mean of N terms);
//   rstd*d_c1 <= mag (lam s u + e_mean + e_r + 2u) (mean of N terms, each
//     carrying xhat's error; mean|xhat| <= 1);
//   xhat * d_c1 is the one term that needs |xhat| <= X; c1 * d_xhat and the
//   rounding of the products/subtractions are bounded with
//   |xhat c1 rstd| <= |dx| + 2 mag; rstd's own error is relative to |dx|:
//     rtol_dx = one_ulp + (1+uo) (2 e_r + 8u)       (+2u: 1 + w, + dz)
//     atol_dx = (1+uo) mag [ (X+1) e_mean + (X+2) e_r + (X+1) lam s u
//                            + (2X + 15) u ] + so
//
// dweight, dbias (sums over M rows of dy*xhat, resp. dy),  mag >= max|dy|:
//   the fp32 sum (per-CTA partials, then the partials, any blocking) of M
//   terms with sum|t| <= M mag (mean |xhat| over a column <= 1 assumed):
//   lam sqrt(M) u M mag; plus each term's error from xhat,
//   |dy| (e_mean + |xhat| (e_r + 3u)), independent between rows, so growing
//   like lam sqrt(M) (same probabilistic model):
//     rtol_dw = one_ulp
//     atol_dw = (1+uo) mag lam sqrt(M) [ M u + e_mean + X (e_r + 3u) ] + so
//   The M u term dominates: it is the honest cost of accumulating M products
//   in fp32 (it vanishes relative to |dw| only when the terms share a sign).
//
// mean_rstd (always fp32: the `out` argument is ignored), mag = std(x) scale:
//   rstd: relative error e_r plus the fp32 rounding of the stored value;
//   mean: absolute error e_mean * std(x):
//     rtol = one_ulp + e_r + 2u
//     atol = mag (e_mean + u) + so(fp32)
//
// The variants of issue 11 (the same formulas, which stay valid bounds):
//   RMSNorm: no mean, so e_mean's terms vanish (keeping them only loosens the
//     bound); rstd is 1/sqrt of a mean of N same-sign terms x^2, the e_r
//     analysis as is; mean(xhat^2) <= 1 still holds, so every Cauchy-Schwarz
//     step above does; dx has no c2 term.
//   Zero-centred gamma: the applied weight is the fp32 sum 1 + w, one more
//     rounding (u) relative to each weight term: +u in rtol_y and rtol_dx;
//     mag must bound max|1 + w| instead of max|w|.
//   Fused residual, forward: z is the fp32 sum x + residual rounded to the
//     residual's dtype, in the kernels and in the reference alike (which
//     forms the correctly rounded fp32 sum in double, then rounds it: the
//     same two steps, so the same bits; one step short of that, e.g. a
//     single rounding of the exact sum, differs from the kernels' by an ulp
//     of z for fp32 x with a 16-bit residual); Quantity::y with mag 0
//     (rtol = one_ulp, atol = so) bounds z with room to spare, and the
//     reference normalises the same stored z. Backward: dx = dnorm + dz adds
//     one fp32 rounding relative to the sum: +u in rtol_dx; mag must bound
//     max|dz| too. The residual's gradient (dresidual) is that same fp32
//     value stored in the residual's dtype: Quantity::dx with `out` = the
//     residual's dtype.
//   Output dtype: `out` is the dtype of the compared array (y's own dtype;
//     dx is in x's).
//
// The assumptions (|xhat| <= X, |mean| <~ std, mean|xhat| per column <= 1,
// mag bounding the inputs) hold for the randomly generated test data; for
// other data pass a larger `magnitude`.
// ---------------------------------------------------------------------------
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lntune/types.hpp"

namespace lntune::ref {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// What is compared (dweight covers dbias too).
enum class Quantity { y, dx, dweight, mean_rstd };

// out: the dtype of the compared arrays (ignored for mean_rstd: fp32).
// N: row length; M: number of rows (used by dweight only).
// magnitude: the input scale in the units documented above (default 1).
Tolerance default_tolerance(DType out, Quantity q, int64_t N, int64_t M,
                            double magnitude = 1.0);

struct CompareResult {
  bool ok = true;
  int64_t checked = 0;        // elements compared (rows * cols)
  int64_t mismatches = 0;     // failing elements, all causes
  int64_t unwritten = 0;      // got still equal to the poison pattern
  int64_t nan_mismatch = 0;   // NaN in exactly one of got / want
  int64_t first_bad_row = -1, first_bad_col = -1;  // row-major first failure
  double max_abs_err = 0;     // over elements where both are finite
  double max_rel_err = 0;     // |got - want| / |want| over finite, nonzero want
  double rel_l2_err = 0;      // ||got - want||_2 / ||want||_2 over finite pairs
  std::string message;        // human readable; names the first bad element
};

// Compares rows x cols elements; strides in elements. poison_bits: the
// pattern poison() wrote (only its low 16 bits for fp16/bf16).
CompareResult compare(DType dtype, const void* got, const void* want, int64_t rows,
                      int64_t cols, int64_t got_stride, int64_t want_stride, Tolerance tol,
                      std::optional<uint32_t> poison_bits = {});

// A distinctive NaN bit pattern that arithmetic never produces:
// fp32 0x7fbadbad (signalling NaN), fp16 0x7fbb, bf16 0x7fbb (signalling).
uint32_t poison_bits(DType dtype);

// Fills count elements with poison_bits(dtype).
void poison(DType dtype, void* data, int64_t count);

}  // namespace lntune::ref
