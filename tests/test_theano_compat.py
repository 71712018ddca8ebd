"""Theano names and forms that ported programs use (issue 17's list, the part built so far):
theano.clone, map/reduce/foldl/foldr, shape_padleft/right/axis, stack's varargs form,
var(corrected=), nonzero/flatnonzero/nonzero_values, xlogx/xlogy0, isclose/allclose,
addbroadcast/unbroadcast/patternbroadcast and shared(broadcastable=)."""

from __future__ import annotations

import numpy as np
import pytest

import sympile as theano
import sympile.tensor as T
from sympile.gradient import verify_grad
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler


def test_clone_with_replacements_and_strictness():
    x, y = T.dvector("x"), T.dvector("y")
    doubled = theano.clone(x * 2, replace={x: y})
    np.testing.assert_allclose(theano.function([y], doubled)([1.0, 2.0]), [2.0, 4.0])
    with pytest.raises(TypeError, match="clone: .* replaces x but its type"):
        theano.clone(x * 2, replace={x: T.fvector()})
    single = T.fvector("f")
    relaxed = theano.clone(x * 2, replace={x: single}, strict=False)
    np.testing.assert_allclose(theano.function([single], relaxed)(np.ones(2, "float32")),
                               [2.0, 2.0])
    with pytest.raises(NotImplementedError, match="share_inputs=False"):
        theano.clone(x, share_inputs=False)


def test_map_reduce_and_folds():
    x = T.dvector("x")
    zero = T.constant(0.0, dtype="float64")
    doubled, _ = theano.map(lambda v: v * 2, sequences=[x])
    total, _ = theano.reduce(lambda v, acc: acc + v, sequences=[x], outputs_info=zero)
    left, _ = theano.foldl(lambda v, acc: acc * 10 + v, sequences=[x], outputs_info=zero)
    right, _ = theano.foldr(lambda v, acc: acc * 10 + v, sequences=[x], outputs_info=zero)
    values = theano.function([x], [doubled, total, left, right])([1.0, 2.0, 3.0])
    np.testing.assert_allclose(values[0], [2.0, 4.0, 6.0])
    assert values[1:] == [6.0, 123.0, 321.0]
    tripled, _ = theano.map(lambda v: v * 3, sequences=[x], mode="FAST_COMPILE")
    assert [node.op.mode for node in theano.graph.basic.toposort(tripled)
            if isinstance(node.op, theano.scan_module.Scan)] == ["FAST_COMPILE"]
    np.testing.assert_allclose(theano.function([x], tripled)([1.0, 2.0]), [3.0, 6.0])


def test_shape_padding_stack_and_corrected_var():
    x = T.dmatrix("x")
    assert T.shape_padleft(x, 2).type.shape == (1, 1, None, None)
    assert T.shape_padright(x).type.shape == (None, None, 1)
    assert T.shape_padaxis(x, 1).type.shape == (None, 1, None)
    assert T.shape_padaxis(x, -1).type.shape == (None, None, 1)
    stacked = T.stack(x, x * 2, x * 3)
    value = np.arange(4.0).reshape(2, 2)
    np.testing.assert_allclose(theano.function([x], stacked)(value),
                               np.stack([value, value * 2, value * 3]))
    np.testing.assert_allclose(theano.function([x], T.var(x, corrected=True))(value),
                               np.var(value, ddof=1))
    with pytest.raises(ValueError, match="corrected=True means ddof=1"):
        T.var(x, ddof=2, corrected=True)


def test_nonzero_family():
    a = T.dmatrix("a")
    value = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    rows, columns = T.nonzero(a)
    outputs = [rows, columns, T.nonzero(a, return_matrix=True), T.flatnonzero(a),
               T.nonzero_values(a)]
    got = theano.function([a], outputs)(value)
    expected_rows, expected_columns = np.nonzero(value)
    np.testing.assert_array_equal(got[0], expected_rows)
    np.testing.assert_array_equal(got[1], expected_columns)
    np.testing.assert_array_equal(got[2], np.array(np.nonzero(value)))
    np.testing.assert_array_equal(got[3], np.flatnonzero(value))
    np.testing.assert_array_equal(got[4], value[value != 0])
    empty = theano.function([a], T.flatnonzero(a))(np.zeros((2, 2)))
    assert empty.shape == (0,) and empty.dtype == np.int64
    with pytest.raises(ValueError, match="nonzero: a must have at least one dimension"):
        T.nonzero(T.dscalar())


