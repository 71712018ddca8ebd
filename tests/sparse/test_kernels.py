"""The sparse products' C kernels (sympile.sparse.kernels) and the rewrites that use them
(sympile.sparse.rewriting): values against scipy for both formats and dtypes, strided and
empty operands, malformed arrays, the graphs before and after, and AddressSanitizer."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import sympile
import sympile.tensor as T
from sympile import sparse
from sympile.sparse.kernels import (
    SampledProducts,
    SparseDenseAccumulate,
    SparseDenseAccumulateInplace,
    SparseDenseProduct,
)
from tests.link.c.utils import C_MODE, PYTHON_MODE, compile_c, requires_compiler

pytestmark = requires_compiler


def _kinds(f):
    return [type(node.op).__name__ for node in f.maker.fgraph.toposort()]


def _matrix(rng, shape, format, dtype, density=0.3):
    matrix = sp.random(*shape, density=density, format=format, random_state=rng,
                       dtype=dtype)
    matrix.sort_indices()
    return matrix


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("format", ["csr", "csc"])
@pytest.mark.parametrize("shape, k", [((7, 5), 3), ((40, 30), 1), ((0, 4), 2), ((3, 0), 2),
                                      ((5, 4), 0), ((300, 200), 64)])
def test_products_run_in_c_and_match_scipy(shape, k, format, dtype):
    rng = np.random.default_rng(0)
    a = _matrix(rng, shape, format, dtype)
    w = rng.normal(size=(shape[1], k)).astype(dtype)
    v = rng.normal(size=(k, shape[0])).astype(dtype)
    u = rng.normal(size=(k, shape[1])).astype(dtype)
    x = sparse.matrix(format, "x", dtype=dtype)
    right, left, rows = (T.matrix(name, dtype=dtype) for name in ("right", "left", "rows"))
    # The last operand is strided: a transposed view.
    outputs = [sparse.structured_dot(x, right), sparse.dot(left, x), sparse.dot(x, rows.T)]
    f = sympile.function([x, right, left, rows], outputs, mode=C_MODE)
    assert "SparseDenseProduct" in _kinds(f)
    assert not any(isinstance(node.op, SparseDenseProduct) for node in f._vm.fallback_nodes)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    results = f(a, w, v, u)
    for result, expected in zip(results, [a @ w, v @ a, a @ u.T]):
        np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance)
        assert result.dtype == np.dtype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("format", ["csr", "csc"])
def test_sampling_dot_runs_in_c_and_matches_scipy(format, dtype):
    rng = np.random.default_rng(1)
    p = _matrix(rng, (30, 20), format, dtype)
    xv, yv = (rng.normal(size=(n, 4)).astype(dtype) for n in (30, 20))
    x, y = T.matrix("x", dtype=dtype), T.matrix("y", dtype=dtype)
    pattern = sparse.matrix(format, "p", dtype=dtype)
    f = sympile.function([x, y, pattern], sparse.sampling_dot(x, y.T.T, pattern), mode=C_MODE)
    assert "SampledProducts" in _kinds(f) and "SamplingDot" not in _kinds(f)
    result = f(xv, yv, p)
    assert result.format == format
    np.testing.assert_allclose(result.toarray(), p.multiply(xv @ yv.T).toarray(),
                               rtol=1e-5 if dtype == "float32" else 1e-12)


def test_kernels_agree_with_perform_and_reject_malformed_arrays():
    data, y = T.dvector("data"), T.dmatrix("y")
    indices, indptr, shape = T.ivector("indices"), T.ivector("indptr"), T.lvector("shape")
    product = SparseDenseProduct("csr")(data, indices, indptr, shape, y)
    sampled = SampledProducts("csr", True)(y, y, data, indices, indptr)
    inputs = [data, indices, indptr, shape, y]
    c = compile_c(inputs, [product, sampled])
    python = sympile.function(inputs, [product, sampled], mode=PYTHON_MODE)
    good = (np.array([1.0, 2.0, 3.0]), np.array([0, 2, 1], "int32"),
            np.array([0, 2, 3, 3], "int32"), np.array([3, 3]), np.arange(6.0).reshape(3, 2))
    for got, expected in zip(c(*good), python(*good)):
        np.testing.assert_allclose(got, expected)
    with pytest.raises(ValueError, match=r"index 3 at position 1 is outside \[0, 3\)"):
        c(good[0], np.array([0, 3, 1], "int32"), *good[2:])
    with pytest.raises(ValueError, match="indptr falls"):
        c(good[0], good[1], np.array([0, 2, 1, 3], "int32"), *good[3:])
    with pytest.raises(ValueError, match="indptr must have 4 entries"):
        c(good[0], good[1], np.array([0, 2, 3], "int32"), *good[3:])
    with pytest.raises(ValueError, match="do not multiply"):
        c(*good[:4], np.ones((2, 2)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("format", ["csr", "csc"])
@pytest.mark.parametrize("op", [SparseDenseAccumulate, SparseDenseAccumulateInplace])
def test_accumulate_matches_scipy_in_c_and_perform(op, format, dtype):
    """z + alpha S @ y, z contiguous and strided (a transposed view); the inplace form
    writes over z itself, also when z is strided."""
    rng = np.random.default_rng(3)
    a = _matrix(rng, (30, 20), format, dtype)
    data, indices, indptr = (T.vector(n, dtype=d) for n, d in
                             (("data", dtype), ("indices", "int32"), ("indptr", "int32")))
    shape, z, y = T.lvector("shape"), T.matrix("z", dtype=dtype), T.matrix("y", dtype=dtype)
    alpha = T.scalar("alpha", dtype=dtype)
    inputs = [sympile.In(z, mutable=True), alpha, data, indices, indptr, shape, y]
    result = op(format)(z, alpha, data, indices, indptr, shape, y)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    yv = rng.normal(size=(20, 4)).astype(dtype)
    for mode in (C_MODE, PYTHON_MODE):
        f = sympile.function(inputs, result, mode=mode, accept_inplace=True)
        for zv in (rng.normal(size=(30, 4)).astype(dtype),
                   np.asfortranarray(rng.normal(size=(30, 4)).astype(dtype))):
            expected = zv + dtype_scalar(dtype, -0.5) * (a @ yv)
            got = f(zv, dtype_scalar(dtype, -0.5), a.data, a.indices, a.indptr,
                    np.array(a.shape), yv)
            np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)
            if op is SparseDenseAccumulateInplace:
                np.testing.assert_allclose(zv, expected, rtol=tolerance, atol=tolerance)


def dtype_scalar(dtype: str, value: float) -> np.ndarray:
    return np.asarray(value, dtype=dtype)


def test_accumulate_rejects_shapes_that_do_not_fit():
    data, y, z = T.dvector("data"), T.dmatrix("y"), T.dmatrix("z")
    indices, indptr, shape = T.ivector("indices"), T.ivector("indptr"), T.lvector("shape")
    alpha = T.dscalar("alpha")
    inputs = [z, alpha, data, indices, indptr, shape, y]
    c = compile_c(inputs, SparseDenseAccumulate("csr")(*inputs))
    good = (np.zeros((3, 2)), 1.0, np.array([1.0, 2.0, 3.0]), np.array([0, 2, 1], "int32"),
            np.array([0, 2, 3, 3], "int32"), np.array([3, 3]), np.arange(6.0).reshape(3, 2))
    np.testing.assert_allclose(c(*good), sp.csr_matrix(good[2:5], shape=(3, 3)) @ good[6])
    with pytest.raises(ValueError, match=r"z must be a \(3, 2\) float64 matrix"):
        c(np.zeros((2, 2)), *good[1:])
    with pytest.raises(ValueError, match=r"index 3 at position 1 is outside \[0, 3\)"):
        c(*good[:3], np.array([0, 3, 1], "int32"), *good[4:])
    with pytest.raises(TypeError, match="alpha, data and y of z's dtype float64"):
        SparseDenseAccumulate("csr")(z, T.fscalar("a"), data, indices, indptr, shape, y)


def test_a_gradient_step_adds_into_the_weights():
    """W - lr * (gradient through structured_dot) becomes one SparseDenseAccumulate written
    over W, with the values of the unfused step."""
    rng = np.random.default_rng(4)
    a = _matrix(rng, (40, 300), "csr", "float32", 0.05)
    labels_value = rng.integers(0, 5, 40)
    x = sparse.csr_matrix("x", dtype="float32")
    labels = T.lvector("labels")

    def step(mode):
        w = sympile.shared(np.zeros((300, 5), "float32"), name="w")
        p = T.nnet.softmax(sparse.structured_dot(x, w))
        loss = -T.log(p[T.arange(labels.shape[0]), labels]).mean()
        f = sympile.function([x, labels], loss, mode=mode,
                             updates=[(w, w - np.float32(0.5) * sympile.grad(loss, w))])
        return f, w

    fused, w_fused = step(C_MODE)
    unfused, w_unfused = step(C_MODE.excluding("local_sparse_accumulate"))
    assert "SparseDenseAccumulateInplace" in _kinds(fused)
    assert "SparseDenseAccumulate" not in "".join(_kinds(unfused))
    for _ in range(3):
        np.testing.assert_allclose(fused(a, labels_value), unfused(a, labels_value),
                                   rtol=1e-5)
    np.testing.assert_allclose(w_fused.get_value(), w_unfused.get_value(), rtol=1e-5,
                               atol=1e-7)


def test_rewrites_before_and_after():
    rng = np.random.default_rng(2)
    a = _matrix(rng, (6, 5), "csr", "float64", 0.5)
    w = rng.normal(size=(5, 3))
    x, weights = sparse.csr_matrix("x", dtype="float64"), T.dmatrix("w")
    # dot(dense_from_sparse(S), W): the sparse product, the zeros never multiplied.
    f = sympile.function([x, weights], T.dot(sparse.dense_from_sparse(x), weights))
    assert "DenseFromSparse" not in _kinds(f) and "SparseDenseProduct" in _kinds(f)
    np.testing.assert_allclose(f(a, w), a @ w)
    # A structured op of a structured op: one CSM and one loop on the stored values.
    g = sympile.function([x], sparse.structured_exp(sparse.structured_pow(x, 2.0)))
    assert _kinds(g).count("CSM") == 1 and _kinds(g).count("CSMProperties") == 1
    assert _kinds(g).count("Elemwise") == 1
    # The result's pattern is x's, checked when x was made: its CSM skips the O(nnz) checks.
    (csm,) = [n.op for n in g.maker.fgraph.toposort() if isinstance(n.op, sparse.CSM)]
    assert not csm.checked
    # A pattern only partly x's is checked.
    indptr = T.ivector("indptr")
    data, indices, _, shape = sparse.csm_properties(x)
    mixed = sympile.function([x, indptr], sparse.CSM("csr")(data * 2, indices, indptr, shape))
    (csm,) = [n.op for n in mixed.maker.fgraph.toposort() if isinstance(n.op, sparse.CSM)]
    assert csm.checked
    with pytest.raises(ValueError, match="indptr must rise"):
        mixed(a, np.zeros(7, "int32"))
    expected = a.copy()
    expected.data = np.exp(expected.data ** 2)
    np.testing.assert_allclose(g(a).toarray(), expected.toarray())
    # The gradient Sᵀ g reads S's own arrays: no transpose, one csm_properties.
    cost = sparse.structured_dot(x, weights).sum()
    k = sympile.function([x, weights], sympile.grad(cost, weights))
    assert "Transpose" not in _kinds(k) and _kinds(k).count("CSMProperties") == 1
    np.testing.assert_allclose(k(a, w), a.T @ np.ones((6, 3)))
    # CSM(csm_properties(x)) is x.
    h = sympile.function([x], sparse.CSM("csr")(*sparse.csm_properties(x)))
    assert _kinds(h) == [] or "CSM" not in _kinds(h)
    assert (h(a) != a).nnz == 0


SANITIZER_SCRIPT = """
import numpy as np, scipy.sparse as sp
import sympile
import sympile.tensor as T
from sympile import sparse
from tests.link.c.utils import compile_c

