"""Tests of local_add_inc_subtensor_of_zeros (sympile/tensor/rewriting/zeros.py):
x + inc_subtensor(zeros[index], y) -> inc_subtensor(x[index], y). The graph FAST_RUN compiles,
its values against the unrewritten graph (repeated indices included), and the sums it must
leave alone."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode, get_mode
from sympile.tensor.elemwise import Elemwise
from sympile.tensor.subtensor import AdvancedIncSubtensor, IncSubtensor
from tests.utils import assert_like_numpy

NAME = "local_add_inc_subtensor_of_zeros"
NO_REWRITE = Mode(rewriter=None, name="no rewrite")
RNG = np.random.default_rng(7)

X = T.dmatrix("x")
Y = T.dvector("y")
YS = T.dmatrix("ys")
IX = T.lscalar("i")
INDICES = T.lvector("indices")
STATIC = T.tensor("float64", shape=(4, 3), name="static")
ROW = T.drow("row")


def _compile(output, inputs):
    mode = Mode(get_mode("FAST_RUN").excluding("fusion", "inplace").rewriter,
                record_history=True)
    return sympile.function(inputs, output, mode=mode)


def _nodes(function) -> list:
    return function.maker.fgraph.toposort()


def _values(inputs, indices=(1, 3, 1)):
    by_name = {"x": RNG.normal(size=(4, 3)), "static": RNG.normal(size=(4, 3)),
               "y": RNG.normal(size=3), "ys": RNG.normal(size=(len(indices), 3)),
               "row": RNG.normal(size=(1, 3)), "i": np.int64(2),
               "indices": np.array(indices, dtype="int64")}
    return [by_name[variable.name] for variable in inputs]


def _assert_same_values(fast, inputs, output):
    values = _values(inputs)
    expected = sympile.function(inputs, output, mode=NO_REWRITE)(*values)
    assert_like_numpy(fast(*values), expected)


REWRITTEN = [
    ("scalar index", lambda: X + T.inc_subtensor(T.zeros_like(X)[IX], Y), [X, Y, IX],
     IncSubtensor),
    ("swapped", lambda: T.inc_subtensor(T.zeros_like(X)[IX], Y) + X, [X, Y, IX], IncSubtensor),
    ("slice", lambda: X + T.inc_subtensor(T.zeros_like(X)[1:3], Y), [X, Y], IncSubtensor),
    ("set basic", lambda: X + T.set_subtensor(T.zeros_like(X)[IX], Y), [X, Y, IX], IncSubtensor),
    ("static zeros", lambda: STATIC + T.inc_subtensor(T.zeros((4, 3), "float64")[IX], Y),
     [STATIC, Y, IX], IncSubtensor),
    ("advanced", lambda: X + T.inc_subtensor(T.zeros_like(X)[INDICES], YS),
     [X, YS, INDICES], AdvancedIncSubtensor),
    ("advanced swapped", lambda: T.inc_subtensor(T.zeros_like(X)[INDICES], YS) + X,
     [X, YS, INDICES], AdvancedIncSubtensor),
    ("set distinct constant", lambda: X + T.set_subtensor(T.zeros_like(X)[[0, 2, 3]], YS),
     [X, YS], AdvancedIncSubtensor),
]


@pytest.mark.parametrize("build, inputs, op_class", [case[1:] for case in REWRITTEN],
                         ids=[case[0] for case in REWRITTEN])
def test_sum_becomes_one_increment(build, inputs, op_class):
    output = build()
    fast = _compile(output, inputs)
    assert NAME in fast.maker.fgraph.rewrite_history.names()
    nodes = _nodes(fast)
    increments = [node for node in nodes if isinstance(node.op, (IncSubtensor,
                                                                 AdvancedIncSubtensor))]
    assert len(increments) == 1 and isinstance(increments[0].op, op_class)
    assert not increments[0].op.set_instead_of_inc
    assert increments[0].inputs[0] in fast.maker.fgraph.inputs
    assert not any(isinstance(node.op, Elemwise) for node in nodes)
    _assert_same_values(fast, inputs, output)


def test_repeated_indices_accumulate():
    output = X + T.inc_subtensor(T.zeros_like(X)[INDICES], YS)
    fast = _compile(output, [X, YS, INDICES])
    values = [np.zeros((4, 3)), np.ones((3, 3)), np.array([1, 1, 1])]
    expected = np.zeros((4, 3))
    expected[1] = 3.0
    assert_like_numpy(fast(*values), expected)


LEFT_ALONE = [
    # set with an index that may repeat: the last write wins, not the sum.
    ("set may repeat", lambda: X + T.set_subtensor(T.zeros_like(X)[INDICES], YS),
     [X, YS, INDICES]),
    ("ignore duplicates may repeat",
     lambda: X + T.inc_subtensor(T.zeros_like(X)[INDICES], YS, ignore_duplicates=True),
     [X, YS, INDICES]),
    # The zeros are float32: y is rounded to float32 before the float64 sum.
    ("zeros of another dtype",
     lambda: X + T.cast(T.inc_subtensor(T.zeros_like(X, "float32")[IX], T.cast(Y, "float32")),
                        "float64"), [X, Y, IX]),
    ("not zeros", lambda: X + T.inc_subtensor(T.ones_like(X)[IX], Y), [X, Y, IX]),
    # x is broadcast to the zeros' shape: the sum is larger than x.
    ("x broadcast", lambda: ROW + T.inc_subtensor(T.zeros_like(X)[IX], Y), [ROW, X, Y, IX]),
]


@pytest.mark.parametrize("build, inputs", [case[1:] for case in LEFT_ALONE],
                         ids=[case[0] for case in LEFT_ALONE])
def test_left_alone(build, inputs):
    output = build()
    fast = _compile(output, inputs)
    assert NAME not in fast.maker.fgraph.rewrite_history.names()
    _assert_same_values(fast, inputs, output)


def test_zeros_of_static_length_one_where_x_has_none():
    zeros = T.zeros((1, 3), "float64")
    output = X + T.inc_subtensor(zeros[0], Y)
    fast = _compile(output, [X, Y])
    assert NAME not in fast.maker.fgraph.rewrite_history.names()
    values = [RNG.normal(size=(4, 3)), RNG.normal(size=3)]
    assert_like_numpy(fast(*values), values[0] + values[1])
