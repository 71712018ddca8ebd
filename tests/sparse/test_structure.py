"""Theano's ops on a sparse matrix's pattern and stored values against scipy.sparse, in both
formats and on both backends: remove0, ensure_sorted_indices, clean, diag and
square_diagonal, Cast, HStack/VStack, mul_s_v, structured_add_s_v, add_s_s_data, usmm and
the comparisons; their gradients checked numerically in float64; bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import sympile
import sympile.tensor as T
from sympile import sparse
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler

MODES = [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler)]
FORMATS = ["csr", "csc"]
RNG = np.random.default_rng(0)


def _matrix(shape, format, density=0.4, dtype="float64"):
    matrix = sp.random(*shape, density=density, format=format, random_state=RNG,
                       data_rvs=lambda n: RNG.normal(size=n) + np.sign(RNG.normal(size=n)))
    matrix.sort_indices()
    return matrix.astype(dtype)


def _variable(format, dtype="float64"):
    return sparse.SparseTensorType(format, dtype)()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("format", FORMATS)
def test_remove0_and_sorting(format, mode):
    x = _variable(format)
    f = sympile.function([x], [sparse.remove0(x), sparse.ensure_sorted_indices(x),
                               sparse.clean(x)], mode=mode)
    value = _matrix((4, 5), format)
    value.data[::2] = 0   # explicitly stored zeros
    # Unsorted indices: the stored entries of each row (column) reversed.
    unsorted = value.copy()
    for start, end in zip(unsorted.indptr[:-1], unsorted.indptr[1:]):
        unsorted.indices[start:end] = unsorted.indices[start:end][::-1]
        unsorted.data[start:end] = unsorted.data[start:end][::-1]
    assert not unsorted.has_sorted_indices
    removed, ordered, cleaned = f(unsorted)
    assert removed.nnz == np.count_nonzero(value.toarray())
    assert ordered.has_sorted_indices and ordered.nnz == value.nnz
    assert cleaned.has_sorted_indices and cleaned.nnz == removed.nnz
    for result in (removed, ordered, cleaned):
        assert result.format == format
        np.testing.assert_array_equal(result.toarray(), value.toarray())
    assert unsorted.nnz == value.nnz   # the input is left as it was
    sparse.verify_grad_sparse(sparse.remove0, [_matrix((3, 4), format)], structured=True)
    sparse.verify_grad_sparse(sparse.ensure_sorted_indices, [_matrix((3, 4), format)],
                              structured=True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("format", FORMATS)
def test_diag_and_square_diagonal(format, mode):
    x, v = _variable(format), T.dvector("v")
    f = sympile.function([x, v], [sparse.diag(x), sparse.square_diagonal(v)], mode=mode)
    value, vector = _matrix((5, 5), format, density=0.6), RNG.normal(size=4)
    diagonal, square = f(value, vector)
    np.testing.assert_array_equal(diagonal, value.diagonal())
    assert square.format == "csc" and square.nnz == 4
    np.testing.assert_array_equal(square.toarray(), np.diag(vector))
    with pytest.raises(ValueError, match="diag: x must be a square matrix"):
        f(_matrix((3, 4), format), vector)
    sparse.verify_grad_sparse(sparse.diag, [_matrix((4, 4), format, density=0.7)])
    sparse.verify_grad_sparse(sparse.square_diagonal, [RNG.normal(size=3)])


@pytest.mark.parametrize("format", FORMATS)
def test_cast(format):
    x = _variable(format)
    f = sympile.function([x], [sparse.fcast(x), sparse.cast(x, "int32")])
    value = _matrix((3, 4), format) * 10
    single, integers = f(value)
    assert single.dtype == np.float32 and integers.dtype == np.int32
    assert single.format == integers.format == format
    np.testing.assert_array_equal(single.toarray(), value.astype("float32").toarray())
    np.testing.assert_array_equal(integers.toarray(), value.astype("int32").toarray())
    assert str(sparse.Cast("float32")) == "Cast(float32)"
    sparse.verify_grad_sparse(lambda m: sparse.dcast(sparse.fcast(m)), [value], eps=1e-2,
                              abs_tol=1e-2, rel_tol=1e-2)
    # An integer matrix has no derivative.
    integer = _variable(format, "int64")
    with pytest.raises(sympile.gradient.DisconnectedInputError):
        sympile.grad(sparse.sp_sum(sparse.dcast(integer)), integer)


@pytest.mark.parametrize("format", FORMATS)
def test_hstack_and_vstack_ops(format):
    a, b = _variable(format), _variable("csr", "float32")
    for op_class, stack in ((sparse.HStack, sp.hstack), (sparse.VStack, sp.vstack)):
        shape = (3, 2) if op_class is sparse.HStack else (2, 3)
        values = [_matrix(shape, format), _matrix(shape, "csr", dtype="float32")]
        out = op_class(format="csc", dtype="float32")(a, b)
        assert isinstance(out.owner.op, op_class) and out.type.dtype == "float32"
        got = sympile.function([a, b], out)(*values)
        assert got.format == "csc" and got.dtype == np.float32
        np.testing.assert_array_equal(got.toarray(), stack(values).astype("float32").toarray())
        default = op_class()(a, b)
        assert default.type.format == format and default.type.dtype == "float64"
        sparse.verify_grad_sparse(lambda p, q, c=op_class: c()(p, q),
                                  [_matrix(shape, format), _matrix(shape, "csr")])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("format", FORMATS)
def test_stored_values_with_a_vector(format, mode):
    x, y = _variable(format), T.dvector("y")
    f = sympile.function([x, y], [sparse.mul_s_v(x, y), sparse.structured_add_s_v(x, y)],
                         mode=mode)
    value, vector = _matrix((4, 5), format), RNG.normal(size=5)
    product, total = f(value, vector)
    np.testing.assert_allclose(product.toarray(), value.toarray() * vector)
    expected = value.toarray() + vector
    expected[value.toarray() == 0] = 0
    np.testing.assert_allclose(total.toarray(), expected)
    assert product.nnz == total.nnz == value.nnz
    with pytest.raises(ValueError, match="y has 4 entries; x has 5 columns"):
        f(value, vector[:4])
    for op in (sparse.mul_s_v, sparse.structured_add_s_v):
        sparse.verify_grad_sparse(op, [_matrix((3, 4), format), RNG.normal(size=4)],
                                  structured=True)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_structured_functions_of_small_integers_are_float32(dtype):
    """numpy gives float16 for sin of int8 values; scipy.sparse cannot store float16, so
    the stored values are computed in float32."""
    x = _variable("csr", dtype)
    f = sympile.function([x], [sparse.sin(x), sparse.sqrt(x)])
    value = sp.csr_matrix(np.array([[1, 0, 3], [0, 2, 0]], dtype))
    for got, function in zip(f(value), (np.sin, np.sqrt)):
        assert got.dtype == np.float32 and got.format == "csr"
        np.testing.assert_array_equal(got.toarray(), function(value.toarray().astype("float32")))


@pytest.mark.parametrize("format", FORMATS)
def test_add_s_s_data(format):
    x, y = _variable(format), _variable(format)
    f = sympile.function([x, y], sparse.add_s_s_data(x, y))
    value = _matrix((4, 5), format)
    other = value.copy()
    other.data = RNG.normal(size=value.nnz)
    np.testing.assert_allclose(f(value, other).toarray(), value.toarray() + other.toarray())
    with pytest.raises(ValueError, match="one pattern"):
        f(value, _matrix((4, 5), format, density=0.9))
    with pytest.raises(TypeError, match="one format"):
        sparse.add_s_s_data(x, _variable("csr" if format == "csc" else "csc"))
    sparse.verify_grad_sparse(lambda p: sparse.add_s_s_data(p, p * 2),
                              [_matrix((3, 3), format)], structured=True)


@pytest.mark.parametrize("mode", MODES)
def test_usmm(mode):
    alpha, x, y, z = T.dscalar("alpha"), _variable("csr"), T.dmatrix("y"), T.dmatrix("z")
    out = sparse.usmm(alpha, x, y, z)
    f = sympile.function([alpha, x, y, z], out, mode=mode)
    values = [0.5, _matrix((3, 4), "csr"), RNG.normal(size=(4, 2)), RNG.normal(size=(3, 2))]
    np.testing.assert_allclose(f(*values), 0.5 * (values[1] @ values[2]) + values[3])
    # A dense x and a sparse y.
    dense_x, sparse_y = T.dmatrix("dense_x"), _variable("csc")
    g = sympile.function([alpha, dense_x, sparse_y, z],
                         sparse.usmm(alpha, dense_x, sparse_y, z), mode=mode)
    left, right = RNG.normal(size=(2, 4)), _matrix((4, 2), "csc")
    np.testing.assert_allclose(g(-2.0, left, right, values[3][:2]),
                               -2.0 * (left @ right.toarray()) + values[3][:2])
    sparse.verify_grad_sparse(lambda a, p, q, r: sparse.usmm(a, p, q, r),
                              [np.array(0.7), _matrix((3, 4), "csr"), RNG.normal(size=(4, 2)),
                               RNG.normal(size=(3, 2))])
    with pytest.raises(TypeError, match="x or y must be sparse"):
        sparse.usmm(alpha, y, y, z)


@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")
@pytest.mark.parametrize("format", FORMATS)
def test_comparisons_as_scipy(format):
    x, y, d = _variable(format), _variable(format), T.dmatrix("d")
    operators = {"gt": lambda a, b: a > b, "lt": lambda a, b: a < b,
                 "ge": lambda a, b: a >= b, "le": lambda a, b: a <= b}
    first, second = _matrix((4, 6), format), _matrix((4, 6), format)
    dense = RNG.normal(size=(4, 6))
    for name, compare in operators.items():
        op = getattr(sparse, name)
        both = sympile.function([x, y], compare(x, y))(first, second)
        expected = compare(first, second)
        assert sp.issparse(both) and both.format == format and both.dtype == np.uint8
        np.testing.assert_array_equal(both.toarray(), expected.toarray())
        mixed = sympile.function([x, d], op(x, d))(first, dense)
        np.testing.assert_array_equal(mixed, np.asarray(compare(first, dense)))
        reflected = sympile.function([d, x], op(d, x))(dense, first)
        np.testing.assert_array_equal(reflected, np.asarray(compare(dense, first)))
    equal = sympile.function([x, y], [sparse.eq(x, y), sparse.neq(x, y)])(first, first)
    assert equal[0].toarray().all() and not equal[1].toarray().any()
    with pytest.raises(ValueError, match="one shape"):
        sympile.function([x, d], sparse.gt(x, d))(first, dense[:3])


def test_a_constant_keeps_its_value_when_the_matrix_changes():
    matrix = _matrix((3, 3), "csr")
    expected = matrix.toarray()
    constant = sparse.as_sparse_variable(matrix)
    assert constant.data is not matrix
    matrix.data[:] = 7.0
    np.testing.assert_array_equal(sympile.function([], sparse.dense_from_sparse(constant))(),
                                  expected)
