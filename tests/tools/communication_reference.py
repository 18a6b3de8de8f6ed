#!/usr/bin/env python3
"""Independent reference for HTA's comm/compute overlap on the Kineto traces with NCCL kernels.

Python standard library only (json, gzip, decimal, re): no code shared with the C++ analyzer. It
restates HTA's definition (hta/analyzers/communication_analysis.py, get_comm_comp_overlap, and the
kernel classes of hta/utils/utils.py) without its rounding. For one rank (one trace file):

  GPU events      complete ("X") events whose args carry a "stream" (HTA keeps stream != -1)
  communication   their names start with "nccl", or contain "gloo:"
  memory          names starting "Memcpy", "Memset" or "dma" (neither of the two below)
  computation     the rest, except names matching (^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)
  comm_ns         length of the union of the communication intervals
  overlap_ns      length of the time both the communication union and the computation union cover
  overlap_ratio   overlap_ns / comm_ns; null without communication (HTA then divides 0 by 0)
  exposed_ns      comm_ns - overlap_ns

over the whole trace (HTA does not split this figure by iteration). HTA reads timestamps rounded to
integers and reports round(100 * ratio, 2); here timestamps are microseconds converted to integer
nanoseconds from their decimal digits (Decimal, ROUND_HALF_UP), never through binary floating point.
Traces whose NCCL kernels carry no stream are listed with nccl_kernels_without_stream: HTA does not
see them.

Usage (regenerates the committed file in one command):
  python3 tests/tools/communication_reference.py [TRACES_DIR] [-o tests/data/kineto/communication_reference.json]
"""

import argparse
import decimal
import gzip
import json
import os
import re
import sys

MEMORY_RE = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")
NOT_COMPUTE_RE = re.compile(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)")


def to_ns(value):
    """Microseconds (int or Decimal) -> integer nanoseconds, rounded half up."""
    if isinstance(value, int):
        return value * 1000
    return int((decimal.Decimal(value) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw, parse_float=decimal.Decimal)


def kernel_class(name):
    """HTA's get_kernel_type: 'comm' | 'memory' | 'compute' | 'other'."""
    if name.startswith("nccl") or "gloo:" in name:
        return "comm"
    if MEMORY_RE.match(name):
        return "memory"
    if not NOT_COMPUTE_RE.match(name):
        return "compute"
    return "other"


def merged(intervals):
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def overlap_length(a, b):
    """Length covered by both of two merged, sorted interval lists."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def analyze(doc):
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        return None
    comm, compute = [], []
    hidden_nccl = 0
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e:
            continue
        name = e.get("name")
        if not isinstance(name, str):
            continue
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        stream = args.get("stream", -1)
        if stream is None or stream == -1:
            if e.get("cat") in ("kernel", "Kernel") and name.startswith("nccl"):
                hidden_nccl += 1
            continue
        start = to_ns(e["ts"])
        end = start + max(0, to_ns(e.get("dur", 0)))
        cls = kernel_class(name)
        if cls == "comm":
            comm.append((start, end))
        elif cls == "compute":
            compute.append((start, end))
    if not comm and not hidden_nccl:
        return None  # no NCCL kernel: not a trace this reference covers
    comm_u, compute_u = merged(comm), merged(compute)
    comm_ns = sum(e - s for s, e in comm_u)
    overlap_ns = overlap_length(comm_u, compute_u)
    return {
        "rank": (doc.get("distributedInfo") or {}).get("rank") if isinstance(doc, dict) else None,
        "comm_kernels": len(comm),
        "nccl_kernels_without_stream": hidden_nccl,
        "comm_ns": comm_ns,
        "overlap_ns": overlap_ns,
        "exposed_ns": comm_ns - overlap_ns,
        "overlap_ratio": round(overlap_ns / comm_ns, 9) if comm_ns > 0 else None,
        "hta_pctg": round(100 * overlap_ns / comm_ns, 2) if comm_ns > 0 else None,
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", nargs="?", default=os.path.join(repo, "..", "shared", "traces", "kineto"))
    parser.add_argument("-o", "--output",
                        default=os.path.join(repo, "tests", "data", "kineto", "communication_reference.json"))
    args = parser.parse_args()

    files = {}
    for dirpath, _, names in os.walk(args.traces):
        for name in names:
            path = os.path.join(dirpath, name)
            try:
                result = analyze(load(path))
            except (ValueError, OSError, EOFError):
                continue
            if result is not None:
                files[os.path.relpath(path, args.traces)] = result
    out = {
        "generator": "tests/tools/communication_reference.py",
        "traces": "../shared/traces/kineto",
        "files": dict(sorted(files.items())),
    }
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"wrote {args.output}: {len(files)} traces with NCCL kernels", file=sys.stderr)


if __name__ == "__main__":
    main()
