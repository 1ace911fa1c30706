// The public API's argument checking (pinned messages, C statuses) and the
// no-driver path. Needs no GPU: every check here happens before any launch.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "lntune/lntune.h"
#include "lntune/lntune.hpp"
#include "runtime/driver.hpp"

namespace {

// Plausible device pointers (never dereferenced: validation fails first).
void* fake(std::uintptr_t a) { return reinterpret_cast<void*>(a); }

lntune_forward_args valid_forward() {
  lntune_forward_args a{};
  a.x = fake(0x10000);
  a.y = fake(0x20000);
  a.weight = fake(0x30000);
  a.bias = fake(0x40000);
  a.M = 4;
  a.N = 8;
  a.x_dtype = LNTUNE_BF16;
  a.w_dtype = LNTUNE_BF16;
  a.eps = 1e-5f;
  return a;
}

lntune_backward_args valid_backward() {
  lntune_backward_args a{};
  a.dy = fake(0x10000);
  a.x = fake(0x20000);
  a.weight = fake(0x30000);
  a.mean = static_cast<const float*>(fake(0x40000));
  a.rstd = static_cast<const float*>(fake(0x50000));
  a.dx = fake(0x60000);
  a.dweight = fake(0x70000);
  a.dbias = fake(0x80000);
  a.M = 4;
  a.N = 8;
  a.x_dtype = LNTUNE_FP16;
  a.w_dtype = LNTUNE_FP32;
  return a;
}

void expect_invalid(const lntune_forward_args& a, const std::string& message) {
  EXPECT_EQ(lntune_forward(&a), LNTUNE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(lntune_last_error()), message);
}

void expect_invalid(const lntune_backward_args& a, const std::string& message) {
  EXPECT_EQ(lntune_backward(&a), LNTUNE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(lntune_last_error()), message);
}

TEST(ApiForward, RejectsBadShapes) {
  auto a = valid_forward();
  a.N = 0;
  expect_invalid(a, "lntune: forward: N must be >= 1, got 0");
  a = valid_forward();
  a.M = -1;
  expect_invalid(a, "lntune: forward: M must be >= 0, got -1");
}

TEST(ApiForward, RejectsStridesShorterThanARow) {
  auto a = valid_forward();
  a.x_row_stride = 7;
  expect_invalid(a, "lntune: forward: x_row_stride (7) must be 0 (contiguous) or at least N (8)");
  a = valid_forward();
  a.y_row_stride = 3;
  expect_invalid(a, "lntune: forward: y_row_stride (3) must be 0 (contiguous) or at least N (8)");
}

TEST(ApiForward, RejectsNullData) {
  auto a = valid_forward();
  a.x = nullptr;
  expect_invalid(a, "lntune: forward: x must not be null");
  a = valid_forward();
  a.y = nullptr;
  expect_invalid(a, "lntune: forward: y must not be null");
  EXPECT_EQ(lntune_forward(nullptr), LNTUNE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(lntune_last_error()), "lntune: lntune_forward: args must not be null");
}

TEST(ApiForward, RejectsNonFiniteEps) {
  // Any finite eps is accepted (torch computes with 0 and negative eps too);
  // argument checks run before the driver, so M = 0 shows acceptance without a GPU.
  auto a = valid_forward();
  a.M = 0;
  for (float eps : {0.f, -0.5f, 1e-5f}) {
    a.eps = eps;
    EXPECT_EQ(lntune_forward(&a), LNTUNE_OK) << eps << ": " << lntune_last_error();
  }
  a = valid_forward();
  a.eps = std::numeric_limits<float>::quiet_NaN();
  expect_invalid(a, "lntune: forward: eps must be a finite number, got nan");
  a.eps = std::numeric_limits<float>::infinity();
  EXPECT_EQ(lntune_forward(&a), LNTUNE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lntune_last_error()).find("eps must be a finite number"), std::string::npos);
}

TEST(ApiForward, RejectsUnsupportedDtypes) {
  auto a = valid_forward();
  const int seven = 7;  // an out-of-range enum value, as FFI callers can pass
  std::memcpy(&a.x_dtype, &seven, sizeof seven);
  expect_invalid(a, "lntune: x_dtype is not a valid lntune_dtype: 7");
  a = valid_forward();
  a.x_dtype = LNTUNE_BF16;
  a.w_dtype = LNTUNE_FP16;
  expect_invalid(a, "lntune: forward: w_dtype must be the x dtype (bf16) or fp32, got fp16");
}

