"""sympile.sparse: every op against scipy.sparse, in both formats, float64 and float32, and on
both backends;
structured and regular gradients checked numerically in float64 (verify_grad_sparse); Rop;
shared sparse matrices; bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import sympile
import sympile.tensor as T
from sympile import sparse
from sympile.gradient import verify_rop
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler

MODES = [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler)]
FORMATS = ["csr", "csc"]


def _sparse(rng, shape, format, density=0.4):
    matrix = sp.random(*shape, density=density, format=format, random_state=rng,
                       data_rvs=lambda n: rng.normal(size=n) + np.sign(rng.normal(size=n)))
    matrix.sort_indices()
    return matrix


def _positive(rng, shape, format):
    matrix = _sparse(rng, shape, format)
    matrix.data = np.abs(matrix.data) + 0.5
    return matrix


def _dense(rng, shape):
    return rng.normal(size=shape)


def _symbolic(value, format=None):
    if sp.issparse(value):
        return sparse.matrix(value.format, dtype=str(value.dtype))
    return T.tensor(str(value.dtype), shape=(None,) * value.ndim)


def _array(x):
    return x.toarray() if sp.issparse(x) else np.asarray(x)


# name: (function of symbolic inputs, scipy/numpy reference, makers of (rng, format),
# structured gradient checkable, regular gradient checkable)
CASES = {
    "dense_from_sparse": (sparse.dense_from_sparse, lambda a: a.toarray(),
                          [lambda r, f: _sparse(r, (5, 4), f)], True, False),
    "dense_from_sparse regular": (lambda a: sparse.dense_from_sparse(a, sparse_grad=False),
                                  lambda a: a.toarray(),
                                  [lambda r, f: _sparse(r, (5, 4), f)], False, True),
    "from_dense": (lambda d: sparse.csr_from_dense(d), lambda d: sp.csr_matrix(d),
                   [lambda r, f: _dense(r, (4, 3))], False, True),
    "transpose": (sparse.transpose, lambda a: a.T, [lambda r, f: _sparse(r, (5, 4), f)],
                  True, True),
    "neg": (sparse.neg, lambda a: -a, [lambda r, f: _sparse(r, (5, 4), f)], True, False),
    "add sparse sparse": (sparse.add, lambda a, b: a + b,
                          [lambda r, f: _sparse(r, (5, 4), f),
                           lambda r, f: _sparse(r, (5, 4), "csr")], False, True),
    "add sparse dense": (sparse.add, lambda a, b: a.toarray() + b,
                         [lambda r, f: _sparse(r, (5, 4), f), lambda r, f: _dense(r, (5, 4))],
                         True, False),
    "sub dense sparse": (sparse.sub, lambda b, a: b - a.toarray(),
                         [lambda r, f: _dense(r, (5, 4)), lambda r, f: _sparse(r, (5, 4), f)],
                         True, False),
    "mul sparse sparse": (sparse.mul, lambda a, b: a.multiply(b),
                          [lambda r, f: _sparse(r, (5, 4), f, 0.7),
                           lambda r, f: _sparse(r, (5, 4), f, 0.7)], True, False),
    "mul sparse dense": (sparse.mul, lambda a, b: a.multiply(b),
                         [lambda r, f: _sparse(r, (5, 4), f), lambda r, f: _dense(r, (5, 4))],
                         True, False),
    "row_scale": (sparse.row_scale, lambda a, s: sp.diags(s) @ a,
                  [lambda r, f: _sparse(r, (5, 4), f), lambda r, f: _dense(r, (5,))],
                  True, False),
    "col_scale": (sparse.col_scale, lambda a, s: a @ sp.diags(s),
                  [lambda r, f: _sparse(r, (5, 4), f), lambda r, f: _dense(r, (4,))],
                  True, False),
    "structured_dot": (sparse.structured_dot, lambda a, b: a @ b,
                       [lambda r, f: _sparse(r, (5, 4), f), lambda r, f: _dense(r, (4, 3))],
                       True, False),
    "structured_dot dense sparse": (sparse.structured_dot, lambda b, a: b @ a,
                                    [lambda r, f: _dense(r, (3, 5)),
                                     lambda r, f: _sparse(r, (5, 4), f)], True, False),
    "dot sparse dense": (sparse.dot, lambda a, b: a @ b,
                         [lambda r, f: _sparse(r, (5, 4), f), lambda r, f: _dense(r, (4, 3))],
                         False, True),
    "dot dense sparse": (sparse.dot, lambda b, a: b @ a,
                         [lambda r, f: _dense(r, (3, 5)), lambda r, f: _sparse(r, (5, 4), f)],
                         False, True),
    "dot sparse sparse": (sparse.dot, lambda a, b: a @ b,
                          [lambda r, f: _sparse(r, (5, 4), f),
                           lambda r, f: _sparse(r, (4, 3), f)], False, True),
    "sampling_dot": (sparse.sampling_dot, lambda x, y, p: p.multiply(x @ y.T),
                     [lambda r, f: _dense(r, (5, 3)), lambda r, f: _dense(r, (4, 3)),
                      lambda r, f: _sparse(r, (5, 4), f)], True, False),
    "sp_sum": (sparse.sp_sum, lambda a: np.asarray(a.sum()),
               [lambda r, f: _sparse(r, (5, 4), f)], False, True),
    "sp_sum axis 0": (lambda a: sparse.sp_sum(a, 0), lambda a: np.asarray(a.sum(0)).ravel(),
                      [lambda r, f: _sparse(r, (5, 4), f)], False, True),
    "sp_sum axis 1 structured": (lambda a: sparse.sp_sum(a, 1, sparse_grad=True),
                                 lambda a: np.asarray(a.sum(1)).ravel(),
                                 [lambda r, f: _sparse(r, (5, 4), f)], True, False),
    "sp_ones_like": (sparse.sp_ones_like, lambda a: (a != 0).astype(a.dtype),
                     [lambda r, f: _sparse(r, (5, 4), f)], False, False),
    "hstack": (lambda a, b: sparse.hstack([a, b]), lambda a, b: sp.hstack([a, b]),
               [lambda r, f: _sparse(r, (5, 4), f), lambda r, f: _sparse(r, (5, 2), f)],
               True, True),
    "vstack": (lambda a, b: sparse.vstack([a, b], format="csc"),
               lambda a, b: sp.vstack([a, b]),
               [lambda r, f: _sparse(r, (2, 4), f), lambda r, f: _sparse(r, (3, 4), f)],
               True, True),
    "rows": (lambda a: a[[3, 0, 3]], lambda a: a[[3, 0, 3]],
             [lambda r, f: _sparse(r, (5, 4), f)], True, True),
    "slices": (lambda a: a[1:4, 2:], lambda a: a[1:4, 2:],
               [lambda r, f: _sparse(r, (5, 4), f)], True, True),
    "structured_exp": (sparse.structured_exp, lambda a: _on_data(a, np.exp),
                       [lambda r, f: _sparse(r, (5, 4), f)], True, False),
    "structured_log": (sparse.structured_log, lambda a: _on_data(a, np.log),
                       [_positive_maker := (lambda r, f: _positive(r, (5, 4), f))], True,
                       False),
    "structured_sigmoid": (sparse.structured_sigmoid,
                           lambda a: _on_data(a, lambda d: 1 / (1 + np.exp(-d))),
                           [lambda r, f: _sparse(r, (5, 4), f)], True, False),
    "structured_pow": (lambda a: sparse.structured_pow(a, 3), lambda a: _on_data(a, lambda d:
                                                                                  d ** 3),
                       [lambda r, f: _sparse(r, (5, 4), f)], True, False),
    "structured_minimum": (lambda a: sparse.structured_minimum(a, 0.3),
                           lambda a: _on_data(a, lambda d: np.minimum(d, 0.3)),
                           [lambda r, f: _sparse(r, (5, 4), f)], True, False),
    "structured_maximum": (lambda a: sparse.structured_maximum(a, 0.3),
                           lambda a: _on_data(a, lambda d: np.maximum(d, 0.3)),
                           [lambda r, f: _sparse(r, (5, 4), f)], True, False),
    "structured_add": (lambda a: sparse.structured_add(a, 2.0),
                       lambda a: _on_data(a, lambda d: d + 2.0),
                       [lambda r, f: _sparse(r, (5, 4), f)], True, False),
    "sqrt": (sparse.sqrt, lambda a: a.sqrt(), [_positive_maker], True, False),
    "abs": (sparse.abs, abs, [lambda r, f: _sparse(r, (5, 4), f)], True, False),
    "tanh": (sparse.tanh, lambda a: a.tanh(), [lambda r, f: _sparse(r, (5, 4), f)], True,
             False),
    "sin": (sparse.sin, lambda a: a.sin(), [lambda r, f: _sparse(r, (5, 4), f)], True, False),
}


def _on_data(a, function):
    result = a.copy()
    result.data = function(result.data)
    return result


def _as_dtype(value, dtype: str):
    """A float value (sparse or dense) in `dtype`; integer values as they are."""
    if value.dtype.kind != "f":
        return value
    return value.astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_scipy(name, format, mode, dtype):
    function, reference, makers, _, _ = CASES[name]
    rng = np.random.default_rng(0)
    values = [_as_dtype(make(rng, format), dtype) for make in makers]
    inputs = [_symbolic(v) for v in values]
    output = function(*inputs)
    result = sympile.function(inputs, output, mode=mode)(*values)
    expected = reference(*values)
    if sp.issparse(expected):
        assert sp.issparse(result) and result.format == output.type.format
    assert _array(result).dtype == np.dtype(output.type.dtype)
    if dtype == "float32":
        # float32 in, float32 out, as scipy and numpy (NEP 50) give it.
        assert _array(result).dtype == _array(expected).dtype
    tolerance = 1e-12 if dtype == "float64" else 2e-6
    np.testing.assert_allclose(_array(result), _array(expected), rtol=tolerance,
                               atol=tolerance)


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c[3] or c[4]))
def test_gradients(name, format):
    function, _, makers, structured, regular = CASES[name]
    rng = np.random.default_rng(1)
    values = [make(rng, format) for make in makers]
    if structured:
        sparse.verify_grad_sparse(function, values, structured=True, rng=rng)
    if regular:
        sparse.verify_grad_sparse(function, values, structured=False, rng=rng)


def test_structured_and_regular_gradients_differ_off_the_pattern():
    """structured_dot's gradient keeps x's pattern; dot's is the whole product."""
    rng = np.random.default_rng(2)
    a, w = _sparse(rng, (5, 4), "csr"), _dense(rng, (4, 3))
    x, y = sparse.csr_matrix("x", dtype="float64"), T.dmatrix("y")
    structured = sympile.grad(sparse.structured_dot(x, y).sum(), x)
    regular = sympile.grad(sparse.dot(x, y).sum(), x)
    g_structured, g_regular = sympile.function([x, y], [structured, regular])(a, w)
    full = np.ones((5, 3)) @ w.T
    np.testing.assert_allclose(g_regular.toarray(), full)
    np.testing.assert_allclose(g_structured.toarray(), full * (a.toarray() != 0))
    assert g_structured.nnz == a.nnz


