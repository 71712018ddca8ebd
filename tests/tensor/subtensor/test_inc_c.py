"""C code of SliceLength and of the basic indexed write IncSubtensor (set_subtensor,
inc_subtensor and the inplace form a gradient uses) against the Python backend and Python's
slice.indices: values, dtypes, aliasing, C/F/strided/negative-stride/empty inputs, broadcast
values, and perform's errors."""

from __future__ import annotations

import itertools
import textwrap

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.graph.ccode import CNames
from sympile.tensor.subtensor import IncSubtensor, SliceLength, inc_subtensor, set_subtensor
from tests.link.c.utils import (
    LAYOUTS,
    PYTHON_MODE,
    assert_clean_under_address_sanitizer,
    compare_backends,
    compile_c,
    requires_compiler,
)

pytestmark = requires_compiler

BIG = np.iinfo("int64").max
SMALL = np.iinfo("int64").min


def _op_names(function) -> set[str]:
    return {type(node.op).__name__ for node in function._vm.nodes}


def test_slice_length_matches_python_slice_indices():
    length, start, stop, step = (T.lscalar(name) for name in ("n", "start", "stop", "step"))
    function = compile_c([length, start, stop, step],
                         SliceLength((True, True, True))(length, start, stop, step))
    assert function._vm.fallback_nodes == []
    parts = (0, 1, 2, 3, 5, 7, -1, -2, -3, -5, -8, BIG, SMALL)
    steps = (1, 2, 3, -1, -2, -3, BIG, SMALL, SMALL + 1)
    for n, first, last, stride in itertools.product((0, 1, 2, 5, 7, BIG), parts, parts,
                                                    steps):
        expected = len(range(*slice(first, last, stride).indices(n)))
        actual = function(np.int64(n), np.int64(first), np.int64(last), np.int64(stride))
        assert actual == expected, (n, first, last, stride)
        assert actual.dtype == "int64" and actual.shape == ()


@pytest.mark.parametrize("given", list(itertools.product((False, True), repeat=3)))
def test_slice_length_with_none_parts_and_narrow_dtypes(given):
    length = T.iscalar("n")
    parts = [T.scalar(name, dtype=dtype) for name, dtype, used in
             zip(("start", "stop", "step"), ("int8", "uint16", "int32"), given) if used]
    output = SliceLength(given)(length, *parts)
    function = compile_c([length, *parts], output)
    python_function = sympile.function([length, *parts], output, mode=PYTHON_MODE)
    assert function._vm.fallback_nodes == []
    for n in (0, 3, 10):
        for values in itertools.product((-4, -1, 0, 2, 9), (0, 1, 4, 12), (1, 3, -1, -2)):
            arguments = [np.array(v, dtype=part.type.dtype) for part, v in
                         zip(parts, (v for v, used in zip(values, given) if used))]
            assert function(np.int32(n), *arguments) == python_function(np.int32(n),
                                                                        *arguments)


def test_slice_length_errors_are_perform_errors():
    length, step = T.lscalar("n"), T.lscalar("step")
    function = compile_c([length, step], SliceLength((False, False, True))(length, step))
    python_function = sympile.function([length, step],
                                       SliceLength((False, False, True))(length, step),
                                       mode=PYTHON_MODE)
    assert function._vm.fallback_nodes == []
    with pytest.raises(ValueError, match=r"SliceLength.*slice step cannot be zero"):
        function(np.int64(4), np.int64(0))
    with pytest.raises(ValueError, match="length should not be negative"):
        function(np.int64(-1), np.int64(1))
    with pytest.raises(ValueError, match="length should not be negative"):
        python_function(np.int64(-1), np.int64(1))


def test_slice_length_of_uint64_gives_no_c_code():
    node = SliceLength((False, False, False)).make_node(T.scalar("n", dtype="uint64"))
    assert node.op.c_code(node, CNames(inputs=("n",), outputs=("out",), fail="")) is None


