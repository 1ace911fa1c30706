// The public C++ API (lntune.hpp) and the C ABI (lntune.h) over the launcher.
#include <cstring>
#include <string>

#include "lntune/lntune.h"
#include "lntune/lntune.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/runtime.hpp"

namespace lntune {

// Each call goes to the default runtime (runtime/runtime.hpp).
void forward(const ForwardArgs& a) { rt::default_runtime().forward(a); }
void backward(const BackwardArgs& a) { rt::default_runtime().backward(a); }
std::size_t backward_workspace_size(const BackwardArgs& a) { return rt::default_runtime().backward_workspace_size(a); }
Choice explain_forward(const ForwardArgs& a) { return rt::default_runtime().explain_forward(a); }
Choice explain_backward(const BackwardArgs& a) { return rt::default_runtime().explain_backward(a); }

// From project(VERSION), through the generated lntune/version.h.
const char* version() { return LNTUNE_VERSION; }

}  // namespace lntune

// ---------------------------------------------------------------- C ABI
namespace {

thread_local std::string t_last_error;

template <class F>
lntune_status guarded(F&& f) {
  try {
    f();
    t_last_error.clear();
    return LNTUNE_OK;
  } catch (const lntune::rt::NoDriverError& e) {
    t_last_error = e.what();
    return LNTUNE_ERROR_NO_DRIVER;
  } catch (const lntune::rt::NoDeviceError& e) {
    t_last_error = e.what();
    return LNTUNE_ERROR_NO_DEVICE;
  } catch (const lntune::rt::CompileError& e) {
    t_last_error = e.what();
    return LNTUNE_ERROR_COMPILE;
  } catch (const lntune::rt::CudaError& e) {
    t_last_error = e.what();
    return e.code() == CUDA_ERROR_NO_DEVICE ? LNTUNE_ERROR_NO_DEVICE : LNTUNE_ERROR_CUDA;
  } catch (const lntune::Error& e) {
    t_last_error = e.what();
    return LNTUNE_ERROR_INVALID_ARGUMENT;
  } catch (const std::exception& e) {
    t_last_error = std::string("lntune: internal error: ") + e.what();
    return LNTUNE_ERROR_INTERNAL;
  } catch (...) {
    t_last_error = "lntune: internal error";
    return LNTUNE_ERROR_INTERNAL;
  }
}

lntune::DType to_dtype(const lntune_dtype& field, const char* name) {
  // FFI callers can store any integer in the field: read it as one (loading
  // an out-of-range value as the enum would be undefined behaviour).
  int d = 0;
  static_assert(sizeof(d) == sizeof(field), "lntune_dtype is int-sized");
  std::memcpy(&d, &field, sizeof d);
  switch (d) {
    case LNTUNE_FP32: return lntune::DType::f32;
    case LNTUNE_FP16: return lntune::DType::f16;
    case LNTUNE_BF16: return lntune::DType::bf16;
  }
  throw lntune::Error(std::string("lntune: ") + name + " is not a valid lntune_dtype: " + std::to_string(d));
}

// The fields lntune_forward_args and lntune_norm_forward_args share (the
// norm struct starts with today's fields, in the same order).
template <class CArgs>
lntune::ForwardArgs common_forward(const CArgs& a) {
  lntune::ForwardArgs o;
  o.x = a.x;
  o.weight = a.weight;
  o.bias = a.bias;
  o.y = a.y;
  o.mean = a.mean;
  o.rstd = a.rstd;
  o.M = a.M;
  o.N = a.N;
  o.x_row_stride = a.x_row_stride;
  o.y_row_stride = a.y_row_stride;
  o.x_dtype = to_dtype(a.x_dtype, "x_dtype");
  o.w_dtype = to_dtype(a.w_dtype, "w_dtype");
  o.eps = a.eps;
  o.stream = a.stream;
  return o;
}

template <class CArgs>
lntune::BackwardArgs common_backward(const CArgs& a) {
  lntune::BackwardArgs o;
  o.dy = a.dy;
  o.x = a.x;
  o.weight = a.weight;
  o.mean = a.mean;
  o.rstd = a.rstd;
  o.dx = a.dx;
  o.dweight = a.dweight;
  o.dbias = a.dbias;
  o.M = a.M;
  o.N = a.N;
  o.dy_row_stride = a.dy_row_stride;
  o.x_row_stride = a.x_row_stride;
  o.dx_row_stride = a.dx_row_stride;
  o.x_dtype = to_dtype(a.x_dtype, "x_dtype");
  o.w_dtype = to_dtype(a.w_dtype, "w_dtype");
  o.workspace = a.workspace;
  o.workspace_bytes = a.workspace_bytes;
  o.stream = a.stream;
  return o;
}

lntune::Norm to_norm(const lntune_norm& field) {
  int n = 0;
  static_assert(sizeof(n) == sizeof(field), "lntune_norm is int-sized");
  std::memcpy(&n, &field, sizeof n);
  switch (n) {
    case LNTUNE_LAYER_NORM: return lntune::Norm::layer;
    case LNTUNE_RMS_NORM: return lntune::Norm::rms;
  }
  throw lntune::Error("lntune: norm is not a valid lntune_norm (LNTUNE_LAYER_NORM, LNTUNE_RMS_NORM): " +
                      std::to_string(n));
}

lntune::ForwardArgs to_cpp(const lntune_forward_args& a) { return common_forward(a); }

lntune::ForwardArgs to_cpp(const lntune_norm_forward_args& a) {
  lntune::ForwardArgs o = common_forward(a);
  o.norm = to_norm(a.norm);
  o.zero_centered_weight = a.zero_centered_weight != 0;
  o.residual = a.residual;
  o.residual_out = a.residual_out;
  o.residual_row_stride = a.residual_row_stride;
  o.residual_out_row_stride = a.residual_out_row_stride;
  if (a.residual || a.residual_out) o.residual_dtype = to_dtype(a.residual_dtype, "residual_dtype");
  o.y_dtype = to_dtype(a.y_dtype, "y_dtype");
  return o;
}

lntune::BackwardArgs to_cpp(const lntune_backward_args& a) { return common_backward(a); }

lntune::BackwardArgs to_cpp(const lntune_norm_backward_args& a) {
  lntune::BackwardArgs o = common_backward(a);
  o.norm = to_norm(a.norm);
  o.zero_centered_weight = a.zero_centered_weight != 0;
  o.residual = a.residual != 0;
  o.dresidual_out = a.dresidual_out;
  o.dresidual_out_row_stride = a.dresidual_out_row_stride;
  if (a.residual) o.residual_dtype = to_dtype(a.residual_dtype, "residual_dtype");
  o.y_dtype = to_dtype(a.y_dtype, "y_dtype");
  o.dresidual = a.dresidual;
  o.dresidual_row_stride = a.dresidual_row_stride;
  return o;
}

void require_args(const void* args, const char* fn) {
  if (!args) throw lntune::Error(std::string("lntune: ") + fn + ": args must not be null");
}

}  // namespace

