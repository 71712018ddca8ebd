"""Elemwise and DimShuffle on the C backend (sympile.tensor.elemwise.elemwise_c): broadcasting,
0-d and empty arrays, non-contiguous inputs, changing shapes (output buffer reuse), inplace
outputs, shape errors, fused Composite loops, several outputs, the OpenMP path, DimShuffle
views, and the elementwise gradient graphs, all compared with the Python backend."""

from __future__ import annotations

import weakref

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.gradient import _symbolic_point, grad
from sympile.scalar import basic as scalar
from sympile.scalar import c_rules
from sympile.scalar.composite import Composite
from sympile.tensor.elemwise import DimShuffle, Elemwise
from sympile.tensor.elemwise.elemwise_c import needs_strided_kernel
from sympile.tensor.shape import specify_shape
from tests.link.c.utils import (
    C_MODE,
    PYTHON_MODE,
    assert_clean_under_address_sanitizer,
    compare_backends,
    compile_c,
    requires_compiler,
)
from tests.utils import assert_like_numpy

pytestmark = requires_compiler

C_PLAIN = Mode(None, backend="c", name="C_PLAIN")
PYTHON_PLAIN = Mode(None, backend="python", name="PYTHON_PLAIN")


def _elemwise_nodes(function) -> list:
    return [node for node in function.maker.fgraph.toposort() if isinstance(node.op, Elemwise)]


def _call_both(outputs, inputs, value_sets, mode_c=C_MODE, mode_python=PYTHON_MODE):
    """One C and one Python function; every value set gives equal results on both (the same C
    function called repeatedly, with changing shapes)."""
    c_function = sympile.function(inputs, outputs, mode=mode_c, on_unused_input="ignore")
    python_function = sympile.function(inputs, outputs, mode=mode_python,
                                       on_unused_input="ignore")
    assert c_function._vm.fallback_nodes == []
    results = []
    for values in value_sets:
        actual = c_function(*[np.copy(v) if v.flags.c_contiguous else v for v in values])
        expected = python_function(*values)
        for a, e in zip(actual, expected):
            assert_like_numpy(np.asarray(a), e)
        results.append(actual)
    return c_function, results


def test_broadcasting_0d_and_empty_with_changing_shapes():
    x, y = T.dmatrix("x"), T.dvector("y")
    row, col = T.tensor("float64", shape=(1, None)), T.tensor("float64", shape=(None, 1))
    s = T.dscalar("s")
    outputs = [x + y, x * row - col, col + row, x * s, s * s + 1, T.exp(col) * row * y,
               T.maximum(x, s)]
    rng = np.random.default_rng(0)
    value_sets = []
    for rows, columns in [(3, 4), (3, 4), (1, 5), (0, 4), (3, 0), (7, 1), (2, 3)]:
        value_sets.append([rng.standard_normal((rows, columns)), rng.standard_normal(columns),
                           rng.standard_normal((1, columns)), rng.standard_normal((rows, 1)),
                           np.asarray(rng.standard_normal())])
    function, results = _call_both(outputs, [x, y, row, col, s], value_sets)
    assert results[3][0].shape == (0, 4) and results[4][0].shape == (3, 0)
    assert results[0][4].shape == ()


def test_non_contiguous_inputs_and_collapsed_dimensions():
    """Transposed, reversed and strided inputs, 4-d inputs contiguous in their last axes only
    (collapsed into fewer loops), broadcasting in the middle axis."""
    x, y = T.dmatrix("x"), T.dmatrix("y")
    a = T.tensor("float32", shape=(None, None, None, None))
    middle = T.tensor("float32", shape=(None, 1, None, None))
    outputs = [x * 2 + y, T.sin(x) - y, a + middle, a * a]
    rng = np.random.default_rng(1)
    base = rng.standard_normal((6, 8))
    big = rng.standard_normal((4, 6, 5, 3)).astype("float32")
    value_sets = [
        [base.T[:5, :6], base[::-1, ::-1][:5, :6].T.T, big, big[:, :1]],
        [base[::2, ::3], base[1::2, ::3], big[:, ::2], big[:, 1:2, ::-1]],
        [base[:, 2:5].T, base.T[2:5], big[..., ::2], big[:, 1:2, :, ::2]],
        [np.asfortranarray(base), base, big.transpose(3, 2, 1, 0)[:, :, :, :2],
         big.transpose(3, 2, 1, 0)[:, 2:3, :, 1:3]],
    ]
    for values in value_sets:
        assert values[0].shape == values[1].shape
        assert values[2].shape[:1] + values[2].shape[2:] == \
            values[3].shape[:1] + values[3].shape[2:]
    _call_both(outputs, [x, y, a, middle], value_sets)


