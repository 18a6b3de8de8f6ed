#!/usr/bin/env python3
"""A small but real training loop whose inefficiencies are switched by flags, for gpuwise.

Two backends run the same loop (same flags, same data-loader worker processes, same
RANK/LOCAL_RANK/WORLD_SIZE handling):

  torch  PyTorch on a GPU: a ResNet-style CNN (ResNet-18 layout) trained with SGD on synthetic
         images made in the script; a torch.utils.data.DataLoader with --num-workers worker
         processes; torch.autocast for --amp (GradScaler for fp16); whole-step CUDA graph capture
         for --cuda-graphs; DistributedDataParallel when WORLD_SIZE > 1 (NCCL, or Gloo when there
         are fewer GPUs than ranks). Chosen when `import torch` works and CUDA is available.
  sim    no PyTorch: libgwtrain_sim.so (samples/pytorch/gwtrain_sim.cu), loaded with ctypes, runs
         the model's kernels (implicit-GEMM convolutions in FP32, or BF16/FP16 on the tensor
         cores), the batch copies (pinned or pageable), the loss read-backs and graph launches as
         real CUDA runtime calls, on the simulated device or a real GPU. Worker processes made with
         multiprocessing (fork, or GWTRAIN_WORKER_START) fill shared-memory batches, as
         DataLoader workers do; they never touch CUDA. It is not PyTorch and its kernel times on
         the simulated device are chosen, not measured. With WORLD_SIZE > 1 the ranks train data-parallel like DDP: NCCL (libnccl.so.2;
         the simulated device's stand-in under `gpuwise run --simulate`) all-reduces the FP32
         gradients in 8 buckets (one per layer) on a communication stream, overlapped with the backward pass.

The last line on stdout says which backend ran:
  gwtrain backend=sim rank=0 ... step_ms=3.41 device="NVIDIA H200" simulated=1 worker_pids=...

Inefficiencies and the flag that plants or removes each:
  --amp none            FP32 (TF32 on a real GPU) convolutions     -> enable_mixed_precision
  (no --pin-memory)     pageable host batches                       -> use_pinned_memory
  --num-workers 0       the trainer loads batches itself (--loader-ms each) -> prefetch_input
  --sync-every 1        loss.item() after every forward pass: the GPU drains at every step
                        (reduce_host_syncs when that drain is a large share of a step)
  small --batch-size    short kernels, launch-bound (torch backend) -> use_cuda_graphs
  --cuda-graphs         the whole step replayed as one CUDA graph

Distributed jobs (WORLD_SIZE > 1, e.g. through launch.py):
  --no-overlap          all-reduce the gradients only after the whole backward pass
                        (torch: one DDP bucket)                     -> overlap_communication
  --slow-rank R --slow-compute F
                        rank R's compute is F times slower (a throttled GPU) -> fix_straggler
  --slow-loader-rank R [--slow-loader-ms MS]
                        rank R's loader takes MS per batch (default 4 x --loader-ms)
                                                                    -> fix_straggler, prefetch_input
"""
import argparse
import contextlib
import ctypes
import multiprocessing
import os
import queue
import random
import sys
import threading
import time
from pathlib import Path


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--amp", choices=["none", "bf16", "fp16"], default="bf16",
                   help="mixed precision: none (FP32), bf16 or fp16 (with a gradient scaler)")
    p.add_argument("--pin-memory", action="store_true",
                   help="load batches into pinned (page-locked) host memory")
    p.add_argument("--num-workers", type=int, default=4,
                   help="data-loader worker processes; 0 loads in the training process")
    p.add_argument("--batch-size", type=int, default=128, help="images per step")
    p.add_argument("--image-size", type=int, default=64, help="square image side (pixels)")
    p.add_argument("--sync-every", type=int, default=0,
                   help="read the loss back (loss.item(), a host sync) after the forward pass "
                        "every N steps; 0: only at the end")
    p.add_argument("--cuda-graphs", action="store_true",
                   help="capture the whole step (forward, backward, optimizer) in a CUDA graph")
    p.add_argument("--steps", type=int, default=60, help="steps to run")
    p.add_argument("--warmup", type=int, default=10,
                   help="steps before the timed window (step_ms is measured after them)")
    p.add_argument("--loader-ms", type=float, default=2.0,
                   help="latency of loading one batch, in ms (a sleep: storage or network; the "
                        "CPU side is the batch's copy)")
    p.add_argument("--backend", choices=["auto", "torch", "sim"], default="auto",
                   help="auto: torch when `import torch` works and CUDA is available, else sim")
    p.add_argument("--sim-lib", default=None,
                   help="path of libgwtrain_sim.so (default: $GWTRAIN_SIM_LIB, "
                        "$GPUWISE_BUILD_DIR/samples/pytorch, then <repo>/build/samples/pytorch)")
    p.add_argument("--torch-profiler", action="store_true",
                   help="run the loop under torch.profiler (torch backend only)")
    p.add_argument("--profiler-trace", default=None,
                   help="with --torch-profiler: write the Kineto trace (JSON) here")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-overlap", action="store_true",
                   help="with several ranks: all-reduce the gradients after the whole backward "
                        "pass instead of bucket by bucket during it")
    p.add_argument("--slow-rank", type=int, default=-1,
                   help="the rank whose compute is --slow-compute times slower (a straggler)")
    p.add_argument("--slow-compute", type=float, default=1.5,
                   help="how much slower --slow-rank's kernels are (default 1.5)")
    p.add_argument("--slow-loader-rank", type=int, default=-1,
                   help="the rank whose data loader is slow (a straggler)")
    p.add_argument("--slow-loader-ms", type=float, default=None,
                   help="--slow-loader-rank's loading time per batch in ms "
                        "(default 4 x --loader-ms)")
    a = p.parse_args(argv)
    problems = []
    if a.num_workers < 0:
        problems.append("--num-workers must be >= 0")
    if a.batch_size < 1 or a.image_size < 8:
        problems.append("--batch-size must be >= 1 and --image-size >= 8")
    if a.steps < 1 or a.warmup < 0 or a.warmup >= a.steps:
        problems.append("--steps must be >= 1 and 0 <= --warmup < --steps")
    if a.sync_every < 0:
        problems.append("--sync-every must be >= 0")
    if a.cuda_graphs and a.amp == "fp16":
        problems.append("--cuda-graphs with --amp fp16 is not supported (GradScaler syncs)")
    if a.slow_compute <= 0 or (a.slow_loader_ms is not None and a.slow_loader_ms < 0):
        problems.append("--slow-compute must be > 0 and --slow-loader-ms >= 0")
    if problems:
        p.error("; ".join(problems))
    if a.slow_loader_ms is None:
        a.slow_loader_ms = 4 * a.loader_ms
    return a