TEST(ApiForward, RejectsMisalignedPointers) {
  auto a = valid_forward();
  a.x = fake(0x10001);
  expect_invalid(a, "lntune: forward: x is not aligned to its element size (2 bytes)");
  a = valid_forward();
  a.x_dtype = LNTUNE_FP32;
  a.w_dtype = LNTUNE_FP32;
  a.mean = static_cast<float*>(fake(0x50002));
  expect_invalid(a, "lntune: forward: mean is not aligned to its element size (4 bytes)");
}

TEST(ApiBackward, RejectsBadArguments) {
  auto a = valid_backward();
  a.weight = nullptr;
  expect_invalid(a, "lntune: backward: dweight was given but weight is null (a LayerNorm without weight has no dW)");
  a = valid_backward();
  a.mean = nullptr;
  expect_invalid(a, "lntune: backward: mean must not be null");
  a = valid_backward();
  a.dx_row_stride = 2;
  expect_invalid(a, "lntune: backward: dx_row_stride (2) must be 0 (contiguous) or at least N (8)");
  a = valid_backward();
  a.workspace = fake(0x90008);
  a.workspace_bytes = 1 << 20;
  expect_invalid(a, "lntune: backward: workspace must be 16-byte aligned");
  a = valid_backward();
  a.N = -3;
  expect_invalid(a, "lntune: backward: N must be >= 1, got -3");
  size_t bytes = 1;
  EXPECT_EQ(lntune_backward_workspace_size(&a, &bytes), LNTUNE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lntune_backward_workspace_size(&a, nullptr), LNTUNE_ERROR_INVALID_ARGUMENT);
}

TEST(ApiCpp, ThrowsLntuneError) {
  lntune::ForwardArgs a;
  a.M = 2;
  a.N = 0;
  try {
    lntune::forward(a);
    FAIL() << "expected lntune::Error";
  } catch (const lntune::Error& e) {
    EXPECT_STREQ(e.what(), "lntune: forward: N must be >= 1, got 0");
  }
}

TEST(Api, ZeroRowsForwardIsANoOpEvenWithoutAGpu) {
  auto a = valid_forward();
  a.M = 0;
  a.x = nullptr;  // nothing is read when there are no rows
  a.y = nullptr;
  EXPECT_EQ(lntune_forward(&a), LNTUNE_OK) << lntune_last_error();
  EXPECT_STREQ(lntune_last_error(), "");
}

// One version: the library reports project(VERSION), as the headers do.
TEST(Api, Version) {
  EXPECT_STREQ(lntune_version(), LNTUNE_VERSION);
  EXPECT_STREQ(lntune::version(), LNTUNE_VERSION);
}
// Hardening (issue 14): strides have an upper bound, so that M * stride
// cannot overflow; set_tuned takes only 0 or 1; a zero-row backward checks
// the alignment of dweight and dbias (it writes them) like any other.
TEST(ApiHardening, StridesAreBounded) {
  auto a = valid_forward();
  a.x_row_stride = std::numeric_limits<std::int64_t>::max();
  expect_invalid(a, "lntune: forward: x_row_stride (9223372036854775807) is too large (at most 2^48 elements)");
  a = valid_forward();
  a.M = std::int64_t{1} << 40;
  a.y_row_stride = std::int64_t{1} << 20;  // each alone fine, the product is not
  expect_invalid(a, "lntune: forward: y_row_stride (1048576) is too large for M = 1099511627776: "
                    "the rows span more than 2^48 elements");
  a.M = 0;  // checked whatever M is
  a.y_row_stride = std::int64_t{1} << 49;
  expect_invalid(a, "lntune: forward: y_row_stride (562949953421312) is too large (at most 2^48 elements)");
  auto b = valid_backward();
  b.dy_row_stride = std::numeric_limits<std::int64_t>::max() / 2;
  expect_invalid(b, "lntune: backward: dy_row_stride (4611686018427387903) is too large (at most 2^48 elements)");
  b = valid_backward();
  b.M = std::int64_t{1} << 30;
  b.dx_row_stride = std::int64_t{1} << 19;
  expect_invalid(b, "lntune: backward: dx_row_stride (524288) is too large for M = 1073741824: "
                    "the rows span more than 2^48 elements");
  b.dx_row_stride = std::int64_t{1} << 18;  // (M - 1) * stride + N < 2^48: fine (fails later, without a GPU)
  lntune_backward(&b);
  EXPECT_EQ(std::string(lntune_last_error()).find("too large"), std::string::npos) << lntune_last_error();
}

