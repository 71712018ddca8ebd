"""The skinny-product kernels (sympile.tensor.blas.skinny): the dispatcher's library unit
built on its own and called through ctypes, so that each call says whether a kernel did
the product (1) or left it to BLAS (0); its results against
float64 numpy on random shapes, layouts, alpha and accumulate, on one thread and split
among threads (by rows of c, or by steps with partial sums added), with AVX-512 and with
AVX2. Then the kernels as the C backend runs them (Dot, Gemm, an SGD step), against numpy
and with config.blas_skinny 'off', and (slow) under AddressSanitizer."""

from __future__ import annotations

import ctypes
import platform
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.tensor.blas import skinny
from sympile.tensor.blas.skinny import SKINNY_ROWS, SKINNY_STEPS, skinny_code
from tests.link.c.utils import (
    assert_clean_under_address_sanitizer,
    compile_c,
    load_c_library,
    requires_compiler,
)

pytestmark = [
    requires_compiler,
    pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                       reason="the kernels are x86-64 only (elsewhere BLAS does every product)"),
]

TYPES = {"float32": ctypes.c_float, "float64": ctypes.c_double}
TOLERANCE = {"float32": 2e-5, "float64": 1e-13}


def _build(directory, dtype: str, minsize: float, avx512: bool):
    """The dispatcher of `dtype` compiled on its own as a shared library (with OpenMP), and
    a Python function calling it on numpy arrays: run(a, b, c, alpha, accumulate) -> status."""
    name, _, unit = skinny_code(dtype, minsize, "auto" if avx512 else "avx2")
    library = load_c_library(directory, name,
                             "#include <stdint.h>\ntypedef intptr_t npy_intp;\n" + unit,
                             openmp=True)
    function = getattr(library, name)
    size, pointer = ctypes.c_ssize_t, ctypes.c_void_p
    function.argtypes = [size, size, size, TYPES[dtype], pointer, size, size, pointer, size,
                         size, pointer, size, size, ctypes.c_int]

    def run(a: np.ndarray, b: np.ndarray, c: np.ndarray, alpha: float, accumulate: bool) -> int:
        steps = [stride // a.itemsize for array in (a, b, c) for stride in array.strides]
        return function(a.shape[0], b.shape[1], a.shape[1], alpha, a.ctypes.data, steps[0],
                        steps[1], b.ctypes.data, steps[2], steps[3], c.ctypes.data, steps[4],
                        steps[5], int(accumulate))
    return run


# (dtype, threads, avx512): threads 'many' builds with 1 multiply-add as the threshold.
VARIANTS = [(dtype, threads, avx512) for dtype in TYPES for threads in ("one", "many")
            for avx512 in (True, False)]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    directory = tmp_path_factory.mktemp("skinny")
    with ThreadPoolExecutor(2) as pool:
        built = dict(zip(VARIANTS, pool.map(
            lambda v: _build(directory, v[0], 1.0 if v[1] == "many" else 1e18, v[2]),
            VARIANTS)))
    # The dispatcher itself says whether this CPU runs a kernel: a skinny product it takes
    # whenever the CPU has AVX2 with FMA.
    a, b = np.ones((10, 784), "float32"), np.ones((784, 500), "float32")
    if built["float32", "one", False](a, b, np.zeros((10, 500), "float32"), 1.0, False) == 0:
        pytest.skip("the CPU runs neither kernel (no AVX2 with FMA): BLAS does every product")
    return built


def _layout(rng: np.random.Generator, shape: tuple[int, int], dtype: str, kind: str):
    """Values of `shape` in C order, Fortran order, or a view with spaced rows."""
    value = rng.standard_normal(shape).astype(dtype)
    if kind == "F":
        return np.asfortranarray(value)
    if kind == "spaced":
        backing = np.full((shape[0], shape[1] + 3), np.nan, dtype)
        backing[:, :shape[1]] = value
        return backing[:, :shape[1]]
    return value


def _expected(a, b, c, alpha, accumulate):
    product = alpha * (a.astype(np.float64) @ b.astype(np.float64))
    return product + c if accumulate else product


def _assert_close(actual, expected, k, dtype):
    # Relative to the size a sum of k products of unit normals has.
    error = np.max(np.abs(actual - expected) / (np.abs(expected) + np.sqrt(k)), initial=0)
    assert error < TOLERANCE[dtype], error


SHAPES = st.one_of(
    # Few rows of c (the forward and backward products of a small batch).
    st.tuples(st.integers(1, SKINNY_ROWS), st.integers(1, 400), st.integers(1, 300)),
    # A short inner length (the weight gradient of a small batch).
    st.tuples(st.integers(SKINNY_ROWS + 1, 300), st.integers(1, SKINNY_STEPS),
              st.integers(1, 300)))


@settings(max_examples=150, deadline=None)
# One step split among two threads: the thread that writes c has none, and writes zeros.
@example(shape=(1, 1, 32), variant=("float32", "many", True), layouts=("C", "C", "C"),
         alpha=1.0, accumulate=False, seed=0)
@given(shape=SHAPES, variant=st.sampled_from(VARIANTS),
       layouts=st.tuples(*[st.sampled_from(["C", "F", "spaced"])] * 3),
       alpha=st.sampled_from([1.0, -0.01, 2.5]), accumulate=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_kernels_match_numpy(kernels, shape, variant, layouts, alpha, accumulate, seed):
    dtype = variant[0]
    m, k, n = shape
    rng = np.random.default_rng(seed)
    a = _layout(rng, (m, k), dtype, layouts[0])
    b = _layout(rng, (k, n), dtype, layouts[1])
    c = _layout(rng, (m, n), dtype, layouts[2])
    before = c.copy()
    status = kernels[variant](a, b, c, alpha, accumulate)
    if status == 1:
        _assert_close(c, _expected(a, b, before, alpha, accumulate), k, dtype)
    else:
        # Left to BLAS: c untouched.
        assert status == 0
        np.testing.assert_array_equal(c, before)


# (m, k, n, layout of a, layout of b, status): which products the kernels take.
DISPATCH = [
    (10, 784, 500, "C", "C", 1),    # h @ W: rows kernel
    (10, 500, 784, "C", "T", 1),    # delta @ W.T: dot kernel
    (784, 10, 500, "T", "C", 1),    # h.T @ delta: rows kernel, by rows of c
    (60, 1000, 1000, "C", "C", 1),
    (60, 10, 1000, "C", "T", 1),    # delta @ W.T, short inner length: b copied by rows
    (SKINNY_ROWS + 1, SKINNY_STEPS + 1, 500, "C", "C", 0),  # neither skinny: gemm
    (1000, 1000, 1000, "C", "C", 0),
    (60, 784, 10, "C", "C", 0),     # c's rows too short for the vectors: gemm
    (SKINNY_ROWS, 2000, 64, "F", "F", 1),
    (100, 64, 500, "T", "C", 1),
]


@pytest.mark.parametrize("m, k, n, a_layout, b_layout, status", DISPATCH)
def test_dispatch(kernels, m, k, n, a_layout, b_layout, status):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m) if a_layout == "T" else (m, k)).astype("float32")
    a = a.T if a_layout == "T" else np.asfortranarray(a) if a_layout == "F" else a
    b = rng.standard_normal((n, k) if b_layout == "T" else (k, n)).astype("float32")
    b = b.T if b_layout == "T" else np.asfortranarray(b) if b_layout == "F" else b
    c = np.zeros((m, n), "float32")
    for threads in ("one", "many"):
        assert kernels["float32", threads, True](a, b, c, 1.0, False) == status
        if status == 1:
            _assert_close(c, _expected(a, b, c, 1.0, False), k, "float32")


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: str(v))
def test_threads_split_rows_and_steps(kernels, variant):
    """Large skinny products: split by steps (partial sums added at the end: m rows not
    divisible by the threads, k steps not either) and by rows of c (inner length short)."""
    dtype = variant[0]
    rng = np.random.default_rng(3)
    for m, k, n in ((7, 1001, 333), (1, 3, 2000), (500, 5, 129), (33, 64, 1000)):
        for accumulate in (False, True):
            a = rng.standard_normal((m, k)).astype(dtype)
            b = rng.standard_normal((k, n)).astype(dtype)
            c = rng.standard_normal((m, n)).astype(dtype)
            before = c.copy()
            assert kernels[variant](a, b, c, -0.5, accumulate) == 1
            _assert_close(c, _expected(a, b, before, -0.5, accumulate), k, dtype)


