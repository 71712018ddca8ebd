"""sympile.distributed under `mpiexec -n 2` and `-n 3` (loopback): collectives' values and
gradients (checked by finite differences of the sum of every rank's cost), a
data-parallel step against one process on the whole batch, and the fault cases: a rank
that raises, one that dies, one that never joins, and ranks whose models differ."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.link.c.utils import address_sanitizer_environment, requires_compiler

REPOSITORY = Path(__file__).resolve().parent.parent.parent


def _mpiexec() -> str | None:
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


def _mpi_missing() -> str | None:
    """Why MPI programs cannot run here (None when they can): no mpi4py, no mpiexec, or an
    mpiexec that cannot start two processes on this machine."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "needs mpi4py (pip install '.[mpi]')"
    if _mpiexec() is None:
        return "needs mpiexec (pip install '.[mpi]')"
    try:
        probe = subprocess.run([_mpiexec(), "-n", "2", sys.executable, "-c",
                                "from mpi4py import MPI; MPI.COMM_WORLD.Barrier()"],
                               capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "mpiexec -n 2 did not finish a barrier in 60 s on this machine"
    if probe.returncode != 0:
        return f"mpiexec -n 2 fails on this machine: {(probe.stderr or probe.stdout)[-300:]}"
    return None


MISSING = _mpi_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def launch(arguments: list[str], ranks: int, timeout: float = 120,
           environment: dict[str, str] | None = None):
    """`python arguments...` on `ranks` processes (in `environment`, else this one's with
    the repository on the path); (return code, output, seconds)."""
    environment = environment or dict(os.environ, PYTHONPATH=str(REPOSITORY))
    start = time.monotonic()
    result = subprocess.run([_mpiexec(), "-n", str(ranks), sys.executable, *arguments],
                            cwd=REPOSITORY, env=environment, capture_output=True, text=True,
                            timeout=timeout)
    return result.returncode, result.stdout + result.stderr, time.monotonic() - start


def run_ranks(program: str, ranks: int, tmp_path, timeout: float = 120,
              arguments: tuple[str, ...] = (), environment: dict[str, str] | None = None):
    """Runs the Python source `program` on `ranks` processes, with command-line `arguments`
    (see launch)."""
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(program))
    return launch([str(script), *arguments], ranks, timeout, environment)


