#!/usr/bin/env python3
"""LayerNorm benchmark: lntune (tuned and default heuristic), PyTorch and the
Triton tutorial's kernels, in one process, with the device-to-device copy
bandwidth measured in the same run.

    LNTUNE_LIBRARY=build/lib/liblntune.so PYTHONPATH=python python3 bench/bench_layernorm.py
    ... --quick                       # a small subset (about a minute)
    ... --section grid --dtypes fp16  # one section, one dtype

Sections (--section, comma-separated; default all):
  bandwidth         x of >= 512 MiB, N in {256 ... 262144}: GB/s and % of copy
  grid              the tutorial's grid: M = 4096, N = 512*i (i = 2..31), 32768, 65536
  small_m           M in {1, 8, 64}, N in {4096, 8192, 16384}, bf16 forward:
                    device time (do_bench) and host time (perf_counter) per call
  host              M in {1, 32, 4096, 16384}, N in {1024, 2048, 4096, 8192}, bf16,
                    lntune.torch vs PyTorch: host time per call (forward for
                    inference, forward with autograd, backward, a whole training
                    step), end-to-end time per training step, and the L2-flushed
                    kernel time of the forward and backward ops
  tuned_vs_default  per key, the gain of lntune's tuned configs over its default
                    heuristic (from the sections above; runs the grid for the two
                    lntune providers alone when neither bandwidth nor grid ran)

Method: every time is the median of timing.do_bench (triton.testing.do_bench's
method), which clears the L2 before every repetition: by reading a 256 MB
buffer (--l2-flush read, the default, as the tuner does: the L2 then holds
clean lines), or by zeroing it (--l2-flush zero, do_bench's own: the L2's
size of dirty lines is written back on the timed call's time, a fixed cost
that weighs more on a call moving fewer bytes than the copy). Backward
is timed as in the tutorial: y.backward(dy, retain_graph=True) on one forward
result, with x/weight/bias grads set to None between repetitions. Before a
provider is timed its outputs (y; dx, dW, dB) are compared with PyTorch's
(F.layer_norm on float32 copies of the inputs); a provider outside the
tolerance is reported "wrong" and not timed; one that does not support the
shape (the tutorial's 64 KB row limit) is "n/a".

Bytes: forward 2*M*N*size (read x, write y); backward 3*M*N*size (read x and
dy, write dx), plus, in the bandwidth section, the fp32 partial dW/dB buffers
of lntune's tuned plan (lntune_backward_workspace_size, counted once). Every
provider in a row is credited the same bytes, so GB/s ratios are time ratios.
Copy: dst.copy_(src) of --copy-mib MiB, 2 * size bytes moved; with --copy-mib match,
each record against a copy moving the same bytes as it (timed once a size).

Writes results.json, results.md and PNG plots to --out (default bench/results/).
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
for _p in (os.path.join(REPO, "python"), HERE):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import triton  # noqa: E402
import triton.testing  # noqa: E402

import lntune  # noqa: E402
import lntune.torch as lt  # noqa: E402
from lntune import _ffi  # noqa: E402

import timing  # noqa: E402
import triton_layernorm as tln  # noqa: E402

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
PROVIDERS = ["lntune", "lntune-default", "torch", "triton"]
LABELS = {
    "lntune": "lntune (tuned)",
    "lntune-default": "lntune (default heuristic)",
    "torch": "PyTorch",
    "triton": "Triton tutorial",
}
STYLES = {"lntune": ("tab:red", "-"), "lntune-default": ("tab:red", "--"), "torch": ("tab:green", "-"),
          "triton": ("tab:blue", "-")}
# Largest |out - ref| / max|ref| accepted, per dtype (ref: PyTorch on float32
# copies). About ten units in the last place of the output's largest value.
TOL = {"fp32": 1e-4, "fp16": 5e-3, "bf16": 2e-2}

BW_NS = [256, 512, 1024, 2048, 4096, 8192, 16384, 65536, 262144]


def positive_ns(text):
    """--bandwidth-ns: comma-separated positive integers."""
    try:
        ns = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"N must be comma-separated integers, got {text!r}") from None
    if not ns or any(n < 1 for n in ns):
        raise argparse.ArgumentTypeError(f"every N must be at least 1, got {text!r}")
    return ns
GRID_M = 4096
GRID_NS = [512 * i for i in range(2, 32)] + [32768, 65536]
SMALL_MS = [1, 8, 64]
SMALL_NS = [4096, 8192, 16384]
SMALL_DTYPE = "bf16"
HOST_MS = [1, 32, 4096, 16384]
HOST_NS = [1024, 2048, 4096, 8192]
HOST_DTYPE = "bf16"
QUICK_HOST = [(1, 1024), (32, 4096), (4096, 1024), (4096, 8192), (16384, 8192)]

QUICK_BW_NS = [1024, 16384, 262144]
QUICK_GRID_NS = [1024, 4096, 8192, 16384, 32768]
QUICK_SMALL = [(1, 4096), (64, 8192)]

T0 = time.perf_counter()


def log(msg: str) -> None:
    print("[%7.1fs] %s" % (time.perf_counter() - T0, msg), flush=True)


class NotApplicable(Exception):
    """The provider does not support this case (recorded as "n/a")."""


# ------------------------------------------------------------------ environment


def _cuda_driver_version() -> str:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0:
            return "%d.%d" % (v.value // 1000, (v.value % 1000) // 10)
    except OSError:
        pass
    return "unknown"


def _nvidia_smi() -> dict:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem",
             "--format=csv,noheader", "-i", str(torch.cuda.current_device())],
            capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
        f = [s.strip() for s in out[0].split(",")]
        return {"name": f[0], "driver": f[1], "memory": f[2], "max_sm_clock": f[3], "max_mem_clock": f[4]}
    except Exception:  # noqa: BLE001 - informative only
        return {}


def environment(args) -> dict:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    smi = _nvidia_smi()
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "gpu": props.name,
        "sm_count": props.multi_processor_count,
        "gpu_memory_gib": round(props.total_memory / 2**30, 1),
        "compute_capability": "%d.%d" % (props.major, props.minor),
        "driver": smi.get("driver", "unknown"),
        "cuda_driver_api": _cuda_driver_version(),
        "nvidia_smi": smi,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "lntune": lntune.version(),
        "lntune_library": _ffi.library_path(),
        "lntune_set_tuned": _ffi.has_set_tuned(),
        "lntune_env": {k: v for k, v in os.environ.items() if k.startswith("LNTUNE_")},
        "warmup_ms": args.warmup,
        "rep_ms": args.rep,
        "l2_flush": getattr(args, "l2_flush", "zero"),
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
    }


# ------------------------------------------------------------------ providers


def select(provider: str) -> None:
    """Puts lntune in the provider's mode (tuned / default heuristic)."""
    if provider == "lntune":
        if _ffi.has_set_tuned():
            _ffi.set_tuned(True)
    elif provider == "lntune-default":
        if not _ffi.has_set_tuned():
            raise NotApplicable("this liblntune has no lntune_set_tuned")
        _ffi.set_tuned(False)


