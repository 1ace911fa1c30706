// lntune.torch's native fast path, in C++:
//  - the eager LayerNorm forward and its autograd node (layer_norm());
//  - C++ CUDA implementations of the lntune:: torch ops (register_native()),
//    so that torch.compile'd graphs and the ops route run no Python per call.
// Together they make a training step through lntune.torch cost the host what
// PyTorch's own layer_norm costs.
//
// Built on first use by torch.utils.cpp_extension (lntune/_torch_ext.py) when
// a C++ compiler and torch's headers are there; optional: without it
// lntune.torch runs the same launches through ctypes (measured slower: see
// bench/bench_layernorm.py --section host). It calls liblntune's C ABI through
// function pointers handed over by Python (the library ctypes loaded), so it
// links against nothing of lntune's.
//
// The eager entry takes a call only after its own checks (eligible()); every
// other call goes to the checked Python path, which raises the right error.
// The op implementations check their arguments themselves, with the Python
// implementation's messages and exception types (TypeError, ValueError).
#include <torch/extension.h>
#include <torch/library.h>

#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/SmallVector.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
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

// The backward (inside autograd's engine) and the ops (inside the
// dispatcher) report failures by an exception.
//
// Every message of this module is built from strings: numbers go through
// std::to_string, never through c10::str's ostream. On the H100 machine
// (torch 2.11, the host's g++) this module carried its own instantiation of
// std::ostream::_M_insert<long/double>, and streaming a number into an
// error message segfaulted (a null facet at 0x20, under _M_insert; native
// stack in bench/results/h100_2026-11-23c). Strings take no facet and are safe.
[[noreturn]] void fail(lntune_status status, const char* function) {
  record(status, function);
  TORCH_CHECK(false, "[lntune status " + std::to_string(t_failure.status) + "] " + function + ": " + t_failure.message);
}

lntune_dtype dtype_of(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return LNTUNE_FP32;
    case at::kHalf: return LNTUNE_FP16;
    case at::kBFloat16: return LNTUNE_BF16;
    default: break;
  }
  TORCH_CHECK(false, std::string("lntune.torch: unsupported dtype ") + c10::toString(t));
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

// A contiguous uninitialised CUDA tensor straight from the caching allocator
// (what at::empty ends in, without its trip through the dispatcher).
// Stream-ordered on the device's current stream; under CUDA-graph capture it
// comes from the graph's private pool.
at::Tensor empty(at::IntArrayRef sizes, at::ScalarType dtype, at::Device device) {
  return at::Tensor(at::detail::empty_cuda(sizes, dtype, device, std::nullopt));
}

// Makes `device` current for the scope, touching the device only when it is
// not current already (the usual case: one cudaGetDevice).
class DeviceScope {
 public:
  explicit DeviceScope(at::Device device) {
    if (c10::cuda::current_device() != device.index()) guard_.emplace(device);
  }

 private:
  std::optional<c10::cuda::CUDAGuard> guard_;
};

// ------------------------------------------------------------------ backward workspace sizes

// lntune_backward_workspace_size's answer depends on the plan the library
// picks, which depends on the device, the shape, strides, dtypes, which
// gradients are wanted and the 16-byte alignment of the streams read with
// vector accesses (see runtime/problem.cpp), and on the tuned configs
// (set_tuned(): bump_generation()). Memoised per thread on exactly these, as
// lntune._torch_ops does: a warm backward makes one C ABI call.
struct WsKey {
  int64_t M, N, dy_stride, x_stride;
  int device;
  int x_dtype, w_dtype;
  unsigned flags;  // has weight, want dW, want dB, alignment bits
  bool operator==(const WsKey& o) const {
    return M == o.M && N == o.N && dy_stride == o.dy_stride && x_stride == o.x_stride && device == o.device &&
           x_dtype == o.x_dtype && w_dtype == o.w_dtype && flags == o.flags;
  }
};

struct WsKeyHash {
  size_t operator()(const WsKey& k) const noexcept {
    size_t h = std::hash<int64_t>{}(k.M);
    auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(std::hash<int64_t>{}(k.N));
    mix(std::hash<int64_t>{}(k.dy_stride) ^ (std::hash<int64_t>{}(k.x_stride) << 1));
    mix(static_cast<size_t>(k.device) | static_cast<size_t>(k.x_dtype) << 8 | static_cast<size_t>(k.w_dtype) << 12 |
        static_cast<size_t>(k.flags) << 16);
    return h;
  }
};

std::atomic<uint64_t> g_generation{0};

void bump_generation() { g_generation.fetch_add(1, std::memory_order_relaxed); }

struct WsMemo {
  uint64_t generation = 0;
  std::unordered_map<WsKey, size_t, WsKeyHash> bytes;
};
thread_local WsMemo t_ws;
std::atomic<int64_t> g_ws_queries{0};  // size queries made, all threads (tests: the memo works)

size_t workspace_bytes(const lntune_backward_args& a, int device) {
  if (!a.dweight && !a.dbias) return 0;
  const uint64_t gen = g_generation.load(std::memory_order_relaxed);
  if (t_ws.generation != gen) {
    t_ws.bytes.clear();
    t_ws.generation = gen;
  }
  const auto bits = [](const void* p) { return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) & 15u); };
  const WsKey key{a.M,
                  a.N,
                  a.dy_row_stride,
                  a.x_row_stride,
                  device,
                  static_cast<int>(a.x_dtype),
                  static_cast<int>(a.w_dtype),
                  (a.weight ? 1u : 0u) | (a.dweight ? 2u : 0u) | (a.dbias ? 4u : 0u) |
                      (bits(a.dy) | bits(a.x) | bits(a.dx) | bits(a.weight)) << 3};
  auto it = t_ws.bytes.find(key);
  if (it != t_ws.bytes.end()) return it->second;
  size_t bytes = 0;
  const lntune_status status = g_api.workspace_size(&a, &bytes);
  if (status != LNTUNE_OK) fail(status, "lntune_backward_workspace_size");
  g_ws_queries.fetch_add(1, std::memory_order_relaxed);
  if (t_ws.bytes.size() >= 4096) t_ws.bytes.clear();
  t_ws.bytes.emplace(key, bytes);
  return bytes;
}

int64_t workspace_queries() { return g_ws_queries.load(std::memory_order_relaxed); }

// ------------------------------------------------------------------ launches

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

// What one backward launch needs, whoever calls it (the autograd node or the
// layer_norm_bwd op).
struct BackwardCall {
  at::Tensor dy;            // any strides; converted to x2's dtype if it differs
  const at::Tensor* x2;     // unit-stride rows, x_stride elements apart
  int64_t x_stride, M, N;
  const float* mean;        // [M]
  const float* rstd;        // [M]
  const at::Tensor* w;      // contiguous, or nullptr
  lntune_dtype w_dtype;
  at::ScalarType w_scalar;  // dW and dB dtype
  bool want_dw, want_db;
  at::IntArrayRef dx_shape, w_shape;
};