def test_xlogx_xlogy0_and_isclose():
    x, y = T.dvector("x"), T.dvector("y")
    values = np.array([0.0, 0.5, 2.0])
    xlogx, xlogy0 = theano.function([x, y], [T.xlogx(x), T.xlogy0(x, y)])(values, values + 1)
    np.testing.assert_allclose(xlogx, [0.0, 0.5 * np.log(0.5), 2 * np.log(2.0)])
    np.testing.assert_allclose(xlogy0, [0.0, 0.5 * np.log(1.5), 2 * np.log(3.0)])
    verify_grad(T.xlogx, [np.array([0.3, 1.7])], rng=0)
    a = np.array([1.0, np.inf, np.nan, 1e-9, 3.0])
    b = np.array([1.0 + 1e-7, np.inf, np.nan, 0.0, 3.1])
    close = theano.function([x, y], [T.isclose(x, y), T.isclose(x, y, equal_nan=True),
                                     T.allclose(x, y)])(a, b)
    np.testing.assert_array_equal(close[0], np.isclose(a, b))
    np.testing.assert_array_equal(close[1], np.isclose(a, b, equal_nan=True))
    assert bool(close[2]) is bool(np.allclose(a, b))


@pytest.mark.parametrize("mode", [pytest.param(PYTHON_MODE, id="python"),
                                  pytest.param(C_MODE, id="c", marks=requires_compiler)])
def test_broadcast_patterns(mode):
    x = T.dmatrix("x")
    assert T.addbroadcast(x, 0).type.shape == (1, None)
    assert T.unbroadcast(T.addbroadcast(x, 0), 0).type.shape == (None, None)
    assert T.patternbroadcast(T.addbroadcast(x, 0), (False, True)).type.shape == (None, 1)
    row = T.addbroadcast(x, 0)
    f = theano.function([x], [row + T.ones((3, 2)),
                              theano.grad(T.unbroadcast(row, 0).sum() * 2, x)], mode=mode)
    total, gradient = f(np.ones((1, 2)))
    np.testing.assert_allclose(total, np.full((3, 2), 2.0))
    np.testing.assert_allclose(gradient, [[2.0, 2.0]])
    with pytest.raises(ValueError, match="expected shape"):
        f(np.ones((2, 2)))
    bias = theano.shared(np.zeros((1, 3)), broadcastable=(True, False))
    assert bias.type.shape == (1, None)
    with pytest.raises(TypeError, match="expected shape"):
        theano.shared(np.zeros((2, 3)), broadcastable=(True, False))
    with pytest.raises(ValueError, match="unbroadcast: axes"):
        T.unbroadcast(x, 2)


def test_tile_with_ndim():
    """Theano's ndim: the output's rank; reps (a vector of any length up to ndim, or a list)
    padded with leading 1s."""
    x, reps = T.dvector("x"), T.lvector("reps")
    tiled = theano.function([x, reps], T.tile(x, reps, ndim=2))
    np.testing.assert_allclose(tiled([1.0, 2.0], [2, 2]), np.tile([1.0, 2.0], [2, 2]))
    np.testing.assert_allclose(tiled([1.0, 2.0], [3]), np.tile([1.0, 2.0], [1, 3]))
    with pytest.raises(AssertionError, match="tile: reps has more than ndim=2 entries"):
        tiled([1.0, 2.0], [2, 2, 2])
    np.testing.assert_allclose(theano.function([x], T.tile(x, (2, 3), ndim=3))([1.0, 2.0]),
                               np.tile([1.0, 2.0], (1, 2, 3)))
    with pytest.raises(ValueError, match="has more than ndim=1 entries"):
        T.tile(x, (2, 2), ndim=1)
    with pytest.raises(ValueError, match="ndim=1 is less than x's 2 dimensions"):
        T.tile(T.dmatrix(), 2, ndim=1)


