#!/usr/bin/env python3
"""The K fastest configs of each shape in an `LNTUNE_SWEEP_EVERY=1
lntune_sweep` log (fwd, bwd or train), after that shape's summary line.

    python3 bench/sweep_top.py LOG [K]

Session 37's device-call scripts carried this as an inline snippet
(bench/results/s37/scripts/run2.sh, run4.sh, run5.sh, run8.sh); later calls
use this file."""
import re
import sys


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    k = int(sys.argv[2]) if len(sys.argv) == 3 else 6
    config = re.compile(r"\s+(block_size=.*?)\s+([\d.]+) us\s+([\d.]+)% of copy")
    summary = re.compile(r"(fwd|bwd|train)\s+\S+\s+N=(\d+)\s+M=")
    rows = []
    with open(sys.argv[1]) as f:
        for line in f:
            m = config.match(line)
            if m:
                rows.append((m.group(1), float(m.group(2)), float(m.group(3))))
                continue
            if summary.match(line):
                print(line.rstrip()[:200])
                for name, us, pct in sorted(rows, key=lambda r: r[1])[:k]:
                    print("  %-72s %8.1f us %5.1f%%" % (name, us, pct))
                rows = []
    return 0


if __name__ == "__main__":
    sys.exit(main())