// dx (dx_shape, contiguous) and dW, dB (w_shape; undefined unless wanted):
// the allocations (3 and the workspace, from the caching allocator), at most
// one size query (memoised) and one lntune_backward call.
std::tuple<at::Tensor, at::Tensor, at::Tensor> backward_launch(BackwardCall c) {
  const at::Tensor& x2 = *c.x2;
  const at::Device device = x2.device();
  at::Tensor dx = empty(c.dx_shape, x2.scalar_type(), device);
  at::Tensor dw = c.want_dw ? empty(c.w_shape, c.w_scalar, device) : at::Tensor();
  at::Tensor db = c.want_db ? empty(c.w_shape, c.w_scalar, device) : at::Tensor();
  if (c.M == 0 || c.N == 0) {
    // dW, dB of no rows (or of no columns: nothing) are zero.
    if (c.want_dw) dw.zero_();
    if (c.want_db) db.zero_();
    return {dx, dw, db};
  }
  at::Tensor dy = c.dy.scalar_type() == x2.scalar_type() ? c.dy : c.dy.to(x2.scalar_type());
  auto r = rows(dy, c.M, c.N);
  DeviceScope scope(device);
  lntune_backward_args a{};
  a.dy = r.first.data_ptr();
  a.x = x2.data_ptr();
  a.weight = c.w ? c.w->data_ptr() : nullptr;
  a.mean = c.mean;
  a.rstd = c.rstd;
  a.dx = dx.data_ptr();
  a.dweight = c.want_dw ? dw.data_ptr() : nullptr;
  a.dbias = c.want_db ? db.data_ptr() : nullptr;
  a.M = c.M;
  a.N = c.N;
  a.dy_row_stride = r.second;
  a.x_row_stride = c.x_stride;
  a.dx_row_stride = c.N;
  a.x_dtype = dtype_of(x2.scalar_type());
  a.w_dtype = c.w_dtype;
  a.stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
  at::Tensor workspace;
  if (c.want_dw || c.want_db) {
    // The partial dW/dB rows come from torch's caching allocator: stream-
    // ordered, and from the graph's pool under CUDA-graph capture. Freed
    // when this returns; reuse is ordered on this stream.
    const size_t bytes = workspace_bytes(a, device.index());
    if (bytes) {
      workspace = empty({static_cast<int64_t>(bytes)}, at::kByte, device);
      a.workspace = workspace.data_ptr();
      a.workspace_bytes = bytes;
    }
  }
  const lntune_status status = g_api.backward(&a);
  if (status != LNTUNE_OK) fail(status, "lntune_backward");
  return {dx, dw, db};
}

// ------------------------------------------------------------------ eager route, node v1: torch::autograd::Function

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

// ------------------------------------------------------------------ eager route, node v2: a plain autograd Node

// The backward node as PyTorch's own NativeLayerNormBackward0 is built: a
// Node subclass with typed members. Against the torch::autograd::Function
// above it skips, per step: the AutogradContext's saved_data hash map (7
// string-keyed IValues written, 8 looked up, two shape lists on the heap),
// the per-input/output VariableInfo records (their size vectors), the
// materialise-grads pass, the node mutex, and the output bookkeeping of
// CppNode::apply. Edges are always (x, weight, bias), absent ones empty.
using NodePtr = std::decay_t<decltype(std::declval<const at::Tensor&>().grad_fn())>;

struct LayerNormBackward final : torch::autograd::Node {
  torch::autograd::SavedVariable x2_, w_, stats_;
  int64_t M = 0, N = 0, x_stride = 0;
  lntune_dtype w_dtype = LNTUNE_FP32;
  at::ScalarType w_scalar = at::kFloat;
  bool has_w = false, has_b = false;
  c10::SmallVector<int64_t, 5> x_shape, w_shape;

  std::string name() const override { return "LntuneLayerNormBackward"; }

  void release_variables() override {
    x2_.reset_data();
    w_.reset_data();
    stats_.reset_data();
  }

  variable_list apply(variable_list&& grads) override {
    TORCH_CHECK(!at::GradMode::is_enabled(),
                "lntune.torch.layer_norm: double backward (create_graph=True) is not supported");
    variable_list out(3);
    const bool want_dx = task_should_compute_output(0);
    const bool want_dw = has_w && task_should_compute_output(1);
    const bool want_db = has_b && task_should_compute_output(2);
    // No incoming gradient: all are zero, which autograd reads from
    // undefined tensors (as PyTorch's own node returns them).
    if (!grads[0].defined() || !(want_dx || want_dw || want_db)) return out;
    const at::Tensor x2 = x2_.unpack();
    const at::Tensor stats = stats_.unpack();
    const at::Tensor w = has_w ? w_.unpack() : at::Tensor();
    const float* s = stats.data_ptr<float>();
    auto [dx, dw, db] = backward_launch(BackwardCall{grads[0], &x2, x_stride, M, N, s, s + M, has_w ? &w : nullptr,
                                                     w_dtype, w_scalar, want_dw, want_db, x_shape, w_shape});
    if (want_dx) out[0] = std::move(dx);
    out[1] = std::move(dw);
    out[2] = std::move(db);
    return out;
  }
};

template <class T>
NodePtr make_node() {
  if constexpr (std::is_same_v<NodePtr, std::shared_ptr<torch::autograd::Node>>) {
    // torch < 2.12: shared ownership, deleted through deleteNode (which
    // releases long chains of nodes without deep recursion); found by ADL at
    // instantiation, so this compiles where it no longer exists.
    return NodePtr(new T(), [](auto* n) { deleteNode(n); });
  } else {
    return c10::make_intrusive<T>();
  }
}

at::Tensor forward_with_node(const at::Tensor& x, const std::optional<at::Tensor>& w,
                             const std::optional<at::Tensor>& b, int64_t N, int w_dtype, double eps) {
  Forward f;
  {
    at::AutoGradMode no_grad(false);  // x2 (a view or copy of x) is saved, not a graph node
    f = forward_impl(x, w, b, N, w_dtype, eps, true);
  }
  if (!f.y.defined()) return f.y;
  NodePtr node_ptr = make_node<LayerNormBackward>();
  auto* node = static_cast<LayerNormBackward*>(node_ptr.get());
  node->set_next_edges(torch::autograd::collect_next_edges(x, w, b));
  node->x2_ = torch::autograd::SavedVariable(f.x2, false);
  if (w) node->w_ = torch::autograd::SavedVariable(*w, false);
  node->stats_ = torch::autograd::SavedVariable(f.stats, false);
  node->M = f.stats.size(1);
  node->N = N;
  node->x_stride = f.x_stride;
  node->w_dtype = static_cast<lntune_dtype>(w_dtype);
  const std::optional<at::Tensor>& p = w ? w : b;
  node->w_scalar = p ? p->scalar_type() : x.scalar_type();
  node->has_w = w.has_value();
  node->has_b = b.has_value();
  node->x_shape.assign(x.sizes().begin(), x.sizes().end());
  const at::IntArrayRef xs = x.sizes();
  if (p) {
    node->w_shape.assign(p->sizes().begin(), p->sizes().end());
  } else {  // no affine parameters: no dW, dB (the shape is never used)
    node->w_shape.assign(xs.end() - 1, xs.end());
  }
  torch::autograd::set_history(f.y, node_ptr);
  return f.y;
}

bool g_node_v2 = false;  // set_node_v2(): which node the eager route builds

void set_node_v2(bool on) { g_node_v2 = on; }

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