rng = np.random.default_rng(0)
for format in ("csr", "csc"):
    x = sparse.matrix(format, "x", dtype="float64")
    w, v = T.dmatrix("w"), T.dmatrix("v")
    z = T.dmatrix("z")
    f = compile_c([x, w, v, z], [sparse.structured_dot(x, w), sparse.dot(v, x),
                                 sparse.sampling_dot(v.T, w, x),
                                 z - 0.5 * sparse.structured_dot(x, w[:, ::-1])])
    for shape, k in [((7, 5), 3), ((0, 4), 2), ((3, 0), 2), ((5, 4), 0), ((50, 40), 9)]:
        a = sp.random(*shape, density=0.3, format=format, random_state=rng)
        f(a, rng.normal(size=(shape[1], k)), rng.normal(size=(k, shape[0])),
          rng.normal(size=(shape[0], k)))
    # Written over a mutable z (the inplace form), contiguous and strided.
    g = compile_c([x, w, sympile.In(z, mutable=True)], z - 0.5 * sparse.structured_dot(x, w))
    assert "SparseDenseAccumulateInplace" in str(g.maker.fgraph.toposort())
    a = sp.random(50, 40, density=0.3, format=format, random_state=rng)
    for zv in (rng.normal(size=(50, 9)), np.asfortranarray(rng.normal(size=(50, 9)))):
        g(a, rng.normal(size=(40, 9)), zv)
    try:
        f(sp.random(3, 3, density=0.5, format=format), np.ones((2, 1)), np.ones((1, 3)),
          np.ones((3, 1)))
    except ValueError:
        pass