def loader_ms_of(a, who):
    """This rank's loading time per batch: --slow-loader-ms on --slow-loader-rank."""
    return a.slow_loader_ms if who.rank == a.slow_loader_rank else a.loader_ms


class Identity:
    """RANK / LOCAL_RANK / WORLD_SIZE as torchrun sets them (0 / 0 / 1 when absent)."""

    def __init__(self):
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.world_size = int(os.environ.get("WORLD_SIZE", "1"))


def worker_start_method():
    """How loader workers start (both backends): fork, as DataLoader's default on Linux before
    Python 3.14, unless GWTRAIN_WORKER_START says spawn or forkserver. The sanitizer test lanes
    say spawn: there a fork of this multithreaded process (the shim's threads, the pin-memory
    thread) can leave the child blocked forever in the sanitizer's allocator, which gcc 12's ASan
    runtime does not lock around fork() (tests/sanitizer_env.h)."""
    method = os.environ.get("GWTRAIN_WORKER_START", "fork")
    if method not in ("fork", "spawn", "forkserver"):
        raise ValueError("GWTRAIN_WORKER_START=%s: use fork, spawn or forkserver" % method)
    return method


# ---------------------------------------------------------------------------------------------
# The sim backend's data loader: worker processes (fork) fill batches in shared memory.