// Whether an input carries a forward-mode gradient (a dual tensor of the
// default level): neither node has a forward formula.
bool has_forward_grad(const at::Tensor& x, const std::optional<at::Tensor>& weight,
                      const std::optional<at::Tensor>& bias) {
  const auto dual = [](const at::Tensor& t) { return t.defined() && t._fw_grad(/*level=*/0).defined(); };
  return dual(x) || (weight && dual(*weight)) || (bias && dual(*bias));
}

// The eager entry: y = LayerNorm(x) over its last dimensions, with an
// autograd node when grad mode is on and an input requires grad. Returns None
// when it does not take the call (last_failure() status -1: the caller's
// checked path takes it, e.g. forward-mode AD, which it rejects clearly) or
// when the library failed (status > 0).
at::Tensor eager_layer_norm(const at::Tensor& x, const std::vector<int64_t>& normalized_shape,
                            const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
                            double eps) {
  t_failure.status = 0;
  int64_t N = 0;
  int w_dtype = 0;
  if (!eligible(x, normalized_shape, weight, bias, &N, &w_dtype) || has_forward_grad(x, weight, bias)) {
    t_failure.status = -1;
    return at::Tensor();
  }
  const bool grad = at::GradMode::is_enabled() && (x.requires_grad() || (weight && weight->requires_grad()) ||
                                                    (bias && bias->requires_grad()));
  std::optional<at::Tensor> w = dense(weight), b = dense(bias);
  if (grad) {
    if (g_node_v2) return forward_with_node(x, w, b, N, w_dtype, eps);
    at::Tensor y = LayerNormFunction::apply(x, w, b, N, static_cast<int64_t>(w_dtype), eps);
    return t_failure.status ? at::Tensor() : y;
  }
  return forward_impl(x, w, b, N, w_dtype, eps, false).y;
}

// ------------------------------------------------------------------ eager route of the norm variants

// lntune.torch.rms_norm, fused_add_layer_norm and fused_add_rms_norm in
// eager mode: the launches of the lntune:: variant ops (lntune._torch_ops
// _norm_forward / _norm_backward) with a C++ autograd node, so that a call
// runs no Python beyond the entry. Same arguments to the C ABI as the ops
// give, hence bitwise the same results (GPU test
// test_cpp_route_equals_the_op_route); same autograd semantics: what is
// saved (x, or z with the weight, bias and statistics), which gradients are
// computed (from which inputs need one, as the ops' ctx.needs_input_grad),
// the upstream gradient of z added into dx, and double backward a clear
// error when the gradient itself is differentiated.
//
// The entries take a call only after their own checks (norm_eligible()):
// exactly what the ops accept, minus the degenerate shapes (no rows, N = 0)
// and forward-mode AD. Every other call is declined (last_failure() status
// -1) and goes to the op, which raises the op's own error.

struct NormApi {
  lntune_status (*forward)(const lntune_norm_forward_args*) = nullptr;
  lntune_status (*backward)(const lntune_norm_backward_args*) = nullptr;
  lntune_status (*workspace_size)(const lntune_norm_backward_args*, size_t*) = nullptr;
};
NormApi g_norm_api;

// lntune_norm_forward, lntune_norm_backward, lntune_norm_backward_workspace_size
// (addresses); not called with a library that lacks them, and then the
// entries decline every call (the ops say why).
void set_norm_api(int64_t forward, int64_t backward, int64_t workspace_size) {
  TORCH_CHECK(forward && backward && workspace_size, "lntune: null function pointer");
  g_norm_api.forward = as_fn<decltype(g_norm_api.forward)>(forward);
  g_norm_api.backward = as_fn<decltype(g_norm_api.backward)>(backward);
  g_norm_api.workspace_size = as_fn<decltype(g_norm_api.workspace_size)>(workspace_size);
}

bool has_norm_api() { return g_norm_api.forward != nullptr; }

// The user-facing name of a variant, as the ops' messages give it.
const char* norm_api_name(lntune_norm norm, bool residual) {
  if (!residual) return "lntune.torch.rms_norm";
  return norm == LNTUNE_LAYER_NORM ? "lntune.torch.fused_add_layer_norm" : "lntune.torch.fused_add_rms_norm";
}

bool lntune_dtype_ok(at::ScalarType t) { return t == at::kFloat || t == at::kHalf || t == at::kBFloat16; }

// Test mode (set_cpu_test_mode): the entries also take CPU tensors, so that
// tests without a GPU run the whole route (checks, node, saved tensors,
// gradient plumbing) against stand-ins for lntune_norm_* handed over by
// set_norm_api (tests/python/test_torch_ext_variants_cpu.py). Off by default; the
// route's launches then see CUDA tensors only.
bool g_cpu_test_mode = false;

void set_cpu_test_mode(bool on) { g_cpu_test_mode = on; }

// A CUDA tensor (or a CPU one in test mode) that is no Python tensor
// subclass with its own dispatch (DTensor, a wrapper subclass): those go to
// the op, through which their __torch_dispatch__ sees the call.
bool device_ok(const at::Tensor& t) {
  return (t.is_cuda() || (g_cpu_test_mode && t.is_cpu())) && !t.unsafeGetTensorImpl()->is_python_dispatch();
}

at::Tensor vempty(at::IntArrayRef sizes, at::ScalarType dtype, at::Device device) {
  return device.is_cuda() ? empty(sizes, dtype, device) : at::empty(sizes, at::TensorOptions(dtype).device(device));
}

void* stream_of(at::Device device) {
  return device.is_cuda() ? static_cast<void*>(c10::cuda::getCurrentCUDAStream(device.index()).stream()) : nullptr;
}

// ---- backward workspace sizes of lntune_norm_backward, memoised as
// workspace_bytes() memoises lntune_backward's (the key: what _torch_ops'
// _norm_ws_sizes keys on).
using NormWsKey = std::array<int64_t, 8>;

