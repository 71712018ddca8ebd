"""Elemwise on the device against the reference backend (numpy): every scalar op in every
dtype it takes, IEEE special values included, broadcasting, strides and fused graphs."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.gpu import GpuArrayType, emulate
from sympile.gpu.elemwise import collapse_axes
from sympile.gpu.runtime import placement_target
from sympile.scalar.basic import SCALAR_OPS
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.elemwise.elemwise_cuda import elemwise_cuda_kernel

FAST_DTYPES = ("bool", "int64", "float16", "float32", "float64")
ALL_DTYPES = ("bool", "int8", "uint8", "int16", "int32", "int64", "uint32", "uint64",
              "float16", "float32", "float64")
# No C in any backend (scipy only): they stay on the host.
HOST_ONLY = {"erfinv", "erfcinv", "erfcx", "chi2sf", "complex", "complex_from_polar", "j0", "j1",
             "jv", "i0", "i1", "iv"}


def _values(dtype, shape, rng):
    kind = np.dtype(dtype).kind
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind == "u":
        return rng.integers(0, 9, shape).astype(dtype)
    if kind == "i":
        return rng.integers(-6, 7, shape).astype(dtype)
    values = rng.uniform(-3, 3, shape)
    flat = values.reshape(-1)
    flat[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5]
    return values.astype(dtype)


def _cases(dtypes):
    for name, op in sorted(SCALAR_OPS.items()):
        if name in HOST_ONLY:
            continue
        for dtype in dtypes:
            try:
                op.output_dtypes(*[dtype] * op.nin)
            except TypeError:
                continue
            yield pytest.param(name, dtype, id=f"{name}-{dtype}")


def _compare(name, dtype, context):
    op = SCALAR_OPS[name]
    rng = np.random.default_rng(abs(hash((name, dtype))) % 2**32)
    # The first input is a matrix, the others broadcast rows: one kernel, strides 0 and 1.
    # They are device arrays (function inputs of GpuArrayType): integer and bool work on
    # the host's values would stay there.
    shapes = [(None, None)] + [(1, None)] * (op.nin - 1)
    values = [_values(dtype, (5, 7), rng)] + [_values(dtype, (1, 7), rng)
                                              for _ in range(1, op.nin)]
    if name in ("pow", "int_div", "mod") and np.dtype(dtype).kind in "iu":
        values[1] = np.abs(values[1]).astype(dtype)  # negative powers: tested apart
    host_inputs = [T.tensor(dtype, shape) for shape in shapes]
    expected = sympile.function(host_inputs, _outputs(op, host_inputs))(*values)
    device_inputs = [GpuArrayType(dtype, shape, context)() for shape in shapes]
    outputs = _outputs(op, device_inputs)
    with placement_target(context):
        f = sympile.function(device_inputs, outputs)
    assert not any(isinstance(node.op, Elemwise) for node in f.maker.fgraph.apply_nodes), \
        f"{name} {dtype} did not move to the device"
    for got, want, variable in zip(f(*values), expected, outputs):
        assert got.dtype == want.dtype
        assert variable.type.values_eq_approx(got, want, rtol=2e-3 if "float16" in (
            dtype, want.dtype.name) else None), (name, dtype, got, want)


def _outputs(op, inputs):
    outputs = Elemwise(op)(*inputs)
    return outputs if isinstance(outputs, list) else [outputs]


@pytest.mark.parametrize(("name", "dtype"), list(_cases(FAST_DTYPES)))
def test_scalar_op_table(name, dtype, context):
    _compare(name, dtype, context)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "dtype"),
                         [case for case in _cases(ALL_DTYPES)
                          if case.values[1] not in FAST_DTYPES])
def test_scalar_op_table_other_dtypes(name, dtype, context):
    _compare(name, dtype, context)


def test_every_op_with_c_has_a_kernel():
    """A scalar op the CPU backend compiles also compiles for the device (float16 too)."""
    missing = []
    for name, op in SCALAR_OPS.items():
        for dtype in ALL_DTYPES:
            try:
                outputs = op.output_dtypes(*[dtype] * op.nin)
            except TypeError:
                continue
            if name not in HOST_ONLY and elemwise_cuda_kernel(
                    op, [dtype] * op.nin, list(outputs), 1) is None:
                missing.append((name, dtype))
    assert missing == []


def test_fused_graph_with_layouts(context):
    """A fused expression of a transposed matrix, a broadcast column and a scalar, and a
    sliced (strided) input: the kernel's offsets for every operand."""
    x, y = T.dmatrix("x"), T.dcol("y")
    s, v = T.dscalar("s"), T.dvector("v")
    out = T.exp(x.T) * y + s - T.tanh(v[::2]).dimshuffle("x", 0)
    rng = np.random.default_rng(0)
    values = [rng.normal(size=(4, 3)), rng.normal(size=(3, 1)), 1.5, rng.normal(size=8)]
    expected = sympile.function([x, y, s, v], out)(*values)
    with placement_target(context):
        f = sympile.function([x, y, s, v], out)
    np.testing.assert_allclose(f(*values), expected, rtol=1e-13)


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4),
       broadcast=st.lists(st.booleans(), min_size=4, max_size=4),
       permutation=st.permutations(range(4)))
