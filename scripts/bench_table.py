#!/usr/bin/env python3
"""Prints one table from the Google Benchmark JSON files in a folder (scripts/bench writes them)."""
import json
import os
import re
import sys


def fmt(v):
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 1e6:
            return f"{v / 1e6:.2f}M"
        if abs(v) >= 100:
            return f"{v:.0f}"
        return f"{v:.3g}"
    return str(v)


SKIP = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
        "repetitions", "repetition_index", "threads", "iterations", "real_time", "cpu_time",
        "time_unit", "aggregate_name", "aggregate_unit", "label", "error_occurred", "error_message"}


def main(folder):
    rows = []
    for fname in sorted(os.listdir(folder)):
        if not fname.endswith(".json"):
            continue
        try:
            with open(os.path.join(folder, fname)) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            rows.append((fname[:-5], "-", f"unreadable results: {e}"))
            continue
        for b in data.get("benchmarks", []):
            if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
                continue
            if b.get("error_occurred"):
                rows.append((fname[:-5], b["name"], "skipped: " + b.get("error_message", "")))
                continue
            figures = [f"time={fmt(b['real_time'])} {b['time_unit']}"]
            for k, v in b.items():
                if k in SKIP:
                    continue
                if k == "items_per_second":
                    figures.append(f"items/s={fmt(v)}")
                elif k == "bytes_per_second":
                    figures.append(f"B/s={fmt(v)}")
                elif isinstance(v, (int, float)):
                    figures.append(f"{k}={fmt(v)}")
            # "BM_X/48/iterations:400/manual_time" -> "BM_X/48": the run settings are not the name.
            name = re.sub(r"/(min_time|iterations|repeats):.*$", "", b["name"])
            rows.append((fname[:-5], name, "  ".join(figures)))
    if not rows:
        print("no benchmark results in", folder)
        return 1
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    print(f"{'executable':<{w0}}  {'benchmark':<{w1}}  figures")
    print(f"{'-' * w0}  {'-' * w1}  {'-' * 40}")
    for r in rows:
        print(f"{r[0]:<{w0}}  {r[1]:<{w1}}  {r[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build/bench/results"))
