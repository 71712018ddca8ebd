"""Tests of sympile.tensor.subtensor: indexing, set/inc_subtensor and take, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.gradient import DisconnectedInputError, Lop, Rop, disconnected_type, grad
from sympile.graph.basic import io_toposort
from sympile.graph.gradient_types import is_disconnected
from sympile.tensor.subtensor import (
    ARRAY,
    MASK,
    SCALAR,
    AdvancedIncSubtensor,
    AdvancedSubtensor,
    IncSubtensor,
    IndexSlice,
    SliceLength,
    Subtensor,
    getitem,
    inc_subtensor,
    set_subtensor,
    take,
)
from tests.utils import (
    GradCase,
    assert_like_numpy,
    check_grad_case,
    check_infer_shape,
    evaluate,
    shapes,
)

RNG = np.random.default_rng(20240611)


def random_array(shape, dtype="float64"):
    kind = np.dtype(dtype).kind
    if kind == "b":
        return RNG.random(shape) > 0.5
    if kind in "iu":
        return RNG.integers(0, 100, size=shape).astype(dtype)
    if kind == "c":
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def symbolic_like(value):
    """An input variable of value's dtype and ndim, shape unknown."""
    value = np.asarray(value)
    return T.tensor(value.dtype, shape=(None,) * value.ndim)


def symbolic_index(index, static=False):
    """index with every array-like item replaced by a symbolic input (of unknown shape, or of
    the item's shape if static); returns (index, inputs, values)."""
    items = index if isinstance(index, tuple) else (index,)
    new_items, inputs, values = [], [], []
    for item in items:
        if isinstance(item, (list, np.ndarray)) and np.ndim(item) > 0:
            value = np.asarray(item)
            if value.size == 0 and value.dtype.kind == "f":
                value = value.astype("int64")
            variable = T.tensor(value.dtype, shape=value.shape) if static \
                else symbolic_like(value)
            new_items.append(variable)
            inputs.append(variable)
            values.append(value)
        else:
            new_items.append(item)
    return tuple(new_items), inputs, values


# ---------------------------------------------------------------------------------------------
# Basic indexing.

BASIC_CASES = [
    ((4, 5, 6), 0),
    ((4, 5, 6), -1),
    ((4, 5, 6), (1, 2)),
    ((4, 5, 6), (1, 2, 3)),
    ((4, 5, 6), (-4, -5, -6)),
    ((4, 5, 6), np.int64(2)),
    ((4, 5, 6), np.array(3)),
    ((4, 5, 6), np.s_[1:3]),
    ((4, 5, 6), np.s_[::-1]),
    ((4, 5, 6), np.s_[::2, 1::-2]),
    ((4, 5, 6), np.s_[-3:-1, :, 5:-10:-2]),
    ((4, 5, 6), np.s_[10:]),
    ((4, 5, 6), np.s_[:-10]),
    ((4, 5, 6), np.s_[3:1]),
    ((4, 5, 6), np.s_[-100:100]),
    ((4, 5, 6), np.s_[::7]),
    ((4, 5, 6), np.s_[::-3, ::-1, ::-2]),
    ((4, 5, 6), np.s_[True:3]),
    ((4, 5, 6), np.s_[None]),
    ((4, 5, 6), np.s_[None, 1, None]),
    ((4, 5, 6), np.s_[...]),
    ((4, 5, 6), np.s_[..., 0]),
    ((4, 5, 6), np.s_[1, ..., 2]),
    ((4, 5, 6), np.s_[..., None]),
    ((4, 5, 6), np.s_[:, :, :]),
    ((4, 5, 6), np.s_[()]),
    ((4, 5, 6), np.s_[1, ::-1, None, 2:]),
    ((4, 5, 6), np.s_[:, -1]),
    ((4, 5, 6), np.s_[None, ..., None, 0, None]),
    ((3,), np.s_[1]),
    ((3,), np.s_[-3]),
    ((0,), np.s_[1:]),
    ((0, 3), np.s_[::-1, 2]),
    ((), np.s_[()]),
    ((), np.s_[...]),
    ((), np.s_[None]),
    ((2, 1), np.s_[:, 0]),
]


@pytest.mark.parametrize("shape, index", BASIC_CASES)
@pytest.mark.parametrize("dtype", ["float64", "int8", "bool", "complex64"])
def test_basic_index_like_numpy(shape, index, dtype):
    value = random_array(shape, dtype)
    x = T.tensor(dtype, shape=(None,) * len(shape))
    result = x[index]
    assert isinstance(result.owner.op, Subtensor)
    assert result.type.dtype == dtype
    assert_like_numpy(evaluate(result, [x], [value]), value[index])


@pytest.mark.parametrize("shape, index", BASIC_CASES)
def test_basic_index_static_shape_and_infer_shape(shape, index):
    value = random_array(shape)
    expected = value[index]
    static = T.tensor("float64", shape=shape)
    assert static[index].type.shape == np.shape(expected)
    x = T.tensor("float64", shape=(None,) * len(shape))
    check_infer_shape(x[index], [x], [value])


def test_basic_static_shape_partly_known():
    x = T.tensor("float32", shape=(None, 5, 1))
    assert x[1:, ::2, 0].type.shape == (None, 3)
    assert x[:, :, None].type.shape == (None, 5, 1, 1)
    i = T.lscalar("i")
    assert x[:, i:].type.shape == (None, None, 1)
    assert T.tensor("float32", shape=(0, None))[i:, :].type.shape == (0, None)


def test_basic_index_is_a_view_in_the_graph_only():
    x = T.dmatrix("x")
    result = x[1:, ::-1]
    assert result.owner.op.view_map == {0: [0]}
    value = random_array((3, 4))
    original = value.copy()
    function = sympile.function([x], result)
    output = function(value)
    assert not np.shares_memory(output, value)
    output[...] = -1
    np.testing.assert_array_equal(value, original)
    assert_like_numpy(function(value), original[1:, ::-1])


