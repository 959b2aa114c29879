#!/usr/bin/env python3
"""Checks what NOSYNC_REPORT=summary,trace:PATH made of a run of the raw_cudarc demo.

    NOSYNC_MODE=allow NOSYNC_REPORT=summary,trace:waits.json \
        raw_cudarc --steps 2000 2> stderr.txt
    check_report.py stderr.txt waits.json 2000

Exits 1, naming the first expectation that failed: the summary on stderr ranks the step's
hidden read of the loss (cuMemcpyDtoHAsync_v2 into pageable memory, from `train_step`) first;
the trace is JSON in the Chrome trace event format with one wait per step, inside its step's
`#[no_sync] train_step` span on the same thread, and the thread named.
"""
import bisect
import json
import sys


def fail(message):
    print(f"check_report: FAILED: {message}")
    sys.exit(1)


def check_summary(lines):
    header = [i for i, l in enumerate(lines) if "host waits by total time" in l]
    if not header:
        fail("no summary table on stderr")
    rows = lines[header[0] + 2 :]
    if not rows or not rows[0].lstrip().startswith("1 "):
        fail(f"no first row after the header: {rows[:1]}")
    if "`cuMemcpyDtoHAsync_v2`" not in rows[0]:
        fail(f"the first site is not the hidden read: {rows[0]}")
    frames = []
    for line in rows[1:]:
        if not line.lstrip().startswith("at "):
            break
        frames.append(line.strip())
    if not any("train_step" in f for f in frames):
        fail(f"the first site's frames do not name train_step: {frames}")
    print("summary:", lines[header[0]].strip())
    print("first site:", rows[0].strip())
    print("  ", frames[0] if frames else "")


def check_trace(path, steps):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    waits = [e for e in events if e.get("ph") == "X" and e.get("cat") == "wait"]
    reads = [e for e in waits if e["name"] == "cuMemcpyDtoHAsync_v2" and e["args"]["forbidden"]]
    if len(reads) != steps:
        fail(f"{len(reads)} forbidden reads in the trace, expected {steps}")
    begins = [e for e in events if e.get("ph") == "B" and e["name"] == "#[no_sync] train_step"]
    ends = [e for e in events if e.get("ph") == "E" and e.get("cat") == "scope"]
    if len(begins) != steps or len(ends) < steps:
        fail(f"{len(begins)} train_step spans begin and {len(ends)} scopes end, expected {steps}")
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
    if names.get(reads[0]["tid"]) != "main":
        fail(f"the reads' thread is not named main: {names}")
    tid = reads[0]["tid"]
    opens = sorted(e["ts"] for e in begins if e["tid"] == tid)
    closes = sorted(e["ts"] for e in ends if e["tid"] == tid)
    inside = 0
    for r in reads:
        # The last span opened before the read must close after it.
        i = bisect.bisect_right(opens, r["ts"])
        if i == 0:
            continue
        j = bisect.bisect_left(closes, opens[i - 1])
        if j < len(closes) and closes[j] >= r["ts"] + r["dur"]:
            inside += 1
    if inside != steps:
        fail(f"{inside} of {steps} reads lie inside a scope span")
    total_ms = sum(r["dur"] for r in reads) / 1000
    print(
        f"trace: {len(events)} events, {len(waits)} waits, {len(reads)} hidden reads "
        f"({total_ms:.1f} ms) each inside its train_step span, thread 'main'"
    )


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    with open(sys.argv[1]) as f:
        check_summary(f.read().splitlines())
    check_trace(sys.argv[2], int(sys.argv[3]))
    print("check_report: ok")


main()
