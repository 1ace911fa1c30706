#!/usr/bin/env python3
"""RMSNorm and fused residual add + norm benchmark: lntune.torch against
PyTorch in one process, with the device-to-device copy measured in the same
run (helpers shared with bench_layernorm.py).

    LNTUNE_LIBRARY=build/lib/liblntune.so PYTHONPATH=python python3 bench/bench_norms.py
    ... --quick                          # a small subset (a minute or two)
    ... --ops add_rms --residual-dtype fp32 --dtypes bf16   # bf16 activations, fp32 residual stream

Ops (--ops, comma-separated; default all):
  rms      lntune.torch.rms_norm               vs torch.nn.functional.rms_norm
  add_rms  lntune.torch.fused_add_rms_norm     vs z = x + residual; F.rms_norm(z)
  add_ln   lntune.torch.fused_add_layer_norm   vs z = x + residual; F.layer_norm(z)
Providers (--providers; default lntune,torch):
  lntune      lntune.torch as a user gets it: eager calls through the C++ extension's entries where it is
              built (csrc/torch_ext.cpp), else through the lntune:: ops
  lntune-ops  the same with the variants' eager calls through the lntune:: ops (what
              LNTUNE_TORCH_EXT_VARIANTS=0 gives): the route the C++ entries replace, for the host section
  torch       PyTorch
Sections (--section; default all):
  bandwidth  x of >= --bandwidth-mib MiB, N in {256 ... 262144}: GB/s, % of copy, ratio to PyTorch
  grid       M = 4096, N = 512*i (i = 2..31), 32768, 65536
  host       M in {1, 32, 4096}, N in {1024, 4096}, bf16: host time per forward (inference),
             per backward and per training step, and end-to-end time per step

Bytes (issue 11): what must move. Forward: read x (and residual), write y (and
z). Backward: read the saved input (x, or z for the fused forms), dy (and dz),
write dx (one dx: the fused backward's gradient of x and residual alike when
their dtypes agree; with another residual dtype lntune writes dz in fp32 and
casts it, which is timed but not credited). Every provider in a row is credited
the same bytes, so GB/s ratios are time ratios. Times: timing.do_bench medians
(triton.testing.do_bench's method; the L2 flushed before each repetition by a
256 MB read, --l2-flush zero for do_bench's zeroing); backward: torch.autograd.grad of
one forward result's outputs (retain_graph) with respect to every input, so
that no provider pays AccumulateGrad's copy of a gradient shared by x and the
residual (see run_case).
Paired ratios (--paired R; default 15 rounds in the grid section): where both
backwards are host-bound (M = 4096 below a few thousand columns) the two
do_bench windows above differ by up to 2x with the machine's drift, so each
round also times a batch of each provider in turn (order alternating, same
method) and the cell's "paired" ratio is the median over rounds of PyTorch's
time / lntune's, with a ~95% interval; the lowest-ratio summary uses it.
Before timing, each provider's outputs and gradients are compared with
PyTorch on float32 copies; lntune outside the tolerance is "wrong", not timed
(PyTorch itself is timed regardless, with a note when its error exceeds it).

Writes norms.json and norms.md to --out (default bench/results/).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import bench_layernorm as bl  # noqa: E402  (puts python/ on sys.path; imports torch, triton, lntune.torch)
import timing  # noqa: E402  (the L2 flush and do_bench)
import bench_host_step as bhs  # noqa: E402  (median_ci)
from bench_layernorm import F, lt, torch  # noqa: E402

DEVICE = "cuda"
OPS = ["rms", "add_rms", "add_ln"]
PROVIDERS = ["lntune", "torch"]
ALL_PROVIDERS = PROVIDERS + ["lntune-ops"]
LABELS = {"rms": "RMSNorm", "add_rms": "add + RMSNorm", "add_ln": "add + LayerNorm"}
HOST_MS = [1, 32, 4096]
HOST_NS = [1024, 4096]
QUICK_HOST = [(1, 1024), (4096, 4096)]
MODES = ("fwd", "bwd")
PAIRED_ROUNDS = 15  # grid section default (--paired)
PAIRED_CALLS = 10


def enter_route(provider):
    """Puts lntune in the provider's mode (tuned; for lntune-ops the variants'
    eager calls through the ops); returns the function that undoes it."""
    bl.select("lntune" if provider == "lntune-ops" else provider)
    if provider != "lntune-ops":
        return lambda: None
    saved = lt._variant_ext
    lt._variant_ext = None

    def restore():
        lt._variant_ext = saved

    return restore


def make_case(op, M, N, dtype, r_dtype):
    g = torch.Generator(device=DEVICE).manual_seed(0)
    x = (torch.randn((M, N), device=DEVICE, generator=g) * 0.5 + 0.3).to(dtype).requires_grad_()
    r = (torch.randn((M, N), device=DEVICE, generator=g) - 1.0).to(r_dtype).requires_grad_() if op != "rms" \
        else None
    w = (torch.rand((N,), device=DEVICE, generator=g) + 0.5).to(dtype).requires_grad_()
    b = torch.randn((N,), device=DEVICE, generator=g).to(dtype).requires_grad_() if op == "add_ln" else None
    dy = (torch.randn((M, N), device=DEVICE, generator=g) * 0.1).to(dtype)
    dz = (torch.randn((M, N), device=DEVICE, generator=g) * 0.1).to(r_dtype) if op != "rms" else None
    return dict(op=op, x=x, r=r, w=w, b=b, dy=dy, dz=dz, N=N, eps=1e-5)


def make_fwd(provider, c, x=None):
    """A no-argument callable returning the provider's outputs (a tuple)."""
    op, N, w, b, eps = c["op"], c["N"], c["w"], c["b"], c["eps"]
    x = c["x"] if x is None else x
    r = c["r"]
    if provider in ("lntune", "lntune-ops"):
        if op == "rms":
            return lambda: (lt.rms_norm(x, (N,), w, eps),)
        if op == "add_rms":
            return lambda: lt.fused_add_rms_norm(x, r, (N,), w, eps)
        return lambda: lt.fused_add_layer_norm(x, r, (N,), w, b, eps)
    if provider == "torch":
        if op == "rms":
            return lambda: (F.rms_norm(x, (N,), w, eps),)

        def add_norm():
            z = x + r  # promoted: an fp32 residual makes z fp32, as lntune's
            # PyTorch's norms want the parameters in z's dtype (a cast of N elements).
            wz = w if w.dtype == z.dtype else w.to(z.dtype)
            if op == "add_rms":
                y = F.rms_norm(z, (N,), wz, eps)
            else:
                y = F.layer_norm(z, (N,), wz, b if b.dtype == z.dtype else b.to(z.dtype), eps)
            return y.to(x.dtype), z
        return add_norm
    raise ValueError(provider)


