#!/usr/bin/env python3
"""A `lntune tune --trace` run's keys and candidates by outcome.

    python3 bench/trace_outcomes.py TRACE [OUT.jsonl.gz]

Prints the keys by state and the candidates by status (a `wrong` candidate
failed verification against the CPU reference; a cold tune of the default
grid wants none). With OUT, writes the trace's key events and every
candidate that was not `ok` there, gzipped (the whole trace is too large to
keep in bench/results; the device tool returns at most 8 files).
"""
import collections
import gzip
import json
import sys


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: trace_outcomes.py TRACE [OUT.jsonl.gz]")
    keys, cands = collections.Counter(), collections.Counter()
    out = gzip.open(sys.argv[2], "wt") if len(sys.argv) == 3 else None
    with open(sys.argv[1]) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            ev = e.get("event")
            if ev == "key":
                keys[e.get("state")] += 1
                if out:
                    out.write(line)
            elif ev == "candidate":
                cands[e.get("status")] += 1
                if out and e.get("status") not in ("ok", None):
                    out.write(line)
    if out:
        out.close()
    print("keys by state:", dict(keys))
    print("candidates by status:", dict(cands))


if __name__ == "__main__":
    main()