struct NormWsKeyHash {
  size_t operator()(const NormWsKey& k) const noexcept {
    size_t h = 0;
    for (const int64_t v : k) h ^= std::hash<int64_t>{}(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
  }
};

struct NormWsMemo {
  uint64_t generation = 0;
  std::unordered_map<NormWsKey, size_t, NormWsKeyHash> bytes;
};
thread_local NormWsMemo t_norm_ws;

size_t norm_workspace_bytes(const lntune_norm_backward_args& a, int device) {
  const uint64_t gen = g_generation.load(std::memory_order_relaxed);
  if (t_norm_ws.generation != gen) {
    t_norm_ws.bytes.clear();
    t_norm_ws.generation = gen;
  }
  const auto bits = [](const void* p) { return static_cast<int64_t>(reinterpret_cast<std::uintptr_t>(p) & 15u); };
  const int64_t dtypes = static_cast<int64_t>(a.x_dtype) | static_cast<int64_t>(a.w_dtype) << 4 |
                         static_cast<int64_t>(a.residual_dtype) << 8 | static_cast<int64_t>(a.y_dtype) << 12;
  const int64_t flags = static_cast<int64_t>(a.norm) | (a.zero_centered_weight ? 2 : 0) | (a.residual ? 4 : 0) |
                        (a.dresidual_out ? 8 : 0) | (a.weight ? 16 : 0) | (a.dresidual ? 32 : 0) |
                        (a.dweight ? 64 : 0) | (a.dbias ? 128 : 0) |
                        (bits(a.dy) | bits(a.x) | bits(a.dx) | bits(a.weight) | bits(a.dresidual_out) |
                         bits(a.dresidual))
                            << 8;
  const NormWsKey key{a.M, a.N, a.dy_row_stride, a.x_row_stride, a.dresidual_out_row_stride, device, dtypes, flags};
  auto it = t_norm_ws.bytes.find(key);
  if (it != t_norm_ws.bytes.end()) return it->second;
  size_t bytes = 0;
  const lntune_status status = g_norm_api.workspace_size(&a, &bytes);
  if (status != LNTUNE_OK) fail(status, "lntune_norm_backward_workspace_size");
  g_ws_queries.fetch_add(1, std::memory_order_relaxed);
  if (t_norm_ws.bytes.size() >= 4096) t_norm_ws.bytes.clear();
  t_norm_ws.bytes.emplace(key, bytes);
  return bytes;
}

// ---- forward

struct NormForward {
  at::Tensor y, z, mean, rstd;  // z with a residual; mean, rstd [M] float32 when asked (mean: LayerNorm only)
};

// lntune_norm_forward with the arguments _torch_ops._norm_forward gives it.
// f.y undefined (and t_failure set) when the library failed. M, N > 0.
NormForward norm_forward_impl(lntune_norm norm, const at::Tensor& x, const std::optional<at::Tensor>& residual,
                              const std::optional<at::Tensor>& w, const std::optional<at::Tensor>& b, int64_t M,
                              int64_t N, lntune_dtype w_dtype, double eps, bool zero_centered,
                              at::ScalarType y_scalar, bool with_stats) {
  const at::Device device = x.device();
  NormForward f;
  f.y = vempty(x.sizes(), y_scalar, device);
  if (residual) f.z = vempty(x.sizes(), residual->scalar_type(), device);
  if (with_stats) {
    if (norm == LNTUNE_LAYER_NORM) f.mean = vempty({M}, at::kFloat, device);
    f.rstd = vempty({M}, at::kFloat, device);
  }
  const std::optional<at::Tensor> wd = dense(w), bd = dense(b);
  auto xr = rows(x, M, N);
  std::pair<at::Tensor, int64_t> rr;
  if (residual) rr = rows(*residual, M, N);
  std::optional<DeviceScope> scope;
  if (device.is_cuda()) scope.emplace(device);
  lntune_norm_forward_args a{};
  a.x = xr.first.data_ptr();
  a.weight = ptr(wd);
  a.bias = ptr(bd);
  a.y = f.y.data_ptr();
  a.mean = f.mean.defined() ? f.mean.data_ptr<float>() : nullptr;
  a.rstd = f.rstd.defined() ? f.rstd.data_ptr<float>() : nullptr;
  a.M = M;
  a.N = N;
  a.x_row_stride = xr.second;
  a.y_row_stride = N;
  a.x_dtype = dtype_of(x.scalar_type());
  a.w_dtype = w_dtype;
  a.eps = static_cast<float>(eps);
  a.stream = stream_of(device);
  a.norm = norm;
  a.zero_centered_weight = zero_centered ? 1 : 0;
  a.residual = residual ? rr.first.data_ptr() : nullptr;
  a.residual_out = residual ? f.z.data_ptr() : nullptr;
  a.residual_row_stride = residual ? rr.second : 0;
  a.residual_out_row_stride = N;
  a.residual_dtype = residual ? dtype_of(residual->scalar_type()) : a.x_dtype;
  a.y_dtype = dtype_of(y_scalar);
  const lntune_status status = g_norm_api.forward(&a);
  if (status != LNTUNE_OK) {
    record(status, "lntune_norm_forward");
    f.y = at::Tensor();
  }
  return f;
}

// ---- backward

// What _torch_ops._norm_backward takes.
struct NormBackwardCall {
  lntune_norm norm;
  at::Tensor dy;              // y's dtype (or z's: the zeros standing for an unused y)
  at::Tensor dz;              // the upstream gradient of z, or undefined; any strides
  const at::Tensor* saved;    // the forward's x (no residual) or z; any strides
  const float* mean;          // [M] (LayerNorm) or nullptr
  const float* rstd;          // [M]
  const at::Tensor* weight;   // as given to the forward (any strides), or nullptr
  at::ScalarType w_torch;     // dW's dtype: the weight's, else the bias's, else dx's
  bool zero_centered;
  at::ScalarType dx_scalar;
  bool want_dw, want_db, residual, want_dres;
  int64_t M, N;
  at::IntArrayRef w_shape;    // normalized_shape
};

// (dx, dresidual, dW, dB), each undefined unless computed; dx in dx_scalar,
// saved's shape. M, N > 0.
std::array<at::Tensor, 4> norm_backward_launch(const NormBackwardCall& c) {
  const at::Tensor& saved = *c.saved;
  const at::Device device = saved.device();
  // The C ABI takes a weight in dx's dtype or float32: any other is read as
  // float32 and dW rounded back to the weight's dtype (as the op does).
  const at::ScalarType w_run = (c.w_torch == c.dx_scalar || c.w_torch == at::kFloat) ? c.w_torch : at::kFloat;
  at::Tensor dx = vempty(saved.sizes(), c.dx_scalar, device);
  at::Tensor dres = c.residual && c.want_dres ? vempty(saved.sizes(), saved.scalar_type(), device) : at::Tensor();
  // dW, dB in normalized_shape (the op's .view(shape) of [N], allocated so:
  // no view, so that a double-backward node can be attached to them).
  at::Tensor dw = c.want_dw ? vempty(c.w_shape, w_run, device) : at::Tensor();
  at::Tensor db = c.want_db ? vempty(c.w_shape, w_run, device) : at::Tensor();
  at::Tensor w;
  if (c.weight) {
    w = c.weight->scalar_type() == w_run ? *c.weight : c.weight->to(w_run);
    if (!w.is_contiguous()) w = w.contiguous();
  }
  auto xr = rows(saved, c.M, c.N);
  auto dyr = rows(c.dy, c.M, c.N);
  std::pair<at::Tensor, int64_t> dzr{at::Tensor(), 0};
  if (c.dz.defined()) dzr = rows(c.dz.scalar_type() == saved.scalar_type() ? c.dz : c.dz.to(saved.scalar_type()),
                                 c.M, c.N);
  std::optional<DeviceScope> scope;
  if (device.is_cuda()) scope.emplace(device);
  lntune_norm_backward_args a{};
  a.dy = dyr.first.data_ptr();
  a.x = xr.first.data_ptr();
  a.weight = w.defined() ? w.data_ptr() : nullptr;
  a.mean = c.mean;
  a.rstd = c.rstd;
  a.dx = dx.data_ptr();
  a.dweight = c.want_dw ? dw.data_ptr() : nullptr;
  a.dbias = c.want_db ? db.data_ptr() : nullptr;
  a.M = c.M;
  a.N = c.N;
  a.dy_row_stride = dyr.second;
  a.x_row_stride = xr.second;
  a.dx_row_stride = c.N;
  a.x_dtype = dtype_of(c.dx_scalar);
  a.w_dtype = dtype_of(w_run);
  a.stream = stream_of(device);
  a.norm = c.norm;
  a.zero_centered_weight = c.zero_centered ? 1 : 0;
  a.residual = c.residual ? 1 : 0;
  a.dresidual_out = dzr.first.defined() ? dzr.first.data_ptr() : nullptr;
  a.dresidual_out_row_stride = dzr.second;
  a.residual_dtype = c.residual ? dtype_of(saved.scalar_type()) : a.x_dtype;
  a.y_dtype = dtype_of(c.dy.scalar_type());
  a.dresidual = dres.defined() ? dres.data_ptr() : nullptr;
  a.dresidual_row_stride = dres.defined() ? c.N : 0;
  at::Tensor workspace;
  if (c.want_dw || c.want_db) {
    // From torch's caching allocator, as backward_launch's.
    const size_t bytes = norm_workspace_bytes(a, device.index());
    if (bytes) {
      workspace = vempty({static_cast<int64_t>(bytes)}, at::kByte, device);
      a.workspace = workspace.data_ptr();
      a.workspace_bytes = bytes;
    }
  }
  const lntune_status status = g_norm_api.backward(&a);
  if (status != LNTUNE_OK) fail(status, "lntune_norm_backward");
  if (dw.defined() && w_run != c.w_torch) dw = dw.to(c.w_torch);
  if (db.defined() && w_run != c.w_torch) db = db.to(c.w_torch);
  return {dx, dres, dw, db};
}

// ---- double backward: a clear error, when it is asked for

// Stands for the ops' *_bwd autograd formula (_torch_ops._no_double_backward):
// the gradients computed with create_graph=True carry this node, whose own
// backward raises the ops' message.
struct NormDoubleBackward final : torch::autograd::Node {
  std::string api;
  std::string name() const override { return "LntuneNormDoubleBackward"; }
  variable_list apply(variable_list&&) override {
    TORCH_CHECK(false, std::string(api) +
                           ": double backward (differentiating the gradient, e.g. backward with create_graph=True "
                           "and then a gradient of that gradient) is not supported");
  }
};

// Under create_graph (grad mode on in the backward) the op's backward call
// is itself recorded, with the *_bwd op's inputs (`inputs`) as its edges:
// the same here, with a node that raises if it is ever run.
void attach_double_backward(const char* api, const std::vector<at::Tensor>& inputs, variable_list& grads) {
  if (!at::GradMode::is_enabled()) return;
  bool any = false;
  for (const at::Tensor& t : inputs) any = any || (t.defined() && t.requires_grad());
  if (!any) return;
  NodePtr node_ptr = make_node<NormDoubleBackward>();
  auto* node = static_cast<NormDoubleBackward*>(node_ptr.get());
  node->api = api;
  torch::autograd::edge_list edges;
  for (const at::Tensor& t : inputs) {
    if (t.defined()) {
      edges.emplace_back(torch::autograd::impl::gradient_edge(t));
    } else {
      edges.emplace_back();
    }
  }
  node->set_next_edges(std::move(edges));
  std::vector<const at::TensorImpl*> done;  // dx may stand for both x's and the residual's gradient
  for (at::Tensor& g : grads) {
    if (!g.defined()) continue;
    bool seen = false;
    for (const at::TensorImpl* p : done) seen = seen || p == g.unsafeGetTensorImpl();
    if (seen) continue;
    done.push_back(g.unsafeGetTensorImpl());
    torch::autograd::set_history(g, node_ptr);
  }
}

// ---- the nodes

// RMSNorm without a residual: edges (x, weight). Saves x and the weight as
// given (as the op's setup_context does) and rstd.
struct RmsNormBackward final : torch::autograd::Node {
  torch::autograd::SavedVariable x_, w_, rstd_;
  int64_t M = 0, N = 0;
  bool has_w = false, zero_centered = false;
  at::ScalarType y_scalar = at::kFloat;
  c10::SmallVector<int64_t, 5> w_shape;

