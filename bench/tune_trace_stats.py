#!/usr/bin/env python3
"""Where a `lntune tune --trace` run spent its time (issue 13).

    python3 bench/tune_trace_stats.py TRACE [--m 4096] [--flush-us 40]

Reads the JSON lines of a trace (one per candidate, one per key) and prints:
  * per kernel, dtype and N range: keys, the keys' own seconds (search and
    storing; setup_s, building the workload, when the trace has it),
    candidates by what happened to them, verifications, and the GPU time the
    timings themselves took, estimated from the trace: a screening is
    warm-up (4 launches) + reps x (L2 flush + launch), a careful timing
    (4 + reps) launches + reps flushes (--flush-us: one flush of twice the L2;
    about 40 us on an H100);
  * a least-squares fit of each key's seconds on: a constant, the candidates
    run, M*N (millions of elements) x verifications, M*N, and the estimated
    GPU seconds; with each term's share of the total. The host work (CPU
    reference, comparing outputs, uploads) shows up as the M*N terms.
The trace has no wall-clock timestamps before `t_s` was added, so time spent
outside the keys (workload construction, waiting for compilations before the
first key) is only visible as wall time minus the keys' seconds.
"""
import argparse
import collections
import json
import sys


def solve(a, b):
    """Least squares by the normal equations (small, well-conditioned here)."""
    n = len(a[0])
    ata = [[sum(r[i] * r[j] for r in a) for j in range(n)] for i in range(n)]
    atb = [sum(r[i] * y for r, y in zip(a, b)) for i in range(n)]
    m = [row[:] + [v] for row, v in zip(ata, atb)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if abs(m[c][c]) < 1e-12:
            continue
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(n)]


def n_range(n):
    return "N<=4096" if n <= 4096 else "N<=16384" if n <= 16384 else "N>16384"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--m", type=int, default=4096, help="rows of the fwd/bwd_dx keys (default 4096)")
    ap.add_argument("--flush-us", type=float, default=40.0)
    args = ap.parse_args()

    def key_of(ev):
        return (ev["kernel"], ev["x_dtype"], ev.get("variant", ""), ev["n"], ev["m_bucket"], ev["has_bias"])

    cands = collections.defaultdict(list)
    keys = {}
    with open(args.trace) as f:
        for line in f:
            if not line.strip():
                continue
            ev = json.loads(line)
            (cands[key_of(ev)].append(ev) if ev["event"] == "candidate" else keys.__setitem__(key_of(ev), ev))
    if not keys:
        sys.exit("no key events in " + args.trace)

    fl = args.flush_us
    rows, ys = [], []
    groups = collections.OrderedDict()
    for k, kev in keys.items():
        cs = cands.get(k, [])
        st = collections.Counter(c["status"] for c in cs)
        run = sum(1 for c in cs if c["status"] not in ("reused", "roofline", "skipped"))
        ver = st["ok"] + st["wrong"]
        gpu = 0.0
        for c in cs:
            if c.get("screen_us"):
                gpu += (4 * c["screen_us"] + 5 * (c["screen_us"] + fl)) * 1e-6
            if c.get("median_us") and c["status"] in ("ok", "slower", "pruned"):
                gpu += ((4 + c["reps"]) * c["median_us"] + c["reps"] * fl) * 1e-6
        melem = 0.0 if k[0] == "bwd_dwdb" else args.m * k[3] / 1e6
        g = groups.setdefault((k[0], k[1] + (" " + k[2] if k[2] else ""), n_range(k[3])),
                              collections.Counter())
        g["keys"] += 1
        g["seconds"] += kev.get("seconds", 0.0)
        g["setup"] += kev.get("setup_s", 0.0) or 0.0
        g["gpu"] += gpu
        g["cands"] += len(cs)
        g["run"] += run
        g["screened"] += sum(1 for c in cs if c.get("screen_us"))
        g["careful"] += sum(1 for c in cs if c.get("median_us") and c["status"] in ("ok", "slower", "pruned"))
        g["verified"] += ver
        g["budget"] += 1 if kev["state"] != "tuned" else 0
        rows.append([1.0, run, melem * ver, melem, gpu])
        ys.append(kev.get("seconds", 0.0))

    hdr = f"{'kernel':<9}{'dtype':<22}{'N range':<10}{'keys':>5}{'key s':>8}{'setup s':>8}{'GPU s':>7}" \
          f"{'cands':>7}{'run':>6}{'screen':>7}{'careful':>8}{'verif':>6}{'!tuned':>7}"
    print(hdr)
    tot = collections.Counter()
    for (kn, d, nr), g in groups.items():
        tot.update(g)
        print(f"{kn:<9}{d:<22}{nr:<10}{g['keys']:>5}{g['seconds']:>8.1f}{g['setup']:>8.1f}{g['gpu']:>7.1f}"
              f"{g['cands']:>7}{g['run']:>6}{g['screened']:>7}{g['careful']:>8}{g['verified']:>6}{g['budget']:>7}")
    print(f"{'total':<41}{tot['keys']:>5}{tot['seconds']:>8.1f}{tot['setup']:>8.1f}{tot['gpu']:>7.1f}"
          f"{tot['cands']:>7}{tot['run']:>6}{tot['screened']:>7}{tot['careful']:>8}{tot['verified']:>6}{tot['budget']:>7}")
    last = max((k.get("t_s") or 0.0) for k in keys.values())
    if last > 0:
        print(f"last key done at {last:.1f} s; outside the keys' own seconds: {last - tot['seconds'] - tot['setup']:.1f} s")

    coef = solve(rows, ys)
    names = ["per key", "per candidate run", "per M*N x verification", "per M*N", "x est. GPU s"]
    print("\nfit of a key's seconds (least squares over the keys):")
    for i, name in enumerate(names):
        share = sum(r[i] for r in rows) * coef[i]
        unit = {2: " s per 1e6 elements verified", 3: " s per 1e6 elements"}.get(i, "")
        print(f"  {name:<26} coefficient {coef[i]:10.5f}{unit:<30} total {share:7.1f} s")


if __name__ == "__main__":
    main()
