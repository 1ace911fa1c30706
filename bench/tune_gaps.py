#!/usr/bin/env python3
"""Where a tune's winners lead its defaults: candidates for default rules.

    python3 bench/tune_gaps.py LOG [--min 1.05] [--m 4096] [--trace TRACE]

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

--trace: the same tune's `--trace` file (JSON lines, or gzipped, e.g.
bench/tune_trace_stats.py's --keep output). A bwd_dwdb key whose every
chosen bwd_dx pair finishes dW/dB in the dx kernel (rt::finish_path) is
only the fallback for a refused cooperative launch: such keys are listed
apart, after the rest, and not counted in the first line (session 60's
cold tune: 20 of its 25 bwd_dwdb gaps). Traces before session 60 lack
"finishes_in_kernel" and "dwdb_form": there a pair counts as finishing
in the kernel where its bwd_dwdb best equals its default (the tuner sets
them equal then), and the form is the bwd_dx key's dtype and affine.
"""
import argparse
import collections
import gzip
import json
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


def dwdb_form_of(event):
    """The bwd_dwdb key's form label of a bwd_dx key event (traces before
    session 60: its dtype and affine, as tuner/report.cpp labels them)."""
    s = event["x_dtype"]
    if not event.get("has_weight", True) and not event.get("has_bias", True):
        s += " noaffine"
    elif not event.get("has_weight", True):
        s += " noW"
    elif not event.get("has_bias", True):
        s += " noB"
    return s


def fallback_keys(path):
    """(form, N, partial rows) of the bwd_dwdb keys that only serve as the
    fallback: every chosen bwd_dx pair that reduces into them finishes
    dW/dB in its own kernel."""
    opener = gzip.open if path.endswith(".gz") else open
    finishes = collections.defaultdict(list)
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("event") != "key" or e.get("kernel") != "bwd_dx":
                continue
            for j in e.get("joint") or []:
                if not j.get("chosen"):
                    continue
                if "finishes_in_kernel" in j:
                    inside = bool(j["finishes_in_kernel"])
                else:
                    inside = j.get("dwdb_best_us") is not None and j.get("dwdb_best_us") == j.get("dwdb_default_us")
                form = e.get("dwdb_form") or dwdb_form_of(e)
                finishes[(form, int(e["n"]), int(j["partial_rows"]))].append(inside)
    return {k for k, v in finishes.items() if v and all(v)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--min", type=float, default=1.05, help="the least lead over the default to list (default 1.05)")
    ap.add_argument("--m", type=int, default=None, help="only keys of this M (the row count the tune timed)")
    ap.add_argument("--trace", default=None,
                    help="the tune's trace (JSON lines, .gz too): bwd_dwdb keys that only serve as the fallback "
                    "of a dx kernel that finishes dW/dB are listed apart")
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
    fallback = set()
    if a.trace:
        try:
            fallback = fallback_keys(a.trace)
        except OSError as e:
            sys.exit("tune_gaps.py: cannot read the trace %s: %s" % (a.trace, e))
    groups = collections.defaultdict(list)
    apart = collections.defaultdict(list)
    for k in keys:
        if k.vs >= a.min:
            if k.kernel == "bwd_dwdb" and (k.form, k.n, k.m) in fallback:
                apart[(k.kernel, k.form, k.m)].append(k)
            else:
                groups[(k.kernel, k.form, k.m)].append(k)
    total = sum(len(v) for v in groups.values())
    print("%d of %d keys lead their default by %.2fx or more" % (total, len(keys), a.min))

    def show(gs):
        # Groups by their best lead, largest first; inside a group, N order.
        for (kernel, form, m), ks in sorted(gs.items(), key=lambda kv: -max(k.vs for k in kv[1])):
            print("%s %s M=%d:" % (kernel, form, m))
            for k in sorted(ks, key=lambda k: k.n):
                print("  N=%-7d %-22s %.2fx  (%.1f%% of copy)" % (k.n, k.winner, k.vs, k.pct))

    show(groups)
    if apart:
        print("%d more bwd_dwdb keys lead, but only as the fallback: their bwd_dx finishes dW/dB in its kernel"
              % sum(len(v) for v in apart.values()))
        show(apart)


if __name__ == "__main__":
    main()