def test_graph_transposes_and_slices_feed_the_strided_loop():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    outputs = [x.T + y, x[::2, ::-1] * 3, (x.T * y).dimshuffle(1, 0) + 1]
    rng = np.random.default_rng(2)
    compare_backends(outputs, [x, y], [rng.standard_normal((4, 3)),
                                       rng.standard_normal((3, 4))], require_c=False)


def test_mismatched_lengths_raise_a_value_error_naming_the_op_and_shapes():
    x, y = T.dvector("x"), T.dvector("y")
    f = sympile.function([x, y], x + y, mode=C_PLAIN)
    assert f._vm.fallback_nodes == []
    with pytest.raises(ValueError, match=r"Elemwise\{add,no_inplace\}: input shapes \(3,\), \(4,\) "
                                         r"cannot be "
                                         r"broadcast together \(axis 0 has lengths 3 and 4\)"):
        f(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match=r"Elemwise\{add,no_inplace\}: input shapes \(3,\), \(1,\) "
                                         r"differ at axis 0, "
                                         r"where one input has length 1 at run time"):
        f(np.zeros(3), np.zeros(1))
    m, n = T.dmatrix("m"), T.dmatrix("n")
    g = sympile.function([m, n], m * n, mode=C_PLAIN)
    with pytest.raises(ValueError, match=r"Elemwise\{mul,no_inplace\}: input shapes \(2, 3\), "
                                         r"\(2, 4\) cannot be "
                                         r"broadcast together \(axis 1 has lengths 3 and 4\)"):
        g(np.zeros((2, 3)), np.zeros((2, 4)))
    np.testing.assert_array_equal(f(np.ones(2), np.ones(2)), [2.0, 2.0])


def test_outputs_are_reused_only_when_nobody_holds_them():
    x = T.fvector("x")
    f = sympile.function([x], T.exp(x) * 2, mode=C_PLAIN)
    node = f._vm.nodes[-1]
    cell = f._vm.storage[node.outputs[0]]
    first = f(np.ones(3, dtype="float32"))
    second = f(np.zeros(3, dtype="float32"))
    assert not np.shares_memory(first, second)
    np.testing.assert_allclose(first, np.full(3, 2 * np.e, dtype="float32"), rtol=1e-6)
    np.testing.assert_array_equal(second, np.full(3, 2.0, dtype="float32"))
    intermediate = f._vm.storage[f._vm.nodes[0].outputs[0]]
    kept = weakref.ref(intermediate[0])
    f(np.ones(3, dtype="float32"))
    assert intermediate[0] is kept()
    f(np.ones(5, dtype="float32"))
    assert intermediate[0].shape == (5,)
    assert cell[0] is None or cell[0].shape == (5,)


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_inplace_output_is_written_over_its_input(layout):
    x, y = T.dmatrix("x"), T.dvector("y")
    op = Elemwise(scalar.mul, inplace_pattern=((0, 0),))
    outputs = [op(x, y)]
    c_function = sympile.function([x, y], outputs, mode=C_PLAIN, accept_inplace=True)
    python_function = sympile.function([x, y], outputs, mode=PYTHON_PLAIN, accept_inplace=True)
    assert c_function._vm.fallback_nodes == []
    rng = np.random.default_rng(3)
    base = rng.standard_normal((4, 6))
    vector = rng.standard_normal(3)
    c_input = base.copy()[:, ::2] if layout == "strided" else base.copy()[:, :3].copy()
    python_input = c_input.copy()
    (c_result,) = c_function(c_input, vector)
    (python_result,) = python_function(python_input, vector)
    assert_like_numpy(c_result, python_result)
    assert_like_numpy(c_input, python_input)
    assert_like_numpy(c_input, python_result)


def _has_strided_kernel(variable) -> bool:
    """Whether the kernels of `variable`'s Elemwise node include a strided one."""
    node = variable.owner
    statements = node.op.scalar_op.c_scalar(
        tuple(f"x{i}" for i in range(len(node.inputs))), ("z0",),
        tuple(v.type.dtype for v in node.inputs), (node.outputs[0].type.dtype,)).statements
    has_one = needs_strided_kernel(node, statements)
    assert has_one == any("_strided(int nd" in unit for unit in node.op.c_code(node, None).units)
    return has_one


