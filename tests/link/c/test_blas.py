"""C code of the dense products (Dot, MatMul, TensorDot: sympile.tensor.blas) and of the BLAS
updates (Gemm, Gemv, Ger: sympile.tensor.blas.gemm), against numpy and the Python backend, on the
layouts BLAS reads in place (C and Fortran order, spaced rows) and those it needs copied
(spaced columns, negative strides, misaligned data), with empty and 1x1 operands, in place,
and on shapes that do not match."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.link.c.codegen import has_c_code
from sympile.tensor.blas.gemm import Gemm, Gemv, Ger, gemm, gemv, ger
from tests.link.c.utils import (
    PYTHON_MODE,
    assert_clean_under_address_sanitizer,
    compile_c,
    requires_compiler,
)
from tests.utils import assert_like_numpy

pytestmark = requires_compiler

DTYPES = ("float32", "float64")
RTOL = {"float32": 1e-4, "float64": 1e-12}


def _spaced(value: np.ndarray, rows: bool, columns: bool) -> np.ndarray:
    """`value` as a view that skips every other row and/or column of a NaN-filled array, so
    that reading an element in between shows."""
    steps = (2 if rows else 1,) + (2 if columns else 1,) * (value.ndim - 1)
    if value.ndim == 1:
        steps = (2 if rows or columns else 1,)
    backing = np.full([n * step for n, step in zip(value.shape, steps)], np.nan, value.dtype)
    view = backing[tuple(slice(None, None, step) for step in steps)]
    view[...] = value
    return view


def _misaligned(value: np.ndarray) -> np.ndarray:
    """`value` in C order at an address one byte past an element boundary."""
    raw = np.zeros(value.nbytes + value.itemsize + 1, np.uint8)
    view = raw[1:value.nbytes + 1].view(value.dtype).reshape(value.shape)
    view[...] = value
    return view


def _reversed(value: np.ndarray) -> np.ndarray:
    """`value` as a view with negative strides along every axis."""
    flip = (slice(None, None, -1),) * value.ndim
    return np.ascontiguousarray(value[flip])[flip]


LAYOUTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "C": np.ascontiguousarray,
    "F": np.asfortranarray,
    # The matrices of a stack transposed in memory (a transposed view handed in as input).
    "transposed": lambda v: np.ascontiguousarray(np.swapaxes(v, -1, -2)).swapaxes(-1, -2)
    if v.ndim > 1 else v,
    "spaced_rows": lambda v: _spaced(v, rows=True, columns=False),
    "spaced": lambda v: _spaced(v, rows=True, columns=True),
    "reversed": _reversed,
    "misaligned": _misaligned,
}


def _check_layouts(function, values: Sequence[np.ndarray], expected: Sequence[Any],
                   dtype: str) -> None:
    """`function` gives `expected` on `values` in every layout (all inputs in one layout at a
    time, then each input in its own), and leaves the inputs unchanged."""
    names = list(LAYOUTS)
    choices = [[name] * len(values) for name in names]
    choices.append([names[i % len(names)] for i in range(len(values))])
    for choice in choices:
        arguments = [LAYOUTS[name](value) if value.ndim else value
                     for name, value in zip(choice, values)]
        before = [np.copy(argument) for argument in arguments]
        results = function(*arguments)
        for result, reference in zip(results, expected):
            assert_like_numpy(np.asarray(result), reference, rtol=RTOL[dtype],
                              atol=RTOL[dtype])
        for argument, original in zip(arguments, before):
            np.testing.assert_array_equal(argument, original, err_msg=f"layouts {choice}")


def _ran_c(function) -> None:
    """Every product and update ran C code (other nodes may be perform fallbacks)."""
    products = (T.Dot, T.MatMul, T.TensorDot, Gemm, Gemv, Ger)
    fallback = [node for node in function._vm.fallback_nodes if isinstance(node.op, products)]
    assert fallback == [], fallback


def _python_function(inputs, outputs):
    return sympile.function(list(inputs), outputs, mode=PYTHON_MODE, on_unused_input="ignore")


@pytest.mark.parametrize("dtype", DTYPES)
def test_dot_matches_numpy_on_every_layout_and_shape(dtype):
    x, y = T.matrix("x", dtype=dtype), T.matrix("y", dtype=dtype)
    u, t, w = (T.vector(name, dtype=dtype) for name in "utw")
    outputs = [T.dot(x, y), T.dot(x, u), T.dot(w, x), T.dot(u, t), T.dot(y.T, x.T),
               T.dot(x.T, w)]
    inputs = [x, y, u, t, w]
    function = compile_c(inputs, outputs)
    python_function = _python_function(inputs, outputs)
    _ran_c(function)
    rng = np.random.default_rng(0)
    for m, k, n in [(3, 4, 5), (1, 1, 1), (5, 1, 2), (0, 4, 5), (3, 0, 5), (3, 4, 0), (2, 7, 1)]:
        values = [rng.standard_normal(shape).astype(dtype)
                  for shape in [(m, k), (k, n), (k,), (k,), (m,)]]
        xv, yv, uv, tv, wv = values
        expected = [np.dot(xv, yv), np.dot(xv, uv), np.dot(wv, xv), np.dot(uv, tv),
                    np.dot(yv.T, xv.T), np.dot(xv.T, wv)]
        for reference, python_result in zip(expected, python_function(*values)):
            assert_like_numpy(python_result, reference, rtol=RTOL[dtype], atol=RTOL[dtype])
        _check_layouts(function, values, expected, dtype)


def test_dot_propagates_nan_and_inf_as_numpy():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    u = T.dvector("u")
    function = compile_c([x, y, u], [T.dot(x, y), T.dot(x, u), T.dot(u, u)])
    xv = np.array([[np.inf, 1.0], [0.0, 2.0]])
    yv = np.array([[0.0, 1.0], [np.nan, 3.0]])
    uv = np.array([np.inf, 0.0])
    with np.errstate(invalid="ignore"):
        expected = [np.dot(xv, yv), np.dot(xv, uv), np.dot(uv, uv)]
    for result, reference in zip(function(xv, yv, uv), expected):
        assert_like_numpy(result, reference)


@pytest.mark.parametrize("dtypes", [("int32", "int32"), ("int64", "int64"),
                                    ("float32", "float64"), ("int64", "float64")])
def test_other_dtypes_fall_back_to_perform(dtypes):
    x, y = T.matrix("x", dtype=dtypes[0]), T.matrix("y", dtype=dtypes[1])
    product = T.dot(x, y)
    assert not has_c_code(product.owner)
    function = compile_c([x, y], product)
    xv = np.arange(6).reshape(2, 3).astype(dtypes[0])
    yv = np.arange(12).reshape(3, 4).astype(dtypes[1])
    assert_like_numpy(function(xv, yv), np.dot(xv, yv))


def test_dot_shape_mismatch_is_a_value_error_naming_the_op_and_shapes():
    x, y = T.fmatrix("x"), T.fmatrix("y")
    u = T.fvector("u")
    function = compile_c([x, y, u], [T.dot(x, y), T.dot(x, u)])
    _ran_c(function)
    ones = np.ones
    with pytest.raises(ValueError, match=r"Dot.*\(3, 4\).*\(5, 2\)"):
        function(ones((3, 4), "float32"), ones((5, 2), "float32"), ones(4, "float32"))
    with pytest.raises(ValueError, match=r"Dot.*\(3, 4\).*\(2,\)"):
        function(ones((3, 4), "float32"), ones((4, 2), "float32"), ones(2, "float32"))
    # The function still works after the errors.
    result = function(ones((3, 4), "float32"), ones((4, 2), "float32"), ones(4, "float32"))
    assert_like_numpy(result[0], np.full((3, 2), 4, "float32"))


def _update_graphs(dtype: str):
    z, x, y = (T.matrix(name, dtype=dtype) for name in "zxy")
    w, u, v = (T.vector(name, dtype=dtype) for name in "wuv")
    alpha, beta = T.scalar("alpha", dtype=dtype), T.scalar("beta", dtype=dtype)
    inputs = [z, x, y, w, u, v, alpha, beta]
    outputs = [gemm(z, alpha, x, y, beta), gemv(w, alpha, x, u, beta), ger(z, alpha, w, v)]
    return inputs, outputs


def _updates_expected(z, x, y, w, u, v, alpha, beta):
    """perform's formulas."""
    return [np.dot(x, y) * alpha + beta * z, np.dot(x, u) * alpha + beta * w,
            np.outer(w, v) * alpha + z]


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_gemv_ger_match_numpy_on_every_layout_and_shape(dtype):
    inputs, outputs = _update_graphs(dtype)
    function = compile_c(inputs, outputs)
    _ran_c(function)
    assert {type(node.op) for node in function._vm.nodes} == {Gemm, Gemv, Ger}
    python_function = _python_function(inputs, outputs)
    rng = np.random.default_rng(1)
    scalars = [(0.5, 2.0), (1.0, 1.0), (-1.0, 0.0), (2.0, -1.0)]
    shapes = [(3, 4, 5), (1, 1, 1), (0, 4, 5), (3, 0, 5), (3, 4, 0), (4, 2, 1)]
    for (m, k, n), (alpha, beta) in zip(shapes, scalars * 2):
        values = [rng.standard_normal(shape).astype(dtype)
                  for shape in [(m, n), (m, k), (k, n), (m,), (k,), (n,)]]
        values += [np.asarray(alpha, dtype), np.asarray(beta, dtype)]
        expected = _updates_expected(*values)
        for reference, python_result in zip(expected, python_function(*values)):
            assert_like_numpy(python_result, reference, rtol=RTOL[dtype], atol=RTOL[dtype])
        _check_layouts(function, values, expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def _compiled_updates(dtype: str):
    inputs, outputs = _update_graphs(dtype)
    x, y, u = inputs[1], inputs[2], inputs[4]
    return compile_c(inputs, outputs + [T.dot(x, y), T.dot(x, u)])


_COMPILED_UPDATES = {dtype: functools.cache(functools.partial(_compiled_updates, dtype))
                     for dtype in DTYPES}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(DTYPES), st.tuples(*[st.integers(0, 5)] * 3),
       st.lists(st.sampled_from(list(LAYOUTS)), min_size=6, max_size=6),
       st.sampled_from([0.0, 1.0, -1.0, 0.5]), st.sampled_from([0.0, 1.0, -2.0]),
       st.integers(0, 2**32 - 1))