def test_batched_tensordot():
    rng = np.random.default_rng(0)
    x, y = T.dtensor3("x"), T.dtensor4("y")
    x_value, y_value = rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 5, 2, 4))
    cases = [
        (T.batched_tensordot(x, y, axes=[[2], [1]]), "bij,bjkl->bikl"),
        (T.batched_tensordot(x, y, axes=[[1, 2], [3, 1]]), "bij,bjki->bk"),
        (T.batched_tensordot(x, y, axes=1), "bij,bjkl->bikl"),
        # One int per side, as numpy's and Theano's tensordot take (issue 39).
        (T.batched_tensordot(x, y, axes=[2, 1]), "bij,bjkl->bikl"),
        (T.batched_tensordot(x, y, axes=(np.int64(1), [3])), "bij,bkli->bjkl"),
    ]
    values = theano.function([x, y], [case for case, _ in cases])(x_value, y_value)
    for value, (_, subscripts) in zip(values, cases):
        np.testing.assert_allclose(value, np.einsum(subscripts, x_value, y_value), rtol=1e-12)
    verify_grad(lambda a, b: T.batched_tensordot(a, b, axes=[[2], [1]]),
                [x_value[:, :2, :3], y_value[:, :3, :, :2]], rng=0)
    with pytest.raises(ValueError, match="must be distinct axes of .* after the batch axis"):
        T.batched_tensordot(x, y, axes=[[0], [1]])
    with pytest.raises(TypeError, match="batched_tensordot: axes must be an int or a pair"):
        T.batched_tensordot(x, y, axes=[1, 2, 3])


def test_batched_dot_of_a_library_through_batched_tensordot():
    """Keras' Theano backend: batched_dot(x, y, axes=[2, 2]) of (B, n, k) and (B, m, k)."""
    rng = np.random.default_rng(1)
    x, y = T.dtensor3("x"), T.dtensor3("y")
    x_value, y_value = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    f = theano.function([x, y], T.batched_tensordot(x, y, axes=[2, 2]))
    np.testing.assert_allclose(f(x_value, y_value),
                               np.einsum("bik,bjk->bij", x_value, y_value), rtol=1e-12)


def test_a_list_holding_slices_indexes_as_a_tuple():
    """Theano's (and numpy's old) rule, which a time-reversal helper relies on."""
    import sympile.tensor.subtensor.ops as subtensor
    x = T.dtensor3("x")
    value = np.arange(24.0).reshape(2, 3, 4)
    subtensor._warned_list_index = False
    with pytest.warns(DeprecationWarning, match=r"write x\[tuple\(index\)\]"):
        reversed_time = x[[slice(None), slice(None, None, -1), slice(None)]]
    np.testing.assert_array_equal(theano.function([x], reversed_time)(value), value[:, ::-1])
    # Once per process, as numpy warned.
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mixed = x[[0, None, Ellipsis]]
    np.testing.assert_array_equal(theano.function([x], mixed)(value), value[0, None, ...])
    # A list of integers stays an integer array index.
    np.testing.assert_array_equal(theano.function([x], x[[1, 0]])(value), value[[1, 0]])


@pytest.mark.parametrize("function, arguments", [
    (T.unbroadcast, (0, 1)),
    (T.addbroadcast, ()),
    (T.patternbroadcast, ((False, False),)),
])
def test_broadcast_functions_that_change_nothing_return_the_variable(function, arguments):
    weights = theano.shared(np.zeros((2, 3)), name="weights")
    same = function(weights, *arguments)
    assert same is weights
    # The library writes the result back as an update target.
    f = theano.function([], [], updates=[(same, same + 1)])
    f()
    np.testing.assert_array_equal(weights.get_value(), np.ones((2, 3)))
    row = T.row("row")
    assert T.addbroadcast(row, 0) is row
    assert T.patternbroadcast(row, (True, False)) is row
    assert T.unbroadcast(row, 1) is row
    assert T.unbroadcast(row, 0) is not row


