"""The C backend's module generation and VM, with small ops whose C code lives here (so these
tests do not depend on which library ops have C code)."""

from __future__ import annotations

import warnings
import weakref

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.config import config
from sympile.graph.basic import Apply
from sympile.graph.ccode import CCode
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.op import Op
from sympile.link.c.linker import CVM
from sympile.link.python.vm import PythonVM
from sympile.tensor.variable import as_tensor_variable
from tests.link.c.utils import requires_compiler

# Part of the smoke subset (README: python -m pytest -m smoke).
pytestmark = [requires_compiler, pytest.mark.smoke]


class AddOne(Op):
    """x + 1 for float64 arrays, in C; refuses more than `limit` elements at run time."""

    __props__ = ("limit",)

    def __init__(self, limit: int = 1000):
        self.limit = limit

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + 1

    def c_code(self, node, names):
        if node.inputs[0].type.dtype != "float64":
            return None
        (x,), (z,) = names.inputs, names.outputs
        return CCode(f"""
        npy_intp size = PyArray_SIZE({x});
        if (size > {self.limit}) {{
            PyErr_Format(PyExc_ValueError, "AddOne: %zd elements, at most {self.limit}", size);
            {names.fail}
        }}
        if (sympile_prepare_output(&{z}, PyArray_NDIM({x}), PyArray_DIMS({x}), NPY_FLOAT64))
            {names.fail}
        PyArrayObject *contiguous = (PyArrayObject *)PyArray_GETCONTIGUOUS({x});
        if (contiguous == NULL) {names.fail}
        const double *source = (const double *)PyArray_DATA(contiguous);
        double *target = (double *)PyArray_DATA({z});
        for (npy_intp i = 0; i < size; i++)
            target[i] = source[i] + 1;
        Py_DECREF(contiguous);
        """)


class ScalarSum(Op):
    """sum(x) as a 0-d output whose perform stores a numpy scalar (or, with `wrong`, a
    1-d array): C code reading it must see a 0-d array or a clear error."""

    __props__ = ("wrong",)

    def __init__(self, wrong: bool = False):
        self.wrong = wrong

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [T.TensorType(x.type.dtype, shape=())()])

    def perform(self, node, inputs, output_storage):
        total = inputs[0].sum()
        output_storage[0][0] = np.array([total]) if self.wrong else total


class Twice(Op):
    """2 x, with perform() only: a node the C backend runs through its Python thunk."""

    __props__ = ()

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2


add_one = AddOne()
twice = Twice()


def c_function(inputs, outputs, **kwargs):
    mode = sympile.compile.mode.Mode(None, backend="c")
    return sympile.function(inputs, outputs, mode=mode, **kwargs)


def test_c_nodes_and_perform_nodes_share_storage():
    x = T.dvector("x")
    f = c_function([x], add_one(twice(add_one(x))))
    assert isinstance(f._vm, CVM)
    assert [type(node.op).__name__ for node in f._vm.fallback_nodes] == ["Twice"]
    np.testing.assert_array_equal(f(np.arange(3.0)), [3.0, 5.0, 7.0])


def test_intermediate_buffers_are_reused_and_returned_arrays_never_overwritten():
    x = T.dvector("x")
    f = c_function([x], add_one(add_one(x)))
    first = f(np.zeros(4))
    intermediate = f._vm.storage[f._vm.nodes[0].outputs[0]]
    buffer = weakref.ref(intermediate[0])
    second = f(np.ones(4))
    assert intermediate[0] is buffer()
    np.testing.assert_array_equal(first, np.full(4, 2.0))
    np.testing.assert_array_equal(second, np.full(4, 3.0))
    assert not np.shares_memory(first, second)


def test_a_buffer_someone_else_holds_is_not_reused():
    x = T.dvector("x")
    f = c_function([x], add_one(x), on_unused_input="ignore")
    cell = f._vm.storage[f._vm.nodes[0].outputs[0]]
    held = f(np.zeros(2))
    f(np.ones(2))
    assert cell[0] is not held
    np.testing.assert_array_equal(held, [1.0, 1.0])


