"""C code of Split against the Python backend: every axis (negative too), empty pieces,
every layout and dtype, aliasing as the Python backend's, and
bad input: an axis out of range, the wrong number of sizes, negative sizes, sizes that do
not add up."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.graph.ccode import CNames
from sympile.tensor.basic import Split, split
from tests.link.c.utils import (
    LAYOUTS,
    PYTHON_MODE,
    assert_clean_under_address_sanitizer,
    compare_backends,
    compile_c,
    requires_compiler,
)

pytestmark = requires_compiler

x = T.dtensor3("x")
axis = T.lscalar("axis")
sizes = T.lvector("sizes")
INPUTS = [x, axis, sizes]


def _pieces():
    return split(x, sizes, 3, axis)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_axis_and_empty_pieces(layout):
    value = LAYOUTS[layout](np.random.default_rng(0).standard_normal((4, 5, 6)))
    for axis_value, size_values in [(0, [1, 0, 3]), (1, [2, 2, 1]), (2, [0, 6, 0]),
                                    (-1, [3, 1, 2]), (-3, [4, 0, 0])]:
        compare_backends(_pieces(), INPUTS, [value, np.int64(axis_value), np.array(size_values)])


@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "complex64"])
def test_every_dtype_and_int32_sizes(dtype):
    matrix, small_sizes = T.tensor(dtype=dtype, shape=(None, None)), T.ivector("small")
    pieces = split(matrix, small_sizes, 2, 1)
    compare_backends(pieces, [matrix, small_sizes],
                     [(np.arange(12).reshape(3, 4) % 3).astype(dtype), np.array([1, 3], "int32")])


def test_aliasing_as_the_python_backend():
    # The pieces are views of x inside the function; as on the Python backend, the Function
    # returns copies of outputs that alias an input.
    value = np.arange(24.0).reshape(2, 3, 4)
    for function in (compile_c(INPUTS, _pieces()),
                     sympile.function(INPUTS, _pieces(), mode=PYTHON_MODE)):
        pieces = function(value, np.int64(2), np.array([1, 2, 1]))
        assert not any(np.shares_memory(piece, value) for piece in pieces)
        np.testing.assert_array_equal(pieces[1], value[:, :, 1:3])


@pytest.mark.parametrize("axis_value, size_values", [(3, [2, 1, 1]), (-4, [2, 1, 1]),
                                                     (0, [2, 1]), (0, [3, -1, 2]),
                                                     (1, [1, 1, 1])])
def test_bad_input(axis_value, size_values):
    messages = []
    for function in (compile_c(INPUTS, _pieces()),
                     sympile.function(INPUTS, _pieces(), mode=PYTHON_MODE)):
        with pytest.raises(ValueError) as error:
            function(np.ones((4, 5, 6)), np.int64(axis_value), np.array(size_values))
        messages.append(str(error.value).splitlines()[0])
    assert messages[0] == messages[1]


def test_uint64_sizes_give_no_c_code():
    node = Split(2).make_node(x, axis, T.tensor(dtype="uint64", shape=(None,)))
    assert node.op.c_code(node, CNames(("x", "a", "s"), ("p", "q"), "")) is None


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sympile
    import sympile.tensor as T
    from sympile.compile.mode import Mode
    from sympile.graph.rewriting.db import RewriteQuery
    from sympile.tensor.basic import split

    mode = Mode(RewriteQuery(include=("fast_run",)), backend="c")
    x, axis, sizes = T.dtensor3("x"), T.lscalar("axis"), T.lvector("sizes")
    f = sympile.function([x, axis, sizes], [p * 2.0 for p in split(x, sizes, 3, axis)],
                         mode=mode)
    assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
    for shape, axis_value, size_values in [((4, 5, 6), 1, [2, 0, 3]), ((0, 3, 2), 0, [0, 0, 0]),
                                           ((2, 3, 5), -1, [5, 0, 0])]:
        f(np.ones(shape), axis_value, np.array(size_values))
        f(np.asfortranarray(np.ones(shape)), axis_value, np.array(size_values))
    for bad in ([1, 1, 1], [9, -4, 0]):
        try:
            f(np.ones((4, 5, 6)), 0, np.array(bad))
        except ValueError:
            pass
    print("clean")
""")


@pytest.mark.slow
def test_split_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)
