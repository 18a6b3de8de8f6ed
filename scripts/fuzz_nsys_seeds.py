#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_nsys_importer (tests/fuzz/corpus/nsys_importer/).

usage: scripts/fuzz_nsys_seeds.py [TRACES_DIR] [OUT_DIR]
       (defaults: $GPUWISE_TRACES_DIR or ../shared/traces, tests/fuzz/corpus/nsys_importer)

Each real Nsight Systems export in TRACES_DIR/nsys is cut to the tables the importer reads, the
first rows of each activity table (by start time) and the strings those rows name, then vacuumed
with 512-byte pages: a real schema and real rows in a few tens of KB. Beside them, exports built
here in the schema nsys 2024 writes (tests/data/nsys/schema_2024.sql, the importer tests' schema):
every table with a row, and the regressions (regress-*): a kernel ending at INT64_MAX, and a schema
whose table name holds an ESC byte (SQLite quotes it in its "malformed database schema" error,
which reached the terminal raw).
Python's standard library only.
"""
import os
import sqlite3
import sys

KEEP = {
    "StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS", "CUDA_GPU_MEMORY_USAGE_EVENTS",
    "TARGET_INFO_GPU", "TARGET_INFO_SYSTEM_ENV", "PROCESSES", "META_DATA_EXPORT",
    "EXPORT_META_DATA", "ENUM_CUDA_MEM_KIND", "ENUM_CUPTI_SYNC_TYPE", "ENUM_NSYS_EVENT_TYPE",
    "ENUM_NSYS_EVENT_CLASS", "ENUM_CUDA_KERNEL_LAUNCH_TYPE", "ENUM_CUDA_MEMCPY_OPER",
    "ENUM_CUDA_DEV_MEM_EVENT_OPER",
}
ROWS = 25

# The schema nsys 2024 writes, shared with the importer tests.
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "nsys",
                           "schema_2024.sql")

PID = 4242
GPID = (1 << 48) | (PID << 24)
GTID = GPID | 7


def fresh(path):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA page_size = 512")
    return db


def finish(db):
    db.commit()
    db.execute("VACUUM")
    db.close()


def schema():
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        return f.read()


def every_table(path):
    db = fresh(path)
    db.executescript(schema())
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", [
        (1, "ampere_sgemm_128x64_tn"), (2, "cudaLaunchKernel_v7000"), (3, "ProfilerStep#1"),
        (4, "cudaMemcpyAsync_v3020"), (5, "cudaDeviceSynchronize_v3020"), (6, "sgemm")])
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 9000, 0, 1, 7, 11, ?, 1, 6, 0, 128,"
               " 108, 2, 1, 256, 1, 1, 16384, 0, NULL, NULL)", (GPID,))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (9500, 12000, 0, 7, 12, ?, 1048576, 1, 0, 2)", (GPID,))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (12500, 13000, 0, 7, 13, ?, 0, 4096, 2)", (GPID,))
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0)", [
        (1000, 1900, GTID, 11, 2), (9000, 9400, GTID, 12, 4), (13000, 20000, GTID, 14, 5)])
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (13100, 19900, 0, NULL, 14, ?, 2, NULL)",
               (GPID,))
    db.execute("INSERT INTO NVTX_EVENTS VALUES (500, 21000, 59, NULL, ?, 3)", (GTID,))
    db.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA A100-SXM4-40GB', 'GPU-1', 42949672960, 108, 8, 0,"
               " 32, 64)")
    db.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python')", (GPID, PID))
    db.executemany("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (?, ?, 0, 1, 140000000000, 0, ?, 2, ?, NULL, ?)",
                   [(900, GPID, 1 << 30, 0, 10), (20500, GPID, 1 << 30, 1, 15)])
    finish(db)


def kernel_at_int64_max(path):
    db = fresh(path)
    db.executescript(schema())
    db.execute("INSERT INTO StringIds VALUES (1, 'k')")
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
               " demangledName, shortName) VALUES (1000, 9223372036854775807, 0, 7, 1, ?, 1, 1)", (GPID,))
    finish(db)


def escape_in_schema(path):
    db = fresh(path)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("PRAGMA writable_schema = ON")
    name = "\x1b[31mevil\x1b[0m"
    db.execute("INSERT INTO sqlite_master VALUES ('table', ?, ?, 0, 'CREATE TABLE oops(')", (name, name))
    db.commit()
    db.close()


def cut(src, dst):
    whole = sqlite3.connect("file:" + src + "?mode=ro", uri=True)
    whole.text_factory = bytes  # some exports hold text that is not UTF-8: copied as it is
    db = fresh(dst)
    db.text_factory = bytes
    tables = [r[0].decode() for r in whole.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    strings, pids = set(), set()
    # PROCESSES last: it keeps the processes of the rows kept before it.
    tables.sort(key=lambda t: t == "PROCESSES")
    for t in tables:
        if t not in KEEP or t == "StringIds":
            continue
        sql = whole.execute("SELECT sql FROM sqlite_master WHERE name = ?", (t,)).fetchone()[0].decode()
        db.execute(sql)
        cols = [r[1].decode() for r in whole.execute(f'PRAGMA table_info("{t}")')]
        order = ' ORDER BY "start"' if "start" in cols else ""
        limit = f" LIMIT {ROWS}" if t.startswith("CUPTI_") or t.startswith("NVTX") or t.startswith("CUDA_") else ""
        rows = whole.execute(f'SELECT * FROM "{t}"{order}{limit}').fetchall()
        if t == "TARGET_INFO_SYSTEM_ENV":  # the host name is what the importer reads
            rows = [r for r in rows if b"Hostname" in r]
        elif t == "PROCESSES":  # the processes the kept rows belong to
            rows = [r for r in rows if r[0] in pids]
        db.executemany(f'INSERT INTO "{t}" VALUES ({",".join("?" * len(cols))})', rows)
        for r in rows:
            for col, v in zip(cols, r):
                if col.lower().endswith(("name", "nameid", "textid")) and isinstance(v, int):
                    strings.add(v)
                if col in ("globalPid", "globalTid") and isinstance(v, int):
                    pids.add(v & ~0xFFFFFF)
    sql = whole.execute("SELECT sql FROM sqlite_master WHERE name = 'StringIds'").fetchone()[0].decode()
    db.execute(sql)
    db.executemany("INSERT INTO StringIds VALUES (?, ?)",
                   [r for r in whole.execute("SELECT * FROM StringIds") if r[0] in strings])
    finish(db)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    traces = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "GPUWISE_TRACES_DIR", os.path.join(here, "..", "..", "shared", "traces"))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "tests", "fuzz", "corpus",
                                                             "nsys_importer")
    os.makedirs(out, exist_ok=True)
    every_table(os.path.join(out, "built-every-table.sqlite"))
    kernel_at_int64_max(os.path.join(out, "regress-kernel-end-int64-max.sqlite"))
    escape_in_schema(os.path.join(out, "regress-esc-in-schema.sqlite"))
    nsys = os.path.join(traces, "nsys")
    for name in sorted(os.listdir(nsys)) if os.path.isdir(nsys) else []:
        if name.endswith(".sqlite"):
            cut(os.path.join(nsys, name), os.path.join(out, "cut-" + name))
    for name in sorted(os.listdir(out)):
        print(f"{os.path.getsize(os.path.join(out, name)):8d} {name}")


if __name__ == "__main__":
    main()
