"""OpFromGraph (Theano's theano.OpFromGraph) and compile.ops.as_op."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile import OpFromGraph
from sympile.compile.ops import as_op
from sympile.gradient import verify_grad, verify_rop
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler

MODES = [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler)]
RNG = np.random.default_rng(0)


def _affine():
    x, w = T.dmatrices("x", "w")
    b = T.dvector("b")
    return OpFromGraph([x, w, b], [T.tanh(T.dot(x, w) + b)], name="affine")


@pytest.mark.parametrize("inline", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_op_from_graph_computes_its_graph(inline, mode):
    x, y = T.dmatrices("x", "y")
    op = OpFromGraph([x, y], [x + y, x * y], inline=inline)
    a, b = T.dmatrices("a", "b")
    total, product = op(a, b)
    f = sympile.function([a, b], [total * 2, product], mode=mode)
    left, right = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    doubled, multiplied = f(left, right)
    np.testing.assert_allclose(doubled, 2 * (left + right))
    np.testing.assert_allclose(multiplied, left * right)
    kinds = {type(node.op).__name__ for node in f.maker.fgraph.apply_nodes}
    assert ("OpFromGraph" in kinds) is not inline  # inline: replaced by its inner graph


def test_op_from_graph_gradient_and_rop():
    op = _affine()
    point = [RNG.normal(size=(2, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=4)]
    verify_grad(lambda x, w, b: op(x, w, b).sum(), point)
    verify_rop(lambda x, w, b: op(x, w, b), point)
    # One variable in two input slots: each slot's gradient is its own, not the sum twice.
    x, y = T.dvectors("x", "y")
    square = OpFromGraph([x, y], [x * y])
    v = T.dvector("v")
    np.testing.assert_allclose(sympile.grad(square(v, v).sum(), v).eval({v: [1.0, 3.0]}),
                               [2.0, 6.0])


def test_op_from_graph_shared_variables_are_implicit_inputs():
    w = sympile.shared(np.array([1.0, 2.0]), "w")
    x = T.dvector("x")
    scale = OpFromGraph([x], [x * w])
    v = T.dvector("v")
    f = sympile.function([v], scale(v))
    np.testing.assert_allclose(f([1.0, 1.0]), [1.0, 2.0])
    w.set_value(np.array([3.0, 4.0]))  # the node reads the current value
    np.testing.assert_allclose(f([1.0, 1.0]), [3.0, 4.0])
    np.testing.assert_allclose(sympile.grad(scale(v).sum(), w).eval({v: [5.0, 6.0]}),
                               [5.0, 6.0])


def test_op_from_graph_overrides_and_errors():
    x = T.dvector("x")
    op = OpFromGraph([x], [T.exp(x)],
                     lop_overrides=lambda inputs, outputs, grads: [grads[0] * 10.0])
    v = T.dvector("v")
    np.testing.assert_allclose(sympile.grad(op(v).sum(), v).eval({v: [0.0, 1.0]}),
                               [10.0, 10.0])
    old_style = OpFromGraph([x], [T.exp(x)], grad_overrides=lambda inputs, grads: [grads[0]])
    np.testing.assert_allclose(sympile.grad(old_style(v).sum(), v).eval({v: [0.0]}), [1.0])
    tangent = OpFromGraph([x], [T.exp(x)], rop_overrides=lambda inputs, points: [points[0]])
    np.testing.assert_allclose(sympile.Rop(tangent(v), v, v).eval({v: [2.0]}), [2.0])
    with pytest.raises(TypeError, match=r"input 0 is .* of type TensorType\(float64, matrix\)"):
        op(T.dmatrix())
    with pytest.raises(TypeError, match="expected 1 inputs, got 2"):
        op(v, v)
    y = T.dvector("y")
    with pytest.raises(ValueError, match="depend on y .* not among the inputs"):
        OpFromGraph([x], [x + y])
    with pytest.raises(TypeError, match="must be a symbolic input variable"):
        OpFromGraph([x * 2], [x])
    # Two ops with equal graphs stay two nodes (never merged into one).
    twin_a, twin_b = OpFromGraph([x], [x + 1]), OpFromGraph([x], [x + 1])
    assert twin_a != twin_b


@pytest.mark.parametrize("mode", MODES)
def test_op_from_graph_pickles(mode):
    op = _affine()
    x, w = T.dmatrices("x", "w")
    b = T.dvector("b")
    f = sympile.function([x, w, b], op(x, w, b), mode=mode)
    point = [np.ones((1, 2)), np.ones((2, 2)), np.zeros(2)]
    expected = f(*point)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(f))(*point), expected)


@pytest.mark.parametrize("mode", MODES)
def test_as_op(mode):
    @as_op(itypes=[T.dmatrix], otypes=[T.dvector],
           infer_shape=lambda node, shapes: [(shapes[0][0],)])
    def row_medians(m):
        return np.median(m, axis=1)

    @as_op(itypes=[T.dvector], otypes=[T.dvector, T.lvector])
    def sorted_and_order(v):
        return np.sort(v), np.argsort(v)

    m = T.dmatrix("m")
    v = T.dvector("v")
    f = sympile.function([m, v], [row_medians(m), *sorted_and_order(v),
                                  row_medians(m).shape[0]], mode=mode)
    medians, ordered, order, rows = f([[1.0, 5.0, 2.0], [0.0, -1.0, 9.0]], [3.0, 1.0, 2.0])
    np.testing.assert_array_equal(medians, [2.0, 0.0])
    np.testing.assert_array_equal(ordered, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(order, [1, 2, 0])
    assert rows == 2
    with pytest.raises(sympile.gradient.NullTypeGradError, match="row_medians"):
        sympile.grad(row_medians(m).sum(), m)

    @as_op(itypes=[T.dvector], otypes=[T.dvector])
    def wrong(v):
        return np.array(["a"])

    with pytest.raises(TypeError, match=r"FromFunctionOp\{wrong\}: output 0 of the function"):
        sympile.function([v], wrong(v), mode=mode)([1.0])
    with pytest.raises(TypeError, match="itypes must be a list of Types"):
        as_op(itypes=["float64"], otypes=[T.dvector])
