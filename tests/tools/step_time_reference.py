#!/usr/bin/env python3
"""Independent reference for the step-time model across GPU classes (advisor/gpu/step_time_model.h).

Python standard library only (json, gzip, decimal, math): no code shared with the C++ importer,
the precision classifier or the occupancy calculator. For a Kineto trace recorded on a V100 it
recomputes, for each GPU class, the predicted GPU busy time over the measured one (the report's
gpu_types.classes[].predicted_busy_scale):

  each kernel name's time goes to one term by what its name says:
    nccl*                                   the GPU-to-GPU link (NVLink, else PCIe)
    tensor-core markers (884, 1688, 16816, hmma, wmma, tensorop, gmma)
                                            FP16 tensor throughput
    convolutions (scudnn/hcudnn/dcudnn, wgrad, dgrad, winograd, "conv" but not "convert")
                                            FP32 SIMT on the V100; TF32 tensor cores on a class
                                            that has them (cuDNN's default), else FP32 SIMT
    GEMMs (gemm, matmul, bmm_, fprop, nvjet)  FP32 SIMT
    anything else                           HBM bandwidth
  copies: HtoD/DtoH the PCIe link, DtoD HBM bandwidth;
  SM fill, per kernel name: the time-weighted means of each execution's first-wave fill
    f = min(1, blocks / (80 SMs x resident blocks per SM)) and waves w = blocks / (80 x resident);
    the grid offers P = (f < 1 ? f : w) x 80 SMs' worth of blocks, the target fills
    min(1, P / its SMs), and the time scales by f / that;
  busy scale = sum of predicted times / sum of measured times.

Resident blocks per SM: the V100 (compute capability 7.0) limits from the CUDA Occupancy
Calculator's rules, written out here: 64 warps, 32 blocks, 65536 registers (allocated per warp in
units of 256, warps in groups of 4), 96 KiB of shared memory (allocated in units of 256 bytes).

The class figures are copied from the data sheets cited in advisor/gpu/gpu_classes.cpp.

Usage (regenerates the committed file in one command):
  python3 tests/tools/step_time_reference.py [TRACES_DIR] [-o tests/data/kineto/step_time_reference.json]
"""

import argparse
import decimal
import gzip
import json
import math
import os
import sys

TRACE = "kineto/kineto_tb_plugin/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz"

# name: (fp32 SIMT TFLOPS, TF32 tensor TFLOPS, FP16 tensor TFLOPS, HBM GB/s, PCIe GB/s,
#        GPU link GB/s, SMs)
CLASSES = {
    "B200": (75, 1100, 2250, 7700, 64, 900, 148),
    "H200": (67, 495, 990, 4800, 64, 450, 132),
    "H100 SXM": (67, 495, 990, 3350, 64, 450, 132),
    "H100 PCIe": (51, 378, 756, 2000, 64, 0, 114),
    "A100 80GB": (19.5, 156, 312, 2039, 32, 300, 108),
    "A100 40GB": (19.5, 156, 312, 1555, 32, 300, 108),
    "L40S": (91.6, 183, 366.5, 864, 32, 0, 142),
    "L4": (30.3, 60, 121, 300, 32, 0, 58),
    "A10G": (31.52, 35, 70, 600, 32, 0, 80),
    "V100": (15.7, 0, 125, 900, 16, 150, 80),
}
SOURCE = "V100"
SOURCE_SMS = 80

TENSOR_MARKERS = ("884", "1688", "16816", "hmma", "wmma", "tensorop", "gmma")
CONV_MARKERS = ("scudnn", "hcudnn", "dcudnn", "wgrad", "dgrad", "winograd")
GEMM_MARKERS = ("gemm", "matmul", "bmm_", "fprop", "nvjet")


def to_ns(value):
    return int((decimal.Decimal(str(value)) * 1000).quantize(decimal.Decimal(1),
                                                              rounding=decimal.ROUND_HALF_UP))


def is_conv(name):
    if any(m in name for m in CONV_MARKERS):
        return True
    at = name.find("conv")
    while at >= 0:
        if not name.startswith("convert", at):
            return True
        at = name.find("conv", at + 4)
    return False


