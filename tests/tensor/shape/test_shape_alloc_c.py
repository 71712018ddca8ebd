"""C code of Shape, ShapeI, Alloc and ARange (int64) against the Python backend: 0-d, empty,
non-contiguous inputs, changing shapes between calls, and the error paths (negative lengths,
a value that does not broadcast, a zero step)."""

from __future__ import annotations

import numpy as np
import pytest

import sympile.tensor as T
from sympile.tensor.basic import Alloc, ARange
from sympile.tensor.shape import ShapeI, shape
from tests.link.c.utils import compare_backends, compile_c, requires_compiler

pytestmark = requires_compiler


def test_shape_and_shape_i():
    x = T.tensor3("x", dtype="float32")
    outputs = [shape(x), ShapeI(0)(x), ShapeI(2)(x)]
    for value in (np.zeros((2, 3, 4), "float32"), np.zeros((0, 5, 1), "float32"),
                  np.zeros((4, 6, 8), "float32")[::2, ::-1, ::3]):
        compare_backends(outputs, [x], [value])


@pytest.mark.parametrize("dtype", ("bool", "int32", "float32", "float64"))
def test_alloc_broadcasts_the_value(dtype):
    row = T.row("row", dtype=dtype)
    scalar_input = T.scalar("s", dtype=dtype)
    vector = T.vector("v", dtype=dtype)
    rows, columns = T.scalar("n", dtype="int64"), T.scalar("m", dtype="int64")
    outputs = [Alloc()(row, rows, columns), Alloc()(scalar_input, rows, columns),
               Alloc()(vector, 2, rows, columns), Alloc()(scalar_input)]
    for n, m in ((3, 4), (0, 4), (5, 1), (2, 7)):
        values = [np.arange(m).reshape(1, m).astype(dtype), np.array(1, dtype=dtype),
                  np.arange(m).astype(dtype)[::-1], np.array(n), np.array(m)]
        compare_backends(outputs, [row, scalar_input, vector, rows, columns], values)


def test_alloc_errors():
    vector = T.vector("v")
    length = T.scalar("n", dtype="int64")
    function = compile_c([vector, length], Alloc()(vector, length, 3))
    assert function._vm.fallback_nodes == []
    with pytest.raises(ValueError, match="negative length"):
        function(np.zeros(3), -1)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        function(np.zeros(4), 2)
    with pytest.raises(ValueError, match="broadcastable"):
        function(np.zeros(1), 2)


def test_arange_int64():
    start, stop, step = (T.scalar(name, dtype="int64") for name in ("a", "b", "c"))
    output = ARange("int64")(start, stop, step)
    function = compile_c([start, stop, step], output)
    assert function._vm.fallback_nodes == []
    for bounds in ((0, 5, 1), (2, 11, 3), (5, 0, -2), (5, 0, 1), (0, 0, 1), (-3, 4, 2),
                   (-2**62, 2**62, 2**61)):
        np.testing.assert_array_equal(function(*bounds), np.arange(*bounds, dtype="int64"))
    with pytest.raises(ValueError, match="step must not be zero"):
        function(0, 3, 0)
