"""The op table on the C backend: every case of the core gradient tables (the GRAD_CASES of
tests/tensor, one per op and index kind) compiled on the C backend and on the Python
reference backend, with its reverse-mode gradient. Outputs must match in shape, dtype and
value; an output must alias an input on the C backend exactly when it does on the reference
one (view_map honoured, no hidden copy, no stray view); and a node may fall back to perform()
only for an op that gives no C code (the table below), so an op whose C code stops applying
is noticed."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import sympile
from sympile.gradient import Lop
from sympile.tensor.type import tensor_type
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler
from tests.utils import GradCase, assert_like_numpy

pytestmark = requires_compiler

# The modules whose tables run here, and their table names.
_TABLES = {
    "basic.test_ops": ("GRAD_CASES",), "blas.test_basic": ("GRAD_CASES",),
    "elemwise.test_grad": ("GRAD_CASES", "DIMSHUFFLE_CASES", "SECOND_ORDER_CASES"),
    "extra_ops.test_ops": ("GRAD_CASES",), "blas.test_gemm": ("GRAD_CASES",),
    "reduction.test_ops": ("GRAD_CASES",), "shape.test_ops": ("GRAD_CASES",),
    "sort.test_ops": ("GRAD_CASES",), "subtensor.test_ops": ("GRAD_CASES",),
    "nnet.test_abstract_conv": ("GRAD_CASES",), "signal.test_pool": ("GRAD_CASES",),
}


def _cases() -> list:
    cases = []
    for module_name, tables in _TABLES.items():
        module = importlib.import_module(f"tests.tensor.{module_name}")
        for table in tables:
            cases += [pytest.param(case, id=f"{module_name.replace('test_', '')}: {case.name}")
                      for case in getattr(module, table)]
    return cases


CASES = _cases()

# Ops without C code yet (perform runs), and Elemwise of dtypes without C arithmetic
# (float16, complex).
PERFORM_OPS = {
    "Elemwise", "MatMul", "TensorDot",
}


def _run(case: GradCase, mode):
    """The case's output and its gradients (projected on fixed weights) on `mode`, with the
    point it ran at and the compiled Function."""
    rng = np.random.default_rng(0)
    point = [np.array(value) for value in case.make_point(rng)]
    inputs = [tensor_type(value.dtype, (None,) * value.ndim)(f"input_{index}")
              for index, value in enumerate(point)]
    output = case.fun(*inputs)
    reference = sympile.function(inputs, output, mode=PYTHON_MODE, on_unused_input="ignore")
    projection = rng.uniform(0.5, 1.5, np.shape(reference(*point))).astype(output.type.dtype)
    gradients = Lop(output, inputs, projection, disconnected_inputs="ignore")
    function = sympile.function(inputs, [output, *gradients], mode=mode,
                                on_unused_input="ignore")
    copies = [value.copy() for value in point]
    return function, copies, function(*copies)


# Compiling the whole table cold takes about 7 minutes on 2 cores (424 modules).
@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_case_matches_the_reference_backend(case):
    c_function, c_point, c_results = _run(case, C_MODE)
    _, python_point, python_results = _run(case, PYTHON_MODE)
    for c_value, python_value in zip(c_results, python_results):
        # float64 to near rounding; other dtypes at assert_like_numpy's tolerance.
        tight = np.asarray(python_value).dtype == np.float64
        assert_like_numpy(np.asarray(c_value), python_value, rtol=1e-9 if tight else None,
                          atol=1e-12 if tight else None)
    # Inputs are never overwritten (none is mutable), and an output aliases an input on
    # both backends or on neither.
    for c_input, python_input in zip(c_point, python_point):
        np.testing.assert_array_equal(c_input, python_input)
    for c_input, python_input in zip(c_point, python_point):
        for c_value, python_value in zip(c_results, python_results):
            assert np.shares_memory(c_value, c_input) == \
                np.shares_memory(python_value, python_input)
    # A graph with no C code at all runs on the Python VM: every node is a fallback.
    fallback_nodes = getattr(c_function._vm, "fallback_nodes", c_function._vm.nodes)
    fallback = {type(node.op).__name__ for node in fallback_nodes}
    assert fallback <= PERFORM_OPS, fallback - PERFORM_OPS
