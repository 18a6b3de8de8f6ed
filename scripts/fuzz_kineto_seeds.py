#!/usr/bin/env python3
"""Cuts the Kineto importer's fuzz seeds from the real traces in ../shared/traces/kineto.

Each seed keeps the trace's top-level fields (schemaVersion, deviceProperties, distributedInfo ...)
and a few dozen of its events: the process/thread metadata, a window of consecutive events from
the first kernel launch on, and the GPU records (kernel, memcpy, memset, sync) and flow events
correlated with the launches in that window, so the importer's joins have something to join.
Small files are kept whole (gzip included: the seeds reach the inflater). Seeds are a few KB:
the fuzzer mutates small inputs much faster.

usage: fuzz_kineto_seeds.py TRACES_DIR OUT_DIR
"""
import gzip
import json
import os
import shutil
import sys

# (source relative to TRACES_DIR/kineto, seed name, what it covers)
CUTS = [
    ("hta/trace_compare/base/base.json.gz", "hta-base", "kernel, memcpy, memset, runtime, cpu_op"),
    ("hta/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz", "hta-event-sync",
     "cuda_sync, events across streams, memset"),
    ("hta/trace_file_list/inference_rank_1.json.gz", "hta-old-categories", "2021 categories Kernel, Runtime"),
    ("hta/with_gpu_user_annotation/step_based_trace_2543932.json.gz", "hta-gpu-annotation",
     "ProfilerStep, gpu_user_annotation"),
    ("hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", "hta-ns-resolution",
     "float timestamps with ns fractions, NCCL"),
    ("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", "hta-amd", "an AMD MI250 trace"),
    ("hta/mtia_inference_trace/mtia_inference_rank_0.json.gz", "hta-mtia", "a non-CUDA accelerator"),
    ("kineto_tb_plugin/test/gpu_metrics_input.json", "tb-occupancy",
     "Operator/Kernel categories, blocks per SM, est. achieved occupancy"),
    ("kineto_tb_plugin/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz", "tb-dataloader",
     "ResNet-50 with DataLoader workers, [memory] events"),
    ("tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz", "tracelens-h100",
     "python_function, cuda_driver, cpu_instant_event"),
    ("tracelens/b200/eager_trace.json.gz", "tracelens-b200", "FP8/FP4 kernels on a B200"),
    ("tracelens/torch_compile_triton/trace.json.gz", "tracelens-triton", "torch.compile Triton kernels"),
]
WHOLE = [  # kept byte for byte
    ("hta/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz", "hta-large-integers.json.gz"),
    ("hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", "hta-cpu-only.json.gz"),
    ("hta/execution_trace/benchmark_simple_add_et.json.gz", "hta-execution-trace-not-a-timeline.json.gz"),
    ("hta/call_stack/backward_thread.json", "hta-backward-thread.json"),
]
GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "cuda_sync",
            "gpu_user_annotation", "ac2g", "async_cpu_to_gpu"}
MAX_BYTES = 6000


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def corr(e):
    a = e.get("args")
    return a.get("correlation", a.get("External id")) if isinstance(a, dict) else None


def cut(trace, window):
    events = [e for e in trace.get("traceEvents", []) if isinstance(e, dict)]
    meta = [e for e in events if e.get("ph") == "M"][:10]
    timed = sorted((e for e in events if e.get("ph") != "M" and isinstance(e.get("ts"), (int, float))),
                   key=lambda e: e["ts"])
    start = next((i for i, e in enumerate(timed) if e.get("cat") in ("kernel", "Kernel")), 0)
    # Start a little before the first kernel, at its launch and the op around it.
    launch = next((i for i, e in enumerate(timed) if corr(e) is not None and corr(e) == corr(timed[start])
                   and e.get("cat") not in GPU_CATS), start) if timed else 0
    lo = max(0, min(start, launch) - window // 4)
    sel = timed[lo:lo + window]
    ids = {corr(e) for e in sel} - {None}
    sel += [e for e in timed if e.get("cat") in GPU_CATS and corr(e) in ids and e not in sel][:window]
    # Top-level fields stay, except bulky free-form ones (TraceLens' "metadata" is 20 KB of config).
    out = {k: v for k, v in trace.items()
           if k != "traceEvents" and (k == "deviceProperties" or len(json.dumps(v)) < 1000)}
    out["traceEvents"] = meta + sel
    return json.dumps(out, separators=(",", ":"))


def main():
    traces, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    for src, name, _ in CUTS:
        trace = load(os.path.join(traces, "kineto", src))
        window = 48
        text = cut(trace, window)
        while len(text) > MAX_BYTES and window > 4:
            window -= 4
            text = cut(trace, window)
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            f.write(text)
    for src, name in WHOLE:
        shutil.copyfile(os.path.join(traces, "kineto", src), os.path.join(out_dir, name))


if __name__ == "__main__":
    main()