def _stamp(view, index):
    # The synthetic images are made once, in every buffer, before the workers start; a batch only
    # stamps its index. The loader's cost is --loader-ms, not a memcpy of the batch that, on a
    # shared CPU, the simulated device would wait for.
    view[:8] = index.to_bytes(8, "little")


def _sim_worker(shm, batch_bytes, tasks, results, loader_ms):
    # Like a DataLoader worker: CPU only. It never calls into libgwtrain_sim.so or CUDA.
    while True:
        task = tasks.get()
        if task is None:
            return
        index, slot = task
        if loader_ms > 0:
            time.sleep(loader_ms / 1000.0)
        _stamp(memoryview(shm).cast("B")[slot * batch_bytes:(slot + 1) * batch_bytes], index)
        results.put((index, slot))


class SimLoader:
    """Batches in order, prefetched by num_workers processes (2 per worker in flight)."""

    def __init__(self, batch_bytes, num_workers, loader_ms, seed, total):
        self.batch_bytes = batch_bytes
        self.num_workers = num_workers
        self.loader_ms = loader_ms
        self.total = total
        self.next_index = 0
        self.worker_pids = []
        self.slots = max(1, 2 * num_workers)
        ctx = multiprocessing.get_context(worker_start_method())
        # Shared with the workers (a file-backed mapping, which a spawned worker maps as well).
        self.shm = ctx.RawArray(ctypes.c_char, batch_bytes * self.slots)
        base = random.Random(seed).randbytes(batch_bytes)
        for s in range(self.slots):
            ctypes.memmove(self._address(s * batch_bytes), base, batch_bytes)
        if num_workers == 0:
            return
        self.results = ctx.Queue()
        self.tasks = [ctx.Queue() for _ in range(num_workers)]
        self.workers = [
            ctx.Process(target=_sim_worker, daemon=True,
                        args=(self.shm, batch_bytes, self.tasks[w], self.results, loader_ms))
            for w in range(num_workers)]
        for w in self.workers:
            w.start()
        self.worker_pids = [w.pid for w in self.workers]
        self.ready = {}
        self.issued = 0
        for _ in range(min(self.slots, total)):
            self._issue()

    def _issue(self):
        i = self.issued
        self.tasks[i % self.num_workers].put((i, i % self.slots))
        self.issued += 1

    def next(self):
        """(address, slot) of the next batch; valid until release()."""
        i = self.next_index
        self.next_index += 1
        if self.num_workers == 0:
            if self.loader_ms > 0:
                time.sleep(self.loader_ms / 1000.0)
            _stamp(memoryview(self.shm).cast("B"), i)
            return self._address(0), 0
        while i not in self.ready:
            index, slot = self.results.get(timeout=60)
            self.ready[index] = slot
        slot = self.ready.pop(i)
        return self._address(slot * self.batch_bytes), slot

    def release(self):
        if self.num_workers > 0 and self.issued < self.total:
            self._issue()

    def _address(self, offset):
        return ctypes.addressof(self.shm) + offset

    def close(self):
        if self.num_workers == 0:
            return
        for q in self.tasks:
            q.put(None)
        for w in self.workers:
            w.join(timeout=10)
            if w.is_alive():
                w.terminate()


def find_sim_lib(arg):
    here = Path(__file__).resolve().parent
    candidates = [arg, os.environ.get("GWTRAIN_SIM_LIB")]
    if os.environ.get("GPUWISE_BUILD_DIR"):
        candidates.append(os.path.join(os.environ["GPUWISE_BUILD_DIR"], "samples", "pytorch",
                                       "libgwtrain_sim.so"))
    candidates.append(str(here.parent.parent / "build" / "samples" / "pytorch" /
                          "libgwtrain_sim.so"))
    for c in candidates:
        if c and os.path.isfile(c):
            return c
    raise RuntimeError("libgwtrain_sim.so not found (build the gwtrain_sim target, or pass "
                       "--sim-lib); looked at: " + ", ".join(c for c in candidates if c))


def load_cuda_runtime():
    """libcudart.so.13 from the loader's path (the simulated device's, under --simulate), else
    the toolkit's; the library below then finds it loaded, by its SONAME."""
    toolkit = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64",
                           "libcudart.so.13")
    try:
        return ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        if not os.path.exists(toolkit):
            raise
        return ctypes.CDLL(toolkit, mode=ctypes.RTLD_GLOBAL)


