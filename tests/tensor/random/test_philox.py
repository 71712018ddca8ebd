"""RandomStreams' generator: Philox4x32-10's known answers, the C samplers against the numpy
reference (philox.py) on every distribution and dtype, and results that do not depend on
the number of threads."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import sympile
from sympile.tensor.random import RandomStreams, philox
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler


def test_philox_known_answers():
    """Random123's known-answer vectors for philox4x32-10 (counter, key -> output)."""
    cases = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
             ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2,
              (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
             ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
              (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for counter, key, expected in cases:
        words = philox.philox4x32([counter[0]], [counter[1]], key[0] | key[1] << 32,
                                  counter[2] | counter[3] << 32)
        assert tuple(int(w[0]) for w in words) == expected


def _all_draws(stream: RandomStreams, dtype: str) -> list:
    """One variable of each distribution (several shapes and parameter kinds)."""
    return [
        stream.uniform((3, 7), low=-1.0, high=2.0, dtype=dtype),
        stream.normal((2, 9), avg=1.0, std=3.0, dtype=dtype),
        stream.normal((5,), dtype=dtype),  # an odd count: half a Box-Muller pair is left
        stream.truncated_normal((11,), dtype=dtype),
        stream.binomial((40,), n=5, p=0.3),
        stream.binomial((30,), n=np.arange(30) * 40, p=np.linspace(0.0, 1.0, 30)),
        stream.binomial((17,), n=1, p=0.5, dtype="int8"),
        stream.poisson((40,), lam=np.linspace(0.0, 60.0, 40)),
        stream.random_integers((25,), low=-3, high=np.arange(25)),
        stream.random_integers((6,), low=-2**62, high=2**62),
        stream.choice((12,), a=5, p=[0.1, 0.0, 0.4, 0.3, 0.2]),
        stream.choice((7,), a=9, replace=False),
        stream.choice((3,), a=np.array([10, 20, 30, 40]), replace=False, p=[0.1, 0.2, 0.3, 0.4]),
        stream.choice((2, 3), a=4),
        stream.permutation((3,), n=6),
        stream.multinomial((4,), n=np.array([0, 1, 10, 1000]), pvals=[0.2, 0.5, 0.3]),
        stream.multinomial(n=7, pvals=np.full((2, 4), 0.25)),
    ]


@requires_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_c_draws_what_the_reference_draws(dtype):
    """Integer draws, float32 uniforms and float32 normals (the fast logf and sincosf and
    their numpy twins) equal bit for bit: a function gives the same numbers before and after
    its C is compiled; float64 draws equal to a few ulps (libm against numpy's log, sin,
    cos)."""
    stream = RandomStreams(seed=99)
    outputs = _all_draws(stream, dtype)
    # No default updates: both functions draw from the same states.
    c_function = sympile.function([], outputs, mode=C_MODE, no_default_updates=True)
    assert c_function._vm.fallback_nodes == []
    python_function = sympile.function([], outputs, mode=PYTHON_MODE, no_default_updates=True)
    for draws in (0, 2**40 + 3):  # the second time with high counter words
        for state, _ in stream.state_updates:
            key = state.get_value()[0]
            state.set_value(np.array([key, draws], np.uint64))
        for index, (c_value, reference) in enumerate(zip(c_function(), python_function())):
            assert c_value.dtype == reference.dtype and c_value.shape == reference.shape
            if c_value.dtype.kind == "f" and not (dtype == "float32" and index < 3):
                np.testing.assert_allclose(c_value, reference, rtol=2e-6, atol=2e-6,
                                           err_msg=f"output {index}, draws {draws}")
            else:
                np.testing.assert_array_equal(c_value, reference,
                                              err_msg=f"output {index}, draws {draws}")


_THREADS_SCRIPT = """
import json, sys
import numpy as np
import sympile
from sympile.config import config
from sympile.tensor.random import RandomStreams, MRG_RandomStreams
config.compiledir = sys.argv[1]
config.openmp_elemwise_minsize = 64
stream, mrg = RandomStreams(seed=5), MRG_RandomStreams(seed=5)
outputs = [stream.uniform((100_003,), dtype="float32"), stream.normal((5001,)),
           stream.binomial((4001,), n=50, p=0.4), stream.poisson((3001,), lam=30.0),
           stream.permutation((257,), n=9), stream.multinomial((300,), n=20,
           pvals=[0.5, 0.25, 0.25]), mrg.uniform((60_000,), dtype="float32")]
values = sympile.function([], outputs, mode="FAST_RUN")()
print(json.dumps([float(np.asarray(v, "float64").sum()) for v in values]
                 + [float(np.asarray(v, "float64")[:50].sum()) for v in values]))
"""


@requires_compiler
@pytest.mark.slow
def test_results_do_not_depend_on_the_thread_count(tmp_path):
    """The same draws under OMP_NUM_THREADS=1, 2 and 3, above the threading threshold."""
    results = []
    for threads in (1, 2, 3):
        environment = dict(os.environ, OMP_NUM_THREADS=str(threads))
        output = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT, str(tmp_path / "cache")],
                                capture_output=True, text=True, env=environment, check=True,
                                timeout=600)
        results.append(json.loads(output.stdout.strip().splitlines()[-1]))
    assert results[0] == results[1] == results[2]
