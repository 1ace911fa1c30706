"""Host cost of an autograd node's machinery, without a GPU: the two node
kinds lntune.torch's C++ extension can build for the eager LayerNorm route
(python/lntune/csrc/torch_ext.cpp), stripped of the launches and of CUDA.

    /work/venv-torch/bin/python bench/host_autograd_node.py [--steps 20000]

Both variants save and read back exactly what the real ones do (three saved
tensors; the Function also its seven saved_data entries) and allocate the
same outputs (tiny CPU tensors, so allocation is cheap here and the same for
both). What differs is only the autograd bookkeeping:
  function: torch::autograd::Function (CppNode: AutogradContext, saved_data
            hash map, VariableInfo per input and output, mutex, ...)
  node:     a plain torch::autograd::Node subclass with typed members, as
            PyTorch's own NativeLayerNormBackward0.
Reported: microseconds per forward (node built) and per training step
(forward + y.backward(dy) through the engine), medians of repeated batches,
CPU tensors (the engine runs the backward on the calling thread here; on
CUDA it hands over to the device thread, the same for both variants). Time
is this thread's CPU time (time.thread_time), so that other processes on a
shared machine do not count.
"""

import argparse
import statistics
import time

import torch
from torch.utils import cpp_extension

SOURCE = r"""
#include <torch/extension.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <c10/util/SmallVector.h>
#include <type_traits>

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Fn : public torch::autograd::Function<Fn> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const std::optional<at::Tensor>& w,
                            const std::optional<at::Tensor>& b, int64_t N, int64_t w_dtype, double eps) {
    at::Tensor y = at::empty(x.sizes(), x.options());
    at::Tensor stats = at::empty({2, x.numel() / N}, x.options().dtype(at::kFloat));
    ctx->save_for_backward({x, w ? *w : at::Tensor(), stats});
    ctx->saved_data["N"] = N;
    ctx->saved_data["w_dtype"] = w_dtype;
    ctx->saved_data["x_stride"] = N;
    ctx->saved_data["x_shape"] = x.sizes().vec();
    ctx->saved_data["has_w"] = w.has_value();
    if (b) {
      ctx->saved_data["b_shape"] = b->sizes().vec();
      ctx->saved_data["b_dtype"] = static_cast<int64_t>(b->scalar_type());
    }
    (void)eps;
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    const at::Tensor& x2 = saved[0];
    const at::Tensor& w = saved[1];
    const int64_t N = ctx->saved_data["N"].toInt();
    (void)N;
    const bool has_w = ctx->saved_data["has_w"].toBool();
    const bool has_b = ctx->saved_data.count("b_shape") > 0;
    const bool want_dx = ctx->needs_input_grad(0);
    const bool want_dw = has_w && ctx->needs_input_grad(1);
    const bool want_db = has_b && ctx->needs_input_grad(has_w ? 2 : 1);
    at::Tensor dx = at::empty(ctx->saved_data["x_shape"].toIntVector(), x2.options());
    at::Tensor dw = want_dw ? at::empty(w.sizes(), w.options()) : at::Tensor();
    at::Tensor db;
    if (want_db)
      db = at::empty(ctx->saved_data["b_shape"].toIntVector(),
                     x2.options().dtype(static_cast<at::ScalarType>(ctx->saved_data["b_dtype"].toInt())));
    (void)ctx->saved_data["x_stride"].toInt();
    (void)ctx->saved_data["w_dtype"].toInt();
    (void)grads;
    return {want_dx ? dx : at::Tensor(), dw, db, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

using NodePtr = std::decay_t<decltype(std::declval<const at::Tensor&>().grad_fn())>;

struct Node final : torch::autograd::Node {
  torch::autograd::SavedVariable x2_, w_, stats_;
  int64_t M = 0, N = 0, x_stride = 0;
  bool has_w = false, has_b = false;
  at::ScalarType w_scalar = at::kFloat;
  c10::SmallVector<int64_t, 5> x_shape, w_shape;
  std::string name() const override { return "Node"; }
  void release_variables() override { x2_.reset_data(); w_.reset_data(); stats_.reset_data(); }
  variable_list apply(variable_list&& grads) override {
    variable_list out(3);
    const bool want_dx = task_should_compute_output(0);
    const bool want_dw = has_w && task_should_compute_output(1);
    const bool want_db = has_b && task_should_compute_output(2);
    if (!grads[0].defined()) return out;
    const at::Tensor x2 = x2_.unpack();
    const at::Tensor stats = stats_.unpack();
    const at::Tensor w = has_w ? w_.unpack() : at::Tensor();
    at::Tensor dx = at::empty(x_shape, x2.options());
    if (want_dx) out[0] = dx;
    if (want_dw) out[1] = at::empty(w_shape, x2.options().dtype(w_scalar));
    if (want_db) out[2] = at::empty(w_shape, x2.options().dtype(w_scalar));
    return out;
  }
};

template <class T>
NodePtr make_node() {
  if constexpr (std::is_same_v<NodePtr, std::shared_ptr<torch::autograd::Node>>) {
    return NodePtr(new T(), [](auto* n) { deleteNode(n); });
  } else {
    return c10::make_intrusive<T>();
  }
}

at::Tensor with_function(const at::Tensor& x, const std::optional<at::Tensor>& w,
                         const std::optional<at::Tensor>& b) {
  return Fn::apply(x, w, b, x.size(-1), 0, 1e-5);
}

at::Tensor with_node(const at::Tensor& x, const std::optional<at::Tensor>& w, const std::optional<at::Tensor>& b) {
  const int64_t N = x.size(-1);
  at::Tensor y, stats;
  {
    at::AutoGradMode no_grad(false);
    y = at::empty(x.sizes(), x.options());
    stats = at::empty({2, x.numel() / N}, x.options().dtype(at::kFloat));
  }
  NodePtr p = make_node<Node>();
  auto* n = static_cast<Node*>(p.get());
  n->set_next_edges(torch::autograd::collect_next_edges(x, w, b));
  n->x2_ = torch::autograd::SavedVariable(x, false);
  if (w) n->w_ = torch::autograd::SavedVariable(*w, false);
  n->stats_ = torch::autograd::SavedVariable(stats, false);
  n->M = x.numel() / N;
  n->N = N;
  n->x_stride = N;
  n->has_w = w.has_value();
  n->has_b = b.has_value();
  n->w_scalar = w ? w->scalar_type() : x.scalar_type();
  n->x_shape.assign(x.sizes().begin(), x.sizes().end());
  n->w_shape.assign({N});
  torch::autograd::set_history(y, p);
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("with_function", &with_function);
  m.def("with_node", &with_node);
}
"""