def test_nan_and_inf_propagate(kernels):
    """No term is skipped: nan and inf in a or b reach the products that read them."""
    a = np.ones((4, 40), "float32")
    b = np.ones((40, 64), "float32")
    a[1, 3] = np.nan
    b[5, 7] = np.inf
    c = np.zeros((4, 64), "float32")
    assert kernels["float32", "one", True](a, b, c, 1.0, False) == 1
    expected = a @ b
    np.testing.assert_array_equal(np.isnan(c), np.isnan(expected))
    np.testing.assert_array_equal(c[np.isfinite(expected)], expected[np.isfinite(expected)])


def test_a_cpu_of_unknown_level_gets_both_kernel_sets(tmp_path, monkeypatch, kernels):
    """Where the CPU's level cannot be read, the unit holds the AVX-512 and the AVX2 kernels
    and picks one when it runs: the dot and the rows kernel, on numpy's values."""
    monkeypatch.setattr(skinny, "cpu_level", lambda: None)
    skinny_code.cache_clear()
    try:
        unit = skinny_code("float32", 1e18)[2]
        run = _build(tmp_path, "float32", 1e18, avx512=True)
    finally:
        skinny_code.cache_clear()
    assert "sympile_skinny_rows_avx2_float32" in unit
    assert "(isa == 2 ? sympile_skinny_rows_avx512_float32" in unit
    rng = np.random.default_rng(2)
    for (m, k, n), b_layout in (((10, 784, 50), "C"), ((10, 100, 7), "F")):
        a, b = _layout(rng, (m, k), "float32", "C"), _layout(rng, (k, n), "float32", b_layout)
        c = np.zeros((m, n), "float32")
        assert run(a, b, c, 1.0, False) == 1
        _assert_close(c, _expected(a, b, c, 1.0, False), k, "float32")


