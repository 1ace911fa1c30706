#!/usr/bin/env python3
"""Host time per call through lntune.torch against PyTorch, interleaved.

bench_layernorm.py's host section measures one provider, then the other, so
a drift of the machine between the two windows (clocks, another process,
the allocator's state) lands in the ratio. Here every round runs one batch
of each route back to back, in an order that rotates from round to round,
and the ratio of a cell is the median over rounds of the ratio within the
round (paired), next to the ratio of the medians.

Routes (bf16, M x N, weight and bias):
  torch   F.layer_norm
  v1      lntune.torch.layer_norm, the backward node a torch::autograd::Function
  v2      the same with a plain autograd Node (LNTUNE_TORCH_NODE_V2)
Metrics:
  fwd     inference forward (no grad)
  step    forward with grad + backward (autograd), .grad cleared each call

Host time: perf_counter around a batch of calls, the device drained before
the batch (bench_layernorm.host_samples).

--grid: the end-to-end backward of the Triton tutorial's grid instead (M =
4096, N = 512 i and 32768, 65536; fp16, bf16, fp32), timed as
bench_layernorm.py's grid section times it (timing.do_bench, triton.
testing.do_bench's method: the L2 cleared by a read before each call, CUDA events around
y.backward(dy, retain_graph=True), .grad cleared), but interleaved: each
round times `--calls` calls of PyTorch's and of lntune's backward (the
default node), and the cell's speed-up is the median over rounds of
PyTorch's time / lntune's. Below N ~ 6000 both backwards are host-bound
(autograd's engine and node), where separate runs differ by up to 2x.

    LNTUNE_LIBRARY=build/lib/liblntune.so PYTHONPATH=python python3 bench/bench_host_step.py [--rounds R] [--grid]
"""

from __future__ import annotations

import argparse
import statistics

import torch
import torch.nn.functional as F

import bench_layernorm as bl
import lntune.torch as lt
import timing
from lntune import _torch_ext


def routes(M, N, dtype, eps=1e-5):
    x = (torch.randn(M, N, device="cuda") * 0.5 - 2.3).to(dtype).requires_grad_()
    w = torch.rand(N, device="cuda", dtype=dtype, requires_grad=True)
    b = torch.rand(N, device="cuda", dtype=dtype, requires_grad=True)
    dy = (torch.randn(M, N, device="cuda") * 0.1).to(dtype)
    x0 = x.detach()
    ext = lt._ext

    def fwd(fn):
        def call():
            with torch.no_grad():
                fn(x0, (N,), w, b, eps)
        return call

    def step(fn):
        def call():
            x.grad = w.grad = b.grad = None
            fn(x, (N,), w, b, eps).backward(dy)
        return call

    out = {"fwd": {"torch": fwd(F.layer_norm), "lntune": fwd(lt.layer_norm)},
           "step": {"torch": step(F.layer_norm), "v1": step(lt.layer_norm)}}
    if ext is not None:  # the two nodes: the same call, the node switched before each batch (measure)
        out["step"]["v2"] = step(lt.layer_norm)
        out["step"]["_switch"] = lambda name: ext.set_node_v2(name == "v2")
    return out


def measure(fns, rounds, calls):
    """{name: [us per call, one per round]} (bench_layernorm.host_samples: one
    batch of each per round, the order rotating), the node switched before
    each batch where fns has a "_switch"."""
    switch = fns.get("_switch")
    samples = bl.host_samples({k: v for k, v in fns.items() if not k.startswith("_")}, calls, rounds, switch)
    if switch:
        switch("v2" if _torch_ext.NODE_V2 else "v1")
    return samples


def e2e_bwd_ms(y, dy, params, calls, flush):
    """Median ms of y.backward(dy) over `calls` (timing.flushed_ms), the
    parameters' .grad cleared before each."""
    def clear():
        for p in params:
            p.grad = None

    return timing.flushed_ms(lambda: y.backward(dy, retain_graph=True), calls, flush, clear)


def median_ci(values, z=1.96):
    """The median of `values` and a distribution-free ~95% confidence
    interval for it (the order statistics n/2 -+ z sqrt(n)/2)."""
    v = sorted(values)
    n = len(v)
    half = z * n ** 0.5 / 2
    lo = max(0, int(n / 2 - half))
    hi = min(n - 1, int(n / 2 + half + 0.999))
    return statistics.median(v), v[lo], v[hi]


