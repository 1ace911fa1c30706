#!/usr/bin/env python3
"""Pruned vs exhaustive winners, from two `lntune tune --trace` files.

    python3 bench/compare_winners.py PRUNED.trace FULL.trace [--limit 0.02]

For every key both runs tuned, the pruned run's winner is looked up among the
exhaustive run's own careful measurements (same process, same inputs, L2
flushed), so the ratio

    exhaustive-run median of the pruned winner / exhaustive winner's median

compares like with like (1.000 when both chose the same config). Where the
exhaustive run has no careful timing of that config (it failed there, say),
the two runs' stored medians are compared instead and the row says "x-run".
A config the exhaustive run pruned early (> 1.5x the best after a few
repetitions) shows the median of those repetitions.

Prints one row per key, then a summary line; exits 0 (the summary says
whether every key is within the limit).
"""
import argparse
import json
import sys

KEY_FIELDS = ("gpu", "sm_count", "kernel", "x_dtype", "w_dtype", "has_weight", "has_bias", "n", "m_bucket")
CONFIG_FIELDS = ("block_size", "num_warps", "rows_per_cta", "group_size_m", "cluster_size")


def key_of(ev):
    # "variant" (RMSNorm, residual, ...) is in the trace only for variants.
    return tuple(ev[f] for f in KEY_FIELDS) + (ev.get("variant", ""),)


def config_of(c):
    return tuple(c[f] for f in CONFIG_FIELDS)


def short(c):
    b, w, r, g, cl = c
    s = f"b{b} w{w} r{r}"
    if g > 0:
        s += f" g{g}"
    if cl > 1:
        s += f" c{cl}"
    return s


def label(k):
    gpu, sm, kernel, xd, wd, hw, hb, n, mb, variant = k
    d = xd if wd == xd or kernel == "bwd_dwdb" else f"{xd}/w{wd}"
    if not hw and not hb:
        d += " noaffine"
    elif not hw:
        d += " noW"
    elif not hb:
        d += " noB"
    if variant:
        d += f" {variant}"
    return f"{kernel} {d} N={n} M-bucket {mb}"


def read(path):
    winners = {}     # key -> (config, median)
    candidates = {}  # key -> config -> (status, median or None)
    with open(path) as f:
        for line_no, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                ev = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{line_no}: not JSON: {e}")
            k = key_of(ev)
            if ev["event"] == "key":
                if ev["state"] in ("tuned", "partial") and ev["config"]:
                    winners[k] = (config_of(ev["config"]), ev["median_us"], ev["state"])
            elif ev["event"] == "candidate":
                candidates.setdefault(k, {})[config_of(ev["config"])] = (ev["status"], ev["median_us"])
    return winners, candidates


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pruned")
    ap.add_argument("full")
    ap.add_argument("--limit", type=float, default=0.02, help="allowed slow-down (default 0.02 = 2%%)")
    a = ap.parse_args()
    pw, _ = read(a.pruned)
    fw, fc = read(a.full)
    keys = [k for k in fw if k in pw]
    keys.sort(key=lambda k: (k[0], k[2], k[3], k[4], k[7], k[8]))
    print(f"{'key':<34} {'pruned winner':<22} {'exhaustive winner':<22} {'ratio':>7}  {'':<6} check")
    worst = (0.0, None)
    within = 0
    for k in keys:
        pc, pmed, pstate = pw[k]
        fcfg, fmed, fstate = fw[k]
        how = ""
        if pc == fcfg:
            ratio = 1.0
            how = "same"
        elif pc in fc.get(k, {}) and fc[k][pc][1] and fmed:
            ratio = fc[k][pc][1] / fmed
            how = fc[k][pc][0]
        elif pmed and fmed:
            ratio = pmed / fmed
            how = "x-run"
        else:
            ratio = float("nan")
            how = "n/a"
        ok = ratio <= 1.0 + a.limit
        within += ok
        if ratio == ratio and ratio - 1.0 > worst[0]:
            worst = (ratio - 1.0, k)
        note = "" if pstate == "tuned" and fstate == "tuned" else " (partial)"
        print(f"{label(k):<34} {short(pc):<22} {short(fcfg):<22} {ratio:7.3f}  {how:<6} "
              f"{'ok' if ok else 'SLOWER'}{note}")
    worst_txt = f"worst {100 * worst[0]:.1f}% ({label(worst[1])})" if worst[1] else "worst 0.0%"
    verdict = "PASS" if keys and within == len(keys) and len(keys) >= 30 else "FAIL"
    print(f"pruned vs exhaustive: {len(keys)} keys compared, {within} within {100 * a.limit:.0f}% of the exhaustive "
          f"winner's median, {worst_txt}; {verdict} (target: all of >= 30 keys)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
