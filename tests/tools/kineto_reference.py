#!/usr/bin/env python3
"""Independent reference numbers for the Kineto traces in ../shared/traces/kineto.

Python standard library only (json, gzip, decimal): no code shared with the C++ importer. For each
file: whether it is a Chrome trace (an object with a traceEvents array, or a bare array of event
objects) and, if so, per rank:

  kernel_count, memcpy_count, memset_count  GPU activity records
  gpu_span_ns     first GPU activity start .. last GPU activity end, over all devices
  gpu_busy_ns     length of the union of kernel, memcpy and memset intervals
  gpu_idle_ratio  1 - busy / span
  devices         the same three numbers per device
  profiler_steps  number of ProfilerStep#N ranges on the host

GPU activity: categories kernel/Kernel, gpu_memcpy/Memcpy, gpu_memset/Memset with ph "X"; on MTIA
(mtia_ccp_events) dma_request is a memcpy, event_record/event_wait are markers and waits, the
rest are kernels. The device is args.device, else the event's pid. Timestamps are microseconds,
converted to integer nanoseconds from their decimal digits (Decimal, ROUND_HALF_UP), never
through binary floating point.

Usage (regenerates the committed file in one command):
  python3 tests/tools/kineto_reference.py [TRACES_DIR] [-o tests/data/kineto/reference.json]
"""

import argparse
import decimal
import gzip
import json
import os
import re
import sys

GPU_KERNEL = {"kernel", "Kernel"}
GPU_MEMCPY = {"gpu_memcpy", "Memcpy"}
GPU_MEMSET = {"gpu_memset", "Memset"}
MTIA = "mtia_ccp_events"
MTIA_MARKERS = {"event_record", "event_wait"}
HOST_STEP_CATEGORIES = {"user_annotation", "cpu_op", "Operator"}
STEP_RE = re.compile(r"^ProfilerStep#\d+$")


def to_ns(value):
    """Microseconds (int or Decimal) -> integer nanoseconds, rounded half up."""
    if isinstance(value, int):
        return value * 1000
    if isinstance(value, str):
        value = decimal.Decimal(value)
    return int((decimal.Decimal(value) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw, parse_float=decimal.Decimal)


def classify(event):
    """'kernel' | 'memcpy' | 'memset' | None"""
    if event.get("ph") != "X":
        return None
    cat = event.get("cat")
    if cat in GPU_KERNEL:
        return "kernel"
    if cat in GPU_MEMCPY:
        return "memcpy"
    if cat in GPU_MEMSET:
        return "memset"
    if cat == MTIA:
        name = event.get("name")
        if name == "dma_request":
            return "memcpy"
        if name in MTIA_MARKERS:
            return None
        return "kernel"
    return None


def device_of(event):
    args = event.get("args") or {}
    dev = args.get("device")
    if dev is None:
        dev = event.get("pid")
    try:
        return int(dev)
    except (TypeError, ValueError):
        return 0


def union_length(intervals):
    total = 0
    cur_start = cur_end = None
    for start, end in sorted(intervals):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        elif end > cur_end:
            cur_end = end
    if cur_end is not None:
        total += cur_end - cur_start
    return total


def summarize(intervals):
    if not intervals:
        return {"gpu_span_ns": 0, "gpu_busy_ns": 0, "gpu_idle_ratio": None}
    span = max(e for _, e in intervals) - min(s for s, _ in intervals)
    busy = union_length(intervals)
    return {
        "gpu_span_ns": span,
        "gpu_busy_ns": busy,
        "gpu_idle_ratio": round(1 - busy / span, 9) if span > 0 else None,
    }


def analyze(doc):
    if isinstance(doc, list):
        if doc and not all(isinstance(e, dict) for e in doc):
            return {"chrome_trace": False, "what": "JSON array of non-objects (PyTorch memory timeline)"}
        events, meta = doc, {}
    elif isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        events, meta = doc["traceEvents"], doc
    elif isinstance(doc, dict) and "nodes" in doc:
        return {"chrome_trace": False, "what": "PyTorch execution trace"}
    else:
        return {"chrome_trace": False, "what": "JSON without traceEvents"}

    counts = {"kernel": 0, "memcpy": 0, "memset": 0}
    intervals = []
    per_device = {}
    steps = 0
    for e in events:
        if not isinstance(e, dict):
            continue
        kind = classify(e)
        if kind is not None and "ts" in e:
            counts[kind] += 1
            start = to_ns(e["ts"])
            end = start + max(0, to_ns(e.get("dur", 0)))  # a negative duration is an instant
            intervals.append((start, end))
            per_device.setdefault(device_of(e), []).append((start, end))
        elif (e.get("ph") == "X" and e.get("cat") in HOST_STEP_CATEGORIES
              and isinstance(e.get("name"), str) and STEP_RE.match(e["name"])):
            steps += 1
    result = {
        "chrome_trace": True,
        "rank": (meta.get("distributedInfo") or {}).get("rank"),
        "kernel_count": counts["kernel"],
        "memcpy_count": counts["memcpy"],
        "memset_count": counts["memset"],
        "profiler_steps": steps,
    }
    result.update(summarize(intervals))
    result["devices"] = {str(d): summarize(v) for d, v in sorted(per_device.items())}
    return result


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", nargs="?", default=os.path.join(repo, "..", "shared", "traces", "kineto"))
    parser.add_argument("-o", "--output", default=os.path.join(repo, "tests", "data", "kineto", "reference.json"))
    args = parser.parse_args()

    files = {}
    for dirpath, _, names in os.walk(args.traces):
        for name in names:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, args.traces)
            try:
                files[rel] = analyze(load(path))
            except (ValueError, OSError, EOFError) as err:
                files[rel] = {"chrome_trace": False, "what": f"unreadable: {err}"}
    out = {
        "generator": "tests/tools/kineto_reference.py",
        "traces": "../shared/traces/kineto",
        "files": dict(sorted(files.items())),
    }
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(out, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"wrote {args.output}: {len(files)} files, "
          f"{sum(1 for v in files.values() if v['chrome_trace'])} Chrome traces", file=sys.stderr)


if __name__ == "__main__":
    main()
