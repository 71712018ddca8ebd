"""MRG_RandomStreams draws Theano's numbers.

THEANO_INTEGERS holds what Theano 1.0.5's MRG_RandomStreams(seed=234) draws, as the
integers its samples are made of (sample = integer * NORM), for this sequence of calls:

    uniform((2, 3)); uniform((4, 5)); normal((5,)) (which draws 6 uniforms); uniform((100, 300))

The values were computed by tools/theano_mrg_table.py, which runs the functions of Theano's
own theano/sandbox/rng_mrg.py (taken from the 1.0.5 source distribution: its constants,
matVecModM, mrg_next_value and guess_n_streams) through MRG_RandomStreams' steps (see the
script). A float32 sample is the integer converted to float32 times 4.6566126e-10f, as
Theano's C code computes it (its Python fallback, rounding the float64 product instead,
differs in the last bit for about a quarter of the samples).
"""

from __future__ import annotations

import numpy as np
import pytest

import sympile
from sympile.sandbox.rng_mrg import MRG_RandomStreams, guess_n_streams
from sympile.tensor.random import mrg
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler

THEANO_INTEGERS = {
    "uniform (2, 3)": [966161664, 657660030, 1696158784, 1772842819, 1232927704, 210675763],
    "uniform (4, 5)": [263235764, 1036601395, 153590873, 1199301580, 1950780300, 952655009,
                       644634753, 2087819195, 478179857, 915712720, 1110391741, 1399294226,
                       407674244, 1849415757, 1452308411, 2078749235, 72179576, 81212789,
                       1617141867, 602071362],
    "normal (5,)": [1540931131, 1889280817, 1602145577, 160982554, 959687876, 1508843442],
    # elements 0, 4999, 5000 and 29999 (5000 streams: the first and the last stream)
    "uniform (100, 300)": [1207541064, 975104361, 793456988, 743965434],
}
NORM64 = 4.656612873077392578125e-10
NORM32 = np.float32(4.6566126e-10)

BACKENDS = [pytest.param(PYTHON_MODE, id="python"),
            pytest.param(C_MODE, id="c", marks=requires_compiler)]


@pytest.mark.parametrize("mode", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_theano_numbers(dtype, mode):
    rng = MRG_RandomStreams(seed=234)
    small, medium = rng.uniform((2, 3), dtype=dtype), rng.uniform((4, 5), dtype=dtype)
    normal = rng.normal((5,), dtype=dtype)
    large = rng.uniform((100, 300), dtype=dtype)
    small, medium, normal, large = sympile.function([], [small, medium, normal, large],
                                                    mode=mode)()

    def expected(name):
        integers = np.array(THEANO_INTEGERS[name])
        if dtype == "float32":
            return integers.astype(np.float32) * NORM32
        return integers * NORM64

    np.testing.assert_array_equal(small.ravel(), expected("uniform (2, 3)"))
    np.testing.assert_array_equal(medium.ravel(), expected("uniform (4, 5)"))
    np.testing.assert_array_equal(large.ravel()[[0, 4999, 5000, 29999]],
                                  expected("uniform (100, 300)"))
    # Box-Muller on the 6 uniforms: first half r cos(theta), second half r sin(theta).
    u = expected("normal (5,)")
    radius = np.sqrt(np.asarray(-2.0, dtype) * np.log(u[:3]))
    theta = np.asarray(2 * np.pi, dtype) * u[3:]
    reference = np.concatenate([radius * np.cos(theta), radius * np.sin(theta)])[:5]
    np.testing.assert_allclose(normal, reference, rtol=1e-6 if dtype == "float32" else 1e-13)


def test_stream_count_and_jumps():
    """Theano's guess_n_streams, and substreams computed by doubling equal to stepping one
    2**72 jump at a time (matVecModM's definition)."""
    assert guess_n_streams((2, 3)) == 6 and guess_n_streams((4, 5)) == 3
    assert guess_n_streams((1000, 1000)) == 60 * 256 and guess_n_streams((5,)) == 5
    symbolic = sympile.tensor.lvector("size")
    assert guess_n_streams(symbolic, warn=False) == 60 * 256
    with pytest.warns(UserWarning, match="cannot tell the number of streams from size"):
        assert guess_n_streams(symbolic, warn=True) == 60 * 256
    start = np.array([12345] * 6, np.int32)
    doubled = mrg.substreams(start, 37)
    stepped = [start.astype(np.int64)]
    for _ in range(36):
        previous = stepped[-1]
        stepped.append(np.concatenate([
            (mrg._A1P72 * previous[:3]).__mod__(mrg.M1).sum(axis=1) % mrg.M1,
            (mrg._A2P72 * previous[3:]).__mod__(mrg.M2).sum(axis=1) % mrg.M2]))
    np.testing.assert_array_equal(doubled, np.array(stepped, np.int32))


@requires_compiler
def test_c_and_python_agree_on_every_mrg_draw():
    rng = MRG_RandomStreams(seed=7)
    pvals = np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]], np.float32)
    outputs = [rng.uniform((33, 7)), rng.normal((101,), avg=2.0, std=0.5),
               rng.truncated_normal((50,)), rng.binomial((20,), p=0.3),
               rng.multinomial(pvals=pvals, n=5), rng.choice(size=2, replace=False, p=pvals),
               rng.choice(size=3, replace=False, p=pvals.astype(np.float64))]
    c_values = sympile.function([], outputs, mode=C_MODE, no_default_updates=True)()
    python_values = sympile.function([], outputs, mode=PYTHON_MODE, no_default_updates=True)()
    for index, (c_value, reference) in enumerate(zip(c_values, python_values)):
        assert c_value.dtype == reference.dtype, index
        if index in (1, 2):
            np.testing.assert_allclose(c_value, reference, rtol=1e-5, err_msg=str(index))
        else:
            np.testing.assert_array_equal(c_value, reference, err_msg=str(index))


def test_theano_choice_and_multinomial_semantics():
    """MultinomialFromUniform counts a draw where the running sum first exceeds its uniform;
    ChoiceFromUniform zeroes the chosen entry and renormalises."""
    pvals = np.array([[0.2, 0.3, 0.5]])
    counts = mrg.multinomial_from_uniform(pvals, np.array([0.1, 0.45, 0.95, 0.6]), 4)
    np.testing.assert_array_equal(counts, [[1, 1, 2]])
    chosen = mrg.choice_from_uniform(pvals, np.array([0.6, 0.5]), 2)
    # 0.6 picks 2 (0.2 + 0.3 <= 0.6); left [0.4, 0.6]: 0.5 picks 1.
    np.testing.assert_array_equal(chosen, [[2, 1]])
    with pytest.raises(ValueError, match="cannot take 4 samples without replacement"):
        mrg.choice_from_uniform(pvals, np.zeros(4), 4)
