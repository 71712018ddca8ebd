"""Softmax rewrites: the graph after FAST_RUN holds the fused ops, values equal a stable
float64 numpy reference, and inputs where the naive graph gives inf/nan give finite results."""

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode, get_mode
from sympile.tensor import nnet

NAIVE = Mode(rewriter=None, name="none")


def reference_log_softmax(x):
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def op_types(function):
    return {type(node.op).__name__ for node in function.maker.fgraph.apply_nodes}


def test_log_softmax_rewrite_is_finite_for_large_inputs():
    x = T.dmatrix("x")
    output = T.log(nnet.softmax(x))
    values = np.array([[1000.0, 0.0, -1000.0], [1.0, 2.0, 3.0]])
    rewritten = sympile.function([x], output)
    assert "LogSoftmax" in op_types(rewritten) and "Softmax" not in op_types(rewritten)
    with np.errstate(divide="ignore"):
        naive = sympile.function([x], output, mode=NAIVE)(values)
    assert np.isinf(naive).any()
    np.testing.assert_allclose(rewritten(values), reference_log_softmax(values))


@pytest.mark.parametrize("form", ["log_of_picked", "picked_of_log", "log_softmax",
                                  "categorical"])
def test_crossentropy_and_its_gradient_are_fused_and_finite(form):
    x, y = T.dmatrix("x"), T.lvector("y")
    probabilities = nnet.softmax(x)
    rows = T.arange(y.shape[0])
    if form == "log_of_picked":
        losses = -T.log(probabilities[rows, y])
    elif form == "picked_of_log":
        losses = -T.log(probabilities)[rows, y]
    elif form == "log_softmax":
        losses = -nnet.log_softmax(x)[rows, y]
    else:
        losses = nnet.categorical_crossentropy(probabilities, y)
    cost = losses.mean()
    gradient = sympile.grad(cost, x)
    values = np.array([[1e4, 0.0, 1.0], [1.0, 2.0, 3.0], [0.0, -1e4, 5.0]])
    targets = np.array([1, 2, 1])
    rewritten = sympile.function([x, y], [cost, gradient])
    types = op_types(rewritten)
    assert "CrossentropySoftmax1Hot" in types
    if form != "log_softmax":
        # log_softmax's own gradient is stable already and is left as it is.
        assert "CrossentropySoftmax1HotDx" in types
        assert not types & {"Softmax", "SoftmaxGrad", "AdvancedIncSubtensor"}
        with np.errstate(all="ignore"):
            naive_cost, naive_gradient = sympile.function([x, y], [cost, gradient],
                                                          mode=NAIVE)(values, targets)
        assert not (np.isfinite(naive_cost) and np.isfinite(naive_gradient).all())
    cost_value, gradient_value = rewritten(values, targets)
    log_probabilities = reference_log_softmax(values)
    np.testing.assert_allclose(cost_value, -log_probabilities[np.arange(3), targets].mean())
    expected = (np.exp(log_probabilities) - np.eye(3)[targets]) / 3
    np.testing.assert_allclose(gradient_value, expected, atol=1e-15)


def test_values_unchanged_on_ordinary_inputs():
    rng = np.random.default_rng(0)
    x, y = T.dmatrix("x"), T.lvector("y")
    probabilities = nnet.softmax(x)
    cost = -T.log(probabilities[T.arange(x.shape[0]), y]).sum()
    outputs = [cost, sympile.grad(cost, x), T.log(probabilities)]
    values, targets = rng.standard_normal((5, 4)), rng.integers(0, 4, 5)
    for expected, actual in zip(sympile.function([x, y], outputs, mode=NAIVE)(values, targets),
                                sympile.function([x, y], outputs)(values, targets)):
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_constant_targets_are_fused_and_finite(mode):
    """A constant target vector: arange(y.shape[0]) folds to the constant range(2), which
    the rewrite must still recognise (it once gave inf and a NaN gradient)."""
    x = T.dmatrix("x")
    cost = nnet.categorical_crossentropy(nnet.softmax(x), T.constant([2, 0]))
    values = np.array([[1000.0, 0.0, -1000.0], [0.0, 1.0, 2.0]])
    function = sympile.function([x], [cost, sympile.grad(cost.sum(), x)])
    cost_value, gradient_value = function(values)
    log_probabilities = reference_log_softmax(values)
    np.testing.assert_allclose(cost_value, -log_probabilities[[0, 1], [2, 0]])
    np.testing.assert_allclose(gradient_value,
                               np.exp(log_probabilities) - np.eye(3)[[2, 0]], atol=1e-15)
    assert "CrossentropySoftmax1Hot" in op_types(function)