def test_which_nodes_have_a_strided_kernel():
    """Only a memory-bound computation whose types say an input is broadcast along the rows
    (a value per row) or may be a view has a strided kernel; a computation that calls
    c_fastmath's functions never has one (the run library runs its span in blocks)."""
    x, y, v = T.dmatrix("x"), T.dmatrix("y"), T.dvector("v")
    assert not _has_strided_kernel(x * y + 1)
    assert _has_strided_kernel(x.T * y) and _has_strided_kernel(x * v)
    assert _has_strided_kernel(x * v.dimshuffle(0, "x"))
    assert _has_strided_kernel(x[::2] * 2)
    assert not _has_strided_kernel(x * T.dscalar("s"))
    # A check that passes its input through keeps what is known of its layout.
    assert not _has_strided_kernel(specify_shape(x, (None, 6)) * y)
    assert _has_strided_kernel(specify_shape(x.T, (None, 6)) * y)
    f = T.fmatrix("f")
    assert not _has_strided_kernel(T.tanh(f + T.fvector("b")))
    assert not _has_strided_kernel(T.exp(f.T))


@pytest.mark.parametrize("shape, layout", [
    ((60, 500), "plain"), ((1000, 16), "plain"), ((4000, 3), "plain"), ((3, 9000), "plain"),
    ((60, 500), "transposed"), ((700, 5), "transposed"), ((40, 300), "sliced"),
    ((9, 2, 5000), "sliced"), ((7, 6, 24, 24), "channel"), ((7, 6, 3, 2), "channel"),
    ((700, 400), "transposed"),  # beyond config.openmp_elemwise_minsize: on threads
])
def test_blocks_of_any_layout_give_the_contiguous_kernel_s_bits(shape, layout):
    """Without a strided kernel, the span runs on blocks of any layout (rows of several
    blocks, blocks of several rows, buffers gathered, filled once per row or column, and
    scattered): the same bits as the contiguous kernel on contiguous copies, and numpy's
    values."""
    rng = np.random.default_rng(7)
    ndim = len(shape)
    x = T.tensor("float32", (None,) * ndim, name="x")
    full = T.tensor("float32", (None,) * ndim, name="full")
    if layout == "channel":
        b = T.fvector("b")
        bias, b_value = b.dimshuffle("x", 0, *["x"] * (ndim - 2)), rng.standard_normal(shape[1])
        b_full = np.broadcast_to(b_value[:, None, None], shape)
    else:
        b = T.tensor("float32", (None,), name="b")
        bias, b_value = b, rng.standard_normal(shape[-1])
        b_full = np.broadcast_to(b_value, shape)
    b_value = b_value.astype("float32")
    if layout == "transposed":
        x_value = rng.standard_normal(shape[::-1]).astype("float32")
        x_array, graph_x = x_value.T, x.T
    elif layout == "sliced":
        source = rng.standard_normal((*shape[:-1], 2 * shape[-1])).astype("float32")
        x_value = x_array = source[..., ::2]
        graph_x = x
    else:
        x_value = x_array = rng.standard_normal(shape).astype("float32")
        graph_x = x
    blocks = sympile.function([x, b], [T.tanh(graph_x + bias), T.exp(graph_x) * bias],
                              mode=C_MODE)
    contiguous = sympile.function([x, full], [T.tanh(x + full), T.exp(x) * full], mode=C_MODE)
    assert not any(_has_strided_kernel(node.outputs[0]) for node in _elemwise_nodes(blocks))
    expected = contiguous(np.ascontiguousarray(x_array), np.ascontiguousarray(b_full,
                                                                           dtype="float32"))
    for result, reference, numpy_value in zip(
            blocks(x_value, b_value), expected,
            [np.tanh(x_array + b_full), np.exp(x_array) * b_full]):
        np.testing.assert_array_equal(result, reference)
        np.testing.assert_allclose(result, numpy_value.astype("float32"), rtol=1e-5, atol=1e-6)