@st.composite
def basic_indices(draw, symbolic=False):
    """(shape, index items, which int parts are symbolic)."""
    shape = draw(shapes(min_dims=0, max_dims=4, max_side=5))
    items = []
    bound = st.one_of(st.none(), st.integers(-7, 7))
    for length in shape:
        kinds = ["slice", "newaxis"] + (["int"] if length else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "newaxis":
            items.append(None)
        if kind == "int":
            items.append(draw(st.integers(-length, length - 1)))
        else:
            step = draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
            items.append(slice(draw(bound), draw(bound), step))
    # Leave some trailing axes out, or stand for a run of them with an Ellipsis.
    cut = draw(st.integers(0, len(items)))
    if draw(st.booleans()):
        start = draw(st.integers(0, cut))
        items = items[:start] + [Ellipsis] + items[cut:]
    else:
        items = items[:cut]
    return shape, tuple(items)


def _make_symbolic(items, choose):
    """items with the chosen int parts replaced by lscalar inputs: (items, inputs, values)."""
    inputs, values = [], []

    def convert(value):
        if isinstance(value, int) and choose():
            variable = T.lscalar()
            inputs.append(variable)
            values.append(value)
            return variable
        return value

    converted = []
    for item in items:
        if isinstance(item, slice):
            converted.append(slice(convert(item.start), convert(item.stop), convert(item.step)))
        else:
            converted.append(convert(item))
    return tuple(converted), inputs, values


@given(basic_indices(), st.data())
def test_basic_index_hypothesis(case, data):
    shape, index = case
    value = random_array(shape)
    expected = value[index]
    assert T.tensor("float64", shape=shape)[index].type.shape == expected.shape
    x = T.tensor("float64", shape=(None,) * len(shape))
    symbolic, inputs, values = _make_symbolic(index, lambda: data.draw(st.booleans()))
    result = x[symbolic]
    assert isinstance(result.owner.op, Subtensor)
    assert_like_numpy(evaluate(result, [x, *inputs], [value, *values]), expected)
    check_infer_shape(result, [x, *inputs], [value, *values])


@given(shapes(min_dims=1, max_dims=1, max_side=8),
       st.one_of(st.none(), st.integers(-10, 10)), st.one_of(st.none(), st.integers(-10, 10)),
       st.one_of(st.none(), st.integers(-4, 4).filter(bool)))
def test_symbolic_slice_bounds(shape, start, stop, step):
    value = random_array(shape)
    x = T.dvector("x")
    parts = [T.lscalar(name) for name in ("start", "stop", "step")]
    given_values = (start, stop, step)
    used = [p if v is not None else None for p, v in zip(parts, given_values)]
    result = x[used[0]:used[1]:used[2]]
    inputs = [p for p, v in zip(parts, given_values) if v is not None]
    values = [v for v in given_values if v is not None]
    assert_like_numpy(evaluate(result, [x, *inputs], [value, *values]),
                      value[start:stop:step])
    check_infer_shape(result, [x, *inputs], [value, *values])


def test_symbolic_integer_index_of_any_integer_dtype():
    x = T.dmatrix("x")
    value = random_array((3, 4))
    for dtype in ["int8", "uint8", "int32", "uint64"]:
        i = T.scalar("i", dtype=dtype)
        assert_like_numpy(evaluate(x[i, 1:], [x, i], [value, np.asarray(2, dtype)]),
                          value[2, 1:])
    i = T.lscalar("i")
    assert_like_numpy(evaluate(x[i], [x, i], [value, -3]), value[-3])
    assert_like_numpy(evaluate(x[:, i], [x, i], [value, -1]), value[:, -1])


def test_constant_index_variables_fold_into_the_op():
    x = T.dmatrix("x")
    result = x[T.constant(1), T.constant(0):T.constant(2)]
    assert result.owner.op.idx_list == (1, IndexSlice(0, 2))
    assert len(result.owner.inputs) == 1


def test_basic_idx_list_is_canonical():
    x = T.tensor3("x")
    i, j = T.lscalars("i", "j")
    assert x[1].owner.op == x[1, :].owner.op == x[1, ...].owner.op == x[1, :, :].owner.op
    assert x[..., 2].owner.op == x[:, :, 2].owner.op
    assert x[i:j].owner.op == x[j:i].owner.op
    assert hash(x[i:j].owner.op) == hash(x[j:i].owner.op)
    assert x[i:j].owner.op.idx_list == (IndexSlice(SCALAR, SCALAR),)
    assert x[1:2].owner.op != x[1:3].owner.op
    assert x[i].owner.op != x[1].owner.op
    assert str(x[1:, None, ::-1, i].owner.op) == "Subtensor{1:, newaxis, ::-1, ?}"


def test_iterating_over_a_static_length_vector_indexes_it():
    x = T.tensor("float64", shape=(3,))
    value = random_array((3,))
    outputs = evaluate(list(x), [x], [value])
    for k, output in enumerate(outputs):
        assert_like_numpy(output, value[k])


# ---------------------------------------------------------------------------------------------
# Advanced indexing.

MASK_4 = np.array([True, False, True, False])
MASK_5 = np.array([False, True, True, False, False])
MASK_45 = RNG.random((4, 5)) > 0.5
MASK_56 = RNG.random((5, 6)) > 0.5
MASK_456 = RNG.random((4, 5, 6)) > 0.5

ADVANCED_CASES = [
    [0, 2],
    [[0, 1], [2, 3]],
    [-1, -4, 0, 0],
    [],
    ([0, 1], [1, 2]),
    ([0, 1], [1, 2], [3, 4]),
    np.s_[[0, 0], :, [1, 2]],
    np.s_[:, [1, 2]],
    np.s_[:, [1, 2], [0, 5]],
    np.s_[1, :, [0, 1]],
    np.s_[:, 1, [0, 1]],
    np.s_[[0, 1], 1],
    np.s_[[0, 1], None, [1, 2]],
    np.s_[:, [0, 1, 2], None, [1, 2, 3]],
    np.s_[:, [0, 1, 2], ..., [1, 2, 3]],
    np.s_[..., [1, 2, 3]],
    np.s_[..., [0, 1], [1, 2]],
    np.s_[[[0], [1]], :, [0, 1, 2]],
    np.s_[None, [1, 2]],
    np.s_[[1, 2], ::-1, None],
    np.s_[2:0:-1, [[4], [0]], 1::2],
    np.s_[True],
    np.s_[False],
    np.s_[:, True, [1, 2]],
    np.s_[True, :, [1, 2]],
    np.s_[1, True],
    MASK_4,
    MASK_45,
    MASK_456,
    np.s_[:, MASK_5],
    np.s_[MASK_4, [1, 2], :],
    np.s_[1:3, MASK_56],
    np.s_[MASK_45, None],
    np.s_[..., MASK_56],
    np.s_[[0, 1], MASK_5],
    np.s_[MASK_4, :, [0, 5]],
    np.s_[np.array([1, 3], dtype="uint8"), np.array([0, 4], dtype="int16")],
]


@pytest.mark.parametrize("index", ADVANCED_CASES, ids=range(len(ADVANCED_CASES)))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_advanced_index_constant_like_numpy(index, dtype):
    value = random_array((4, 5, 6), dtype)
    x = T.tensor(dtype, shape=(None, None, None))
    result = x[index]
    assert isinstance(result.owner.op, AdvancedSubtensor)
    assert result.owner.op.view_map == {}
    assert_like_numpy(evaluate(result, [x], [value]), value[index])


@pytest.mark.parametrize("index", ADVANCED_CASES, ids=range(len(ADVANCED_CASES)))
def test_advanced_index_symbolic_like_numpy(index):
    value = random_array((4, 5, 6))
    x = T.dtensor3("x")
    symbolic, inputs, values = symbolic_index(index)
    result = x[symbolic]
    assert_like_numpy(evaluate(result, [x, *inputs], [value, *values]), value[index])
    check_infer_shape(result, [x, *inputs], [value, *values])


@pytest.mark.parametrize("index", ADVANCED_CASES, ids=range(len(ADVANCED_CASES)))
def test_advanced_index_static_shape(index):
    value = random_array((4, 5, 6))
    expected = value[index].shape
    assert T.tensor("float64", shape=(4, 5, 6))[index].type.shape == expected
    x = T.dtensor3("x")
    check_infer_shape(x[index], [x], [value])
    # Symbolic index arrays of known shape: everything but mask counts is static.
    typed, _, _ = symbolic_index(index, static=True)
    static = T.tensor("float64", shape=(4, 5, 6))[typed].type.shape
    items = index if isinstance(index, tuple) else (index,)
    if any(np.asarray(item).dtype == bool and np.ndim(item) > 0 for item in items):
        assert len(static) == len(expected)
        assert all(s is None or s == e for s, e in zip(static, expected))
    else:
        assert static == expected


def test_advanced_static_shape_examples():
    x = T.tensor("float64", shape=(None, 5, 6))
    i = T.lvector("i")
    j = T.tensor("int64", shape=(3, 1))
    assert x[i].type.shape == (None, 5, 6)
    assert x[:, i, j].type.shape == (None, 3, None)
    assert x[1, :, j].type.shape == (3, 1, 5)
    assert x[:, [1, 2]].type.shape == (None, 2, 6)
    mask = T.tensor("bool", shape=(None, 5))
    assert x[mask].type.shape == (None, 6)
    empty_mask = T.tensor("bool", shape=(0, 6))
    assert T.tensor("float64", shape=(None, None, 6))[:, empty_mask].type.shape == (None, 0)


def test_mask_count_uses_a_sum_in_infer_shape():
    x = T.dmatrix("x")
    result = x[x > 0]
    shape = result.owner.op.infer_shape(None, result.owner, [(3, 4), (3, 4)])
    assert len(shape) == 1 and not isinstance(shape[0], int)
    value = random_array((3, 4))
    check_infer_shape(result, [x], [value])
    assert_like_numpy(evaluate(result, [x], [value]), value[value > 0])


def test_index_arrays_broadcast_at_run_time_like_numpy():
    x = T.dmatrix("x")
    i, j = T.lvector("i"), T.lvector("j")
    value = random_array((4, 5))
    result = x[i, j]
    assert_like_numpy(evaluate(result, [x, i, j], [value, [1], [0, 2, 4]]), value[[1], [0, 2, 4]])
    check_infer_shape(result, [x, i, j], [value, np.array([1]), np.array([0, 2, 4])])
    check_infer_shape(result, [x, i, j], [value, np.array([0, 1, 3]), np.array([2])])
    check_infer_shape(result, [x, i, j], [value, np.array([], dtype="int64"), np.array([2])])


def test_list_of_symbolic_scalars_is_an_index_array():
    x = T.dvector("x")
    i, j = T.lscalars("i", "j")
    value = random_array((5,))
    assert_like_numpy(evaluate(x[[i, j, i]], [x, i, j], [value, 4, -5]), value[[4, -5, 4]])


def test_advanced_result_is_a_copy():
    x = T.dmatrix("x")
    value = random_array((3, 4))
    original = value.copy()
    output = evaluate(x[[0, 1]], [x], [value])
    output[...] = 0
    np.testing.assert_array_equal(value, original)


def test_advanced_op_props_and_str():
    x = T.dtensor3("x")
    i, j = T.lvectors("i", "j")
    assert x[i, 1:, j].owner.op == x[j, 1:, i].owner.op
    assert x[i].owner.op != x[x[0, 0] > 0].owner.op
    assert x[i, ..., j].owner.op.idx_list == (ARRAY, Ellipsis, ARRAY)
    assert x[i, 1, x[0, 0] > 0].owner.op.idx_list == (ARRAY, 1, MASK)
    assert str(x[i, 1:, None, ...].owner.op) == "AdvancedSubtensor{array, 1:, newaxis, ...}"


@st.composite
def advanced_indices(draw):
    """(shape, index): random numpy indices mixing integer arrays, masks, integers, slices,
    newaxis and an Ellipsis; they may be invalid (numpy raises IndexError)."""
    shape = draw(shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    broadcast = draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    # Index values from a seed hypothesis draws, so an example is reproducible.
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    items = []
    axis = 0
    while axis < len(shape):
        kind = draw(st.sampled_from(["array", "array", "mask", "int", "slice", "newaxis",
                                     "stop"]))
        if kind == "stop":
            break
        if kind == "newaxis":
            items.append(None)
            continue
        length = shape[axis]
        if kind == "array":
            # A shape that broadcasts to `broadcast`: a suffix with some lengths set to 1.
            suffix = broadcast[draw(st.integers(0, len(broadcast))):]
            index_shape = tuple(n if draw(st.booleans()) else 1 for n in suffix)
            items.append(rng.integers(-length, length, size=index_shape))
        elif kind == "mask":
            n_axes = draw(st.integers(0, min(2, len(shape) - axis)))
            items.append(rng.random(shape[axis:axis + n_axes]) > 0.3)
            axis += n_axes
            continue
        elif kind == "int":
            items.append(draw(st.integers(-length, length - 1)))
        else:
            items.append(slice(draw(st.one_of(st.none(), st.integers(-5, 5))), None,
                               draw(st.sampled_from([None, 1, 2, -1]))))
        axis += 1
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return shape, tuple(items)


@given(advanced_indices())
def test_advanced_index_hypothesis(case):
    shape, index = case
    value = random_array(shape)
    x = T.tensor("float64", shape=(None,) * len(shape))
    symbolic, inputs, values = symbolic_index(index)
    try:
        expected = value[index]
    except IndexError:
        with pytest.raises(IndexError):
            evaluate(x[symbolic], [x, *inputs], [value, *values])
        return
    result = x[symbolic]
    assert_like_numpy(evaluate(result, [x, *inputs], [value, *values]), expected)
    check_infer_shape(result, [x, *inputs], [value, *values])
    assert T.tensor("float64", shape=shape)[index].type.shape == expected.shape


# ---------------------------------------------------------------------------------------------
# set_subtensor and inc_subtensor.

def _numpy_write(value, index, y, mode):
    result = value.copy()
    if mode == "set":
        result[index] = y
    else:
        np.add.at(result, index, y)
    return result


WRITE_CASES = [
    # (index, shape of y)
    (np.s_[1], (5, 6)),
    (np.s_[1], (6,)),
    (np.s_[1], ()),
    (np.s_[1:3, ::-2], (2, 3, 6)),
    (np.s_[1:3, ::-2], (1, 6)),
    (np.s_[1, 2, 3], ()),
    (np.s_[..., None, 0], (4, 5, 1)),
    (np.s_[3:1], (0, 5, 6)),
    (np.s_[[0, 0, 1]], (3, 5, 6)),
    (np.s_[[0, 0, 1]], (5, 6)),
    (np.s_[[0, 0, 1]], ()),
    (np.s_[:, [1, 1, -4], 2], (4, 3)),
    (np.s_[1, :, [0, 0]], (2, 5)),
    (np.s_[[0, 3], :, [[0], [0]]], (2, 2, 5)),
    (np.s_[MASK_4], (2, 5, 6)),
    (np.s_[MASK_45], (6,)),
    (np.s_[:, MASK_56], (4, int(MASK_56.sum()))),
    (np.s_[True, 1], (1, 5, 6)),
]


@pytest.mark.parametrize("index, y_shape", WRITE_CASES, ids=range(len(WRITE_CASES)))
@pytest.mark.parametrize("mode", ["set", "inc"])
def test_write_like_numpy(index, y_shape, mode):
    value = random_array((4, 5, 6))
    original = value.copy()
    y_value = random_array(y_shape)
    x = T.dtensor3("x")
    y = T.tensor("float64", shape=y_shape)
    symbolic, inputs, index_values = symbolic_index(index)
    region = x[symbolic]
    result = set_subtensor(region, y) if mode == "set" else inc_subtensor(region, y)
    expected_op = AdvancedIncSubtensor if isinstance(region.owner.op, AdvancedSubtensor) \
        else IncSubtensor
    assert isinstance(result.owner.op, expected_op)
    assert result.owner.op.set_instead_of_inc == (mode == "set")
    assert result.type == x.type
    output = evaluate(result, [x, y, *inputs], [value, y_value, *index_values])
    assert_like_numpy(output, _numpy_write(original, index, y_value, mode))
    np.testing.assert_array_equal(value, original)
    check_infer_shape(result, [x, y, *inputs], [value, y_value, *index_values])


@pytest.mark.parametrize("dtype", ["int8", "uint16", "float32", "complex128", "bool"])
def test_write_dtypes(dtype):
    value = random_array((5, 3), dtype)
    y_value = random_array((3,), dtype)
    x = T.tensor(dtype, shape=(None, None))
    y = T.tensor(dtype, shape=(None,))
    index = np.array([0, 4, 0])
    for mode in ("set", "inc"):
        result = inc_subtensor(x[index], y, set_instead_of_inc=mode == "set")
        assert result.type.dtype == dtype
        assert_like_numpy(evaluate(result, [x, y], [value, y_value]),
                          _numpy_write(value, index, y_value, mode))


def test_repeated_indices():
    x = T.dvector("x")
    value = np.zeros(4)
    indices = [1, 1, 3, 1]
    y_value = np.array([1.0, 2.0, 3.0, 4.0])
    increments = evaluate(inc_subtensor(x[indices], y_value), [x], [value])
    assert_like_numpy(increments, np.array([0.0, 7.0, 0.0, 3.0]))
    last_wins = evaluate(set_subtensor(x[indices], y_value), [x], [value])
    assert_like_numpy(last_wins, np.array([0.0, 4.0, 0.0, 3.0]))
    once = evaluate(inc_subtensor(x[indices], y_value, ignore_duplicates=True), [x], [value])
    expected = value.copy()
    expected[indices] += y_value
    assert_like_numpy(once, expected)
    assert_like_numpy(evaluate(inc_subtensor(x[indices], 1.0), [x], [value]),
                      np.array([0.0, 3.0, 0.0, 1.0]))


def test_write_with_symbolic_basic_index():
    x = T.dmatrix("x")
    i, j = T.lscalars("i", "j")
    y = T.dvector("y")
    value = random_array((4, 5))
    y_value = random_array((5,))
    result = inc_subtensor(x[i:j][-1], y)
    # The region is a row of x[i:j]: the result is x[i:j] with its last row incremented.
    expected = value[1:3].copy()
    expected[-1] += y_value
    assert_like_numpy(evaluate(result, [x, i, j, y], [value, 1, 3, y_value]), expected)
    result = set_subtensor(x[i, j:], 0)
    expected = value.copy()
    expected[2, 1:] = 0
    assert_like_numpy(evaluate(result, [x, i, j], [value, 2, 1]), expected)


@given(advanced_indices(), st.sampled_from(["set", "inc"]), st.data())
def test_write_hypothesis(case, mode, data):
    shape, index = case
    value = random_array(shape)
    try:
        region_shape = value[index].shape
    except IndexError:
        return
    # y: the region's shape, some trailing part of it, with some axes of length 1.
    trailing = region_shape[data.draw(st.integers(0, len(region_shape))):]
    y_shape = tuple(n if data.draw(st.booleans()) else 1 for n in trailing)
    y_value = random_array(y_shape)
    x = T.tensor("float64", shape=(None,) * len(shape))
    y = T.tensor("float64", shape=y_shape)
    symbolic, inputs, index_values = symbolic_index(index)
    result = inc_subtensor(x[symbolic], y, set_instead_of_inc=mode == "set")
    output = evaluate(result, [x, y, *inputs], [value, y_value, *index_values])
    assert_like_numpy(output, _numpy_write(value, index, y_value, mode))


def test_write_does_not_change_the_inputs():
    x = T.dmatrix("x")
    value = random_array((3, 4))
    original = value.copy()
    view = x[1:]
    function = sympile.function([x], [view, set_subtensor(view, 0.0),
                                      inc_subtensor(x[[0, 0]], 1.0), set_subtensor(x[x > 0], 0.0),
                                      set_subtensor(view[0], 5.0)])
    outputs = function(value)
    np.testing.assert_array_equal(value, original)
    assert_like_numpy(outputs[0], original[1:])
    assert not any(np.shares_memory(output, value) for output in outputs)


def test_value_dtype_conversion():
    x = T.fvector("x")
    value = random_array((3,), "float32")
    b = T.bscalar("b")
    result = set_subtensor(x[0], b)
    assert result.type == x.type
    assert_like_numpy(evaluate(result, [x, b], [value, np.int8(7)]),
                      np.array([7, *value[1:]], "float32"))
    assert set_subtensor(x[0], 0.1).type == x.type
    assert set_subtensor(x[:2], [1, 2]).type == x.type
    assert set_subtensor(T.bvector()[0], 100).type.dtype == "int8"
    assert inc_subtensor(T.bvector()[0], True).type.dtype == "int8"
    with pytest.raises(TypeError, match="float64 into a tensor of dtype float32"):
        set_subtensor(x[0], T.dscalar())
    with pytest.raises(TypeError, match="without losing precision"):
        set_subtensor(T.ivector()[0], 0.5)
    with pytest.raises(TypeError, match="without losing precision"):
        set_subtensor(T.bvector()[0], 1000)
    with pytest.raises(TypeError, match="set_subtensor: cannot write"):
        set_subtensor(T.ivector()[:2], np.array([0.5, 1.5]))
    with pytest.raises(TypeError, match="must have x's dtype"):
        IncSubtensor((0,))(x, T.dscalar())


# ---------------------------------------------------------------------------------------------
# take.

@pytest.mark.parametrize("shape, indices, axis", [
    ((3, 4), [0, 11, -1], None),
    ((3, 4), [[0, 1], [2, 2]], 0),
    ((3, 4), [3, -4, 0], 1),
    ((3, 4), [3, -4, 0], -1),
    ((3, 4, 2), [1], 1),
    ((3, 4), 2, 1),
    ((3, 4), np.int64(-1), 0),
    ((5,), [4, 0], None),
    ((5,), [True, False], 0),
    ((), [0, 0], None),
])
def test_take_like_numpy(shape, indices, axis):
    value = random_array(shape)
    x = T.tensor("float64", shape=(None,) * len(shape))
    assert_like_numpy(evaluate(take(x, indices, axis=axis), [x], [value]),
                      np.take(value, indices, axis=axis))
    symbolic = T.tensor(np.asarray(indices).dtype, shape=(None,) * np.ndim(indices))
    result = x.take(symbolic, axis=axis)
    assert_like_numpy(evaluate(result, [x, symbolic], [value, np.asarray(indices)]),
                      np.take(value, indices, axis=axis))


@pytest.mark.parametrize("mode", ["wrap", "clip"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_take_modes_like_numpy(mode, axis):
    value = random_array((3, 4))
    indices = np.array([[-13, -1], [0, 3], [4, 12]])
    x, i = T.dmatrix("x"), T.lmatrix("i")
    assert_like_numpy(evaluate(x.take(i, axis=axis, mode=mode), [x, i], [value, indices]),
                      np.take(value, indices, axis=axis, mode=mode))
    assert_like_numpy(evaluate(take(x, [5, -7], axis=axis, mode=mode), [x], [value]),
                      np.take(value, [5, -7], axis=axis, mode=mode))


def test_take_errors():
    x = T.dmatrix("x")
    with pytest.raises(ValueError, match="take: mode must be 'raise', 'wrap' or 'clip'"):
        take(x, [0], mode="nearest")
    with pytest.raises(ValueError, match="take: axis 2 is out of range for a 2-d tensor"):
        take(x, [0], axis=2)
    with pytest.raises(TypeError, match="take: axis must be an int"):
        take(x, [0], axis=1.0)
    with pytest.raises(TypeError, match="floats"):
        take(x, [0.5], axis=0)
    with pytest.raises(TypeError, match="take: indices must be integers"):
        take(x, slice(1, 2), axis=0)
    with pytest.raises(IndexError, match="out of bounds"):
        evaluate(take(x, [7], axis=1), [x], [random_array((2, 3))])


# ---------------------------------------------------------------------------------------------
# SliceLength and the ops' contracts.

@pytest.mark.parametrize("parts", [(None, None, None), (1, None, None), (None, -2, None),
                                   (5, 1, -2), (None, None, -1), (-10, 10, 3)])
def test_slice_length(parts):
    length = T.lscalar("n")
    given_parts = tuple(p is not None for p in parts)
    inputs = [np.int64(p) for p in parts if p is not None]
    result = SliceLength(given_parts)(length, *inputs)
    assert result.type == T.tensor_type("int64", ())
    function = sympile.function([length], result)
    for n in range(8):
        assert int(function(n)) == len(range(n)[slice(*parts)])


def test_ops_reject_bad_idx_lists_and_inputs():
    x = T.dmatrix("x")
    with pytest.raises(ValueError, match="not a valid entry of a basic index"):
        Subtensor((ARRAY,))
    with pytest.raises(ValueError, match="not a valid entry"):
        Subtensor((1.5,))
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        IndexSlice(None, None, 0)
    with pytest.raises(TypeError, match=r"expected 1 index input, got 0"):
        Subtensor((SCALAR,))(x)
    with pytest.raises(TypeError, match="must be an integer scalar"):
        Subtensor((SCALAR,))(x, T.dscalar())
    with pytest.raises(TypeError, match="must be a boolean tensor"):
        AdvancedSubtensor((MASK,))(x, T.lmatrix())
    with pytest.raises(TypeError, match="must be an integer tensor"):
        AdvancedSubtensor((ARRAY,))(x, T.dvector())


# ---------------------------------------------------------------------------------------------
# Errors.

def test_non_integer_indices_are_type_errors():
    x = T.dmatrix("x")
    with pytest.raises(TypeError, match="index 1.5 is not an integer"):
        x[1.5]
    with pytest.raises(TypeError, match="slice start 1.0 must be None or an integer"):
        x[1.0:2]
    with pytest.raises(TypeError, match="slice step"):
        x[::T.dscalar()]
    with pytest.raises(TypeError, match="has dtype float64"):
        x[T.dvector()]
    with pytest.raises(TypeError, match="holds floats"):
        x[[1.5, 2.0]]
    with pytest.raises(TypeError, match="cannot use 'a' as an index"):
        x["a"]
    with pytest.raises(TypeError, match="cannot use"):
        x[[[0], [1, 2]]]


def test_too_many_indices_are_index_errors():
    x = T.dmatrix("x")
    with pytest.raises(IndexError, match="too many indices for a 2-d tensor"):
        x[1, 2, 3]
    with pytest.raises(IndexError, match="too many indices for a 2-d tensor"):
        x[[0], [0], [0]]
    with pytest.raises(IndexError, match="too many indices for a 2-d tensor"):
        x[0, T.bmatrix() > 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(IndexError, match="too many indices for a 0-d tensor"):
        T.dscalar()[0]


def test_zero_step_is_a_value_error():
    x = T.dvector("x")
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0]
    step = T.lscalar("step")
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        evaluate(x[::step], [x, step], [np.zeros(3), 0])


def test_out_of_range_at_build_time():
    x = T.tensor("float64", shape=(3, 4))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with length 3"):
        x[3]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 1 with length 4"):
        x[:, -5]
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with length 4"):
        x[[0, 1], [1, 4]]
    with pytest.raises(IndexError, match="mask of shape"):
        x[np.ones(4, bool)]
    with pytest.raises(IndexError, match="mask of shape"):
        x[T.tensor("bool", shape=(3, 5))]
    with pytest.raises(IndexError, match="shape mismatch"):
        x[[0, 1], [0, 1, 2]]


def test_out_of_range_at_run_time():
    x = T.dmatrix("x")
    value = random_array((3, 4))
    i = T.lscalar("i")
    with pytest.raises(IndexError, match=r"Subtensor\{.*index 3 is out of bounds for axis 0"):
        evaluate(x[3], [x], [value])
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 1 with size 4"):
        evaluate(x[1:, i], [x, i], [value, -5])
    vector = T.lvector("v")
    with pytest.raises(IndexError, match="AdvancedSubtensor.*index 7 is out of bounds"):
        evaluate(x[:, vector], [x, vector], [value, [0, 7]])
    with pytest.raises(IndexError, match="boolean index did not match"):
        evaluate(x[x[0] > 0], [x], [value])
    with pytest.raises(IndexError, match="could not be broadcast"):
        evaluate(x[vector, vector[:2]], [x, vector], [value, [0, 1, 2]])
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with length 4"):
        evaluate(inc_subtensor(x[:, vector], 1.0), [x, vector], [value, [0, 7]])
    with pytest.raises(IndexError, match="mask of shape"):
        evaluate(set_subtensor(x[x[0] > 0], 1.0), [x], [value])
    with pytest.raises(IndexError, match="out of bounds"):
        evaluate(set_subtensor(x[i], 1.0), [x, i], [value, 3])


@pytest.mark.parametrize("index", [np.s_[..., False, [[1]]], np.s_[[5], []],
                                   np.s_[[[7]], np.zeros(4, dtype=bool)]])
def test_index_arrays_that_select_nothing_are_not_bounds_checked(index):
    """numpy checks an index array's entries only when the advanced indices select
    something; integers are always checked."""
    value = random_array((3, 4))
    x = T.dmatrix("x")
    static = T.tensor("float64", shape=(3, 4))
    for symbolic in (x, static):
        assert_like_numpy(evaluate(symbolic[index], [symbolic], [value]), value[index])
        for mode in ("set", "inc"):
            result = inc_subtensor(symbolic[index], 1.0, set_instead_of_inc=mode == "set")
            assert_like_numpy(evaluate(result, [symbolic], [value]), value)
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        static[5, []]


def test_bad_value_shapes():
    x = T.dmatrix("x")
    with pytest.raises(ValueError, match="cannot be broadcast to the indexed region"):
        set_subtensor(T.tensor("float64", shape=(3, 4))[1:], np.ones(3))
    with pytest.raises(ValueError, match="more than the 1 of the indexed region"):
        inc_subtensor(x[0], T.dmatrix())
    y = T.dvector("y")
    value = random_array((3, 4))
    with pytest.raises(ValueError, match="cannot be broadcast to the indexed region"):
        evaluate(set_subtensor(x[1:], y), [x, y], [value, np.ones(3)])
    with pytest.raises(ValueError, match="cannot be broadcast to the indexed region"):
        evaluate(inc_subtensor(x[[0, 0]], y), [x, y], [value, np.ones(3)])
    # An axis of unknown length is not broadcast at run time, as in Elemwise.
    with pytest.raises(ValueError, match="not say it is broadcastable"):
        evaluate(inc_subtensor(x[1:], y), [x, y], [value, np.ones(1)])
    row = T.tensor("float64", shape=(1,))
    assert_like_numpy(evaluate(inc_subtensor(x[1:], row), [x, row], [value, np.ones(1)]),
                      value + np.array([[0.0], [1.0], [1.0]]))


def test_writing_needs_an_indexed_variable():
    x = T.dmatrix("x")
    with pytest.raises(TypeError, match=r"set_subtensor: the first argument must be the result "
                                        r"of indexing"):
        set_subtensor(x, 1.0)
    with pytest.raises(TypeError, match="inc_subtensor: the first argument"):
        inc_subtensor(x + 1, 1.0)


def test_getitem_function_and_exports():
    x = T.dvector("x")
    value = random_array((4,))
    assert_like_numpy(evaluate(getitem(x, slice(1, None)), [x], [value]), value[1:])
    for name in ("getitem", "take", "set_subtensor", "inc_subtensor"):
        assert getattr(T, name) is globals()[name]


# ---------------------------------------------------------------------------------------------
# Gradients (reverse and forward mode).

def normal(rng, *shape):
    return rng.standard_normal(shape)


def length(rng, low, high):
    """A random axis length in [low, high]."""
    return int(rng.integers(low, high + 1))


def matrix_point(rng, rows=(3, 6), columns=(4, 6)):
    return [normal(rng, length(rng, *rows), length(rng, *columns))]


def matrix_and_value(value_shape):
    """make_point for (x, y): x a random matrix, y of value_shape(x's shape)."""
    def make_point(rng):
        (x,) = matrix_point(rng)
        return [x, normal(rng, *value_shape(x.shape))]
    return make_point


# Symbolic (non-constant) indices: shared variables, so the checked functions keep only float
# inputs.
START = sympile.shared(np.int64(1), name="start")
STOP = sympile.shared(np.int64(-1), name="stop")
STEP = sympile.shared(np.int64(-2), name="step")
ROW = sympile.shared(np.int64(-2), name="row")
REPEATED = sympile.shared(np.array([2, 0, 2, 2]), name="repeated")
MASK_3 = np.array([True, False, True])
MASK_34 = np.array([[True, False, True, True], [False, False, True, False],
                    [True, True, False, False]])
SYMBOLIC_MASK = sympile.shared(MASK_34, name="mask")


def row_of(y):
    """y declared to have length 1 on axis 0 (it broadcasts over the region's rows)."""
    return T.specify_shape(y, (1,) + (None,) * (y.type.ndim - 1))


def column_of(y):
    """y declared to have length 1 on its last axis."""
    return T.specify_shape(y, (None,) * (y.type.ndim - 1) + (1,))


GRAD_CASES = [
    # Basic indexing (Subtensor).
    GradCase("int", lambda x: x[1], matrix_point),
    GradCase("negative ints", lambda x: x[-1, -2], matrix_point),
    GradCase("slice", lambda x: x[1:3], matrix_point),
    GradCase("slice steps", lambda x: x[::2, 1::3], matrix_point),
    GradCase("negative steps", lambda x: x[::-1, 3:0:-2], matrix_point),
    GradCase("empty slice", lambda x: x[3:1], matrix_point),
    GradCase("newaxis", lambda x: x[None, :, 1, None], matrix_point),
    GradCase("ellipsis", lambda x: x[..., 1], lambda rng: [normal(rng, 2, length(rng, 1, 3), 3)]),
    GradCase("symbolic bounds", lambda x: x[START:STOP, ::STEP], matrix_point),
    GradCase("symbolic int", lambda x: x[ROW, START:], matrix_point),
    GradCase("bounds from the shape", lambda x: x[T.shape_i(x, 0) - 3:, :T.shape_i(x, 1) - 1],
             matrix_point),
    # Advanced indexing (AdvancedSubtensor).
    GradCase("int array", lambda x: x[[0, 2]], matrix_point),
    GradCase("repeated int array", lambda x: x[[1, 0, 1, 1]], matrix_point),
    GradCase("negative int array", lambda x: x[:, [-1, 0, -1]], matrix_point),
    GradCase("2-d int array", lambda x: x[[[0, 1], [1, 1]]], matrix_point),
    GradCase("broadcast int arrays", lambda x: x[[0, 1, 1], [[2], [0]]], matrix_point),
    GradCase("separated int arrays", lambda x: x[[0, 1, 0], :, [1, 1, 0]],
             lambda rng: [normal(rng, 2, length(rng, 1, 3), 3)]),
    GradCase("int array, newaxis, ellipsis", lambda x: x[None, ..., [0, 0, 2]], matrix_point),
    GradCase("symbolic int array", lambda x: x[:, REPEATED], matrix_point),
    GradCase("mask", lambda x: x[MASK_3], lambda rng: matrix_point(rng, rows=(3, 3))),
    GradCase("2-d mask", lambda x: x[MASK_34], lambda rng: [normal(rng, 3, 4)]),
    GradCase("mask after a slice", lambda x: x[:, 1:, MASK_3],
             lambda rng: [normal(rng, length(rng, 1, 3), 3, 3)]),
    GradCase("symbolic mask", lambda x: x[SYMBOLIC_MASK], lambda rng: [normal(rng, 3, 4)]),
    GradCase("boolean scalar", lambda x: x[True], matrix_point),
    GradCase("mask and int array", lambda x: x[MASK_3, [0, 3]],
             lambda rng: matrix_point(rng, rows=(3, 3))),
    # take.
    GradCase("take along axis 1", lambda x: take(x, [3, 1, 3], axis=1), matrix_point),
    GradCase("take, flattened", lambda x: take(x, [[5, -1], [0, 5]]), matrix_point),
    GradCase("take, negative", lambda x: take(x, [-1, -1, 0], axis=0), matrix_point),
    # Writing into a basic region (IncSubtensor).
    GradCase("set slice", lambda x, y: set_subtensor(x[1:3], y),
             matrix_and_value(lambda s: (2, s[1]))),
    GradCase("inc slice", lambda x, y: inc_subtensor(x[1:3], y),
             matrix_and_value(lambda s: (2, s[1]))),
    GradCase("set slice, broadcast row", lambda x, y: set_subtensor(x[::-2], row_of(y)),
             matrix_and_value(lambda s: (1, s[1]))),
    GradCase("inc slice, broadcast row", lambda x, y: inc_subtensor(x[::-2], row_of(y)),
             matrix_and_value(lambda s: (1, s[1]))),
    GradCase("set slice, broadcast column", lambda x, y: set_subtensor(x[:, 1:3], column_of(y)),
             matrix_and_value(lambda s: (s[0], 1))),
    GradCase("inc slice, fewer dimensions", lambda x, y: inc_subtensor(x[1:], y),
             matrix_and_value(lambda s: (s[1],))),
    GradCase("set int, scalar value", lambda x, y: set_subtensor(x[::2, -1], y),
             matrix_and_value(lambda s: ())),
    GradCase("set one element", lambda x, y: set_subtensor(x[1, 2], y),
             matrix_and_value(lambda s: ())),
    GradCase("inc newaxis", lambda x, y: inc_subtensor(x[None, 1], y),
             matrix_and_value(lambda s: (1, s[1]))),
    GradCase("set symbolic bounds", lambda x, y: set_subtensor(x[START:STOP], y),
             matrix_and_value(lambda s: (s[0] - 2, s[1]))),
    # Writing into an advanced region (AdvancedIncSubtensor).
    GradCase("set int array", lambda x, y: set_subtensor(x[[2, 0]], y),
             matrix_and_value(lambda s: (2, s[1]))),
    GradCase("inc repeated int array", lambda x, y: inc_subtensor(x[[1, 0, 1]], y),
             matrix_and_value(lambda s: (3, s[1]))),
    GradCase("set repeated int array", lambda x, y: set_subtensor(x[[1, 0, 1]], y),
             matrix_and_value(lambda s: (3, s[1]))),
    GradCase("set repeated, broadcast", lambda x, y: set_subtensor(x[[1, 1, 0]], y),
             matrix_and_value(lambda s: (s[1],))),
    GradCase("inc repeated, broadcast", lambda x, y: inc_subtensor(x[[1, 1, 0]], row_of(y)),
             matrix_and_value(lambda s: (1, s[1]))),
    GradCase("set repeated columns, broadcast",
             lambda x, y: set_subtensor(x[:, [2, 0, -2]], column_of(y)),
             matrix_and_value(lambda s: (s[0], 1))),
    GradCase("set negative duplicates", lambda x, y: set_subtensor(x[[-1, 2]], y),
             lambda rng: [normal(rng, 3, 4), normal(rng, 2, 4)]),
    GradCase("set symbolic repeated", lambda x, y: set_subtensor(x[:, REPEATED], y),
             matrix_and_value(lambda s: (s[0], 4))),
    GradCase("inc symbolic repeated", lambda x, y: inc_subtensor(x[:, REPEATED], y),
             matrix_and_value(lambda s: (s[0], 4))),
    GradCase("inc ignoring duplicates",
             lambda x, y: inc_subtensor(x[[1, 0, 1]], y, ignore_duplicates=True),
             matrix_and_value(lambda s: (3, s[1]))),
    GradCase("inc ignoring duplicates, broadcast",
             lambda x, y: inc_subtensor(x[:, REPEATED], y, ignore_duplicates=True),
             matrix_and_value(lambda s: (4,))),
    GradCase("set broadcast int arrays", lambda x, y: set_subtensor(x[[0, 1, 1], [[2], [2]]], y),
             matrix_and_value(lambda s: (2, 3))),
    GradCase("set mask", lambda x, y: set_subtensor(x[MASK_3], y),
             lambda rng: [normal(rng, 3, 4), normal(rng, 2, 4)]),
    GradCase("inc mask, scalar value", lambda x, y: inc_subtensor(x[MASK_34], y),
             lambda rng: [normal(rng, 3, 4), normal(rng)]),
    GradCase("set symbolic mask", lambda x, y: set_subtensor(x[SYMBOLIC_MASK], y),
             lambda rng: [normal(rng, 3, 4), normal(rng, int(MASK_34.sum()))]),
    GradCase("set mask and repeated int array", lambda x, y: set_subtensor(x[MASK_3, [1, 1]], y),
             lambda rng: [normal(rng, 3, 4), normal(rng, 2)]),
    GradCase("inc boolean scalar", lambda x, y: inc_subtensor(x[True], y),
             matrix_and_value(lambda s: (1,) + s)),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=repr)
def test_gradients(case):
    check_grad_case(case)


def test_set_gradient_reaches_only_the_last_write():
    """Where set_subtensor (or ignore_duplicates) writes an element several times, only the
    last write reaches the output, so only it gets a gradient. (Theano and PyTensor give
    every occurrence the element's gradient, the sum's; we follow the function computed.)"""
    x = T.dvector("x")
    y = T.dvector("y")
    indices = [1, 1, 3, 1]
    weights = np.array([10.0, 20.0, 30.0, 40.0])
    point = [np.zeros(4), np.arange(4.0)]
    for result in (set_subtensor(x[indices], y),
                   inc_subtensor(x[indices], y, ignore_duplicates=True)):
        x_grad, y_grad = Lop(result, [x, y], T.as_tensor_variable(weights))
        x_value, y_value = evaluate([x_grad, y_grad], [x, y], point)
        expected_x = np.array([10.0, 0.0, 30.0, 0.0]) if result.owner.op.set_instead_of_inc \
            else weights
        assert_like_numpy(x_value, expected_x)
        assert_like_numpy(y_value, np.array([0.0, 0.0, 40.0, 20.0]))
    # Incrementing accumulates every occurrence.
    y_value = evaluate(Lop(inc_subtensor(x[indices], y), y, T.as_tensor_variable(weights)),
                       [x, y], point)
    assert_like_numpy(y_value, np.array([20.0, 20.0, 40.0, 20.0]))


@settings(max_examples=15, deadline=None)
@given(shapes(min_dims=2, max_dims=2, min_side=1, max_side=4), st.sampled_from(
    ["set", "inc", "inc once"]), st.data())
def test_write_gradients_with_repeated_indices_hypothesis(shape, mode, data):
    """Writes through a random integer array (repeats and negative entries likely) of a value
    broadcast along random axes: both derivatives against finite differences."""
    rows, columns = shape
    indices = data.draw(st.lists(st.integers(-rows, rows - 1), min_size=1, max_size=5))
    region = (len(indices), columns)
    y_shape = tuple(1 if data.draw(st.booleans()) else n for n in region)
    y_shape = y_shape[data.draw(st.integers(0, 2)):]

    def fun(x, y):
        y = T.specify_shape(y, tuple(1 if n == 1 else None for n in y_shape))
        return inc_subtensor(x[indices], y, set_instead_of_inc=mode == "set",
                             ignore_duplicates=mode == "inc once")

    check_grad_case(GradCase("write", fun, lambda rng: [normal(rng, rows, columns),
                                                       normal(rng, *y_shape)]),
                    seed=data.draw(st.integers(0, 1000)))


def test_last_write_mask_only_where_an_index_may_repeat():
    """Distinct constant indices need no last-write mask in the gradient graph."""
    x = T.dmatrix("x")
    y = T.dmatrix("y")

    def graph_ops(result):
        gradient = grad(result.sum(), y)
        forward = set(io_toposort([x, y], [result]))
        return [type(node.op) for node in io_toposort([x, y], [gradient])
                if node not in forward]

    distinct = graph_ops(set_subtensor(x[[2, 0]], y))
    repeated = graph_ops(set_subtensor(x[[2, 0, -1]], y))
    assert not any(issubclass(op, AdvancedIncSubtensor) for op in distinct)
    assert any(issubclass(op, AdvancedIncSubtensor) for op in repeated)


def index_op_nodes():
    """A node of each indexing op, with symbolic index inputs of every kind (slice bound,
    integer scalar, integer array, mask): (x, y, the index inputs, [(node, number of
    differentiable inputs)])."""
    x = T.dmatrix("x")
    y = T.dvector("y")
    start, row = T.lscalar("start"), T.lscalar("row")
    array, mask = T.lvector("array"), T.tensor("bool", shape=(None,))
    basic = x[start:, row]
    advanced = x[mask, array]
    nodes = [(basic.owner, 1), (advanced.owner, 1), (set_subtensor(basic, y).owner, 2),
             (inc_subtensor(basic, y).owner, 2), (set_subtensor(advanced, y).owner, 2),
             (inc_subtensor(advanced, y).owner, 2),
             (inc_subtensor(advanced, y, ignore_duplicates=True).owner, 2)]
    return x, y, [start, row, array, mask], nodes


def test_index_inputs_are_disconnected():
    x, y, (start, row, array, mask), nodes = index_op_nodes()
    for node, n_values in nodes:
        n_indices = len(node.inputs) - n_values
        assert node.op.connection_pattern(node) == [[True]] * n_values + [[False]] * n_indices
        gradients = node.op.L_op(node.inputs, node.outputs, [node.outputs[0].type()])
        assert len(gradients) == len(node.inputs)
        assert not any(is_disconnected(g) for g in gradients[:n_values])
        assert all(is_disconnected(g) for g in gradients[n_values:])
        # Nothing flows back from an output that does not lead to the cost.
        assert all(is_disconnected(g) for g in
                   node.op.L_op(node.inputs, node.outputs, [disconnected_type()]))
        # Tangents of the index inputs alone give no tangent.
        assert node.op.R_op(node.inputs, [None] * n_values + list(node.inputs[n_values:])) \
            == [None]
    cost = set_subtensor(x[start:, row], y).sum() + x[mask, array].sum()
    for index_input in (start, row, array, mask):
        with pytest.raises(DisconnectedInputError, match="does not depend on"):
            grad(cost, index_input)


def test_slice_length_is_disconnected():
    n, start = T.lscalar("n"), T.lscalar("start")
    node = SliceLength((True, False, False))(n, start).owner
    assert node.op.connection_pattern(node) == [[False], [False]]
    assert all(is_disconnected(g) for g in
               node.op.L_op(node.inputs, node.outputs, [node.outputs[0].type()]))
    assert node.op.R_op(node.inputs, [n, start]) == [None]


def test_integer_tensors_get_no_gradient_or_tangent():
    x = T.lmatrix("x")
    y = T.lvector("y")
    for result in (x[1:], x[[0, 0]], set_subtensor(x[1], y), inc_subtensor(x[[1, 1]], y)):
        node = result.owner
        cotangent = T.tensor("float64", shape=(None,) * result.type.ndim)
        assert all(is_disconnected(g) for g in
                   node.op.L_op(node.inputs, node.outputs, [cotangent]))
        assert node.op.R_op(node.inputs, [x] + [None] * (len(node.inputs) - 1)) == [None]


def assert_compatible_type(gradient, variable):
    """gradient has variable's dtype and ndim and every length variable's type knows."""
    assert gradient.type.dtype == variable.type.dtype
    assert gradient.type.ndim == variable.type.ndim
    for own, known in zip(gradient.type.shape, variable.type.shape):
        assert known is None or own == known, (gradient.type, variable.type)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gradient_and_tangent_types_match_the_inputs(dtype):
    x = T.tensor(dtype, shape=(1, None, 4), name="x")
    row = T.tensor(dtype, shape=(1, 4), name="row")
    full = T.tensor(dtype, shape=(None, None, 4), name="full")
    results = [x[0], x[:, ::-1], x[..., [1, 1]], x[np.array([True])],
               set_subtensor(x[:, 1:], row), inc_subtensor(x[0, [0, 0]], row[0]),
               set_subtensor(x[:, [1, 1]], row), inc_subtensor(full[1:], row),
               inc_subtensor(full[[0, 0]], row, ignore_duplicates=True)]
    for result in results:
        inputs = [v for v in (x, row, full) if v in result.owner.inputs]
        gradients = grad(result.sum(), inputs)
        tangents = [v.type() for v in inputs]
        tangent = Rop(result, inputs, tangents)
        for gradient, variable in zip(gradients, inputs):
            assert_compatible_type(gradient, variable)
        assert_compatible_type(tangent, result)


def test_rop_with_some_tangents_missing():
    """A write's tangent with only y's tangent writes it into zeros; with only x's, x's
    tangent with the region set to zero (setting) or left (incrementing)."""
    x = T.dmatrix("x")
    y = T.dvector("y")
    x_tangent, y_tangent = T.dmatrix("dx"), T.dvector("dy")
    values = [random_array((4, 3)), random_array((3,)), random_array((4, 3)),
              random_array((3,))]
    index = [2, 0, 2]
    for mode in ("set", "inc"):
        result = inc_subtensor(x[index], y, set_instead_of_inc=mode == "set")
        only_y = Rop(result, y, y_tangent)
        only_x = Rop(result, x, x_tangent)
        inputs = [x, y, x_tangent, y_tangent]
        expected_y = _numpy_write(np.zeros((4, 3)), index, values[3], mode)
        assert_like_numpy(evaluate(only_y, inputs, values), expected_y)
        expected_x = values[2].copy()
        if mode == "set":
            expected_x[index] = 0.0
        assert_like_numpy(evaluate(only_x, inputs, values), expected_x)
