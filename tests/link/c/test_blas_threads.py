"""How many threads the BLAS calls of the C backend run on (sympile.tensor.blas.blas_c): a call of
fewer than config.blas_parallel_minsize multiply-adds runs on one thread, a larger one is
split among OpenMP threads (each calling the library on one thread), and the library's
thread count is the same after the call as before it, for small and large calls alike."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import scipy.linalg.cython_blas

import sympile
import sympile.tensor as T
from sympile.tensor.blas import Dot
from tests.link.c.utils import compile_c, requires_compiler

pytestmark = requires_compiler


def _openblas() -> ctypes.CDLL:
    """scipy's BLAS, when it is an OpenBLAS whose thread count can be read and set."""
    library = ctypes.CDLL(scipy.linalg.cython_blas.__file__)
    for prefix in ("scipy_", ""):
        getter = getattr(library, f"{prefix}openblas_get_num_threads", None)
        setter = getattr(library, f"{prefix}openblas_set_num_threads", None)
        if getter is not None and setter is not None:
            getter.restype = ctypes.c_int
            setter.argtypes = [ctypes.c_int]
            return getter, setter
    pytest.skip("scipy's BLAS is not an OpenBLAS (no openblas_get_num_threads)")


@pytest.fixture
def two_blas_threads():
    """scipy's OpenBLAS set to 2 threads for the test (its count is set back after); yields
    the function that reads the count."""
    get_threads, set_threads = _openblas()
    before = get_threads()
    set_threads(2)
    yield get_threads
    set_threads(before)


# (x shape, y shape): matrix @ matrix (gemm), matrix @ vector (gemv), vector @ vector (dot).
PRODUCTS = [((40, 30), (30, 20)), ((300, 400), (400,)), ((50,), (50,)), ((1, 30), (30, 20))]


@pytest.mark.parametrize("minimum", [1, 10**12])
@pytest.mark.parametrize("x_shape, y_shape", PRODUCTS)
def test_products_keep_the_thread_count(two_blas_threads, minimum, x_shape, y_shape):
    """Below the minimum (every call, for 10**12) and above it (1): the values of numpy and
    the library back at 2 threads."""
    rng = np.random.default_rng(0)
    x_value = rng.standard_normal(x_shape).astype("float32")
    y_value = rng.standard_normal(y_shape).astype("float32")
    x = T.tensor("float32", shape=(None,) * len(x_shape))
    y = T.tensor("float32", shape=(None,) * len(y_shape))
    with sympile.config.change_flags(blas_parallel_minsize=minimum):
        function = compile_c([x, y], T.dot(x, y))
    np.testing.assert_allclose(function(x_value, y_value), np.dot(x_value, y_value),
                               rtol=1e-4, atol=1e-4)
    assert two_blas_threads() == 2


@pytest.mark.parametrize("batch", [1, 7])
def test_sgd_update_keeps_the_thread_count(two_blas_threads, batch):
    """W - lr * x.T @ d (a Gemm in place, a ger when batch is 1), called many times: numpy's
    values, and 2 threads after."""
    rng = np.random.default_rng(1)
    weights = sympile.shared(rng.standard_normal((30, 20)))
    x, d = T.matrix("x", dtype="float64"), T.matrix("d", dtype="float64")
    with sympile.config.change_flags(blas_parallel_minsize=10**12):
        step = compile_c([x, d], [], updates=[(weights, weights - 0.5 * T.dot(x.T, d))])
    expected = weights.get_value()
    for _ in range(5):
        x_value, d_value = rng.standard_normal((batch, 30)), rng.standard_normal((batch, 20))
        step(x_value, d_value)
        expected = expected - 0.5 * x_value.T @ d_value
    np.testing.assert_allclose(weights.get_value(), expected, rtol=1e-12)
    assert two_blas_threads() == 2


def test_the_minimum_is_in_the_code():
    """The flag is read when the C code is generated, so a new value gives new code (and a
    new cache key)."""
    x, y = T.fmatrix(), T.fmatrix()
    node = T.dot(x, y).owner
    assert isinstance(node.op, Dot)
    names = type("Names", (), {"inputs": ("a", "b"), "outputs": ("out",), "fail": "fail;"})
    texts = []
    for minimum in (1000, 123457):
        with sympile.config.change_flags(blas_parallel_minsize=minimum):
            texts.append("".join(node.op.c_code(node, names).units))
    assert "work >= 1000.0" in texts[0] and "work >= 123457.0" in texts[1]