def test_pprint_is_the_formula_printer():
    x, y = T.dscalar("x"), T.dscalar("y")
    assert theano.printing.pprint(x ** 2 + y) == theano.pp(x ** 2 + y)


def test_softmax_of_a_vector_is_a_row_as_in_theano():
    """RNN-SLU indexes s[:, 0, :] on the scan of per-step softmaxes of vectors."""
    x = T.dvector("x")
    row = T.nnet.softmax(x)
    assert row.type.shape == (1, None)
    logits = np.array([1.0, 2.0, 3.0])
    expected = np.exp(logits) / np.exp(logits).sum()
    for mode in (PYTHON_MODE, C_MODE):
        np.testing.assert_allclose(theano.function([x], row, mode=mode)(logits), [expected])
        np.testing.assert_allclose(
            theano.function([x], T.nnet.log_softmax(x), mode=mode)(logits), [np.log(expected)])
    # An explicit axis keeps the shape (PyTensor's softmax(x, axis)).
    assert T.nnet.softmax(x, axis=-1).type.ndim == 1
    steps, _ = theano.scan(lambda v: T.nnet.softmax(v), sequences=T.dmatrix("m"))
    assert steps.type.ndim == 3 and steps[:, 0, :].type.ndim == 2


def test_rop_reads_every_input_the_function_reads():
    """The tutorial's Rop example: JV does not involve W's value, but function([W, V, x], JV)
    is valid, as in Theano (whose zeros_like tangents read W)."""
    W, V = T.dmatrices("W", "V")
    x = T.dvector("x")
    JV = theano.Rop(T.dot(x, W), W, V)
    for mode in (PYTHON_MODE, C_MODE):
        f = theano.function([W, V, x], JV, mode=mode)
        np.testing.assert_array_equal(f([[1, 1], [1, 1]], [[2, 2], [2, 2]], [0, 1]), [2.0, 2.0])
        assert [type(n.op).__name__ for n in f.maker.fgraph.apply_nodes] == ["Dot"]
    # Still the exact J v, and zero gradient towards the inputs it only reads.
    np.testing.assert_array_equal(theano.grad(JV.sum(), W).eval(
        {W: np.ones((2, 2)), V: np.ones((2, 2)), x: np.ones(2)}), np.zeros((2, 2)))


def test_gradient_markers_are_removed_from_compiled_graphs():
    x = T.dvector("x")
    y = theano.gradient.zero_grad(x) * 2 + theano.gradient.grad_clip(x, -1, 1)
    f = theano.function([x], y, mode=PYTHON_MODE)
    names = {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes}
    assert not names & {"ZeroGrad", "GradClip"}
    np.testing.assert_array_equal(f([1.0, 2.0]), [3.0, 6.0])