def test_random_shapes_and_layouts_match_numpy(dtype, lengths, layouts, alpha, beta, seed):
    """Dot, Gemm, Gemv and Ger on random lengths (0 included), each input in its own
    layout, with alpha and beta among 0, 1 and others."""
    m, k, n = lengths
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(shape).astype(dtype)
              for shape in [(m, n), (m, k), (k, n), (m,), (k,), (n,)]]
    scalars = [np.asarray(alpha, dtype), np.asarray(beta, dtype)]
    expected = _updates_expected(*values, *scalars) + [np.dot(values[1], values[2]),
                                                       np.dot(values[1], values[4])]
    arguments = [LAYOUTS[layout](value) for layout, value in zip(layouts, values)]
    results = _COMPILED_UPDATES[dtype]()(*arguments, *scalars)
    for result, reference in zip(results, expected):
        assert_like_numpy(result, reference, rtol=RTOL[dtype], atol=RTOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_updates_compute_every_term_as_perform(dtype):
    """A zero alpha or beta does not skip its term: 0 * inf and 0 * nan give nan there, as
    in perform; an empty product times an infinite alpha is nan too."""
    inputs, outputs = _update_graphs(dtype)
    function = compile_c(inputs, outputs)
    python_function = _python_function(inputs, outputs)
    rng = np.random.default_rng(2)
    for k, alpha, beta in [(3, 0.0, 1.0), (3, 1.0, 0.0), (3, 0.0, 0.0), (0, np.inf, 1.0),
                           (3, np.nan, 1.0), (3, 1.0, np.inf)]:
        values = [rng.standard_normal(shape).astype(dtype)
                  for shape in [(2, 3), (2, k), (k, 3), (2,), (k,), (3,)]]
        values[0][0, 1] = np.nan
        values[3][1] = np.nan
        if k:
            values[1][1, 0] = np.inf
            values[4][0] = np.inf
        values[5][2] = np.inf
        values += [np.asarray(alpha, dtype), np.asarray(beta, dtype)]
        expected = python_function(*values)
        with np.errstate(invalid="ignore"):
            for reference, numpy_result in zip(expected, _updates_expected(*values)):
                assert_like_numpy(reference, numpy_result)
        for result, reference in zip(function(*values), expected):
            assert_like_numpy(result, reference, rtol=RTOL[dtype], atol=RTOL[dtype])


def test_update_shape_mismatches_are_value_errors_naming_the_op():
    inputs, outputs = _update_graphs("float64")
    functions = [compile_c(inputs, output) for output in outputs]
    good = dict(z=(2, 3), x=(2, 4), y=(4, 3), w=(2,), u=(4,), v=(3,))
    cases = [(0, "x", (2, 5), r"Gemm.*columns of x and the rows of y.*\[5, 4\]"),
             (0, "z", (3, 3), r"Gemm.*rows of z and of x.*\[3, 2\]"),
             (0, "y", (4, 2), r"Gemm.*columns of z and of y.*\[3, 2\]"),
             (1, "u", (5,), r"Gemv.*columns of a and x.*\[4, 5\]"),
             (1, "w", (3,), r"Gemv.*y and the rows of a.*\[3, 2\]"),
             (2, "w", (3,), r"Ger.*rows of a and x.*\[2, 3\]"),
             (2, "v", (4,), r"Ger.*columns of a and y.*\[3, 4\]")]
    for output_index, name, shape, message in cases:
        shapes = dict(good, **{name: shape})
        values = [np.ones(shape) for shape in shapes.values()] + [np.asarray(1.0)] * 2
        with pytest.raises(ValueError, match=message):
            functions[output_index](*values)


class _GemmInplace(Gemm):
    destroy_map = {0: [0]}


class _GemvInplace(Gemv):
    destroy_map = {0: [0]}


class _GerInplace(Ger):
    destroy_map = {0: [0]}


@pytest.mark.parametrize("dtype", DTYPES)
def test_inplace_updates_write_over_their_first_input(dtype):
    z, x, y = (T.matrix(name, dtype=dtype) for name in "zxy")
    w, u = (T.vector(name, dtype=dtype) for name in "wu")
    alpha, beta = T.scalar("alpha", dtype=dtype), T.scalar("beta", dtype=dtype)
    functions = [compile_c([z, alpha, x, y, beta], _GemmInplace()(z, alpha, x, y, beta),
                           accept_inplace=True),
                 compile_c([w, alpha, x, u, beta], _GemvInplace()(w, alpha, x, u, beta),
                           accept_inplace=True),
                 compile_c([z, alpha, w, u], _GerInplace()(z, alpha, w, u), accept_inplace=True)]
    for function in functions:
        _ran_c(function)
    rng = np.random.default_rng(3)
    alpha_value, beta_value = np.asarray(0.5, dtype), np.asarray(-2.0, dtype)

    def sample(*shape):
        return rng.standard_normal(shape).astype(dtype)

    for layout in LAYOUTS.values():
        zv, xv, yv, wv, uv = sample(3, 3), sample(3, 3), sample(3, 3), sample(3), sample(3)
        cases = [(functions[0], [zv, alpha_value, xv, yv, beta_value],
                  np.dot(xv, yv) * alpha_value + beta_value * zv),
                 (functions[1], [wv, alpha_value, xv, uv, beta_value],
                  np.dot(xv, uv) * alpha_value + beta_value * wv),
                 (functions[2], [zv, alpha_value, wv, uv], np.outer(wv, uv) * alpha_value + zv)]
        for function, values, expected in cases:
            destroyed = layout(values[0].copy())
            backing = destroyed.base if destroyed.base is not None else destroyed
            backing_before = np.copy(backing)
            result = function(destroyed, *values[1:])
            assert_like_numpy(result, expected, rtol=RTOL[dtype], atol=RTOL[dtype])
            # The destroyed input now holds the result; the memory around it is unchanged.
            assert_like_numpy(destroyed, expected, rtol=RTOL[dtype], atol=RTOL[dtype])
            np.testing.assert_array_equal(np.isnan(backing), np.isnan(backing_before))


def test_inplace_update_reads_operands_that_share_the_destroyed_memory():
    """gemm(z, alpha, z, z.T, beta) over z: the operands are read as they were before z is
    written (trust_input: a checked call would give z a copy of its own)."""
    z, x, y = T.dmatrix("z"), T.dmatrix("x"), T.dmatrix("y")
    alpha, beta = T.dscalar("alpha"), T.dscalar("beta")
    function = compile_c([z, alpha, x, y, beta], _GemmInplace()(z, alpha, x, y, beta),
                         accept_inplace=True, trust_input=True)
    zv = np.random.default_rng(4).standard_normal((4, 4))
    expected = np.dot(zv, zv.T) * 2.0 + 3.0 * zv
    result = function(zv, np.asarray(2.0), zv, zv.T, np.asarray(3.0))
    assert_like_numpy(result, expected)
    assert_like_numpy(zv, expected)


def test_inplace_update_of_a_read_only_array_is_a_value_error():
    z, x = T.dmatrix("z"), T.dmatrix("x")
    alpha = T.dscalar("alpha")
    function = compile_c([z, alpha, x], _GemmInplace()(z, alpha, x, x, alpha),
                         accept_inplace=True)
    zv = np.ones((2, 2))
    zv.flags.writeable = False
    with pytest.raises(ValueError, match="Gemm.*read-only"):
        function(zv, np.asarray(1.0), np.ones((2, 2)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sgd_step_on_a_shared_weight_becomes_one_gemm(dtype):
    """W -= lr * dot(x.T, g) each call, under FAST_RUN: the value after three calls is
    numpy's, and neither the array W was created from nor the inputs are overwritten."""
    rng = np.random.default_rng(5)
    initial = rng.standard_normal((4, 3)).astype(dtype)
    initial_copy = initial.copy()
    weight = sympile.shared(initial, name="W")
    x, g = T.matrix("x", dtype=dtype), T.matrix("g", dtype=dtype)
    learning_rate = np.asarray(0.1, dtype)
    function = compile_c([x, g], [], updates=[(weight, weight - learning_rate * T.dot(x.T, g))])
    _ran_c(function)
    assert any(isinstance(node.op, Gemm) for node in function._vm.nodes)
    expected = initial.copy()
    for _step in range(3):
        xv, gv = rng.standard_normal((5, 4)).astype(dtype), rng.standard_normal((5, 3)).astype(
            dtype)
        xv_copy, gv_copy = xv.copy(), gv.copy()
        function(xv, gv)
        expected = expected - learning_rate * np.dot(xv.T, gv)
        assert_like_numpy(weight.get_value(), expected, rtol=RTOL[dtype], atol=RTOL[dtype])
        np.testing.assert_array_equal(xv, xv_copy)
        np.testing.assert_array_equal(gv, gv_copy)
    np.testing.assert_array_equal(initial, initial_copy)


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_matches_numpy(dtype):
    a3, b3 = T.tensor3("a3", dtype=dtype), T.tensor3("b3", dtype=dtype)
    a2, b2 = T.matrix("a2", dtype=dtype), T.matrix("b2", dtype=dtype)
    a1, b1 = T.vector("a1", dtype=dtype), T.vector("b1", dtype=dtype)
    single = T.tensor(dtype, shape=(1, None, None), name="single")
    outputs = [T.matmul(a3, b3), T.matmul(a3, b2), T.matmul(a2, b3), T.matmul(a3, b1),
               T.matmul(a1, b3), T.matmul(a2, b2), T.matmul(a2, b1), T.matmul(a1, b1),
               T.matmul(single, b3), T.matmul(a3, single.transpose(0, 2, 1))]
    inputs = [a3, b3, a2, b2, a1, b1, single]
    function = compile_c(inputs, outputs)
    python_function = _python_function(inputs, outputs)
    _ran_c(function)
    rng = np.random.default_rng(6)
    for batch, m, k, n in [(2, 3, 4, 5), (1, 1, 1, 1), (0, 2, 3, 4), (2, 0, 3, 4),
                           (2, 3, 0, 4), (3, 2, 3, 0)]:
        shapes = [(batch, m, k), (batch, k, n), (m, k), (k, n), (k,), (k,), (1, m, k)]
        values = [rng.standard_normal(shape).astype(dtype) for shape in shapes]
        a3v, b3v, a2v, b2v, a1v, b1v, single_value = values
        expected = [np.matmul(a3v, b3v), np.matmul(a3v, b2v), np.matmul(a2v, b3v),
                    np.matmul(a3v, b1v), np.matmul(a1v, b3v), np.matmul(a2v, b2v),
                    np.matmul(a2v, b1v), np.matmul(a1v, b1v), np.matmul(single_value, b3v),
                    np.matmul(a3v, single_value.transpose(0, 2, 1))]
        for reference, python_result in zip(expected, python_function(*values)):
            assert_like_numpy(python_result, reference, rtol=RTOL[dtype], atol=RTOL[dtype])
        for layout in LAYOUTS.values():
            arguments = [layout(value) for value in values]
            for result, reference in zip(function(*arguments), expected):
                assert_like_numpy(result, reference, rtol=RTOL[dtype], atol=RTOL[dtype])


def test_matmul_batch_mismatch_is_a_value_error():
    a, b = T.dtensor3("a"), T.dtensor3("b")
    function = compile_c([a, b], T.matmul(a, b))
    _ran_c(function)
    with pytest.raises(ValueError, match=r"MatMul.*batch.*2 and 3"):
        function(np.ones((2, 3, 4)), np.ones((3, 4, 5)))
    with pytest.raises(ValueError, match=r"MatMul.*broadcasts only if its type says"):
        function(np.ones((1, 3, 4)), np.ones((3, 4, 5)))
    with pytest.raises(ValueError, match=r"MatMul.*not aligned"):
        function(np.ones((2, 3, 4)), np.ones((2, 3, 5)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensordot_matches_numpy(dtype):
    a, b = T.tensor3("a", dtype=dtype), T.tensor3("b", dtype=dtype)
    m = T.matrix("m", dtype=dtype)
    u = T.vector("u", dtype=dtype)
    pairs = [((a, b), ([1, 2], [0, 1])), ((a, b), ([0], [2])), ((a, m), ([0, 2], [1, 0])),
             ((a, u), ([1], [0])), ((m, b), ([0], [1]))]
    outputs = [T.tensordot(left, right, axes) for (left, right), axes in pairs]
    assert all(isinstance(output.owner.op, T.TensorDot) for output in outputs)
    function = compile_c([a, b, m, u], outputs)
    python_function = _python_function([a, b, m, u], outputs)
    _ran_c(function)
    rng = np.random.default_rng(7)
    for shape in [(2, 3, 4), (3, 3, 3), (0, 3, 3), (3, 0, 3)]:
        # a (p, q, r), b (q, r, p), m (r, p), u (q,)
        p, q, r = shape
        values = [rng.standard_normal(s).astype(dtype) for s in [(p, q, r), (q, r, p),
                                                                 (r, p), (q,)]]
        named = dict(zip("abmu", values))
        expected = []
        for (left, right), axes in pairs:
            expected.append(np.tensordot(named[left.name], named[right.name], axes))
        for reference, python_result in zip(expected, python_function(*values)):
            assert_like_numpy(python_result, reference, rtol=RTOL[dtype], atol=RTOL[dtype])
        for layout in LAYOUTS.values():
            arguments = [layout(value) for value in values]
            for result, reference in zip(function(*arguments), expected):
                assert_like_numpy(result, reference, rtol=RTOL[dtype], atol=RTOL[dtype])


def test_tensordot_length_mismatch_is_a_value_error():
    a, b = T.dtensor3("a"), T.dtensor3("b")
    function = compile_c([a, b], T.tensordot(a, b, ([1, 2], [0, 1])))
    _ran_c(function)
    with pytest.raises(ValueError, match=r"TensorDot.*not aligned"):
        function(np.ones((2, 3, 4)), np.ones((3, 5, 2)))


def test_lengths_past_blas_int_are_an_overflow_error():
    """A length BLAS's 32-bit int cannot hold is an OverflowError, not a truncated call (the
    operands are zero-stride views, so nothing that large is allocated)."""
    x, u = T.fmatrix("x"), T.fvector("u")
    function = compile_c([x, u], [T.dot(u, u), T.dot(x, u)])
    _ran_c(function)
    length = 2**31
    long_vector = np.broadcast_to(np.ones(1, "float32"), (length,))
    with pytest.raises(OverflowError, match=r"Dot.*2147483648"):
        function(np.broadcast_to(np.ones((1, 1), "float32"), (1, length)), long_vector)


SANITIZED_SCRIPT = """
import numpy as np
import sympile.tensor as T
from tests.link.c import test_blas

rng = np.random.default_rng(0)
for dtype in test_blas.DTYPES:
    test_blas.test_dot_matches_numpy_on_every_layout_and_shape(dtype)
    test_blas.test_gemm_gemv_ger_match_numpy_on_every_layout_and_shape(dtype)
    test_blas.test_updates_compute_every_term_as_perform(dtype)
    test_blas.test_inplace_updates_write_over_their_first_input(dtype)
    test_blas.test_matmul_matches_numpy(dtype)
    test_blas.test_tensordot_matches_numpy(dtype)
test_blas.test_inplace_update_reads_operands_that_share_the_destroyed_memory()
test_blas.test_dot_shape_mismatch_is_a_value_error_naming_the_op_and_shapes()
test_blas.test_update_shape_mismatches_are_value_errors_naming_the_op()
test_blas.test_matmul_batch_mismatch_is_a_value_error()
test_blas.test_tensordot_length_mismatch_is_a_value_error()
print("clean")
"""


@pytest.mark.slow
def test_blas_code_is_clean_under_address_sanitizer():
    """The tests above (every layout, copy, inplace and error path), with the generated code
    built with -fsanitize=address."""
    assert_clean_under_address_sanitizer(SANITIZED_SCRIPT)
