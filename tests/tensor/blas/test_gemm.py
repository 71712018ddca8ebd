"""Tests of sympile/tensor/gemm.py: Gemm, Gemv and Ger against numpy (values, dtypes, static
types, the zero scales BLAS would skip), infer_shape, gradients, inputs left unmodified, and
the errors for bad inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile.tensor as T
from sympile.tensor.blas.gemm import gemm, gemv, ger
from tests.utils import GradCase, assert_like_numpy, check_grad_case, check_infer_shape, evaluate

DTYPES = ["float32", "float64"]


def _values(rng, dtype, *shapes):
    return [np.asarray(rng.standard_normal(shape), dtype=dtype) for shape in shapes]


def _gemm_inputs(dtype, z_shape=(None, None), x_shape=(None, None), y_shape=(None, None)):
    return [T.tensor(dtype=dtype, shape=z_shape, name="z"), T.scalar("alpha", dtype=dtype),
            T.tensor(dtype=dtype, shape=x_shape, name="x"),
            T.tensor(dtype=dtype, shape=y_shape, name="y"), T.scalar("beta", dtype=dtype)]


@settings(max_examples=15, deadline=None)
@given(m=st.integers(0, 4), k=st.integers(0, 4), n=st.integers(0, 4),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**16))
def test_gemm_like_numpy(m, k, n, dtype, seed):
    rng = np.random.default_rng(seed)
    z, x, y = _values(rng, dtype, (m, n), (m, k), (k, n))
    alpha, beta = (np.asarray(s, dtype=dtype) for s in rng.standard_normal(2))
    inputs = _gemm_inputs(dtype)
    originals = [z.copy(), x.copy(), y.copy()]
    result = evaluate(gemm(*inputs), inputs, [z, alpha, x, y, beta])
    assert_like_numpy(result, alpha * np.dot(x, y) + beta * z)
    for value, original in zip((z, x, y), originals):
        np.testing.assert_array_equal(value, original)


@settings(max_examples=15, deadline=None)
@given(m=st.integers(0, 4), n=st.integers(0, 4), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 2**16))
def test_gemv_and_ger_like_numpy(m, n, dtype, seed):
    rng = np.random.default_rng(seed)
    a, x, y = _values(rng, dtype, (m, n), (n,), (m,))
    alpha, beta = (np.asarray(s, dtype=dtype) for s in rng.standard_normal(2))
    symbols = [T.vector("y", dtype=dtype), T.scalar("alpha", dtype=dtype),
               T.matrix("a", dtype=dtype), T.vector("x", dtype=dtype),
               T.scalar("beta", dtype=dtype)]
    result = evaluate(gemv(*symbols), symbols, [y, alpha, a, x, beta])
    assert_like_numpy(result, alpha * np.dot(a, x) + beta * y)
    a_symbol, alpha_symbol, u, v = (T.matrix("a", dtype=dtype), T.scalar("alpha", dtype=dtype),
                                    T.vector("u", dtype=dtype), T.vector("v", dtype=dtype))
    inputs = [a_symbol, alpha_symbol, u, v]
    result = evaluate(ger(*inputs), inputs, [a, alpha, y, x])
    assert_like_numpy(result, a + alpha * np.outer(y, x))


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_scales_propagate_nan_like_the_formula(dtype):
    # BLAS skips the term a zero scale multiplies; the elementwise formula gives 0 * nan = nan.
    z = np.full((2, 2), np.nan, dtype=dtype)
    x = np.array([[np.inf, 1], [1, 1]], dtype=dtype)
    zero, one = np.asarray(0, dtype=dtype), np.asarray(1, dtype=dtype)
    inputs = _gemm_inputs(dtype)
    with np.errstate(invalid="ignore"):
        for values in ([z, one, x, x, zero], [x, zero, z, x, one]):
            expected = values[1] * np.dot(values[2], values[3]) + values[4] * values[0]
            assert_like_numpy(evaluate(gemm(*inputs), inputs, values), expected)
        a, alpha, u, v = (T.matrix("a", dtype=dtype), T.scalar("alpha", dtype=dtype),
                          T.vector("u", dtype=dtype), T.vector("v", dtype=dtype))
        ones = np.ones(2, dtype=dtype)
        result = evaluate(ger(a, alpha, u, v), [a, alpha, u, v], [x, zero, z[0], ones])
        assert_like_numpy(result, x + zero * np.outer(z[0], ones))


def test_static_output_types():
    inputs = _gemm_inputs("float32", z_shape=(3, None), x_shape=(None, 2), y_shape=(2, 5))
    assert gemm(*inputs).type == T.tensor(dtype="float32", shape=(3, 5)).type
    y, alpha, a, x, beta = (T.tensor(dtype="float64", shape=(None,)), T.scalar(),
                            T.tensor(dtype="float64", shape=(4, 3)), T.vector(), T.scalar())
    assert gemv(y, alpha, a, x, beta).type == T.tensor(dtype="float64", shape=(4,)).type
    a, x, y = (T.matrix(), T.tensor(dtype="float64", shape=(2,)),
               T.tensor(dtype="float64", shape=(7,)))
    assert ger(a, T.scalar(), x, y).type == T.tensor(dtype="float64", shape=(2, 7)).type


def test_infer_shape():
    rng = np.random.default_rng(0)
    inputs = _gemm_inputs("float64")
    z, x, y = _values(rng, "float64", (3, 4), (3, 2), (2, 4))
    check_infer_shape(gemm(*inputs), inputs, [z, 1.0, x, y, 2.0])
    symbols = [T.vector(), T.scalar(), T.matrix(), T.vector(), T.scalar()]
    a, v, w = _values(rng, "float64", (3, 2), (2,), (3,))
    check_infer_shape(gemv(*symbols), symbols, [w, 1.0, a, v, 2.0])
    symbols = [T.matrix(), T.scalar(), T.vector(), T.vector()]
    check_infer_shape(ger(*symbols), symbols, [a, 1.0, w, v])


GRAD_CASES = [
    GradCase("gemm", gemm, lambda rng: [rng.standard_normal(s) for s in
                                        [(3, 4), (), (3, 2), (2, 4), ()]]),
    GradCase("gemv", gemv, lambda rng: [rng.standard_normal(s) for s in
                                        [(3,), (), (3, 2), (2,), ()]]),
    GradCase("ger", ger, lambda rng: [rng.standard_normal(s) for s in
                                      [(3, 2), (), (3,), (2,)]]),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=repr)
def test_gradients(case):
    check_grad_case(case)


def test_gradient_of_some_inputs_only():
    # R_op with tangents for some inputs only: the others are constants of the sweep.
    from sympile.gradient import Rop
    inputs = _gemm_inputs("float64")
    x = inputs[2]
    tangent = T.matrix("tangent")
    rng = np.random.default_rng(1)
    zv, xv, yv, tv = _values(rng, "float64", (2, 3), (2, 4), (4, 3), (2, 4))
    result = evaluate(Rop(gemm(*inputs), x, tangent), inputs + [tangent],
                      [zv, 2.0, xv, yv, 0.5, tv])
    assert_like_numpy(result, 2.0 * np.dot(tv, yv))


def test_bad_inputs():
    z, alpha, x, y, beta = _gemm_inputs("float64")
    with pytest.raises(TypeError, match="Gemm: input x must be 2-d"):
        gemm(z, alpha, T.vector(), y, beta)
    with pytest.raises(TypeError, match="Gemm: input alpha must be 0-d"):
        gemm(z, x, x, y, beta)
    with pytest.raises(TypeError, match="all be float32 or all float64.*x: float32"):
        gemm(z, alpha, T.matrix(dtype="float32"), y, beta)
    with pytest.raises(TypeError, match="Gemv: the inputs must all be float32"):
        gemv(T.vector(dtype="int64"), T.scalar(dtype="int64"), T.matrix(dtype="int64"),
             T.vector(dtype="int64"), T.scalar(dtype="int64"))
    with pytest.raises(ValueError, match="Gemm: the columns of x and the rows of y have "
                                         "different lengths"):
        gemm(z, alpha, T.tensor(dtype="float64", shape=(None, 2)),
             T.tensor(dtype="float64", shape=(3, None)), beta)
    with pytest.raises(ValueError, match="Ger: the rows of a and x"):
        ger(T.tensor(dtype="float64", shape=(2, None)), alpha,
            T.tensor(dtype="float64", shape=(3,)), T.vector())


def test_runtime_shape_mismatch():
    inputs = _gemm_inputs("float64")
    ones = np.ones
    with pytest.raises(ValueError, match=r"Gemm: the rows of z and of x have different "
                                         r"lengths \[2, 3\]"):
        evaluate(gemm(*inputs), inputs, [ones((2, 2)), 1.0, ones((3, 2)), ones((2, 2)), 1.0])
    symbols = [T.vector(), T.scalar(), T.matrix(), T.vector(), T.scalar()]
    with pytest.raises(ValueError, match="Gemv: the columns of a and x"):
        evaluate(gemv(*symbols), symbols, [ones(2), 1.0, ones((2, 3)), ones(2), 1.0])