  std::string name() const override { return "LntuneRmsNormBackward"; }

  void release_variables() override {
    x_.reset_data();
    w_.reset_data();
    rstd_.reset_data();
  }

  variable_list apply(variable_list&& grads) override {
    const at::Tensor x = x_.unpack();
    const at::Tensor rstd = rstd_.unpack();
    const at::Tensor w = has_w ? w_.unpack() : at::Tensor();
    // The op's autograd formula gets materialised gradients: zeros for an unused y.
    const at::Tensor dy = grads[0].defined() ? grads[0] : at::zeros(x.sizes(), x.options().dtype(y_scalar));
    const bool want_dx = should_compute_output(0);
    const bool want_dw = has_w && should_compute_output(1);
    auto r = norm_backward_launch(NormBackwardCall{LNTUNE_RMS_NORM, dy, at::Tensor(), &x, nullptr,
                                                   rstd.data_ptr<float>(), has_w ? &w : nullptr,
                                                   has_w ? w.scalar_type() : x.scalar_type(), zero_centered,
                                                   x.scalar_type(), want_dw, false, false, false, M, N, w_shape});
    variable_list out(2);
    if (want_dx) out[0] = std::move(r[0]);
    if (want_dw) out[1] = std::move(r[2]);
    attach_double_backward("lntune.torch.rms_norm", {dy, x, rstd, w}, out);
    return out;
  }
};

// The fused forms: edges (x, residual, weight, bias). Saves z (an output),
// the weight and bias as given, mean (LayerNorm) and rstd, as the op's
// setup_context does. Unused outputs' gradients come undefined (the op's
// set_materialize_grads(False)).
struct FusedNormBackward final : torch::autograd::Node {
  torch::autograd::SavedVariable z_, w_, b_, mean_, rstd_;
  lntune_norm norm = LNTUNE_LAYER_NORM;
  int64_t M = 0, N = 0;
  bool has_w = false, has_b = false, zero_centered = false;
  at::ScalarType x_scalar = at::kFloat, r_scalar = at::kFloat;
  c10::SmallVector<int64_t, 5> w_shape;

  std::string name() const override {
    return norm == LNTUNE_LAYER_NORM ? "LntuneAddLayerNormBackward" : "LntuneAddRmsNormBackward";
  }

  void release_variables() override {
    z_.reset_data();
    w_.reset_data();
    b_.reset_data();
    mean_.reset_data();
    rstd_.reset_data();
  }

