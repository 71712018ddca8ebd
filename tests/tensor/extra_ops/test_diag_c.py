"""C code of ExtractDiag, AllocDiag, EmbedDiag and FillDiagonal against the Python backend:
every offset (beyond the matrix too), every pair of axes of a 3-d/4-d input, every dtype,
C/F/strided/negative-stride inputs, empty inputs, a new array (the input untouched), and
bad input: an EmbedDiag diagonal of the wrong shape, a FillDiagonal input of unequal
lengths."""

from __future__ import annotations

import itertools
import textwrap

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.tensor.extra_ops import (
    AllocDiag,
    EmbedDiag,
    ExtractDiag,
    diag,
    diagonal,
    fill_diagonal,
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

OFFSETS = (-5, -2, -1, 0, 1, 3, 6)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_extract_and_embed_on_every_pair_of_axes(layout):
    x = T.dtensor3("x")
    outputs = []
    for axis1, axis2 in itertools.permutations(range(3), 2):
        for offset in OFFSETS:
            outputs.append(ExtractDiag(offset, axis1, axis2)(x))
            outputs.append(EmbedDiag(offset, axis1, axis2)(outputs[-1] * 2.0, x))
    value = LAYOUTS[layout](np.random.default_rng(0).standard_normal((3, 4, 5)))
    compare_backends(outputs, [x], [value])


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_matrices_and_vectors(layout):
    x, v = T.dmatrix("x"), T.dvector("v")
    outputs = [diag(v, offset) for offset in OFFSETS] + [diag(x, offset) for offset in OFFSETS]
    outputs += [fill_diagonal(x, 7.5), AllocDiag(2)(v), diagonal(x.T, 1)]
    rng = np.random.default_rng(1)
    for shape in ((4, 6), (6, 4), (5, 5), (1, 3), (0, 3)):
        compare_backends(outputs, [x, v], [LAYOUTS[layout](rng.standard_normal(shape)),
                                           LAYOUTS[layout](rng.standard_normal(4))[:3]])


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "float32", "float16",
                                   "complex128"])
def test_every_dtype(dtype):
    x = T.tensor(dtype=dtype, shape=(None, None, None))
    v = T.tensor(dtype=dtype, shape=(None,))
    value = (np.arange(24).reshape(2, 3, 4) % 3).astype(dtype)
    outputs = [ExtractDiag(1, 2, 0)(x), EmbedDiag(-1, 1, 2)(ExtractDiag(-1, 1, 2)(x), x),
               AllocDiag(-1)(v), fill_diagonal(x[:, :2, :2], value.flat[1])]
    compare_backends(outputs, [x, v], [value, value[0, 0]])


def test_fill_diagonal_of_more_axes_and_unequal_lengths():
    x = T.dtensor3("x")
    output = fill_diagonal(x, -1.0)
    compare_backends(output, [x], [np.ones((3, 3, 3))])
    c_function = compile_c([x], output)
    python_function = sympile.function([x], output, mode=PYTHON_MODE)
    messages = []
    for function in (c_function, python_function):
        with pytest.raises(ValueError) as error:
            function(np.ones((3, 3, 2)))
        messages.append(str(error.value).splitlines()[0])
    assert messages[0] == messages[1] and "lengths equal" in messages[0]


def test_embed_diagonal_of_the_wrong_shape():
    d, like = T.dmatrix("d"), T.dtensor3("like")
    output = EmbedDiag(0, 1, 2)(d, like)
    messages = []
    for function in (compile_c([d, like], output),
                     sympile.function([d, like], output, mode=PYTHON_MODE)):
        with pytest.raises(ValueError) as error:
            function(np.ones((2, 4)), np.ones((2, 3, 3)))
        messages.append(str(error.value).splitlines()[0])
    assert messages[0] == messages[1] and "EmbedDiag" in messages[0]


def test_new_arrays_and_inputs_untouched():
    x = T.dmatrix("x")
    function = compile_c([x], [diag(x), fill_diagonal(x, 0.0)])
    value = np.ones((3, 3))
    read, filled = function(value)
    assert not np.shares_memory(read, value) and not np.shares_memory(filled, value)
    assert value.sum() == 9 and read.flags.writeable


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sympile
    import sympile.tensor as T
    from sympile.compile.mode import Mode
    from sympile.graph.rewriting.db import RewriteQuery
    from sympile.tensor.extra_ops import AllocDiag, EmbedDiag, ExtractDiag, fill_diagonal

    mode = Mode(RewriteQuery(include=("fast_run",)), backend="c")
    x, v = T.dtensor3("x"), T.dvector("v")
    d = ExtractDiag(-1, 2, 0)(x)
    f = sympile.function([x, v], [d, EmbedDiag(-1, 2, 0)(d, x), AllocDiag(3)(v),
                                  fill_diagonal(x[0], 2.0)], mode=mode)
    assert f._vm.fallback_nodes == [], f._vm.fallback_nodes
    for shape in [(2, 3, 4), (1, 3, 0), (2, 1, 0), (5, 1, 1)]:
        f(np.ones(shape), np.ones(3))
        f(np.asfortranarray(np.ones(shape)), np.ones(6)[::2])
    print("clean")
""")


@pytest.mark.slow
def test_diag_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)
