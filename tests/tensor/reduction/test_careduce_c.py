"""C code of CAReduce (sum, prod, max, min, all, any) and Argmax/Argmin against the Python
backend: every dtype, sets of axes, 0-d and empty inputs, non-contiguous layouts, NaN, changing
shapes between calls, and the empty-axis errors."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympile.tensor as T
from tests.link.c.utils import (
    assert_clean_under_address_sanitizer,
    compare_backends,
    compile_c,
    requires_compiler,
)
from tests.utils import assert_like_numpy

pytestmark = requires_compiler

DTYPES = ("bool", "int8", "int32", "int64", "uint8", "uint64", "float32", "float64")
AXES = (None, 0, 1, 2, (0, 2), (1, 2), (0, 1))


def _values(dtype: str, shape, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.3
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _reductions(x, axis):
    return [T.sum(x, axis=axis), T.prod(x, axis=axis), T.max(x, axis=axis),
            T.min(x, axis=axis), T.all(x, axis=axis), T.any(x, axis=axis),
            T.argmax(x, axis=axis), T.argmin(x, axis=axis)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_reduction_over_axes(dtype):
    x = T.tensor3("x", dtype=dtype)
    outputs = [output for axis in AXES for output in _reductions(x, axis)]
    rtol = 1e-5 if dtype == "float32" else 1e-12
    value = _values(dtype, (3, 4, 5))
    compare_backends(outputs, [x], [value], rtol=rtol)
    # Non-contiguous layouts: a transpose, a reversed axis, every other element.
    backing = _values(dtype, (6, 4, 10), seed=1)
    for layout in (np.transpose(_values(dtype, (5, 4, 3)), (2, 1, 0)), backing[::2, ::-1, ::2]):
        compare_backends(outputs, [x], [layout], rtol=rtol)


@pytest.mark.parametrize("dtype", ("int8", "int64", "float64"))
def test_acc_dtype_and_result_dtype(dtype):
    x = T.matrix("x", dtype=dtype)
    outputs = [T.sum(x, axis=0, acc_dtype="float64", dtype="float32"),
               T.sum(x, dtype="int8"), T.prod(x, axis=1, dtype="int16", acc_dtype="int64"),
               T.sum(x, axis=1, acc_dtype="bool", dtype="bool")]
    value = (np.arange(40).reshape(5, 8) * 7).astype(dtype)
    compare_backends(outputs, [x], [value], rtol=1e-6)


def test_integer_overflow_wraps_like_numpy():
    x = T.vector("x", dtype="int64")
    value = np.array([2**62, 2**62, 2**62, 7], dtype="int64")
    compare_backends([T.sum(x), T.prod(x)], [x], [value])


def test_zero_dim_and_empty_inputs():
    scalar_input = T.scalar("s", dtype="float64")
    compare_backends(_reductions(scalar_input, None), [scalar_input], [np.array(2.5)])
    x = T.matrix("x", dtype="float64")
    outputs = [T.sum(x, axis=0), T.prod(x, axis=0), T.all(x, axis=0), T.any(x, axis=0),
               T.sum(x), T.max(x, axis=1), T.argmax(x, axis=1)]
    # Axis 0 empty: sum 0, prod 1 per column; reducing axis 1 (length 3) of no rows is empty.
    compare_backends(outputs, [x], [np.zeros((0, 3))])


def test_nan_propagation_like_numpy():
    x = T.matrix("x", dtype="float64")
    value = np.array([[1.0, np.nan, 3.0, np.nan], [np.inf, -np.inf, 2.0, 0.0],
                      [-np.inf, -np.inf, -np.inf, -np.inf], [np.nan, 5.0, 5.0, 1.0]])
    outputs = [T.max(x, axis=1), T.min(x, axis=1), T.max(x, axis=0), T.min(x),
               T.argmax(x, axis=1), T.argmin(x, axis=1), T.argmax(x, axis=0), T.argmax(x)]
    compare_backends(outputs, [x], [value])


def test_ties_give_the_first_index():
    x = T.tensor3("x", dtype="int32")
    value = np.zeros((2, 3, 4), dtype="int32")
    value[0, 1, 2] = value[0, 2, 1] = 3
    value[1, 0, 3] = value[1, 2, 0] = -3
    outputs = [T.argmax(x, axis=(1, 2)), T.argmin(x, axis=(1, 2)), T.argmax(x),
               T.argmin(x, axis=0)]
    compare_backends(outputs, [x], [value])


def test_changing_shapes_between_calls():
    x = T.tensor3("x", dtype="float64")
    outputs = [T.sum(x, axis=(0, 2)), T.max(x, axis=1), T.argmin(x, axis=2)]
    function = compile_c([x], outputs)
    for shape in ((2, 3, 4), (5, 1, 2), (1, 6, 1), (3, 3, 3)):
        value = _values("float64", shape, seed=sum(shape))
        results = function(value)
        np.testing.assert_allclose(results[0], value.sum(axis=(0, 2)), rtol=1e-12)
        np.testing.assert_array_equal(results[1], value.max(axis=1))
        np.testing.assert_array_equal(results[2], value.argmin(axis=2))


@pytest.mark.parametrize("make", [lambda x: T.max(x, axis=1), lambda x: T.min(x),
                                  lambda x: T.argmax(x, axis=1), lambda x: T.argmin(x)])
def test_empty_axis_of_max_is_a_value_error(make):
    x = T.matrix("x", dtype="float32")
    function = compile_c([x], make(x))
    assert function._vm.fallback_nodes == []
    with pytest.raises(ValueError, match="empty"):
        function(np.zeros((3, 0), dtype="float32"))


@pytest.mark.parametrize("dtype", ("int8", "uint64", "float32", "float64", "bool"))
def test_fast_paths_on_long_rows(dtype):
    """Shapes where the contiguous fold fills its 16 accumulators, leaves a tail and spans
    several 4096-element blocks (reducing all, or the last axis), and where the output is a
    contiguous run of the innermost axis (axis 0, read row by row), with the accumulator in a
    buffer of another dtype."""
    x = T.matrix("x", dtype=dtype)
    outputs = [output for axis in (None, 0, 1) for output in _reductions(x, axis)]
    if dtype != "bool":
        outputs += [T.sum(x, axis=0, acc_dtype="float64", dtype="float32"),
                    T.prod(x, axis=0, acc_dtype="float64", dtype="float64")]
    value = _values(dtype, (37, 1013), seed=4)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    compare_backends(outputs, [x], [value], rtol=rtol)


@pytest.mark.parametrize("dtype", ("int8", "uint64", "float32", "float64", "bool"))
def test_blocks_of_several_contiguous_runs(dtype):
    """A bias's gradient, sum over axes 0, 2 and 3 of NCHW: each output's block is several
    contiguous runs (rows of at least 16, folded by the contiguous kernel, tails included),
    then runs too short for it (left to the element loop), a run spanning blocks of 4096,
    and NaN in a run."""
    x = T.tensor4("x", dtype=dtype)
    outputs = [output for axis in ((0, 2, 3), (0, 3), (0, 1, 3)) for output in
               _reductions(x, axis)[:6]]
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for shape in ((5, 3, 7, 29), (4, 2, 3, 5), (2, 3, 1, 4100)):
        value = _values(dtype, shape, seed=8)
        compare_backends(outputs, [x], [value], rtol=rtol)
    if dtype.startswith("float"):
        value = _values(dtype, (5, 3, 7, 29), seed=9)
        value[2, 1, 3, 17] = np.nan
        compare_backends(outputs, [x], [value], rtol=rtol)


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_nan_reaches_max_min_argmax_argmin_through_the_fast_paths(dtype):
    x = T.matrix("x", dtype=dtype)
    outputs = [f(x, axis=axis) for f in (T.max, T.min, T.argmax, T.argmin)
               for axis in (None, 0, 1)]
    value = _values(dtype, (9, 4100), seed=5)
    value[3, 17] = value[8, 4099] = value[0, 4096] = np.nan
    compare_backends(outputs, [x], [value])


def test_float32_sum_of_a_contiguous_run_is_as_accurate_as_numpy():
    """Partial sums in 16 lanes and blocks: the error against the float64 sum stays within a
    few times numpy's pairwise error, far below one sequential accumulator's."""
    rng = np.random.default_rng(6)
    values = (rng.random(10 ** 6) + 100.0).astype("float32")
    x = T.fvector("x")
    function = compile_c([x], T.sum(x))
    exact = values.astype(np.float64).sum()
    sequential = np.cumsum(values, dtype=np.float32)[-1]
    numpy_error = abs(float(values.sum()) - exact)
    error = abs(float(function(values)) - exact)
    # The result itself is a float32: a couple of its ulps are the floor.
    assert error <= 4 * numpy_error + 2 * float(np.spacing(np.float32(exact)))
    assert error < abs(float(sequential) - exact) / 10


@pytest.mark.parametrize("dtype", ("int8", "int64", "uint16", "float32", "float64"))
def test_argmax_argmin_blocks_and_rows_give_numpy_s_first_index(dtype):
    """Runs of 2500 cross the arg-reductions' 1024-element blocks and leave chunk tails; the
    extreme is tied across blocks (the first block's wins), and in float a NaN follows the
    extreme's block, or precedes it, or several NaNs share a row; reducing axis 0 reads the
    rows in order, with the same ties and NaNs down the columns."""
    x = T.matrix("x", dtype=dtype)
    outputs = [f(x, axis=axis) for f in (T.argmax, T.argmin) for axis in (None, 0, 1)]
    outputs += [T.max(x, axis=1), T.min(x, axis=1)]
    function = compile_c([x], outputs)
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype) if dtype.startswith(("int", "uint")) else None
    low, high = (info.min, info.max) if info else (-1e30, 1e30)
    for shape in ((6, 2500), (2500, 6), (3, 1025), (1, 17)):
        if info:
            value = rng.integers(max(low, -50), min(high, 50), shape).astype(dtype)
        else:
            value = rng.standard_normal(shape).astype(dtype)
        rows, columns = shape
        value[0, columns - 1] = value[0, columns // 3] = high
        value[rows - 1, 0] = value[rows // 2, 0] = low
        if not info:
            value[min(1, rows - 1), columns - 1] = np.nan
            value[rows - 1, columns // 2] = value[rows - 1, columns - 1] = np.nan
            value[rows // 2, 1] = -0.0
        expected = [f(value, axis=axis) for f in (np.argmax, np.argmin) for axis in (None, 0, 1)]
        expected += [np.max(value, axis=1), np.min(value, axis=1)]
        for actual, reference in zip(function(value), expected):
            assert_like_numpy(np.asarray(actual), reference)
        for actual, reference in zip(function(np.asfortranarray(value)), expected):
            assert_like_numpy(np.asarray(actual), reference)


EXTREME_DTYPES = ("bool", "int8", "uint16", "int64", "float32", "float64")


@pytest.fixture(scope="module")
def extremes():
    """max, min, argmax and argmin of a vector, compiled per dtype."""
    compiled = {}
    for dtype in EXTREME_DTYPES:
        x = T.vector("x", dtype=dtype)
        compiled[dtype] = compile_c([x], [T.max(x), T.min(x), T.argmax(x), T.argmin(x)])
    return compiled


@settings(max_examples=150, deadline=None)
@given(dtype=st.sampled_from(EXTREME_DTYPES),
       length=st.integers(1, 2600), nans=st.lists(st.integers(0, 2599), max_size=3),
       seed=st.integers(0, 2**32 - 1))
def test_extremes_of_a_run_of_any_length(extremes, dtype, length, nans, seed):
    """The contiguous extreme and its first position: four vectors at a time, then one, then
    single elements, over one or more blocks of argmax's 1024, with NaN anywhere among them
    (numpy's: NaN wins, the first NaN's index) and many ties (the first one's index)."""
    value = _values(dtype, (length,), seed)
    if dtype.startswith("float"):
        value[[position % length for position in nans]] = np.nan
    expected = [np.max(value), np.min(value), np.argmax(value), np.argmin(value)]
    for result, wanted in zip(extremes[dtype](value), expected):
        np.testing.assert_array_equal(result, wanted)


SANITIZER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import sympile.tensor as T
    from tests.link.c.utils import compile_c
    rng = np.random.default_rng(0)
    for dtype in ("bool", "int8", "uint16", "int64", "float32", "float64"):
        x = T.vector(dtype=dtype)
        m = T.matrix(dtype=dtype)
        vector = compile_c([x], [T.max(x), T.min(x), T.argmax(x), T.argmin(x)])
        rows = compile_c([m], [T.max(m, axis=1), T.argmax(m, axis=1), T.argmin(m, axis=0)])
        for length in (1, 3, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 3000):
            value = (rng.random(length) * 5).astype(dtype)
            if dtype.startswith("float"):
                value[rng.integers(0, length)] = np.nan
            expected = [np.max(value), np.min(value), np.argmax(value), np.argmin(value)]
            for got, want in zip(vector(value), expected):
                np.testing.assert_array_equal(got, want)
            matrix = value[:length // 3 * 3].reshape(3, -1) if length >= 3 else value[None]
            rows(matrix)
    print("clean")
""")


@pytest.mark.slow
def test_extremes_are_clean_under_address_sanitizer():
    """The vector max/min and arg-extreme helpers read only their runs, at every length
    around their vector steps and argmax's blocks."""
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "uint64"])
def test_float_sums_into_integers_convert_as_numpy(dtype):
    """A float reduction accumulated or returned in an integer dtype converts each NaN,
    infinity and out-of-range value as numpy's astype (float_to_int.h), where C's own
    conversion is undefined: plain and fused reductions. (uint32 is left out: numpy's own
    reduce converts out-of-range values to it otherwise than its astype, see
    float_to_int.h.)"""
    x = T.dvector("x")
    values = np.array([np.nan, 1e20, -3.7, 2.5, -np.inf, 4e9, -1e19])
    outputs = [x.sum(dtype=dtype), x.sum(acc_dtype=dtype), (x * 2).sum(dtype=dtype),
               T.max(x * 1.5, axis=0).astype(dtype)]
    compare_backends(outputs, [x], [values])


def test_reductions_of_any_rank_and_axes_share_one_op_unit():
    """A reduction's rank, axes and message are its table in the main unit, not its op unit's
    text: Sum over axis 0 of a matrix and over (0, 2, 3) of a 4-d tensor (and max, which
    checks for an empty axis, over 1 and over everything) compile one op unit per kind."""
    from sympile.link.c.codegen import plan_module

    matrix, tensor4 = T.fmatrix("m"), T.ftensor4("t")
    outputs = [matrix.sum(axis=0), tensor4.sum(axis=(0, 2, 3)), matrix.max(axis=1),
               tensor4.max(), T.argmax(matrix, axis=0), T.argmax(tensor4, axis=2)]
    nodes = [output.owner for output in outputs]
    plan = plan_module([matrix, tensor4, *outputs], nodes, outputs)
    assert len({plan_node.code.data for plan_node in plan.nodes}) == len(nodes)
    functions = {plan_node.function for plan_node in plan.nodes}
    assert len(functions) == 3  # sum, max, argmax
    function = compile_c([matrix, tensor4], outputs)
    rng = np.random.default_rng(3)
    m = rng.standard_normal((3, 4)).astype("float32")
    t = rng.standard_normal((2, 3, 4, 5)).astype("float32")
    expected = [m.sum(axis=0), t.sum(axis=(0, 2, 3)), m.max(axis=1), t.max(),
                m.argmax(axis=0), t.argmax(axis=2)]
    for actual, wanted in zip(function(m, t), expected):
        assert_like_numpy(np.asarray(actual), wanted, rtol=1e-5)
    with pytest.raises(ValueError, match="empty"):
        function(np.zeros((3, 0), "float32"), t)
