#!/usr/bin/env python3
"""Where the time of one end-to-end backward goes, lntune.torch against
PyTorch (session 46, GPU checklist item 2: the RMSNorm backward at M = 4096,
N = 1024 measured 0.30-0.73x PyTorch in bench_norms.py's grid).

For each op and provider, the grid's own measurement (bench_layernorm.bench_ms:
triton.testing.do_bench, L2 cleared before each call, CUDA events around
torch.autograd.grad) beside:
  host   perf_counter around a batch of autograd.grad calls, device drained first
         (bench_layernorm.host_us_batch)
  gpu    the backward's kernels alone: the CUDA time torch.profiler records
then a torch.profiler timeline of a few do_bench-style repetitions: for each,
the host offsets (from the start of autograd.grad) of every CUDA runtime or
driver call, and the kernels' GPU start and duration relative to the start
event.

    LNTUNE_LIBRARY=... PYTHONPATH=python python3 bench/probes/variant_bwd_timeline.py [--ops rms,add_rms,add_ln]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_layernorm as bl  # noqa: E402
import bench_norms as bn  # noqa: E402


def timeline(fn, reps=4):
    cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    from torch.profiler import ProfilerActivity, profile, record_function

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(reps):
            cache.zero_()
            with record_function("rep%d" % i):
                fn()
        torch.cuda.synchronize()
    ev = prof.events()
    reps_ev = sorted([e for e in ev if e.name.startswith("rep")], key=lambda e: e.time_range.start)
    lines = []
    for r in reps_ev[-2:]:
        t0, t1 = r.time_range.start, r.time_range.end
        lines.append("  %s: host %.1f us" % (r.name, (t1 - t0)))
        inside = sorted([e for e in ev if t0 <= e.time_range.start <= t1 and e is not r and
                         e.device_type == torch.autograd.DeviceType.CPU], key=lambda e: e.time_range.start)
        for e in inside:
            d = e.time_range.end - e.time_range.start
            if d >= 2.0 or "aunch" in e.name or "ync" in e.name or "lloc" in e.name or "emcpy" in e.name \
                    or "emset" in e.name:
                lines.append("    +%6.1f %6.1f  %s" % (e.time_range.start - t0, d, e.name[:90]))
    kern = [e for e in ev if e.device_type == torch.autograd.DeviceType.CUDA]
    kern.sort(key=lambda e: e.time_range.start)
    lines.append("  GPU (last 8 activities):")
    last = None
    for e in kern[-8:]:
        gap = "" if last is None else " gap %.1f" % (e.time_range.start - last)
        lines.append("    %7.1f us  %s%s" % (e.time_range.end - e.time_range.start, e.name[:80], gap))
        last = e.time_range.end
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="rms,add_rms,add_ln")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--M", type=int, default=4096)
    ap.add_argument("--ns", default="1024,4096")
    a = ap.parse_args()
    args = argparse.Namespace(warmup=25, rep=100)
    dtype = bl.DTYPES[a.dtype]
    print("torch", torch.__version__, torch.cuda.get_device_name())
    for op in a.ops.split(","):
        for N in [int(n) for n in a.ns.split(",")]:
            c = bn.make_case(op, a.M, N, dtype, dtype)
            for p in ("lntune", "torch"):
                restore = bn.enter_route(p)
                try:
                    f = bn.make_fwd(p, c)
                    outs = f()
                    gs = bn.grads(c, outs)
                    want = bn.leaves(c)

                    def g():
                        return torch.autograd.grad(outs, want, gs, retain_graph=True)

                    ms = [bl.bench_ms(g, args) for _ in range(3)]
                    h = bl.host_us_batch(g)
                    print("%s %s N=%d %s: do_bench %s us; host %.1f us/call" % (
                        op, a.dtype, N, p, " / ".join("%.1f" % (m * 1e3) for m in ms), h))
                    print(timeline(g))
                finally:
                    restore()
                sys.stdout.flush()


if __name__ == "__main__":
    main()
