"""The fast paths of sympile.tensor.elemwise.elemwise_c, compared with numpy: loops writing
over their input (computed a block at a time into buffers, so a block that fell back to libm
is computed again from untouched inputs), the strided kernel's plain rows (operands
contiguous along the row, a column input read once per row) and its general path, with
values that make the fast-math functions fall back (sin/cos past their range, NaN,
infinities) and that saturate them (tanh, exp of large inputs), in float32 and float64,
serial and under OpenMP."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.scalar import basic as scalar
from sympile.scalar.composite import Composite
from sympile.tensor.elemwise import Elemwise
from tests.link.c.utils import LAYOUTS, requires_compiler
from tests.utils import assert_like_numpy

pytestmark = requires_compiler

C_PLAIN = Mode(None, backend="c", name="C_PLAIN")

# Values past the fast sin's range (65536), huge, infinite and NaN, and large enough to
# saturate tanh and overflow exp.
SPECIAL = np.array([1e5, -7e4, 65536.5, 3e30, np.inf, -np.inf, np.nan, 100.0, -95.0, 0.0, -0.0])

# (60, 500): the MLP's hidden layer; 2500 elements per row cross the 1024-element blocks;
# (7, 1): the rows' axis is dropped and a column input is no longer constant along them.
SHAPES = [(60, 500), (3, 2500), (2500, 3), (7, 1), (1, 1), (0, 4)]

# The kinds of the second input: its type, and its shape for a given output shape.
KINDS = {
    "matrix": (lambda dtype: T.matrix(dtype=dtype), lambda shape: shape),
    "row": (lambda dtype: T.row(dtype=dtype), lambda shape: (1, shape[1])),
    "col": (lambda dtype: T.col(dtype=dtype), lambda shape: (shape[0], 1)),
}


def _composite(dtype: str, outputs) -> Composite:
    a, b = scalar.get_scalar_type(dtype)(), scalar.get_scalar_type(dtype)()
    return Composite([a, b], list(outputs(a, b)))


def _mixed(a, b):
    """tanh(a + b) + sin(a) exp(-|b|): tanh, sin (whose float32 fast version falls back past
    its range) and exp, all with fast versions in float32; exp also in float64."""
    return [scalar.add(scalar.tanh(scalar.add(a, b)),
                       scalar.mul(scalar.sin(a), scalar.exp(scalar.neg(scalar.abs(b)))))]


def _mixed_numpy(a, b):
    with np.errstate(invalid="ignore", over="ignore"):
        return np.tanh(a + b) + np.sin(a) * np.exp(-np.abs(b))


def _values(shape, dtype, rng, special_every: int = 7) -> np.ndarray:
    """Normal values scaled up to a few tens, with SPECIAL values every `special_every`
    elements (from a random start), so most blocks mix fast and fallen-back elements."""
    values = (rng.standard_normal(shape) * 8).astype(dtype)
    flat = values.reshape(-1)
    start = int(rng.integers(special_every)) if flat.size else 0
    positions = np.arange(start, flat.size, special_every)
    flat[positions] = np.resize(SPECIAL, positions.size).astype(dtype)
    return values


def _function(kind: str, dtype: str, inplace: bool, outputs=_mixed, pattern=((0, 0),)):
    x, y = T.matrix("x", dtype=dtype), KINDS[kind][0](dtype)
    op = Elemwise(_composite(dtype, outputs), inplace_pattern=pattern if inplace else ())
    function = sympile.function([x, y], op(x, y), mode=C_PLAIN, accept_inplace=True)
    assert function._vm.fallback_nodes == []
    return function


def _check(function, kind: str, dtype: str, inplace: bool, rng) -> None:
    for shape in SHAPES:
        for layout in LAYOUTS.values():
            x = layout(_values(shape, dtype, rng))
            y = layout(_values(KINDS[kind][1](shape), dtype, rng, special_every=5))
            expected = _mixed_numpy(x, y).astype(dtype)
            result = function(x, y)
            assert_like_numpy(np.asarray(result), expected)
            if inplace:
                assert_like_numpy(x, expected)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("inplace", [False, True], ids=["fresh", "inplace"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_loops_match_numpy_with_fallbacks_broadcasts_and_layouts(kind, inplace, dtype):
    rng = np.random.default_rng(zlib.crc32(f"{kind} {inplace} {dtype}".encode()))
    _check(_function(kind, dtype, inplace), kind, dtype, inplace, rng)


@pytest.mark.parametrize("kind", ["row", "col"])
def test_threaded_loops_match_numpy(kind):
    """Blocks (flat loop) and rows (strided) on several threads, each with its own buffers."""
    rng = np.random.default_rng(11)
    with sympile.config.change_flags(openmp=True, openmp_elemwise_minsize=16):
        for inplace in (False, True):
            function = _function(kind, "float32", inplace)
            assert function._vm.plan.openmp
            _check(function, kind, "float32", inplace, rng)


def test_outputs_written_over_each_other_s_inputs_read_them_untouched():
    """Output 0 over input 1, output 1 over input 0: each block is computed from both inputs
    as they were before any output of the block is stored."""
    def outputs(a, b):
        return [scalar.mul(scalar.sin(a), b), scalar.add(scalar.cos(b), a)]

    function = _function("matrix", "float32", True, outputs=outputs, pattern=((0, 1), (1, 0)))
    rng = np.random.default_rng(12)
    for layout in LAYOUTS.values():
        x, y = layout(_values((5, 2100), "float32", rng)), layout(_values((5, 2100), "float32",
                                                                          rng))
        with np.errstate(invalid="ignore"):
            expected = [np.sin(x) * y, np.cos(y) + x]
        first, second = function(x, y)
        assert_like_numpy(y, expected[0])
        assert_like_numpy(x, expected[1])
        assert_like_numpy(np.asarray(first), expected[0])
        assert_like_numpy(np.asarray(second), expected[1])


def test_transposed_and_sliced_graph_inputs_take_the_general_path():
    """x.T + row and a column slice: rows that are not contiguous along the row."""
    x, r = T.fmatrix("x"), T.frow("r")
    c = T.fcol("c")
    function = sympile.function([x, r, c], [T.exp(x.T + r), T.tanh(x[:, ::3] * c)],
                                mode=C_PLAIN)
    rng = np.random.default_rng(13)
    xv = _values((40, 30), "float32", rng)
    rv, cv = _values((1, 40), "float32", rng), _values((40, 1), "float32", rng)
    first, second = function(xv, rv, cv)
    with np.errstate(over="ignore", invalid="ignore"):
        assert_like_numpy(first, np.exp(xv.T + rv))
        assert_like_numpy(second, np.tanh(xv[:, ::3] * cv))
