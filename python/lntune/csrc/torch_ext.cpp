// lntune.torch's native fast path: the eager LayerNorm forward, and its
// autograd node, in C++ (torch::autograd::Function), so that a training step
// through lntune.torch costs the host what PyTorch's own layer_norm costs.
//
// Built on first use by torch.utils.cpp_extension (lntune/_torch_ext.py) when
// a C++ compiler and torch's headers are there; optional: without it
// lntune.torch runs the same launches through ctypes (measured slower: see
// bench/bench_layernorm.py --section host). It calls liblntune's C ABI through
// function pointers handed over by Python (the library ctypes loaded), so it
// links against nothing of lntune's.
//
// The fast path takes a call only after its own checks (eligible()); every
// other call goes to the checked Python path, which raises the right error.
#include <torch/extension.h>

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "lntune/lntune.h"

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Api {
  lntune_status (*forward)(const lntune_forward_args*) = nullptr;
  lntune_status (*backward)(const lntune_backward_args*) = nullptr;
  lntune_status (*workspace_size)(const lntune_backward_args*, size_t*) = nullptr;
  const char* (*last_error)(void) = nullptr;
};
Api g_api;

template <class F>
F as_fn(int64_t address) {
  return reinterpret_cast<F>(static_cast<std::uintptr_t>(address));
}

void set_api(int64_t forward, int64_t backward, int64_t workspace_size, int64_t last_error) {
  TORCH_CHECK(forward && backward && workspace_size && last_error, "lntune: null function pointer");
  g_api.forward = as_fn<decltype(g_api.forward)>(forward);
  g_api.backward = as_fn<decltype(g_api.backward)>(backward);
  g_api.workspace_size = as_fn<decltype(g_api.workspace_size)>(workspace_size);
  g_api.last_error = as_fn<decltype(g_api.last_error)>(last_error);
}

// A failed forward is reported in-band (the entry returns None and Python
// raises lntune.LntuneError from last_failure()), not by a C++ exception: no
// exception crosses this module on the forward path.
struct Failure {
  int status = 0;
  std::string function, message;
};
thread_local Failure t_failure;

void record(lntune_status status, const char* function) {
  const char* message = g_api.last_error();  // read at once: this thread's message of this call
  t_failure.status = static_cast<int>(status);
  t_failure.function = function;
  t_failure.message = message ? message : "";
}

std::tuple<int64_t, std::string, std::string> last_failure() {
  return std::make_tuple(static_cast<int64_t>(t_failure.status), t_failure.function, t_failure.message);
}

// The backward runs inside autograd's engine, which expects an exception.
[[noreturn]] void fail(lntune_status status, const char* function) {
  record(status, function);
  TORCH_CHECK(false, "[lntune status ", t_failure.status, "] ", function, ": ", t_failure.message);
}

lntune_dtype dtype_of(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return LNTUNE_FP32;
    case at::kHalf: return LNTUNE_FP16;
    case at::kBFloat16: return LNTUNE_BF16;
    default: break;
  }
  TORCH_CHECK(false, "lntune.torch: unsupported dtype ", t);
}

// t as unit-stride rows and their stride in elements: t itself when
// contiguous, an (M, N) view when its rows are unit-stride and do not
// overlap, else a contiguous copy.
std::pair<at::Tensor, int64_t> rows(const at::Tensor& t, int64_t M, int64_t N) {
  if (t.is_contiguous()) return {t, N};
  at::Tensor t2 = t.reshape({M, N});
  if ((N == 1 || t2.stride(1) == 1) && (M <= 1 || t2.stride(0) >= N)) return {t2, M > 1 ? t2.stride(0) : N};
  return {t2.contiguous(), N};
}

void* ptr(const std::optional<at::Tensor>& t) { return t ? t->data_ptr() : nullptr; }

std::optional<at::Tensor> dense(const std::optional<at::Tensor>& t) {
  if (!t || t->is_contiguous()) return t;
  return t->contiguous();
}

struct Forward {
  at::Tensor y, stats, x2;
  int64_t x_stride;
};

