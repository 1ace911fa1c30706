"""Device times for the Python benchmarks, with an L2 flush that leaves no
dirty lines.

triton.testing.do_bench clears the L2 before each repetition by zeroing a
256 MB buffer: the L2 is left full of dirty lines, and their write-back to
DRAM lands in the timed call. That cost is about the same for every call
(the L2's size of writes, 50-60 MB on an H100 or H200), so it weighs more on
a call that moves fewer bytes: a forward at x = 512 MiB moves 1 GiB, the
copy it is compared with (1024 MiB) 2 GiB. The tuner's flush reads a buffer
instead (templates/kernels/flush.cuh: a 25 MiB copy measured 76% of a large
copy after a zeroing flush, 102% after a reading one; H100,
bench/results/h100_s27). `L2Flush("read")` does the same here: a reduction
over a 256 MB buffer, so the L2 ends holding that buffer's lines, clean.
`L2Flush("zero")` is do_bench's flush, kept to compare the two.

`do_bench` follows triton.testing.do_bench (an estimate from 5 calls, then
warm-up and repetitions sized from it, events around each call, the flush
before each repetition outside its events) and returns the median.
"""

from __future__ import annotations

import statistics

import torch

FLUSH_MODES = ("read", "zero")


class L2Flush:
    """Evicts the L2 before a timed call: `mode` "read" (a reduction over a
    256 MB buffer; the L2 then holds clean lines) or "zero" (the buffer
    zeroed, as triton.testing.do_bench does: dirty lines)."""

    def __init__(self, mode: str = "read", nbytes: int = 256 << 20):
        if mode not in FLUSH_MODES:
            raise ValueError("L2 flush mode must be one of %s, got %r" % (", ".join(FLUSH_MODES), mode))
        self.mode = mode
        self.buf = torch.zeros(nbytes // 4, dtype=torch.int32, device="cuda")
        self.sink = torch.empty((), dtype=torch.int64, device="cuda")

    def __call__(self) -> None:
        if self.mode == "zero":
            self.buf.zero_()
        else:
            torch.sum(self.buf, dim=0, dtype=torch.int64, out=self.sink)

    def __repr__(self) -> str:
        return "L2Flush(%r)" % self.mode


def flushed_ms(fn, calls: int, flush: L2Flush, before=None) -> float:
    """Median ms of fn() over `calls`, each after `flush()` (and `before()`
    first, untimed, where given), events around each call."""
    events = []
    for _ in range(calls):
        if before:
            before()
        flush()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        events.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def do_bench(fn, warmup: float, rep: float, flush: L2Flush, grad_to_none=None) -> float:
    """Median ms of fn(), the L2 flushed before each repetition; warmup and
    rep are milliseconds (triton.testing.do_bench's meaning)."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        flush()
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate = max(start.elapsed_time(end) / 5, 1e-6)
    for _ in range(max(1, int(warmup / estimate))):
        fn()

    def clear_grads():
        for t in grad_to_none:
            t.grad = None

    return flushed_ms(fn, max(1, int(rep / estimate)), flush, clear_grads if grad_to_none is not None else None)
