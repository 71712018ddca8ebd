"""C code of Reshape (a view when x's strides allow, a copy otherwise), SpecifyShape and
MakeVector against the Python backend: values, dtypes, aliasing of the input, layouts, -1
entries, empty arrays, and perform's errors."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.tensor.shape import MakeVector, Reshape, specify_shape
from tests.link.c.utils import (
    LAYOUTS,
    PYTHON_MODE,
    compare_backends,
    compile_c,
    requires_compiler,
)

pytestmark = requires_compiler


def _op_names(function) -> set[str]:
    return {type(node.op).__name__ for node in function._vm.nodes}


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_reshape_matches_python_backend_and_its_aliasing(dtype, layout):
    x = T.tensor(dtype=dtype, shape=(None, None, None))
    shape = T.lvector("shape")
    output = Reshape(2)(x, shape)
    c_function = compile_c([x, shape], output)
    python_function = sympile.function([x, shape], output, mode=PYTHON_MODE)
    assert c_function._vm.fallback_nodes == []
    assert "Reshape" in _op_names(c_function)
    value = LAYOUTS[layout](np.arange(24).reshape(2, 3, 4).astype(dtype))
    for requested in ([6, 4], [-1, 2], [24, -1], [1, -1]):
        requested = np.array(requested)
        result = c_function(value, requested)
        expected = python_function(value, requested)
        np.testing.assert_array_equal(result, expected)
        assert result.dtype == expected.dtype
        assert np.shares_memory(result, value) == np.shares_memory(expected, value)


def test_reshape_to_and_from_zero_dimensions_and_empty_arrays():
    x, vector, empty = T.tensor3("x"), T.dvector("v"), T.dmatrix("e")
    shape, empty_shape = T.ivector("shape"), T.lvector("empty_shape")
    outputs = [Reshape(0)(x, shape[:0]), Reshape(1)(x, shape[:1]), Reshape(3)(vector, shape),
               Reshape(2)(empty, empty_shape)]
    compare_backends(outputs, [x, vector, empty, shape, empty_shape],
                     [np.full((1, 1, 1), 3.0), np.arange(6.0), np.zeros((0, 4)),
                      np.array([1, 0, 2, 0, 3, 0], dtype="int32")[::2], np.array([2, 0])])


def test_reshape_errors_are_perform_errors():
    x, shape = T.dmatrix("x"), T.lvector("shape")
    function = compile_c([x, shape], Reshape(2)(x, shape))
    assert function._vm.fallback_nodes == []
    with pytest.raises(ValueError, match=r"Reshape\{ndim=2\}: the shape has 3 entries, expected 2"):
        function(np.zeros((2, 3)), np.array([1, 2, 3]))
    with pytest.raises(ValueError, match=r"shape \(-1, -1\) is invalid: entries must be >= 0"):
        function(np.zeros((2, 3)), np.array([-1, -1]))
    with pytest.raises(ValueError, match=r"shape \(-2, 3\) is invalid"):
        function(np.zeros((2, 3)), np.array([-2, 3]))
    with pytest.raises(ValueError, match=r"cannot reshape an array of shape \(2, 3\) \(size 6\) "
                                         r"into shape \(4, -1\)"):
        function(np.zeros((2, 3)), np.array([4, -1]))
    with pytest.raises(ValueError, match=r"cannot reshape an array of shape \(0, 3\) \(size 0\) "
                                         r"into shape \(0, -1\)"):
        function(np.zeros((0, 3)), np.array([0, -1]))
    with pytest.raises(ValueError, match=r"into shape \(5, 1\)"):
        function(np.zeros((2, 3)), np.array([5, 1]))


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_specify_shape_is_its_input_checked(layout):
    x = T.tensor3("x")
    rows, length = T.lscalar("rows"), T.iscalar("length")
    output = specify_shape(x, (rows, None, length))
    c_function = compile_c([x, rows, length], output)
    assert "SpecifyShape" in _op_names(c_function)
    assert c_function._vm.fallback_nodes == []
    value = LAYOUTS[layout](np.arange(24.0).reshape(2, 3, 4))
    result = c_function(value, np.array(2), np.array(4, dtype="int32"))
    np.testing.assert_array_equal(result, value)
    with pytest.raises(ValueError, match=r"specify_shape: expected shape \(3, \?, 4\), got "
                                         r"\(2, 3, 4\)"):
        c_function(value, np.array(3), np.array(4, dtype="int32"))
    vector = T.dvector("v")
    one = compile_c([vector, rows], specify_shape(vector, (rows,)) * 2)
    with pytest.raises(ValueError, match=r"expected shape \(5,\), got \(3,\)"):
        one(np.zeros(3), np.array(5))


@pytest.mark.parametrize("dtype", ["int64", "int32", "float64", "float32", "uint8"])
def test_make_vector_converts_each_scalar(dtype):
    scalars = [T.scalar(f"s{dtype}", dtype=dtype), T.scalar("b", dtype="bool"),
               T.scalar("u", dtype="uint8")]
    output = MakeVector(dtype)(*scalars)
    values = [np.array(7, dtype=dtype), np.array(True), np.array(200, dtype="uint8")]
    result = compare_backends(output, scalars, values)
    assert result.dtype == dtype
    assert compare_backends(MakeVector(dtype)(), [], []).shape == (0,)