@pytest.mark.parametrize("name", ["structured_dot", "dot sparse dense", "sampling_dot",
                                  "mul sparse dense", "transpose", "hstack", "tanh"])
def test_rop(name):
    """Rop against finite differences and Lop, the sparse inputs made from dense matrices
    with no zeros (csr_from_dense): where every entry is stored, the structured and the
    regular derivatives agree."""
    function, _, makers, _, _ = CASES[name]
    rng = np.random.default_rng(3)
    values = [make(rng, "csr") for make in makers]
    points = [_array(v) + (_array(v) == 0) * rng.uniform(0.5, 1.0, np.shape(_array(v)))
              for v in values]
    sparse_at = [sp.issparse(v) for v in values]

    def dense_function(*inputs):
        output = function(*[sparse.csr_from_dense(x) if flag else x
                            for x, flag in zip(inputs, sparse_at)])
        return sparse.dense_from_sparse(output) if sparse.basic.is_sparse(output) else output

    verify_rop(dense_function, points, rng=rng)


def test_csm_builds_and_takes_apart():
    rng = np.random.default_rng(4)
    for format in FORMATS:
        a = _sparse(rng, (5, 4), format)
        data, indices, indptr, shape = T.dvector(), T.ivector(), T.ivector(), T.lvector()
        built = sparse.CSM(format)(data, indices, indptr, shape)
        f = sympile.function([data, indices, indptr, shape], [built, *sparse.csm_properties(
            built)])
        matrix, *properties = f(a.data, a.indices, a.indptr, np.array(a.shape))
        assert matrix.format == format and (matrix != a).nnz == 0
        for got, expected in zip(properties, (a.data, a.indices, a.indptr, a.shape)):
            np.testing.assert_array_equal(got, expected)