// y (x's shape, contiguous) and, if asked, stats = float32 [2, M] (mean, rstd);
// f.y undefined (and t_failure set) when the library failed.
Forward forward_impl(const at::Tensor& x, const std::optional<at::Tensor>& w, const std::optional<at::Tensor>& b,
                     int64_t N, int w_dtype, double eps, bool with_stats) {
  const int64_t M = x.numel() / N;
  Forward f;
  f.y = at::empty(x.sizes(), x.options());
  if (with_stats) f.stats = at::empty({2, M}, x.options().dtype(at::kFloat));
  auto r = rows(x, M, N);
  f.x2 = std::move(r.first);
  f.x_stride = r.second;
  if (M > 0) {
    c10::cuda::CUDAGuard guard(x.device());
    lntune_forward_args a{};
    a.x = f.x2.data_ptr();
    a.weight = ptr(w);
    a.bias = ptr(b);
    a.y = f.y.data_ptr();
    float* s = with_stats ? f.stats.data_ptr<float>() : nullptr;
    a.mean = s;
    a.rstd = s ? s + M : nullptr;
    a.M = M;
    a.N = N;
    a.x_row_stride = f.x_stride;
    a.y_row_stride = N;
    a.x_dtype = dtype_of(x.scalar_type());
    a.w_dtype = static_cast<lntune_dtype>(w_dtype);
    a.eps = static_cast<float>(eps);
    a.stream = c10::cuda::getCurrentCUDAStream(x.get_device()).stream();
    const lntune_status status = g_api.forward(&a);
    if (status != LNTUNE_OK) {
      record(status, "lntune_forward");
      f.y = at::Tensor();
    }
  }
  return f;
}

