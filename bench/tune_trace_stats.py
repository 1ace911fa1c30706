#!/usr/bin/env python3
"""Where a `lntune tune --trace` run spent its time (issue 13).

    python3 bench/tune_trace_stats.py TRACE [--m 4096] [--flush-us 40] [--keep OUT.jsonl.gz]

Reads the JSON lines of a trace (one per candidate, one per key) and prints:
  * per kernel, dtype and N range: keys, the keys' own seconds (search and
    storing; setup_s, building the workload, when the trace has it),
    candidates by what happened to them, verifications, and the GPU time the
    timings themselves took, estimated from the trace: a screening is
    warm-up (4 launches) + reps x (L2 flush + launch), a careful timing
    (4 + reps) launches + reps flushes (--flush-us: one flush of twice the L2;
    about 40 us on an H100);
  * the keys by state and the candidates by status over the whole run (a
    `wrong` candidate failed verification against the CPU reference; a cold
    tune of the default grid wants no failed key and no `wrong` candidate);
    with --keep OUT.jsonl.gz, the key events and every candidate that was
    not `ok` written there, gzipped (a whole trace is too large to keep in
    bench/results);
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
import gzip
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


Key = collections.namedtuple("Key", "kernel x_dtype variant n m_bucket has_bias w_dtype has_weight")


def n_range(n):
    return "N<=4096" if n <= 4096 else "N<=16384" if n <= 16384 else "N>16384"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--m", type=int, default=4096, help="rows of the fwd/bwd_dx keys (default 4096)")
    ap.add_argument("--flush-us", type=float, default=40.0)
    ap.add_argument("--wall", type=float, help="the run's wall time (s): estimates keep its time outside the keys")
    ap.add_argument("--verify-ns", type=float,
                    help="estimate: ns per element verified after a change (the fit gives today's)")
    ap.add_argument("--screen-cut", type=float, help="estimate: screenings beyond this x the key's fastest stop after 2")
    ap.add_argument("--joint", type=float,
                    help="estimate: bwd_dwdb searched for bwd_dx finalists within this margin (up to 3, one per P)")
    ap.add_argument("--keep", metavar="OUT.jsonl.gz", help="write the key events and the non-ok candidates there")
    args = ap.parse_args()

    # The fields that tell keys apart. A key tuned twice (a bwd_dwdb key
    # re-tuned warm for a second bwd_dx with the same partial rows) is one
    # key here, its last event; `keys by state` counts the events, as the
    # tuner's summary does.
    def key_of(ev):
        return Key(ev["kernel"], ev["x_dtype"], ev.get("variant", ""), ev["n"], ev["m_bucket"], ev["has_bias"],
                   ev.get("w_dtype"), ev.get("has_weight"))

    cands = collections.defaultdict(list)
    keys = {}
    torn = 0
    states = collections.Counter()  # over the key events
    keep = gzip.open(args.keep, "wt") if args.keep else None
    with open(args.trace) as f:
        for line in f:
            if not line.strip():
                continue
            try:
                ev = json.loads(line)
            except ValueError:  # the last line of a killed run
                torn += 1
                continue
            if ev["event"] == "candidate":
                cands[key_of(ev)].append(ev)
            else:
                keys[key_of(ev)] = ev
                states[ev["state"]] += 1
            if keep and (ev["event"] != "candidate" or ev.get("status") != "ok"):
                keep.write(line)
    if keep:
        keep.close()
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
        melem = 0.0 if k.kernel == "bwd_dwdb" else args.m * k.n / 1e6
        g = groups.setdefault((k.kernel, k.x_dtype + (" " + k.variant if k.variant else ""), n_range(k.n)),
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
    print("keys by state:", dict(states))
    print("candidates by status:", dict(collections.Counter(c["status"] for cs in cands.values() for c in cs)))
    if torn:
        print(f"{torn} line(s) not JSON (a run cut off mid-line), skipped")
    last = max((k.get("t_s") or 0.0) for k in keys.values())
    if last > 0:
        print(f"last key done at {last:.1f} s; outside the keys' own seconds: {last - tot['seconds'] - tot['setup']:.1f} s")
        timed = [k for k in keys.values() if k.get("t_s")]
        first = min(timed, key=lambda k: k["t_s"])
        start = first["t_s"] - first.get("seconds", 0.0) - first.get("setup_s", 0.0)
        print(f"  of which before the first key (start-up: plans, the copy bandwidth, the first compilations): "
              f"{start:.1f} s")

    ph = collections.Counter()
    for kev in keys.values():
        ph.update({k: v for k, v in (kev.get("phases") or {}).items() if v})
    if ph:
        print("host phases, summed over the keys (s): " +
              ", ".join(f"{k[:-2]} {ph[k]:.1f}" for k in ("compile_wait_s", "load_s",
                                                          "verify_s", "reference_wait_s", "compare_s")))
        if ph["warmup_s"] or ph["reps_s"]:
            print(f"runner, summed over the keys (s): warm-ups {ph['warmup_s']:.1f} (of them {int(ph['rewarms'])} "
                  f"re-warms after an idle GPU, {ph['rewarm_s']:.1f}), timed repetitions {ph['reps_s']:.1f}")

    coef = solve(rows, ys)
    names = ["per key", "per candidate run", "per M*N x verification", "per M*N", "x est. GPU s"]
    print("\nfit of a key's seconds (least squares over the keys):")
    for i, name in enumerate(names):
        share = sum(r[i] for r in rows) * coef[i]
        unit = {2: " s per 1e6 elements verified", 3: " s per 1e6 elements"}.get(i, "")
        print(f"  {name:<26} coefficient {coef[i]:10.5f}{unit:<30} total {share:7.1f} s")

    if args.verify_ns is None and args.screen_cut is None and args.joint is None:
        return
    # An estimate, from the fit and the trace: what the changes would remove
    # (or add). Not a measurement.
    keys_s = tot["seconds"]
    print("\nestimate (from the fit and the trace, not measured):")
    if args.verify_ns is not None:
        el_ver = sum(r[2] for r in rows)
        saved = el_ver * (coef[2] - args.verify_ns * 1e-3)
        keys_s -= saved
        print(f"  verification at {args.verify_ns} ns per element instead of {coef[2] * 1e3:.1f}: -{saved:.1f} s")
    if args.screen_cut is not None:
        saved = 0.0
        for k, cs in cands.items():
            sc = [c["screen_us"] for c in cs if c.get("screen_us")]
            if not sc:
                continue
            best = min(sc)
            for c in cs:
                su = c.get("screen_us")
                if su and su > args.screen_cut * best:
                    saved += (3 * (su + fl) - 15) * 1e-6  # 3 repetitions fewer, one sync more
        keys_s -= saved * coef[4]
        print(f"  screenings beyond {args.screen_cut}x the key's fastest cut to 2 repetitions: -{saved * coef[4]:.1f} s")
    if args.joint is not None:
        dwdb = [kev["seconds"] for k, kev in keys.items() if k.kernel == "bwd_dwdb" and kev["state"] == "tuned"]
        per = sum(dwdb) / len(dwdb) if dwdb else 0.0
        extra = 0
        for k, kev in keys.items():
            if k.kernel != "bwd_dx" or kev["state"] != "tuned":
                continue
            win = kev["median_us"]
            ps = set()
            for c in cands.get(k, []):
                if c["status"] in ("ok", "slower") and c.get("median_us") and c["median_us"] <= win * (1 + args.joint):
                    cf = c["config"]
                    ps.add(max(1, min(cf["group_size_m"], (args.m + cf["rows_per_cta"] - 1) // cf["rows_per_cta"])))
            extra += max(0, min(len(ps), 3) - 1)
        keys_s += extra * per
        print(f"  joint bwd_dx + bwd_dwdb: {extra} more bwd_dwdb searches x {per:.3f} s: +{extra * per:.1f} s")
    skipped = sum(1 for kev in keys.values() if kev["state"] != "tuned")
    print(f"  keys' own seconds: {tot['seconds']:.1f} -> {keys_s:.1f} s"
          + (f" ({skipped} keys the budget skipped or cut are not in either figure)" if skipped else ""))
    if args.wall:
        outside = args.wall - tot["seconds"]
        print(f"  wall: {args.wall:.1f} -> {keys_s + outside:.1f} s (the {outside:.1f} s outside the keys kept as is)")


if __name__ == "__main__":
    main()
