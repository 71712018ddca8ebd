"""C code of Tril and Triu against the Python backend: every diagonal k (beyond the matrix
too), vectors (rows of a square matrix), stacks of matrices, non-square and empty matrices,
every dtype, C/F/strided/negative-stride inputs, and a new array (x untouched)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile.tensor as T
from sympile.graph.ccode import CNames
from sympile.tensor.extra_ops import Tril, tril, triu
from tests.link.c.utils import (
    LAYOUTS,
    assert_clean_under_address_sanitizer,
    compare_backends,
    compile_c,
    requires_compiler,
)

pytestmark = requires_compiler

K_VALUES = (-7, -2, -1, 0, 1, 3, 9)


def _outputs(x, k):
    return [tril(x, k), triu(x, k), tril(x), triu(x, -1)]


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_every_diagonal_and_rank(layout, ndim):
    x = T.tensor(dtype="float64", shape=(None,) * ndim)
    k = T.iscalar("k")
    function = compile_c([x, k], _outputs(x, k))
    assert function._vm.fallback_nodes == []
    shape = [(5,), (4, 6), (3, 5, 4), (2, 3, 4, 2)][ndim - 1]
    value = LAYOUTS[layout](np.random.default_rng(0).standard_normal(shape))
    for k_value in K_VALUES:
        compare_backends(_outputs(x, k), [x, k], [value, np.int32(k_value)])


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float16",
                                   "complex128"])
def test_every_dtype(dtype):
    x = T.tensor(dtype=dtype, shape=(None, None))
    k = T.lscalar("k")
    value = (np.arange(1, 13).reshape(3, 4) % 5).astype(dtype)
    compare_backends(_outputs(x, k), [x, k], [value, np.int64(1)])


def test_empty_and_a_new_array():
    x, k = T.dtensor3("x"), T.lscalar("k")
    for shape in ((0, 3, 3), (2, 0, 3), (2, 3, 0)):
        compare_backends(_outputs(x, k), [x, k], [np.ones(shape), np.int64(0)])
    function = compile_c([x, k], tril(x, k))
    value = np.ones((1, 3, 3))
    result = function(value, np.int64(0))
    assert not np.shares_memory(result, value) and value.sum() == 9


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=2, max_size=3), k=st.integers(-8, 8),
       seed=st.integers(0, 2**32 - 1))
def test_random_shapes(shape, k, seed):
    x = T.tensor(dtype="float32", shape=(None,) * len(shape))
    value = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    compare_backends([tril(x, k), triu(x, k)], [x], [value])


def test_uint64_k_gives_no_c_code():
    node = Tril().make_node(T.dmatrix(), T.tensor(dtype="uint64", shape=()))
    assert node.op.c_code(node, CNames(("x", "k"), ("out",), "")) is None


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sympile
    import sympile.tensor as T
    from sympile.compile.mode import Mode
    from sympile.graph.rewriting.db import RewriteQuery
    from sympile.tensor.extra_ops import tril, triu

    mode = Mode(RewriteQuery(include=("fast_run",)), backend="c")
    x, v, k = T.dtensor3("x"), T.dvector("v"), T.lscalar("k")
    f = sympile.function([x, v, k], [tril(x, k), triu(x, k), tril(v, k), triu(v, k)],
                         mode=mode)
    assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
    for shape in [(2, 3, 4), (0, 3, 4), (2, 1, 0), (1, 5, 5)]:
        for k_value in (-3, 0, 2):
            f(np.ones(shape), np.ones(shape[-1]), k_value)
            f(np.asfortranarray(np.ones(shape)), np.ones(shape[-1])[::-1], k_value)
    print("clean")
""")


@pytest.mark.slow
def test_triangle_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)