def test_constant_range_of_another_length_is_not_fused():
    x = T.tensor("float64", shape=(3, None))
    cost = -T.log(nnet.softmax(x)[T.constant([0, 1]), T.constant([2, 0])]).sum()
    assert "CrossentropySoftmax1Hot" not in op_types(sympile.function([x], cost))


def test_constant_range_over_unknown_lengths_is_fused():
    """arange(L) for a known L over logits and targets of unknown length (an RNN's L steps):
    fused, with the values and gradient of the graph as written; targets that the written
    graph would broadcast over the rows raise instead of giving another value."""
    x, y = T.dmatrix("x"), T.lvector("y")
    cost = -T.log(nnet.softmax(x)[T.arange(4), y]).sum()
    function = sympile.function([x, y], [cost, sympile.grad(cost, x)])
    assert {"CrossentropySoftmax1Hot", "CrossentropySoftmax1HotDx"} <= op_types(function)
    assert not {"Softmax", "SoftmaxGrad", "AdvancedIncSubtensor"} & op_types(function)
    rng = np.random.default_rng(8)
    values, targets = rng.standard_normal((4, 6)), np.array([5, 0, 2, 2])
    naive = sympile.function([x, y], [cost, sympile.grad(cost, x)], mode=NAIVE)
    for actual, expected in zip(function(values, targets), naive(values, targets)):
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError):
        function(values, targets[:1])


def test_arange_of_another_length_is_not_fused():
    x, y, n = T.dmatrix("x"), T.lvector("y"), T.lscalar("n")
    cost = -T.log(nnet.softmax(x)[T.arange(n), y]).sum()
    assert "CrossentropySoftmax1Hot" not in op_types(sympile.function([x, y, n], cost))


def test_softmax_is_recognised_and_stable():
    x = T.dmatrix("x")
    shifted = T.exp(x - x.max(axis=1, keepdims=True))
    exps = T.exp(x)
    outputs = [shifted / shifted.sum(axis=1, keepdims=True), exps / exps.sum(axis=0, keepdims=True)]
    rewritten = sympile.function([x], outputs)
    softmax_axes = sorted(node.op.axis for node in rewritten.maker.fgraph.apply_nodes
                          if isinstance(node.op, nnet.Softmax))
    assert softmax_axes == [0, 1]
    assert "CAReduce" not in op_types(rewritten)
    values = np.array([[1000.0, 0.0], [999.0, -5.0]])
    with np.errstate(all="ignore"):
        naive = sympile.function([x], outputs[1], mode=NAIVE)(values)
    assert np.isnan(naive).any()
    by_rows, by_columns = rewritten(values)
    np.testing.assert_allclose(by_rows, np.exp(reference_log_softmax(values)))
    np.testing.assert_allclose(by_columns, np.exp(reference_log_softmax(values.T)).T)


def test_softmax_rule_needs_the_same_axis():
    x = T.dmatrix("x")
    exps = T.exp(x - x.max(axis=0, keepdims=True))
    output = exps / exps.sum(axis=1, keepdims=True)
    rewritten = sympile.function([x], output)
    values = np.random.default_rng(1).standard_normal((3, 4))
    np.testing.assert_allclose(rewritten(values), sympile.function([x], output, mode=NAIVE)(values))


