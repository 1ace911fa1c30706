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
repetitions) shows the median of those repetitions. Where both configs were
finalists of the exhaustive run's final (S4: close finalists of a short
kernel timed in turn, which chose its winner), their medians there are
compared ("final").

The backward is tuned jointly (bwd_dx with the bwd_dwdb reduction of its
partial rows: the pair with the least dx + dW/dB time wins), so where both
traces record the joint finalists ("joint" in the bwd_dx key events), a
bwd_dx row compares that objective: the exhaustive run's estimate of the
pruned pair (its bwd_dx time with the default reduction, minus that
default, plus the best reduction for the same partial-row count), over the
exhaustive pair's ("joint"). The bwd_dwdb rows then compare like with like
only when both runs chose the same partial-row count; otherwise their
problems differ (another P) and the row is shown but not judged ("other P":
the bwd_dx row holds the comparison).

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


def joint_sum(j):
    """dx + dW/dB estimate of one joint finalist, or None."""
    if j.get("dwdb_default_us") is None or j.get("dwdb_best_us") is None:
        return None
    return j["backward_us"] - j["dwdb_default_us"] + j["dwdb_best_us"]


def dx_key(k):
    """The bwd_dx key whose joint search chose a bwd_dwdb key's problem
    (any M bucket): everything but the kernel and the M bucket."""
    gpu, sm, kernel, xd, wd, hw, hb, n, mb, variant = k
    return (gpu, sm, xd, wd, hw, hb, n, variant)


def chosen(joint):
    return next((j for j in joint if j.get("chosen")), None)


def joint_ratio(pj, fj, fcands):
    """The pruned pair's dx + dW/dB over the exhaustive pair's, both
    estimated from the exhaustive run's measurements; None when it has
    none of the pruned pair's partial-row count."""
    pc, fc_ = chosen(pj), chosen(fj)
    if not pc or not fc_ or joint_sum(fc_) is None:
        return None
    same = next((j for j in fj if config_of(j["config"]) == config_of(pc["config"])), None)
    if same is not None and joint_sum(same) is not None:
        return joint_sum(same) / joint_sum(fc_)
    p_rows = next((j for j in fj if j["partial_rows"] == pc["partial_rows"] and joint_sum(j) is not None), None)
    cand = fcands.get(config_of(pc["config"]))
    if p_rows is None or not cand or not cand[1]:
        return None
    return (cand[1] - p_rows["dwdb_default_us"] + p_rows["dwdb_best_us"]) / joint_sum(fc_)


def read(path):
    winners = {}     # key -> (config, median)
    candidates = {}  # key -> config -> (status, median or None)
    joint = {}       # bwd_dx key -> its joint finalists
    finals = {}      # key -> config -> its median in the final (S4: finalists timed in turn)
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
                if ev.get("joint"):
                    joint[k] = ev["joint"]
                finals[k] = {config_of(f["config"]): f["median_us"] for f in ev.get("final", [])}
            elif ev["event"] == "candidate":
                candidates.setdefault(k, {})[config_of(ev["config"])] = (ev["status"], ev["median_us"])
    return winners, candidates, joint, finals


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pruned")
    ap.add_argument("full")
    ap.add_argument("--limit", type=float, default=0.02, help="allowed slow-down (default 0.02 = 2%%)")
    a = ap.parse_args()
    pw, _, pj, _ = read(a.pruned)
    fw, fc, fj, ff = read(a.full)
    # The partial-row count each run's joint choice reduced, per bwd_dx key.
    p_rows = {dx_key(k): chosen(j)["partial_rows"] for k, j in pj.items() if chosen(j)}
    f_rows = {dx_key(k): chosen(j)["partial_rows"] for k, j in fj.items() if chosen(j)}
    keys = [k for k in fw if k in pw]
    keys.sort(key=lambda k: (k[0], k[2], k[3], k[4], k[7], k[8]))
    print(f"{'key':<34} {'pruned winner':<22} {'exhaustive winner':<22} {'ratio':>7}  {'':<6} check")
    worst = (0.0, None)
    within = judged = 0
    for k in keys:
        pc, pmed, pstate = pw[k]
        fcfg, fmed, fstate = fw[k]
        how = ""
        jr = joint_ratio(pj[k], fj[k], fc.get(k, {})) if k in pj and k in fj else None
        if k[2] == "bwd_dwdb" and dx_key(k) in p_rows and dx_key(k) in f_rows \
                and p_rows[dx_key(k)] != f_rows[dx_key(k)]:
            print(f"{label(k):<34} {short(pc):<22} {short(fcfg):<22} {'':>7}  other P (P = {p_rows[dx_key(k)]} "
                  f"and {f_rows[dx_key(k)]}: not judged; see its bwd_dx row)")
            continue
        if jr is not None:
            ratio = jr
            how = "joint"
        elif pc == fcfg:
            ratio = 1.0
            how = "same"
        elif pc in ff.get(k, {}) and fcfg in ff[k]:
            ratio = ff[k][pc] / ff[k][fcfg]
            how = "final"
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
        judged += 1
        if ratio == ratio and ratio - 1.0 > worst[0]:
            worst = (ratio - 1.0, k)
        note = "" if pstate == "tuned" and fstate == "tuned" else " (partial)"
        print(f"{label(k):<34} {short(pc):<22} {short(fcfg):<22} {ratio:7.3f}  {how:<6} "
              f"{'ok' if ok else 'SLOWER'}{note}")
    worst_txt = f"worst {100 * worst[0]:.1f}% ({label(worst[1])})" if worst[1] else "worst 0.0%"
    verdict = "PASS" if judged and within == judged and judged >= 30 else "FAIL"
    print(f"pruned vs exhaustive: {judged} keys compared, {within} within {100 * a.limit:.0f}% of the exhaustive "
          f"winner's median, {worst_txt}; {verdict} (target: all of >= 30 keys)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