def reference(c):
    """PyTorch on float32 copies: outputs and gradients."""
    leaves = {k: (None if c[k] is None else c[k].detach().float().requires_grad_()) for k in ("x", "r", "w", "b")}
    x, r, w, b = (leaves[k] for k in ("x", "r", "w", "b"))
    N, eps = c["N"], c["eps"]
    if c["op"] == "rms":
        outs = (F.rms_norm(x, (N,), w, eps),)
    else:
        z = x + r
        outs = (F.rms_norm(z, (N,), w, eps) if c["op"] == "add_rms" else F.layer_norm(z, (N,), w, b, eps), z)
    torch.autograd.backward(outs, grads(c, outs))
    return [o.detach() for o in outs], {k: (None if v is None else v.grad) for k, v in leaves.items()}


def grads(c, outs):
    g = [c["dy"].to(outs[0].dtype)]
    if len(outs) > 1:
        g.append(c["dz"].to(outs[1].dtype))
    return g


def leaves(c):
    return [c[k] for k in ("x", "r", "w", "b") if c[k] is not None]


def nbytes(c):
    M, N = c["x"].shape
    s = c["x"].element_size()
    if c["op"] == "rms":
        return {"fwd": 2 * M * N * s, "bwd": 3 * M * N * s}
    sr = c["r"].element_size()
    return {"fwd": M * N * (2 * s + 2 * sr), "bwd": M * N * (2 * sr + s + s)}  # z, dz; dy, dx


