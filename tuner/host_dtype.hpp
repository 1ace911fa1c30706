// lntune: host-side conversions between double/float and the storage dtypes
// (IEEE binary32, binary16 "fp16", bfloat16). Header-only, no dependencies
// beyond the DType enum.
//
// Rounding is always round-to-nearest, ties-to-even (RNE), the rounding of the
// GPU's __float2half_rn / __float2bfloat16_rn. The *_from-double functions
// round the double directly to the 16-bit format (one rounding): rounding
// double -> float -> half can differ from that in rare ties (double rounding),
// and the reference must round the exact result exactly once.
//
//   overflow         -> +-inf (RNE: a value at or beyond max + half an ulp)
//   underflow        -> subnormals, then +-0 (gradual, RNE)
//   NaN              -> quiet NaN of the same sign, top payload bits kept
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "lntune/types.hpp"

namespace lntune::ref {

namespace detail {

template <class To, class From>
inline To bit_cast(const From& f) noexcept {
  static_assert(sizeof(To) == sizeof(From), "bit_cast size mismatch");
  To t;
  std::memcpy(&t, &f, sizeof(To));
  return t;
}

// Round a double to a binary format with `m` stored fraction bits and `e`
// exponent bits (sign bit at position m + e), RNE. Returns the bit pattern.
inline uint16_t round_double_to_small(double v, int m, int e) noexcept {
  const uint64_t b = bit_cast<uint64_t>(v);
  const uint32_t sign = static_cast<uint32_t>(b >> 63) << (m + e);
  const int dexp = static_cast<int>((b >> 52) & 0x7ff);
  const uint64_t frac = b & ((uint64_t{1} << 52) - 1);
  const uint32_t expmax = (1u << e) - 1;          // all-ones exponent field
  const uint32_t inf = sign | (expmax << m);
  if (dexp == 0x7ff) {
    if (frac == 0) return static_cast<uint16_t>(inf);
    // NaN: keep the top payload bits, force the quiet bit.
    const uint32_t payload = static_cast<uint32_t>(frac >> (52 - m));
    return static_cast<uint16_t>(inf | (1u << (m - 1)) | payload);
  }
  // Zero, or a double subnormal (< 2^-1022): far below half the smallest
  // subnormal of either 16-bit format, so it rounds to a signed zero.
  if (dexp == 0) return static_cast<uint16_t>(sign);

  const int bias = (1 << (e - 1)) - 1;
  const int E = dexp - 1023;                      // unbiased exponent
  const int emin = 1 - bias;                      // smallest normal exponent
  if (E > bias) return static_cast<uint16_t>(inf);  // >= 2^(emax+1)

  const uint64_t sig = (uint64_t{1} << 52) | frac;  // value = sig * 2^(E-52)
  int shift = 52 - m;
  const bool normal = E >= emin;
  if (!normal) {
    // Result quantum is 2^(emin - m): shift further right.
    shift += emin - E;
    if (shift >= 54) return static_cast<uint16_t>(sign);  // < 1/4 of min subnormal
  }
  uint64_t q = sig >> shift;
  const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
  const uint64_t halfway = uint64_t{1} << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) ++q;
  // For normals, q is in [2^m, 2^(m+1)]; a carry to 2^(m+1) bumps the
  // exponent field by one through the addition. For subnormals, q == 2^m is
  // exactly the smallest normal's bit pattern.
  const uint64_t res =
      normal ? ((static_cast<uint64_t>(E + bias) << m) + (q - (uint64_t{1} << m))) : q;
  if (res >= (static_cast<uint64_t>(expmax) << m)) return static_cast<uint16_t>(inf);
  return static_cast<uint16_t>(sign | static_cast<uint32_t>(res));
}

}  // namespace detail

// Bytes per element of a storage dtype (a local copy of lntune::dtype_size,
// so that this header needs nothing but the enum).
inline std::size_t element_size(DType d) noexcept {
  return d == DType::f32 ? 4 : 2;
}

// ---- fp16 (IEEE binary16: 1 sign, 5 exponent, 10 fraction bits) -----------

// Exact: every binary16 value is a binary32 value.
inline float half_to_float(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    // Subnormal or zero: man * 2^-24 (exact in float).
    const float v = static_cast<float>(man) * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  uint32_t bits;
  if (exp == 31)
    bits = sign | 0x7f800000u | (man << 13);  // inf / NaN (payload kept)
  else
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  return detail::bit_cast<float>(bits);
}

