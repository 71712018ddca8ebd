"""C code of the advanced index x[rows, columns] of a matrix and its writes (inc_subtensor
accumulating over repeated entries, set_subtensor, the inplace form a gradient uses) against
the Python backend: dtypes, negative and repeated entries, a broadcast length-1 index,
non-contiguous inputs, changing lengths between calls, out-of-range errors; and the gradient
graph of a small MLP on the C backend with no perform fallback."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.tensor.subtensor import inc_subtensor, set_subtensor
from tests.link.c.utils import (
    assert_clean_under_address_sanitizer,
    compare_backends,
    compile_c,
    requires_compiler,
)

pytestmark = requires_compiler


def _inputs(dtype: str):
    x = T.matrix("x", dtype=dtype)
    rows, columns = T.vector("rows", dtype="int64"), T.vector("columns", dtype="int64")
    y = T.vector("y", dtype=dtype)
    return x, rows, columns, y


@pytest.mark.parametrize("dtype", ("int32", "float32", "float64"))
def test_read_increment_and_set(dtype):
    x, rows, columns, y = _inputs(dtype)
    scalar = T.scalar("s", dtype=dtype)
    outputs = [x[rows, columns], inc_subtensor(x[rows, columns], y),
               set_subtensor(x[rows, columns], y), inc_subtensor(x[rows, columns], scalar)]
    matrix = np.arange(24).reshape(4, 6).astype(dtype)
    layouts = (matrix, np.asfortranarray(matrix), np.arange(96).reshape(8, 12)
               .astype(dtype)[::2, ::-2])
    for value in layouts:
        # Repeated (0, 1) and negative entries, a reversed row index.
        row_index = np.array([0, 3, -1, 0, 2])[::-1].copy()
        column_index = np.array([1, -6, 5, 1, 0])[::-1]
        compare_backends(outputs, [x, rows, columns, y, scalar],
                         [value, row_index, column_index, np.arange(5).astype(dtype),
                          np.array(7, dtype=dtype)])


def test_broadcast_index_empty_and_changing_lengths():
    x, rows, columns, y = _inputs("float64")
    outputs = [x[rows, columns], inc_subtensor(x[rows, columns], y)]
    function = compile_c([x, rows, columns, y], outputs)
    assert function._vm.fallback_nodes == []
    value = np.arange(12.0).reshape(3, 4)
    for row_index, column_index in (([2], [0, 1, 3]), ([0, 1, 2], [3]), ([], []),
                                    ([1, 1, 1, 1], [2, 2, 2, 2])):
        row_index, column_index = np.array(row_index, "int64"), np.array(column_index, "int64")
        length = max(len(row_index), len(column_index)) if len(row_index) else 0
        increment = np.arange(length, dtype="float64")
        read, written = function(value, row_index, column_index, increment)
        np.testing.assert_array_equal(read, value[row_index, column_index])
        expected = value.copy()
        np.add.at(expected, (row_index, column_index), increment)
        np.testing.assert_array_equal(written, expected)


def test_errors_name_the_op_index_and_length():
    x, rows, columns, y = _inputs("float64")
    for output in (x[rows, columns], inc_subtensor(x[rows, columns], y)):
        function = compile_c([x, rows, columns, y], output)
        assert function._vm.fallback_nodes == []
        value = np.zeros((3, 4))
        with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 0 with size 3"):
            function(value, np.array([0, 3]), np.array([0, 0]), np.zeros(2))
        with pytest.raises(IndexError, match=r"index -5 is out of bounds for axis 1"):
            function(value, np.array([0]), np.array([-5]), np.zeros(1))
        with pytest.raises(IndexError, match="shape mismatch"):
            function(value, np.array([0, 1]), np.array([0, 1, 2]), np.zeros(2))
    function = compile_c([x, rows, columns, y], inc_subtensor(x[rows, columns], y))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        function(np.zeros((3, 4)), np.array([0, 1]), np.array([0, 1]), np.zeros(3))


def test_mlp_gradient_runs_in_c():
    x, y = T.matrix("x"), T.vector("labels", dtype="int64")
    w1, b1, w2, b2 = T.matrix("w1"), T.vector("b1"), T.matrix("w2"), T.vector("b2")
    hidden = T.tanh(T.dot(x, w1) + b1)
    logits = T.dot(hidden, w2) + b2
    exponentials = T.exp(logits - T.max(logits, axis=1, keepdims=True))
    probabilities = exponentials / T.sum(exponentials, axis=1, keepdims=True)
    loss = -T.log(probabilities)[T.arange(y.shape[0]), y].mean()
    outputs = [loss, *sympile.grad(loss, [w1, b1, w2, b2])]
    rng = np.random.default_rng(0)
    for samples in (7, 3):
        values = [rng.standard_normal((samples, 5)), rng.integers(0, 4, samples),
                  rng.standard_normal((5, 6)), rng.standard_normal(6),
                  rng.standard_normal((6, 4)), rng.standard_normal(4)]
        compare_backends(outputs, [x, y, w1, b1, w2, b2], values, rtol=1e-10,
                         require_c=False)
    function = compile_c([x, y, w1, b1, w2, b2], outputs)
    # The nnet rewrites may fuse the loss into their own ops, whose C code is another
    # module's; every other node runs C code.
    fallback = [node for node in function._vm.fallback_nodes
                if not type(node.op).__module__.endswith("nnet")]
    assert fallback == []


@pytest.mark.parametrize("dtype", ("bool", "int8", "float32", "float64"))
def test_basic_index_is_a_view(dtype):
    x = T.tensor3("x", dtype=dtype)
    start, stop, step = (T.scalar(name, dtype="int64") for name in ("a", "b", "c"))
    index = T.scalar("i", dtype="int32")
    outputs = [x[1], x[-1, ::-1], x[:, 1:3, ::2], x[::-2, None, index], x[start:stop:step],
               x[0, 0, 0], x[index, start::-1, :stop], x[10:], x[-10:2, -1:-5:-1]]
    values = np.arange(60).reshape(3, 4, 5).astype(dtype)
    layouts = (values, np.transpose(np.arange(60).reshape(5, 4, 3).astype(dtype), (2, 1, 0)),
               np.arange(240).reshape(6, 8, 5).astype(dtype)[::2, ::-2])
    for value in layouts:
        for bounds in ((0, 3, 1), (2, -5, -1), (-1, 1, -2), (5, 0, 2)):
            compare_backends(outputs, [x, start, stop, step, index],
                             [value, *(np.array(b) for b in bounds), np.array(-2, "int32")])


def test_basic_index_errors_and_changing_shapes():
    x = T.matrix("x")
    index, step = T.scalar("i", dtype="int64"), T.scalar("s", dtype="int64")
    function = compile_c([x, index, step], [x[index], x[:, ::step]])
    assert function._vm.fallback_nodes == []
    for shape in ((3, 4), (1, 7), (5, 2)):
        value = np.arange(np.prod(shape), dtype="float64").reshape(shape)
        row, columns = function(value, -1, -2)
        np.testing.assert_array_equal(row, value[-1])
        np.testing.assert_array_equal(columns, value[:, ::-2])
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 0 with size 3"):
        function(np.zeros((3, 4)), 3, 1)
    with pytest.raises(IndexError, match=r"index -4 is out of bounds for axis 0"):
        function(np.zeros((3, 4)), -4, 1)
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        function(np.zeros((3, 4)), 0, 0)


SANITIZED_SCRIPT = """
import numpy as np
import pytest
import sympile
import sympile.tensor as T
from sympile.tensor.basic import Alloc
from sympile.tensor.subtensor import inc_subtensor
from tests.link.c.utils import compile_c