def run_case(args, results, section, op, dname, M, N):
    dtype = bl.DTYPES[dname]
    r_dtype = dtype if args.residual_dtype == "same" else bl.DTYPES[args.residual_dtype]
    c = make_case(op, M, N, dtype, r_dtype)
    ref_outs, ref_grads = reference(c)
    tol = max(bl.TOL[dname], bl.TOL[args.residual_dtype] if args.residual_dtype != "same" else 0)
    nb = nbytes(c)
    line = []
    timers = {}  # provider -> {mode: the timed callable}, for the paired rounds below
    for p in args.providers:
        recs = {m: {"section": section, "op": op, "dtype": dname, "residual_dtype": "-" if op == "rms" else str(r_dtype).split(".")[-1],
                    "M": M, "N": N, "mode": m, "provider": p, "status": "error", "ms": None, "gbps": None,
                    "pct_copy": None, "err": None, "bytes": nb[m], "note": ""} for m in MODES}
        outs = None
        restore = enter_route(p)
        try:
            fwd = make_fwd(p, c)
            timers[p] = {"fwd": fwd}
            outs = fwd()
            e = max(bl.nerr(o, ro) for o, ro in zip(outs, ref_outs))
            recs["fwd"]["err"] = e
            ok = {"fwd": e <= tol}
            for t in leaves(c):
                t.grad = None
            torch.autograd.backward(outs, grads(c, outs), retain_graph=True)
            eb = max(bl.nerr(c[k].grad, ref_grads[k]) for k in ("x", "r", "w", "b") if c[k] is not None)
            recs["bwd"]["err"] = eb
            ok["bwd"] = eb <= tol
            for m in MODES:
                if not ok[m]:
                    recs[m]["note"] = "err %.2e > %.0e" % (recs[m]["err"], tol)
                    if p == "torch":  # the baseline's own rounding: timed all the same, the note says so
                        ok[m] = True
                recs[m]["status"] = "ok" if ok[m] else "wrong"
            gs = grads(c, outs)
            for m in MODES:
                if not ok[m]:
                    continue
                if m == "fwd":
                    ms = bl.bench_ms(fwd, args)
                else:
                    # torch.autograd.grad, not backward(): the gradients are
                    # returned, not accumulated into .grad. With x and the
                    # residual both leaves, one gradient tensor serves both
                    # (z = x + residual), and AccumulateGrad copies a
                    # gradient it cannot take over: a full extra read and
                    # write of M x N that a network (whose x and residual come
                    # from other ops) never pays. Every provider is timed so.
                    o, want = outs, leaves(c)
                    timers[p]["bwd"] = lambda o=o, want=want, gs=gs: torch.autograd.grad(o, want, gs,
                                                                                      retain_graph=True)
                    ms = bl.bench_ms(timers[p]["bwd"], args)
                recs[m]["ms"] = ms
                recs[m]["gbps"] = nb[m] / ms * 1e-6
                recs[m]["pct_copy"] = 100.0 * recs[m]["gbps"] / bl.copy_gbps_for(args, results, nb[m])
        except Exception as ex:  # noqa: BLE001 - recorded, the run goes on
            for r in recs.values():
                r["status"], r["note"] = "error", bl._short(ex)
            bl.log("  %s failed:\n%s" % (p, traceback.format_exc()))
            timers.pop(p, None)
        finally:
            restore()
            for t in leaves(c):
                t.grad = None
            outs = None
        for m in MODES:
            if recs[m]["status"] != "ok" and p in timers:
                timers[p].pop(m, None)
            results["records"].append(recs[m])
            r = recs[m]
            line.append("%s %s %s" % (p, m, "%.0f GB/s (%.0f%%)" % (r["gbps"], r["pct_copy"]) if r["status"] == "ok"
                                      else r["status"]))
    rounds = args.paired if args.paired is not None else (PAIRED_ROUNDS if section == "grid" else 0)
    if rounds and "torch" in timers:
        for p in [q for q in timers if q != "torch"]:
            for m in MODES:
                if m not in timers[p] or m not in timers["torch"]:
                    continue
                q, lo, hi = paired_ratio({p: timers[p][m], "torch": timers["torch"][m]}, p, rounds, args.flush)
                rec = next(r for r in results["records"][::-1] if r["provider"] == p and r["mode"] == m
                           and r["section"] == section and r["M"] == M and r["N"] == N and r["op"] == op
                           and r["dtype"] == dname)
                rec.update({"paired": q, "paired_lo": lo, "paired_hi": hi, "paired_rounds": rounds})
                line.append("%s %s paired x%.2f (CI %.2f-%.2f)" % (p, m, q, lo, hi))
    timers.clear()
    bl.log("%s %s %s M=%d N=%d: %s" % (section, op, dname, M, N, "; ".join(line)))