def test_blocks_of_many_operands_and_of_outputs_written_over_views():
    """Many transposed operands shrink the blocks to fit their buffers; an output written
    over a view (the user's non-contiguous array) is scattered back into it; a memory-bound
    node without a strided kernel takes any layout the same way."""
    rng = np.random.default_rng(4)
    inputs = [T.dmatrix(f"m{i}") for i in range(24)]
    total = inputs[0]
    for i, m in enumerate(inputs[1:]):
        total = total + T.exp(m) * (i + 1)
    f = sympile.function(inputs, total, mode=C_MODE)
    values = [rng.standard_normal((50, 700)).T for _ in inputs]
    expected = values[0] + sum(np.exp(v) * (i + 1) for i, v in enumerate(values[1:]))
    np.testing.assert_allclose(f(*values), expected, rtol=1e-12)
    x, y = T.dmatrix("x"), T.dmatrix("y")
    base = rng.standard_normal((4, 6))
    plain = sympile.function([x, y], x * y + 1, mode=C_PLAIN)
    assert plain._vm.fallback_nodes == []
    np.testing.assert_array_equal(plain(base[:, ::2], base.T[:3].T), base[:, ::2] * base[:, :3] + 1)
    for scalar_op in (scalar.neg, scalar.exp):
        op = Elemwise(scalar_op, inplace_pattern=((0, 0),))
        g = sympile.function([x], [op(x)], mode=C_PLAIN, accept_inplace=True)
        assert not _has_strided_kernel(g.maker.fgraph.outputs[0])
        target = base.copy()
        (result,) = g(target[:, 1::2])
        expected = base.copy()
        expected[:, 1::2] = -expected[:, 1::2] if scalar_op is scalar.neg \
            else np.exp(expected[:, 1::2])
        np.testing.assert_allclose(target, expected, rtol=1e-15)
        np.testing.assert_array_equal(result, target[:, 1::2])


def test_inplace_over_a_read_only_input_raises():
    x = T.dvector("x")
    op = Elemwise(scalar.neg, inplace_pattern=((0, 0),))
    f = sympile.function([x], op(x), mode=C_PLAIN, accept_inplace=True)
    value = np.ones(3)
    value.setflags(write=False)
    with pytest.raises(ValueError, match="neg_inplace: input 0 is read-only"):
        f(value)


def test_fused_graphs_run_as_one_c_loop():
    """FAST_RUN fuses each tree of elementwise ops into one Elemwise(Composite) node, whose
    loop runs the inner ops' C statements in one pass."""
    x, y = T.fmatrix("x"), T.fvector("y")
    s = T.fscalar("s")
    outputs = [T.exp(-x * x) * T.sin(x) + T.tanh(x) * 0.5,
               T.switch(x > y, T.log1p(T.abs(x)), T.sqr(y) - s) / (1 + T.exp(-y)),
               T.cast(T.floor(x * 10), "int32") % 7 + T.cast(x > 0, "int32")]
    rng = np.random.default_rng(4)
    value_sets = [[rng.standard_normal((5, 7)).astype("float32"),
                   rng.standard_normal(7).astype("float32"), np.asarray(0.5, "float32")]
                  for _ in range(2)]
    value_sets.append([v[::-1] if v.ndim else v for v in value_sets[0]])
    function, _ = _call_both(outputs, [x, y, s], value_sets)
    nodes = _elemwise_nodes(function)
    # Subtrees that broadcast differently from the rest are fused apart.
    assert len(nodes) <= 5
    assert all(isinstance(node.op.scalar_op, Composite) for node in nodes)


def test_nested_composite_and_several_outputs():
    a, b = scalar.get_scalar_type("float64")(), scalar.get_scalar_type("float64")()
    inner = Composite([a, b], [scalar.mul(a, b)])
    c, d = scalar.get_scalar_type("float64")(), scalar.get_scalar_type("float64")()
    both = inner.make_node(c, d).outputs[0]
    outer = Composite([c, d], [scalar.add(both, c), scalar.sub(both, d),
                               scalar.gt(both, scalar.as_scalar(np.float64(0.25)))])
    x, y = T.dmatrix("x"), T.dvector("y")
    outputs = Elemwise(outer)(x, y)
    rng = np.random.default_rng(5)
    _call_both(outputs, [x, y], [[rng.standard_normal((3, 4)), rng.standard_normal(4)],
                                 [rng.standard_normal((2, 2)).T, rng.standard_normal(2)]],
               mode_c=C_PLAIN, mode_python=PYTHON_PLAIN)