TEST(ApiHardening, SetTunedTakesZeroOrOne) {
  EXPECT_EQ(lntune_set_tuned(-7), LNTUNE_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(lntune_last_error(), "lntune: lntune_set_tuned: enabled must be 0 or 1, got -7");
  EXPECT_EQ(lntune_set_tuned(2), LNTUNE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lntune_set_tuned(1), LNTUNE_OK) << lntune_last_error();
  EXPECT_EQ(lntune_set_tuned(0), LNTUNE_OK) << lntune_last_error();
  EXPECT_EQ(lntune_set_tuned(1), LNTUNE_OK) << lntune_last_error();
}

TEST(ApiHardening, ZeroRowBackwardChecksGradientAlignment) {
  auto b = valid_backward();
  b.M = 0;
  b.dweight = fake(0x70002);  // fp32 weights: 4-byte alignment
  expect_invalid(b, "lntune: backward: dweight is not aligned to its element size (4 bytes)");
  b = valid_backward();
  b.M = 0;
  b.dbias = fake(0x80001);
  expect_invalid(b, "lntune: backward: dbias is not aligned to its element size (4 bytes)");
  size_t bytes = 1;
  EXPECT_EQ(lntune_backward_workspace_size(&b, &bytes), LNTUNE_ERROR_INVALID_ARGUMENT);
  auto f = valid_forward();
  f.M = 0;
  f.weight = fake(0x30001);
  expect_invalid(f, "lntune: forward: weight is not aligned to its element size (2 bytes)");
}


// On a machine without a driver (CI), a valid call fails cleanly: a status,
// a message naming the cause, no crash. On a GPU machine there is nothing to
// check here (the gpu label covers launches).
TEST(Api, NoDriverGivesAClearError) {
  std::string why;
  if (lntune::rt::gpu_available(&why)) GTEST_SKIP() << "a GPU is present; the no-driver path cannot be exercised";
  auto a = valid_forward();
  const lntune_status s = lntune_forward(&a);
  EXPECT_TRUE(s == LNTUNE_ERROR_NO_DRIVER || s == LNTUNE_ERROR_NO_DEVICE) << s;
  const std::string msg = lntune_last_error();
  EXPECT_TRUE(msg.find("no CUDA driver") != std::string::npos || msg.find("no usable CUDA device") != std::string::npos ||
              msg.find("no CUDA device") != std::string::npos)
      << msg;
  std::printf("[ no-gpu   ] lntune_forward -> status %d: %s\n", static_cast<int>(s), msg.c_str());
  auto b = valid_backward();
  const lntune_status sb = lntune_backward(&b);
  EXPECT_TRUE(sb == LNTUNE_ERROR_NO_DRIVER || sb == LNTUNE_ERROR_NO_DEVICE) << sb;
  EXPECT_THROW(lntune::forward(lntune::ForwardArgs{fake(0x1000), nullptr, nullptr, fake(0x2000), nullptr, nullptr, 1, 4}),
               lntune::Error);
}

// ---------------------------------------------------------------- issue 11
// lntune_norm_*: RMSNorm, fused residual, zero-centred gamma, output dtype.

lntune_norm_forward_args valid_norm_forward() {
  lntune_norm_forward_args a{};
  a.x = fake(0x10000);
  a.y = fake(0x20000);
  a.weight = fake(0x30000);
  a.rstd = static_cast<float*>(fake(0x50000));
  a.M = 4;
  a.N = 8;
  a.x_dtype = LNTUNE_BF16;
  a.w_dtype = LNTUNE_BF16;
  a.eps = 1e-6f;
  a.norm = LNTUNE_RMS_NORM;
  a.residual = fake(0x60000);
  a.residual_out = fake(0x70000);
  a.residual_dtype = LNTUNE_FP32;
  a.y_dtype = LNTUNE_BF16;
  return a;
}

lntune_norm_backward_args valid_norm_backward() {
  lntune_norm_backward_args a{};
  a.dy = fake(0x10000);
  a.x = fake(0x20000);
  a.weight = fake(0x30000);
  a.rstd = static_cast<const float*>(fake(0x50000));
  a.dx = fake(0x60000);
  a.dweight = fake(0x70000);
  a.M = 4;
  a.N = 8;
  a.x_dtype = LNTUNE_BF16;
  a.w_dtype = LNTUNE_BF16;
  a.norm = LNTUNE_RMS_NORM;
  a.residual = 1;
  a.dresidual_out = fake(0x80000);
  a.residual_dtype = LNTUNE_FP32;
  a.y_dtype = LNTUNE_BF16;
  return a;
}

void expect_invalid(const lntune_norm_forward_args& a, const std::string& message) {
  EXPECT_EQ(lntune_norm_forward(&a), LNTUNE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(lntune_last_error()), message);
}

void expect_invalid(const lntune_norm_backward_args& a, const std::string& message) {
  EXPECT_EQ(lntune_norm_backward(&a), LNTUNE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(lntune_last_error()), message);
  size_t bytes = 0;
  EXPECT_EQ(lntune_norm_backward_workspace_size(&a, &bytes), LNTUNE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(lntune_last_error()), message);
}

TEST(ApiNorm, RejectsInvalidForwardCombinations) {
  auto a = valid_norm_forward();
  a.mean = static_cast<float*>(fake(0x40000));
  expect_invalid(a, "lntune: forward: mean must be null for RMSNorm (it has no mean; rstd is what the backward needs)");
  a = valid_norm_forward();
  a.weight = nullptr;
  a.zero_centered_weight = 1;
  expect_invalid(a, "lntune: forward: zero_centered_weight needs a weight (y = xhat * (1 + w) + b)");
  a = valid_norm_forward();
  a.residual = nullptr;
  expect_invalid(a, "lntune: forward: residual_out was given without residual (z = x + residual needs both)");
  a = valid_norm_forward();
  a.residual_out = nullptr;
  expect_invalid(a, "lntune: forward: residual was given without residual_out (z = x + residual is written there; "
                    "both or neither)");
  a = valid_norm_forward();
  a.residual_row_stride = 7;
  expect_invalid(a, "lntune: forward: residual_row_stride (7) must be 0 (contiguous) or at least N (8)");
  a = valid_norm_forward();
  a.residual_out = fake(0x70002);  // fp32 z, 2-byte aligned
  expect_invalid(a, "lntune: forward: residual_out is not aligned to its element size (4 bytes)");
  a = valid_norm_forward();
  a.y = fake(0x20001);
  expect_invalid(a, "lntune: forward: y is not aligned to its element size (2 bytes)");
  a = valid_norm_forward();
  int bad = 9;
  std::memcpy(&a.norm, &bad, sizeof bad);
  expect_invalid(a, "lntune: norm is not a valid lntune_norm (LNTUNE_LAYER_NORM, LNTUNE_RMS_NORM): 9");
  a = valid_norm_forward();
  std::memcpy(&a.y_dtype, &bad, sizeof bad);
  expect_invalid(a, "lntune: y_dtype is not a valid lntune_dtype: 9");
  a = valid_norm_forward();
  std::memcpy(&a.residual_dtype, &bad, sizeof bad);
  expect_invalid(a, "lntune: residual_dtype is not a valid lntune_dtype: 9");
  // Without a residual, residual_dtype is not read.
  a.residual = nullptr;
  a.residual_out = nullptr;
  a.M = 0;
  EXPECT_EQ(lntune_norm_forward(&a), LNTUNE_OK) << lntune_last_error();
  EXPECT_EQ(lntune_norm_forward(nullptr), LNTUNE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(lntune_last_error()), "lntune: lntune_norm_forward: args must not be null");
}

TEST(ApiNorm, RejectsInvalidBackwardCombinations) {
  auto a = valid_norm_backward();
  a.residual = 0;
  expect_invalid(a, "lntune: backward: dresidual_out was given but residual is false (it is the gradient of a fused "
                    "residual add's z)");
  a = valid_norm_backward();
  a.zero_centered_weight = 1;
  a.weight = nullptr;
  a.dweight = nullptr;
  expect_invalid(a, "lntune: backward: zero_centered_weight needs a weight (y = xhat * (1 + w) + b)");
  a = valid_norm_backward();
  a.dresidual_out_row_stride = 3;
  expect_invalid(a, "lntune: backward: dresidual_out_row_stride (3) must be 0 (contiguous) or at least N (8)");
  a = valid_norm_backward();
  a.x = fake(0x20002);  // z is fp32 with a residual
  expect_invalid(a, "lntune: backward: x is not aligned to its element size (4 bytes)");
  a = valid_norm_backward();
  a.norm = LNTUNE_LAYER_NORM;  // LayerNorm needs the forward's mean
  expect_invalid(a, "lntune: backward: mean must not be null");
  a = valid_norm_backward();
  a.dy = nullptr;
  expect_invalid(a, "lntune: backward: dy must not be null");
}

// The gradient of the residual in the residual's dtype (an optional output
// appended to lntune_norm_backward_args): checked like every other output,
// and only with a residual.
TEST(ApiNorm, DresidualIsCheckedAndConverted) {
  auto a = valid_norm_backward();
  a.dresidual = fake(0x90000);
  a.residual = 0;
  a.dresidual_out = nullptr;
  expect_invalid(a, "lntune: backward: dresidual was given but residual is false (it is the gradient of a fused "
                    "residual add's residual)");
  a = valid_norm_backward();
  a.dresidual = a.dx;
  expect_invalid(a, "lntune: backward: dresidual must not be dx (it is written in the residual's dtype; with equal "
                    "dtypes, leave it null)");
  a = valid_norm_backward();
  a.dresidual = fake(0x90002);  // fp32 residual: 4-byte elements
  expect_invalid(a, "lntune: backward: dresidual is not aligned to its element size (4 bytes)");
  a = valid_norm_backward();
  a.dresidual = fake(0x90000);
  a.dresidual_row_stride = 5;
  expect_invalid(a, "lntune: backward: dresidual_row_stride (5) must be 0 (contiguous) or at least N (8)");
  // In place over dresidual_out: only with the same rows.
  a = valid_norm_backward();
  a.dresidual = const_cast<void*>(a.dresidual_out);
  a.dresidual_row_stride = 16;
  expect_invalid(a, "lntune: backward: dresidual is dresidual_out with another row stride (16 vs 8): in place needs "
                    "the same rows");
  // The C++ API checks the same (the C struct's fields reach it).
  lntune::BackwardArgs b;
  b.dy = fake(0x10000);
  b.x = fake(0x20000);
  b.rstd = static_cast<const float*>(fake(0x50000));
  b.dx = fake(0x60000);
  b.M = 4;
  b.N = 8;
  b.norm = lntune::Norm::rms;
  b.dresidual = fake(0x90000);
  try {
    lntune::backward(b);
    ADD_FAILURE() << "dresidual without a residual was accepted";
  } catch (const lntune::Error& e) {
    EXPECT_NE(std::string(e.what()).find("dresidual was given but residual is false"), std::string::npos) << e.what();
  }
}

// lntune_norm_backward_args: today's fields, then the variant's, then
// dresidual at the very end (LP64 offsets; python/lntune/_ffi.py mirrors them).
TEST(ApiNorm, NormBackwardArgsLayout) {
  if (sizeof(void*) != 8) GTEST_SKIP() << "not an LP64 platform";
  EXPECT_EQ(offsetof(lntune_norm_backward_args, stream), 128u);
  EXPECT_EQ(offsetof(lntune_norm_backward_args, norm), 136u);
  EXPECT_EQ(offsetof(lntune_norm_backward_args, dresidual_out), 152u);
  EXPECT_EQ(offsetof(lntune_norm_backward_args, y_dtype), 172u);
  EXPECT_EQ(offsetof(lntune_norm_backward_args, dresidual), 176u);
  EXPECT_EQ(offsetof(lntune_norm_backward_args, dresidual_row_stride), 184u);
  EXPECT_EQ(sizeof(lntune_norm_backward_args), 192u);
}

TEST(ApiNorm, CppDefaultsAreTheLayerNormOfBefore) {
  // A ForwardArgs/BackwardArgs that never mentions a variant is a LayerNorm
  // without options: the same checks and messages as before.
  lntune::ForwardArgs f;
  f.x = fake(0x10000);
  f.y = fake(0x20000);
  f.M = 2;
  f.N = 4;
  f.mean = static_cast<float*>(fake(0x40000));  // allowed: a LayerNorm has a mean
  f.eps = std::numeric_limits<float>::infinity();  // any finite eps is allowed (main's eps rule)
  try {
    lntune::forward(f);
    FAIL();
  } catch (const lntune::Error& e) {
    EXPECT_EQ(std::string(e.what()), "lntune: forward: eps must be a finite number, got inf");
  }
  f.norm = lntune::Norm::rms;
  f.eps = 1e-5f;
  EXPECT_THROW(lntune::forward(f), lntune::Error);  // RMSNorm with a mean
  lntune::BackwardArgs b;
  b.dy = fake(0x10000);
  b.x = fake(0x20000);
  b.dx = fake(0x30000);
  b.rstd = static_cast<const float*>(fake(0x50000));
  b.M = 2;
  b.N = 4;
  try {
    lntune::backward(b);
    FAIL();
  } catch (const lntune::Error& e) {
    EXPECT_EQ(std::string(e.what()), "lntune: backward: mean must not be null");
  }
}

}  // namespace
