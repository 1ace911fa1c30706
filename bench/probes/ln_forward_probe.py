"""One LayerNorm forward shape through lntune.torch, timed as bench_layernorm.py
times it (triton do_bench median, L2 flushed; % of a 1024 MiB device copy in
the same process), so that two libraries can be compared in the Python
harness (LNTUNE_LIBRARY picks the library; the C++ extension is shared).

    python3 bench/probes/ln_forward_probe.py M N DTYPE [TAG]
"""
import sys

import torch
import triton.testing

import lntune.torch as lt


def main():
    m, n, dt = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    tag = sys.argv[4] if len(sys.argv) > 4 else ""
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dt]
    src = torch.empty(1024 << 20, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = triton.testing.do_bench(lambda: dst.copy_(src), warmup=10, rep=40)
    copy_gbps = 2 * src.numel() / copy_ms / 1e6
    x = torch.randn(m, n, device="cuda", dtype=dtype)
    ln = lt.LayerNorm(n).to(device="cuda", dtype=dtype)
    with torch.no_grad():
        ms = triton.testing.do_bench(lambda: ln(x), warmup=10, rep=40)
    gbps = 2 * x.numel() * x.element_size() / ms / 1e6
    print("%s fwd %s M=%d N=%d %.1f us %.1f%% of copy (%.0f GB/s)" % (tag, dt, m, n, ms * 1e3, 100 * gbps / copy_gbps,
                                                                      copy_gbps))


if __name__ == "__main__":
    main()
