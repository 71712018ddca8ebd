"""C code of Join against the Python backend: every axis (constant, negative, computed),
mixed dtypes, C/F/strided/negative-stride and empty inputs, a reused output buffer, and
perform's errors."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.graph.ccode import CNames
from sympile.tensor.basic import Join, concatenate, join
from tests.link.c.utils import (
    LAYOUTS,
    PYTHON_MODE,
    assert_clean_under_address_sanitizer,
    compare_backends,
    compile_c,
    requires_compiler,
)

pytestmark = requires_compiler


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex128"])
def test_join_on_every_axis(layout, dtype):
    a, b = (T.tensor(dtype=dtype, shape=(None, None, None), name=name) for name in "ab")
    axis = T.lscalar("axis")
    outputs = [join(0, a, b), join(1, a, b, a), join(-1, b, a), join(axis, a, b)]
    function = compile_c([a, b, axis], outputs)
    assert function._vm.fallback_nodes == []
    first = LAYOUTS[layout](np.arange(24).reshape(2, 3, 4).astype(dtype))
    second = LAYOUTS[layout]((np.arange(24).reshape(2, 3, 4) * 7 % 5).astype(dtype))
    for axis_value in (0, 2, -2):
        results = compare_backends(outputs, [a, b, axis], [first, second, np.int64(axis_value)])
        for result in results:
            assert result.flags.c_contiguous
            assert not np.shares_memory(result, first)


def test_join_of_mixed_dtypes_converts_each():
    a, b, c = T.fmatrix("a"), T.lmatrix("b"), T.tensor(dtype="uint8", shape=(None, None))
    output = join(1, a, b, c)
    assert output.type.dtype == "float64"
    compare_backends(output, [a, b, c],
                     [np.ones((2, 3), "float32") / 3, np.arange(4).reshape(2, 2) - 9,
                      np.full((2, 1), 250, "uint8")])


def test_join_of_empty_tensors_and_changing_shapes():
    a, b = T.dmatrix("a"), T.dmatrix("b")
    axis = T.iscalar("axis")
    outputs = [join(axis, a, b), concatenate([a, b], axis=None)]
    function = compile_c([a, b, axis], outputs)
    python_function = sympile.function([a, b, axis], outputs, mode=PYTHON_MODE)
    assert function._vm.fallback_nodes == []
    cases = [((0, 3), (2, 3), 0), ((2, 0), (2, 0), 0), ((2, 0), (2, 3), 1),
             ((0, 3), (0, 3), 1), ((3, 4), (1, 4), 0), ((3, 4), (3, 5), -1)]
    for shape_a, shape_b, axis_value in cases * 2:
        values = [np.arange(np.prod(shape_a), dtype="float64").reshape(shape_a),
                  -np.arange(np.prod(shape_b), dtype="float64").reshape(shape_b),
                  np.int32(axis_value)]
        for actual, expected in zip(function(*values), python_function(*values)):
            np.testing.assert_array_equal(actual, expected)
            assert actual.shape == expected.shape


def test_join_errors_are_perform_errors():
    a, b = T.dmatrix("a"), T.dmatrix("b")
    axis = T.lscalar("axis")
    function = compile_c([a, b, axis], join(axis, a, b))
    python_function = sympile.function([a, b, axis], join(axis, a, b), mode=PYTHON_MODE)
    assert function._vm.fallback_nodes == []
    shapes_message = (r"cannot join arrays of shapes \(2, 3\), \(4, 5\) along axis 0: their "
                      r"other lengths differ")
    bad = [((np.zeros((2, 3)), np.zeros((2, 3)), np.int64(2)),
            "axis 2 is out of bounds for 2 dimensions"),
           ((np.zeros((2, 3)), np.zeros((2, 3)), np.int64(-3)), "axis -3 is out of bounds"),
           ((np.zeros((2, 3)), np.zeros((4, 5)), np.int64(0)), shapes_message),
           ((np.zeros((2, 3)), np.zeros((4, 5)), np.int64(-1)), "along axis 1")]
    for values, message in bad:
        for compiled in (function, python_function):
            with pytest.raises(ValueError, match=message):
                compiled(*values)


def test_join_of_vectors_of_one_tensor():
    vector = T.ivector("v")
    compare_backends([join(0, vector), join(0, vector, vector, vector)], [vector],
                     [np.arange(5, dtype="int32")[::-2]])


def test_join_with_a_uint64_axis_gives_no_c_code():
    node = Join().make_node(T.scalar("axis", dtype="uint64"), T.dvector("a"))
    assert node.op.c_code(node, CNames(inputs=("axis", "a"), outputs=("out",), fail="")) \
        is None


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import pytest
    import sympile.tensor as T
    from sympile.tensor.basic import join
    from tests.link.c.utils import compile_c

    a, b, axis = T.dmatrix("a"), T.fmatrix("b"), T.lscalar("axis")
    f = compile_c([a, b, axis], [join(axis, a, b), join(0, a, a)])
    assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
    for shape_a, shape_b, axis_value in [((2, 3), (4, 3), 0), ((2, 0), (2, 5), 1),
                                         ((0, 3), (0, 3), 0)]:
        f(np.ones(shape_a), np.asfortranarray(np.ones(shape_b, "float32")), axis_value)
    for bad_axis in (0, 5):
        with pytest.raises(ValueError):
            f(np.ones((2, 3)), np.ones((2, 4), "float32"), np.int64(bad_axis))
    print("clean")
""")


@pytest.mark.slow
def test_join_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)