def make_fwd(provider, x, shape, w, b, eps):
    """A no-argument callable running the provider's forward."""
    if provider in ("lntune", "lntune-default"):
        return lambda: lt.layer_norm(x, shape, w, b, eps)
    if provider == "torch":
        return lambda: F.layer_norm(x, shape, w, b, eps)
    if provider == "triton":
        if shape[-1] > tln.max_n(x.dtype):
            raise NotApplicable("N > 64 KB per row (the tutorial's limit)")
        return lambda: tln.layer_norm(x, shape, w, b, eps)
    raise ValueError("unknown provider %r" % provider)


# How the tables describe each L2 flush (results written before session 48
# have no l2_flush: do_bench's zeroing).
FLUSH_TEXT = {
    "read": "a 256 MB read: the L2 left holding clean lines",
    "zero": "a 256 MB buffer zeroed, do_bench's own: the L2's dirty lines are written back on the timed call's time",
}


def bench_ms(fn, args, grad_to_none=None) -> float:
    """Median ms of fn() (timing.do_bench: triton.testing.do_bench's method
    with args.flush, the L2 flush, before each repetition)."""
    return float(timing.do_bench(fn, args.warmup, args.rep, args.flush, grad_to_none=grad_to_none))


def make_inputs(M, N, dtype, requires_grad=True):
    """The tutorial's data: x ~ -2.3 + 0.5 N(0,1), w, b ~ U[0,1), dy ~ 0.1 N(0,1)."""
    weight = torch.rand((N,), dtype=dtype, device="cuda", requires_grad=requires_grad)
    bias = torch.rand((N,), dtype=dtype, device="cuda", requires_grad=requires_grad)
    x = torch.randn((M, N), dtype=dtype, device="cuda").mul_(0.5).add_(-2.3)
    dy = torch.randn((M, N), dtype=dtype, device="cuda").mul_(0.1)
    x.requires_grad_(requires_grad)
    return x, weight, bias, dy


def reference(x, shape, w, b, eps, dy):
    """PyTorch on float32 copies: y, and (if dy is given) dx, dW, dB."""
    xf = x.detach().float().requires_grad_(dy is not None)
    wf = w.detach().float().requires_grad_(dy is not None)
    bf = b.detach().float().requires_grad_(dy is not None)
    with torch.enable_grad():
        yf = F.layer_norm(xf, shape, wf, bf, eps)
        if dy is None:
            return {"y": yf.detach()}
        yf.backward(dy.float())
    out = {"y": yf.detach(), "dx": xf.grad, "dw": wf.grad, "db": bf.grad}
    del xf, wf, bf, yf
    return out


def nerr(a, ref) -> float:
    """max |a - ref| / max |ref| (NaN if a holds NaN)."""
    d = (a.detach().float() - ref).abs_().max().item()
    s = ref.abs().max().item()
    return d / max(s, 1e-6)


def _short(e: BaseException) -> str:
    s = "%s: %s" % (type(e).__name__, e)
    s = " ".join(s.split())
    return s if len(s) <= 200 else s[:197] + "..."


def lntune_workspace_bytes(x, w, b) -> int:
    """Bytes of lntune's backward workspace (partial dW/dB) in the current mode."""
    M, N = x.shape
    mean = torch.empty((M,), dtype=torch.float32, device=x.device)
    args = _ffi.BackwardArgs(
        x.data_ptr(), x.data_ptr(), w.data_ptr(), mean.data_ptr(), mean.data_ptr(), x.data_ptr(),
        w.data_ptr(), b.data_ptr(), M, N, N, N, N, int(lt.DTYPES[x.dtype]), int(lt.DTYPES[w.dtype]),
        None, 0, torch.cuda.current_stream().cuda_stream)
    return _ffi.backward_workspace_size(args)


# ------------------------------------------------------------------ one case


MODES = ("fwd", "bwd")


def run_case(args, results, section, dname, M, N, providers, extra_bwd_bytes=0):
    """Checks then times every provider on one (dtype, M, N), forward and
    backward; appends records."""
    dtype = DTYPES[dname]
    size = torch.empty((), dtype=dtype).element_size()
    shape = (N,)
    eps = args.eps
    tol = TOL[dname]
    x, w, b, dy = make_inputs(M, N, dtype)
    ref = reference(x, shape, w, b, eps, dy)
    nbytes = {"fwd": 2 * M * N * size, "bwd": 3 * M * N * size + extra_bwd_bytes}
    line = []
    for p in providers:
        recs = {m: {"section": section, "dtype": dname, "M": M, "N": N, "mode": m, "provider": p,
                    "status": "error", "ms": None, "gbps": None, "pct_copy": None, "err": None,
                    "bytes": nbytes[m], "note": ""} for m in MODES}
        y = yy = None
        try:
            select(p)
            fwd = make_fwd(p, x, shape, w, b, eps)
            # --- check against PyTorch
            y = fwd()
            e = nerr(y, ref["y"])
            recs["fwd"]["err"] = e
            ok = {"fwd": e <= tol}
            if not ok["fwd"]:
                recs["fwd"]["note"] = "y err %.2e > %.0e" % (e, tol)
            x.grad = w.grad = b.grad = None
            y.backward(dy, retain_graph=True)
            errs = {"dx": nerr(x.grad, ref["dx"]), "dw": nerr(w.grad, ref["dw"]), "db": nerr(b.grad, ref["db"])}
            x.grad = w.grad = b.grad = None
            recs["bwd"]["err"] = max(errs.values())
            ok["bwd"] = all(v <= tol for v in errs.values())
            if not ok["bwd"]:
                recs["bwd"]["note"] = ", ".join(
                    "%s err %.2e" % (k, v) for k, v in errs.items() if not v <= tol) + " > %.0e" % tol
            for m in MODES:
                recs[m]["status"] = "ok" if ok[m] else "wrong"
            # --- time
            for m in MODES:
                if not ok[m]:
                    continue
                try:
                    if m == "fwd":
                        ms = bench_ms(fwd, args)
                    else:
                        yy = y
                        ms = bench_ms(lambda: yy.backward(dy, retain_graph=True), args, grad_to_none=[x, w, b])
                    recs[m]["ms"] = ms
                    recs[m]["gbps"] = nbytes[m] / ms * 1e-6
                    copy = copy_gbps_for(args, results, nbytes[m])
                    if copy:
                        recs[m]["pct_copy"] = 100.0 * recs[m]["gbps"] / copy
                except Exception as ex:  # noqa: BLE001 - recorded, the run goes on
                    recs[m]["status"], recs[m]["note"] = "error", _short(ex)
                    log("  %s %s failed: %s" % (p, m, traceback.format_exc().strip().splitlines()[-1]))
        except (NotApplicable, tln.TooLargeError) as ex:
            for r in recs.values():
                r["status"], r["note"] = "n/a", str(ex)
        except Exception as ex:  # noqa: BLE001 - recorded, the run goes on
            # Raised while checking: neither direction is timed.
            for r in recs.values():
                r["status"], r["note"], r["ms"], r["gbps"], r["pct_copy"] = "error", _short(ex), None, None, None
            log("  %s failed:\n%s" % (p, traceback.format_exc()))
        finally:
            x.grad = w.grad = b.grad = None
            y = yy = None  # frees the retained graph
        for m in MODES:
            results["records"].append(recs[m])
            r = recs[m]
            if r["status"] == "ok":
                pct = " (%.0f%%)" % r["pct_copy"] if r["pct_copy"] is not None else ""
                line.append("%s %s %.0f GB/s%s" % (p, m, r["gbps"], pct))
            else:
                line.append("%s %s %s" % (p, m, r["status"]))
    log("%s %s M=%d N=%d: %s" % (section, dname, M, N, "; ".join(line)))
    del x, w, b, dy, ref


