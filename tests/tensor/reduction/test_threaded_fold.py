"""Long contiguous folds on several threads (careduce_c.threaded_fold, for CAReduce and
FusedCAReduce): the same bits as on one thread, since the threads fold the halves of the same
pairwise tree; an error flag raised in any half still reaches the caller."""

from __future__ import annotations

import numpy as np
import pytest

import sympile.tensor as T
from sympile.config import config
from tests.link.c.utils import compile_c, requires_compiler

pytestmark = requires_compiler

# Above config.openmp_elemwise_minsize, with a tail that is not a whole block.
LENGTH = 1_000_003


def _both(inputs, output, values):
    """The output computed by a module with OpenMP and by one without."""
    results = []
    for openmp in (True, False):
        with config.change_flags(openmp=openmp):
            results.append(compile_c(inputs, output)(*values))
    return results


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
def test_a_threaded_sum_has_the_bits_of_a_serial_one(dtype):
    rng = np.random.default_rng(3)
    if dtype.startswith("float"):
        value = (rng.standard_normal(LENGTH) * 10.0 ** rng.integers(-3, 4, LENGTH)).astype(dtype)
    else:
        value = rng.integers(0, 200, LENGTH).astype(dtype)
    x = T.vector("x", dtype=dtype)
    for output in (x.sum(), x.mean(), (x * x).sum(), T.exp(x / 1e4).sum() if
                   dtype.startswith("float") else (x * 3).sum()):
        threaded, serial = _both([x], output, [value])
        assert threaded.tobytes() == serial.tobytes(), (output, threaded, serial)
    np.testing.assert_allclose(compile_c([x], x.sum())(value), value.sum(dtype=x.sum().dtype),
                               rtol=1e-5 if dtype == "float32" else 1e-12)


def test_a_threaded_product_has_the_bits_of_a_serial_one():
    value = 1 + np.random.default_rng(4).standard_normal(LENGTH) * 1e-6
    x = T.dvector("x")
    threaded, serial = _both([x], x.prod(), [value])
    assert threaded.tobytes() == serial.tobytes()
    np.testing.assert_allclose(threaded, np.prod(value), rtol=1e-10)


def test_an_error_in_any_half_is_raised():
    """x ** y of integers with a negative power in the last block, or the first: the flag
    set by whichever thread folds it."""
    x, y = T.lvector("x"), T.lvector("y")
    function = compile_c([x, y], (x ** y).sum())
    base, power = np.full(LENGTH, 2, "int64"), np.ones(LENGTH, "int64")
    assert function(base, power) == 2 * LENGTH
    for where in (0, LENGTH // 2, LENGTH - 1):
        negative = power.copy()
        negative[where] = -1
        with pytest.raises(ValueError, match="Integers to negative integer powers"):
            function(base, negative)