@pytest.mark.parametrize("n_steps", [1, 6, 7])
def test_scan_checkpoints_matches_scan(n_steps):
    x, W = T.dmatrix("x"), T.dmatrix("W")
    h0 = T.dvector("h0")

    def step(xt, h, W):
        return T.tanh(T.dot(h, W) + xt)

    full, _ = theano.scan(step, sequences=x, outputs_info=h0, non_sequences=W)
    kept, _ = theano.scan_checkpoints(step, sequences=[x], outputs_info=[h0],
                                      non_sequences=[W], save_every_N=3)
    f = theano.function([x, h0, W], [full, kept, *theano.grad(full[-1].sum(), [W, h0, x]),
                                     *theano.grad(kept[-1].sum(), [W, h0, x])])
    rng = np.random.default_rng(n_steps)
    values, checkpoints, *grads = f(rng.normal(size=(n_steps, 2)), rng.normal(size=2),
                                    rng.normal(size=(2, 2)))
    by_scan, by_checkpoints = grads[:3], grads[3:]
    # The states after steps 3, 6, ... and after the last step.
    expected = values[[*range(2, n_steps, 3)] + ([n_steps - 1] if n_steps % 3 else [])]
    np.testing.assert_allclose(checkpoints, expected)
    for a, b in zip(by_scan, by_checkpoints):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_scan_checkpoints_without_padding_and_errors():
    x = T.dvector("x")
    total, _ = theano.scan_checkpoints(lambda xt, s: s + xt, sequences=[x],
                                       outputs_info=[T.constant(0.0)], save_every_N=2,
                                       padding=False)
    np.testing.assert_allclose(total.eval({x: [1.0, 2.0, 3.0, 4.0]}), [3.0, 10.0])
    with pytest.raises(ValueError, match="save_every_N must be a positive int"):
        theano.scan_checkpoints(lambda xt: xt, sequences=[x], save_every_N=0)
    with pytest.raises(ValueError, match="outputs_info\\[0\\] must be an initial value"):
        theano.scan_checkpoints(lambda xt: xt, sequences=[x], outputs_info=[None])
    with pytest.raises(ValueError, match="give sequences or n_steps"):
        theano.scan_checkpoints(lambda s: s + 1, outputs_info=[T.constant(0.0)])


def test_reduction_axes_may_be_numpy_integer_arrays():
    """Theano's tests pass axes as 0-d numpy arrays (alone, or in a list) and vectors."""
    x = T.dmatrix("x")
    value = np.arange(6.0).reshape(2, 3)
    outputs = [x.sum(axis=np.array(1)), x.max(axis=np.array(0)), x.mean(axis=np.int64(1)),
               x.var(axis=np.array(1)), T.argmax(x, axis=np.array(1)),
               x.sum(axis=np.array([0, 1])), x.mean(acc_dtype="float64"),
               x.min(axis=[np.array(0), np.array(1)])]
    expected = [value.sum(1), value.max(0), value.mean(1), value.var(1), value.argmax(1),
                value.sum(), value.mean(), value.min()]
    for got, want in zip(theano.function([x], outputs)(value), expected):
        np.testing.assert_allclose(got, want)


def test_change_flags_takes_a_dict_or_pairs_and_is_at_the_top():
    with theano.change_flags({"floatX": "float32"}):
        assert theano.config.floatX == "float32"
    with theano.config.change_flags([("floatX", "float32"), ("warn.round", True)]):
        assert theano.config.floatX == "float32" and theano.config.warn.round
    assert theano.config.floatX == "float64" and not theano.config.warn.round
    with pytest.raises(TypeError, match="one dict or list of pairs"):
        theano.config.change_flags({"floatX": "float32"}, {"floatX": "float64"})


def test_verify_grad_takes_numpy_random_itself():
    verify_grad(lambda x: T.tanh(x).sum(), [np.linspace(-1, 1, 4)], rng=np.random)
    verify_grad(lambda x: T.tanh(x).sum(), [np.linspace(-1, 1, 4)],
                rng=np.random.RandomState(3))


def test_plural_constructors_name_one_variable_per_character():
    p, t = T.matrices("pt")
    assert (p.name, t.name) == ("p", "t") and p.type == T.dmatrix().type
    assert [v.name for v in T.fvectors("a, b")] == ["a", "b"]
    assert [v.name for v in T.iscalars("x", "y")] == ["x", "y"]


def test_tensordot_axes_as_a_numpy_array():
    a, b = T.dtensor3("a"), T.dmatrix("b")
    values = [np.random.default_rng(0).random((2, 3, 4)), np.random.default_rng(1).random((4, 5))]
    for axes in (np.array([[2], [0]]), np.array(1)):
        f = theano.function([a, b], T.tensordot(a, b, axes))
        np.testing.assert_allclose(f(*values), np.tensordot(*values, axes))


