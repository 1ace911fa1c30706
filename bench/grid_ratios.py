#!/usr/bin/env python3
"""lntune / PyTorch per N from bench_layernorm.py --section grid logs.

    python3 bench/grid_ratios.py LOG [LOG ...]

Reads the "grid DTYPE M=... N=...: <provider> fwd X GB/s (..); <provider> bwd
Y GB/s (..); torch fwd ..; torch bwd .." lines and prints, per log, dtype
and direction, the geometric mean and the minimum of lntune's GB/s over
PyTorch's, with the N of the minimum and every N below 1.0.
"""
import math
import re
import sys

LINE = re.compile(r"grid (\w+) M=(\d+) N=(\d+): (.*)")
PART = re.compile(r"([\w-]+) (fwd|bwd) (\d+) GB/s")


def main():
    for path in sys.argv[1:]:
        ratios = {}  # (dtype, direction) -> [(lntune / torch, N)], in the log's order
        for line in open(path, errors="replace"):
            m = LINE.search(line)
            if not m:
                continue
            dtype, n = m.group(1), int(m.group(3))
            got = {(p, d): float(v) for p, d, v in PART.findall(m.group(4))}
            for d in ("fwd", "bwd"):
                lt = [v for (p, dd), v in got.items() if dd == d and p.startswith("lntune")]
                th = got.get(("torch", d))
                if lt and th:
                    ratios.setdefault((dtype, d), []).append((lt[0] / th, n))
        for (dtype, d), rs in ratios.items():
            gm = math.exp(sum(math.log(r) for r, _ in rs) / len(rs))
            lo = min(rs)
            below = ", ".join("N=%d %.2f" % (n, r) for r, n in rs if r < 1.0) or "none"
            print("%s %s %s: %d N, geomean %.2f, min %.2f (N=%d); below 1.0: %s"
                  % (path, dtype, d, len(rs), gm, lo[0], lo[1], below))


if __name__ == "__main__":
    main()