x, y = T.matrix("x"), T.vector("labels", dtype="int64")
w, b = T.matrix("w"), T.vector("b")
logits = T.dot(T.tanh(x), w) + b
exponentials = T.exp(logits - T.max(logits, axis=1, keepdims=True))
probabilities = exponentials / T.sum(exponentials, axis=1, keepdims=True)
loss = -T.log(probabilities)[T.arange(y.shape[0]), y].mean()
outputs = [loss, *sympile.grad(loss, [w, b]), T.argmax(x, axis=0), T.prod(x[::-1, 1:]),
           T.all(x > 0, axis=1), Alloc()(b, y.shape[0], b.shape[0]),
           inc_subtensor(x[y, y], b[0])]
f = compile_c([x, y, w, b], outputs)
# The nnet rewrites may fuse the loss into their own op (another module's C code).
fallback = [n for n in f._vm.fallback_nodes if not type(n.op).__module__.endswith("nnet")]
assert fallback == [], fallback
rng = np.random.default_rng(0)
for samples in (5, 3, 4):
    f(rng.standard_normal((samples, 4)), rng.integers(0, 3, samples),
      rng.standard_normal((4, 3)), rng.standard_normal(3))
for bad in (np.array([0, 7]), np.array([-9, 0])):
    with pytest.raises(IndexError):
        f(rng.standard_normal((2, 4)), bad, rng.standard_normal((4, 3)), rng.standard_normal(3))
print("clean")
"""


@pytest.mark.slow
def test_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZED_SCRIPT)