@pytest.mark.parametrize("through_perform", [False, True])
def test_a_returned_array_the_caller_let_go_of_is_reused(through_perform):
    """An output the caller dropped is written again by the next call (no new allocation);
    one the caller holds, or holds a view of, never is. Also for an output that perform()
    computes (it may reuse its storage)."""
    x = T.dvector("x")
    f = c_function([x], twice(x) if through_perform else add_one(x))
    expected = (lambda v: 2 * v) if through_perform else (lambda v: v + 1)
    first = weakref.ref(f(np.zeros(1000)))
    dropped = f(np.ones(1000))
    if not through_perform:
        assert dropped is first()
    held = f(np.full(1000, 2.0))
    view = f(np.full(1000, 3.0))[::2]
    latest = f(np.full(1000, 4.0))
    assert not np.shares_memory(held, latest) and not np.shares_memory(view, latest)
    np.testing.assert_array_equal(held, expected(np.full(1000, 2.0)))
    np.testing.assert_array_equal(view, expected(np.full(500, 3.0)))
    np.testing.assert_array_equal(latest, expected(np.full(1000, 4.0)))
    np.testing.assert_array_equal(dropped, expected(np.ones(1000)))


def test_constants_are_read_by_c_code():
    x = T.dvector("x")
    f = c_function([x], add_one(T.constant(np.array([1.0, 2.0]))) + x)
    np.testing.assert_array_equal(f(np.zeros(2)), [2.0, 3.0])


@pytest.mark.parametrize("value", [np.arange(3, dtype="float32"), np.zeros((2, 2)), [1.0, 2.0],
                                   None, "text"])
def test_a_wrong_input_under_trust_input_is_a_type_error_not_a_crash(value):
    x = T.dvector("x")
    f = c_function([x], add_one(x))
    f.trust_input = True
    with pytest.raises(TypeError, match=r"input x .*expected TensorType\(float64"):
        f(value)
    np.testing.assert_array_equal(f(np.zeros(2)), [1.0, 1.0])


def test_a_static_length_is_checked():
    x = T.TensorType("float64", shape=(3,))("x")
    f = c_function([x], add_one(x))
    f.trust_input = True
    with pytest.raises(TypeError, match="expected TensorType"):
        f(np.zeros(4))


def test_an_error_in_c_code_names_the_op_and_the_users_line_and_leaves_shared_state():
    counter = sympile.shared(np.float64(0.0), name="counter")
    x = T.dvector("x")
    y = AddOne(limit=3)(x)
    f = c_function([x], y, updates=[(counter, counter + 1)])
    f(np.zeros(3))
    with pytest.raises(ValueError) as error:
        f(np.zeros(5))
    message = str(error.value)
    assert "AddOne: 5 elements, at most 3" in message
    assert "while computing AddOne" in message and "test_linker.py" in message
    assert error.value.node is y.owner or error.value.node.op == y.owner.op
    assert counter.get_value() == 1.0


def test_fn_n_calls_applies_updates_inside_c_like_the_python_backend():
    results = []
    for backend in ("c", "python"):
        state = sympile.shared(np.zeros(3), name="state")
        mode = sympile.compile.mode.Mode(None, backend=backend)
        f = sympile.function([], add_one(state), updates=[(state, add_one(state))], mode=mode)
        last = f.fn(n_calls=5)
        results.append((last[0], state.get_value()))
    (c_last, c_state), (python_last, python_state) = results
    np.testing.assert_array_equal(c_last, python_last)
    np.testing.assert_array_equal(c_state, python_state)
    np.testing.assert_array_equal(c_state, np.full(3, 5.0))


def test_simultaneous_updates_with_an_aliased_value_are_copied():
    a = sympile.shared(np.zeros(2), name="a")
    b = sympile.shared(np.ones(2), name="b")
    f = c_function([], add_one(a), updates=[(a, b), (b, add_one(a))])
    f.fn(n_calls=3)
    # (a, b): (0, 1) -> (1, 1) -> (1, 2) -> (2, 2)
    np.testing.assert_array_equal(a.get_value(), [2.0, 2.0])
    np.testing.assert_array_equal(b.get_value(), [2.0, 2.0])
    assert not np.shares_memory(a.get_value(borrow=True), b.get_value(borrow=True))


