"""Tests of sympile.tensor.subtensor: indexing, set/inc_subtensor and take, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.tensor.subtensor import (
    ARRAY, MASK, SCALAR, AdvancedIncSubtensor, AdvancedSubtensor, IncSubtensor, IndexSlice,
    SliceLength, Subtensor, getitem, inc_subtensor, set_subtensor, take,
)
from tests.utils import assert_like_numpy, check_infer_shape, evaluate, shapes

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


def test_take_errors():
    x = T.dmatrix("x")
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
