"""C code of FusedCAReduce (sympile/tensor/reduction/fused_c.py) against the Python backend:
sum, prod, max, min, all, any of elementwise expressions over sets of axes, broadcast inputs,
every layout, dtypes and acc_dtype, contiguous runs longer than a block (pairwise), the rows
path, fast-math fallbacks, empty inputs and the errors; and the bits of a fused sum against the
unfused one."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.graph.rewriting.db import RewriteQuery
from sympile.tensor.reduction import FusedCAReduce
from tests.link.c.utils import LAYOUTS, compare_backends, compile_c, requires_compiler

pytestmark = requires_compiler

UNFUSED_C = Mode(RewriteQuery(include=("fast_run",), exclude=("local_careduce_fusion",)),
                 backend="c", name="FAST_RUN_C_UNFUSED")


def fused_nodes(function) -> list:
    return [node for node in function.maker.fgraph.apply_nodes
            if isinstance(node.op, FusedCAReduce)]


REDUCERS = (T.sum, T.prod, T.max, T.min)


def compare_fused(outputs, inputs, values, rtol=None):
    """compare_backends, once the C function is seen to compute each output by a
    FusedCAReduce node of its own."""
    assert len(fused_nodes(compile_c(inputs, outputs))) == len(outputs)
    return compare_backends(outputs, inputs, values, rtol=rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
def test_reductions_over_axes_and_layouts(dtype):
    x = T.tensor3("x", dtype=dtype)
    column = T.tensor(dtype=dtype, shape=(None, None, 1), name="column")
    axes = (None, 0, 1, 2, (0, 2), (1, 2), (0, 1))
    pairs = [(axis, reducer) for axis in axes for reducer in REDUCERS]
    # A different expression for each reduction, each reading the broadcast column: a shared
    # one, with several clients, is not fused.
    if dtype.startswith(("int", "uint")):
        expressions = [x * 2 + column * (index + 1) for index in range(len(pairs))]
    else:
        expressions = [(x - column * (1 + index / 8)) ** 2 for index in range(len(pairs))]
    outputs = [reducer(values, axis=axis) for (axis, reducer), values in zip(pairs, expressions)]
    assert len(fused_nodes(compile_c([x, column], outputs))) == len(outputs)
    rng = np.random.default_rng(0)
    x_value = rng.uniform(0, 3, (3, 4, 5)).astype(dtype)
    column_value = rng.uniform(0, 2, (3, 4, 1)).astype(dtype)
    rtol = 1e-5 if dtype == "float32" else None
    for layout in LAYOUTS.values():
        compare_backends(outputs, [x, column], [layout(x_value), layout(column_value)],
                         rtol=rtol)


def test_all_and_any_of_a_comparison():
    x, y = T.matrix("x"), T.matrix("y")
    outputs = [reducer(T.gt(x * (2 * index + offset), y), axis=axis)
               for index, axis in enumerate((None, 0, 1))
               for reducer, offset in ((T.all, 1), (T.any, 2))]
    value = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, -6.0]])
    compare_fused(outputs, [x, y], [value, 1.5 * value - np.array([[1, 0, 1], [1, 1, 1]])])


def test_dtype_and_acc_dtype():
    x = T.vector("x", dtype="int8")
    outputs = [T.sum(x * 3, dtype="float32", acc_dtype="float64"),
               T.sum(x * 5, axis=0, dtype="int16"), T.prod(x + 1, acc_dtype="int64")]
    value = np.arange(-60, 60, dtype="int8")
    compare_fused(outputs, [x], [value])
    matrix = T.matrix("m", dtype="float32")
    column_sums = [T.sum(T.exp(matrix), axis=0, acc_dtype="float64", dtype="float32"),
                   T.sum(T.exp(matrix * 2), axis=1, acc_dtype="float64")]
    compare_fused(column_sums, [matrix],
                     [np.random.default_rng(1).standard_normal((7, 9)).astype("float32")],
                     rtol=1e-6)


@pytest.mark.parametrize("length", [1, 15, 16, 17, 4095, 4097, 12289, 100003])
def test_long_contiguous_runs_against_numpy(length):
    # (x - m)**2 with m a second input: with x's own mean, local_centered_square_sum makes
    # the sum a CenteredSquareSum (tests/tensor/reduction/test_centered.py).
    x, m = T.vector("x"), T.scalar("m")
    value = np.random.default_rng(length).standard_normal(length)
    results = compare_fused([((x - m) ** 2).sum(), T.abs(x).max(), T.exp(x).min(),
                             (x * 0.5 + 1).prod()], [x, m], [value, value.mean()], rtol=1e-10)
    np.testing.assert_allclose(results[0], ((value - value.mean()) ** 2).sum(), rtol=1e-12)


def test_the_fused_sum_has_the_bits_of_the_unfused_one():
    """Same values folded in the same order: CAReduce's lanes and pairwise blocks."""
    x = T.fvector("x")
    output = ((x - x.sum() / 3) ** 2).sum()
    fused = compile_c([x], output)
    unfused = sympile.function([x], output, mode=UNFUSED_C)
    assert len(fused_nodes(fused)) == 1 and not fused_nodes(unfused)
    for length in (1000, 4096 * 3 + 5, 10 ** 6):
        value = np.random.default_rng(length).standard_normal(length).astype("float32")
        assert fused(value).tobytes() == unfused(value).tobytes()


