"""Theano's array helpers (sympile/tensor/arrays.py) against numpy, with their gradients
and errors; the scalar <-> tensor conversions and the dtype lists of theano.tensor."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.gradient import verify_grad
from sympile.scalar import basic as scalar
from tests.utils import assert_like_numpy


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3),
       shift=st.integers(-9, 9), axis_choice=st.integers(-1, 2))
def test_roll_is_numpys(shape, shift, axis_choice):
    value = np.arange(np.prod(shape), dtype="float64").reshape(shape)
    axis = None if axis_choice >= len(shape) else axis_choice
    x, s = T.tensor("float64", (None,) * len(shape), name="x"), T.lscalar("s")
    got = sympile.function([x, s], T.roll(x, s, axis))(value, shift)
    assert_like_numpy(got, np.roll(value, shift, axis))


def test_roll_several_axes_gradient_and_errors():
    value = np.arange(12.0).reshape(3, 4)
    x = T.dmatrix("x")
    got = sympile.function([x], [T.roll(x, (1, -2), (0, 1)), T.roll(x, 5, (0, 1))])(value)
    assert_like_numpy(got[0], np.roll(value, (1, -2), (0, 1)))
    assert_like_numpy(got[1], np.roll(value, 5, (0, 1)))
    verify_grad(lambda a: T.roll(a, 3, 1) * np.arange(4.0), [value], rng=1)
    with pytest.raises(ValueError, match="roll: axis 2"):
        T.roll(x, 1, 2)
    with pytest.raises(ValueError, match="2 shifts for 3 axes"):
        T.roll(T.dtensor3(), (1, 2), (0, 1, 2))


@pytest.mark.parametrize("n, m, k", [(3, None, 0), (3, 5, 1), (4, 2, -1), (0, 3, 0),
                                     (3, 3, -5), (2, 4, 10)])
def test_tri_is_numpys(n, m, k):
    assert_like_numpy(T.tri(n, m, k).eval(), np.tri(n, m, k, dtype=sympile.config.floatX))
    assert_like_numpy(T.tri(n, m, k, dtype="int8").eval(), np.tri(n, m, k, dtype="int8"))


def test_tri_of_symbolic_sizes():
    n, k = T.lscalar("n"), T.lscalar("k")
    assert_like_numpy(sympile.function([n, k], T.tri(n, 4, k))(3, -1),
                      np.tri(3, 4, -1, dtype=sympile.config.floatX))


def test_mgrid_and_ogrid_are_numpys_as_lists():
    for grid, reference in ((T.mgrid, np.mgrid), (T.ogrid, np.ogrid)):
        for index in ((slice(0, 3), slice(1, 9, 3)), (slice(0, 1, 0.25), slice(-2, 2)),
                      (slice(0, 2), slice(0, 3), slice(5, 7))):
            got = [g.eval() for g in grid[index]]
            want = list(reference[index])
            assert len(got) == len(want)
            for a, b in zip(got, want):
                np.testing.assert_allclose(a, b)
                assert a.shape == b.shape
    assert_like_numpy(T.mgrid[2:6].eval(), np.mgrid[2:6])
    n = T.lscalar("n")
    rows, columns = sympile.function([n], T.mgrid[0:n, 0:2])(3)
    assert_like_numpy(rows, np.mgrid[0:3, 0:2][0])
    with pytest.raises(TypeError, match="slices"):
        T.mgrid[0:3, 2]
    with pytest.raises(NotImplementedError, match="complex step"):
        T.ogrid[0:1:5j]


def test_stacklists_and_stacks():
    a, b, c, d = T.dscalars("abcd")
    f = sympile.function([a, b, c, d], T.stacklists([[a, b], [c, d]]))
    assert_like_numpy(f(1, 2, 3, 4), np.array([[1.0, 2.0], [3.0, 4.0]]))
    x, y = T.dmatrices("xy")
    values = [np.ones((2, 3)), np.zeros((1, 3))]
    assert_like_numpy(sympile.function([x, y], T.vertical_stack(x, y))(*values),
                      np.vstack(values))
    values = [np.ones((2, 3)), np.zeros((2, 1))]
    assert_like_numpy(sympile.function([x, y], T.horizontal_stack(x, y))(*values),
                      np.hstack(values))
    with pytest.raises(TypeError, match="vertical_stack: every argument must be a matrix"):
        T.vertical_stack(x, T.dvector())


def test_smallest_and_largest():
    a, b = T.dvectors("ab")
    values = [np.array([1.0, np.nan, -3.0]), np.array([2.0, 0.0, -4.0])]
    got = sympile.function([a, b], [T.smallest(a, b, 0.5), T.largest(a, b), T.smallest(a)])(
        *values)
    assert_like_numpy(got[0], np.minimum(np.minimum(*values), 0.5))
    assert_like_numpy(got[1], np.maximum(*values))
    assert_like_numpy(got[2], values[0])
    with pytest.raises(TypeError, match="at least one"):
        T.largest()


def test_inverse_permutation():
    p = T.lmatrix("p")
    value = np.array([[2, 0, 3, 1], [0, 1, 2, 3], [3, 2, 1, 0]])
    got = sympile.function([p], T.inverse_permutation(p))(value)
    assert_like_numpy(got, np.argsort(value, axis=1))
    q = T.ivector("q")
    f = sympile.function([q], T.inverse_permutation(q))
    assert_like_numpy(f(np.array([1, 2, 0], "int32")), np.array([2, 0, 1], "int32"))
    with pytest.raises(ValueError):
        f(np.array([0, 0, 1], "int32"))
    with pytest.raises(TypeError, match="integer tensor"):
        T.inverse_permutation(T.dvector())


def test_permute_row_elements():
    x, y = T.dvector("x"), T.lmatrix("y")
    rows, permutations = np.array([10.0, 20.0, 30.0]), np.array([[2, 0, 1], [0, 1, 2]])
    f = sympile.function([x, y], [T.permute_row_elements(x, y),
                                  T.permute_row_elements(x, y, inverse=True)])
    gathered, scattered = f(rows, permutations)
    assert_like_numpy(gathered, rows[permutations])
    expected = np.empty((2, 3))
    for row, permutation in enumerate(permutations):
        expected[row, permutation] = rows
    assert_like_numpy(scattered, expected)
    matrix, one = T.dmatrix("m"), T.lvector("one")
    values = np.arange(6.0).reshape(2, 3)
    got = sympile.function([matrix, one], T.permute_row_elements(matrix, one))(values, [1, 2, 0])
    assert_like_numpy(got, values[:, [1, 2, 0]])
    weights = np.arange(6.0).reshape(2, 3)
    verify_grad(lambda v: T.permute_row_elements(v, T.constant(permutations)) * weights,
                [rows], rng=2)
    with pytest.raises(TypeError, match="integer dtype"):
        T.permute_row_elements(x, T.dvector())


def test_scalar_and_tensor_conversions():
    x = T.dscalar("x")
    s = T.scalar_from_tensor(x)
    assert isinstance(s.type, scalar.ScalarType)
    y = T.tensor_from_scalar(scalar.mul(s, s))
    assert y.type == T.dscalar
    value, gradient = sympile.function([x], [y, sympile.grad(y, x)])(3.0)
    assert_like_numpy(value, np.array(9.0))
    assert_like_numpy(gradient, np.array(6.0))
    with pytest.raises(TypeError, match="0-d tensor"):
        T.scalar_from_tensor(T.dvector())
    with pytest.raises(TypeError, match="scalar-typed"):
        T.tensor_from_scalar(x)


def test_dtype_lists_are_theanos():
    assert T.float_dtypes == ["float16", "float32", "float64"]
    assert T.complex_dtypes == ["complex64", "complex128"]
    assert T.integer_dtypes == T.int_dtypes + T.uint_dtypes
    assert T.discrete_dtypes == ["bool", *T.integer_dtypes]
    assert T.continuous_dtypes == T.float_dtypes + T.complex_dtypes
    assert T.all_dtypes == T.discrete_dtypes + T.continuous_dtypes


def test_searchsorted_method():
    a = T.constant(np.array([1.0, 3.0, 5.0]))
    assert_like_numpy(a.searchsorted([2.0, 5.0], side="right").eval(),
                      np.searchsorted([1.0, 3.0, 5.0], [2.0, 5.0], side="right"))
