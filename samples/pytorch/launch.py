#!/usr/bin/env python3
"""Start N ranks of a training script, as `torchrun --standalone --nproc-per-node N` does.

  launch.py --nproc-per-node 2 [--stand-in] -- samples/pytorch/train.py [ARGS...]

With PyTorch installed this runs torchrun itself (python -m torch.distributed.run), so the ranks
are torchrun's workers. Without it (or with --stand-in) it is a stand-in: it spawns N processes
of `python SCRIPT ARGS` (fork + exec, like torchrun's workers) with RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT set, waits for all of them, and exits with the
first non-zero exit code (0 when every rank succeeded). As torchrun does, the first rank that fails
ends the others (SIGTERM): they would otherwise wait for it in their collectives until NCCL's
timeout. Either way the children inherit this
process's environment, so LD_PRELOAD and CUDA_INJECTION64_PATH set by `gpuwise run` reach them.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nproc-per-node", type=int, default=2)
    p.add_argument("--stand-in", action="store_true",
                   help="spawn the ranks here even when torchrun is available")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    if a.nproc_per_node < 1:
        p.error("--nproc-per-node must be >= 1")
    args = a.args[1:] if a.args[:1] == ["--"] else a.args

    if not a.stand_in:
        try:
            import torch.distributed.run  # noqa: F401 - present means torchrun works here
            cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                   "--nproc-per-node", str(a.nproc_per_node), a.script] + args
            print("launch.py: torchrun, %d ranks" % a.nproc_per_node, file=sys.stderr, flush=True)
            return subprocess.call(cmd)
        except ImportError:
            pass

    print("launch.py: stand-in launcher (no torchrun), %d ranks" % a.nproc_per_node,
          file=sys.stderr, flush=True)
    port = str(free_port())
    children = []
    for rank in range(a.nproc_per_node):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank),
                   WORLD_SIZE=str(a.nproc_per_node), LOCAL_WORLD_SIZE=str(a.nproc_per_node),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        children.append(subprocess.Popen([sys.executable, a.script] + args, env=env))

    def forward(signum, _frame):
        for c in children:
            if c.poll() is None:
                c.send_signal(signum)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    first_failure = 0
    running = list(children)
    while running:
        for c in list(running):
            code = c.poll()
            if code is None:
                continue
            running.remove(c)
            if code != 0 and first_failure == 0:
                first_failure = code
                print("launch.py: a rank exited with %d; ending the others" % code,
                      file=sys.stderr, flush=True)
                for other in running:
                    other.terminate()
        if running:
            time.sleep(0.05)
    return first_failure


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
