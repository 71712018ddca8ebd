"""pool_2d and pool_3d: values against a loop over windows written from Theano's rules,
numeric gradients (max pooling's second derivative too), Rop, shapes and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.gradient import verify_grad, verify_rop
from sympile.tensor.signal.pool import pool_2d, pool_3d
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler
from tests.utils import GradCase, check_grad_case


def reference_pool(x, ws, ignore_border, stride, pad, mode):
    """Theano's pooling, one window at a time."""
    nd = len(ws)
    spatial = x.shape[-nd:]
    outputs = []
    for n, w, s, p in zip(spatial, ws, stride, pad):
        if ignore_border:
            outputs.append((n + 2 * p - w) // s + 1)
        elif s >= w:
            outputs.append((n - 1) // s + 1)
        else:
            outputs.append(max(0, (n - 1 - w + s) // s) + 1)
    result = np.zeros(x.shape[:-nd] + tuple(outputs))
    for lead in np.ndindex(*x.shape[:-nd]):
        for position in itertools.product(*map(range, outputs)):
            starts = [o * s for o, s in zip(position, stride)]
            # Window bounds in padded coordinates, clipped to the padded input.
            ends = [min(b + w, n + 2 * p) for b, w, n, p in zip(starts, ws, spatial, pad)]
            inside = [(max(b, p) - p, min(e, n + p) - p)
                      for b, e, n, p in zip(starts, ends, spatial, pad)]
            block = x[lead + tuple(slice(a, b) for a, b in inside)]
            if mode == "max":
                value = block.max()
            elif mode == "sum":
                value = block.sum()
            elif mode == "average_inc_pad":
                value = block.sum() / np.prod([e - b for b, e in zip(starts, ends)])
            else:
                value = block.sum() / block.size
            result[lead + position] = value
    return result


CASES = [
    dict(ws=(2, 2)),
    dict(ws=(2, 3), stride=(1, 2)),
    dict(ws=(3, 2), ignore_border=False),
    dict(ws=(3, 3), stride=(2, 2), ignore_border=False),
    dict(ws=(3, 3), pad=(1, 2), stride=(2, 1)),
    dict(ws=(2, 2), pad=(1, 1)),
]
MODES = ["max", "sum", "average_inc_pad", "average_exc_pad"]


def _distinct(rng, shape):
    """Values without ties (max pooling's derivative is defined)."""
    return rng.permutation(np.prod(shape)).reshape(shape) * 0.1 + rng.random(shape) * 0.01


def _options(case, mode):
    return dict(ws=case["ws"], ignore_border=case.get("ignore_border", True),
                stride=case.get("stride", case["ws"]), pad=case.get("pad", (0, 0)), mode=mode)


@pytest.mark.parametrize("backend", [pytest.param(PYTHON_MODE, id="python"),
                                     pytest.param(C_MODE, id="c", marks=requires_compiler)])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_pool_2d_values(case, mode, backend):
    x_value = _distinct(np.random.default_rng(0), (2, 3, 7, 6))
    options = _options(case, mode)
    x = T.dtensor4("x")
    output = pool_2d(x, **options)
    value = sympile.function([x], output, mode=backend)(x_value)
    np.testing.assert_allclose(value, reference_pool(x_value, **options), rtol=1e-12)
    assert tuple(sympile.function([x], output.shape, mode=backend)(x_value)) == value.shape


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_pool_2d_gradient_and_rop(case, mode):
    x_value = _distinct(np.random.default_rng(1), (2, 2, 6, 5))
    options = _options(case, mode)
    verify_grad(lambda x: pool_2d(x, **options), [x_value], rng=0)
    verify_rop(lambda x: pool_2d(x, **options), [x_value], rng=0)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_max_pool_second_derivative(case):
    """The gradient of max pooling's gradient (DownsampleFactorMaxGradGrad), and the
    transposes of the Rop ops, checked numerically."""
    x_value = _distinct(np.random.default_rng(2), (1, 2, 6, 5))
    options = _options(case, "max")

    def gradient(x):
        return sympile.grad((pool_2d(x, **options) ** 2).sum(), x) ** 2

    verify_grad(gradient, [x_value], rng=0)
    verify_rop(gradient, [x_value], rng=0)
    # Lop of the tangent map: d/dv of a function of Rop(pool(x), x, v).
    x = T.dtensor4("x")
    pooled = pool_2d(x, **options)
    v = T.dtensor4("v")
    tangent = sympile.Rop(pooled, x, v)
    v_value = np.random.default_rng(3).standard_normal(x_value.shape)
    verify_grad(lambda u: sympile.clone_replace(tangent, {x: T.constant(x_value), v: u}) ** 3,
                [v_value], rng=0)


def test_pool_3d_and_leading_axes():
    x_value = _distinct(np.random.default_rng(4), (2, 5, 4, 6))
    x = T.dtensor4("x")
    for mode in MODES:
        options = dict(ws=(2, 2, 3), ignore_border=False, stride=(2, 1, 2), pad=(0, 0, 0),
                       mode=mode)
        value = sympile.function([x], pool_3d(x, **options))(x_value)
        np.testing.assert_allclose(value, reference_pool(x_value, **options), rtol=1e-12)
    verify_grad(lambda x: pool_3d(x, (2, 2, 2), mode="max"), [x_value], rng=0)
    # Pooling acts on the last axes: a matrix is pooled too.
    matrix = T.dmatrix("m")
    np.testing.assert_allclose(
        sympile.function([matrix], pool_2d(matrix, (2, 2), mode="sum"))(np.ones((4, 4))),
        np.full((2, 2), 4.0))


def test_theano_old_argument_names_and_static_shapes():
    x = T.tensor("float32", shape=(None, 6, 28, 28))
    assert pool_2d(x, ds=(2, 2)).type.shape == (None, 6, 14, 14)
    assert pool_2d(x, (3, 3), st=(2, 2), ignore_border=False).type.shape == (None, 6, 14, 14)
    assert T.signal.pool.pool_2d is pool_2d
    cube = T.tensor("float32", shape=(None, 2, 8, 8, 8))
    assert pool_3d(cube, ds=(2, 2, 2)).type.shape == (None, 2, 4, 4, 4)
    assert pool_3d(cube, (2, 2, 2), st=(1, 2, 2), padding=(1, 0, 0)).type.shape == \
        (None, 2, 9, 4, 4)
    for function, window in ((pool_2d, (2, 2)), (pool_3d, (2, 2, 2))):
        with pytest.raises(ValueError, match=f"{function.__name__}: give ws or its old name "
                                             "ds, not both"):
            function(cube, ws=window, ds=window)
        with pytest.raises(ValueError, match="give stride or its old name st, not both"):
            function(cube, window, stride=window, st=window)
        ones = (1,) * len(window)
        with pytest.raises(ValueError, match="give pad or its old name padding, not both"):
            function(cube, window, pad=ones, padding=ones)


def test_bad_input():
    with pytest.raises(ValueError, match="pool_2d: the window .* is larger than the input"):
        pool_2d(T.tensor("float64", shape=(None, 1, 2, 5)), (3, 3))
    with pytest.raises(ValueError, match="padding works only with ignore_border=True"):
        pool_2d(T.dtensor4(), (2, 2), ignore_border=False, pad=(1, 1))
    with pytest.raises(ValueError, match="pad .* must be smaller than ws"):
        pool_2d(T.dtensor4(), (2, 2), pad=(2, 0))
    with pytest.raises(ValueError, match="mode must be one of"):
        pool_2d(T.dtensor4(), (2, 2), mode="median")
    with pytest.raises(TypeError, match="pool_2d: input must have at least 2 dimensions"):
        pool_2d(T.dvector(), (2, 2))
    with pytest.raises(TypeError, match="ws"):
        pool_2d(T.dtensor4())
    x = T.dtensor4("x")
    f = sympile.function([x], pool_2d(x, (3, 3)))
    with pytest.raises(ValueError, match="pool_2d: the window .* is larger than the input"):
        f(np.zeros((1, 1, 2, 5)))


@requires_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_c_pooling_matches_perform(case, mode, dtype):
    """The C loops of Pool and its gradient run (no perform fallback) and agree."""
    x_value = _distinct(np.random.default_rng(5), (2, 3, 7, 6)).astype(dtype)
    options = _options(case, mode)
    x = T.tensor(dtype, shape=(None,) * 4)
    pooled = pool_2d(x, **options)
    outputs = [pooled, sympile.grad((pooled ** 2).sum(), x)]
    c_function = sympile.function([x], outputs, mode=C_MODE)
    assert c_function._vm.fallback_nodes == []
    tolerance = 2e-6 if dtype == "float32" else 1e-12
    for c_value, reference in zip(c_function(x_value),
                                  sympile.function([x], outputs, mode=PYTHON_MODE)(x_value)):
        np.testing.assert_allclose(c_value, reference, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("backend", [pytest.param(PYTHON_MODE, id="python"),
                                     pytest.param(C_MODE, id="c", marks=requires_compiler)])
def test_max_pool_gradient_goes_only_to_the_maxima_with_special_values(backend):
    """An inf or NaN output gradient reaches only its window's maxima (never 0 * inf = NaN
    at the others), and a NaN window's maximum equals no element; both backends agree."""
    x, gz = T.dmatrix("x"), T.dmatrix("gz")
    pooled = pool_2d(x, ws=(2, 2))
    f = sympile.function([x, gz], sympile.Lop(pooled, x, gz), mode=backend)
    x_value = np.array([[1.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, np.nan]])
    want = np.array([[0.0, np.inf, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(f(x_value, np.array([[np.inf, 5.0]])), want)
    np.testing.assert_array_equal(f(x_value, np.array([[np.inf, np.nan]])), want)


@requires_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, ignore_border", [((2, 3, 6, 8), True), ((2, 3, 7, 9), True),
                                                  ((2, 3, 7, 9), False), ((1, 1, 2, 2), False)])
def test_c_max_pool_of_2x2_windows_matches_perform_bit_for_bit(dtype, shape, ignore_border):
    """The C loop for 2 x 2 windows of stride 2 (all inside the input: the odd last row and
    column are left to the general loop or dropped) against perform: ties, signed zeros,
    NaN wherever a window holds one, infinities. (Which zero a window of -0.0 and 0.0 gives
    is not compared: numpy's max keeps the last of equal values, the C loops the first.)"""
    rng = np.random.default_rng(3)
    values = rng.choice(np.array([-0.0, 0.0, 1.0, -1.0, np.inf, -np.inf], dtype), shape)
    values.flat[::11] = np.nan
    x = T.tensor(dtype, (None,) * 4, name="x")
    pooled = pool_2d(x, (2, 2), ignore_border=ignore_border)
    c_function = sympile.function([x], pooled, mode=C_MODE)
    assert c_function._vm.fallback_nodes == []
    got = c_function(values)
    want = sympile.function([x], pooled, mode=PYTHON_MODE)(values)
    np.testing.assert_array_equal(got, want)


@requires_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ws, stride", [((2, 2), (2, 2)), ((3, 3), (2, 1))])
def test_c_max_pool_gradient_matches_perform_bit_for_bit(dtype, ws, stride):
    """The C gradient (its maxima picked by bit masks, not branches) against perform's:
    ties (every equal maximum gets the share), -0.0, inf and NaN shares, overlapping
    windows summing shares, and signed zeros (+0.0 where no share or a -0.0 share lands,
    as added to zeros)."""
    rng = np.random.default_rng(7)
    x = T.tensor4("x", dtype=dtype)
    gz = T.tensor4("gz", dtype=dtype)
    pooled = pool_2d(x, ws=ws, stride=stride, ignore_border=True)
    outputs = sympile.Lop(pooled, x, gz)
    c_function = sympile.function([x, gz], outputs, mode=C_MODE)
    assert c_function._vm.fallback_nodes == []
    python_function = sympile.function([x, gz], outputs, mode=PYTHON_MODE)
    # Few distinct values: many ties.
    x_value = rng.integers(-2, 3, (3, 2, 9, 8)).astype(dtype)
    x_value[0, 0, 0, 0] = -0.0
    shape = sympile.function([x], pooled, mode=PYTHON_MODE)(x_value).shape
    gz_value = rng.standard_normal(shape).astype(dtype)
    gz_value.flat[::7] = -0.0
    gz_value.flat[3] = np.inf
    gz_value.flat[5] = np.nan
    got, want = c_function(x_value, gz_value), python_function(x_value, gz_value)
    if stride == ws:
        np.testing.assert_array_equal(got, want)
    else:
        # Shares of overlapping windows are summed in another order: within rounding.
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, atol=0)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@requires_compiler
def test_c_pooling_error():
    x = T.dtensor4("x")
    f = sympile.function([x], pool_2d(x, (3, 3)), mode=C_MODE)
    with pytest.raises(ValueError, match="pool_2d: the window .* is larger than the input"):
        f(np.zeros((1, 1, 2, 5)))


# The op table's rows (tests/link/c/test_op_table.py runs them on the C backend).
GRAD_CASES = [
    GradCase(f"pool_2d {mode} {options}", lambda x, mode=mode, options=options: pool_2d(
        x, mode=mode, **options), lambda rng: [_distinct(rng, (2, 3, 6, 5))])
    for mode in MODES
    for options in (dict(ws=(2, 2)), dict(ws=(3, 2), stride=(1, 2), ignore_border=False),
                    dict(ws=(3, 3), pad=(1, 1), stride=(2, 2)))
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=repr)
def test_grad_cases(case):
    check_grad_case(case)


@given(rows=st.integers(2, 7), cols=st.integers(2, 7), ws=st.tuples(st.integers(1, 3),
                                                                    st.integers(1, 3)),
       stride=st.tuples(st.integers(1, 3), st.integers(1, 3)), pad=st.booleans(),
       ignore_border=st.booleans(), mode=st.sampled_from(MODES))
def test_pool_2d_random_shapes(rows, cols, ws, stride, pad, ignore_border, mode):
    """Values against the window loop, and the gradient numerically, over random shapes
    and options (padding needs ignore_border and ws > pad)."""
    padding = tuple(w // 2 for w in ws) if pad and ignore_border else (0, 0)
    if ignore_border and (rows + 2 * padding[0] < ws[0] or cols + 2 * padding[1] < ws[1]):
        return
    x_value = _distinct(np.random.default_rng(rows * 10 + cols), (1, 2, rows, cols))
    options = dict(ws=ws, ignore_border=ignore_border, stride=stride, pad=padding, mode=mode)
    x = T.dtensor4("x")
    value = sympile.function([x], pool_2d(x, **options))(x_value)
    np.testing.assert_allclose(value, reference_pool(x_value, **options), rtol=1e-12)
    if value.size:
        verify_grad(lambda x: pool_2d(x, **options), [x_value], rng=0)


@pytest.mark.parametrize("options", [dict(ws=(2, 2)), dict(ws=(3, 2), ignore_border=True),
                                     dict(ws=(3, 3), stride=(2, 1)),
                                     dict(ws=(3, 3), stride=(1, 2), ignore_border=True,
                                          pad=(1, 2)),
                                     dict(ds=(2, 3), st=(3, 3), ignore_border=True)])
def test_pool_out_shape_is_the_pooled_shape(options):
    """Theano's Pool.out_shape, with ints and with symbolic lengths, agrees with the output
    of pooling."""
    from sympile.tensor.signal.pool import Pool

    value = np.zeros((2, 1, 7, 8))
    theano_names = {"ds": "ws", "st": "stride", "padding": "pad"}
    pool_options = {theano_names.get(k, k): v for k, v in options.items()}
    pool_options.setdefault("ignore_border", False)
    expected = pool_2d(T.constant(value), **pool_options).eval().shape
    assert Pool.out_shape(value.shape, **options) == list(expected)
    x = T.dtensor4("x")
    symbolic = Pool.out_shape(x.shape, **options)
    assert tuple(int(n) for n in sympile.function([x], list(symbolic))(value)) == expected


def test_theanos_constructor_and_call_form():
    """Pool(ignore_border=, mode=, ndim=)(x, ws, stride, pad), and the gradient ops the
    same way, build sympile's ops with those windows; a symbolic window is refused."""
    from sympile.tensor.signal.pool import AveragePoolGrad, MaxPoolGrad, Pool

    x = T.dtensor4("x")
    value = np.random.default_rng(0).normal(size=(1, 2, 5, 6))
    out = Pool(ndim=2, ignore_border=True, mode="max")(x, (2, 3), (1, 2), (1, 1))
    assert isinstance(out.owner.op, Pool) and out.owner.op.ws == (2, 3)
    expected = pool_2d(x, ws=(2, 3), stride=(1, 2), pad=(1, 1), ignore_border=True)
    f = sympile.function([x], [out, expected])
    got, want = f(value)
    np.testing.assert_array_equal(got, want)
    assert not Pool(ndim=2).ignore_border and Pool(True).ignore_border
    average = Pool(ndim=2, mode="average_exc_pad")(x, T.constant(np.array([2, 2])))
    gz = T.dtensor4("gz")
    grads = [MaxPoolGrad(ndim=2)(x, Pool(ndim=2)(x, (2, 2)), gz, (2, 2)),
             AveragePoolGrad(ndim=2, mode="average_exc_pad")(x, gz, (2, 2))]
    cost_grads = sympile.grad((Pool(ndim=2)(x, (2, 2)) * gz).sum(), x), \
        sympile.grad((average * gz).sum(), x)
    g = sympile.function([x, gz], [*grads, *cost_grads])
    values = g(value, np.ones((1, 2, 3, 3)))
    np.testing.assert_allclose(values[0], values[2])
    np.testing.assert_allclose(values[1], values[3])
    with pytest.raises(TypeError, match="ws must be constant"):
        Pool(ndim=2)(x, T.lvector("ws"))
    with pytest.raises(TypeError, match="then ws"):
        Pool(ndim=2)(x)