COLLECTIVES = """
import sys, numpy as np, sympile, sympile.tensor as T
from sympile import distributed as D
from sympile.distributed.collectives import CollectiveOp
D.init(timeout=60)
rank, size = D.rank(), D.size()
# 'mixed': the odd ranks run the collectives' C code, the even ones their perform().
backend = {"c": "c", "python": "python", "mixed": "python" if rank % 2 == 0 else "c"}[
    sys.argv[1]]
sympile.config.backend = backend
x = T.dvector("x")
mine = np.random.default_rng(rank).normal(size=3)
everyone = [np.random.default_rng(r).normal(size=3) for r in range(size)]
f = sympile.function([x], [D.all_reduce(x), D.all_reduce(x, "mean"), D.all_reduce(x, "max"),
                           D.all_reduce(x, "min"), D.all_gather(x[:rank + 1]),
                           D.broadcast(x, size - 1)])
if backend == "c":
    assert not any(isinstance(n.op, CollectiveOp) for n in f._vm.fallback_nodes)
got = f(mine)
expected = [sum(everyone), sum(everyone) / size, np.max(everyone, 0), np.min(everyone, 0),
            np.concatenate([e[:r + 1] for r, e in enumerate(everyone)]), everyone[-1]]
for g, e in zip(got, expected):
    np.testing.assert_allclose(g, e, rtol=1e-12)

# A bucket: several tensors in one collective, each reduced as on its own.
m = T.dmatrix("m")
bucket = sympile.function([x, m], D.all_reduce([x, m, x[0]], "mean")
                          + D.all_reduce([x * 2, m], "max"))
matrix = np.random.default_rng(10 + rank).normal(size=(2, 3))
matrices = [np.random.default_rng(10 + r).normal(size=(2, 3)) for r in range(size)]
got = bucket(mine, matrix)
expected = [sum(everyone) / size, sum(matrices) / size, sum(e[0] for e in everyone) / size,
            2 * np.max(everyone, 0), np.max(matrices, 0)]
for g, e in zip(got, expected):
    np.testing.assert_allclose(g, e, rtol=1e-12)

# Strided inputs (the C code packs them), float32 and int64, reduced, gathered, broadcast.
m32, counts = T.fmatrix("m32"), T.lvector("counts")
strided = sympile.function([m32, counts], D.all_reduce([m32.T, m32[:, ::2]], "mean") + [
    D.all_reduce(counts), D.all_reduce(counts, "max"), D.all_gather(m32.T),
    D.broadcast(m32.T, 0)])
values = [np.random.default_rng(20 + r).normal(size=(3, 4)).astype("float32")
          for r in range(size)]
integers = [np.arange(5) * (r + 1) - 3 for r in range(size)]
got = strided(values[rank], integers[rank])
expected = [sum(v.T for v in values) / size, sum(v[:, ::2] for v in values) / size,
            sum(integers), np.max(integers, 0), np.concatenate([v.T for v in values]),
            values[0].T]
for g, e in zip(got, expected):
    assert g.dtype == e.dtype, (g.dtype, e.dtype)
    np.testing.assert_allclose(g, e, rtol=1e-6)
# Nothing to overlap: the all-reduce stays one node (split_all_reduce leaves it).
alone = sympile.function([m32], D.all_reduce(m32.T, "mean"))
assert [type(n.op).__name__ for n in alone._vm.nodes] == ["DimShuffle", "AllReduce"]
np.testing.assert_allclose(alone(values[rank]), sum(v.T for v in values) / size, rtol=1e-6)

# In a lazy branch, a split all-reduce runs only when its branch is taken: the untaken
# calls start nothing (65 of them would fill a module's 64 slots of collectives in flight).
from sympile.ifelse import ifelse
branch = D.all_reduce(x).sum() + (x * 2).sum()
lazy = sympile.function([x], ifelse(x.sum() > 0, branch, x.sum() * 0 - 1))
if backend == "c":
    assert "AllReduceStart" in [type(n.op).__name__ for n in lazy._vm.nodes]
for taken in (True,) + (False,) * 65 + (True,):
    got = float(lazy(np.abs(mine) if taken else -np.abs(mine)))
    expected = (sum(np.abs(e) for e in everyone).sum() + 2 * np.abs(mine).sum() if taken
                else -1.0)
    assert abs(got - expected) < 1e-9, (got, expected)

# Gradients: of the sum of every rank's cost, by central differences, every rank taking
# part in each evaluation (the cost has collectives in it).
cost = ((D.all_reduce(x) ** 2).sum() + (D.all_reduce(x, "max") * x).sum()
        + (D.all_gather(x[:2]) ** 3).sum() + (D.broadcast(x, 0) * x).sum()
        + D.all_reduce(x, "mean").sum() ** 2
        + sum((b ** 2).sum() for b in D.all_reduce([x, x[1:] * x[0]], "sum"))
        + sum((b * x[:b.shape[0]]).sum() for b in D.all_reduce([x, x[:2]], "max")))
total = D.all_reduce(cost)
value = sympile.function([x], total)
gradient = sympile.function([x], sympile.grad(cost, x))(mine)
eps = 1e-6
for r in range(size):
    for i in range(3):
        shifted = []
        for sign in (1, -1):
            point = mine.copy()
            if rank == r:
                point[i] += sign * eps
            shifted.append(float(value(point)))
        numeric = (shifted[0] - shifted[1]) / (2 * eps)
        if rank == r:
            assert abs(numeric - gradient[i]) < 1e-5 * max(1, abs(numeric)), \\
                (rank, i, numeric, gradient[i])
print(f"rank {rank} ok")
"""


@pytest.mark.parametrize(("ranks", "backend"), [(2, "c"), (3, "c"), (2, "python"),
                                               (3, "mixed")])
def test_collectives_values_and_gradients(ranks, backend, tmp_path):
    code, output, _ = run_ranks(COLLECTIVES, ranks, tmp_path, arguments=[backend])
    assert code == 0, output
    assert all(f"rank {r} ok" in output for r in range(ranks))


