"""CenteredSquareSum, sum((x - x.mean())**2) in one read of x: the rewrite that forms it,
its values on both backends against numpy's two passes (special values, empty, any rank and
layout), and its derivatives."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gradient import verify_grad
from sympile.tensor.reduction import CenteredSquareSum, FusedCAReduce
from tests.link.c.utils import LAYOUTS, compile_c, requires_compiler


def _squared_deviations(x):
    return ((x - x.mean()) ** 2).sum()


def _nodes(f, op_class):
    return [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, op_class)]


def test_the_rewrite_forms_it_only_for_the_whole_mean():
    x = T.fmatrix("x")
    assert _nodes(sympile.function([x], _squared_deviations(x)), CenteredSquareSum)
    y = T.fmatrix("y")
    others = [((x - y.mean()) ** 2).sum(),                # another tensor's mean
              ((x - x.mean(axis=0)) ** 2).sum(),          # a mean along one axis
              ((x - x.mean()) ** 2).sum(axis=0),          # a sum along one axis
              ((x - x.mean()) ** 3).sum(),                # not a square
              ((x - x.sum() / 7) ** 2).sum()]             # not the mean
    for output in others:
        f = sympile.function([x, y], output, on_unused_input="ignore")
        assert not _nodes(f, CenteredSquareSum), output


@requires_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(10_007,), (3, 1000), (2, 3, 4), (0,), (1,), (5000, 1)])
def test_values_agree_with_numpy(dtype, shape):
    x = T.tensor(dtype, (None,) * len(shape), name="x")
    output = _squared_deviations(x)
    c_function, python_function = compile_c([x], output), sympile.function([x], output)
    assert _nodes(c_function, CenteredSquareSum)
    value = (np.random.default_rng(len(shape)).normal(size=shape) * 10 + 1e3).astype(dtype)
    exact = np.sum((value.astype(np.float64) - value.astype(np.float64).mean()) ** 2) \
        if value.size else 0.0
    for layout in LAYOUTS.values():
        for function in (c_function, python_function):
            got = function(layout(value))
            assert got.dtype == dtype and got.shape == ()
            # At least as accurate as numpy's own two passes.
            numpy_error = abs(float(np.sum((value - value.mean(dtype=dtype)) ** 2)) - exact) \
                if value.size else 0.0
            assert abs(float(got) - exact) <= max(2 * numpy_error, 1e-6 * abs(exact), 1e-30)


@requires_compiler
@pytest.mark.parametrize("seed", range(4))
def test_float32_within_one_ulp_of_the_exact_sum(seed):
    """Data far from 0 next to its spread: each block's deviations are summed in double and
    blocks combine by their exact means (combined by the first pass's float estimates, the
    result was up to 15 ulps off)."""
    x = T.fvector("x")
    f = compile_c([x], _squared_deviations(x))
    for loc, scale, n in [(1e4, 1, 10**6), (1e3, 10, 300_000), (-5e3, 0.5, 200_001)]:
        value = (np.random.default_rng(seed).normal(size=n) * scale + loc).astype("float32")
        exact = np.sum((value.astype(np.float64) - value.astype(np.float64).mean()) ** 2)
        assert abs(float(f(value)) - exact) <= np.spacing(np.float32(exact))


@requires_compiler
def test_special_values_give_numpys():
    x = T.dvector("x")
    c_function = compile_c([x], _squared_deviations(x))
    for values in ([1.0, np.nan, 2.0], [1.0, np.inf, 2.0], [np.inf, np.inf],
                   [-np.inf, np.inf], [1e300, -1e300]):
        value = np.array(values * 3000)
        with np.errstate(all="ignore"):
            expected = np.sum((value - value.mean()) ** 2)
        np.testing.assert_array_equal(c_function(value), expected)


def test_derivatives():
    rng = np.random.default_rng(0)
    verify_grad(lambda x: CenteredSquareSum()(x), [rng.normal(size=(3, 4))], rng=rng)
    x, v = T.dmatrix("x"), T.dmatrix("v")
    output = CenteredSquareSum()(x)
    rop = sympile.function([x, v], sympile.Rop(output, x, v))
    lop = sympile.function([x], sympile.grad(output, x))
    value, tangent = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    np.testing.assert_allclose(rop(value, tangent), np.sum(lop(value) * tangent), rtol=1e-12)


def test_a_fused_reduction_was_there_before():
    """The rewrite takes in the fused reduction: without it, sum((x - m)**2) is one."""
    x = T.dvector("x")
    mode = sympile.compile.mode.get_mode("FAST_RUN").excluding("local_centered_square_sum")
    f = sympile.function([x], _squared_deviations(x), mode=mode)
    assert _nodes(f, FusedCAReduce) and not _nodes(f, CenteredSquareSum)