def per_call_us(fns, calls, repeats):
    """{name: thread CPU us per call}: batches of the variants interleaved
    (so that drift on a shared machine hits them alike); medians."""
    for f in fns.values():
        for _ in range(50):
            f()
    samples = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            t0 = time.thread_time()
            for _ in range(calls):
                f()
            samples[k].append((time.thread_time() - t0) / calls)
    return {k: statistics.median(v) * 1e6 for k, v in samples.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=500, help="calls per timed batch")
    ap.add_argument("--repeats", type=int, default=21, help="batches per variant")
    args = ap.parse_args()
    torch.set_num_threads(1)  # tiny tensors: no intra-op threads to wait for
    ext = cpp_extension.load_inline("lntune_host_autograd_node", cpp_sources=[SOURCE], extra_cflags=["-O2"])
    x = torch.randn(4, 64, requires_grad=True)
    w = torch.rand(64, requires_grad=True)
    b = torch.rand(64, requires_grad=True)
    dy = torch.randn(4, 64)
    print("torch %s, CPU tensors [4, 64]; thread CPU us per call (median of %d interleaved batches of %d)"
          % (torch.__version__, args.repeats, args.steps))
    variants = {"function": ext.with_function, "node": ext.with_node}

    def stepper(f):
        def step():
            x.grad = w.grad = b.grad = None
            f(x, w, b).backward(dy)

        return step

    fwd = per_call_us({k: (lambda f=f: f(x, w, b)) for k, f in variants.items()}, args.steps, args.repeats)
    step = per_call_us({k: stepper(f) for k, f in variants.items()}, args.steps, args.repeats)
    for k in variants:
        print("%-9s forward %6.2f us   step (forward + backward) %6.2f us" % (k, fwd[k], step[k]))
    print("function - node: forward %.2f us, step %.2f us" % (fwd["function"] - fwd["node"],
                                                            step["function"] - step["node"]))


if __name__ == "__main__":
    main()