def kind(name):
    if name.startswith("nccl"):
        return "link"
    low = name.lower()
    if any(m in low for m in TENSOR_MARKERS):
        return "tensor"
    if is_conv(name):
        return "conv"
    if any(m in low for m in GEMM_MARKERS):
        return "gemm"
    return "memory"


def resident_blocks_v100(threads, registers, shared):
    """Blocks of this shape one V100 SM holds at once; 0 when the block does not fit."""
    warps = math.ceil(threads / 32)
    if warps == 0 or warps > 32:
        return 0
    by_warps = 64 // warps
    by_blocks = 32
    by_regs = by_blocks
    if registers > 0:
        per_warp = math.ceil(registers * 32 / 256) * 256
        warp_limit = (65536 // per_warp) // 4 * 4
        by_regs = warp_limit // warps
    by_shared = by_blocks
    if shared > 0:
        by_shared = 98304 // (math.ceil(shared / 256) * 256)
    return min(by_warps, by_blocks, by_regs, by_shared)


def rate(cls, k, source):
    fp32, tf32, fp16, hbm, pcie, link, _ = CLASSES[cls]
    if k == "tensor":
        return fp16
    if k == "conv":
        return tf32 if CLASSES[source][1] <= 0 and tf32 > 0 else fp32
    if k == "gemm":
        return fp32
    if k in ("memory", "dtod"):
        return hbm
    if k == "host":
        return pcie
    return link if link > 0 else pcie


def collect(events):
    """Per kernel name: [kind, ns, fill-timed ns, sum fill x ns, sum waves x ns]; copies by kind."""
    names, copies = {}, {"host": 0, "dtod": 0}
    for e in events:
        cat = e.get("cat")
        if e.get("ph") != "X" or "dur" not in e:
            continue
        ns = to_ns(e["dur"])
        if cat in ("Kernel", "kernel"):
            a = e.get("args", {})
            entry = names.setdefault(e["name"], [kind(e["name"]), 0, 0, 0.0, 0.0])
            entry[1] += ns
            grid, block = a.get("grid"), a.get("block")
            if grid and block:
                blocks = grid[0] * grid[1] * grid[2]
                resident = resident_blocks_v100(block[0] * block[1] * block[2],
                                                a.get("registers per thread", 0),
                                                a.get("shared memory", 0))
                if resident > 0 and blocks > 0:
                    waves = blocks / (SOURCE_SMS * resident)
                    entry[2] += ns
                    entry[3] += min(1.0, waves) * ns
                    entry[4] += waves * ns
        elif cat in ("Memcpy", "gpu_memcpy"):
            copies["dtod" if "DtoD" in e["name"] else "host"] += ns
    return names, copies


def busy_scale(names, copies, target):
    measured = predicted = 0.0
    target_sms = CLASSES[target][6]
    for k, ns, timed, fill_ns, waves_ns in names.values():
        ratio = rate(SOURCE, k, SOURCE) / rate(target, k, SOURCE)
        if timed > 0 and fill_ns > 0 and k != "link":
            fill = min(1.0, fill_ns / timed)
            waves = max(waves_ns / timed, fill)
            parallel = (fill if fill < 1.0 else waves) * SOURCE_SMS
            ratio *= fill / min(1.0, parallel / target_sms)
        measured += ns
        predicted += ns * ratio
    for k, ns in copies.items():
        measured += ns
        predicted += ns * rate(SOURCE, k, SOURCE) / rate(target, k, SOURCE)
    return predicted / measured


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="?", default=os.path.join("..", "shared", "traces"))
    parser.add_argument("-o", "--output")
    args = parser.parse_args()
    with gzip.open(os.path.join(args.traces, TRACE), "rt") as f:
        trace = json.load(f)
    names, copies = collect(trace["traceEvents"])
    out = {
        "generated_by": "tests/tools/step_time_reference.py",
        "file": TRACE,
        "source": SOURCE,
        "predicted_busy_scale": {c: round(busy_scale(names, copies, c), 6) for c in CLASSES},
    }
    text = json.dumps(out, indent=1) + "\n"
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