def _writes(x, y, index):
    return [inc_subtensor(x[index], y), set_subtensor(x[index], y)]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8", "bool"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_increment_and_set_of_slices_and_integers(dtype, layout):
    x = T.tensor(dtype=dtype, shape=(None, None, None))
    start, stop, row = T.lscalar("start"), T.lscalar("stop"), T.iscalar("row")
    y_row, y_block = T.tensor(dtype=dtype, shape=(None,)), T.tensor(dtype=dtype,
                                                                    shape=(None, None, None))
    y_scalar = T.tensor(dtype=dtype, shape=())
    outputs = (_writes(x, y_row, (row, 1)) + _writes(x, y_block, (slice(start, stop), slice(None),
                                                                  slice(None, None, -2)))
               + _writes(x, y_scalar, (slice(None), -1, slice(1, None)))
               + _writes(x, y_row, (None, 0, 2)))
    value = LAYOUTS[layout](np.arange(60).reshape(3, 4, 5).astype(dtype))
    rng = np.random.default_rng(0)
    for first, last, index in ((0, 2, 1), (-2, None, -3), (2, 1, 0)):
        count = len(range(*slice(first, last).indices(3)))
        arguments = [value, np.int64(first),
                     np.int64(BIG if last is None else last), np.int32(index),
                     LAYOUTS[layout](rng.integers(0, 9, 5).astype(dtype)),
                     LAYOUTS[layout](rng.integers(0, 9, (count, 4, 3)).astype(dtype)),
                     np.array(3, dtype=dtype)]
        results = compare_backends(outputs, [x, start, stop, row, y_row, y_block, y_scalar],
                                   arguments)
        assert not any(np.shares_memory(result, value) for result in results)


def test_broadcast_values_and_empty_regions():
    x = T.dmatrix("x")
    column = T.tensor(dtype="float64", shape=(None, 1))
    row = T.tensor(dtype="float64", shape=(1, None))
    start = T.lscalar("start")
    outputs = [inc_subtensor(x[start:], column), set_subtensor(x[:, start:], row),
               inc_subtensor(x[start:, start:], np.array(2.0))]
    value = np.arange(12.0).reshape(3, 4)
    for first in (0, 1, 3, 7, -1):
        rows = len(range(*slice(first, None).indices(3)))
        columns = len(range(*slice(first, None).indices(4)))
        compare_backends(outputs, [x, column, row, start],
                         [value, np.arange(rows, dtype="float64")[:, None],
                          np.arange(columns, dtype="float64")[None, :], np.int64(first)])
    empty = np.zeros((0, 4))
    compare_backends(outputs, [x, column, row, start],
                     [empty, np.zeros((0, 1)), np.ones((1, 4)), np.int64(0)])


def test_errors_are_perform_errors_and_leave_inputs_alone():
    x, y, index = T.dmatrix("x"), T.dvector("y"), T.lscalar("i")
    outputs = [inc_subtensor(x[index], y), set_subtensor(x[1:, ::index], y)]
    for output in outputs:
        function = compile_c([x, y, index], output)
        python_function = sympile.function([x, y, index], output, mode=PYTHON_MODE)
        assert function._vm.fallback_nodes == []
        value = np.arange(12.0).reshape(3, 4)
        broadcast_message = (r"a value of shape \(3,\) cannot be broadcast to the indexed "
                             r"region of shape")
        length_one_message = (r"the value has shape \(1,\) and the indexed region \(4,\): axis "
                              r"0 of the value has length 1 at run time")
        bad = [(np.ones(4), np.int64(5), IndexError, "out of bounds for axis 0 with size 3"),
               (np.ones(3), np.int64(1), ValueError, broadcast_message),
               (np.ones(1), np.int64(1), ValueError, length_one_message)]
        if output is outputs[1]:
            bad[0] = (np.ones(4), np.int64(0), ValueError, "slice step cannot be zero")
            bad[2] = (np.ones(1), np.int64(1), ValueError,
                      r"the value has shape \(1,\) and the indexed region \(2, 4\)")
        for y_value, index_value, error, message in bad:
            for compiled in (function, python_function):
                with pytest.raises(error, match=message):
                    compiled(value, y_value, index_value)
        np.testing.assert_array_equal(value, np.arange(12.0).reshape(3, 4))


def test_inplace_form_writes_over_an_intermediate():
    x, y = T.dvector("x"), T.dvector("y")
    for output in (set_subtensor((x + 1)[::-2], y), inc_subtensor((x + 1)[2], y[0])):
        function = compile_c([x, y], output)
        assert "IncSubtensorInplace" in _op_names(function)
        assert function._vm.fallback_nodes == []
        compare_backends(output, [x, y], [np.arange(6.0), np.arange(3.0) + 10])


