"""Tests of sympile/ifelse.py: values against numpy, laziness on both backends (nodes of the
branch not taken never run), nested and multi-output ifelse, shared subexpressions,
gradients (verify_grad per branch), R_op, an SGD step through ifelse, the profiler, and bad
input."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gradient import verify_grad, verify_rop
from sympile.graph.basic import Apply
from sympile.graph.op import Op
from sympile.ifelse import IfElse, ifelse
from sympile.link.c.cmodule import compiler_available
from tests.link.c.utils import C_MODE, PYTHON_MODE, assert_clean_under_address_sanitizer
from tests.utils import assert_like_numpy, check_infer_shape

CALLS: Counter = Counter()

# Both backends; the C one only with a compiler.
BACKENDS = [pytest.param(PYTHON_MODE, id="python"),
            pytest.param(C_MODE, id="c", marks=pytest.mark.skipif(
                not compiler_available(), reason="no C compiler (config.cxx)"))]


class Counted(Op):
    """x + 1 in perform only (no C code), counting its calls under `label`; fails if
    `fail` so that a run where it should not is an error."""

    __props__ = ("label", "fail")

    def __init__(self, label: str, fail: bool = False):
        self.label, self.fail = label, fail

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        CALLS[self.label] += 1
        if self.fail:
            raise RuntimeError(f"{self.label} ran")
        output_storage[0][0] = inputs[0] + np.ones((), inputs[0].dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


@pytest.fixture(autouse=True)
def reset_calls():
    CALLS.clear()


@pytest.mark.parametrize("mode", BACKENDS)
def test_values_and_only_the_branch_taken_runs(mode):
    a, b = T.dscalars("a", "b")
    x = T.dvector("x")
    out = ifelse(T.lt(a, b), T.exp(Counted("then")(x)).sum(), T.log(Counted("else")(x)).sum())
    f = sympile.function([a, b, x], out, mode=mode)
    values = np.array([0.5, 2.0])
    assert_like_numpy(f(1.0, 2.0, values), np.exp(values + 1).sum())
    assert CALLS == {"then": 1}
    assert_like_numpy(f(3.0, 2.0, values), np.log(values + 1).sum())
    assert CALLS == {"then": 1, "else": 1}


@pytest.mark.parametrize("mode", BACKENDS)
def test_a_failing_branch_not_taken_is_never_run(mode):
    c = T.iscalar("c")
    x = T.fvector("x")
    f = sympile.function([c, x], ifelse(c, x * 2, Counted("boom", fail=True)(x)), mode=mode)
    assert_like_numpy(f(1, np.float32([1, 2])), np.float32([2, 4]))
    with pytest.raises(RuntimeError, match="boom ran"):
        f(0, np.float32([1, 2]))


@pytest.mark.parametrize("mode", BACKENDS)
def test_nested_ifelse_runs_one_leaf(mode):
    c1, c2 = T.bscalars("c1", "c2")
    x = T.dvector("x")
    leaves = {name: Counted(name)(x) * 2 for name in ("aa", "ab", "ba", "bb")}
    out = ifelse(c1, ifelse(c2, leaves["aa"], leaves["ab"]),
                 ifelse(c2, leaves["ba"], leaves["bb"]))
    f = sympile.function([c1, c2, x], out, mode=mode)
    values = np.array([1.0, -2.0])
    for first in (1, 0):
        for second in (1, 0):
            CALLS.clear()
            name = ("a" if first else "b") + ("a" if second else "b")
            assert_like_numpy(f(first, second, values), (values + 1) * 2)
            assert CALLS == {name: 1}


@pytest.mark.parametrize("mode", BACKENDS)
def test_shared_subexpressions_run_once_in_the_main_sequence(mode):
    c = T.dscalar("c")
    x = T.dvector("x")
    shared_by_branches = Counted("both")(x)
    used_outside = Counted("outside")(x)
    out = ifelse(c, shared_by_branches * 2 + used_outside, shared_by_branches - 1)
    f = sympile.function([c, x], [out, used_outside.sum()], mode=mode)
    values = np.array([1.0, 2.0])
    result, total = f(0.0, values)
    assert_like_numpy(result, values)
    assert_like_numpy(total, (values + 1).sum())
    assert CALLS == {"both": 1, "outside": 1}
    result, _ = f(1.0, values)
    assert_like_numpy(result, (values + 1) * 3)
    assert CALLS == {"both": 2, "outside": 2}
    steps = f._vm.plan.steps if mode is C_MODE else f._vm.steps
    main = [f._vm.nodes[step.index].op for step in steps]
    assert Counted("both") in main and Counted("outside") in main


@pytest.mark.parametrize("mode", BACKENDS)
def test_multiple_outputs(mode):
    c = T.iscalar("c")
    x, y = T.fvectors("x", "y")
    n = T.lscalar("n")
    then_values = [x + y, Counted("then")(x), n * 2]
    else_values = [x - y, y * 3, n + 1]
    outputs = ifelse(c, then_values, else_values, name="choice")
    assert isinstance(outputs, list) and len(outputs) == 3
    assert [o.name for o in outputs] == ["choice_0", "choice_1", "choice_2"]
    assert isinstance(ifelse(c, (x, y), (y, x)), tuple)
    f = sympile.function([c, x, y, n], outputs, mode=mode)
    xv, yv = np.float32([1, 2]), np.float32([3, 5])
    for condition in (1, 0):
        expected = [xv + yv, xv + 1, np.int64(14)] if condition else [xv - yv, yv * 3,
                                                                        np.int64(8)]
        for actual, reference in zip(f(condition, xv, yv, 7), expected):
            assert_like_numpy(actual, reference)
    assert CALLS == {"then": 1}


@pytest.mark.parametrize("mode", BACKENDS)
def test_condition_dtypes_nonzero_is_true(mode):
    x = T.dvector("x")
    for condition in (T.bscalar("c"), T.fscalar("c"), T.lscalar("c"), T.scalar("c", "bool")):
        f = sympile.function([condition, x], ifelse(condition, x, -x), mode=mode)
        values = np.array([1.0, 2.0])
        true_value = np.asarray(0.5 if condition.type.dtype == "float32" else 1,
                                condition.type.dtype)
        assert_like_numpy(f(true_value, values), values)
        assert_like_numpy(f(np.zeros((), condition.type.dtype), values), -values)


@pytest.mark.parametrize("mode", BACKENDS)
def test_output_aliasing_an_input_is_copied(mode):
    c = T.iscalar("c")
    x = T.dvector("x")
    f = sympile.function([c, x], ifelse(c, x * 2, x), mode=mode)
    values = np.array([1.0, 2.0])
    result = f(0, values)
    assert_like_numpy(result, values)
    assert not np.shares_memory(result, values)


def test_common_type_and_data_branches():
    c = T.iscalar("c")
    known = T.tensor("float32", shape=(3,), name="known")
    unknown = T.fvector("unknown")
    assert ifelse(c, known, unknown).type.shape == (None,)
    assert ifelse(c, known, known * 2).type.shape == (3,)
    # A number takes the other branch's dtype when that is exact.
    scalar = T.fscalar("s")
    assert ifelse(c, scalar, 0).type.dtype == "float32"
    assert ifelse(c, np.array([1.5, 2]), unknown).type.dtype == "float32"
    with pytest.raises(TypeError, match="different dtypes"):
        ifelse(c, scalar, 0.1)  # 0.1 is not exact in float32
    f = sympile.function([c, scalar], ifelse(c, scalar, 0))
    assert_like_numpy(f(0, np.float32(3)), np.float32(0))
    assert_like_numpy(f(1, np.float32(3)), np.float32(3))
    assert str(IfElse(2, as_view=True, name="pick")) == "IfElse{n_outs=2}{pick}"
    assert str(IfElse(2, name="pick")) == "IfElse{n_outs=2, copy}{pick}"


@pytest.mark.parametrize("mode", [PYTHON_MODE, C_MODE], ids=["python", "c"])
def test_as_view(mode):
    """Theano's IfElse(n, as_view): a view of the chosen value, or (its default) a copy;
    ifelse() builds views. Both give the chosen values on both backends."""
    if mode is C_MODE and not compiler_available():
        pytest.skip("no C compiler")
    c = T.iscalar("c")
    x, y = T.dvectors("xy")
    assert ifelse(c, x, y).owner.op.as_view
    for as_view in (True, False):
        op = IfElse(1, as_view=as_view)
        assert op.as_view is as_view and bool(op.view_map) is as_view
        f = sympile.function([c, x, y], op(c, x * 2, y * 3), mode=mode)
        assert_like_numpy(f(1, np.ones(2), np.ones(2)), np.full(2, 2.0))
        assert_like_numpy(f(0, np.ones(2), np.ones(2)), np.full(2, 3.0))
        value = np.arange(3.0)
        storage = [[None]]
        node = op.make_node(c, x, y)
        op.perform(node, [np.array(1), value, value], storage)
        assert np.shares_memory(storage[0][0], value) is as_view
    with pytest.raises(ValueError, match="gpu=True"):
        IfElse(1, gpu=True)


def test_infer_shape():
    c = T.iscalar("c")
    x, y = T.dmatrices("x", "y")
    out = ifelse(c, x, y.T)
    for condition in (1, 0):
        check_infer_shape(out, [c, x, y], [np.int32(condition), np.ones((2, 3)),
                                           np.ones((4, 5))])


def _branchy(x, y):
    # The condition depends on x only through a comparison: it has no gradient.
    return ifelse(T.lt(x.sum(), 0.0), T.exp(x) * y, (x ** 2).sum() * T.sin(y))


@pytest.mark.parametrize("offset", [-10.0, 10.0], ids=["then", "else"])
def test_gradient_goes_to_the_branch_taken(offset):
    rng = np.random.default_rng(1)
    point = [rng.normal(size=3) + offset, rng.normal(size=3)]
    verify_grad(_branchy, point, rng=rng)
    verify_rop(_branchy, point, rng=rng)


def test_gradient_zero_for_the_branch_not_taken_and_condition_disconnected():
    c = T.dscalar("c")
    x, y = T.dvectors("x", "y")
    cost = ifelse(c, (x ** 2).sum(), (y ** 3).sum())
    grads = sympile.grad(cost, [x, y])
    with pytest.raises(ValueError):
        sympile.grad(cost, c)
    f = sympile.function([c, x, y], grads)
    xv, yv = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    gx, gy = f(1.0, xv, yv)
    assert_like_numpy(gx, 2 * xv)
    assert_like_numpy(gy, np.zeros(2))
    gx, gy = f(0.0, xv, yv)
    assert_like_numpy(gx, np.zeros(2))
    assert_like_numpy(gy, 3 * yv ** 2)


def test_rop_of_one_branch_only():
    c = T.dscalar("c")
    x, y = T.dvectors("x", "y")
    v = T.dvector("v")
    out = ifelse(c, T.exp(x), y)
    tangent = sympile.Rop(out, x, v)
    f = sympile.function([c, x, y, v], tangent)
    xv, yv, vv = np.array([0.5, 1.0]), np.array([2.0, 3.0]), np.array([1.0, -1.0])
    assert_like_numpy(f(1.0, xv, yv, vv), np.exp(xv) * vv)
    assert_like_numpy(f(0.0, xv, yv, vv), np.zeros(2))


@pytest.mark.parametrize("mode", BACKENDS)
def test_sgd_update_through_ifelse(mode):
    rng = np.random.default_rng(3)
    w_start = rng.normal(size=(3, 2))
    w = sympile.shared(w_start.copy(), name="w")
    x = T.dmatrix("x")
    use_square = T.bscalar("use_square")
    prediction = T.dot(x, w)
    cost = ifelse(use_square, (prediction ** 2).mean(), abs(prediction).mean())
    step = sympile.function([use_square, x], cost,
                            updates=[(w, w - 0.1 * sympile.grad(cost, w))], mode=mode)
    xv = rng.normal(size=(4, 3))
    expected_w = w_start.copy()
    for flag in (1, 0, 1):
        p = xv @ expected_w
        expected_cost = (p ** 2).mean() if flag else np.abs(p).mean()
        gradient = xv.T @ (2 * p / p.size if flag else np.sign(p) / p.size)
        assert_like_numpy(step(flag, xv), np.float64(expected_cost))
        expected_w = expected_w - 0.1 * gradient
        np.testing.assert_allclose(w.get_value(), expected_w, rtol=1e-12)


@pytest.mark.parametrize("mode", BACKENDS)
def test_profile_counts_only_the_nodes_that_ran(mode):
    c = T.iscalar("c")
    x = T.dvector("x")
    f = sympile.function([c, x], ifelse(c, Counted("then")(x), Counted("else")(x)),
                         mode=mode, profile=True)
    for condition in (1, 1, 0):
        f(condition, np.ones(2))
    calls = {str(node.op): count for node, _, count, _ in f.profile.node_times()}
    assert calls["Counted{label='then', fail=False}"] == 2
    assert calls["Counted{label='else', fail=False}"] == 1
    assert calls["IfElse{n_outs=1}"] == 3


def test_debug_mode_checks_ifelse():
    c = T.iscalar("c")
    x = T.dvector("x")
    f = sympile.function([c, x], ifelse(c, T.exp(x) * 1, x + 0), mode="DEBUG_MODE")
    assert_like_numpy(f(1, np.array([0.0])), np.array([1.0]))
    assert_like_numpy(f(0, np.array([2.0])), np.array([2.0]))


def test_bad_input():
    c = T.iscalar("c")
    x = T.dvector("x")
    with pytest.raises(TypeError, match="condition must be a scalar"):
        ifelse(T.ivector("v"), x, x)
    with pytest.raises(TypeError, match="different dtypes.*float64.*float32"):
        ifelse(c, x, T.fvector("y"))
    with pytest.raises(TypeError, match="different numbers of dimensions"):
        ifelse(c, x, T.dmatrix("m"))
    with pytest.raises(ValueError, match="then_branch has 2 values and else_branch 1"):
        ifelse(c, [x, x], [x])
    with pytest.raises(ValueError, match="branches are empty"):
        ifelse(c, [], [])
    with pytest.raises(ValueError, match="expected a condition and 2 branch values"):
        IfElse(1)(c, x)
    with pytest.raises(ValueError, match="n_outs must be a positive int"):
        IfElse(0)
    with pytest.raises(TypeError, match="condition must be a scalar tensor"):
        ifelse("yes", x, x)


SANITIZER_SCRIPT = """
import numpy as np
import sympile
import sympile.tensor as T
from tests.link.c.utils import C_MODE
from tests.ifelse.test_basic import Counted

c1, c2 = T.iscalars("c1", "c2")
x = T.dmatrix("x")
inner = sympile.ifelse(c2, T.exp(x) * 2, Counted("thunk")(x))
outer = sympile.ifelse(c1, [inner, x.sum()], [x.T + 1, T.constant(0.0)])
f = sympile.function([c1, c2, x], outer, mode=C_MODE)
for shape in [(3, 4), (0, 2), (5, 5)]:
    for first in (1, 0):
        for second in (1, 0):
            f(first, second, np.ones(shape))
g = sympile.function([c1, x], sympile.ifelse(c1, x, Counted("boom", fail=True)(x)),
                     mode=C_MODE)
g(1, np.ones((2, 2)))
try:
    g(0, np.ones((2, 2)))
except RuntimeError:
    print("clean")
"""


@pytest.mark.slow
@pytest.mark.skipif(not compiler_available(), reason="no C compiler (config.cxx)")
def test_lazy_c_code_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SANITIZER_SCRIPT)
