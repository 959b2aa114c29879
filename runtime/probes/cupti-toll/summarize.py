#!/usr/bin/env python3
"""Summarises run.sh's log: per variant, the median over rounds of its ratio to the same round's
variant 0 (launch, launch after cuCtxGetCurrent as cudarc makes it, cuStreamQuery, idle
cuStreamSynchronize). Usage: summarize.py toll.log"""
import collections
import statistics
import sys

rows = [l.split() for l in open(sys.argv[1]) if l[:1].isdigit() and len(l.split()) == 6]
by_round = collections.defaultdict(dict)
for rnd, variant, *ns in rows:
    by_round[rnd][variant] = [float(x) for x in ns]
print("variant  launch  cudarc-launch  query  idle-sync  (median ratio to variant 0, %)")
for v in ["A", "1", "2", "3", "4", "5", "6", "7"]:
    cols = []
    for k in range(4):
        r = [b[v][k] / b["0"][k] - 1 for b in by_round.values() if v in b and "0" in b]
        cols.append(f"{100 * statistics.median(r):+7.2f}")
    print(v, *cols)