inline uint16_t double_to_half(double v) noexcept {
  // Fast path: through float, when that cannot round twice. A double rounds
  // to the nearest float, and every midpoint between two halves is a float,
  // so the float is a half midpoint only if the double was one or was
  // rounded onto it; otherwise rounding the float gives the same half. Taken
  // for normal halves that are not float midpoints (the common case);
  // everything else goes the exact way.
  const float f = static_cast<float>(v);
  const uint32_t b = detail::bit_cast<uint32_t>(f);
  const int e = static_cast<int>((b >> 23) & 0xffu) - 127;
  if (e >= -14 && e <= 15 && (b & 0x1fffu) != 0x1000u) {
    const uint32_t man = b & 0x7fffffu;
    uint32_t h = (static_cast<uint32_t>(e + 15) << 10) | (man >> 13);
    if ((man & 0x1fffu) > 0x1000u) ++h;  // a carry moves into the exponent, as it should
    if (h < 0x7c00u) return static_cast<uint16_t>(((b >> 16) & 0x8000u) | h);
  }
  return detail::round_double_to_small(v, 10, 5);
}

// float -> double is exact, so this is a single RNE rounding.
inline uint16_t float_to_half(float f) noexcept {
  return double_to_half(static_cast<double>(f));
}

// ---- bf16 (1 sign, 8 exponent, 7 fraction bits: the top half of a float) ---

inline float bf16_to_float(uint16_t h) noexcept {
  return detail::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

inline uint16_t float_to_bf16(float f) noexcept {
  const uint32_t bits = detail::bit_cast<uint32_t>(f);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0)
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);  // quiet NaN
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);  // carries into inf correctly
}

inline uint16_t double_to_bf16(double v) noexcept {
  // Fast path through float, as double_to_half: a normal float that is not a
  // bf16 midpoint rounds to the same bf16 as the double it came from.
  const float f = static_cast<float>(v);
  const uint32_t b = detail::bit_cast<uint32_t>(f);
  const uint32_t e = (b >> 23) & 0xffu;
  if (e != 0 && e != 0xffu && (b & 0xffffu) != 0x8000u) return float_to_bf16(f);
  return detail::round_double_to_small(v, 7, 8);
}

// ---- typed storage (no per-element dtype dispatch) -------------------------

template <DType D>
using Storage = std::conditional_t<D == DType::f32, float, uint16_t>;

// A stored value as a double (exact for every dtype).
template <DType D>
inline double to_double(Storage<D> s) noexcept {
  if constexpr (D == DType::f32)
    return static_cast<double>(s);
  else if constexpr (D == DType::bf16)
    return static_cast<double>(bf16_to_float(s));
  else
    return static_cast<double>(half_to_float(s));
}

// v rounded once (RNE) into D's storage. f32: (float)v.
template <DType D>
inline Storage<D> round_to(double v) noexcept {
  if constexpr (D == DType::f32)
    return static_cast<float>(v);
  else if constexpr (D == DType::bf16)
    return double_to_bf16(v);
  else
    return double_to_half(v);
}

// ---- typed element access (index in elements from base) -------------------

// The element as a double (exact for every dtype).
inline double load_element(DType d, const void* base, int64_t index) noexcept {
  switch (d) {
    case DType::f32:
      return static_cast<double>(static_cast<const float*>(base)[index]);
    case DType::f16:
      return static_cast<double>(half_to_float(static_cast<const uint16_t*>(base)[index]));
    case DType::bf16:
      return static_cast<double>(bf16_to_float(static_cast<const uint16_t*>(base)[index]));
  }
  return 0.0;
}

// Stores v rounded once (RNE) to the dtype. f32: (float)v.
inline void store_element(DType d, void* base, int64_t index, double v) noexcept {
  switch (d) {
    case DType::f32:
      static_cast<float*>(base)[index] = static_cast<float>(v);
      return;
    case DType::f16:
      static_cast<uint16_t*>(base)[index] = double_to_half(v);
      return;
    case DType::bf16:
      static_cast<uint16_t*>(base)[index] = double_to_bf16(v);
      return;
  }
}

}  // namespace lntune::ref