def test_random_layouts(shape, broadcast, permutation):
    """Any shape, broadcast pattern and axis order of the operands gives numpy's result on
    the emulated device (hypothesis)."""
    ndim = len(shape)
    order = [axis for axis in permutation if axis < ndim]
    static = tuple(1 if flag else None for flag in broadcast[:ndim])
    x = T.tensor("float64", (None,) * ndim, name="x")
    y = T.tensor("float64", static, name="y")
    out = (x.dimshuffle(order) + 2 * y.dimshuffle(order)) ** 2
    rng = np.random.default_rng(len(shape))
    xv = rng.normal(size=shape)
    yv = rng.normal(size=tuple(1 if flag else n for flag, n in zip(broadcast, shape)))
    with emulate():
        f = sympile.function([x, y], out)
    expected = (xv.transpose(order) + 2 * yv.transpose(order)) ** 2
    np.testing.assert_allclose(f(xv, yv), expected, rtol=1e-14)


def test_collapse_axes():
    # A C-contiguous (2, 3, 4) and a broadcast row: the first two axes merge for both.
    assert collapse_axes((2, 3, 4), [[12, 4, 1], [0, 0, 1]]) == ([6, 4], [[4, 1], [0, 1]])
    # All contiguous: one axis; length-1 axes dropped; nothing left: one element.
    assert collapse_axes((2, 1, 3), [[3, 3, 1], [3, 3, 1]]) == ([6], [[1], [1]])
    assert collapse_axes((1, 1), [[5, 1]]) == ([1], [[0]])
    # A transposed operand keeps both axes.
    assert collapse_axes((3, 4), [[4, 1], [1, 3]]) == ([3, 4], [[4, 1], [1, 3]])


def test_integer_negative_power_raises(context):
    x, y = T.lvector("x"), T.lvector("y")
    with placement_target(context):
        f = sympile.function([x, y], x ** y)
    np.testing.assert_array_equal(f([2, 3], [3, 2]), [8, 9])
    with pytest.raises(ValueError, match="negative integer powers"):
        f([2, 3], [1, -1])


def test_broadcast_mismatch_names_the_op(context):
    x, y = T.dmatrix("x"), T.dmatrix("y")
    with placement_target(context):
        f = sympile.function([x, y], x * y)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        f(np.ones((2, 3)), np.ones((2, 4)))


def test_empty_arrays(context):
    x = T.fmatrix("x")
    with placement_target(context):
        f = sympile.function([x], T.exp(x) + 1)
    assert f(np.ones((0, 3), "float32")).shape == (0, 3)
