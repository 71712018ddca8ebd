"""C code of CumOp (cumsum / cumprod) against the Python backend: every axis and the
flattened input, numpy's accumulation dtypes, exact float agreement (a sequential
accumulate), integer wrap-around, C/F/strided/negative-stride, 0-d and empty inputs."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.graph.ccode import CNames
from sympile.tensor.extra_ops import CumOp, cumprod, cumsum
from tests.link.c.utils import (
    LAYOUTS,
    PYTHON_MODE,
    assert_clean_under_address_sanitizer,
    compare_backends,
    compile_c,
    requires_compiler,
)

pytestmark = requires_compiler


def _outputs(x):
    return [function(x, axis) for function in (cumsum, cumprod)
            for axis in (None, 0, 1, 2, -1)]


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "int64", "uint8", "bool"])
def test_every_axis_and_the_flattened_input(layout, dtype):
    x = T.tensor(dtype=dtype, shape=(None, None, None))
    outputs = _outputs(x)
    function = compile_c([x], outputs)
    python_function = sympile.function([x], outputs, mode=PYTHON_MODE)
    assert function._vm.fallback_nodes == []
    rng = np.random.default_rng(0)
    if dtype.startswith("float"):
        value = rng.standard_normal((3, 4, 5)).astype(dtype)
    else:
        value = rng.integers(0, 3, (3, 4, 5)).astype(dtype)
    value = LAYOUTS[layout](value)
    for actual, expected in zip(function(value), python_function(value)):
        # Both accumulate in order, so even float32 agrees to the bit.
        np.testing.assert_array_equal(actual, expected)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape


def test_integers_wrap_as_numpy():
    x = T.lvector("x")
    big = np.array([np.iinfo("int64").max, 1, 2, np.iinfo("int64").min, -5], dtype="int64")
    compare_backends([cumsum(x), cumprod(x)], [x], [big])
    small = T.tensor(dtype="uint8", shape=(None,))
    compare_backends([cumsum(small), cumprod(small)], [small],
                     [np.array([255, 255, 7, 200], dtype="uint8")])


def test_zero_dimensional_empty_and_nonfinite_inputs():
    scalar, matrix = T.dscalar("s"), T.fmatrix("m")
    outputs = [cumsum(scalar), cumprod(scalar), cumsum(matrix, 0), cumprod(matrix, 1),
               cumsum(matrix)]
    function = compile_c([scalar, matrix], outputs)
    assert function._vm.fallback_nodes == []
    for shape in ((0, 3), (3, 0), (1, 1), (2, 3)):
        value = np.full(shape, np.inf, "float32")
        value.flat[::2] = -np.float32(3e38)
        compare_backends(outputs, [scalar, matrix], [np.float64(2.5), value])


def test_complex_gives_no_c_code():
    node = CumOp(0, "add").make_node(T.tensor(dtype="complex128", shape=(None,)))
    assert node.op.c_code(node, CNames(inputs=("x",), outputs=("out",), fail="")) is None


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sympile
    import sympile.tensor as T
    from sympile.compile.mode import Mode
    from sympile.graph.rewriting.db import RewriteQuery
    from sympile.tensor.extra_ops import cumprod, cumsum

    mode = Mode(RewriteQuery(include=("fast_run",)), backend="c")
    x = T.tensor3("x")
    f = sympile.function([x], [cumsum(x), cumsum(x, 1), cumprod(x, 2), cumprod(x, 0)],
                         mode=mode)
    assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
    for shape in [(2, 3, 4), (0, 3, 4), (2, 1, 0), (1, 1, 1)]:
        value = np.ones(shape)
        f(value)
        f(np.asfortranarray(value))
    print("clean")
""")


@pytest.mark.slow
def test_cumulative_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)