# ------------------------------------------------------------------ sections


def copy_mib_arg(v):
    """--copy-mib: a size in MiB (> 0), or 'match'."""
    if v == "match":
        return v
    try:
        n = int(v)
    except ValueError:
        n = 0
    if n <= 0:
        raise argparse.ArgumentTypeError("expected a size in MiB greater than 0 or 'match', got %r" % v)
    return n


def time_copy(args, mib):
    """dst.copy_(src) of MIB MiB (uint8): its median ms and GB/s, 2 * size
    bytes moved."""
    nbytes = mib << 20
    src = torch.empty((nbytes,), dtype=torch.uint8, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    ms = bench_ms(lambda: dst.copy_(src), args)
    del src, dst
    torch.cuda.empty_cache()
    return {"bytes": nbytes, "ms": ms, "gbps": 2 * nbytes / ms * 1e-6}


def measure_copy(args, results):
    """The run's copy: --copy-mib MiB, or with 'match' a 1024 MiB copy for
    the headers and plots while each record divides by copy_gbps_for's."""
    mib = 1024 if args.copy_mib == "match" else args.copy_mib
    c = time_copy(args, mib)
    results["copy_gbps"] = c["gbps"]
    c["method"] = "dst.copy_(src), %d MiB uint8, median, L2 flush %s; 2 * size bytes" % (mib, args.l2_flush)
    if args.copy_mib == "match":
        c["method"] += ("; each record's %% of copy against a copy moving its own bytes "
                        "(--copy-mib match: half of them read, half written, to the MiB)")
        results["matched_copies"] = {str(mib): c["gbps"]}  # a record of 2 GiB moved divides by this one
    results["copy"] = c
    log("device-to-device copy: %.0f GB/s (%d MiB, %.3f ms)" % (c["gbps"], mib, c["ms"]))


def copy_gbps_for(args, results, nbytes):
    """The copy a record of NBYTES moved is a percentage of: the run's copy,
    or with --copy-mib match a copy of the same bytes (NBYTES / 2 MiB, to
    the MiB, read and written), timed once a size in this process: a
    forward moving 1 GiB against a 512 MiB copy (which moves 1 GiB), not the
    default 1024 MiB one (2 GiB). On an H200 the larger copies ran up to
    about 1.5% faster (session 53: 4211-4230 GB/s at 512 MiB, 4238-4279 at
    1024), about a run's noise."""
    if args.copy_mib != "match":
        return results.get("copy_gbps")
    mib = max(1, int(round(nbytes / 2 / (1 << 20))))
    copies = results.setdefault("matched_copies", {})
    if str(mib) not in copies:
        copies[str(mib)] = time_copy(args, mib)["gbps"]
        log("copy matched to %d MiB: %.0f GB/s" % (mib, copies[str(mib)]))
    return copies[str(mib)]


def section_bandwidth(args, results, providers):
    ns = args.bandwidth_ns or (QUICK_BW_NS if args.quick else BW_NS)
    for dname in args.dtypes:
        size = torch.empty((), dtype=DTYPES[dname]).element_size()
        for N in ns:
            M = max(1, -(-(args.bandwidth_mib << 20) // (N * size)))  # x of >= --bandwidth-mib MiB
            extra = 0
            if "lntune" in providers:
                try:
                    select("lntune")
                    x = torch.empty((M, N), dtype=DTYPES[dname], device="cuda")
                    w = torch.empty((N,), dtype=DTYPES[dname], device="cuda")
                    extra = lntune_workspace_bytes(x, w, w)
                    del x, w
                except Exception as ex:  # noqa: BLE001
                    log("  workspace size query failed (%s); backward bytes exclude the partial buffers" % _short(ex))
            run_case(args, results, "bandwidth", dname, M, N, providers, extra_bwd_bytes=extra)
            torch.cuda.empty_cache()


def section_grid(args, results, providers, section="grid"):
    ns = QUICK_GRID_NS if args.quick else GRID_NS
    for dname in args.dtypes:
        for N in ns:
            run_case(args, results, section, dname, GRID_M, N, providers)
        torch.cuda.empty_cache()


def host_us(fn, calls: int, repeats: int = 5) -> float:
    """Host time per call: perf_counter around `calls` launches without
    synchronisation (the device is drained before each repeat); median."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        samples.append((t1 - t0) / calls)
    return statistics.median(samples) * 1e6


def section_small_m(args, results, providers):
    dname = SMALL_DTYPE
    dtype = DTYPES[dname]
    cases = QUICK_SMALL if args.quick else [(m, n) for m in SMALL_MS for n in SMALL_NS]
    for M, N in cases:
        # An inference call: no input requires grad.
        x, w, b, _ = make_inputs(M, N, dtype, requires_grad=False)
        shape = (N,)
        ref = reference(x, shape, w, b, args.eps, None)["y"]
        line = []
        for p in providers:
            r = {"section": "small_m", "dtype": dname, "M": M, "N": N, "mode": "fwd", "provider": p,
                 "status": "error", "ms": None, "device_us": None, "host_us": None, "err": None, "note": ""}
            try:
                select(p)
                fn = make_fwd(p, x, shape, w, b, args.eps)
                r["err"] = e = nerr(fn(), ref)
                if not e <= TOL[dname]:
                    r["status"], r["note"] = "wrong", "y err %.2e > %.0e" % (e, TOL[dname])
                else:
                    r["ms"] = bench_ms(fn, args)
                    r["device_us"] = r["ms"] * 1e3
                    r["host_us"] = host_us(fn, args.host_calls)
                    r["status"] = "ok"
            except (NotApplicable, tln.TooLargeError) as ex:
                r["status"], r["note"] = "n/a", str(ex)
            except Exception as ex:  # noqa: BLE001
                r["status"], r["note"] = "error", _short(ex)
                log("  %s failed:\n%s" % (p, traceback.format_exc()))
            results["records"].append(r)
            line.append("%s %s" % (p, "device %.1f us, host %.1f us" % (r["device_us"], r["host_us"])
                                   if r["status"] == "ok" else r["status"]))
        log("small_m %s M=%d N=%d: %s" % (dname, M, N, "; ".join(line)))
        del x, w, b, ref


# ------------------------------------------------------------------ host section


def host_samples(fns, calls: int = 20, rounds: int = 25, before=None) -> dict:
    """Host time per call, us, one sample a round for each callable of fns
    ({name: fn}): perf_counter around `calls` calls, the device drained
    before each batch (so a batch never waits for the device: a few launches
    per call stay far below the launch queue's depth). Each round times one
    batch of each, the order rotating from round to round, so that a drift
    of the machine (clocks, another process, the allocator's state) lands on
    every name alike: timing one provider's batches and then the other's had
    put such a drift into their ratio (the host step's maximum moved between
    shapes from one window to the next, bench/NOTES.md, sessions 49-51).
    before(name), where given, runs before each of that name's batches,
    untimed (bench_host_step.py switches the autograd node so)."""
    names = list(fns)
    for n in names:  # warm-up: first calls, plans, autograd caches
        if before:
            before(n)
        for _ in range(5):
            fns[n]()
    samples = {n: [] for n in names}
    for r in range(rounds):
        for n in names[r % len(names):] + names[:r % len(names)]:
            if before:
                before(n)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(calls):
                fns[n]()
            samples[n].append((time.perf_counter() - t0) / calls * 1e6)
    torch.cuda.synchronize()
    return samples


def host_us_interleaved(fns, calls: int = 20, rounds: int = 25) -> dict:
    """{name: us per call}: host_samples' medians."""
    return {n: statistics.median(v) for n, v in host_samples(fns, calls, rounds).items()}


def host_us_batch(fn, calls: int = 20, repeats: int = 25) -> float:
    """One callable's host time per call, us (host_samples' median)."""
    return host_us_interleaved({"fn": fn}, calls, repeats)["fn"]


def e2e_us(fn, calls: int = 30, repeats: int = 5) -> float:
    """Wall time per call with the device in the loop (synchronised at the end
    of each batch): max(host, device) per step in steady state; median."""
    for _ in range(3):
        fn()
    samples = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / calls)
    return statistics.median(samples) * 1e6


HOST_METRICS = ("fwd_infer", "fwd_grad", "bwd", "step", "step_e2e", "kernel_fwd", "kernel_bwd")


def lntune_kernels(x, w, b, dy, mean, rstd, eps):
    """The forward and backward launches alone, through the C ABI with
    prepared arguments (a few µs of host time, well under the L2 flush, so
    do_bench times the kernels)."""
    M, N = x.shape
    dt = int(lt.DTYPES[x.dtype])
    stream = torch.cuda.current_stream().cuda_stream
    y = torch.empty_like(x)
    dx, dw, db = torch.empty_like(x), torch.empty_like(w), torch.empty_like(b)
    lib = _ffi.library()
    fa = _ffi._RawForwardArgs(x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(), mean.data_ptr(),
                              rstd.data_ptr(), M, N, N, N, dt, dt, eps, stream)
    ba = _ffi._RawBackwardArgs(dy.data_ptr(), x.data_ptr(), w.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
                               dx.data_ptr(), dw.data_ptr(), db.data_ptr(), M, N, N, N, N, dt, dt, None, 0, stream)
    n = ctypes.c_size_t(0)
    _ffi.check(lib.lntune_backward_workspace_size(ctypes.byref(ba), ctypes.byref(n)), "lntune_backward_workspace_size")
    ws = torch.empty((max(n.value, 1),), dtype=torch.uint8, device=x.device)
    ba.workspace, ba.workspace_bytes = ws.data_ptr(), n.value
    keep = (y, dx, dw, db, ws)  # alive as long as the closures

    def fwd():
        _ffi.check(lib.lntune_forward(ctypes.byref(fa)), "lntune_forward")

    def bwd():
        _ffi.check(lib.lntune_backward(ctypes.byref(ba)), "lntune_backward")

    fwd.keep = bwd.keep = keep
    return fwd, bwd


def host_case(args, M, N, dtype):
    """One shape, lntune (tuned) and PyTorch; returns {provider: {metric: us}}."""
    x0 = torch.randn((M, N), dtype=dtype, device="cuda").mul_(0.5).add_(-2.3)
    w = torch.rand((N,), dtype=dtype, device="cuda", requires_grad=True)
    b = torch.rand((N,), dtype=dtype, device="cuda", requires_grad=True)
    x = x0.clone().requires_grad_()
    dy = torch.randn((M, N), dtype=dtype, device="cuda").mul_(0.1)
    shape = (N,)
    eps = args.eps
    mean = torch.zeros((M,), dtype=torch.float32, device="cuda")
    rstd = torch.ones((M,), dtype=torch.float32, device="cuda")
    torch_kernels = (
        lambda: torch.ops.aten.native_layer_norm.default(x0, [N], w, b, eps),
        lambda: torch.ops.aten.native_layer_norm_backward.default(dy, x0, [N], mean, rstd, w, b, [True, True, True]))
    provs = ("lntune", "torch")
    select("lntune")  # tuned; PyTorch's route does not read it
    out = {p: {} for p in provs}
    with torch.no_grad():
        fis = {p: make_fwd(p, x0, shape, w, b, eps) for p in provs}
        for p, us in host_us_interleaved(fis).items():
            out[p]["fwd_infer"] = us
    fs = {p: make_fwd(p, x, shape, w, b, eps) for p in provs}
    for p, us in host_us_interleaved(fs).items():
        out[p]["fwd_grad"] = us
    ys = {p: fs[p]() for p in provs}

    def bwd(p):
        def call():
            x.grad = w.grad = b.grad = None
            ys[p].backward(dy, retain_graph=True)
        return call

    for p, us in host_us_interleaved({p: bwd(p) for p in provs}).items():
        out[p]["bwd"] = us
    del ys

    def step(p):
        def call():
            x.grad = w.grad = b.grad = None
            fs[p]().backward(dy)
        return call

    for p, us in host_us_interleaved({p: step(p) for p in provs}).items():
        out[p]["step"] = us
    for p in provs:
        r = out[p]
        r["step_e2e"] = e2e_us(step(p))
        kf, kb = lntune_kernels(x0, w, b, dy, mean, rstd, eps) if p == "lntune" else torch_kernels
        with torch.no_grad():
            r["kernel_fwd"] = bench_ms(kf, args) * 1e3
            r["kernel_bwd"] = bench_ms(kb, args) * 1e3
        x.grad = w.grad = b.grad = None
    return out


def section_host(args, results):
    dname = HOST_DTYPE
    dtype = DTYPES[dname]
    cases = QUICK_HOST if args.quick else [(m, n) for m in HOST_MS for n in HOST_NS]
    host_case(args, cases[0][0], cases[0][1], dtype)  # warm-up (first calls, compilations): not recorded
    for M, N in cases:
        try:
            by = host_case(args, M, N, dtype)
        except Exception as ex:  # noqa: BLE001 - recorded, the run goes on
            log("  host M=%d N=%d failed:\n%s" % (M, N, traceback.format_exc()))
            results["records"].append({"section": "host", "dtype": dname, "M": M, "N": N, "mode": "step",
                                       "provider": "lntune", "status": "error", "note": _short(ex)})
            continue
        for p, r in by.items():
            rec = {"section": "host", "dtype": dname, "M": M, "N": N, "mode": "step", "provider": p,
                   "status": "ok", "note": ""}
            rec.update({k: r[k] for k in HOST_METRICS})
            results["records"].append(rec)
        lt_, th = by["lntune"], by["torch"]
        log("host %s M=%d N=%d: host fwd %.1f/%.1f us (x%.2f), step %.1f/%.1f us (x%.2f), e2e step %.1f/%.1f us, "
            "kernel fwd %.1f/%.1f us, bwd %.1f/%.1f us (lntune/torch)" % (
                dname, M, N, lt_["fwd_infer"], th["fwd_infer"], lt_["fwd_infer"] / th["fwd_infer"], lt_["step"],
                th["step"], lt_["step"] / th["step"], lt_["step_e2e"], th["step_e2e"], lt_["kernel_fwd"],
                th["kernel_fwd"], lt_["kernel_bwd"], th["kernel_bwd"]))
        torch.cuda.empty_cache()


def host_rows(records):
    rows = []
    for (s, d, M, N, m), by in index(records).items():
        if s != "host":
            continue
        a, t = by.get("lntune"), by.get("torch")
        if a and t and a["status"] == t["status"] == "ok":
            rows.append((d, M, N, a, t))
    return rows


def write_host_markdown(results, L):
    rows = host_rows(results["records"])
    if not rows:
        return
    L.append("## Host time and training step (%s): lntune.torch vs PyTorch, µs" % rows[0][0])
    L.append("")
    L.append("Host time: `perf_counter` around batches of 20 calls, the device drained before each batch, "
             "one batch of lntune's and one of PyTorch's a round (the order alternating), median of 25 "
             "rounds (what the Python process spends per call; the device never holds it back). "
             "Step: `x.grad = w.grad = b.grad = None; f(x).backward(dy)`, autograd included. End-to-end: wall "
             "time per step with the device in the loop (30 steps, then synchronise). Kernel: the forward and "
             "backward launches alone (lntune: the C ABI with prepared arguments; PyTorch: "
             "`aten.native_layer_norm(_backward)`), do_bench median, L2 flushed. Ratio = lntune / PyTorch (targets: host step ≤ 1.1, host forward ≤ 1.0).")
    L.append("")
    L.append("| M | N | host fwd (infer) | host fwd (grad) | host bwd | host step | ratio fwd / step | "
             "e2e step | kernel fwd | kernel bwd |")
    L.append("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for d, M, N, a, t in rows:
        def pair(k):
            return "%.1f / %.1f" % (a[k], t[k])
        L.append("| %d | %d | %s | %s | %s | %s | %.2f / %.2f | %s | %s | %s |" % (
            M, N, pair("fwd_infer"), pair("fwd_grad"), pair("bwd"), pair("step"),
            a["fwd_infer"] / t["fwd_infer"], a["step"] / t["step"], pair("step_e2e"), pair("kernel_fwd"),
            pair("kernel_bwd")))
    fwd = [a["fwd_infer"] / t["fwd_infer"] for _, _, _, a, t in rows]
    step = [a["step"] / t["step"] for _, _, _, a, t in rows]
    L.append("")
    L.append("Host ratio lntune / PyTorch: forward max %.2f (geomean %.2f); step max %.2f (geomean %.2f)." % (
        max(fwd), geomean(fwd), max(step), geomean(step)))
    L.append("")


# ------------------------------------------------------------------ summaries


def geomean(v):
    v = [a for a in v if a is not None and a > 0 and math.isfinite(a)]
    return math.exp(sum(math.log(a) for a in v) / len(v)) if v else None


def index(records):
    """{(section, dtype, M, N, mode): {provider: record}}, ordered by section,
    dtype (as in DTYPES), N, M, mode."""
    out = {}
    for r in records:
        out.setdefault((r["section"], r["dtype"], r["M"], r["N"], r["mode"]), {})[r["provider"]] = r
    order = {d: i for i, d in enumerate(DTYPES)}
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 9), kv[0][3], kv[0][2], kv[0][4])))


def lntune_provider(records):
    """The lntune provider the ratios are taken from: the tuned one where the
    run timed it, else the default heuristic (a run with `--providers
    lntune-default,torch` left the speed-up columns empty until session 56)."""
    have = {r["provider"] for r in records}
    return "lntune" if "lntune" in have or "lntune-default" not in have else "lntune-default"


def speedups(records, section, dtype, mode, base, other):
    """[(N, t_other / t_base)] where both are timed."""
    out = []
    for (s, d, M, N, m), by in index(records).items():
        if (s, d, m) != (section, dtype, mode):
            continue
        a, o = by.get(base), by.get(other)
        if a and o and a["status"] == o["status"] == "ok":
            out.append((N, o["ms"] / a["ms"]))
    return out


def tuned_vs_default(records):
    rows = []
    for (s, d, M, N, m), by in index(records).items():
        t, dflt = by.get("lntune"), by.get("lntune-default")
        if t and dflt and t["status"] == dflt["status"] == "ok":
            rows.append({"section": s, "dtype": d, "M": M, "N": N, "mode": m,
                         "tuned_us": t["ms"] * 1e3, "default_us": dflt["ms"] * 1e3, "gain": dflt["ms"] / t["ms"]})
    return rows


def summarize(results):
    recs = results["records"]
    dtypes = sorted({r["dtype"] for r in recs}, key=list(DTYPES).index)
    base = lntune_provider(recs)
    s = {"bandwidth": {}, "grid": {}, "small_m": [], "tuned_vs_default": {}, "lntune_provider": base}
    for d in dtypes:
        for m in ("fwd", "bwd"):
            pct = [r["pct_copy"] for r in recs if r["section"] == "bandwidth" and r["dtype"] == d
                   and r["mode"] == m and r["provider"] == base and r["status"] == "ok" and r["pct_copy"]]
            if pct:
                s["bandwidth"]["%s %s" % (d, m)] = {"min_pct": min(pct), "geomean_pct": geomean(pct),
                                                    "max_pct": max(pct), "points": len(pct)}
            for other in ("torch", "triton"):
                sp = speedups(recs, "grid", d, m, base, other)
                if sp:
                    s["grid"]["%s %s vs %s" % (d, m, other)] = {
                        "geomean": geomean([v for _, v in sp]), "min": min(v for _, v in sp),
                        "max": max(v for _, v in sp), "points": len(sp)}
    for (sec, d, M, N, m), by in index(recs).items():
        if sec != "small_m":
            continue
        row = {"M": M, "N": N, "dtype": d}
        for p, r in by.items():
            row[p] = {"device_us": r.get("device_us"), "host_us": r.get("host_us"), "status": r["status"]}
        t, l = by.get("torch"), by.get(base)
        if t and l and t["status"] == l["status"] == "ok":
            row["torch_over_lntune_device"] = t["device_us"] / l["device_us"]
            row["torch_over_lntune_host"] = t["host_us"] / l["host_us"]
        s["small_m"].append(row)
    tvd = tuned_vs_default(recs)
    groups = {}
    for r in tvd:
        groups.setdefault("%s %s %s" % (r["section"], r["dtype"], r["mode"]), []).append(r["gain"])
    for k, g in groups.items():
        s["tuned_vs_default"][k] = {"geomean": geomean(g), "min": min(g), "max": max(g), "keys": len(g),
                                    "slower_keys": sum(1 for v in g if v < 0.97)}
    s["tuned_vs_default_rows"] = tvd
    hr = host_rows(recs)
    if hr:
        fwd = [a["fwd_infer"] / t["fwd_infer"] for _, _, _, a, t in hr]
        step = [a["step"] / t["step"] for _, _, _, a, t in hr]
        s["host"] = {"fwd_ratio_max": max(fwd), "fwd_ratio_geomean": geomean(fwd), "step_ratio_max": max(step),
                     "step_ratio_geomean": geomean(step), "shapes": len(hr)}
    results["summary"] = s
    return s


# ------------------------------------------------------------------ output


def _cell(r, pct=False):
    if r is None:
        return ""
    if r["status"] != "ok":
        return r["status"]
    if pct and r.get("pct_copy") is not None:
        return "%.0f (%.0f%%)" % (r["gbps"], r["pct_copy"])
    return "%.0f" % r["gbps"]


def _f(v, spec="%.2f"):
    return "n/a" if v is None else spec % v


def write_markdown(results, path):
    env = results["env"]
    s = results["summary"]
    recs = results["records"]
    idx = index(recs)
    provs = [p for p in PROVIDERS if any(r["provider"] == p for r in recs)]
    L = []
    L.append("# lntune LayerNorm benchmark")
    L.append("")
    L.append("%s (%d SMs, %s GiB, sm_%s), driver %s (CUDA %s); torch %s (CUDA %s), triton %s; lntune %s; %s."
             % (env["gpu"], env["sm_count"], env["gpu_memory_gib"], env["compute_capability"].replace(".", ""),
                env["driver"], env["cuda_driver_api"], env["torch"], env["torch_cuda"], env["triton"],
                env["lntune"], env["date"]))
    L.append("")
    if results.get("copy"):
        L.append("Device-to-device copy in the same run: **%.0f GB/s** (%s)." % (
            results["copy"]["gbps"], results["copy"]["method"]))
    L.append("Times: median of `timing.do_bench` (triton.testing.do_bench's method; warmup %g ms, rep %g ms), "
             "L2 flushed before every repetition (%s); outputs checked against PyTorch (float32 reference) first: `wrong` = outside the "
             "tolerance (%s; max |err| / max |ref|), not timed; `n/a` = shape not supported. "
             "GB/s: forward 2·M·N·size, backward 3·M·N·size (+ lntune's partial dW/dB buffers in the "
             "bandwidth regime), the same bytes for every provider of a row. do_bench measures from an event "
             "recorded after the L2-flush kernel (about 0.1 ms on an H100), so a call whose host time exceeds "
             "that shows host overhead too (small shapes, and backward through autograd)."
             % (env["warmup_ms"], env["rep_ms"], FLUSH_TEXT[env.get("l2_flush", "zero")], ", ".join("%s %.0e" % kv for kv in TOL.items())))
    if not env["lntune_set_tuned"]:
        L.append("")
        L.append("**Note:** this liblntune has no `lntune_set_tuned`: the `lntune` column is the library's "
                 "default mode and `lntune (default heuristic)` was not measured.")
    L.append("")
    # ---- summary
    L.append("## Summary")
    L.append("")
    L.append("| target | value |")
    L.append("|:--|:--|")
    for k, v in s["bandwidth"].items():
        d, m = k.split()
        L.append("| bandwidth regime, %s %s: %s %% of copy (min / geomean / max over %d N) | %.0f%% / %.0f%% / %.0f%% |"
                 % ("forward" if m == "fwd" else "backward", d, LABELS[s["lntune_provider"]], v["points"], v["min_pct"],
                    v["geomean_pct"], v["max_pct"]))
    for k, v in s["grid"].items():
        d, m, _, other = k.split()
        L.append("| tutorial grid, %s %s: %s vs %s, geomean speed-up (min / max, %d N) | **%.2fx** (%.2f / %.2f) |"
                 % ("forward" if m == "fwd" else "backward", d, LABELS[s["lntune_provider"]], LABELS[other], v["points"],
                    v["geomean"], v["min"], v["max"]))
    for row in s["small_m"]:
        if "torch_over_lntune_device" in row:
            L.append("| small M, %s forward M=%d N=%d: PyTorch / lntune time, device / host | %.2fx / %.2fx |"
                     % (row["dtype"], row["M"], row["N"], row["torch_over_lntune_device"], row["torch_over_lntune_host"]))
    for k, v in s["tuned_vs_default"].items():
        L.append("| tuned over default heuristic, %s: geomean gain (min / max; keys slower > 3%%) | %.3fx (%.2f / %.2f; %d of %d) |"
                 % (k, v["geomean"], v["min"], v["max"], v["slower_keys"], v["keys"]))
    if s.get("host"):
        h = s["host"]
        L.append("| host time lntune.torch / PyTorch, %d shapes: forward (max / geomean), training step (max / geomean) "
                 "| %.2f / %.2f, %.2f / %.2f |" % (h["shapes"], h["fwd_ratio_max"], h["fwd_ratio_geomean"],
                                                  h["step_ratio_max"], h["step_ratio_geomean"]))
    L.append("")
    write_host_markdown(results, L)
    # ---- bandwidth
    bw = [k for k in idx if k[0] == "bandwidth"]
    if bw:
        L.append("## Bandwidth regime (x ≥ %d MiB): GB/s (%% of copy)" % results["args"]["bandwidth_mib"])
        L.append("")
        for d in [d for d in DTYPES if any(k[1] == d for k in bw)]:
            for m in ("fwd", "bwd"):
                L.append("### %s %s" % (d, "forward" if m == "fwd" else "backward (dx, dW, dB)"))
                L.append("")
                L.append("| N | M | " + " | ".join(LABELS[p] for p in provs) + " |")
                L.append("|--:|--:|" + "--:|" * len(provs))
                for k in bw:
                    if k[1] == d and k[4] == m:
                        L.append("| %d | %d | " % (k[3], k[2]) + " | ".join(_cell(idx[k].get(p), pct=True) for p in provs) + " |")
                L.append("")
    # ---- grid
    gr = [k for k in idx if k[0] == "grid"]
    if gr:
        L.append("## Tutorial grid (M = %d): GB/s, and lntune tuned's speed-up" % GRID_M)
        L.append("")
        for d in [d for d in DTYPES if any(k[1] == d for k in gr)]:
            for m in ("fwd", "bwd"):
                L.append("### %s %s" % (d, "forward" if m == "fwd" else "backward"))
                L.append("")
                L.append("| N | " + " | ".join(LABELS[p] for p in provs) + " | vs PyTorch | vs Triton |")
                L.append("|--:|" + "--:|" * (len(provs) + 2))
                for k in gr:
                    if k[1] != d or k[4] != m:
                        continue
                    by = idx[k]
                    sp = []
                    for o in ("torch", "triton"):
                        a, b = by.get(s["lntune_provider"]), by.get(o)
                        sp.append("%.2fx" % (b["ms"] / a["ms"]) if a and b and a["status"] == b["status"] == "ok" else "")
                    L.append("| %d | " % k[3] + " | ".join(_cell(by.get(p)) for p in provs) + " | " + " | ".join(sp) + " |")
                g = [s["grid"].get("%s %s vs %s" % (d, m, o)) for o in ("torch", "triton")]
                L.append("| **geomean** | " + " | ".join("" for _ in provs) + " | "
                         + " | ".join("**%.2fx**" % v["geomean"] if v else "" for v in g) + " |")
                L.append("")
    # ---- small M
    if s["small_m"]:
        L.append("## Small M (%s forward, inference call): µs per call, device / host" % SMALL_DTYPE)
        L.append("")
        L.append("| M | N | " + " | ".join(LABELS[p] for p in provs) + " | PyTorch / lntune (device, host) |")
        L.append("|--:|--:|" + "--:|" * (len(provs) + 1))
        for row in s["small_m"]:
            cells = []
            for p in provs:
                c = row.get(p)
                cells.append("" if c is None else ("%.1f / %.1f" % (c["device_us"], c["host_us"])
                                                   if c["status"] == "ok" else c["status"]))
            ratio = ("%.2fx, %.2fx" % (row["torch_over_lntune_device"], row["torch_over_lntune_host"])
                     if "torch_over_lntune_device" in row else "")
            L.append("| %d | %d | " % (row["M"], row["N"]) + " | ".join(cells) + " | " + ratio + " |")
        L.append("")
    # ---- tuned vs default
    rows = s["tuned_vs_default_rows"]
    if rows:
        L.append("## Tuned vs default heuristic (gain = default time / tuned time)")
        L.append("")
        L.append("| section, dtype, direction | geomean | min | max | keys slower > 3% |")
        L.append("|:--|--:|--:|--:|--:|")
        for k, v in s["tuned_vs_default"].items():
            L.append("| %s | %.3fx | %.2fx | %.2fx | %d of %d |" % (k, v["geomean"], v["min"], v["max"],
                                                                  v["slower_keys"], v["keys"]))
        L.append("")
        L.append("<details><summary>Per key (%d)</summary>" % len(rows))
        L.append("")
        L.append("| section | dtype | M | N | direction | tuned µs | default µs | gain |")
        L.append("|:--|:--|--:|--:|:--|--:|--:|--:|")
        for r in rows:
            L.append("| %s | %s | %d | %d | %s | %.1f | %.1f | %.3fx |" % (
                r["section"], r["dtype"], r["M"], r["N"], r["mode"], r["tuned_us"], r["default_us"], r["gain"]))
        L.append("")
        L.append("</details>")
        L.append("")
    # ---- problems
    bad = [r for r in recs if r["status"] in ("wrong", "error")]
    if bad:
        L.append("## Not timed")
        L.append("")
        L.append("| section | dtype | M | N | direction | provider | status | note |")
        L.append("|:--|:--|--:|--:|:--|:--|:--|:--|")
        for r in bad:
            L.append("| %s | %s | %d | %d | %s | %s | %s | %s |" % (
                r["section"], r["dtype"], r["M"], r["N"], r["mode"], r["provider"], r["status"],
                r["note"].replace("|", "/")))
        L.append("")
    plots = results.get("plots", [])
    if plots:
        L.append("## Plots")
        L.append("")
        for p in plots:
            L.append("![%s](%s)" % (os.path.splitext(p)[0], p))
        L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def write_plots(results, out_dir):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as ex:  # noqa: BLE001
        log("no plots: %s" % _short(ex))
        return []
    env = results["env"]
    idx = index(results["records"])
    copy = results.get("copy_gbps")
    files = []

    def panel(ax, section, d, m, logx):
        keys = [k for k in idx if k[0] == section and k[1] == d and k[4] == m]
        for p in PROVIDERS:
            pts = [(k[3], idx[k][p]["gbps"]) for k in keys if p in idx[k] and idx[k][p]["status"] == "ok"]
            if pts:
                c, ls = STYLES[p]
                ax.plot([a for a, _ in pts], [b for _, b in pts], color=c, linestyle=ls, marker=".", label=LABELS[p])
        if copy:
            ax.axhline(copy, color="gray", linestyle=":", label="D2D copy")
        if logx:
            ax.set_xscale("log", base=2)
        ax.set_xlabel("N")
        ax.set_ylabel("GB/s")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.set_title("%s %s" % (d, "forward" if m == "fwd" else "backward"))

    for section, logx in (("grid", False), ("bandwidth", True)):
        ds = [d for d in DTYPES if any(k[0] == section and k[1] == d for k in idx)]
        if not ds:
            continue
        what = "M = %d" % GRID_M if section == "grid" else "x ≥ %d MiB" % results["args"]["bandwidth_mib"]
        # One figure per dtype, forward and backward panels (as in the tutorial) ...
        for d in ds:
            fig, axes = plt.subplots(1, 2, figsize=(13, 4.6))
            for ax, m in zip(axes, ("fwd", "bwd")):
                panel(ax, section, d, m, logx)
            axes[0].legend(fontsize=8)
            fig.suptitle("LayerNorm %s, %s, %s — %s, %s" % (section, d, what, env["gpu"], env["date"]), fontsize=10)
            fig.tight_layout()
            name = "%s_%s.png" % (section, d)
            fig.savefig(os.path.join(out_dir, name), dpi=110)
            plt.close(fig)
            files.append(name)
        # ... and one with every dtype, for the README.
        if len(ds) > 1:
            fig, axes = plt.subplots(len(ds), 2, figsize=(13, 4.0 * len(ds)), squeeze=False)
            for row, d in zip(axes, ds):
                for ax, m in zip(row, ("fwd", "bwd")):
                    panel(ax, section, d, m, logx)
            axes[0][0].legend(fontsize=8)
            fig.suptitle("LayerNorm %s, %s — %s, %s" % (section, what, env["gpu"], env["date"]), fontsize=11)
            fig.tight_layout()
            name = "%s_all.png" % section
            fig.savefig(os.path.join(out_dir, name), dpi=100)
            plt.close(fig)
            files.append(name)
    return files


def save(results, out_dir, plots=True):
    summarize(results)
    if plots:
        results["plots"] = write_plots(results, out_dir)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    write_markdown(results, os.path.join(out_dir, "results.md"))


# ------------------------------------------------------------------ main


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--section", default="bandwidth,grid,small_m,host,tuned_vs_default",
                    help="comma-separated: bandwidth, grid, small_m, host, tuned_vs_default (default: all)")
    ap.add_argument("--dtypes", default=None, help="comma-separated: fp16, bf16, fp32 (default: all; --quick: fp16)")
    ap.add_argument("--providers", default=",".join(PROVIDERS), help="comma-separated subset of " + ",".join(PROVIDERS))
    ap.add_argument("--quick", action="store_true", help="a small subset, shorter repetitions")
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="output folder (default: bench/results)")
    ap.add_argument("--warmup", type=float, default=None, help="do_bench warmup, ms (default 10; --quick 5)")
    ap.add_argument("--rep", type=float, default=None, help="do_bench repetition time, ms (default 40; --quick 20)")
    ap.add_argument("--bandwidth-mib", type=int, default=512, help="size of x in the bandwidth regime (default 512)")
    ap.add_argument("--bandwidth-ns", type=positive_ns, default=None,
                    help="comma-separated N of the bandwidth section (default: " + ",".join(map(str, BW_NS)) + ")")
    ap.add_argument("--copy-mib", type=copy_mib_arg, default=1024,
                    help="size of the copy baseline in MiB (default 1024), or 'match': each record against a copy "
                         "moving its own bytes")
    ap.add_argument("--l2-flush", choices=timing.FLUSH_MODES, default="read",
                    help="the L2 flush before each timed call: read (a 256 MB read: clean lines; default) or zero "
                         "(triton.testing.do_bench's: dirty lines written back on the timed call's time)")
    ap.add_argument("--host-calls", type=int, default=500, help="launches per host-time sample (small_m)")
    ap.add_argument("--eps", type=float, default=1e-5)
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args(argv)
    args.sections = [s.strip() for s in args.section.split(",") if s.strip()]
    bad = [s for s in args.sections if s not in ("bandwidth", "grid", "small_m", "host", "tuned_vs_default")]
    if bad:
        ap.error("unknown section(s): %s" % ", ".join(bad))
    args.dtypes = ([d.strip() for d in args.dtypes.split(",") if d.strip()] if args.dtypes
                   else (["fp16"] if args.quick else list(DTYPES)))
    bad = [d for d in args.dtypes if d not in DTYPES]
    if bad:
        ap.error("unknown dtype(s): %s" % ", ".join(bad))
    args.providers = [p.strip() for p in args.providers.split(",") if p.strip()]
    bad = [p for p in args.providers if p not in PROVIDERS]
    if bad:
        ap.error("unknown provider(s): %s" % ", ".join(bad))
    if args.warmup is None:
        args.warmup = 5.0 if args.quick else 10.0
    if args.rep is None:
        args.rep = 20.0 if args.quick else 40.0
    return args