def test_mlp_gradient_graph_shrinks_and_keeps_its_values():
    rng = np.random.default_rng(3)
    x, y = T.fmatrix("x"), T.lvector("y")
    sizes = [12, 8, 8, 5]
    params = [T.fmatrix("W0"), T.fvector("b0"), T.fmatrix("W1"), T.fvector("b1"),
              T.fmatrix("W2"), T.fvector("b2")]
    activation = x
    for layer in range(3):
        activation = T.dot(activation, params[2 * layer]) + params[2 * layer + 1]
        activation = T.tanh(activation) if layer < 2 else activation
    cost = -T.log(nnet.softmax(activation))[T.arange(y.shape[0]), y].mean()
    outputs = [cost, *sympile.grad(cost, params)]
    values = [rng.standard_normal((6, 12)).astype("float32"), rng.integers(0, 5, 6)]
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        values += [rng.standard_normal((fan_in, fan_out)).astype("float32"),
                   rng.standard_normal(fan_out).astype("float32")]
    naive = sympile.function([x, y, *params], outputs, mode=NAIVE)
    rewritten = sympile.function([x, y, *params], outputs)
    assert len(rewritten.maker.fgraph.apply_nodes) < len(naive.maker.fgraph.apply_nodes)
    assert {"CrossentropySoftmax1Hot", "CrossentropySoftmax1HotDx"} <= op_types(rewritten)
    for expected, actual in zip(naive(*values), rewritten(*values)):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


# -- the gradient of softmax written out -> SoftmaxGrad ------------------------------------------

def _softmax_grad_forms(sm, dy, axis):
    return [sm * (dy - (dy * sm).sum(axis=axis, keepdims=True)),
            (dy - (sm * dy).sum(axis=axis, keepdims=True)) * sm]


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("form", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_grad_pattern(axis, form, dtype):
    x, dy = T.matrix("x", dtype=dtype), T.matrix("dy", dtype=dtype)
    output = _softmax_grad_forms(nnet.softmax(x, axis=axis), dy, axis)[form]
    mode = Mode(get_mode("FAST_RUN").excluding("fusion", "inplace").rewriter,
                record_history=True)
    f = sympile.function([x, dy], output, mode=mode)
    assert "local_softmax_grad" in f.maker.fgraph.rewrite_history.names()
    assert sorted(type(node.op).__name__ for node in f.maker.fgraph.apply_nodes) == [
        "Softmax", "SoftmaxGrad"]
    rng = np.random.default_rng(3)
    values = [rng.standard_normal((3, 4)).astype(dtype) for _ in range(2)]
    expected = sympile.function([x, dy], output, mode=NAIVE)(*values)
    result = f(*values)
    assert result.dtype == expected.dtype
    np.testing.assert_allclose(result, expected, rtol=1e-5 if dtype == "float32" else 1e-12,
                               atol=1e-6 if dtype == "float32" else 1e-15)
    # It is the gradient of softmax: <dy, J v> from finite differences.
    x_value = values[0].astype("float64")
    direction = rng.standard_normal((3, 4))
    step = 1e-6

    def softmax(value):
        shifted = np.exp(value - value.max(axis=axis, keepdims=True))
        return shifted / shifted.sum(axis=axis, keepdims=True)
    numeric = (softmax(x_value + step * direction) - softmax(x_value - step * direction)) / (
        2 * step)
    np.testing.assert_allclose(np.sum(result.astype("float64") * direction),
                               np.sum(values[1].astype("float64") * numeric),
                               rtol=1e-4 if dtype == "float32" else 1e-7)


@pytest.mark.parametrize("build", [
    # the sum over another axis than the softmax's
    lambda sm, dy, row: sm * (dy - (dy * sm).sum(axis=0, keepdims=True)),
    # another variable in the sum
    lambda sm, dy, row: sm * (dy - (dy * dy).sum(axis=1, keepdims=True)),
    # dy broadcast along the rows: SoftmaxGrad does not broadcast
    lambda sm, dy, row: sm * (row - (row * sm).sum(axis=1, keepdims=True)),
])
def test_softmax_grad_pattern_left_alone(build):
    x, dy = T.dmatrix("x"), T.dmatrix("dy")
    sm = nnet.softmax(x, axis=1)
    row = T.row("row")
    output = build(sm, dy, row)
    inputs = [v for v in (x, dy, row) if v in sympile.graph.basic.graph_inputs([output])]
    f = sympile.function(inputs, output, mode=Mode(
        get_mode("FAST_RUN").excluding("fusion", "inplace").rewriter, record_history=True))
    assert "local_softmax_grad" not in f.maker.fgraph.rewrite_history.names()