def test_csm_rejects_malformed_arrays():
    data, indices, indptr, shape = T.dvector(), T.ivector(), T.ivector(), T.lvector()
    f = sympile.function([data, indices, indptr, shape],
                         sparse.CSM("csr")(data, indices, indptr, shape))
    ok = (np.ones(2), np.array([0, 2], "int32"), np.array([0, 1, 2], "int32"),
          np.array([2, 3]))
    assert f(*ok).shape == (2, 3)
    with pytest.raises(ValueError, match="CSM: indices must be in"):
        f(ok[0], np.array([0, 3], "int32"), ok[2], ok[3])
    with pytest.raises(ValueError, match="CSM: indices must be sorted"):
        f(np.ones(2), np.array([2, 0], "int32"), np.array([0, 2, 2], "int32"), ok[3])
    with pytest.raises(ValueError, match="CSM: indptr must rise"):
        f(ok[0], ok[1], np.array([0, 2, 1], "int32"), ok[3])


def test_shared_sparse_matrix_and_updates():
    rng = np.random.default_rng(5)
    value = _sparse(rng, (4, 3), "csc")
    shared = sympile.shared(value, name="S")
    assert isinstance(shared, sparse.SparseTensorSharedVariable)
    assert shared.type == sparse.SparseTensorType("csc", "float64")
    step = sympile.function([], sparse.sp_sum(shared),
                            updates=[(shared, sparse.structured_add(shared, 1.0))])
    total = step()
    np.testing.assert_allclose(total, value.sum())
    np.testing.assert_allclose(shared.get_value().toarray(), _on_data(value, lambda d: d + 1)
                               .toarray())
    shared.set_value(sp.csr_matrix(value.toarray()))  # another format is converted
    assert shared.get_value().format == "csc"
    with pytest.raises(TypeError, match="csr_from_dense"):
        shared.set_value(value.toarray())