extern "C" {

lntune_status lntune_forward(const lntune_forward_args* args) {
  return guarded([&] {
    require_args(args, "lntune_forward");
    lntune::forward(to_cpp(*args));
  });
}

lntune_status lntune_backward(const lntune_backward_args* args) {
  return guarded([&] {
    require_args(args, "lntune_backward");
    lntune::backward(to_cpp(*args));
  });
}

lntune_status lntune_backward_workspace_size(const lntune_backward_args* args, size_t* bytes) {
  return guarded([&] {
    require_args(args, "lntune_backward_workspace_size");
    if (!bytes) throw lntune::Error("lntune: lntune_backward_workspace_size: bytes must not be null");
    *bytes = lntune::backward_workspace_size(to_cpp(*args));
  });
}

lntune_status lntune_norm_forward(const lntune_norm_forward_args* args) {
  return guarded([&] {
    require_args(args, "lntune_norm_forward");
    lntune::forward(to_cpp(*args));
  });
}

lntune_status lntune_norm_backward(const lntune_norm_backward_args* args) {
  return guarded([&] {
    require_args(args, "lntune_norm_backward");
    lntune::backward(to_cpp(*args));
  });
}

lntune_status lntune_norm_backward_workspace_size(const lntune_norm_backward_args* args, size_t* bytes) {
  return guarded([&] {
    require_args(args, "lntune_norm_backward_workspace_size");
    if (!bytes) throw lntune::Error("lntune: lntune_norm_backward_workspace_size: bytes must not be null");
    *bytes = lntune::backward_workspace_size(to_cpp(*args));
  });
}

lntune_status lntune_set_tuned(int enabled) {
  return guarded([&] {
    if (enabled != 0 && enabled != 1)
      throw lntune::Error("lntune: lntune_set_tuned: enabled must be 0 or 1, got " + std::to_string(enabled));
    lntune::rt::default_runtime().set_tuned(enabled != 0);
  });
}

const char* lntune_last_error(void) { return t_last_error.c_str(); }

const char* lntune_version(void) { return lntune::version(); }

}  // extern "C"