def test_openmp_loops_match_the_serial_ones():
    x, y = T.dmatrix("x"), T.dvector("y")
    n = T.lvector("n")
    outputs = [T.exp(x) * y + 1, x.T * 2, n ** 2]
    rng = np.random.default_rng(6)
    with sympile.config.change_flags(openmp=True, openmp_elemwise_minsize=16):
        function, _ = _call_both(outputs, [x, y, n], [
            [rng.standard_normal((40, 30)), rng.standard_normal(30), np.arange(100)],
            [rng.standard_normal((60, 30))[::2], rng.standard_normal(30), np.arange(3)],
        ], mode_c=C_PLAIN, mode_python=PYTHON_PLAIN)
        assert function._vm.plan.openmp
        with pytest.raises(ValueError, match="Integers to negative integer powers"):
            sympile.function([n], n ** (n - 50), mode=C_PLAIN)(np.arange(100))
    with sympile.config.change_flags(openmp=False):
        assert not compile_c([x], [x + 1])._vm.plan.openmp


@pytest.mark.parametrize("static_shape, pattern, value_shape", [
    ((None, None), (1, 0), (3, 4)),
    ((None, None), ("x", 0, "x", 1), (3, 4)),
    ((None, 1, None), (2, 0), (3, 1, 4)),
    ((1, 1), (), (1, 1)),
    ((), ("x", "x"), ()),
    ((None, None, None), (2, "x", 0, 1), (2, 0, 3)),
])
def test_dimshuffle_is_a_c_view(static_shape, pattern, value_shape):
    x = T.tensor("float64", shape=static_shape)
    output = DimShuffle(len(static_shape), pattern)(x)
    f = sympile.function([x], [output, output + 1], mode=C_PLAIN)
    assert f._vm.fallback_nodes == []
    value = np.arange(np.prod(value_shape), dtype="float64").reshape(value_shape)
    for given in (value, value[::-1] if value.ndim else value):
        view, plus_one = f(given)
        expected = DimShuffle(len(static_shape), pattern).perform
        storage = [[None]]
        expected(output.owner, [given], storage)
        assert_like_numpy(view, storage[0][0])
        assert_like_numpy(plus_one, storage[0][0] + 1)
        node = next(n for n in f._vm.nodes if isinstance(n.op, DimShuffle))
        cell_value = f._vm.storage[node.outputs[0]][0]
        assert cell_value is None or np.shares_memory(cell_value, given) or given.size == 0


def _needs_perform(op) -> bool:
    """Whether the scalar op is, or a Composite holds, a deliberate perform() fallback: an
    op without C code or a float16 value."""
    if isinstance(op, Composite):
        return any(_needs_perform(node.op) or any(v.type.dtype == "float16"
                                                  for v in node.inputs + node.outputs)
                   for node in op.nodes)
    return op in c_rules.NO_C_CODE


def _gradient_cases():
    from tests.tensor.elemwise.test_grad import GRAD_CASES
    rng = np.random.default_rng(7)
    inputs, outputs, values = [], [], []
    for case in GRAD_CASES:
        point, variables = _symbolic_point(case.make_point(rng), "gradient test")
        output = case.fun(*variables)
        outputs += grad(output.sum(), variables, disconnected_inputs="ignore")
        inputs += variables
        values += point
    return inputs, outputs, values


def test_elementwise_gradient_graphs_match_the_python_backend():
    """The gradient table of tests/tensor/elemwise/test_grad.py (checked numerically on the
    Python backend there): every gradient, compiled into one C function."""
    inputs, outputs, values = _gradient_cases()
    c_function = compile_c(inputs, outputs)
    python_function = sympile.function(inputs, outputs, mode=PYTHON_MODE,
                                       on_unused_input="ignore")
    fallbacks = [node for node in c_function._vm.fallback_nodes
                 if isinstance(node.op, Elemwise) and not _needs_perform(node.op.scalar_op)]
    assert fallbacks == []
    for actual, expected in zip(c_function(*values), python_function(*values)):
        assert_like_numpy(np.asarray(actual), expected)


def test_specify_shape_row_broadcasts_in_c():
    x = T.dmatrix("x")
    r = specify_shape(T.dmatrix("r"), (1, None))
    compare_backends([x + r, x * r.T.T], [x, r.owner.inputs[0]],
                     [np.ones((3, 4)), np.arange(4.0).reshape(1, 4)], require_c=False)


