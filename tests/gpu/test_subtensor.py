"""Indexing on the device against the reference backend: basic views and writes, rows
taken by an integer array (an embedding lookup) and incremented with repeated entries,
negative entries and errors; join and split."""

import warnings

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gpu import GpuArrayType, GpuHostOpsWarning
from sympile.gpu.basic import GpuWrapper
from sympile.gpu.runtime import placement_target
from sympile.gpu.subtensor import GpuIncRows, GpuIncSubtensor, GpuSubtensor, GpuTakeRows


def _both(inputs, outputs, context, moved, device_inputs=()):
    """(the reference, the device function); the inputs numbered in `device_inputs` are
    device arrays in the latter (integer work on host values stays on the host)."""
    reference = sympile.function(inputs, outputs)
    replacements = {inputs[i]: GpuArrayType.of(inputs[i].type, context)() for i in device_inputs}
    with placement_target(context), warnings.catch_warnings():
        warnings.simplefilter("error", GpuHostOpsWarning)
        f = sympile.function([replacements.get(v, v) for v in inputs], outputs,
                             givens=[(v, r._as_TensorVariable()) for v, r in replacements.items()])
    assert any(isinstance(n.op, moved) for n in f.maker.fgraph.apply_nodes)
    return reference, f


def test_basic_views(context):
    x = GpuArrayType("float64", (None, None, None), context)("x")
    i = T.lscalar("i")
    outputs = [x[1:, ::-2, i] * 1.0, x[i, 0, -1] * 1.0, x[:, None, 2:3] * 1.0]
    host = T.dtensor3("x")
    reference = sympile.function([host, i], [host[1:, ::-2, i] * 1.0, host[i, 0, -1] * 1.0,
                                             host[:, None, 2:3] * 1.0])
    with placement_target(context):
        f = sympile.function([x, i], outputs)
    assert any(isinstance(n.op, GpuSubtensor) for n in f.maker.fgraph.apply_nodes)
    value = np.arange(60.0).reshape(3, 4, 5)
    for got, want in zip(f(value, 2), reference(value, 2)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(IndexError, match="out of bounds"):
        f(value, 7)


@pytest.mark.parametrize("set_", [False, True])
def test_basic_writes(set_, context):
    x, y = T.dmatrix("x"), T.drow("y")
    write = T.set_subtensor if set_ else T.inc_subtensor
    outputs = [write(x[1:, ::2], y), write(x[0], 5.0)]
    reference, f = _both([x, y], outputs, context, GpuIncSubtensor)
    value, row = np.arange(12.0).reshape(3, 4), np.array([[10.0, 20.0]])
    for got, want in zip(f(value, row), reference(value, row)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        f(value, np.ones((1, 3)))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64", "bool"])
def test_take_rows(dtype, context):
    """An embedding lookup: a matrix of indices into a table's rows, negatives counting
    from the end."""
    table = T.tensor(dtype, (None, None), name="table")
    index = T.lmatrix("index")
    reference, f = _both([table, index], table[index], context, GpuTakeRows, (0,))
    value = np.arange(15).reshape(5, 3).astype(dtype)
    entries = np.array([[0, 4, -1], [2, 2, -5]])
    np.testing.assert_array_equal(f(value, entries), reference(value, entries))
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 5"):
        f(value, np.array([[5, 0, 0]]))


def test_take_by_several_arrays(context):
    """A pick x[arange(n), y] (the cross-entropy's), arrays broadcast together, views as
    indices, and errors naming the axis."""
    x = T.ftensor3("x")
    i, j = T.lvector("i"), T.imatrix("j")
    outputs = [x[i.dimshuffle("x", 0), j], x[j.T], x[i, j[0]]]
    reference, f = _both([x, i, j], outputs, context, GpuTakeRows, (0, 1, 2))
    value = np.arange(60, dtype="float32").reshape(3, 4, 5)
    rows = np.array([0, -1, 2, 1])
    columns = np.array([[2, 0, -3, 1], [1, 1, 0, -1]], dtype="int32")
    for got, want in zip(f(value, rows, columns), reference(value, rows, columns)):
        np.testing.assert_array_equal(got, want)
    picks = x[T.arange(x.shape[0]), i[:3], j.flatten()[::3]]
    reference, f = _both([x, i, j], picks, context, GpuTakeRows, (0, 1, 2))
    np.testing.assert_array_equal(f(value, rows, columns), reference(value, rows, columns))
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
        f(value, np.array([0, 4, 1]), columns)
    with pytest.raises(IndexError, match="out of bounds for axis 2 with size 5"):
        f(value, rows, np.array([[0, 0, 0, 9], [0, 0, 0, 0]], dtype="int32"))
    with pytest.raises(IndexError, match="could not be broadcast together"):
        f(value, np.array([0, 1]), columns)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_increment_rows_with_repeats(dtype, context):
    """numpy.add.at: a repeated entry adds every occurrence (the embedding's gradient)."""
    x = T.tensor(dtype, (None, None), name="x")
    y = T.tensor(dtype, (None, None), name="y")
    index = T.lvector("index")
    reference, f = _both([x, y, index], T.inc_subtensor(x[index], y), context, GpuIncRows,
                         (0, 1))
    value = np.zeros((4, 3), dtype)
    increments = np.arange(15).reshape(5, 3).astype(dtype)
    entries = np.array([1, 3, 1, -1, 0])
    np.testing.assert_array_equal(f(value, increments, entries),
                                  reference(value, increments, entries))
    with pytest.raises(IndexError, match="out of bounds"):
        f(value, increments, np.array([1, 3, 1, 4, 0]))


def test_increment_by_several_arrays(context):
    """x[arange(n), y] += g (the gradient of a pick), arrays broadcast together, repeated
    positions adding every occurrence, y broadcast to the region; errors name the axis."""
    x = T.dtensor3("x")
    g, i, j = T.dmatrix("g"), T.lvector("i"), T.imatrix("j")
    outputs = [T.inc_subtensor(x[i.dimshuffle("x", 0), j], g.dimshuffle(0, 1, "x")),
               T.inc_subtensor(x[i, j[0]], 1.5)]
    reference, f = _both([x, g, i, j], outputs, context, GpuIncRows, (0, 1, 2, 3))
    value = np.arange(60.0).reshape(3, 4, 5)
    rows = np.array([0, -1, 0, 1])
    columns = np.array([[2, 0, 2, 1], [1, 1, 0, -1]], dtype="int32")
    increments = np.arange(8.0).reshape(2, 4)
    for got, want in zip(f(value, increments, rows, columns),
                         reference(value, increments, rows, columns)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
        f(value, increments, rows, np.array([[2, 0, 2, 1], [1, 4, 0, -1]], dtype="int32"))


@pytest.mark.parametrize("dtype", ["float16", "float64", "int32", "bool"])
def test_set_by_arrays_the_last_repeat_wins(dtype, context):
    """x[i, j] = y as numpy assigns: where positions repeat, the last one's value."""
    x = T.tensor(dtype, (None, None, None), name="x")
    y = T.tensor(dtype, (None, None), name="y")
    i, j = T.lvector("i"), T.lvector("j")
    outputs = [T.set_subtensor(x[i, j], y), T.set_subtensor(x[i], y[0, 0])]
    reference, f = _both([x, y, i, j], outputs, context, GpuIncRows, (0, 1, 2, 3))
    value = _values_of(dtype, (3, 4, 2), 0)
    rows, columns = np.array([0, 2, 0, -3, 1]), np.array([1, 3, 1, 1, 0])
    replacement = _values_of(dtype, (5, 2), 1)
    for got, want in zip(f(value, replacement, rows, columns),
                         reference(value, replacement, rows, columns)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 3"):
        f(value, replacement, np.array([0, 2, 0, 3, 1]), columns)


def _values_of(dtype, shape, seed):
    values = np.random.default_rng(seed).normal(size=shape) * 5
    return (values > 0) if dtype == "bool" else values.astype(dtype)


def test_pick_gradient_on_the_device(context):
    """-log(p[arange(n), y]).sum() of a normalisation that is not softmax: the pick and its
    gradient (an increment by two arrays) both run on the device."""
    with placement_target(context):
        weights = sympile.shared(np.linspace(0.1, 1.2, 12).reshape(3, 4), name="w")
    target = T.lvector("target")

    def cost(w):
        p = w / w.sum(axis=1, keepdims=True)
        return -T.log(p[T.arange(target.shape[0]), target]).sum()
    host = T.dmatrix("host")
    reference = sympile.function([host, target], sympile.grad(cost(host), host))
    with placement_target(context), warnings.catch_warnings():
        warnings.simplefilter("error", GpuHostOpsWarning)
        f = sympile.function([target], sympile.grad(cost(weights), weights))
    assert any(isinstance(n.op, GpuIncRows) for n in f.maker.fgraph.apply_nodes)
    entries = np.array([3, 0, 3])
    np.testing.assert_allclose(f(entries), reference(weights.get_value(), entries),
                               rtol=1e-12)


def test_embedding_gradient_on_the_device(context):
    """The gradient of a lookup is an increment of rows: both run on the device."""
    with placement_target(context):
        table = sympile.shared(np.arange(12.0).reshape(4, 3), name="table")
    index = T.lvector("index")
    cost = T.sum(T.tanh(table[index]) ** 2)
    reference_table = T.dmatrix("t")
    reference = sympile.function([reference_table, index], sympile.grad(
        T.sum(T.tanh(reference_table[index]) ** 2), reference_table))
    with placement_target(context), warnings.catch_warnings():
        warnings.simplefilter("error", GpuHostOpsWarning)
        f = sympile.function([index], sympile.grad(cost, table))
    entries = np.array([0, 2, 2, 3])
    # 1 - tanh(x)**2 for x near 9 cancels: an ulp of libm's tanh against numpy's shows.
    np.testing.assert_allclose(f(entries), reference(table.get_value(), entries), rtol=1e-7)


def test_reshape_and_specify_shape(context):
    x = GpuArrayType("float32", (None, None), context)("x")
    n = T.lscalar("n")
    outputs = [T.exp(x).reshape((n, -1)), T.specify_shape(T.exp(x), (2, None)).sum(axis=0)]
    host = T.fmatrix("h")
    reference = sympile.function([host, n], [T.exp(host).reshape((n, -1)),
                                             T.specify_shape(T.exp(host), (2, None)).sum(axis=0)])
    with placement_target(context), warnings.catch_warnings():
        warnings.simplefilter("error", GpuHostOpsWarning)
        f = sympile.function([x, n], outputs)
    value = np.arange(6, dtype="float32").reshape(2, 3) / 6
    for got, want in zip(f(value, 3), reference(value, 3)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ValueError, match="cannot reshape"):
        f(value, 4)
    with pytest.raises(ValueError, match="specify_shape"):
        f(np.ones((3, 3), "float32"), 3)


def test_join(context):
    x, y = T.fmatrix("x"), T.dmatrix("y")
    axis = T.lscalar("axis")
    outputs = [T.concatenate([T.exp(x), y], axis=1), T.join(axis, x, x * 2)]
    reference = sympile.function([x, y, axis], outputs)
    with placement_target(context), warnings.catch_warnings():
        warnings.simplefilter("error", GpuHostOpsWarning)
        f = sympile.function([x, y, axis], outputs)
    values = [np.ones((2, 3), "float32"), np.arange(4.0).reshape(2, 2), 0]
    for got, want in zip(f(*values), reference(*values)):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ValueError, match="other lengths differ"):
        f(np.ones((2, 3), "float32"), np.ones((3, 2)), 0)


def test_split(context):
    """Views of a device array (its gradient a device join), symbolic sizes and axis, an
    empty piece; bad sizes raise the CPU's errors."""
    x, sizes, axis = T.fmatrix("x"), T.lvector("sizes"), T.lscalar("axis")
    pieces = T.split(T.exp(x), sizes, 3, axis=axis)
    cost = sum((piece ** 2).sum() * (i + 1) for i, piece in enumerate(pieces))
    reference, f = _both([x, sizes, axis], [*pieces, sympile.grad(cost, x)], context,
                         GpuWrapper)
    assert not any(type(n.op).__name__ == "Split" for n in f.maker.fgraph.apply_nodes)
    value = np.linspace(-1, 1, 12, dtype="float32").reshape(2, 6)
    for arguments in ((value, [1, 0, 5], 1), (value.T, [2, 3, 1], 0), (value, [0, 2, 0], 0)):
        for got, want in zip(f(*arguments), reference(*arguments)):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ValueError, match="add up to 3"):
        f(value, [1, 1, 1], 1)
    with pytest.raises(ValueError, match=">= 0"):
        f(value, [7, -1, 0], 1)
