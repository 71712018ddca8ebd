"""Tests of the sparse updates of sympile/tensor/rewriting/zeros.py,
x -/+ c * inc_subtensor(zeros[index], y) -> inc_subtensor(x[index], -/+c * y), and of their
second pass after the scan rewrites (zeros_after_scan), on which the RNN's
embedding update depends: the graph FAST_RUN compiles, its values against the unrewritten
graph (repeated indices included, Python and C backends), and the updates left alone."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode, get_mode
from sympile.gradient import verify_grad
from sympile.graph.basic import ancestors
from sympile.ifelse import IfElse
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.rewriting import rewrite_db
from sympile.tensor.subtensor import AdvancedIncSubtensor, AdvancedSubtensor, IncSubtensor
from tests.utils import assert_like_numpy

NO_REWRITE = Mode(rewriter=None, name="no rewrite")
RNG = np.random.default_rng(5)

X = T.dmatrix("x")
Y = T.dvector("y")
YS = T.dmatrix("ys")
IX = T.lscalar("i")
INDICES = T.lvector("indices")
SCALE = T.dscalar("scale")
FACTORS = T.dmatrix("factors")
ROW = T.drow("row")
COLUMN = T.dcol("column")
COLUMN_VALUES = T.dvector("column_values")
U8 = T.tensor("uint8", shape=(None, None), name="u8")
U8_ROWS = T.tensor("uint8", shape=(None, None), name="u8_rows")


def _mode(backend: str = "python") -> Mode:
    return Mode(get_mode("FAST_RUN").excluding("fusion", "inplace").rewriter, backend=backend,
                record_history=True)


def _values(inputs, indices=(1, 3, 1)):
    by_name = {"x": RNG.normal(size=(4, 3)), "y": RNG.normal(size=3),
               "ys": RNG.normal(size=(len(indices), 3)), "i": np.int64(2),
               "indices": np.array(indices, dtype="int64"), "scale": np.float64(-0.7),
               "factors": RNG.normal(size=(4, 3)), "row": RNG.normal(size=(1, 3)),
               "column": RNG.normal(size=(4, 1)), "column_values": RNG.normal(size=4),
               "u8": RNG.integers(0, 9, size=(4, 3)).astype("uint8"),
               "u8_rows": RNG.integers(0, 9, size=(len(indices), 3)).astype("uint8")}
    return [by_name[variable.name] for variable in inputs]


def _assert_same_values(fast, inputs, output, indices=(1, 3, 1)):
    values = _values(inputs, indices)
    expected = sympile.function(inputs, output, mode=NO_REWRITE)(*values)
    assert_like_numpy(fast(*values), expected)


def _increments(function) -> list:
    return [node for node in function.maker.fgraph.toposort()
            if isinstance(node.op, (IncSubtensor, AdvancedIncSubtensor))]


SPARSE = [
    # (name, output, inputs, the rule, the increment's class)
    ("x minus lr times rows",
     lambda: X - 0.01 * T.inc_subtensor(T.zeros_like(X)[INDICES], YS), [X, YS, INDICES],
     "local_sub_inc_subtensor_of_zeros", AdvancedIncSubtensor),
    ("x minus rows times lr",
     lambda: X - T.inc_subtensor(T.zeros_like(X)[INDICES], YS) * 0.01, [X, YS, INDICES],
     "local_sub_inc_subtensor_of_zeros", AdvancedIncSubtensor),
    ("x minus rows", lambda: X - T.inc_subtensor(T.zeros_like(X)[INDICES], YS),
     [X, YS, INDICES], "local_sub_inc_subtensor_of_zeros", AdvancedIncSubtensor),
    ("x plus lr times rows",
     lambda: X + (-0.5) * T.inc_subtensor(T.zeros_like(X)[INDICES], YS), [X, YS, INDICES],
     "local_add_inc_subtensor_of_zeros", AdvancedIncSubtensor),
    ("scaled rows plus x",
     lambda: 2.0 * T.inc_subtensor(T.zeros_like(X)[INDICES], YS) + X, [X, YS, INDICES],
     "local_add_inc_subtensor_of_zeros", AdvancedIncSubtensor),
    ("variable scale", lambda: X - SCALE * T.inc_subtensor(T.zeros_like(X)[INDICES], YS),
     [X, YS, INDICES, SCALE], "local_sub_inc_subtensor_of_zeros", AdvancedIncSubtensor),
    ("basic index", lambda: X - 0.1 * T.inc_subtensor(T.zeros_like(X)[IX], Y), [X, Y, IX],
     "local_sub_inc_subtensor_of_zeros", IncSubtensor),
    ("slice", lambda: X + 3.0 * T.inc_subtensor(T.zeros_like(X)[1:3], Y), [X, Y],
     "local_add_inc_subtensor_of_zeros", IncSubtensor),
    ("set basic", lambda: X - 0.1 * T.set_subtensor(T.zeros_like(X)[IX], Y), [X, Y, IX],
     "local_sub_inc_subtensor_of_zeros", IncSubtensor),
    ("set distinct constant rows",
     lambda: X - 0.1 * T.set_subtensor(T.zeros_like(X)[[0, 2, 3]], YS), [X, YS],
     "local_sub_inc_subtensor_of_zeros", AdvancedIncSubtensor),
    ("row of factors, rows",
     lambda: X - ROW * T.inc_subtensor(T.zeros_like(X)[INDICES], YS), [X, YS, INDICES, ROW],
     "local_sub_inc_subtensor_of_zeros", AdvancedIncSubtensor),
    ("rows times row of factors",
     lambda: X + T.inc_subtensor(T.zeros_like(X)[INDICES], YS) * ROW, [X, YS, INDICES, ROW],
     "local_add_inc_subtensor_of_zeros", AdvancedIncSubtensor),
    ("row of factors, one row", lambda: X - ROW * T.inc_subtensor(T.zeros_like(X)[IX], Y),
     [X, Y, IX, ROW], "local_sub_inc_subtensor_of_zeros", IncSubtensor),
    ("row of factors, slice", lambda: X - ROW * T.inc_subtensor(T.zeros_like(X)[1:3], Y),
     [X, Y, ROW], "local_sub_inc_subtensor_of_zeros", IncSubtensor),
    ("accumulator left by scan",
     lambda: X - 0.01 * (T.zeros_like(X).dimshuffle("x", 0, 1)[-1]
                         + T.inc_subtensor(T.zeros_like(X)[INDICES], YS)),
     [X, YS, INDICES], "local_sub_inc_subtensor_of_zeros", AdvancedIncSubtensor),
]


@pytest.mark.parametrize("build, inputs, name, op_class", [case[1:] for case in SPARSE],
                         ids=[case[0] for case in SPARSE])
def test_update_becomes_one_increment_of_x(build, inputs, name, op_class):
    output = build()
    fast = sympile.function(inputs, output, mode=_mode())
    assert name in fast.maker.fgraph.rewrite_history.names()
    (increment,) = _increments(fast)
    assert isinstance(increment.op, op_class) and not increment.op.set_instead_of_inc
    assert increment.inputs[0] is X or increment.inputs[0] in fast.maker.fgraph.inputs[:1]
    # Nothing of x's size is computed but the increment: the scale multiplies y only.
    for node in fast.maker.fgraph.toposort():
        if isinstance(node.op, Elemwise):
            assert fast.maker.fgraph.inputs[0] not in node.inputs
    _assert_same_values(fast, inputs, output)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_repeated_indices_accumulate_scaled(sign):
    output = X + sign * 0.5 * T.inc_subtensor(T.zeros_like(X)[INDICES], YS)
    fast = sympile.function([X, YS, INDICES], output, mode=_mode())
    assert len(_increments(fast)) == 1
    values = [np.zeros((4, 3)), np.ones((3, 3)), np.array([2, 2, 0])]
    expected = np.zeros((4, 3))
    expected[2] = sign * 0.5 * 2
    expected[0] = sign * 0.5
    assert_like_numpy(fast(*values), expected)


def test_c_backend_gives_the_same_values():
    output = X - 0.01 * T.inc_subtensor(T.zeros_like(X)[INDICES], YS)
    fast = sympile.function([X, YS, INDICES], output, mode=_mode("c"))
    (increment,) = _increments(fast)
    assert isinstance(increment.op, AdvancedIncSubtensor)
    _assert_same_values(fast, [X, YS, INDICES], output, indices=(0, 3, 0, 0))


LEFT_ALONE = [
    # A factor per element: c * inc(zeros, y) is not inc(zeros, c[index] * y) for a c the
    # rule would have to index.
    ("factor per element",
     lambda: X - FACTORS * T.inc_subtensor(T.zeros_like(X)[INDICES], YS),
     [X, YS, INDICES, FACTORS]),
    # A column of factors differs from row to row: rows of y would need their own factors.
    ("column of factors",
     lambda: X - COLUMN * T.inc_subtensor(T.zeros_like(X)[INDICES], YS),
     [X, YS, INDICES, COLUMN]),
    # A row of factors for an index of the second axis: the region's rows are x's rows.
    ("row of factors, index of columns",
     lambda: X - ROW * T.inc_subtensor(T.zeros_like(X)[:, IX], COLUMN_VALUES),
     [X, COLUMN_VALUES, IX, ROW]),
    ("set may repeat", lambda: X - 0.1 * T.set_subtensor(T.zeros_like(X)[INDICES], YS),
     [X, YS, INDICES]),
    ("unsigned difference", lambda: U8 - T.inc_subtensor(T.zeros_like(U8)[INDICES], U8_ROWS),
     [U8, U8_ROWS, INDICES]),
    ("x broadcast", lambda: ROW - 0.1 * T.inc_subtensor(T.zeros_like(X)[IX], Y),
     [ROW, X, Y, IX]),
    ("zeros minus", lambda: T.inc_subtensor(T.zeros_like(X)[INDICES], YS) - X,
     [X, YS, INDICES]),
]


@pytest.mark.parametrize("build, inputs", [case[1:] for case in LEFT_ALONE],
                         ids=[case[0] for case in LEFT_ALONE])
def test_left_alone(build, inputs):
    output = build()
    fast = sympile.function(inputs, output, mode=_mode())
    names = fast.maker.fgraph.rewrite_history.names()
    assert "local_sub_inc_subtensor_of_zeros" not in names
    assert "local_add_inc_subtensor_of_zeros" not in names
    _assert_same_values(fast, inputs, output)


# -- after the scan rewrites --------------------------------------------------------------------

def test_zero_rules_run_again_between_scan_and_stabilize():
    names = rewrite_db.names()
    assert names.index("scan") < names.index("zeros_after_scan") < names.index("stabilize")
    assert {"canonicalize", "zeros"} <= rewrite_db.tags_of("zeros_after_scan")


VOCABULARY, HIDDEN, STEPS = 7, 3, 5


def _embedding_rnn(w_uh, w_hh, tokens):
    """The paper's RNN without its output layer: a state of HIDDEN values, the embedding of
    token t added at step t; the cost the sum of the squared states."""
    states, _ = sympile.scan(lambda token, previous, w_hh, w_uh:
                             T.tanh(T.dot(previous, w_hh) + w_uh[token]),
                             sequences=tokens, outputs_info=T.zeros((HIDDEN,), "float64"),
                             non_sequences=[w_hh, w_uh])
    return T.sqr(states).sum()


def _initial_parameters():
    return RNG.normal(size=(VOCABULARY, HIDDEN)), 0.5 * RNG.normal(size=(HIDDEN, HIDDEN))


def _training_step(mode, initial):
    w_uh = sympile.shared(initial[0].copy(), name="w_uh")
    w_hh = sympile.shared(initial[1].copy(), name="w_hh")
    tokens = T.lvector("tokens")
    cost = _embedding_rnn(w_uh, w_hh, tokens)
    grads = sympile.grad(cost, [w_uh, w_hh])
    step = sympile.function([tokens], cost, mode=mode, updates=[
        (w_uh, w_uh - 0.1 * grads[0]), (w_hh, w_hh - 0.1 * grads[1])])
    return step, w_uh, w_hh


def test_rnn_embedding_update_is_sparse():
    step, _, _ = _training_step(Mode(get_mode("FAST_RUN").rewriter, record_history=True),
                                _initial_parameters())
    fgraph = step.maker.fgraph
    assert "local_sub_inc_subtensor_of_zeros" in fgraph.rewrite_history.names()
    by_name = {variable.name: variable for variable in fgraph.inputs}
    embedding, recurrent = by_name["w_uh"], by_name["w_hh"]
    (conditional,) = [node for node in fgraph.toposort() if isinstance(node.op, IfElse)]
    then_slots, else_slots = conditional.op.branch_inputs(conditional)
    # The zero-steps branch keeps the parameters as they are, and computes nothing.
    assert [conditional.inputs[slot] for slot in else_slots] == [embedding, recurrent]
    (increment,) = [node for node in fgraph.toposort()
                    if isinstance(node.op, AdvancedIncSubtensor)
                    and node.inputs[0] is embedding]
    assert increment.outputs[0] is conditional.inputs[then_slots[0]]
    # Nothing else computes an array of the embedding's shape: the only other reader that
    # computes is the gather of the steps' rows (scan_push_out_sequence_gather).
    readers = [node for node in fgraph.toposort()
               if embedding in node.inputs and node is not increment]
    (gather,) = [node for node in readers if isinstance(node.op, AdvancedSubtensor)]
    assert {type(node.op).__name__ for node in readers} <= {
        "IfElse", "Scan", "ShapeI", type(gather.op).__name__}
    assert gather.inputs[0] is embedding
    assert by_name["tokens"] in set(ancestors(gather.inputs[1:]))
    assert not any(type(node.op).__name__ == "Alloc" and node.outputs[0].type.ndim == 2
                   for node in fgraph.toposort())


@pytest.mark.parametrize("tokens", [[1, 4, 1, 1, 6], [3]], ids=["repeated", "one step"])
@pytest.mark.parametrize("backend", ["python", "c"])
def test_rnn_training_step_values(tokens, backend):
    tokens = np.array(tokens, dtype="int64")
    initial = _initial_parameters()
    results = []
    for rewriter in (get_mode("FAST_RUN").rewriter, None,
                     get_mode("FAST_RUN").excluding("zeros", "zeros_after_scan").rewriter):
        step, w_uh, w_hh = _training_step(Mode(rewriter, backend=backend), initial)
        cost = step(tokens)
        results.append((cost, w_uh.get_value(), w_hh.get_value()))
    expected = results[0]
    for other in results[1:]:
        for value, other_value in zip(expected, other):
            assert_like_numpy(np.asarray(value), np.asarray(other_value))


def test_rnn_gradient_numerically():
    tokens = np.array([2, 5, 2, 0], dtype="int64")

    def cost(w_uh, w_hh):
        return _embedding_rnn(w_uh, w_hh, T.constant(tokens))

    verify_grad(cost, [RNG.normal(size=(VOCABULARY, HIDDEN)),
                       0.5 * RNG.normal(size=(HIDDEN, HIDDEN))], rng=3)