  variable_list apply(variable_list&& grads) override {
    variable_list out(4);
    at::Tensor dy = grads[0];
    const at::Tensor& dz = grads[1];
    const at::Tensor z = z_.unpack(getptr());
    const at::Tensor w = has_w ? w_.unpack() : at::Tensor();
    const at::Tensor b = has_b ? b_.unpack() : at::Tensor();
    const at::Tensor mean = norm == LNTUNE_LAYER_NORM ? mean_.unpack() : at::Tensor();
    const at::Tensor rstd = rstd_.unpack();
    if (!dy.defined()) {
      if (!dz.defined()) return out;
      dy = at::zeros_like(z);  // only z was used downstream: y's gradient is zero
    }
    const bool need_x = should_compute_output(0), need_r = should_compute_output(1);
    const bool want_dx = need_x || need_r;
    const bool want_dw = has_w && should_compute_output(2);
    const bool want_db = has_b && should_compute_output(3);
    // fused_dx_dtype: x's dtype when x's gradient is wanted, else the residual's.
    const at::ScalarType dx_scalar = need_x || !need_r ? x_scalar : r_scalar;
    const bool want_dres = want_dx && dx_scalar != z.scalar_type();
    const at::ScalarType w_torch = has_w ? w.scalar_type() : has_b ? b.scalar_type() : dx_scalar;
    auto r = norm_backward_launch(NormBackwardCall{norm, dy, dz, &z, mean.defined() ? mean.data_ptr<float>() : nullptr,
                                                   rstd.data_ptr<float>(), has_w ? &w : nullptr, w_torch,
                                                   zero_centered, dx_scalar, want_dw, want_db, true, want_dres, M, N,
                                                   w_shape});
    if (need_x) out[0] = r[0];
    if (need_r) out[1] = r[0].scalar_type() == r_scalar ? r[0] : r[1];
    if (want_dw) out[2] = std::move(r[2]);
    if (want_db) out[3] = std::move(r[3]);
    attach_double_backward(norm_api_name(norm, true), {dy, dz, z, mean, rstd, w, b}, out);
    return out;
  }
};

// ---- the entries

struct NormCall {
  int64_t M = 0, N = 0;
  lntune_dtype w_dtype = LNTUNE_FP32;
  at::ScalarType y_scalar = at::kFloat;
};

// Whether the C++ route takes this call: what the variant ops accept
// (_torch_ops.check_norm, _NormSignature, check_eps), with M, N > 0 and no
// forward-mode gradient. Declined calls go to the op, which says what is wrong.
bool norm_eligible(lntune_norm norm, const at::Tensor& x, const std::optional<at::Tensor>& residual,
                   const std::vector<int64_t>& normalized_shape, const std::optional<at::Tensor>& weight,
                   const std::optional<at::Tensor>& bias, double eps, bool zero_centered,
                   std::optional<at::ScalarType> out_dtype, bool fused, NormCall* call) {
  if (!g_norm_api.forward || !x.defined() || !device_ok(x) || !lntune_dtype_ok(x.scalar_type())) return false;
  if (!std::isfinite(eps)) return false;
  if (out_dtype && !lntune_dtype_ok(*out_dtype)) return false;
  if (fused != residual.has_value() || (norm == LNTUNE_RMS_NORM && bias)) return false;
  if (zero_centered && !weight) return false;
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  const int64_t dims = x.dim();
  if (k == 0 || dims < k) return false;
  const at::IntArrayRef sizes = x.sizes();
  int64_t n = 1;
  for (int64_t i = 0; i < k; ++i) {
    if (sizes[static_cast<size_t>(dims - k + i)] != normalized_shape[static_cast<size_t>(i)]) return false;
    n *= normalized_shape[static_cast<size_t>(i)];
  }
  if (n <= 0 || x.numel() == 0) return false;
  if (residual) {
    const at::Tensor& r = *residual;
    if (!r.defined() || !device_ok(r) || r.device() != x.device() || !lntune_dtype_ok(r.scalar_type()) ||
        !r.sizes().equals(sizes))
      return false;
  }
  std::optional<at::ScalarType> wt;
  for (const std::optional<at::Tensor>* p : {&weight, &bias}) {
    if (!p->has_value()) continue;
    const at::Tensor& t = p->value();
    if (!t.defined() || !device_ok(t) || t.device() != x.device()) return false;
    if (!t.sizes().equals(normalized_shape)) return false;
    const at::ScalarType d = t.scalar_type();
    if (d != x.scalar_type() && d != at::kFloat) return false;
    if (wt && *wt != d) return false;
    wt = d;
  }
  const auto dual = [](const std::optional<at::Tensor>& t) { return t && t->defined() && t->_fw_grad(0).defined(); };
  if (x._fw_grad(0).defined() || dual(residual) || dual(weight) || dual(bias)) return false;
  call->N = n;
  call->M = x.numel() / n;
  call->w_dtype = dtype_of(wt ? *wt : x.scalar_type());
  call->y_scalar = out_dtype ? *out_dtype : x.scalar_type();
  return true;
}

// y (and z): the forward, with a node when grad mode is on and an input
// requires grad. {} when declined (status -1) or when the library failed
// (status > 0).
std::pair<at::Tensor, at::Tensor> eager_norm(lntune_norm norm, const at::Tensor& x,
                                             const std::optional<at::Tensor>& residual,
                                             const std::vector<int64_t>& normalized_shape,
                                             const std::optional<at::Tensor>& weight,
                                             const std::optional<at::Tensor>& bias, double eps, bool zero_centered,
                                             std::optional<at::ScalarType> out_dtype, bool fused) {
  t_failure.status = 0;
  NormCall c;
  if (!norm_eligible(norm, x, residual, normalized_shape, weight, bias, eps, zero_centered, out_dtype, fused, &c)) {
    t_failure.status = -1;
    return {};
  }
  const auto req = [](const std::optional<at::Tensor>& t) { return t && t->requires_grad(); };
  const bool grad = at::GradMode::is_enabled() && (x.requires_grad() || req(residual) || req(weight) || req(bias));
  if (!grad) {
    NormForward f = norm_forward_impl(norm, x, residual, weight, bias, c.M, c.N, c.w_dtype, eps, zero_centered,
                                      c.y_scalar, false);
    return {f.y, f.z};
  }
  NormForward f;
  {
    at::AutoGradMode no_grad(false);  // row views or copies of the inputs are launch arguments, not graph nodes
    f = norm_forward_impl(norm, x, residual, weight, bias, c.M, c.N, c.w_dtype, eps, zero_centered, c.y_scalar,
                          true);
  }
  if (!f.y.defined()) return {};
  if (!fused) {
    NodePtr node_ptr = make_node<RmsNormBackward>();
    auto* node = static_cast<RmsNormBackward*>(node_ptr.get());
    node->set_next_edges(torch::autograd::collect_next_edges(x, weight));
    node->x_ = torch::autograd::SavedVariable(x, false);
    if (weight) node->w_ = torch::autograd::SavedVariable(*weight, false);
    node->rstd_ = torch::autograd::SavedVariable(f.rstd, false);
    node->M = c.M;
    node->N = c.N;
    node->has_w = weight.has_value();
    node->zero_centered = zero_centered;
    node->y_scalar = c.y_scalar;
    node->w_shape.assign(normalized_shape.begin(), normalized_shape.end());
    torch::autograd::set_history(f.y, node_ptr);
    return {f.y, at::Tensor()};
  }
  NodePtr node_ptr = make_node<FusedNormBackward>();
  auto* node = static_cast<FusedNormBackward*>(node_ptr.get());
  node->set_next_edges(torch::autograd::collect_next_edges(x, residual, weight, bias));
  node->norm = norm;
  node->M = c.M;
  node->N = c.N;
  node->has_w = weight.has_value();
  node->has_b = bias.has_value();
  node->zero_centered = zero_centered;
  node->x_scalar = x.scalar_type();
  node->r_scalar = residual->scalar_type();
  node->w_shape.assign(normalized_shape.begin(), normalized_shape.end());
  torch::autograd::set_history(f.y, node_ptr);  // output 0
  torch::autograd::set_history(f.z, node_ptr);  // output 1
  node->z_ = torch::autograd::SavedVariable(f.z, true);  // an output of the node: saved without its grad_fn
  if (weight) node->w_ = torch::autograd::SavedVariable(*weight, false);
  if (bias) node->b_ = torch::autograd::SavedVariable(*bias, false);
  if (norm == LNTUNE_LAYER_NORM) node->mean_ = torch::autograd::SavedVariable(f.mean, false);
  node->rstd_ = torch::autograd::SavedVariable(f.rstd, false);
  return {f.y, f.z};
}

// lntune.torch.rms_norm's eager entry: y, or None (see eager_norm).
at::Tensor eager_rms_norm(const at::Tensor& x, const std::vector<int64_t>& normalized_shape,
                          const std::optional<at::Tensor>& weight, double eps, bool zero_centered,
                          std::optional<at::ScalarType> out_dtype) {
  return eager_norm(LNTUNE_RMS_NORM, x, std::nullopt, normalized_shape, weight, std::nullopt, eps, zero_centered,
                    out_dtype, false)
      .first;
}

// fused_add_layer_norm's (norm 0) and fused_add_rms_norm's (norm 1) eager
// entry: (y, z), or (None, None) (see eager_norm).
std::pair<at::Tensor, at::Tensor> eager_fused_add_norm(int64_t norm, const at::Tensor& x,
                                                       const std::optional<at::Tensor>& residual,
                                                       const std::vector<int64_t>& normalized_shape,
                                                       const std::optional<at::Tensor>& weight,
                                                       const std::optional<at::Tensor>& bias, double eps,
                                                       bool zero_centered, std::optional<at::ScalarType> out_dtype) {
  if (norm != LNTUNE_LAYER_NORM && norm != LNTUNE_RMS_NORM) {
    t_failure.status = -1;
    return {};
  }
  return eager_norm(static_cast<lntune_norm>(norm), x, residual, normalized_shape, weight, bias, eps, zero_centered,
                    out_dtype, true);
}

// ------------------------------------------------------------------ the ops' C++ CUDA implementations

// torch's Python name of a dtype ("torch.float16"), for messages that match
// the Python implementation's.
std::string py_dtype(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "torch.float32";
    case at::kHalf: return "torch.float16";
    case at::kBFloat16: return "torch.bfloat16";
    case at::kDouble: return "torch.float64";
    case at::kLong: return "torch.int64";
    case at::kInt: return "torch.int32";
    case at::kShort: return "torch.int16";
    case at::kChar: return "torch.int8";
    case at::kByte: return "torch.uint8";
    case at::kBool: return "torch.bool";
    default: return std::string("torch.") + c10::toString(t);
  }
}