def test_tensor_type_takes_theanos_signature():
    named = T.TensorType("float64", (False, True), name="MyType")
    assert named.broadcastable == (False, True) and str(named) == "MyType"
    assert named == T.TensorType("float64", (False, True))
    assert named("x").type.ndim == 2


def test_tensor_type_value_comparisons_are_static_as_theano_s():
    """Theano's tests call TensorType.values_eq(a, b) and values_eq_approx(a, b) on the
    class; the tolerance is that of the less precise float dtype of the two."""
    values = np.array([1.0, np.nan])
    assert T.TensorType.values_eq(values, values.copy())
    assert not T.TensorType.values_eq(values, values.astype("float32"))
    single = np.float32([1.0, 2.0])
    assert T.TensorType.values_eq_approx(single, single + np.float32(1e-6))
    assert not T.TensorType.values_eq_approx(single.astype("float64"),
                                             single.astype("float64") + 1e-6)
    assert T.dvector().type.values_eq_approx([1.0], [1.0 + 1e-12])


def test_flatten_s_old_outdim_and_is_flat():
    """Theano's flatten(x, outdim=) (deprecated there too: one DeprecationWarning) and
    is_flat."""
    x = T.dtensor3("x")
    with pytest.warns(DeprecationWarning, match="flatten: outdim is deprecated"):
        flat = T.flatten(x, outdim=2)
    with pytest.warns(DeprecationWarning, match="flatten: outdim is deprecated"):
        method = x.flatten(outdim=2)
    value = np.arange(24.0).reshape(2, 3, 4)
    for result in theano.function([x], [flat, method, x.flatten(2), T.flatten(x)])(value)[:3]:
        np.testing.assert_array_equal(result, value.reshape(2, 12))
    with pytest.raises(ValueError, match="give ndim or its old name outdim, not both"):
        T.flatten(x, ndim=2, outdim=2)
    assert T.is_flat(T.dvector()) and T.is_flat(x, 3) and not T.is_flat(x)
    with pytest.warns(DeprecationWarning, match="is_flat: outdim is deprecated"):
        assert T.is_flat(x, outdim=3)