def test_the_minimum_must_be_positive():
    with pytest.raises(ValueError, match="positive integer"):
        sympile.config.blas_parallel_minsize = 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("rows, columns", [(37, 10), (10, 37), (5, 63), (70, 64), (1, 3)])
@pytest.mark.parametrize("vector_step", [1, 3])
def test_rank_one_updates(dtype, order, rows, columns, vector_step):
    """a + alpha * outer(x, y) (Ger, and Gemm with one inner column) in place, where the lines
    of a are short (a loop updates them) or long (ger does): numpy's values, for C- and
    Fortran-ordered a and spaced vectors."""
    rng = np.random.default_rng(rows * columns + vector_step)
    a_value = np.asarray(rng.standard_normal((rows, columns)), dtype=dtype, order=order)
    x_value = rng.standard_normal(rows * vector_step).astype(dtype)[::vector_step]
    y_value = rng.standard_normal(columns * vector_step).astype(dtype)[::vector_step]
    a = sympile.shared(a_value)
    x, y = T.tensor(dtype, shape=(None,)), T.tensor(dtype, shape=(None,))
    alpha = np.asarray(-0.25, dtype=dtype)
    rtol = 1e-5 if dtype == "float32" else 1e-13
    x_row, y_row = T.tensor(dtype, shape=(1, None)), T.tensor(dtype, shape=(1, None))
    ger_step = compile_c([x, y], [], updates=[(a, a + alpha * T.outer(x, y))])
    gemm_step = compile_c([x_row, y_row], [], updates=[(a, a + alpha * T.dot(x_row.T, y_row))])
    assert [type(node.op).__name__ for node in gemm_step._vm.fgraph.toposort()][-1] == \
        "GemmInplace"
    expected = a_value.astype("float64")
    for step in (ger_step, gemm_step):
        if step is ger_step:
            step(x_value, y_value)
        else:
            step(x_value[None, :], y_value[None, :])
        expected = expected + float(alpha) * np.outer(x_value, y_value)
        np.testing.assert_allclose(a.get_value(), expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("orders", ["CC", "FF", "CF"])
@pytest.mark.parametrize("m, k, n", [(90, 80, 70), (70, 80, 90), (1, 200, 300), (300, 200, 1),
                                     (150, 1, 40), (2, 2, 1000), (1, 30, 10)])
def test_calls_split_among_openmp_threads(two_blas_threads, dtype, orders, m, k, n):
    """Above the minimum, with OpenMP on (and BLAS doing every product), a call is split
    among OpenMP threads by bands of c's rows (columns when c is one row, in whole cache
    lines, a band of no line included), each one BLAS call on one thread:
    dot/gemm, W + x.T @ y in place (gemm, ger), matrix @ vector (gemv), numpy's values, the
    library back at 2 threads after."""
    rng = np.random.default_rng(m * k + n)
    a_value = np.asarray(rng.standard_normal((m, k)), dtype=dtype, order=orders[0])
    b_value = np.asarray(rng.standard_normal((k, n)), dtype=dtype, order=orders[1])
    initial = rng.standard_normal((m, n)).astype(dtype)
    a, b = T.matrix("a", dtype=dtype), T.matrix("b", dtype=dtype)
    weights = sympile.shared(initial.copy())
    vector = T.vector("v", dtype=dtype)
    with sympile.config.change_flags(blas_parallel_minsize=1, blas_skinny="off", openmp=True):
        product = compile_c([a, b], T.dot(a, b))
        update = compile_c([a, b], [], updates=[(weights, weights + 0.5 * T.dot(a, b))])
        matrix_vector = compile_c([a, vector], T.dot(a, vector))
    rtol = 1e-4 if dtype == "float32" else 1e-12
    expected = a_value.astype("float64") @ b_value
    np.testing.assert_allclose(product(a_value, b_value), expected, rtol=rtol, atol=rtol * k)
    update(a_value, b_value)
    np.testing.assert_allclose(weights.get_value(), initial + 0.5 * expected, rtol=rtol,
                               atol=rtol * k)
    column = b_value[:, 0].copy()
    np.testing.assert_allclose(matrix_vector(a_value, column), a_value.astype("float64") @ column,
                               rtol=rtol, atol=rtol * k)
    assert two_blas_threads() == 2