def share_nccl_id(lib, who, check):
    """The NCCL unique id, made by rank 0 and handed to the others as torchrun's store would: a
    file in the temp folder named by MASTER_PORT and the launcher's pid (shared by the ranks of
    one launch, distinct across launches), written aside then renamed, polled for by the others
    with a deadline. Rank 0 removes it once every rank has joined."""
    import tempfile
    key = "%s-%d" % (os.environ.get("MASTER_PORT", "0"), os.getppid())
    path = os.path.join(tempfile.gettempdir(), "gwtrain-nccl-%s.id" % key)
    if who.rank == 0:
        buf = ctypes.create_string_buffer(128)
        check(lib.gwt_nccl_unique_id(buf), "gwt_nccl_unique_id")
        aside = "%s.%d" % (path, os.getpid())
        with open(aside, "wb") as f:
            f.write(buf.raw)
        os.replace(aside, path)
        return buf.raw, path
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with open(path, "rb") as f:
                data = f.read()
            if len(data) == 128:
                return data, None
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    raise RuntimeError("rank 0's NCCL id did not appear in %s within 120 s" % path)


def init_sim_distributed(lib, a, who, check):
    if a.cuda_graphs:
        raise RuntimeError("--cuda-graphs with WORLD_SIZE > 1 is not supported")
    unique_id, published = share_nccl_id(lib, who, check)
    try:
        check(lib.gwt_dist_init(who.rank, who.world_size, unique_id, int(not a.no_overlap)),
              "gwt_dist_init")
    finally:
        if published:
            os.unlink(published)