def test_no_kernels_off_x86_64(monkeypatch):
    """Another architecture gets the dispatcher that leaves every product to BLAS, whatever
    the setting."""
    monkeypatch.setattr(skinny, "is_x86_64", lambda: False)
    skinny_code.cache_clear()
    try:
        for setting in ("auto", "avx2"):
            name, support, unit = skinny_code("float32", 1e18, setting)
            assert unit is None and name.startswith("sympile_no_skinny_")
    finally:
        skinny_code.cache_clear()


# -- as the C backend runs them ------------------------------------------------------------

@pytest.mark.parametrize("setting", ["auto", "avx2", "off"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dot_and_gemm_through_the_backend(setting, dtype):
    """Dot in every orientation of an MLP layer, and W -= lr * h.T @ delta in place, on the
    C backend under each setting of config.blas_skinny: numpy's values."""
    rng = np.random.default_rng(5)
    h = T.matrix("h", dtype=dtype)
    delta = T.matrix("delta", dtype=dtype)
    weights = sympile.shared(rng.standard_normal((70, 90)).astype(dtype), name="W")
    with sympile.config.change_flags(blas_skinny=setting, blas_parallel_minsize=1):
        forward = compile_c([h], T.dot(h, weights))
        backward = compile_c([delta], T.dot(delta, weights.T))
        step = compile_c([h, delta], [], updates=[
            (weights, weights - np.asarray(0.01, dtype) * T.dot(h.T, delta))])
    for batch in (1, 10, 64):
        h_value = rng.standard_normal((batch, 70)).astype(dtype)
        delta_value = rng.standard_normal((batch, 90)).astype(dtype)
        w = weights.get_value()
        _assert_close(forward(h_value), h_value @ w, 70, dtype)
        _assert_close(backward(delta_value), delta_value @ w.T, 90, dtype)
        step(h_value, delta_value)
        _assert_close(weights.get_value(), w - 0.01 * h_value.T.astype(np.float64) @ delta_value,
                      batch, dtype)


@pytest.mark.slow
def test_kernels_are_clean_under_address_sanitizer():
    """Every kernel path (packed rows on the stack and allocated, masked last columns, the
    dot kernel's last steps, b copied by rows, threads with partial sums) reads and writes
    only its arrays."""
    script = textwrap.dedent("""
        import numpy as np
        import sympile, sympile.tensor as T
        from tests.link.c.utils import compile_c
        rng = np.random.default_rng(0)
        for openmp, minsize in ((False, 500000), (True, 1)):
            sympile.config.openmp = openmp
            sympile.config.blas_parallel_minsize = minsize
            for dtype in ("float32", "float64"):
                x, y = T.matrix(dtype=dtype), T.matrix(dtype=dtype)
                forward = compile_c([x, y], T.dot(x, y))
                backward = compile_c([x, y], T.dot(x, y.T))
                gradient = compile_c([x, y], T.dot(x.T, y))
                for m, k, n in ((3, 5, 33), (10, 784, 47), (64, 17, 64), (5, 1000, 31),
                                (200, 3, 40)):
                    a = rng.standard_normal((m, k)).astype(dtype)
                    b = rng.standard_normal((k, n)).astype(dtype)
                    expected = a.astype(np.float64) @ b
                    for result in (forward(a, b), backward(a, np.ascontiguousarray(b.T)),
                                   gradient(np.ascontiguousarray(a.T), b)):
                        np.testing.assert_allclose(result, expected, rtol=1e-3, atol=1e-3)
        print("clean")
    """)
    assert_clean_under_address_sanitizer(script)
