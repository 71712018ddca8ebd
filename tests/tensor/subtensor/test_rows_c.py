"""C code of x[rows] (an integer vector on axis 0 of an array of any rank) and of its writes
(inc_subtensor accumulating as numpy.add.at, set_subtensor, their inplace forms) against the
Python backend: dtypes, layouts, repeated, negative and empty indices, broadcast values, and
the same errors as perform."""

from __future__ import annotations

import numpy as np
import pytest

import sympile.tensor as T
from sympile.compile.function import In
from sympile.tensor.inplace import AdvancedIncSubtensorInplace
from sympile.tensor.subtensor import ARRAY, inc_subtensor, set_subtensor
from tests.link.c.utils import (
    assert_clean_under_address_sanitizer,
    compare_backends,
    compile_c,
    requires_compiler,
)

pytestmark = requires_compiler

rng = np.random.default_rng(5)

LAYOUTS = {
    "c": lambda a: a,
    "f": np.asfortranarray,
    "strided": lambda a: np.repeat(np.repeat(a, 2, axis=0), 2, axis=-1)[::2, ..., ::2],
    "negative": lambda a: a[::-1, ..., ::-1].copy()[::-1, ..., ::-1],
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int64", "bool",
                                   "complex128"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("index_dtype", ["int64", "int32", "uint8"])
def test_rows_read_matches_python_backend(dtype, layout, index_dtype):
    x = T.tensor(dtype=dtype, shape=(None, None, None))
    rows = T.tensor(dtype=index_dtype, shape=(None,))
    matrix = T.tensor(dtype=dtype, shape=(None, None))
    vector = T.tensor(dtype=dtype, shape=(None,))
    value = LAYOUTS[layout](np.arange(60).reshape(5, 3, 4).astype(dtype))
    signed = index_dtype != "uint8"
    index = np.array([4, -1, 0, 2, 0] if signed else [4, 1, 0, 2, 0], dtype=index_dtype)
    for index_value in (index, index[::-2], index[:0]):
        compare_backends([x[rows], matrix[rows], vector[rows]], [x, rows, matrix, vector],
                         [value, index_value, value[:, 0], value[:, 0, 0]])


def test_rows_read_of_a_negative_stride_input_and_changing_lengths():
    x, rows = T.dmatrix("x"), T.lvector("rows")
    function = compile_c([x, rows], x[rows])
    assert function._vm.fallback_nodes == []
    for shape, index in (((4, 3), [3, 3, 0]), ((2, 5), [1]), ((6, 1), [-6, 5, 0, 1]),
                         ((3, 0), [2, 0])):
        value = np.arange(np.prod(shape), dtype="float64").reshape(shape)[::-1, ::-1]
        np.testing.assert_array_equal(function(value, np.array(index)), value[index])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_rows_write_matches_python_backend(dtype, layout):
    x = T.tensor(dtype=dtype, shape=(None, None, None))
    rows = T.lvector("rows")
    full = T.tensor(dtype=dtype, shape=(None, None, None))
    row = T.tensor(dtype=dtype, shape=(1, None, None))
    scalar = T.tensor(dtype=dtype, shape=())
    line = T.tensor(dtype=dtype, shape=(None,))
    outputs = [inc_subtensor(x[rows], full), set_subtensor(x[rows], full),
               inc_subtensor(x[rows], row), set_subtensor(x[rows], scalar),
               inc_subtensor(x[rows], line)]
    value = LAYOUTS[layout](np.arange(60).reshape(5, 3, 4).astype(dtype))
    # Repeated rows accumulate (numpy.add.at) or the last one wins (set).
    index = np.array([4, -1, 0, 2, 0])
    for index_value in (index, index[::-2], index[:0]):
        count = len(index_value)
        values = [value, index_value,
                  LAYOUTS[layout](np.arange(count * 12).reshape(count, 3, 4).astype(dtype)),
                  np.arange(12).reshape(1, 3, 4).astype(dtype)[:, ::-1],
                  np.array(7, dtype=dtype), np.arange(4).astype(dtype)[::-1]]
        compare_backends(outputs, [x, rows, full, row, scalar, line], values)


@pytest.mark.parametrize("set_instead_of_inc", [False, True])
def test_inplace_rows_write_writes_over_x(set_instead_of_inc):
    x, y, rows = T.dmatrix("x"), T.dmatrix("y"), T.lvector("rows")
    op = AdvancedIncSubtensorInplace((ARRAY,), set_instead_of_inc=set_instead_of_inc)
    function = compile_c([In(x, mutable=True), y, rows], op(x, y, rows),
                         accept_inplace=True)
    assert function._vm.fallback_nodes == []
    backing = np.arange(24.0).reshape(6, 4)
    destroyed = backing[::2]
    expected = destroyed.copy()
    index, increment = np.array([2, 0, 2]), np.ones((3, 4))
    if set_instead_of_inc:
        expected[index] = increment
    else:
        np.add.at(expected, index, increment)
    untouched = backing[1::2].copy()
    result = function(destroyed, increment, index)
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(destroyed, expected)
    np.testing.assert_array_equal(backing[1::2], untouched)
    destroyed.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        function(destroyed, increment, index)


def test_errors_are_perform_errors():
    x, y, rows = T.dmatrix("x"), T.dmatrix("y"), T.lvector("rows")
    read = compile_c([x, rows], x[rows])
    write = compile_c([x, y, rows], inc_subtensor(x[rows], y))
    assert read._vm.fallback_nodes == write._vm.fallback_nodes == []
    with pytest.raises(IndexError, match=r"AdvancedSubtensor1\{array\}: index 3 is out of "
                                         r"bounds for axis 0 with size 3"):
        read(np.zeros((3, 2)), np.array([0, 3]))
    with pytest.raises(IndexError, match=r"index -4 is out of bounds for axis 0 with size 3"):
        read(np.zeros((3, 2)), np.array([-4]))
    value = np.zeros((3, 2))
    with pytest.raises(IndexError, match=r"AdvancedIncSubtensor1\{array\}: index 5 is out of "
                                         r"bounds for axis 0 with length 3"):
        write(value, np.ones((2, 2)), np.array([0, 5]))
    with pytest.raises(ValueError, match=r"a value of shape \(3, 2\) cannot be broadcast to "
                                         r"the indexed region of shape \(2, 2\)"):
        write(value, np.ones((3, 2)), np.array([0, 1]))
    with pytest.raises(ValueError, match=r"the value has shape \(1, 2\) and the indexed region "
                                         r"\(2, 2\): axis 0 of the value has length 1"):
        write(value, np.ones((1, 2)), np.array([0, 1]))
    np.testing.assert_array_equal(value, np.zeros((3, 2)))


SANITIZED_SCRIPT = """
import numpy as np
import pytest
import sympile.tensor as T
from sympile.tensor.subtensor import inc_subtensor, set_subtensor
from tests.link.c.utils import compile_c

x, y, rows = T.tensor3("x"), T.tensor3("y"), T.lvector("rows")
f = compile_c([x, y, rows], [x[rows], inc_subtensor(x[rows], y), set_subtensor(x[rows], y)])
assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
for shape, index in (((4, 3, 2), [3, 0, 0]), ((2, 1, 5), [1]), ((3, 0, 2), [2, -1]),
                     ((5, 2, 2), [])):
    value = np.ones(shape)[::-1, :, ::-1]
    f(value, np.ones((len(index),) + shape[1:]), np.array(index, dtype="int64"))
for bad in ([7], [-9, 0]):
    with pytest.raises(IndexError):
        f(np.ones((2, 2, 2)), np.ones((len(bad), 2, 2)), np.array(bad))
print("clean")
"""


@pytest.mark.slow
def test_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZED_SCRIPT)