def run_sim(a, who):
    # The CUDA runtime first and RTLD_GLOBAL, as PyTorch preloads its CUDA libraries. (The shim
    # also finds a runtime that arrives RTLD_LOCAL, by its soname: tests/pytorch/local_runtime.py.)
    load_cuda_runtime()
    lib = ctypes.CDLL(find_sim_lib(a.sim_lib), mode=ctypes.RTLD_GLOBAL)
    lib.gwt_error.restype = ctypes.c_char_p
    lib.gwt_device_name.restype = ctypes.c_char_p
    lib.gwt_pinned_slot.restype = ctypes.c_void_p
    lib.gwt_pinned_slot.argtypes = [ctypes.c_int]
    lib.gwt_forward.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.gwt_read_loss.restype = ctypes.c_float
    lib.gwt_slow_compute.argtypes = [ctypes.c_double]
    lib.gwt_dist_init.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    lib.gwt_allreduces.restype = ctypes.c_longlong

    def check(rc, what):
        if rc != 0:
            raise RuntimeError(what + ": " + lib.gwt_error().decode())

    batch_bytes = a.batch_size * 3 * a.image_size * a.image_size * 4
    amp = {"none": 0, "bf16": 1, "fp16": 2}[a.amp]
    # Like model.cuda() before the DataLoader's workers start: CUDA is up before they fork.
    check(lib.gwt_init(who.local_rank, a.batch_size, batch_bytes, amp, int(a.pin_memory),
                       int(a.cuda_graphs)), "gwt_init")
    if who.rank == a.slow_rank:
        check(lib.gwt_slow_compute(a.slow_compute), "gwt_slow_compute")
    # A rendezvous needs MASTER_PORT, as torch.distributed's env:// does (torchrun and launch.py
    # set it); a lone process merely told its rank trains an independent replica.
    distributed = who.world_size > 1 and "MASTER_PORT" in os.environ
    if distributed:
        init_sim_distributed(lib, a, who, check)
    elif who.world_size > 1:
        print("train.py: rank %d: WORLD_SIZE > 1 without MASTER_PORT: an independent replica, no "
              "collectives" % who.rank, file=sys.stderr, flush=True)
    loader = SimLoader(batch_bytes, a.num_workers, loader_ms_of(a, who), a.seed + who.rank,
                       a.steps)
    slots = lib.gwt_slots()
    pinned_batches = queue.Queue(maxsize=slots - 2)

    def pin_memory_loop():
        # DataLoader's pin-memory thread: batches copied into pinned buffers ahead of the step.
        # A pinned buffer is reused once the H2D copy that read it has run (gwt_pinned_slot
        # waits for it); the queue's bound keeps this thread at most slots - 2 steps ahead, so
        # that copy has been issued by then.
        try:
            for step in range(a.steps):
                address, _ = loader.next()
                slot = step % slots
                pinned = lib.gwt_pinned_slot(slot)
                if not pinned:
                    raise RuntimeError("gwt_pinned_slot: " + lib.gwt_error().decode())
                ctypes.memmove(pinned, address, batch_bytes)
                loader.release()
                pinned_batches.put((slot, pinned))
        except Exception as e:  # noqa: BLE001 - handed to the training thread
            pinned_batches.put(e)

    if a.pin_memory:
        threading.Thread(target=pin_memory_loop, name="pin_memory", daemon=True).start()
    losses = []
    try:
        t0 = None
        for step in range(a.steps):
            if step == a.warmup:
                check(lib.gwt_finish(), "gwt_finish")
                t0 = time.perf_counter()
            if a.pin_memory:
                item = pinned_batches.get(timeout=120)
                if isinstance(item, Exception):
                    raise item
                slot, pinned = item
                check(lib.gwt_forward(pinned, batch_bytes, slot, 1), "gwt_forward")
            else:
                address, _ = loader.next()
                check(lib.gwt_forward(address, batch_bytes, 0, 0), "gwt_forward")
                loader.release()  # the pageable copy has been staged: the slot is free again
            if a.sync_every and (step + 1) % a.sync_every == 0 and not a.cuda_graphs:
                losses.append(lib.gwt_read_loss())
            check(lib.gwt_backward(), "gwt_backward")
            if a.sync_every and (step + 1) % a.sync_every == 0 and a.cuda_graphs:
                losses.append(lib.gwt_read_loss())
        check(lib.gwt_finish(), "gwt_finish")
        step_s = (time.perf_counter() - t0) / (a.steps - a.warmup)
    finally:
        loader.close()
    counts = (ctypes.c_longlong * 5)()
    lib.gwt_counts(counts)
    extra = "kernels=%d h2d_bytes=%d pinned_bytes=%d pageable_bytes=%d syncs=%d" % tuple(counts)
    if distributed:
        extra += " allreduces=%d overlap=%d" % (lib.gwt_allreduces(), int(not a.no_overlap))
    return {
        "step_ms": step_s * 1e3,
        "device": lib.gwt_device_name().decode(),
        "simulated": lib.gwt_simulated(),
        "worker_pids": loader.worker_pids,
        "extra": extra,
    }


# ---------------------------------------------------------------------------------------------
# The torch backend.