def test_tensor_basic_holds_what_theano_s_did():
    """Theano's theano.tensor.basic held most of theano.tensor; code imports from there."""
    from sympile.tensor.basic import (
        as_tensor_variable,
        batched_dot,
        constant,
        matrix,
        neg,
        reshape,
        sum,
        vectors,
    )

    assert neg is T.neg and sum is T.sum and batched_dot is T.batched_dot
    assert reshape is T.reshape and as_tensor_variable is T.as_tensor_variable
    a, b = vectors("ab")
    x = matrix("x")
    f = theano.function([a, b, x], [neg(a) + b, sum(x, axis=0) * constant(2.0)])
    values = f([1.0, 2.0], [3.0, 4.0], [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(values[0], [2.0, 2.0])
    np.testing.assert_allclose(values[1], [8.0, 12.0])


def test_crossentropy_softmax_with_bias_family():
    """Theano's crossentropy_softmax_1hot_with_bias, ..._argmax_1hot_with_bias and the
    _dx op, against numpy."""
    x, b, y = T.dmatrix("x"), T.dvector("b"), T.lvector("y")
    loss, probabilities, best = T.nnet.crossentropy_softmax_argmax_1hot_with_bias(x, b, y)
    loss2, _ = T.nnet.crossentropy_softmax_1hot_with_bias(x, b, y)
    dx = T.nnet.crossentropy_softmax_1hot_with_bias_dx(T.ones_like(loss), probabilities, y)
    assert isinstance(dx.owner.op, T.nnet.CrossentropySoftmax1HotWithBiasDx)
    x_value = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    b_value, y_value = np.array([0.1, -0.2, 0.3]), np.array([2, 0])
    results = theano.function([x, b, y], [loss, probabilities, best, loss2, dx])(
        x_value, b_value, y_value)
    logits = x_value + b_value
    softmax = np.exp(logits - logits.max(1, keepdims=True))
    softmax /= softmax.sum(1, keepdims=True)
    nll = -np.log(softmax[np.arange(2), y_value])
    onehot = np.eye(3)[y_value]
    for got, want in zip(results, [nll, softmax, logits.argmax(1), nll, softmax - onehot]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="b must be a vector"):
        T.nnet.crossentropy_softmax_1hot_with_bias(x, x, y)


def test_blas_scipy_ger_ger_destructive_and_gemv_instances():
    """theano.tensor.blas_scipy's ScipyGer instances and T.blas.ger_destructive: a + alpha *
    outer(x, y), new or written over a; T.blas.gemv_no_inplace and gemv_inplace; on both
    backends."""
    import sympile.tensor.blas_scipy as blas_scipy
    from sympile.compile.mode import Mode
    from sympile.tensor.blas import ger_destructive

    a, alpha, x, y = T.dmatrix("a"), T.dscalar("alpha"), T.dvector("x"), T.dvector("y")
    values = [np.ones((2, 3)), 2.0, np.array([1.0, 2.0]), np.array([1.0, 0.0, 3.0])]
    expected = values[0] + 2.0 * np.outer(values[2], values[3])
    assert isinstance(blas_scipy.scipy_ger_inplace, blas_scipy.ScipyGer)
    for backend in ("python", "c"):
        mode = Mode(None, backend=backend)
        new = theano.function([a, alpha, x, y], blas_scipy.scipy_ger_no_inplace(a, alpha, x, y),
                              mode=mode)
        np.testing.assert_array_equal(new(*values), expected)
        gemv = theano.function([a, x, y], T.blas.gemv_no_inplace(x, 0.5, a, y, 0.25),
                               mode=mode)
        np.testing.assert_array_equal(gemv(values[0], values[2], values[3]),
                                      0.5 * values[0] @ values[3] + 0.25 * values[2])
        assert T.blas.gemv_inplace.destroy_map == {0: [0]}
        for op in (blas_scipy.scipy_ger_inplace, ger_destructive):
            written = values[0].copy()
            f = theano.function([a, alpha, x, y], op(a, alpha, x, y), mode=mode,
                                accept_inplace=True)
            np.testing.assert_array_equal(f(written, *values[1:]), expected)
            np.testing.assert_array_equal(written, expected)


def test_nlinalg_and_slinalg_hold_theanos_diagonal_and_kron_names():
    from sympile.tensor import nlinalg, slinalg
    x, v = T.dmatrix("x"), T.dvector("v")
    assert isinstance(nlinalg.extract_diag(x).owner.op, nlinalg.ExtractDiag)
    assert isinstance(nlinalg.alloc_diag(v).owner.op, nlinalg.AllocDiag)
    f = theano.function([x, v], [nlinalg.extract_diag(x), nlinalg.alloc_diag(v),
                                 slinalg.kron(x, x), nlinalg.trace(x)])
    matrix, vector = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0])
    for got, want in zip(f(matrix, vector), [np.diag(matrix), np.diag(vector),
                                             np.kron(matrix, matrix), np.trace(matrix)]):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="not both axes"):
        nlinalg.extract_diag(v)
    # nlinalg's alloc_diag is Theano's vector-only op; eig an op instance, as Theano's.
    with pytest.raises(TypeError, match="alloc_diag: expected a vector"):
        nlinalg.alloc_diag(x)

    class Holder:
        op = nlinalg.eig

    values, vectors = Holder().op(x[:, :2])
    np.testing.assert_allclose(values.eval({x: matrix}), np.linalg.eig(matrix[:, :2])[0])


