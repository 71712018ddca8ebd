"""C code of general advanced indexing (sympile.tensor.subtensor.advanced_c) against the Python
backend: integer arrays on several axes, broadcast together, boolean masks, mixed with
integers, slices,
newaxis and Ellipsis (numpy's placement of the broadcast axes), negative entries, duplicate
entries (inc accumulates, set keeps the last), broadcast values, every memory layout, random
shapes, in-place writes, and bad input: out-of-range entries, arrays that do not broadcast,
zero slice steps, masks of the wrong shape, values of the wrong shape; 0-d masks and
increments that ignore duplicates (numpy's x[index] += y)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.graph.ccode import CNames
from sympile.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedSubtensor,
    inc_subtensor,
    set_subtensor,
)
from tests.link.c.utils import (
    LAYOUTS,
    PYTHON_MODE,
    assert_clean_under_address_sanitizer,
    compare_backends,
    compile_c,
    requires_compiler,
)

pytestmark = requires_compiler

x = T.tensor(dtype="float64", shape=(None, None, None))
rows = T.lvector("rows")
grid = T.imatrix("grid")
scalar = T.lscalar("scalar")
step = T.lscalar("step")
value = T.dvector("value")
INPUTS = [x, rows, grid, scalar, step, value]

# Each reads x of shape (4, 5, 6) with rows (4,), grid (2, 4) and scalar.
READS = {
    "two arrays, adjacent": lambda: x[rows, grid],
    "two arrays after a slice": lambda: x[:, rows, grid],
    "arrays apart (broadcast axes in front)": lambda: x[rows, :, grid],
    "array, slice, newaxis": lambda: x[rows, 1:4, None],
    "newaxis, integer, array, negative step": lambda: x[None, 1, rows, ::-2],
    "ellipsis then array": lambda: x[..., rows],
    "symbolic integer apart from the array": lambda: x[scalar, :, rows],
    "broadcast column and row": lambda: x[rows[:, None], grid[0][None, :]],
    "array, ellipsis, array": lambda: x[rows, ..., grid],
    "symbolic slice parts": lambda: x[rows, scalar:, ::step],
    "three arrays": lambda: x[rows, grid, rows],
    "0-d array": lambda: x[:, rows[1]],
}


def _point(layout: str = "c", dtype: str = "float64"):
    rng = np.random.default_rng(0)
    x_value = LAYOUTS[layout](rng.standard_normal((4, 5, 6)).astype(dtype))
    rows_value = np.array([0, 3, -1, 3])
    grid_value = np.array([[1, 2, 0, 4], [-5, 0, 0, 1]], dtype="int32")
    return [x_value, rows_value, grid_value, np.int64(-2), np.int64(-1),
            rng.standard_normal(6)]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_reads(layout):
    compare_backends([build() for build in READS.values()], INPUTS, _point(layout))


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint16", "bool", "complex128"])
def test_reads_of_every_dtype(dtype):
    typed = T.tensor(dtype=dtype, shape=(None, None, None))
    point = _point()
    point[0] = (point[0] * 3).astype(dtype)
    compare_backends([typed[rows, grid], typed[rows, 1:3, grid], typed[..., rows]],
                     [typed, *INPUTS[1:]], point)


WRITES = {
    "inc, two arrays, duplicates": lambda: inc_subtensor(x[rows, grid], 1.5),
    "set, after a slice": lambda: set_subtensor(x[:, rows, grid], 2.0),
    "inc, arrays apart, a vector broadcast": lambda: inc_subtensor(x[rows, :, grid], value[:5]),
    "inc, integer and slice": lambda: inc_subtensor(x[scalar, rows, 1:3], value[:2]),
    "set, ellipsis, the last duplicate wins": lambda: set_subtensor(x[..., rows], value[:4]),
    "inc, negative step": lambda: inc_subtensor(x[rows, ::-2, grid[0]], value[:3]),
    "inc, the region's own shape": lambda: inc_subtensor(
        x[rows, grid], x[rows, grid] * 2.0),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_writes(layout):
    compare_backends([build() for build in WRITES.values()], INPUTS, _point(layout))


def test_in_place_write_of_an_intermediate():
    # x * 1.5 is the function's own, so FAST_RUN writes into it in place.
    output = inc_subtensor((x * 1.5)[rows, :, grid], value[:5])
    function = compile_c(INPUTS, output)
    assert any(node.op.destroy_map for node in function.maker.fgraph.toposort()
               if isinstance(node.op, AdvancedIncSubtensor))
    compare_backends(output, INPUTS, _point("f"))


def test_a_read_is_a_new_array_and_a_write_leaves_x_untouched():
    function = compile_c(INPUTS, [x[rows, grid], set_subtensor(x[rows, grid], 0.0)])
    point = _point()
    original = point[0].copy()
    read, written = function(*point)
    assert not np.shares_memory(read, point[0]) and not np.shares_memory(written, point[0])
    np.testing.assert_array_equal(point[0], original)


def _errors(outputs, values):
    """The first line of the error each backend raises (None if none)."""
    messages = []
    for function in (compile_c(INPUTS, outputs),
                     sympile.function(INPUTS, outputs, mode=PYTHON_MODE,
                                      on_unused_input="ignore")):
        try:
            function(*[np.copy(v) for v in values])
            messages.append(None)
        except (IndexError, ValueError) as error:
            messages.append((type(error), str(error).splitlines()[0]))
    return messages


@pytest.mark.parametrize("build", [
    lambda: inc_subtensor(x[rows, grid], 1.0), lambda: set_subtensor(x[scalar, :, rows], 1.0),
    lambda: x[rows, grid], lambda: x[scalar, :, rows]])
@pytest.mark.parametrize("bad", ["row", "negative row", "grid", "scalar"])
def test_out_of_range_entries_are_index_errors(build, bad):
    point = _point()
    if bad == "row":
        point[1] = np.array([0, 4, 1, 1])
    elif bad == "negative row":
        point[1] = np.array([0, -5, 1, 1])
    elif bad == "grid":
        point[2] = np.array([[1, 2, 0, 4], [7, 0, -9, 1]], dtype="int32")
    else:
        point[3] = np.int64(4)
    c_error, python_error = _errors(build(), point)
    if python_error is None:
        assert c_error is None
        return
    assert c_error == python_error
    assert c_error[0] is IndexError and "out of bounds" in c_error[1]
    assert c_error[1].startswith("Advanced")


def test_arrays_that_do_not_broadcast():
    point = _point()
    point[1] = np.arange(3)
    for output in (x[rows, grid], inc_subtensor(x[rows, grid], 1.0)):
        c_error, python_error = _errors(output, point)
        assert c_error[0] is python_error[0] is IndexError
        assert "shape mismatch" in c_error[1] and "(3,) (2,4)" in c_error[1]


def test_entries_are_not_checked_when_nothing_is_selected():
    point = _point()
    point[1] = np.array([9])
    point[2] = np.zeros((2, 0), dtype="int32")
    compare_backends([x[rows, grid], inc_subtensor(x[rows, grid], 1.0)], INPUTS, point)


def test_zero_slice_step_and_wrong_value_shape():
    point = _point()
    point[4] = np.int64(0)
    c_error, python_error = _errors([x[rows, scalar:, ::step]], point)
    assert c_error == python_error and c_error[0] is ValueError
    c_error, python_error = _errors([inc_subtensor(x[rows, :, grid], value)], _point())
    assert c_error == python_error and c_error[0] is ValueError


def test_empty_inputs():
    for shape in ((0, 5, 6), (4, 0, 6), (4, 5, 0)):
        point = _point()
        point[0] = np.ones(shape)
        point[1] = np.zeros(4, "int64")
        point[2] = np.zeros((2, 4), "int32")
        outputs = [x[rows[:0], :, 1:], x[..., rows[:0]], inc_subtensor(x[:, rows[:0]], 1.0)]
        if shape[1]:
            outputs += [x[:, grid, 1:], inc_subtensor(x[:, grid], 1.0)]
        compare_backends(outputs, INPUTS, point)


@settings(max_examples=40, deadline=None)
@given(x_shape=st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6)),
       index_shape=st.lists(st.integers(1, 4), min_size=0, max_size=2),
       seed=st.integers(0, 2**32 - 1), layout=st.sampled_from(list(LAYOUTS)))
def test_random_shapes(x_shape, index_shape, seed, layout):
    rng = np.random.default_rng(seed)
    point = _point()
    point[0] = LAYOUTS[layout](rng.standard_normal(x_shape))
    shortest = min(x_shape)
    point[1] = rng.integers(-shortest, shortest, 4)
    point[2] = rng.integers(-shortest, shortest, (2, 4)).astype("int32")
    point[3] = np.int64(rng.integers(-x_shape[0], x_shape[0]))
    outputs = [x[rows, grid], x[:, rows, grid], x[rows, :, grid], x[scalar, :, rows],
               inc_subtensor(x[rows, :, grid], 1.0), set_subtensor(x[:, grid, rows], -1.0)]
    compare_backends(outputs, INPUTS, point)


mask = T.tensor(dtype="bool", shape=(None,))
mask_2d = T.tensor(dtype="bool", shape=(None, None))
MASK_OUTPUTS = [x[mask], x[:, mask_2d], x[mask, :, rows[:3]], x[mask, 1:], x[None, mask, -1],
                inc_subtensor(x[mask], 1.0), set_subtensor(x[:, mask_2d], value[0]),
                inc_subtensor(x[mask, 0, rows[:3]], 1.0)]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_masks(layout):
    rng = np.random.default_rng(3)
    point = [LAYOUTS[layout](rng.standard_normal((4, 5, 6))),
             np.array([0, 1, -1, 2]), np.array([True, False, True, True]),
             LAYOUTS[layout](rng.integers(0, 2, (5, 6)).astype(bool)), np.array([0.5])]
    inputs = [x, rows, mask, mask_2d, value]
    compare_backends(MASK_OUTPUTS, inputs, point)
    # Nothing selected (the masks with an array beside them would not broadcast).
    point[2], point[3] = np.zeros(4, bool), np.zeros((5, 6), bool)
    compare_backends([MASK_OUTPUTS[i] for i in (0, 1, 3, 4, 5, 6)], inputs, point)


@pytest.mark.parametrize("output", [x[mask], inc_subtensor(x[mask], 1.0), x[:, mask_2d],
                                    set_subtensor(x[:, mask_2d], 1.0)])
def test_masks_of_the_wrong_shape(output):
    inputs = [x, mask, mask_2d]
    point = [np.ones((4, 5, 6)), np.ones(3, bool), np.ones((5, 7), bool)]
    messages = []
    for function in (compile_c(inputs, output),
                     sympile.function(inputs, output, mode=PYTHON_MODE,
                                      on_unused_input="ignore")):
        with pytest.raises(IndexError) as error:
            function(*point)
        messages.append(str(error.value).splitlines()[0])
    assert messages[0] == messages[1]


@pytest.mark.parametrize("selected", [True, False])
def test_0d_masks(selected):
    flag = T.tensor(dtype="bool", shape=())
    outputs = [x[flag], x[:, flag, 1], inc_subtensor(x[flag], 1.0),
               set_subtensor(x[1, flag], value)]
    if selected:
        # A False flag selects a length-0 axis, which would not broadcast with rows.
        outputs.append(x[flag, rows])
    compare_backends(outputs, [x, flag, rows, value],
                     [_point()[0], np.bool_(selected), np.array([0, 2, 0, -1]), np.arange(6.0)])


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_increments_ignoring_duplicates(layout):
    # numpy's x[index] += y: a repeated element gets the increment of its last occurrence.
    outputs = [inc_subtensor(x[rows, 1:3], value, ignore_duplicates=True),
               inc_subtensor(x[:, rows, rows], 2.0, ignore_duplicates=True),
               inc_subtensor((x * 2.0)[rows, :, grid], value[:5], ignore_duplicates=True)]
    compare_backends(outputs, INPUTS, _point(layout))


def test_uint64_arrays_give_no_c_code():
    from sympile.tensor.subtensor import ARRAY
    node = AdvancedSubtensor([ARRAY, ARRAY]).make_node(
        x, T.tensor(dtype="uint64", shape=(None,)), rows)
    assert node.op.c_code(node, CNames(("x", "a", "b"), ("out",), "")) is None


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sympile
    import sympile.tensor as T
    from sympile.compile.mode import Mode
    from sympile.graph.rewriting.db import RewriteQuery
    from sympile.tensor.subtensor import inc_subtensor, set_subtensor

    mode = Mode(RewriteQuery(include=("fast_run",)), backend="c")
    x = T.tensor3("x")
    rows, grid = T.lvector("rows"), T.imatrix("grid")
    mask = T.tensor(dtype="bool", shape=(None, None))
    outputs = [x[rows, grid], x[rows, :, grid], x[None, 1, rows, ::-2], x[0, mask],
               inc_subtensor(x[rows, :, grid], 1.0), set_subtensor(x[..., rows], 2.0)]
    f = sympile.function([x, rows, grid, mask], outputs, mode=mode)
    assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
    f(np.ones((4, 5, 0)), np.zeros(0, "int64"), np.zeros((2, 0), "int32"),
      np.zeros((5, 0), bool))
    for shape in [(4, 5, 6), (3, 7, 2)]:
        value = np.ones(shape)
        mask_value = np.arange(shape[1] * shape[2]).reshape(shape[1:]) % 3 == 0
        f(value, np.array([0, 1, -1]), np.array([[1], [-2]], dtype="int32"), mask_value)
        f(np.asfortranarray(value), np.zeros(0, "int64"), np.zeros((2, 0), "int32"),
          mask_value.T.copy().T)
        for bad in [(np.array([0, 9, -1]), mask_value), (np.array([0]), mask_value[1:])]:
            try:
                f(value, bad[0], np.array([[1], [-2]], dtype="int32"), bad[1])
            except IndexError:
                pass
    print("clean")
""")


@pytest.mark.slow
def test_advanced_index_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)