def test_gradient_of_rows_and_slices_runs_c():
    x = T.dmatrix("x")
    index = T.lscalar("i")
    cost = (x[index] ** 2).sum() + (x[1:3, ::-1] * 3).sum()
    gradient = sympile.grad(cost, x)
    function = compile_c([x, index], gradient)
    assert {"IncSubtensor", "IncSubtensorInplace"} & _op_names(function)
    assert function._vm.fallback_nodes == []
    compare_backends(gradient, [x, index], [np.arange(12.0).reshape(4, 3), np.int64(-1)])


def test_increment_of_float16_gives_no_c_code():
    x, y = T.tensor(dtype="float16", shape=(None,)), T.tensor(dtype="float16", shape=())
    node = IncSubtensor((1,)).make_node(x, y)
    assert node.op.c_code(node, CNames(inputs=("x", "y"), outputs=("out",), fail="")) is None


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import pytest
    import sympile.tensor as T
    from sympile.tensor.subtensor import SliceLength, inc_subtensor, set_subtensor
    from tests.link.c.utils import compile_c

    x, y, i = T.dmatrix("x"), T.dvector("y"), T.lscalar("i")
    n, start, step = T.lscalar("n"), T.lscalar("start"), T.lscalar("step")
    outputs = [inc_subtensor(x[i], y), set_subtensor((x * 2)[1:, ::-1][:, i], y[:2]),
               SliceLength((True, False, True))(n, start, step)]
    f = compile_c([x, y, i, n, start, step], outputs)
    assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
    for shape, index in [((3, 4), 0), ((3, 4), -1), ((3, 2), 1)]:
        f(np.ones(shape), np.ones(shape[1] if index != 1 else 2), np.int64(index),
          np.int64(5), np.int64(-9), np.int64(-2))
    for bad in [(np.ones((3, 4)), np.ones(4), np.int64(9), np.int64(5), np.int64(0),
                 np.int64(1)),
                (np.ones((3, 4)), np.ones(3), np.int64(0), np.int64(5), np.int64(0),
                 np.int64(1)),
                (np.ones((3, 4)), np.ones(4), np.int64(0), np.int64(5), np.int64(0),
                 np.int64(0))]:
        with pytest.raises((IndexError, ValueError)):
            f(*bad)
    print("clean")
""")


@pytest.mark.slow
def test_writes_and_slice_length_are_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)


def _outcome(function, arguments):
    """The function's results, or the type and message of the error it raised."""
    try:
        return function(*arguments)
    except (IndexError, ValueError) as error:
        return type(error), str(error).split("\n")[0]


def test_random_symbolic_indices_agree_with_the_python_backend():
    x = T.tensor3("x")
    start, stop, step, row, column_step = (T.lscalar(name) for name in
                                           ("start", "stop", "step", "row", "column_step"))
    y = T.tensor(dtype="float64", shape=(None, None))
    index = (slice(start, stop, step), row, slice(None, None, column_step))
    outputs = [inc_subtensor(x[index], y), set_subtensor(x[index], y)]
    inputs = [x, y, start, stop, step, row, column_step]
    function = compile_c(inputs, outputs)
    python_function = sympile.function(inputs, outputs, mode=PYTHON_MODE)
    assert function._vm.fallback_nodes == []
    rng = np.random.default_rng(1)
    for _ in range(300):
        shape = (int(rng.integers(0, 6)), int(rng.integers(1, 6)), int(rng.integers(0, 6)))
        value = LAYOUTS[rng.choice(list(LAYOUTS))](rng.standard_normal(shape))
        # Mostly in range; a row out of range and a zero step now and then.
        parts = [int(part) for part in rng.integers(-7, 8, 5)]
        parts[3] = int(rng.integers(-shape[1] - 1, shape[1] + 1))
        try:
            region = value[slice(*parts[:3]), parts[3], ::parts[4]].shape
        except (IndexError, ValueError):
            region = (2, 2)
        # Mostly a value of the region's shape; sometimes a wrong one.
        if rng.random() < 0.2:
            region = tuple(int(n) for n in rng.integers(0, 4, 2))
        arguments = [value, rng.standard_normal(region)] + [np.int64(p) for p in parts]
        actual, expected = _outcome(function, arguments), _outcome(python_function, arguments)
        if isinstance(expected, tuple):
            assert actual == expected
        else:
            for actual_value, expected_value in zip(actual, expected):
                np.testing.assert_array_equal(actual_value, expected_value)
