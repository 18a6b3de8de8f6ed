#!/usr/bin/env python3
"""Independent reference for gpuwise's offline GPU energy estimate (advisor/cost/energy_cost.h).

Python standard library only (json, gzip, decimal): no code shared with the C++ importer or the
estimate. For each Kineto trace: per device, its name (deviceProperties, by id), its board power
from the table below (written from the vendors' figures, not read from the C++ table), its GPU
busy time (the union of kernel, memcpy and memset intervals; kineto_reference.py's definition),
and the estimate

    joules = board power (W) x busy time (s)

summed over devices (null when a device's model is not in the table, or no GPU activity).

Usage (regenerates the committed file in one command):
  python3 tests/tools/energy_reference.py [TRACES_DIR] [-o tests/data/energy/reference.json]
"""

import argparse
import decimal
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kineto_reference import classify, device_of, load, to_ns, union_length  # noqa: E402

# The traces the reference covers: every GPU model the shared traces hold, and a model the table
# lacks (the AMD MI250: no estimate).
TRACES = [
    "kineto/kineto_tb_plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "kineto/tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "kineto/hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
    "kineto/hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "kineto/tracelens/b200/eager_trace.json.gz",
]

# Board power in watts, one figure per GPU class (the classes of advisor/gpu/gpu_classes.cpp,
# written here from the vendors' figures, not read from the C++ table): (pattern on the device
# name, watts). First match wins. PCIe A100 and V100 cards have no class of their own: they get
# the SXM part's figure, as the C++ estimate does. Only the H100 has separate PCIe (350 W) and
# NVL (400 W) classes.
BOARD_WATTS = [
    (r"\bGB200\b", 1200),
    (r"\bB200\b", 1000),
    (r"\bH200\b", 700),
    (r"\bH100\b.*(\bNVL\b|94GB)", 400),
    (r"\bH100\b.*\bPCIe\b", 350),
    (r"\bH100\b", 700),
    (r"\bA100\b", 400),
    (r"\bA30\b", 165),
    (r"\bL40S\b", 350),
    (r"\bL4\b", 72),
    (r"\bA10G\b", 300),
    (r"\bA10\b", 150),
    (r"\bV100\b", 300),
    (r"\bT4\b", 70),
    (r"\bMI300X\b", 750),
]


def board_watts(name):
    for pattern, watts in BOARD_WATTS:
        if re.search(pattern, name or "", re.IGNORECASE):
            return watts
    return None


def estimate(doc):
    names = {}
    for p in doc.get("deviceProperties") or []:
        names[int(p.get("id", len(names)))] = p.get("name")
    per_device = {}
    for e in doc.get("traceEvents") or []:
        if isinstance(e, dict) and classify(e) is not None and "ts" in e:
            start = to_ns(e["ts"])
            end = start + max(0, to_ns(e.get("dur", 0)))
            per_device.setdefault(device_of(e), []).append((start, end))
    devices = {}
    total = decimal.Decimal(0)
    known = bool(per_device)
    for d, intervals in sorted(per_device.items()):
        busy_ns = union_length(intervals)
        watts = board_watts(names.get(d))
        joules = None
        if watts is None:
            known = False
        else:
            joules = decimal.Decimal(watts) * decimal.Decimal(busy_ns) / decimal.Decimal(10**9)
            total += joules
        devices[str(d)] = {
            "name": names.get(d),
            "board_watts": watts,
            "busy_ns": busy_ns,
            "joules": float(joules) if joules is not None else None,
        }
    return {"devices": devices, "joules": float(total) if known else None}


def main():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", nargs="?", default=os.path.join(repo, "..", "shared", "traces"))
    parser.add_argument("-o", "--output", default=os.path.join(repo, "tests", "data", "energy", "reference.json"))
    args = parser.parse_args()
    files = {}
    for rel in TRACES:
        path = os.path.join(args.traces, rel)
        if not os.path.exists(path):
            print("missing: " + path, file=sys.stderr)
            continue
        files[rel] = estimate(load(path))
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump({"generated_by": "tests/tools/energy_reference.py", "files": files}, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