def run_torch(a, who, torch):
    import torch.nn as nn
    import torch.utils.data
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.skip = None
            if stride != 1 or cin != cout:
                self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

        def forward(self, x):
            y = F.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            return F.relu(y + (x if self.skip is None else self.skip(x)))

    class SmallResNet(nn.Module):  # ResNet-18's layout, for small images
        def __init__(self, classes=100):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64),
                                      nn.ReLU())
            layers, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
                cin = cout
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, classes)

        def forward(self, x):
            x = self.layers(self.stem(x))
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    class SyntheticBatches(torch.utils.data.Dataset):
        """Whole batches (DataLoader batch_size=None), made in the worker that loads them."""

        def __init__(self):
            self.base = None

        def __len__(self):
            return a.steps

        def __getitem__(self, i):
            if self.base is None:
                g = torch.Generator().manual_seed(a.seed * 1000 + who.rank)
                self.base = torch.randn(a.batch_size, 3, a.image_size, a.image_size, generator=g)
                self.labels = torch.randint(0, 100, (a.batch_size,), generator=g)
            if loader_ms > 0:
                time.sleep(loader_ms / 1000.0)
            x = self.base.clone()
            x[0, 0, 0, 0] = float(i)
            return x, self.labels.clone()

    loader_ms = loader_ms_of(a, who)
    device_count = torch.cuda.device_count()
    device = torch.device("cuda", who.local_rank % device_count)
    torch.cuda.set_device(device)
    torch.manual_seed(a.seed)
    distributed = who.world_size > 1
    if distributed and a.cuda_graphs:
        raise RuntimeError("--cuda-graphs with WORLD_SIZE > 1 is not supported (DDP's hooks)")
    if distributed:
        import torch.distributed as dist
        backend = "nccl" if device_count >= who.world_size else "gloo"
        dist.init_process_group(backend=backend)
    model = SmallResNet().to(device).to(memory_format=torch.channels_last)
    if distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[device.index])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    dtype = {"none": None, "bf16": torch.bfloat16, "fp16": torch.float16}[a.amp]
    scaler = torch.amp.GradScaler("cuda") if a.amp == "fp16" else None
    # Workers fork from this process after CUDA is up, as on Linux by default before Python
    # 3.14 (whose default is forkserver); they never touch CUDA.
    loader = torch.utils.data.DataLoader(
        SyntheticBatches(), batch_size=None, num_workers=a.num_workers, pin_memory=a.pin_memory,
        prefetch_factor=2 if a.num_workers > 0 else None,
        multiprocessing_context=worker_start_method() if a.num_workers > 0 else None)
    it = iter(loader)
    worker_pids = [w.pid for w in getattr(it, "_workers", [])]

    def forward(x, y):
        with torch.autocast("cuda", dtype=dtype or torch.bfloat16, enabled=dtype is not None,
                            cache_enabled=not a.cuda_graphs):
            return F.cross_entropy(model(x), y)

    def all_reduce_after_backward():
        # --no-overlap: one all-reduce of every gradient once the whole backward pass is done
        # (DDP's hooks were off during it, model.no_sync()), then the optimizer.
        import torch.distributed as dist
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        flat /= who.world_size
        offset = 0
        for g in grads:
            g.copy_(flat[offset:offset + g.numel()].view_as(g))
            offset += g.numel()

    def backward_step(loss):
        no_overlap = distributed and a.no_overlap
        with model.no_sync() if no_overlap else contextlib.nullcontext():
            (scaler.scale(loss) if scaler is not None else loss).backward()
        if no_overlap:
            all_reduce_after_backward()
        if who.rank == a.slow_rank and "step_s" in burn:
            slow_compute()
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()

    burn = {}

    def slow_compute():
        # --slow-rank: (F - 1) x the step's compute in extra matmuls, sized once from the measured
        # time of a warm-up step and of one matmul (approximate: a straggler, not a benchmark).
        if "count" not in burn:
            m = torch.randn(2048, 2048, device=device)
            torch.cuda.synchronize()
            begin = time.perf_counter()
            for _ in range(10):
                m @ m
            torch.cuda.synchronize()
            one = (time.perf_counter() - begin) / 10
            burn.update(m=m, count=max(1, round((a.slow_compute - 1) * burn["step_s"] / one)))
        for _ in range(burn["count"]):
            burn["m"] @ burn["m"]

    def to_device(x, y):
        x = x.to(device, non_blocking=a.pin_memory).contiguous(memory_format=torch.channels_last)
        return x, y.to(device, non_blocking=a.pin_memory)

    graph = None
    if a.cuda_graphs:
        # Whole-network capture (torch.cuda.graphs docs): warm up on a side stream, then capture
        # one step that reads static input tensors; each step copies its batch into them.
        x0, y0 = next(iter(torch.utils.data.DataLoader(SyntheticBatches(), batch_size=None)))
        static_x, static_y = to_device(x0, y0)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                backward_step(forward(static_x, static_y))
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            static_loss = forward(static_x, static_y)
            backward_step(static_loss)

    profiler = None
    if a.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        profiler = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        profiler.__enter__()
    losses = []
    t0 = None
    for step in range(a.steps):
        if step == a.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        if step == 1 and who.rank == a.slow_rank:
            torch.cuda.synchronize()
            burn["began"] = time.perf_counter()
        if step == 2 and "began" in burn and "count" not in burn:
            torch.cuda.synchronize()
            burn["step_s"] = time.perf_counter() - burn["began"]
        x, y = next(it)
        sync = a.sync_every and (step + 1) % a.sync_every == 0
        if graph is not None:
            static_x.copy_(x, non_blocking=a.pin_memory)
            static_y.copy_(y, non_blocking=a.pin_memory)
            graph.replay()
            if sync:
                losses.append(static_loss.item())
        else:
            x, y = to_device(x, y)
            loss = forward(x, y)
            if sync:
                losses.append(loss.item())  # e.g. a NaN guard or a log line after the forward
            opt.zero_grad(set_to_none=True)
            backward_step(loss)
        if profiler is not None:
            profiler.step()
    torch.cuda.synchronize()
    step_s = (time.perf_counter() - t0) / (a.steps - a.warmup)
    if profiler is not None:
        profiler.__exit__(None, None, None)
        if a.profiler_trace:
            export_trace(profiler, a.profiler_trace)
    del it
    if distributed:
        torch.distributed.destroy_process_group()
    return {
        "step_ms": step_s * 1e3,
        "device": torch.cuda.get_device_name(device),
        "simulated": 0,
        "worker_pids": worker_pids,
        "extra": "torch=%s cuda=%s" % (torch.__version__, torch.version.cuda),
    }