std::string py_list(at::IntArrayRef v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

struct Signature {
  int64_t k = 0, N = 0;
  lntune_dtype x_dtype = LNTUNE_FP32, w_dtype = LNTUNE_FP32;
  at::ScalarType w_scalar = at::kFloat;
};

// lntune._torch_ops.check in C++: the same rules, messages and exception
// types (TORCH_CHECK_TYPE: TypeError, TORCH_CHECK_VALUE: ValueError).
Signature check(const at::Tensor& x, at::IntArrayRef shape, const std::optional<at::Tensor>& weight,
                const std::optional<at::Tensor>& bias) {
  TORCH_CHECK_TYPE(x.is_cuda(), "lntune.torch.layer_norm: x must be a CUDA tensor, got one on ", x.device().str(),
                   " (lntune runs on NVIDIA GPUs only; use torch.nn.functional.layer_norm on the CPU)");
  const at::ScalarType xt = x.scalar_type();
  TORCH_CHECK_TYPE(xt == at::kFloat || xt == at::kHalf || xt == at::kBFloat16,
                   "lntune.torch.layer_norm: x must be float32, float16 or bfloat16, got ", py_dtype(xt));
  TORCH_CHECK_VALUE(!shape.empty(), "lntune.torch.layer_norm: normalized_shape must not be empty");
  Signature s;
  s.k = static_cast<int64_t>(shape.size());
  s.N = 1;
  for (const int64_t d : shape) {
    TORCH_CHECK_VALUE(d >= 0, "lntune.torch.layer_norm: normalized_shape ", py_list(shape), " has a negative size");
    s.N *= d;
  }
  std::optional<at::ScalarType> wt;
  for (const auto& [name, p] : {std::pair<const char*, const std::optional<at::Tensor>*>{"weight", &weight},
                                {"bias", &bias}}) {
    if (!p->has_value()) continue;
    const at::ScalarType d = (*p)->scalar_type();
    TORCH_CHECK_TYPE(d == xt || d == at::kFloat, "lntune.torch.layer_norm: ", name, " must be ", py_dtype(xt),
                     " (x's dtype) or float32, got ", py_dtype(d));
    TORCH_CHECK_TYPE(!wt || *wt == d, "lntune.torch.layer_norm: weight (", py_dtype(wt ? *wt : d), ") and bias (",
                     py_dtype(d), ") must have the same dtype");
    wt = d;
  }
  const at::IntArrayRef xs = x.sizes();
  TORCH_CHECK_VALUE(static_cast<int64_t>(xs.size()) >= s.k && xs.slice(xs.size() - shape.size()).equals(shape),
                    "lntune.torch.layer_norm: normalized_shape ", py_list(shape),
                    " must be the last dimensions of x, whose shape is ", py_list(xs));
  for (const auto& [name, p] : {std::pair<const char*, const std::optional<at::Tensor>*>{"weight", &weight},
                                {"bias", &bias}}) {
    if (!p->has_value()) continue;
    const at::Tensor& t = **p;
    TORCH_CHECK_TYPE(t.is_cuda() && t.device() == x.device(), "lntune.torch.layer_norm: ", name, " is on ",
                     t.device().str(), " but x is on ", x.device().str());
    TORCH_CHECK_VALUE(t.sizes().equals(shape), "lntune.torch.layer_norm: ", name, " must have shape ",
                      py_list(shape), " (normalized_shape), got ", py_list(t.sizes()));
  }
  s.x_dtype = dtype_of(xt);
  s.w_scalar = wt ? *wt : xt;
  s.w_dtype = dtype_of(s.w_scalar);
  return s;
}

int64_t rows_of(const at::Tensor& x, const Signature& s) {
  if (s.N) return x.numel() / s.N;
  int64_t m = 1;
  for (int64_t i = 0; i < x.dim() - s.k; ++i) m *= x.size(i);
  return m;
}

// lntune::layer_norm_fwd(Tensor x, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps)
//     -> (Tensor y, Tensor mean, Tensor rstd)
std::tuple<at::Tensor, at::Tensor, at::Tensor> op_layer_norm_fwd(const at::Tensor& x, at::IntArrayRef normalized_shape,
                                                                 const std::optional<at::Tensor>& weight,
                                                                 const std::optional<at::Tensor>& bias, double eps) {
  const Signature s = check(x, normalized_shape, weight, bias);
  const at::Device device = x.device();
  const at::IntArrayRef lead = x.sizes().slice(0, x.sizes().size() - normalized_shape.size());
  const int64_t M = rows_of(x, s);
  at::Tensor y = empty(x.sizes(), x.scalar_type(), device);
  // Separate outputs: a functional op's outputs must not alias each other.
  at::Tensor mean = empty(lead, at::kFloat, device);
  at::Tensor rstd = empty(lead, at::kFloat, device);
  if (s.N == 0) {  // torch's mean and rstd of no elements
    mean.fill_(std::numeric_limits<double>::quiet_NaN());
    rstd.fill_(std::numeric_limits<double>::quiet_NaN());
    return {y, mean, rstd};
  }
  if (M == 0) return {y, mean, rstd};
  const std::optional<at::Tensor> w = dense(weight), b = dense(bias);
  auto r = rows(x, M, s.N);
  DeviceScope scope(device);
  lntune_forward_args a{};
  a.x = r.first.data_ptr();
  a.weight = ptr(w);
  a.bias = ptr(b);
  a.y = y.data_ptr();
  a.mean = mean.data_ptr<float>();
  a.rstd = rstd.data_ptr<float>();
  a.M = M;
  a.N = s.N;
  a.x_row_stride = r.second;
  a.y_row_stride = s.N;
  a.x_dtype = s.x_dtype;
  a.w_dtype = s.w_dtype;
  a.eps = static_cast<float>(eps);
  a.stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
  const lntune_status status = g_api.forward(&a);
  if (status != LNTUNE_OK) fail(status, "lntune_forward");
  return {y, mean, rstd};
}

// lntune::layer_norm_bwd(Tensor dy, Tensor x, Tensor mean, Tensor rstd, SymInt[] normalized_shape,
//                        Tensor? weight, Tensor? bias, bool[3] output_mask)
//     -> (Tensor dx, Tensor dweight, Tensor dbias)
// Masked-off dweight/dbias are empty (0,) tensors (in weight's dtype).
std::tuple<at::Tensor, at::Tensor, at::Tensor> op_layer_norm_bwd(const at::Tensor& dy, const at::Tensor& x,
                                                                 const at::Tensor& mean, const at::Tensor& rstd,
                                                                 at::IntArrayRef normalized_shape,
                                                                 const std::optional<at::Tensor>& weight,
                                                                 const std::optional<at::Tensor>& bias,
                                                                 std::array<bool, 3> output_mask) {
  const Signature s = check(x, normalized_shape, weight, bias);
  const int64_t M = s.N ? x.numel() / s.N : mean.numel();
  TORCH_CHECK_VALUE(dy.sizes().equals(x.sizes()), "lntune.torch.layer_norm backward: dy has shape ",
                    py_list(dy.sizes()), ", x ", py_list(x.sizes()));
  TORCH_CHECK_VALUE(mean.scalar_type() == at::kFloat && rstd.scalar_type() == at::kFloat && mean.numel() == M &&
                        rstd.numel() == M,
                    "lntune.torch.layer_norm backward: mean and rstd must be float32 with " + std::to_string(M) +
                        " elements");
  TORCH_CHECK_TYPE(dy.device() == x.device() && mean.device() == x.device() && rstd.device() == x.device(),
                   "lntune.torch.layer_norm backward: dy, mean and rstd must be on x's device (", x.device().str(),
                   ")");
  const at::Tensor mean2 = mean.is_contiguous() ? mean : mean.contiguous();
  const at::Tensor rstd2 = rstd.is_contiguous() ? rstd : rstd.contiguous();
  auto r = rows(x, M, s.N);
  const std::optional<at::Tensor> w = dense(weight);
  const bool want_dw = output_mask[1] && weight.has_value();
  const bool want_db = output_mask[2] && bias.has_value();
  auto [dx, dw, db] = backward_launch(BackwardCall{dy, &r.first, r.second, M, s.N, mean2.data_ptr<float>(),
                                                   rstd2.data_ptr<float>(), w ? &*w : nullptr, s.w_dtype, s.w_scalar,
                                                   want_dw, want_db, x.sizes(), normalized_shape});
  if (!want_dw) dw = empty({0}, s.w_scalar, x.device());
  if (!want_db) db = empty({0}, s.w_scalar, x.device());
  return {dx, dw, db};
}

// ------------------------------------------------------------------ registration, table-driven

// The ops this module implements in C++, by name in the lntune namespace.
// Python (lntune._torch_ops._register) defines each op's schema, fake and
// autograd formula, and asks here for the CUDA kernel of every op it finds
// in this table (register_native), else registers its Python one. A new op
// gets a C++ implementation by a function above and one row here.
using Registrar = void (*)(torch::Library&, const char*);

struct NativeOp {
  const char* name;
  Registrar registrar;
};

const NativeOp kNativeOps[] = {
    {"layer_norm_fwd", [](torch::Library& lib, const char* name) { lib.impl(name, TORCH_FN(op_layer_norm_fwd)); }},
    {"layer_norm_bwd", [](torch::Library& lib, const char* name) { lib.impl(name, TORCH_FN(op_layer_norm_bwd)); }},
};

std::vector<std::string> native_ops() {
  std::vector<std::string> names;
  for (const NativeOp& op : kNativeOps) names.emplace_back(op.name);
  return names;
}

// One torch::Library (IMPL, "lntune", key) per op and dispatch key: its
// registration lives as long as the object, so unregister_native() takes
// the kernel out again and Python can put its own back.
std::map<std::pair<std::string, std::string>, std::unique_ptr<torch::Library>>& registrations() {
  static auto* r = new std::map<std::pair<std::string, std::string>, std::unique_ptr<torch::Library>>();
  return *r;  // never destroyed: the dispatcher may outlive this module's statics
}

// Registers the C++ kernel of lntune::`name` for `dispatch_key` ("CUDA";
// tests use "CPU" to reach the kernel's argument checks without a GPU).
// False when this module has no C++ implementation of `name`.
bool register_native(const std::string& name, const std::string& dispatch_key) {
  for (const NativeOp& op : kNativeOps) {
    if (name != op.name) continue;
    auto& slot = registrations()[{name, dispatch_key}];
    if (slot) return true;
    auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, "lntune",
                                                c10::parseDispatchKey(dispatch_key), __FILE__, __LINE__);
    op.registrar(*lib, op.name);
    slot = std::move(lib);
    return true;
  }
  return false;
}