def main(argv=None):
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_layernorm: no CUDA device visible to PyTorch; nothing to measure", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    if not _ffi.has_set_tuned():
        LABELS["lntune"] = "lntune"  # the library's own mode: tuned or not cannot be chosen
    results = {"args": {k: v for k, v in vars(args).items()}, "env": environment(args), "records": []}
    args.flush = timing.L2Flush(args.l2_flush)
    env = results["env"]
    log("%s, driver %s; torch %s, triton %s; lntune %s (%s)%s" % (
        env["gpu"], env["driver"], env["torch"], env["triton"], env["lntune"], env["lntune_library"],
        "" if env["lntune_set_tuned"] else "; NO lntune_set_tuned: lntune-default is n/a"))
    log("sections %s, dtypes %s, providers %s, warmup %g ms, rep %g ms" % (
        ",".join(args.sections), ",".join(args.dtypes), ",".join(args.providers), args.warmup, args.rep))
    measure_copy(args, results)
    plots = not args.no_plots
    if "bandwidth" in args.sections:
        section_bandwidth(args, results, args.providers)
        save(results, args.out, plots=False)
    if "grid" in args.sections:
        section_grid(args, results, args.providers)
        save(results, args.out, plots=False)
    if "small_m" in args.sections:
        section_small_m(args, results, args.providers)
        save(results, args.out, plots=False)
    if "host" in args.sections:
        section_host(args, results)
        save(results, args.out, plots=False)
    if "tuned_vs_default" in args.sections and not ({"bandwidth", "grid"} & set(args.sections)):
        pair = [p for p in ("lntune", "lntune-default") if p in args.providers]
        section_grid(args, results, pair)
    save(results, args.out, plots=plots)
    log("wrote %s (results.json, results.md%s)" % (
        args.out, "".join(", " + p for p in results.get("plots", []))))
    with open(os.path.join(args.out, "results.md")) as f:
        md = f.read()
    # The summary section on stdout, for logs.
    start = md.find("## Summary")
    end = md.find("\n## ", start + 1)
    print(md[start:end if end > 0 else len(md)], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