def batch_ms(fn, route, calls, flush):
    """timing.flushed_ms of fn in provider `route`'s mode."""
    restore = enter_route(route)
    try:
        return timing.flushed_ms(fn, calls, flush)
    finally:
        restore()


def paired_ratio(fns, p, rounds, flush, calls=PAIRED_CALLS):
    """PyTorch's time / provider p's, paired: each round times a batch of
    each in turn (the order alternating), the ratio is the median over rounds
    of the ratio within a round, with a distribution-free ~95% interval.
    Where both are host-bound (the backward at M = 4096 below a few thousand
    columns: autograd's engine and node cost more than the kernels), two
    separate do_bench windows differ by up to 2x with the machine's drift;
    a round's two batches see the same machine."""
    for k in fns:  # warm-up
        batch_ms(fns[k], k, 3, flush)
    t = {k: [] for k in fns}
    for r in range(rounds):
        for k in ((p, "torch") if r % 2 == 0 else ("torch", p)):
            t[k].append(batch_ms(fns[k], k, calls, flush))
    return bhs.median_ci([a / b for a, b in zip(t["torch"], t[p])])


def section_bandwidth(args, results):
    for op in args.ops:
        for dname in args.dtypes:
            size = torch.empty((), dtype=bl.DTYPES[dname]).element_size()
            for N in (args.bandwidth_ns or (bl.QUICK_BW_NS if args.quick else bl.BW_NS)):
                M = max(1, -(-(args.bandwidth_mib << 20) // (N * size)))
                run_case(args, results, "bandwidth", op, dname, M, N)
                torch.cuda.empty_cache()


def section_grid(args, results):
    for op in args.ops:
        for dname in args.dtypes:
            for N in (bl.QUICK_GRID_NS if args.quick else bl.GRID_NS):
                run_case(args, results, "grid", op, dname, bl.GRID_M, N)
            torch.cuda.empty_cache()


def section_host(args, results):
    dname = "bf16"
    dtype = bl.DTYPES[dname]
    r_dtype = dtype if args.residual_dtype == "same" else bl.DTYPES[args.residual_dtype]
    cases = QUICK_HOST if args.quick else [(m, n) for m in HOST_MS for n in HOST_NS]
    for op in args.ops:
        for M, N in cases:
            c = make_case(op, M, N, dtype, r_dtype)
            x0 = c["x"].detach()
            line = []
            for p in args.providers:
                try:
                    rec = host_case(c, p, x0)
                except Exception as ex:  # noqa: BLE001 - recorded, the run goes on
                    bl.log("  %s failed:\n%s" % (p, traceback.format_exc()))
                    line.append("%s error (%s)" % (p, bl._short(ex)))
                    continue
                rec.update({"section": "host", "op": op, "dtype": dname, "M": M, "N": N, "provider": p})
                results["records"].append(rec)
                line.append("%s infer %.1f, bwd %.1f, step %.1f, e2e %.1f us" % (
                    p, rec["fwd_infer_us"], rec["bwd_us"], rec["step_us"], rec["step_e2e_us"]))
            bl.log("host %s %s M=%d N=%d: %s" % (op, dname, M, N, "; ".join(line)))


def host_case(c, p, x0):
    """Host time per call of provider p: forward without grad, backward, training step; end-to-end step."""
    restore = enter_route(p)
    try:
        return _host_case(c, p, x0)
    finally:
        restore()


def _host_case(c, p, x0):
    rec = {}
    with torch.no_grad():
        rec["fwd_infer_us"] = bl.host_us_batch(make_fwd(p, c, x0))
    f = make_fwd(p, c)
    outs = f()
    gs = grads(c, outs)

    def bwd():
        for t in leaves(c):
            t.grad = None
        torch.autograd.backward(outs, gs, retain_graph=True)

    rec["bwd_us"] = bl.host_us_batch(bwd)
    del outs

    def step():
        for t in leaves(c):
            t.grad = None
        o = f()
        torch.autograd.backward(o, grads(c, o))

    rec["step_us"] = bl.host_us_batch(step)
    rec["step_e2e_us"] = bl.e2e_us(step)
    return rec


def write_markdown(results, path):
    env = results["env"]
    L = ["# RMSNorm and fused add + norm: lntune vs PyTorch", "",
         "%s (%d SMs), driver %s, torch %s, lntune %s; %s. Copy: %.0f GB/s (same process)." % (
             env["gpu"], env["sm_count"], env["driver"], env["torch"], env["lntune"], env["date"],
             results["copy_gbps"]),
         "", "Command: `%s`" % env["command"], ""]
    idx = {}
    for r in results["records"]:
        if r["section"] in ("bandwidth", "grid"):
            idx.setdefault((r["section"], r["op"], r["dtype"], r["residual_dtype"], r["M"], r["N"], r["mode"]),
                           {})[r["provider"]] = r
    for section in ("bandwidth", "grid"):
        keys = [k for k in idx if k[0] == section]
        if not keys:
            continue
        L += ["## %s" % section, "",
              "| op | dtype | residual | M | N | dir | lntune GB/s | % copy | PyTorch GB/s | % copy | lntune / PyTorch "
              "| paired (95% CI) |",
              "|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
        worst = {}
        for k in keys:
            a, t = idx[k].get("lntune"), idx[k].get("torch")

            def cell(r):
                if r is None:
                    return "", ""
                if r["status"] != "ok":
                    return r["status"], ""
                return "%.0f" % r["gbps"], "%.1f" % r["pct_copy"]
            ratio, paired = "", ""
            if a and t and a["status"] == t["status"] == "ok":
                q = t["ms"] / a["ms"]
                ratio = "%.2f×" % q
                if a.get("paired") is not None:
                    q = a["paired"]
                    paired = "%.2f× (%.2f-%.2f)" % (q, a["paired_lo"], a["paired_hi"])
                wk = (k[1], k[2], k[6])
                worst[wk] = min(worst.get(wk, q), q)
            L.append("| %s | %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                (LABELS[k[1]], k[2], k[3], k[4], k[5], k[6]) + cell(a) + cell(t) + (ratio, paired)))
        L += ["", "Lowest lntune / PyTorch ratio per op, dtype and direction (the paired one where measured; "
              "target: >= 1.0× everywhere):", ""]
        L += ["- %s %s %s: %.2f×" % (LABELS[o], d, m, v) for (o, d, m), v in sorted(worst.items())]
        L.append("")
    host = [r for r in results["records"] if r["section"] == "host"]
    if host:
        L += ["## host (bf16, µs per call)", "",
              "| op | M | N | provider | forward (inference) | backward | step | step end-to-end |",
              "|---|---:|---:|---|---:|---:|---:|---:|"]
        for r in host:
            L.append("| %s | %d | %d | %s | %.1f | %.1f | %.1f | %.1f |" % (
                LABELS[r["op"]], r["M"], r["N"], r["provider"], r["fwd_infer_us"], r["bwd_us"], r["step_us"],
                r["step_e2e_us"]))
        L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default=",".join(OPS), help="comma-separated subset of " + ",".join(OPS))
    ap.add_argument("--section", default="bandwidth,grid,host", help="comma-separated: bandwidth, grid, host")
    ap.add_argument("--dtypes", default=None, help="fp16, bf16, fp32 (default: all; --quick: bf16)")
    ap.add_argument("--residual-dtype", default="same", choices=["same", "fp32", "fp16", "bf16"],
                    help="the fused forms' residual dtype (default: x's)")
    ap.add_argument("--providers", default=",".join(PROVIDERS))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--warmup", type=float, default=None)
    ap.add_argument("--rep", type=float, default=None)
    ap.add_argument("--bandwidth-mib", type=int, default=512)
    ap.add_argument("--bandwidth-ns", type=bl.positive_ns, default=None,
                    help="comma-separated N of the bandwidth section (default: bench_layernorm.py's)")
    ap.add_argument("--copy-mib", type=bl.copy_mib_arg, default=1024,
                    help="size of the copy baseline in MiB (default 1024), or 'match': each record against a copy "
                         "moving its own bytes")
    ap.add_argument("--l2-flush", choices=timing.FLUSH_MODES, default="read",
                    help="the L2 flush before each timed call: read (a 256 MB read: clean lines; default) or zero "
                         "(triton.testing.do_bench's: dirty lines written back on the timed call's time)")
    ap.add_argument("--paired", type=int, default=None,
                    help="rounds of the paired ratio to PyTorch (0: none; default %d in the grid section, 0 in "
                         "the bandwidth section)" % PAIRED_ROUNDS)
    args = ap.parse_args(argv)
    args.ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    args.sections = [s.strip() for s in args.section.split(",") if s.strip()]
    args.providers = [p.strip() for p in args.providers.split(",") if p.strip()]
    args.dtypes = [d.strip() for d in args.dtypes.split(",")] if args.dtypes else (
        ["bf16"] if args.quick else ["fp16", "bf16", "fp32"])
    for what, got, allowed in (("op", args.ops, OPS), ("section", args.sections, ("bandwidth", "grid", "host")),
                               ("provider", args.providers, ALL_PROVIDERS), ("dtype", args.dtypes, list(bl.DTYPES))):
        bad = [g for g in got if g not in allowed]
        if bad:
            ap.error("unknown %s(s): %s (choose from %s)" % (what, ", ".join(bad), ", ".join(allowed)))
    if args.paired is not None and args.paired < 0:
        ap.error("--paired must be >= 0, got %d" % args.paired)
    args.warmup = args.warmup if args.warmup is not None else (5.0 if args.quick else 10.0)
    args.rep = args.rep if args.rep is not None else (20.0 if args.quick else 40.0)
    return args


def main(argv=None):
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_norms: no CUDA device visible to PyTorch; nothing to measure", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    results = {"args": {k: v for k, v in vars(args).items()}, "env": bl.environment(args), "records": []}
    bl.log("%s; torch %s; lntune %s (%s)" % (results["env"]["gpu"], torch.__version__, results["env"]["lntune"],
                                             results["env"]["lntune_library"]))
    args.flush = timing.L2Flush(args.l2_flush)
    bl.measure_copy(args, results)
    for s, fn in (("bandwidth", section_bandwidth), ("grid", section_grid), ("host", section_host)):
        if s in args.sections:
            fn(args, results)
            with open(os.path.join(args.out, "norms.json"), "w") as f:
                json.dump(results, f, indent=1, default=str)
            write_markdown(results, os.path.join(args.out, "norms.md"))
    bl.log("wrote %s (norms.json, norms.md)" % args.out)
    with open(os.path.join(args.out, "norms.md")) as f:
        print(f.read(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
