"""C code of PermuteAlongAxis against the Python backend: gather and scatter on every axis,
permutations from argsort and reversed lines, every layout and dtype, empty inputs, and bad
permutations: another shape, entries out of range, repeated entries."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.tensor.sort import PermuteAlongAxis
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
permutation = T.ltensor3("permutation")


def _outputs(tensor=x, indices=permutation, axis=None):
    axes = range(3) if axis is None else [axis]
    return [PermuteAlongAxis(a, inverse)(tensor, indices) for a in axes
            for inverse in (False, True)]


def _permutations(rng, shape, axis):
    return np.argsort(rng.standard_normal(shape), axis=axis)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_and_scatter(layout, axis):
    rng = np.random.default_rng(axis)
    value = LAYOUTS[layout](rng.standard_normal((3, 4, 5)))
    indices = LAYOUTS[layout](_permutations(rng, (3, 4, 5), axis))
    compare_backends(_outputs(axis=axis), [x, permutation], [value, indices])


@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "complex64"])
def test_every_dtype_and_int32_indices(dtype):
    tensor, indices = T.tensor(dtype=dtype, shape=(None, None)), T.imatrix("indices")
    outputs = [PermuteAlongAxis(1)(tensor, indices), PermuteAlongAxis(0, True)(tensor, indices)]
    value = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    compare_backends(outputs[:1], [tensor, indices],
                     [value, np.tile(np.array([3, 1, 0, 2], "int32"), (3, 1))])
    compare_backends(outputs[1:], [tensor, indices],
                     [value, np.tile(np.array([[2], [0], [1]], "int32"), (1, 4))])


def test_empty():
    compare_backends(_outputs(), [x, permutation],
                     [np.ones((0, 3, 2)), np.zeros((0, 3, 2), "int64")])


@pytest.mark.parametrize("bad", ["shape", "range", "repeated"])
def test_bad_permutations(bad):
    rng = np.random.default_rng(0)
    value, indices = np.ones((3, 4, 5)), _permutations(rng, (3, 4, 5), 1)
    if bad == "shape":
        indices = indices[:, :, :4]
    elif bad == "range":
        indices[1, 2, 3] = 4
    else:
        indices[2, :, 1] = 0
    messages = []
    outputs = _outputs(axis=1)
    for function in (compile_c([x, permutation], outputs),
                     sympile.function([x, permutation], outputs, mode=PYTHON_MODE)):
        with pytest.raises(ValueError) as error:
            function(value, indices)
        messages.append(str(error.value).splitlines()[0])
    assert messages[0] == messages[1] and messages[0].startswith("PermuteAlongAxis")


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sympile
    import sympile.tensor as T
    from sympile.compile.mode import Mode
    from sympile.graph.rewriting.db import RewriteQuery
    from sympile.tensor.sort import PermuteAlongAxis

    mode = Mode(RewriteQuery(include=("fast_run",)), backend="c")
    x, p = T.dtensor3("x"), T.ltensor3("p")
    f = sympile.function([x, p], [PermuteAlongAxis(1)(x, p), PermuteAlongAxis(1, True)(x, p)],
                         mode=mode)
    assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
    rng = np.random.default_rng(0)
    for shape in [(2, 3, 4), (0, 3, 4), (2, 1, 1)]:
        indices = np.argsort(rng.standard_normal(shape), axis=1)
        f(np.ones(shape), indices)
        f(np.asfortranarray(np.ones(shape)), np.asfortranarray(indices))
    for bad in (np.full((2, 3, 4), 3), np.zeros((2, 3, 4), "int64")):
        try:
            f(np.ones((2, 3, 4)), bad)
        except ValueError:
            pass
    print("clean")
""")


@pytest.mark.slow
def test_permute_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)