// Takes lntune::`name`'s C++ kernel for `dispatch_key` out of the dispatcher
// (false if it was not registered).
bool unregister_native(const std::string& name, const std::string& dispatch_key) {
  return registrations().erase({name, dispatch_key}) > 0;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("set_api", &set_api, "hand over liblntune's C functions (addresses)");
  m.def("layer_norm", &eager_layer_norm, "LayerNorm forward, with an autograd node when grad is true");
  m.def("set_norm_api", &set_norm_api, "hand over liblntune's lntune_norm_* functions (addresses)");
  m.def("has_norm_api", &has_norm_api, "whether set_norm_api was called: the variants' entries can run");
  m.def("set_cpu_test_mode", &set_cpu_test_mode, "tests: the variants' entries take CPU tensors too");
  m.def("rms_norm", &eager_rms_norm, "RMSNorm forward (eager), with an autograd node when grad is true");
  m.def("fused_add_norm", &eager_fused_add_norm,
        "fused residual add + LayerNorm (norm 0) or RMSNorm (norm 1) forward (eager): (y, z)");
  m.def("last_failure", &last_failure, "(status, function, message) of this thread's last failed forward");
  m.def("set_node_v2", &set_node_v2, "eager route: the plain autograd Node (True) or the autograd::Function");
  m.def("bump_generation", &bump_generation, "tuned configs changed: forget the memoised workspace sizes");
  m.def("workspace_queries", &workspace_queries, "lntune_backward_workspace_size calls made so far (all threads)");
  m.def("native_ops", &native_ops, "names of the lntune:: ops implemented here");
  m.def("register_native", &register_native, "register an op's C++ kernel for a dispatch key");
  m.def("unregister_native", &unregister_native, "take an op's C++ kernel out of the dispatcher again");
}
