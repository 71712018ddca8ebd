"""get_canonical_form_slice (Theano's): every slice of every small axis, with symbolic and
constant bounds and steps, selects numpy's elements as an increasing slice and a direction."""

import itertools

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.tensor.subtensor import get_canonical_form_slice

BOUNDS = [None, -8, -5, -1, 0, 1, 4, 5, 8]


def _compiled(theslice, length):
    (canonical, direction) = get_canonical_form_slice(theslice, length)
    return [T.as_tensor_variable(v) for v in (canonical.start, canonical.stop, canonical.step,
                                              direction)]


def _check(values, length, want):
    start, stop, step, direction = (int(v) for v in values)
    assert 0 <= start <= stop <= length and step > 0 and direction in (1, -1)
    got = np.arange(length)[start:stop:step][::direction]
    np.testing.assert_array_equal(got, want)


def test_symbolic_bounds_and_step():
    start, stop, step, length = (T.iscalar(name) for name in "abcl")
    f = sympile.function([start, stop, step, length],
                         _compiled(slice(start, stop, step), length))
    for n, a, b, s in itertools.product((0, 1, 5), BOUNDS[1:], BOUNDS[1:], (-6, -3, -1, 1, 2, 5)):
        _check(f(a, b, s, n), n, np.arange(n)[a:b:s])


@pytest.mark.parametrize("step", [None, 1, 3, -1, -2])
def test_none_bounds_and_constant_steps(step):
    start, stop, length = T.iscalar("a"), T.iscalar("b"), T.iscalar("l")
    for use_start, use_stop in itertools.product((True, False), repeat=2):
        theslice = slice(start if use_start else None, stop if use_stop else None, step)
        f = sympile.function([start, stop, length], _compiled(theslice, length),
                             on_unused_input="ignore")
        for n, a, b in itertools.product((0, 3, 7), BOUNDS[1:], BOUNDS[1:]):
            want = np.arange(n)[a if use_start else None:b if use_stop else None:step]
            _check(f(a, b, n), n, want)
    assert get_canonical_form_slice(slice(None, None, step), 4)[1] == (-1 if step and step < 0
                                                                        else 1)


def test_an_index_is_made_non_negative_and_a_zero_step_is_an_error():
    index, length = T.lscalar("i"), T.lscalar("l")
    value, direction = get_canonical_form_slice(index, length)
    f = sympile.function([index, length], value)
    assert (int(f(-2, 5)), int(f(3, 5)), direction) == (3, 3, 1)
    with pytest.raises(ValueError, match="step cannot be zero"):
        get_canonical_form_slice(slice(None, None, 0), length)