def test_on_opt_error_raises_warns_or_skips_a_failing_rewrite():
    from sympile.compile.mode import Mode
    from sympile.config import config
    from sympile.graph.rewriting import RewriteErrorWarning, in2out, node_rewriter

    @node_rewriter([T.exp])
    def broken_rewrite(fgraph, node):
        raise RuntimeError("a bug in a rewrite")

    x = T.dvector("x")
    mode = Mode(in2out(broken_rewrite), backend="python")
    with pytest.raises(RuntimeError, match="a bug in a rewrite"):
        theano.function([x], T.exp(x), mode=mode)
    with theano.change_flags(on_opt_error="warn"), \
            pytest.warns(RewriteErrorWarning, match="a bug in a rewrite"):
        f = theano.function([x], T.exp(x), mode=mode)
    np.testing.assert_allclose(f(np.ones(2)), np.exp(np.ones(2)))
    with theano.change_flags(on_opt_error="ignore"):
        theano.function([x], T.exp(x), mode=mode)
    with pytest.raises(ValueError):
        config.on_opt_error = "pdb"


def test_scan_fn_is_the_compiled_inner_function():
    x = T.dvector("x")
    states, _ = theano.scan(lambda xt, h: h + xt, sequences=x, outputs_info=T.zeros(()))
    f = theano.function([x], states)
    scan_node = next(n for n in f.maker.fgraph.apply_nodes if type(n.op).__name__ == "Scan")
    np.testing.assert_allclose(f(np.arange(3.0)), [0.0, 1.0, 3.0])
    inner = scan_node.op.fn
    assert inner is scan_node.op._compiled(scan_node)
    assert any(node.op == T.add or "add" in str(node.op)
               for node in inner.maker.fgraph.apply_nodes)
    assert theano.compile.mode.FAST_COMPILE is theano.compile.mode.get_mode("FAST_COMPILE")


def test_blas_ldflags_is_always_empty_and_says_so():
    from sympile.config import _NOTED
    assert theano.config.blas.ldflags == ""
    with theano.change_flags({"blas.ldflags": ""}):
        assert theano.config.blas.ldflags == ""
    _NOTED.discard("blas.ldflags='-lopenblas'")   # the note is once per process
    with pytest.warns(UserWarning, match="blas.ldflags='-lopenblas' changes nothing"), \
            theano.change_flags({"blas.ldflags": "-lopenblas"}):
        assert theano.config.blas.ldflags == ""
    with pytest.raises(ValueError):
        theano.config.blas.ldflags = 3


def test_configdefaults_widths():
    # The sizes of a pointer and of a C long, in bits.
    assert theano.configdefaults.local_bitwidth() == np.dtype(np.intp).itemsize * 8
    assert theano.configdefaults.python_int_bitwidth() == np.dtype("long").itemsize * 8


def test_as_tensor_variable_of_a_scalar_typed_variable():
    """Theano's: a sympile.scalar variable becomes a 0-d tensor (tensor_from_scalar), so a
    scalar can enter tensor expressions and their gradients."""
    import sympile.scalar as scal

    s = scal.float64("s")
    t = T.as_tensor_variable(s)
    assert isinstance(t.owner.op, T.basic.TensorFromScalar) and t.type.ndim == 0
    f = theano.function([s], [t * 3, theano.grad((t * t).sum(), s)])
    value, gradient = f(2.0)
    assert value == 6.0 and gradient == 4.0
    assert T.as_tensor_variable(scal.constant(56)).eval() == 56


def test_user_default_updates():
    """A shared variable's default_update, as Theano's: applied by every function that uses
    the variable unless no_default_updates (True, or a list holding it) says not to; `del`
    removes it."""
    x, y = theano.shared(0, "x"), theano.shared(1, "y")
    x.default_update = x + 2
    theano.function([], x)()
    assert x.get_value() == 2
    theano.function([], x, no_default_updates=True)()
    theano.function([], x, no_default_updates=[x, y])()
    assert x.get_value() == 2
    theano.function([], x, no_default_updates=[y])()
    assert x.get_value() == 4
    # An explicit update wins over the default one.
    theano.function([], x, updates=[(x, x * 10)])()
    assert x.get_value() == 40
    del x.default_update
    assert x.default_update is None
    theano.function([], x)()
    assert x.get_value() == 40
