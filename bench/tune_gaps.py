#!/usr/bin/env python3
"""Where a tune's winners lead its defaults: candidates for default rules.

    python3 bench/tune_gaps.py LOG [--min 1.05] [--m 4096]

LOG is `lntune tune`'s text report (e.g. bench/tune_scale.sh's cold.log):
one row per key with its winner, median and `vs default` (the default
config's median over the winner's, both timed in the same run). Prints, per
kernel, form (dtype label) and M, the keys whose winner leads the default by
--min or more, in N order, with the winner's config, so that runs of N with
one winner shape stand out: each such run is a candidate rule, to be A/B'd
against the build before (bench/gpu_ab.sh) inside and at the edges of its
range (session 59 turned 13 such runs into defaults, bench/results/s59).
Keys that the report does not time against the default (cached, failed)
are skipped. Exit status 2 on a LOG with no key rows.
"""
import argparse
import collections
import re
import sys

# kernel, dtype label (form), N, M (bucket), winner, median, GB/s, % copy,
# vs default, state: tuner/report.cpp's summary row.
ROW = re.compile(
    r"^(?P<kernel>fwd|bwd_dx|bwd_dwdb)\s+(?P<form>.+?)\s+(?P<n>\d+)\s+(?P<m>\d+) \(\d+\)\s+"
    r"(?P<winner>b\d+ w\d+ r\d+(?: g\d+)?(?: c\d+)?)\s+[\d.]+\s+\d+\s+(?P<pct>[\d.]+)\s+"
    r"(?P<vs>[\d.]+)x\s+\S+\s*$")

Key = collections.namedtuple("Key", "kernel form n m winner pct vs")


def parse(lines):
    """The report's key rows (other lines skipped)."""
    keys = []
    for line in lines:
        m = ROW.match(line.rstrip("\n"))
        if m:
            d = m.groupdict()
            keys.append(Key(d["kernel"], d["form"], int(d["n"]), int(d["m"]), d["winner"], float(d["pct"]),
                            float(d["vs"])))
    return keys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--min", type=float, default=1.05, help="the least lead over the default to list (default 1.05)")
    ap.add_argument("--m", type=int, default=None, help="only keys of this M (the row count the tune timed)")
    a = ap.parse_args()
    if not a.min >= 1.0:
        sys.exit("tune_gaps.py: --min must be 1.0 or more, got %s" % a.min)
    with open(a.log, encoding="utf-8", errors="replace") as f:
        keys = parse(f)
    if not keys:
        print("tune_gaps.py: no key rows in %s (is it `lntune tune`'s text report?)" % a.log, file=sys.stderr)
        sys.exit(2)
    if a.m is not None:
        keys = [k for k in keys if k.m == a.m]
    groups = collections.defaultdict(list)
    for k in keys:
        if k.vs >= a.min:
            groups[(k.kernel, k.form, k.m)].append(k)
    total = sum(len(v) for v in groups.values())
    print("%d of %d keys lead their default by %.2fx or more" % (total, len(keys), a.min))
    # Groups by their best lead, largest first; inside a group, N order.
    for (kernel, form, m), ks in sorted(groups.items(), key=lambda kv: -max(k.vs for k in kv[1])):
        print("%s %s M=%d:" % (kernel, form, m))
        for k in sorted(ks, key=lambda k: k.n):
            print("  N=%-7d %-22s %.2fx  (%.1f%% of copy)" % (k.n, k.winner, k.vs, k.pct))


if __name__ == "__main__":
    main()
