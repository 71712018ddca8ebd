"""Shared test tools: compile-and-compare against numpy, infer_shape checks, strategies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sympile
from sympile.graph.basic import Variable
from sympile.tensor.shape import shape_i
from sympile.tensor.variable import as_tensor_variable

FLOAT_DTYPES = ["float16", "float32", "float64"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
NUMERIC_DTYPES = ["bool"] + INT_DTYPES + FLOAT_DTYPES + ["complex64", "complex128"]

_TOLERANCE = {"float16": 5e-3, "float32": 1e-5, "complex64": 1e-5}


def evaluate(outputs: Variable | Sequence[Variable], inputs: Sequence[Variable] = (),
             values: Sequence[Any] = (), mode: Any = None):
    """Compile `outputs` as a function of `inputs` and call it on `values`."""
    function = sympile.function(list(inputs), outputs, mode=mode, on_unused_input="ignore")
    return function(*values)


def assert_like_numpy(actual: Any, expected: Any, rtol: float | None = None,
                      atol: float | None = None, check_dtype: bool = True) -> None:
    """`actual` equals numpy's `expected`: same shape, same dtype, values equal (floats: close
    at the dtype's precision, NaNs and infinities in the same places)."""
    expected = np.asarray(expected)
    assert isinstance(actual, np.ndarray), f"expected an ndarray, got {type(actual).__name__}"
    assert actual.shape == expected.shape, f"shape {actual.shape} != numpy's {expected.shape}"
    if check_dtype:
        assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != numpy's {expected.dtype}"
    if expected.dtype.kind in "fc":
        tolerance = _TOLERANCE.get(expected.dtype.name, 1e-12)
        np.testing.assert_allclose(actual, expected, rtol=rtol or tolerance,
                                   atol=atol if atol is not None else tolerance, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def check_infer_shape(outputs: Variable | Sequence[Variable], inputs: Sequence[Variable],
                      values: Sequence[Any]) -> None:
    """Each output node's infer_shape, evaluated on `values`, gives the shapes the node
    actually produces."""
    outputs = [outputs] if isinstance(outputs, Variable) else list(outputs)
    for output in outputs:
        node = output.owner
        input_shapes = [tuple(shape_i(v, axis) for axis in range(v.type.ndim))
                        for v in node.inputs]
        inferred = node.op.infer_shape(None, node, input_shapes)
        inferred_output = inferred[output.index]
        assert len(inferred_output) == output.type.ndim, \
            f"{node.op}.infer_shape gave {len(inferred_output)} lengths for a " \
            f"{output.type.ndim}-d output"
        lengths = [as_tensor_variable(length) for length in inferred_output]
        function = sympile.function(list(inputs), [output] + lengths, on_unused_input="ignore")
        actual, *computed = function(*values)
        assert tuple(int(n) for n in computed) == actual.shape, \
            f"{node.op}.infer_shape gives {tuple(int(n) for n in computed)}, the output has " \
            f"shape {actual.shape}"


def shapes(min_dims: int = 0, max_dims: int = 4, min_side: int = 0, max_side: int = 5):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def arrays(dtype: str, shape: Any, elements: Any = None):
    """Finite values of `dtype` (moderate magnitudes unless `elements` is given)."""
    if elements is None:
        kind = np.dtype(dtype).kind
        if kind == "f":
            elements = st.floats(-10, 10, width=np.dtype(dtype).itemsize * 8)
        elif kind == "c":
            elements = st.complex_numbers(max_magnitude=10,
                                          width=np.dtype(dtype).itemsize * 8)
        elif kind in "iu":
            info = np.iinfo(dtype)
            elements = st.integers(max(info.min, -100), min(info.max, 100))
    return hnp.arrays(dtype, shape, elements=elements)


class GradCase:
    """One row of the gradient table: `fun` maps symbolic float inputs to one output, and
    `make_point(rng)` gives the float64 values to check at. `rop=False` only where forward
    mode does not apply (say why in `note`)."""

    def __init__(self, name: str, fun: Any, make_point: Any, rop: bool = True,
                 note: str = "", **tolerances: float):
        self.name, self.fun, self.make_point = name, fun, make_point
        self.rop, self.note, self.tolerances = rop, note, tolerances

    def __repr__(self):
        return self.name


def check_grad_case(case: GradCase, seed: int = 0) -> None:
    """verify_grad, and verify_rop (finite differences and the Lop identity), on `case`."""
    from sympile.gradient import verify_grad, verify_rop
    rng = np.random.default_rng(seed)
    point = case.make_point(rng)
    verify_grad(case.fun, point, rng=rng, **case.tolerances)
    if case.rop:
        verify_rop(case.fun, point, rng=rng, **case.tolerances)