SANITIZED_SCRIPT = """
import numpy as np
import pytest
import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.scalar import basic as scalar
from sympile.tensor.elemwise import Elemwise
from tests.link.c.utils import compile_c

x, y, n = T.dmatrix("x"), T.dvector("y"), T.lvector("n")
outputs = [T.exp(-x * x) * T.sin(x) + y, x.T * 2 - 1, x[::2, ::-1] + y[::-1],
           n // (n - 3) + n % 4, T.maximum(x, y).dimshuffle(1, "x", 0),
           T.tanh(x.T[::-1] + y.dimshuffle(0, "x")), T.exp(x[:, ::-1] * 0.5) + y]
f = compile_c([x, y, n], outputs)
g = sympile.function([x, y], Elemwise(scalar.add, inplace_pattern=((0, 0),))(x, y),
                     mode=Mode(None, backend="c"), accept_inplace=True)
rng = np.random.default_rng(0)
for shape in [(3, 4), (1, 4), (0, 4), (7, 4), (5, 1), (3, 5000), (900, 9)]:
    f(rng.standard_normal(shape), rng.standard_normal(shape[1]), np.arange(shape[1]))
    g(rng.standard_normal(shape)[:, ::-1], rng.standard_normal(shape[1]))
with pytest.raises(ValueError):
    f(np.zeros((2, 3)), np.zeros(4), np.arange(4))
h = compile_c([n], n ** (n - 2))
with pytest.raises(ValueError):
    h(np.arange(4))
print("clean")
"""


@pytest.mark.slow
def test_elemwise_loops_are_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZED_SCRIPT)


def test_nodes_of_one_computation_share_their_kernels_whatever_their_rank():
    """An Elemwise node compiles no C of its own: the program calls the run library with the
    node's table, and its kernels, a library unit named by their text, serve every node of
    the same computation and broadcast pattern, of any rank."""
    from sympile.link.c import prelude
    from sympile.link.c.codegen import library_unit, plan_module

    nodes = []
    for variable in (T.fvector("v"), T.fmatrix("m"), T.ftensor4("t")):
        out = Elemwise(scalar.add)(variable, variable)
        nodes.append(out.owner)
    codes = [node.op.c_code(node, None) for node in nodes]
    assert all(code.entry and not code.body for code in codes)
    assert len({code.units for code in codes}) == 1
    assert len({code.data for code in codes}) == 3
    variables = [v for node in nodes for v in node.inputs + node.outputs]
    plan = plan_module(variables, nodes, [node.outputs[0] for node in nodes])
    fixed = {prelude.PROGRAM_UNIT, library_unit(prelude.THREAD_GOVERNOR)}
    # Beside the fixed units, the kernels and the run library: no op unit.
    assert [unit for unit in plan.units if unit not in fixed] == [
        library_unit(unit) for unit in codes[0].units]
    m = nodes[1].inputs[0]
    function = sympile.function([m], [T.exp(m) + 1, T.exp(m[:, ::2].T) + 1], mode=C_PLAIN)
    value = np.random.default_rng(6).standard_normal((3, 4)).astype("float32")
    first, second = function(value)
    assert_like_numpy(first, np.exp(value) + np.float32(1))
    assert_like_numpy(second, np.exp(value[:, ::2].T) + np.float32(1))


def test_a_node_wider_than_the_operand_limit_runs_perform():
    """Fusion makes nodes of at most 32 inputs; a wider one built by hand runs perform()
    (the run library keeps its operands on the stack, elemwise_c.OPERAND_LIMIT of them)."""
    from sympile.link.c.codegen import has_c_code
    from sympile.tensor.elemwise.elemwise_c import OPERAND_LIMIT

    scalars = [scalar.get_scalar_type("float64")() for _ in range(OPERAND_LIMIT)]
    total = scalars[0]
    for item in scalars[1:]:
        total = scalar.add(total, item)
    vectors = [T.dvector(f"x{i}") for i in range(OPERAND_LIMIT)]
    wide = Elemwise(Composite(scalars, [total]))(*vectors)
    narrow = Elemwise(Composite(scalars[:-1], [scalar.mul(scalars[0], scalars[-2])]))(*vectors[:-1])
    assert not has_c_code(wide.owner) and has_c_code(narrow.owner)
    function = sympile.function(vectors, [wide, narrow], mode=C_PLAIN)
    assert [len(node.inputs) for node in function._vm.fallback_nodes] == [OPERAND_LIMIT]
    values = [np.full(3, float(i)) for i in range(OPERAND_LIMIT)]
    wide_value, narrow_value = function(*values)
    np.testing.assert_array_equal(wide_value, np.sum(values, axis=0))
    np.testing.assert_array_equal(narrow_value, values[0] * values[-2])
