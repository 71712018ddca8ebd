"""Data-parallel MLP steps on 1 and 2 processes: sympile.distributed (MPI) against
torch.distributed (gloo) on the same split, float32.

For each model (784-500-10, 784-1000x3-10) and global batch (60, 600): the seconds of one
SGD step on one process with the whole batch, and on each of 2 processes with half of it
(the gradients averaged across them); the scaling (1-process time / 2-process time); and,
for sympile, the time of the all-reduce of the step's gradients alone (one bucket of all
the parameters), its share of the 2-process step and its cost per megabyte.

    sympile-bench distributed [--compare torch] [--repeats 5]

Needs mpi4py and mpiexec (`pip install '.[mpi]'`); this machine has 2 cores, so 2
processes share them with nothing left over.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

MODELS = {"784-500-10": [784, 500, 10], "784-1000x3-10": [784, 1000, 1000, 1000, 10]}
BATCHES = (60, 600)
STEPS = 10
LEARNING_RATE = np.float32(0.01)


def _data(batch: int, rank: int, size: int):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = rng.integers(0, 10, batch)
    share = batch // size
    return x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share]


def _weights(layers: list[int]):
    rng = np.random.default_rng(1)
    params = []
    for fan_in, fan_out in zip(layers, layers[1:]):
        params += [(rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32),
                   np.zeros(fan_out, np.float32)]
    return params


def _median_seconds(run, repeats: int) -> float:
    import time
    run()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return float(np.median(samples))


def sympile_worker(model: str, batch: int, repeats: int, bucket_mb: float | None) -> dict:
    import sympile
    import sympile.tensor as T
    from sympile import distributed
    distributed.init()
    rank, size = distributed.rank(), distributed.size()
    x_value, y_value = _data(batch, rank, size)
    params = [sympile.shared(value) for value in _weights(MODELS[model])]
    parallel = distributed.DataParallel(
        params, bucket_bytes=None if bucket_mb is None else int(bucket_mb * 1e6))
    x, y = T.fmatrix("x"), T.lvector("y")
    h = x
    for index in range(0, len(params) - 2, 2):
        h = T.tanh(T.dot(h, params[index]) + params[index + 1])
    p = T.nnet.softmax(T.dot(h, params[-2]) + params[-1])
    cost = -T.log(p[T.arange(y.shape[0]), y]).mean()
    step = sympile.function([x, y], cost, updates=parallel.sgd_updates(cost, LEARNING_RATE))
    step.trust_input = True

    def run():
        for _ in range(STEPS):
            step(x_value, y_value)
    seconds = _median_seconds(run, repeats) / STEPS
    count = sum(value.size for value in _weights(MODELS[model]))
    bucket = T.fvector("bucket")
    reduce = sympile.function([bucket], distributed.all_reduce(bucket, "mean"))
    buffer = np.ones(count, np.float32)
    reduce.trust_input = True

    def reduce_steps():
        for _ in range(STEPS):
            reduce(buffer)   # the result dropped, as the step drops its bucket
    reduce_seconds = _median_seconds(reduce_steps, repeats) / STEPS
    return {"step": seconds, "all_reduce": reduce_seconds, "megabytes": count * 4 / 1e6}


def torch_worker(model: str, batch: int, repeats: int) -> dict:
    import torch
    import torch.distributed as dist
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=size)
    torch.set_num_threads(max(1, 2 // size))
    x_value, y_value = _data(batch, rank, size)
    x, y = torch.from_numpy(x_value), torch.from_numpy(y_value)
    params = [torch.from_numpy(value).requires_grad_() for value in _weights(MODELS[model])]

    def step():
        h = x
        for index in range(0, len(params) - 2, 2):
            h = torch.tanh(h @ params[index] + params[index + 1])
        loss = torch.nn.functional.cross_entropy(h @ params[-2] + params[-1], y)
        for p in params:
            p.grad = None
        loss.backward()
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        if size > 1:
            dist.all_reduce(flat)
            flat /= size
        with torch.no_grad():
            start = 0
            for p in params:
                p -= float(LEARNING_RATE) * flat[start:start + p.numel()].reshape(p.shape)
                start += p.numel()

    def run():
        for _ in range(STEPS):
            step()
    seconds = _median_seconds(run, repeats) / STEPS
    dist.destroy_process_group()
    return {"step": seconds}


def _mpiexec() -> str:
    beside = Path(sys.executable).parent / "mpiexec"
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        raise SystemExit("sympile-bench distributed needs mpiexec: pip install '.[mpi]'")
    return found


def _launch(library: str, processes: int, model: str, batch: int, repeats: int,
            bucket_mb: float) -> dict:
    arguments = ["-m", __spec__.name, "--worker", library, "--model", model,
                 "--batch", str(batch), "--repeats", str(repeats)]
    if library == "sympile":
        arguments += ["--bucket-mb", str(bucket_mb)]
        command = [_mpiexec(), "-n", str(processes), sys.executable, *arguments]
        results = subprocess.run(command, capture_output=True, text=True, check=True)
        return json.loads(results.stdout.strip().splitlines()[-1])
    outputs = []
    children = []
    for rank in range(processes):
        environment = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(processes),
                           MASTER_ADDR="127.0.0.1", MASTER_PORT="29533")
        children.append(subprocess.Popen([sys.executable, *arguments], env=environment,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True))
    for child in children:
        stdout, stderr = child.communicate(timeout=600)
        if child.returncode != 0:
            raise RuntimeError(f"torch worker failed: {stderr[-500:]}")
        outputs.append(stdout)
    return json.loads(outputs[0].strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", default="torch",
                        help="peers, comma-separated: torch (torch.distributed, gloo) or '' "
                             "(default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed repeats of 10 steps; the median is reported (default: "
                             "%(default)s)")
    parser.add_argument("--bucket-mb", type=float, default=4.194304,
                        help="sympile's DataParallel bucket_bytes, in MB; 0: one bucket "
                             "(no overlap with the backward pass) (default: %(default)s)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker:
        if arguments.worker == "sympile":
            result = sympile_worker(arguments.model, arguments.batch, arguments.repeats,
                                    arguments.bucket_mb or None)
        else:
            result = torch_worker(arguments.model, arguments.batch, arguments.repeats)
        if arguments.worker == "torch" and os.environ.get("RANK") != "0":
            return
        if arguments.worker == "sympile":
            from sympile import distributed
            if distributed.rank() != 0:
                return
        print(json.dumps(result))
        return
    libraries = ["sympile"] + [name for name in arguments.compare.split(",") if name]
    print(f"float32, {STEPS} steps per timing; seconds per step; scaling = 1 process / 2")
    for model in MODELS:
        for batch in BATCHES:
            cells = []
            for library in libraries:
                try:
                    one = _launch(library, 1, model, batch, arguments.repeats,
                                  arguments.bucket_mb)
                    two = _launch(library, 2, model, batch, arguments.repeats,
                                  arguments.bucket_mb)
                except (subprocess.CalledProcessError, RuntimeError, ImportError) as error:
                    cells.append(f"{library}: failed ({str(error)[:80]})")
                    continue
                cell = (f"{library} {one['step'] * 1e3:7.2f} -> {two['step'] * 1e3:7.2f} ms "
                        f"({one['step'] / two['step']:.2f}x)")
                if "all_reduce" in two:
                    cell += (f", all-reduce {two['all_reduce'] * 1e3:.2f} ms of "
                             f"{two['megabytes']:.1f} MB ({two['all_reduce'] / two['step']:.0%}"
                             f" of the step, {two['all_reduce'] * 1e3 / two['megabytes']:.2f}"
                             f" ms/MB)")
                cells.append(cell)
            print(f"{model:14s} batch {batch:4d}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
