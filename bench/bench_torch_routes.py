#!/usr/bin/env python3
"""Host time per call of lntune.torch's routes against PyTorch, in one
process, with lntune's opt-in C++ paths switched in-process:

  eager step     F.layer_norm vs lntune.torch.layer_norm with the backward node
                 as torch::autograd::Function (v1) and as a plain Node (v2,
                 LNTUNE_TORCH_NODE_V2): forward + y.backward(dy)
  eager bwd      y.backward(dy, retain_graph=True) alone, same three
  ops            torch.ops.lntune.layer_norm_fwd + layer_norm_bwd called
                 directly: the Python CUDA kernels vs the C++ ones
                 (LNTUNE_TORCH_NATIVE_OPS), against aten.native_layer_norm
                 (+ _backward)
  compiled step  torch.compile(fullgraph=True, default mode: no CUDA graphs)
                 of LayerNorm forward + backward: F.layer_norm vs lntune with
                 the Python kernels vs the C++ ones

    LNTUNE_LIBRARY=build/lib/liblntune.so PYTHONPATH=python python3 bench/bench_torch_routes.py [--quick]

Host time: perf_counter around a batch of calls, the device drained before
each batch (bench_layernorm.py's host method); median of batches. Ratios are
lntune / PyTorch of the same row, measured in this process.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import bench_layernorm as bl  # noqa: E402  (imports torch, triton, lntune.torch)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import lntune.torch as lt  # noqa: E402
from lntune import _torch_ext, _torch_ops  # noqa: E402


# Host time per call: bench_layernorm.py's method (the same numbers as its host section).
host_us = bl.host_us_batch


def case(M, N, dtype, eps=1e-5):
    x = (torch.randn(M, N, device="cuda") * 0.5 - 2.3).to(dtype).requires_grad_()
    w = torch.rand(N, device="cuda", dtype=dtype, requires_grad=True)
    b = torch.rand(N, device="cuda", dtype=dtype, requires_grad=True)
    dy = (torch.randn(M, N, device="cuda") * 0.1).to(dtype)
    x0, w0, b0 = x.detach(), w.detach(), b.detach()
    ext = lt._ext
    row = {}

    def clear():
        x.grad = w.grad = b.grad = None

    def eager(fn):
        def step():
            clear()
            fn(x, (N,), w, b, eps).backward(dy)

        y = fn(x, (N,), w, b, eps)

        def bwd():
            clear()
            y.backward(dy, retain_graph=True)

        return host_us(step), host_us(bwd)

    row["eager step torch"], row["eager bwd torch"] = eager(F.layer_norm)
    if ext is not None:
        for v2 in (False, True):
            ext.set_node_v2(v2)
            tag = "v2" if v2 else "v1"
            row["eager step " + tag], row["eager bwd " + tag] = eager(lt.layer_norm)
        ext.set_node_v2(_torch_ext.NODE_V2)

    mean = torch.zeros(M, device="cuda")
    rstd = torch.ones(M, device="cuda")
    row["ops torch"] = host_us(lambda: (torch.ops.aten.native_layer_norm.default(x0, [N], w0, b0, eps),
                                        torch.ops.aten.native_layer_norm_backward.default(
                                            dy, x0, [N], mean, rstd, w0, b0, [True, True, True])))

    def ops_pair():
        _, m, r = torch.ops.lntune.layer_norm_fwd.default(x0, [N], w0, b0, eps)
        torch.ops.lntune.layer_norm_bwd.default(dy, x0, m, r, [N], w0, b0, [True, True, True])

    def compiled(fn):
        torch._dynamo.reset()
        c = torch.compile(lambda x, w, b: fn(x, (N,), w, b, eps), fullgraph=True)

        def step():
            clear()
            c(x, w, b).backward(dy)

        return step

    row["compiled torch"] = host_us(compiled(F.layer_norm))
    lstep = compiled(lt.layer_norm)
    for native in (False, True):
        got = _torch_ops.use_native_ops(native)
        if native and not all(got.values()):
            continue
        tag = "cpp" if native else "py"
        row["ops " + tag] = host_us(ops_pair)
        row["compiled " + tag] = host_us(lstep)  # the same compiled graph: it calls the ops through the dispatcher
    _torch_ops.use_native_ops(_torch_ops.NATIVE_OPS)
    torch._dynamo.reset()
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="M in {1, 4096}, N in {1024, 4096}")
    args = ap.parse_args()
    Ms = [1, 4096] if args.quick else [1, 32, 4096, 16384]
    Ns = [1024, 4096] if args.quick else [1024, 2048, 4096, 8192]
    print("torch %s, %s; C++ extension: %s" % (torch.__version__, torch.cuda.get_device_name(),
                                                 "built" if lt._ext is not None else "NOT built"))
    print("host us per call, bf16; ratio = lntune / torch of the same row")
    groups = (("eager step", ("v1", "v2")), ("eager bwd", ("v1", "v2")), ("ops", ("py", "cpp")),
              ("compiled", ("py", "cpp")))
    head = "| M | N | " + " | ".join("%s torch / %s / %s" % (g, a, b) for g, (a, b) in groups) + " |"
    print(head)
    print("|" + "--:|" * (2 + len(groups)))
    worst = {}
    case(Ms[0], Ns[0], torch.bfloat16)  # warm-up: compilations, plans
    for M in Ms:
        for N in Ns:
            r = case(M, N, torch.bfloat16)
            cells = []
            for g, variants in groups:
                t = r.get(g + " torch")
                vals = [r.get("%s %s" % (g, v)) for v in variants]
                cells.append("%.1f / %s" % (t, " / ".join(
                    "n/a" if v is None else "%.1f (x%.2f)" % (v, v / t) for v in vals)))
                for v, val in zip(variants, vals):
                    if val is not None:
                        k = "%s %s" % (g, v)
                        worst[k] = max(worst.get(k, 0.0), val / t)
            print("| %d | %d | %s |" % (M, N, " | ".join(cells)))
    print("max ratio: " + ", ".join("%s %.2f" % (k, v) for k, v in worst.items()))


if __name__ == "__main__":
    main()