@requires_compiler
@pytest.mark.slow
@pytest.mark.parametrize("program", ["collectives", "data parallel"])
def test_collectives_c_is_clean_under_address_sanitizer(program, tmp_path):
    """The collectives' C (collectives.c, in_flight.c) built with -fsanitize=address, on 3
    ranks: AddressSanitizer reports nothing."""
    environment = address_sanitizer_environment()
    source, arguments = {"collectives": (COLLECTIVES, ["c"]),
                         "data parallel": (DATA_PARALLEL, [])}[program]
    code, output, _ = run_ranks(source, 3, tmp_path, timeout=900, arguments=arguments,
                                environment=environment)
    assert "AddressSanitizer" not in output, output[-4000:]
    assert code == 0, output[-4000:]
    assert all(f"rank {r} ok" in output for r in range(3)), output[-4000:]


DATA_PARALLEL = """
import os, numpy as np, sympile, sympile.tensor as T
from sympile import distributed as D
D.init(timeout=60)
rank, size = D.rank(), D.size()
rng = np.random.default_rng(0)
data = rng.normal(size=(60, 8)).astype("float64")
labels = rng.integers(0, 3, 60)


def model(seed):
    init = np.random.default_rng(seed)
    return [sympile.shared(init.normal(size=(8, 16)) * 0.3, name="W1"),
            sympile.shared(np.zeros(16), name="b1"),
            sympile.shared(init.normal(size=(16, 3)) * 0.3, name="W2"),
            sympile.shared(np.zeros(3), name="b2")]


def cost_of(params, x, y):
    h = T.tanh(T.dot(x, params[0]) + params[1])
    p = T.nnet.softmax(T.dot(h, params[2]) + params[3])
    return -T.log(p[T.arange(y.shape[0]), y]).mean()


# One process's SGD step (rate 0.5) on the batch it is given.
def plain_sgd_step(params):
    cost = cost_of(params, x, y)
    return sympile.function([x, y], cost, updates=[
        (p, p - 0.5 * g) for p, g in zip(params, sympile.grad(cost, params))])


x, y = T.dmatrix("x"), T.lvector("y")
# Every rank starts from a different draw: DataParallel takes rank 0's.
params = model(seed=rank + 1)
parallel = D.DataParallel(params)
cost = cost_of(params, x, y)
step = sympile.function([x, y], cost, updates=parallel.sgd_updates(cost, 0.5, momentum=0.9))
share = 60 // size
for _ in range(5):
    step(data[rank * share:(rank + 1) * share], labels[rank * share:(rank + 1) * share])

# One process, the whole batch (no collective: size 1 would not average).
single = model(seed=1)
single_cost = cost_of(single, x, y)
grads = sympile.grad(single_cost, single)
velocities = [sympile.shared(np.zeros_like(p.get_value())) for p in single]
updates = []
for p, g, v in zip(single, grads, velocities):
    updates += [(v, 0.9 * v - 0.5 * g), (p, p + 0.9 * v - 0.5 * g)]
reference = sympile.function([x, y], single_cost, updates=updates)
for _ in range(5):
    reference(data, labels)
for p, q in zip(params, single):
    np.testing.assert_allclose(p.get_value(), q.get_value(), rtol=1e-9, atol=1e-12)

# Unequal shares (10, 20, 30 rows...; the last rank takes the rest), weighted by batch size:
# again the whole batch's step.
bounds = [0] + [10 * r * (r + 1) // 2 for r in range(1, size)] + [60]
mine = slice(bounds[rank], bounds[rank + 1])
weighted_params = model(seed=rank + 1)
weighted = D.DataParallel(weighted_params, bucket_bytes=500)  # buckets of 1-2 parameters
weighted_cost = cost_of(weighted_params, x, y)
weighted_step = sympile.function([x, y], weighted_cost, updates=weighted.sgd_updates(
    weighted_cost, 0.5, batch_size=x.shape[0]))
plain = model(seed=1)
plain_step = plain_sgd_step(plain)
for _ in range(3):
    weighted_step(data[mine], labels[mine])
    plain_step(data, labels)
for p, q in zip(weighted_params, plain):
    np.testing.assert_allclose(p.get_value(), q.get_value(), rtol=1e-9, atol=1e-12)
# One bucket per parameter: each all-reduce starts as soon as its gradient is computed,
# before the backward pass's last product, and is waited for after it. Same result.
split_params = model(seed=rank + 1)
split = D.DataParallel(split_params, bucket_bytes=1)
split_cost = cost_of(split_params, x, y)
split_step = sympile.function([x, y], split_cost,
                              updates=split.sgd_updates(split_cost, 0.5))
names = [type(n.op).__name__ for n in split_step._vm.nodes]
starts = [i for i, name in enumerate(names) if name == "AllReduceStart"]
waits = [i for i, name in enumerate(names) if name == "AllReduceWait"]
products = [i for i, name in enumerate(names) if name.startswith(("Dot", "Gemm", "Gemv"))]
assert len(starts) == len(waits) == 4, names
assert min(starts) < max(products) < min(waits) and max(starts) < min(waits), names
plain = model(seed=1)
plain_step = plain_sgd_step(plain)
for _ in range(3):
    split_step(data[rank * share:(rank + 1) * share], labels[rank * share:(rank + 1) * share])
    plain_step(data, labels)
for p, q in zip(split_params, plain):
    np.testing.assert_allclose(p.get_value(), q.get_value(), rtol=1e-9, atol=1e-12)
checkpoint = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.npz")
parallel.save(checkpoint)
saved = np.load(checkpoint)
for p in params:
    np.testing.assert_array_equal(saved[p.name], p.get_value())
print(f"rank {rank} ok")
"""