def test_a_numpy_scalar_from_perform_becomes_a_0d_array_for_c_code():
    x = T.dvector("x")
    f = c_function([x], add_one(ScalarSum()(x)))
    result = f(np.arange(4.0))
    assert isinstance(result, np.ndarray) and result.shape == () and result == 7.0


def test_a_perform_result_of_the_wrong_ndim_is_a_type_error_naming_the_op():
    x = T.dvector("x")
    f = c_function([x], add_one(ScalarSum(wrong=True)(x)))
    with pytest.raises(TypeError, match=r"ScalarSum.*perform gave an array of dtype float64 "
                                        r"and shape \(1,\)"):
        f(np.arange(4.0))


def test_equal_graphs_share_one_module():
    x = T.dvector("x")
    first = c_function([x], add_one(x))
    second = c_function([x], add_one(x))
    assert first._vm.module is second._vm.module or \
        first._vm.plan.source == second._vm.plan.source


def test_a_graph_without_c_code_runs_on_the_python_backend():
    x = T.dvector("x")
    f = c_function([x], twice(x))
    assert isinstance(f._vm, PythonVM)


@pytest.mark.parametrize("missing", ["compiler", "headers"])
def test_without_a_toolchain_one_warning_and_the_python_backend(missing, monkeypatch):
    """No compiler, or no Python.h: one warning at the user's line naming the fix, and
    config.backend says what runs from then on."""
    if missing == "headers":
        monkeypatch.setattr(sympile.link.c.cmodule, "_python_headers_present", lambda: False)
    cxx = "" if missing == "compiler" else config.cxx
    x = T.dvector("x")
    with config.change_flags(backend="c", cxx=cxx):
        with pytest.warns(UserWarning, match=r"(compiler|headers).*Python backend.*apt-get "
                                             r"install gcc python3-dev") as record:
            f = sympile.function([x], add_one(x), mode="FAST_RUN")
        assert [w.filename for w in record] == [__file__]
        assert config.backend == "python" and isinstance(f._vm, PythonVM)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            g = sympile.function([x], add_one(x) * 2, mode="FAST_RUN")
        np.testing.assert_array_equal(g(np.ones(2)), [4.0, 4.0])


def test_profile_counts_each_node():
    x = T.dvector("x")
    graph = FunctionGraph([x], [add_one(add_one(x) * 2)], clone=True)
    cell = [np.zeros(3)]
    vm = CVM(graph, [cell], profile=True)
    vm.run(4)
    profile = vm.node_profile()
    assert [calls for _, calls in profile] == [4, 4, 4]
    assert all(seconds >= 0 for seconds, _ in profile)


# A library unit with a counter that the module ticks after every node it runs.
_TICKS_UNIT = """
static long test_ticks;
void test_tick_between_nodes(void) { test_ticks++; }
long test_ticks_so_far(void) { return test_ticks; }
"""


class TicksSoFar(Op):
    """How many nodes the module ran before this one, over every call (CCode.between_nodes:
    test_tick_between_nodes runs after each node); x only orders it after x's nodes."""

    __props__ = ()

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [T.TensorType("int64", shape=())()])

    def c_code(self, node, names):
        (z,) = names.outputs
        return CCode(f"""
        if (sympile_prepare_output(&{z}, 0, NULL, NPY_INT64)) {names.fail}
        *(npy_int64 *)PyArray_DATA({z}) = test_ticks_so_far();
        """, support=("long test_ticks_so_far(void);",), units=(_TICKS_UNIT,),
                     between_nodes=("test_tick_between_nodes",))


def test_between_nodes_functions_run_after_every_node():
    x = T.dvector("x")
    f = c_function([x], TicksSoFar()(add_one(add_one(add_one(x)))))
    assert f._vm.fallback_nodes == []
    # Three nodes before it in the first call; in the second, those of the first call after
    # it (one) and three again.
    assert int(f(np.zeros(2))) == 3
    assert int(f(np.zeros(2))) == 7