def grid(args):
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
    ns = [512 * i for i in range(2, 32)] + [32768, 65536]
    flush = timing.L2Flush("read")
    print("end-to-end backward, M = 4096, lntune (default configs, node v2=%s) against PyTorch; "
          "speed-up = PyTorch's time / lntune's: paired median over %d rounds of %d calls"
          % (_torch_ext.NODE_V2, args.rounds, args.calls))
    for dname in args.dtypes.split(","):
        dtype = dtypes[dname]
        below, ups = [], []
        for N in ns:
            M = 4096
            x = (torch.randn(M, N, device="cuda") * 0.5 - 2.3).to(dtype).requires_grad_()
            w = torch.rand(N, device="cuda", dtype=dtype, requires_grad=True)
            b = torch.rand(N, device="cuda", dtype=dtype, requires_grad=True)
            dy = (torch.randn(M, N, device="cuda") * 0.1).to(dtype)
            ys = {"torch": F.layer_norm(x, (N,), w, b, 1e-5), "lntune": lt.layer_norm(x, (N,), w, b, 1e-5)}
            for y in ys.values():  # warm-up
                e2e_bwd_ms(y, dy, (x, w, b), 3, flush)
            t = {k: [] for k in ys}
            for r in range(args.rounds):
                for k in (("torch", "lntune") if r % 2 == 0 else ("lntune", "torch")):
                    t[k].append(e2e_bwd_ms(ys[k], dy, (x, w, b), args.calls, flush))
            up, up_lo, up_hi = median_ci([a / b for a, b in zip(t["torch"], t["lntune"])])
            ups.append(up)
            gbs = 3 * M * N * x.element_size() / (statistics.median(t["lntune"]) * 1e-3) / 1e9
            print("grid-e2e %s N=%d: lntune %.1f us (%.0f GB/s), torch %.1f us, speed-up x%.2f (95%% CI %.2f-%.2f)"
                  % (dname, N, statistics.median(t["lntune"]) * 1e3, gbs, statistics.median(t["torch"]) * 1e3, up,
                     up_lo, up_hi), flush=True)
            if up < 1.0:
                below.append("N=%d x%.2f (CI %.2f-%.2f)" % (N, up, up_lo, up_hi))
            del x, w, b, dy, ys
        gm = statistics.geometric_mean(ups)
        print("grid-e2e %s: %d N, geomean x%.2f, min x%.2f; below 1.0: %s"
              % (dname, len(ups), gm, min(ups), ", ".join(below) or "none"), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--calls", type=int, default=20, help="calls per batch")
    ap.add_argument("--ms", default="1,32,4096,16384")
    ap.add_argument("--ns", default="1024,2048,4096,8192")
    ap.add_argument("--grid", action="store_true", help="the tutorial grid's end-to-end backward instead")
    ap.add_argument("--dtypes", default="fp16,bf16,fp32", help="with --grid")
    args = ap.parse_args()
    if args.grid:
        return grid(args)
    Ms = [int(v) for v in args.ms.split(",")]
    Ns = [int(v) for v in args.ns.split(",")]
    print("torch %s, %s; C++ extension: %s; %d rounds of %d calls" % (
        torch.__version__, torch.cuda.get_device_name(), "built" if lt._ext is not None else "NOT built",
        args.rounds, args.calls))
    print("host us per call (median over rounds), bf16; ratio = lntune / torch: "
          "paired (median of per-round ratios) and of the medians")
    print("| M | N | fwd torch | fwd lntune (paired, medians) | step torch | step v1 (paired, medians) "
          "| step v2 (paired, medians) |")
    print("|--:|--:|--:|--:|--:|--:|--:|")
    worst = {}
    routes(Ms[0], Ns[0], torch.bfloat16)  # warm-up
    for M in Ms:
        for N in Ns:
            r = routes(M, N, torch.bfloat16)
            cells = []
            for metric in ("fwd", "step"):
                s = measure(r[metric], args.rounds, args.calls)
                t = statistics.median(s["torch"])
                cells.append("%.1f" % t)
                for name in [k for k in s if k != "torch"]:
                    med = statistics.median(s[name])
                    paired = statistics.median(a / b for a, b in zip(s[name], s["torch"]))
                    cells.append("%.1f (x%.2f, x%.2f)" % (med, paired, med / t))
                    key = "%s %s" % (metric, name)
                    worst[key] = max(worst.get(key, 0.0), paired)
            print("| %d | %d | %s |" % (M, N, " | ".join(cells)), flush=True)
            del r
            torch.cuda.empty_cache()
    print("max paired ratio: " + ", ".join("%s %.2f" % (k, v) for k, v in worst.items()))


if __name__ == "__main__":
    main()