struct LayerNormFunction : public torch::autograd::Function<LayerNormFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const std::optional<at::Tensor>& w,
                            const std::optional<at::Tensor>& b, int64_t N, int64_t w_dtype, double eps) {
    Forward f = forward_impl(x, w, b, N, static_cast<int>(w_dtype), eps, true);
    if (!f.y.defined()) return at::empty({0}, x.options());  // failed: the entry returns None
    ctx->save_for_backward({f.x2, w ? *w : at::Tensor(), f.stats});
    ctx->saved_data["N"] = N;
    ctx->saved_data["w_dtype"] = w_dtype;
    ctx->saved_data["x_stride"] = f.x_stride;
    ctx->saved_data["x_shape"] = x.sizes().vec();
    ctx->saved_data["has_w"] = w.has_value();
    if (b) {
      ctx->saved_data["b_shape"] = b->sizes().vec();
      ctx->saved_data["b_dtype"] = static_cast<int64_t>(b->scalar_type());
    }
    return f.y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    TORCH_CHECK(!at::GradMode::is_enabled(),
                "lntune.torch.layer_norm: double backward (create_graph=True) is not supported");
    variable_list saved = ctx->get_saved_variables();
    const at::Tensor& x2 = saved[0];
    const at::Tensor& w = saved[1];
    const at::Tensor& stats = saved[2];
    const int64_t N = ctx->saved_data["N"].toInt();
    const bool has_w = ctx->saved_data["has_w"].toBool();
    const bool has_b = ctx->saved_data.count("b_shape") > 0;
    // Edges: the tensor inputs present, in order (x, weight?, bias?).
    const bool want_dx = ctx->needs_input_grad(0);
    const bool want_dw = has_w && ctx->needs_input_grad(1);
    const bool want_db = has_b && ctx->needs_input_grad(has_w ? 2 : 1);
    const int64_t M = stats.size(1);

    at::Tensor dx = at::empty(ctx->saved_data["x_shape"].toIntVector(), x2.options());
    at::Tensor dw = want_dw ? at::empty(w.sizes(), w.options()) : at::Tensor();
    at::Tensor db;
    if (want_db)
      db = at::empty(ctx->saved_data["b_shape"].toIntVector(),
                     x2.options().dtype(static_cast<at::ScalarType>(ctx->saved_data["b_dtype"].toInt())));
    if (M == 0) {
      if (want_dw) dw.zero_();
      if (want_db) db.zero_();
    } else {
      at::Tensor dy = grads[0];
      if (dy.scalar_type() != x2.scalar_type()) dy = dy.to(x2.scalar_type());
      auto r = rows(dy, M, N);
      c10::cuda::CUDAGuard guard(x2.device());
      lntune_backward_args a{};
      a.dy = r.first.data_ptr();
      a.x = x2.data_ptr();
      a.weight = has_w ? w.data_ptr() : nullptr;
      float* s = stats.data_ptr<float>();
      a.mean = s;
      a.rstd = s + M;
      a.dx = dx.data_ptr();
      a.dweight = want_dw ? dw.data_ptr() : nullptr;
      a.dbias = want_db ? db.data_ptr() : nullptr;
      a.M = M;
      a.N = N;
      a.dy_row_stride = r.second;
      a.x_row_stride = ctx->saved_data["x_stride"].toInt();
      a.dx_row_stride = N;
      a.x_dtype = dtype_of(x2.scalar_type());
      a.w_dtype = static_cast<lntune_dtype>(ctx->saved_data["w_dtype"].toInt());
      a.stream = c10::cuda::getCurrentCUDAStream(x2.get_device()).stream();
      at::Tensor workspace;
      if (want_dw || want_db) {
        // The partial dW/dB rows come from torch's caching allocator: stream-
        // ordered, and from the graph's pool under CUDA-graph capture.
        size_t bytes = 0;
        lntune_status status = g_api.workspace_size(&a, &bytes);
        if (status != LNTUNE_OK) fail(status, "lntune_backward_workspace_size");
        if (bytes) {
          workspace = at::empty({static_cast<int64_t>(bytes)}, x2.options().dtype(at::kByte));
          a.workspace = workspace.data_ptr();
          a.workspace_bytes = bytes;
        }
      }
      const lntune_status status = g_api.backward(&a);
      if (status != LNTUNE_OK) fail(status, "lntune_backward");
    }
    return {want_dx ? dx : at::Tensor(), dw, db, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// Whether the fast path takes this call (what lntune._torch_ops.check
// accepts, minus the edge cases): x a CUDA fp32/fp16/bf16 tensor whose last
// dimensions are normalized_shape (N > 0 elements); weight and bias absent or
// on x's device, of normalized_shape, in x's dtype or fp32 (both the same).
// Anything else goes to the checked Python path, which explains the error.
bool eligible(const at::Tensor& x, const std::vector<int64_t>& normalized_shape,
              const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias, int64_t* N,
              int* w_dtype) {
  if (!x.defined() || !x.is_cuda()) return false;
  const at::ScalarType xt = x.scalar_type();
  if (xt != at::kFloat && xt != at::kHalf && xt != at::kBFloat16) return false;
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  const int64_t dims = x.dim();
  if (k == 0 || dims < k) return false;
  const at::IntArrayRef sizes = x.sizes();
  int64_t n = 1;
  for (int64_t i = 0; i < k; ++i) {
    if (sizes[static_cast<size_t>(dims - k + i)] != normalized_shape[static_cast<size_t>(i)]) return false;
    n *= normalized_shape[static_cast<size_t>(i)];
  }
  if (n <= 0) return false;
  std::optional<at::ScalarType> wt;
  for (const std::optional<at::Tensor>* p : {&weight, &bias}) {
    if (!p->has_value()) continue;
    const at::Tensor& t = p->value();
    if (!t.defined() || !t.is_cuda() || t.device() != x.device()) return false;
    if (!t.sizes().equals(normalized_shape)) return false;
    const at::ScalarType d = t.scalar_type();
    if (d != xt && d != at::kFloat) return false;
    if (wt && *wt != d) return false;
    wt = d;
  }
  *N = n;
  *w_dtype = static_cast<int>(dtype_of(wt ? *wt : xt));
  return true;
}

// The eager entry: y = LayerNorm(x) over its last dimensions, with an
// autograd node when grad mode is on and an input requires grad. Returns None
// when it does not take the call (last_failure() status -1: the caller's
// checked path takes it) or when the library failed (status > 0).
at::Tensor eager_layer_norm(const at::Tensor& x, const std::vector<int64_t>& normalized_shape,
                            const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
                            double eps) {
  t_failure.status = 0;
  int64_t N = 0;
  int w_dtype = 0;
  if (!eligible(x, normalized_shape, weight, bias, &N, &w_dtype)) {
    t_failure.status = -1;
    return at::Tensor();
  }
  const bool grad = at::GradMode::is_enabled() && (x.requires_grad() || (weight && weight->requires_grad()) ||
                                                    (bias && bias->requires_grad()));
  std::optional<at::Tensor> w = dense(weight), b = dense(bias);
  if (grad) {
    at::Tensor y = LayerNormFunction::apply(x, w, b, N, static_cast<int64_t>(w_dtype), eps);
    return t_failure.status ? at::Tensor() : y;
  }
  return forward_impl(x, w, b, N, w_dtype, eps, false).y;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("set_api", &set_api, "hand over liblntune's C functions (addresses)");
  m.def("layer_norm", &eager_layer_norm, "LayerNorm forward, with an autograd node when grad is true");
  m.def("last_failure", &last_failure, "(status, function, message) of this thread's last failed forward");
}
