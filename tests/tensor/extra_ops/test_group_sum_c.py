"""C code of GroupSum (Repeat's gradient) against the Python backend: every axis, a count
per group (empty groups too), one count for all, every layout, integer wrap-around, and bad
counts: negative, the wrong number, a total that is not y's length."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.tensor.extra_ops import GroupSum
from tests.link.c.utils import (
    LAYOUTS,
    PYTHON_MODE,
    assert_clean_under_address_sanitizer,
    compare_backends,
    compile_c,
    requires_compiler,
)

pytestmark = requires_compiler

y = T.dtensor3("y")
counts = T.lvector("counts")
count = T.lscalar("count")
like = T.dtensor3("like")
INPUTS = [y, counts, count, like]


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_every_axis(layout, axis):
    rng = np.random.default_rng(axis)
    shape = [3, 4, 5]
    shape[axis] = 6
    value = LAYOUTS[layout](rng.standard_normal(shape))
    like_shape = [3, 4, 5]
    like_shape[axis] = 3
    outputs = [GroupSum(axis)(y, counts, like), GroupSum(axis)(y, count, like)]
    compare_backends(outputs, INPUTS, [value, np.array([2, 0, 4]), np.int64(2),
                                       np.zeros(like_shape)])


def test_integers_wrap():
    small = T.tensor(dtype="int8", shape=(None, None))
    output = GroupSum(1)(small, counts, T.tensor(dtype="int8", shape=(None, None)))
    compare_backends(output, [small, counts, output.owner.inputs[2]],
                     [np.full((2, 4), 100, "int8"), np.array([3, 1]), np.zeros((2, 2), "int8")])


@pytest.mark.parametrize("bad", [[2, -1, 5], [2, 4], [1, 1, 1]])
def test_bad_counts(bad):
    output = GroupSum(1)(y, counts, like)
    messages = []
    for function in (compile_c(INPUTS, output),
                     sympile.function(INPUTS, output, mode=PYTHON_MODE,
                                      on_unused_input="ignore")):
        with pytest.raises(ValueError) as error:
            function(np.ones((3, 6, 5)), np.array(bad), np.int64(1), np.zeros((3, 3, 5)))
        messages.append(str(error.value).splitlines()[0])
    assert messages[0] == messages[1] and messages[0].startswith("GroupSum")


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sympile
    import sympile.tensor as T
    from sympile.compile.mode import Mode
    from sympile.graph.rewriting.db import RewriteQuery
    from sympile.tensor.extra_ops import GroupSum

    mode = Mode(RewriteQuery(include=("fast_run",)), backend="c")
    y, counts, like = T.dtensor3("y"), T.lvector("counts"), T.dtensor3("like")
    f = sympile.function([y, counts, like], GroupSum(1)(y, counts, like), mode=mode)
    assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
    f(np.ones((2, 5, 3)), np.array([2, 0, 3]), np.zeros((2, 3, 3)))
    f(np.asfortranarray(np.ones((2, 5, 3))), np.array([5, 0, 0]), np.zeros((2, 3, 3)))
    f(np.ones((0, 0, 3)), np.zeros(0, "int64"), np.zeros((0, 0, 3)))
    try:
        f(np.ones((2, 5, 3)), np.array([2, 0]), np.zeros((2, 3, 3)))
    except ValueError:
        pass
    print("clean")
""")


@pytest.mark.slow
def test_group_sum_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)