def export_trace(profiler, path):
    """The Kineto trace as JSON, gzip-compressed when the path ends in .gz."""
    if not path.endswith(".gz"):
        profiler.export_chrome_trace(path)
        return
    import gzip
    import shutil
    plain = path[:-3]
    profiler.export_chrome_trace(plain)
    with open(plain, "rb") as src, gzip.open(path, "wb", compresslevel=3) as dst:
        shutil.copyfileobj(src, dst)
    os.unlink(plain)


def choose_backend(a):
    """(name, torch module or None, why) for --backend."""
    if a.backend == "sim":
        return "sim", None, "--backend sim"
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no PyTorch here"
        if a.backend == "torch":
            raise RuntimeError("--backend torch: import torch failed: %s" % e)
        return "sim", None, "PyTorch not importable (%s)" % type(e).__name__
    if not torch.cuda.is_available():
        if a.backend == "torch":
            raise RuntimeError("--backend torch: torch.cuda.is_available() is False")
        return "sim", None, "PyTorch has no CUDA device"
    return "torch", torch, "PyTorch %s with CUDA" % torch.__version__


def main(argv):
    a = parse_args(argv)
    who = Identity()
    started = time.perf_counter()
    try:
        backend, torch, why = choose_backend(a)
        if a.torch_profiler and backend != "torch":
            raise RuntimeError("--torch-profiler needs the torch backend (%s)" % why)
        print("train.py: backend %s (%s), rank %d of %d%s"
              % (backend, why, who.rank, who.world_size,
                 "" if "RANK" in os.environ else " (RANK unset: one process)"),
              file=sys.stderr, flush=True)
        r = run_torch(a, who, torch) if backend == "torch" else run_sim(a, who)
    except Exception as e:  # noqa: BLE001 - one line, then a failing exit code
        print("train.py: rank %d: %s: %s" % (who.rank, type(e).__name__, e), file=sys.stderr)
        return 1
    # One write() per line: the ranks share the launcher's stdout, and a line written in pieces
    # could be split by another rank's.
    line = ('gwtrain backend=%s rank=%d local_rank=%d world_size=%d pid=%d steps=%d amp=%s '
            'pin_memory=%d num_workers=%d batch_size=%d image_size=%d sync_every=%d '
            'cuda_graphs=%d torch_profiler=%d step_ms=%.4f device="%s" simulated=%d '
            'worker_pids=%s %s wall_s=%.3f'
            % (backend, who.rank, who.local_rank, who.world_size, os.getpid(), a.steps, a.amp,
               a.pin_memory, a.num_workers, a.batch_size, a.image_size, a.sync_every,
               a.cuda_graphs, a.torch_profiler, r["step_ms"], r["device"], r["simulated"],
               ",".join(str(p) for p in r["worker_pids"]) or "-", r["extra"],
               time.perf_counter() - started))
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
