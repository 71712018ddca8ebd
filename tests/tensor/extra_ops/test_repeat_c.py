"""C code of Repeat against the Python backend: every axis and the flattened input, a scalar
count, a count per element, a broadcast length-1 counts vector, zero counts, every layout and
dtype, empty and 0-d inputs, and bad input: negative counts, a counts vector of the wrong
length."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.tensor.extra_ops import repeat
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
count = T.iscalar("count")
counts = T.lvector("counts")
single = T.tensor(dtype="int64", shape=(1,))
INPUTS = [x, count, counts, single]


def _outputs():
    return [repeat(x, count), repeat(x, count, 1), repeat(x, counts, 0), repeat(x, single, 2),
            repeat(x[:, :, :3], counts, 2)]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_axis_and_kind_of_count(layout):
    value = LAYOUTS[layout](np.random.default_rng(0).standard_normal((3, 4, 5)))
    for count_value, counts_value in [(2, [1, 0, 3]), (0, [0, 0, 0]), (1, [2, 2, 2])]:
        compare_backends(_outputs(), INPUTS, [value, np.int32(count_value),
                                              np.array(counts_value), np.array([3])])


@pytest.mark.parametrize("dtype", ["bool", "uint8", "float32", "complex128", "float16"])
def test_every_dtype_empty_and_0d(dtype):
    tensor, scalar = T.tensor(dtype=dtype, shape=(None, None)), T.tensor(dtype=dtype, shape=())
    outputs = [repeat(tensor, count), repeat(tensor, count, 0), repeat(scalar, count)]
    for shape in ((2, 3), (0, 3)):
        value = (np.arange(np.prod(shape)).reshape(shape) % 3).astype(dtype)
        compare_backends(outputs, [tensor, scalar, count],
                         [value, np.asarray(1, dtype=dtype), np.int32(2)])


@pytest.mark.parametrize("bad", ["negative count", "negative counts", "wrong length"])
def test_bad_counts(bad):
    point = [np.ones((3, 4, 5)), np.int32(2), np.array([1, 1, 1]), np.array([3])]
    if bad == "negative count":
        point[1] = np.int32(-1)
    elif bad == "negative counts":
        point[2] = np.array([1, -2, 1])
    else:
        point[2] = np.array([1, 1])
    messages = []
    for function in (compile_c(INPUTS, _outputs()),
                     sympile.function(INPUTS, _outputs(), mode=PYTHON_MODE)):
        with pytest.raises(ValueError) as error:
            function(*point)
        messages.append(str(error.value).splitlines()[0])
    assert messages[0] == messages[1] and messages[0].startswith("repeat:")


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sympile
    import sympile.tensor as T
    from sympile.compile.mode import Mode
    from sympile.graph.rewriting.db import RewriteQuery
    from sympile.tensor.extra_ops import repeat

    mode = Mode(RewriteQuery(include=("fast_run",)), backend="c")
    x, count, counts = T.dtensor3("x"), T.lscalar("count"), T.lvector("counts")
    f = sympile.function([x, count, counts], [repeat(x, count), repeat(x, counts, 1)],
                         mode=mode)
    assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
    for shape in [(2, 3, 4), (2, 0, 4), (1, 2, 1)]:
        f(np.ones(shape), 2, np.arange(shape[1]))
        f(np.asfortranarray(np.ones(shape)), 0, np.zeros(shape[1], "int64"))
    try:
        f(np.ones((2, 3, 4)), -1, np.arange(3))
    except ValueError:
        pass
    print("clean")
""")


@pytest.mark.slow
def test_repeat_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)