print("clean")
"""


@pytest.mark.slow
def test_kernels_are_clean_under_address_sanitizer():
    from tests.link.c.utils import assert_clean_under_address_sanitizer
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)


def test_a_failed_step_leaves_the_weights_as_they_were():
    """The inplace accumulate writes over W; when another update of the same call fails, W
    keeps its old value (all-or-nothing updates, sympile.compile.updates)."""
    rng = np.random.default_rng(5)
    a = _matrix(rng, (6, 8), "csr", "float64", 0.5)
    x, g, v = sparse.csr_matrix("x", dtype="float64"), T.dmatrix("g"), T.dvector("v")
    w = sympile.shared(np.ones((8, 3)), name="w")
    b = sympile.shared(np.zeros(3), name="b")
    step = sympile.function([x, g, v], [], mode=C_MODE, updates=[
        (w, w - 0.5 * sparse.structured_dot(x.T, g)), (b, b + v)])
    assert "SparseDenseAccumulateInplace" in _kinds(step)
    with pytest.raises(ValueError):
        step(a, np.ones((6, 3)), np.ones(4))         # b + v: lengths 3 and 4
    np.testing.assert_array_equal(w.get_value(), np.ones((8, 3)))
    step(a, np.ones((6, 3)), np.ones(3))
    np.testing.assert_allclose(w.get_value(), np.ones((8, 3)) - 0.5 * (a.T @ np.ones((6, 3))))