@pytest.mark.parametrize("ranks", [2, 3])
def test_data_parallel_step_matches_one_process_on_the_whole_batch(ranks, tmp_path):
    code, output, _ = run_ranks(DATA_PARALLEL, ranks, tmp_path)
    assert code == 0, output
    assert all(f"rank {r} ok" in output for r in range(ranks))


FAULTS = {
    "raises": ("""
        if D.rank() == 1:
            raise RuntimeError("rank 1 breaks")
        f(np.ones(3))
        """, "rank 1 breaks"),
    "dies": ("""
        if D.rank() == 1:
            os._exit(3)
        f(np.ones(3))
        """, ""),
    "never joins": ("""
        if D.rank() == 1:
            time.sleep(60)
        f(np.ones(3))
        """, "waited 3 s for the other ranks"),
    "never joins a split all-reduce": ("""
        split = sympile.function([x], [D.all_reduce(x), x * 2])
        assert "AllReduceWait" in [type(n.op).__name__ for n in split._vm.nodes]
        if D.rank() == 1:
            time.sleep(60)
        split(np.ones(3))
        """, "all_reduce(sum): rank 0 of 2 waited 3 s for the other ranks"),
    "gathered arrays differ": ("""
        g = sympile.function([x], D.all_gather(x.reshape((1, -1))))
        g(np.ones(3 + D.rank()))
        """, "the ranks' arrays differ past the first axis: rank 0's axis 1 is 3 long"),
    "different models": ("""
        D.DataParallel([sympile.shared(np.zeros((3, 4 + D.rank())), name="W")])
        """, "parameter W is (3, 4) float64 on rank 0 but W is (3, 5) float64 on rank 1"),
}


@pytest.mark.parametrize("case", sorted(FAULTS))
def test_faults_end_the_job_with_a_clear_error(case, tmp_path):
    body, message = FAULTS[case]
    program = ("import os, time, numpy as np, sympile, sympile.tensor as T\n"
               "from sympile import distributed as D\n"
               "D.init(timeout=3)\n"
               "x = T.dvector('x')\n"
               "f = sympile.function([x], D.all_reduce(x))\n" + textwrap.dedent(body))
    code, output, seconds = run_ranks(program, 2, tmp_path, timeout=60)
    assert code != 0, output
    assert message in output, output
    assert seconds < 30, f"the job took {seconds:.0f} s to end"


def test_data_parallel_example_trains_on_two_ranks(tmp_path):
    checkpoint, plot = tmp_path / "model.npz", tmp_path / "loss.png"
    code, output, _ = launch(["examples/data_parallel_mlp.py", "--epochs", "5",
                              "--checkpoint", str(checkpoint), "--plot", str(plot)], 2,
                             timeout=300)
    assert code == 0, output
    summary = [line for line in output.splitlines() if line.startswith("2 ranks")]
    assert len(summary) == 1, output  # rank 0 alone reports
    assert float(summary[0].rsplit("test accuracy ", 1)[1].split(";")[0]) > 0.9
    import numpy as np
    with np.load(checkpoint) as saved:
        assert sorted(saved.files) == ["W1", "W2", "b1", "b2"]
    assert plot.stat().st_size > 1000