def test_bad_input_names_the_op():
    x, d = sparse.csr_matrix("x", dtype="float64"), T.dmatrix("d")
    with pytest.raises(TypeError, match="structured_dot: x must be sparse"):
        sparse.StructuredDot()(d, d)
    with pytest.raises(TypeError, match="csr_from_dense: x must be dense"):
        sparse.csr_from_dense(x)
    with pytest.raises(TypeError, match="dot: one of x and y must be sparse"):
        sparse.dot(d, d)
    f = sympile.function([x, d], sparse.structured_dot(x, d))
    with pytest.raises(ValueError, match="structured_dot: the shapes"):
        f(sp.csr_matrix(np.ones((2, 3))), np.ones((4, 2)))
    with pytest.raises(TypeError, match="expected a scipy.sparse csr_matrix"):
        f(np.ones((2, 3)), np.ones((3, 2)))
    g = sympile.function([x, d], sparse.mul(x, d))
    with pytest.raises(ValueError, match="mul: the dense operand of shape"):
        g(sp.csr_matrix(np.ones((2, 3))), np.ones((2, 1)))


@pytest.mark.parametrize("format", ["csr", "csc"])
def test_size_and_astype_methods(format):
    """Theano's: x.size is the number of stored entries (scipy's, explicit zeros counted),
    x.astype(dtype) the sparse cast."""
    x = sparse.matrix(format, "x", dtype="float64")
    f = sympile.function([x], [x.size, x.astype("float32"), x.astype("int64").toarray()])
    value = sp.random(5, 7, density=0.3, format=format, random_state=3)
    value.data[0] = 0.0  # an explicit zero still counts
    size, cast, dense = f(value)
    assert size == value.size == value.nnz
    assert cast.format == format and cast.dtype == np.float32
    np.testing.assert_array_equal(cast.toarray(), value.toarray().astype(np.float32))
    np.testing.assert_array_equal(dense, value.toarray().astype(np.int64))
