#!/usr/bin/env python3
"""Independent reference numbers for the Nsight Systems SQLite exports in ../shared/traces/nsys.

Python standard library only (sqlite3): no code shared with the C++ importer. For each file, per
process (the pid in bits 24..47 of nsys's serialized globalPid / globalTid):

  command                     PROCESSES.name
  kernel_count, memcpy_count, memset_count
  gpu_span_ns     first GPU activity start .. last GPU activity end, over all devices
  gpu_busy_ns     length of the union of kernel, memcpy and memset intervals
  devices         span and busy per deviceId, with TARGET_INFO_GPU's name and SM count
  api_calls       distinct CUDA runtime/driver calls: rows of CUPTI_ACTIVITY_KIND_RUNTIME with
                  distinct correlation ids (schema 2.x exports repeat a call as a backtrace row)
  sync_calls      those calls whose name contains "Synchronize"
  h2d_bytes       bytes of host-to-device copies (copyKind 1)
  pageable_bytes  bytes of copies with a pageable side (ENUM_CUDA_MEM_KIND, else nsys's default
                  numbering, where 0 is pageable)
  nvtx_ranges     NVTX push/pop and start/end ranges that ended (eventType 59, 60)
  allocations     device and pinned allocations and frees (CUDA_GPU_MEMORY_USAGE_EVENTS, present
                  when nsys ran with --cuda-memory-usage=true; operation types 0 and 1)

Usage (regenerates the committed file in one command):
  python3 tests/tools/nsys_reference.py [TRACES_DIR] [-o tests/data/nsys/reference.json]
"""

import argparse
import json
import os
import sqlite3
import sys


def pid_of(global_id):
    return (global_id >> 24) & 0xFFFFFF


def union_length(intervals):
    total, cur_start, cur_end = 0, None, None
    for start, end in sorted(intervals):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    if cur_end is not None:
        total += cur_end - cur_start
    return total


def tables(db):
    return {r[0] for r in db.execute("select name from sqlite_master where type='table'")}


def pageable_ids(db, have):
    if "ENUM_CUDA_MEM_KIND" in have:
        return {r[0] for r in db.execute("select id from ENUM_CUDA_MEM_KIND where name like '%PAGEABLE%'")}
    return {0}


def reference(path):
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    have = tables(db)
    procs = {}

    def proc(pid):
        return procs.setdefault(pid, {"kernel_count": 0, "memcpy_count": 0, "memset_count": 0, "intervals": [],
                                      "by_device": {}, "correlations": set(), "uncorrelated": 0,
                                      "sync": set(), "sync_uncorrelated": 0, "h2d_bytes": 0,
                                      "pageable_bytes": 0, "nvtx_ranges": 0, "allocations": 0})

    def gpu(p, device, start, end):
        p["intervals"].append((start, end))
        p["by_device"].setdefault(device, []).append((start, end))

    if "CUPTI_ACTIVITY_KIND_KERNEL" in have:
        for start, end, device, gpid in db.execute("select start, end, deviceId, globalPid from CUPTI_ACTIVITY_KIND_KERNEL"):
            p = proc(pid_of(gpid))
            p["kernel_count"] += 1
            gpu(p, device, start, end)
    pageable = pageable_ids(db, have)
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in have:
        for start, end, device, gpid, nbytes, kind, src, dst in db.execute(
                "select start, end, deviceId, globalPid, bytes, copyKind, srcKind, dstKind from CUPTI_ACTIVITY_KIND_MEMCPY"):
            p = proc(pid_of(gpid))
            p["memcpy_count"] += 1
            gpu(p, device, start, end)
            if kind == 1:
                p["h2d_bytes"] += nbytes
            if src in pageable or dst in pageable:
                p["pageable_bytes"] += nbytes
    if "CUPTI_ACTIVITY_KIND_MEMSET" in have:
        for start, end, device, gpid in db.execute("select start, end, deviceId, globalPid from CUPTI_ACTIVITY_KIND_MEMSET"):
            p = proc(pid_of(gpid))
            p["memset_count"] += 1
            gpu(p, device, start, end)
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in have:
        for gtid, corr, name in db.execute(
                "select r.globalTid, r.correlationId, s.value from CUPTI_ACTIVITY_KIND_RUNTIME r "
                "join StringIds s on s.id = r.nameId"):
            p = proc(pid_of(gtid))
            sync = "Synchronize" in name
            if corr:
                p["correlations"].add(corr)
                if sync:
                    p["sync"].add(corr)
            else:
                p["uncorrelated"] += 1
                p["sync_uncorrelated"] += sync
    if "NVTX_EVENTS" in have:
        for gtid, in db.execute("select globalTid from NVTX_EVENTS where eventType in (59, 60) "
                                "and end is not null and end >= start"):
            proc(pid_of(gtid))["nvtx_ranges"] += 1

    if "CUDA_GPU_MEMORY_USAGE_EVENTS" in have:
        for gpid, in db.execute("select globalPid from CUDA_GPU_MEMORY_USAGE_EVENTS where memoryOperationType in (0, 1)"):
            proc(pid_of(gpid))["allocations"] += 1

    names = {}
    if "PROCESSES" in have:
        names = {pid: name for pid, name in db.execute("select pid, name from PROCESSES")}
    gpus = {}
    if "TARGET_INFO_GPU" in have:
        for dev_id, name, sms in db.execute("select id, name, smCount from TARGET_INFO_GPU"):
            gpus.setdefault(dev_id, {"name": name, "sm_count": sms})

    out = {}
    for pid in sorted(procs):
        p = procs[pid]
        iv = p["intervals"]
        span = (max(e for _, e in iv) - min(s for s, _ in iv)) if iv else 0
        devices = {}
        for device, div in sorted(p["by_device"].items()):
            devices[str(device)] = {
                "gpu_span_ns": max(e for _, e in div) - min(s for s, _ in div),
                "gpu_busy_ns": union_length(div),
                **gpus.get(device, {}),
            }
        out[str(pid)] = {
            "command": names.get(pid),
            "kernel_count": p["kernel_count"],
            "memcpy_count": p["memcpy_count"],
            "memset_count": p["memset_count"],
            "gpu_span_ns": span,
            "gpu_busy_ns": union_length(iv),
            "devices": devices,
            "api_calls": len(p["correlations"]) + p["uncorrelated"],
            "sync_calls": len(p["sync"]) + p["sync_uncorrelated"],
            "h2d_bytes": p["h2d_bytes"],
            "pageable_bytes": p["pageable_bytes"],
            "nvtx_ranges": p["nvtx_ranges"],
            "allocations": p["allocations"],
        }
    db.close()
    return {"processes": out}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="?", default=os.path.join(root, "..", "shared", "traces", "nsys"))
    parser.add_argument("-o", "--output", default=os.path.join(root, "tests", "data", "nsys", "reference.json"))
    args = parser.parse_args()
    files = {}
    for name in sorted(os.listdir(args.traces)):
        if name.endswith(".sqlite"):
            files[name] = reference(os.path.join(args.traces, name))
    if not files:
        sys.exit(f"nsys_reference.py: no .sqlite files in {args.traces}")
    with open(args.output, "w") as f:
        json.dump({"generated_by": "tests/tools/nsys_reference.py", "files": files}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"nsys_reference.py: {len(files)} files -> {args.output}")


if __name__ == "__main__":
    main()