@pytest.mark.parametrize("shape, axis", [((300, 70), 0), ((5000, 3), 0), ((4, 9000), 0),
                                         ((3, 5000), 1), ((40, 30), 1)])
def test_rows_and_blocks_of_matrices(shape, axis):
    a, b = T.matrix("a"), T.matrix("b")
    row, column = T.row("row"), T.col("column")
    outputs = [((a - b) ** 2).sum(axis=axis), T.maximum(a, row).max(axis=axis),
               (a * column + row).sum(axis=axis), (b * column).sum(axis=axis, dtype="float32")]
    rng = np.random.default_rng(2)
    values = [rng.standard_normal(shape), rng.standard_normal(shape),
              rng.standard_normal((1, shape[1])), rng.standard_normal((shape[0], 1))]
    compare_fused(outputs, [a, b, row, column], values)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_fast_math_fallback(axis):
    """float32 sin is fast for |x| <= 65536: a block (or row) holding a larger value is folded
    again with libm's sinf, as the unfused loop computes it."""
    x = T.fmatrix("x")
    value = np.random.default_rng(3).uniform(-3, 3, (600, 50)).astype("float32")
    value[17, 3] = 1e6
    value[599, 49] = 3e5
    outputs = [T.sin(x).sum(axis=axis), T.cos(x * 2).max(axis=axis)]
    result = compare_fused(outputs, [x], [value], rtol=1e-5)
    np.testing.assert_allclose(result[0], np.sin(value.astype("float64")).sum(axis=axis),
                               rtol=1e-4, atol=1e-4)


def test_empty_inputs_and_errors():
    x, y = T.matrix("x"), T.matrix("y")
    sums = [((x - y * (index + 2)) ** 2).sum(axis=axis)
            for index, axis in enumerate((None, 0, 1))]
    compare_fused(sums, [x, y], [np.zeros((0, 3)), np.zeros((0, 3))])
    compare_fused(sums, [x, y], [np.zeros((3, 0)), np.zeros((3, 0))])
    maximum = compile_c([x, y], ((x - y) ** 2).max(axis=0))
    assert len(fused_nodes(maximum)) == 1
    with pytest.raises(ValueError, match="axis 0.*empty"):
        maximum(np.zeros((0, 3)), np.zeros((0, 3)))
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        maximum(np.zeros((2, 3)), np.zeros((2, 4)))
    integers = T.vector("n", dtype="int64")
    power = compile_c([integers], (integers ** integers).sum())
    assert len(fused_nodes(power)) == 1
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        power(np.array([2, -1], dtype="int64"))


def test_results_change_shape_between_calls():
    x = T.tensor3("x")
    function = compile_c([x], (T.exp(x) * 2).sum(axis=(0, 2)))
    for shape in ((2, 3, 4), (5, 1, 7), (1, 6, 1), (3, 3, 3)):
        value = np.random.default_rng(sum(shape)).standard_normal(shape)
        np.testing.assert_allclose(function(value), (np.exp(value) * 2).sum(axis=(0, 2)),
                                   rtol=1e-12)


def test_zero_strides_and_scalars():
    """An input whose memory repeats (numpy's broadcast_to: stride 0 on an axis its type does
    not broadcast), and a 0-d input broadcast against a matrix."""
    x, y = T.matrix("x"), T.matrix("y")
    scalar_value = T.scalar("s")
    outputs = [((x - y) ** 2).sum(axis=0), (x * y).sum(axis=1), T.exp(x + y).max(),
               (x * scalar_value).sum(axis=0)]
    rng = np.random.default_rng(4)
    repeated = np.broadcast_to(rng.standard_normal((1, 7)), (5, 7))
    compare_fused(outputs, [x, y, scalar_value],
                  [repeated, rng.standard_normal((5, 7)), np.asarray(0.25)])
    compare_fused(outputs, [x, y, scalar_value],
                  [rng.standard_normal((5, 7)), np.broadcast_to(rng.standard_normal((5, 1)),
                                                                (5, 7)), np.asarray(-1.5)])
