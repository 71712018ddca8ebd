"""Numerically stabilizing rewrites: formulas that lose precision, overflow or give NaN on
ordinary inputs replaced by equivalent ones that stay finite and accurate.

They run together in stabilize_db, an EquilibriumDatabase registered in rewrite_db as
'stabilize' (tags stabilize, fast_run) in the stabilize phase, after constant folding and
before the final merge:

  local_log1p_exp      log(1 + exp(x)), log1p(exp(x))     -> softplus(x)
  local_log1m_sigmoid  log(1 - sigmoid(x))                -> -softplus(x)
  local_log1mexp       log(1 - exp(x))                    -> log1p(-exp(x)) or log(-expm1(x))
  local_log_sigmoid    log(sigmoid(x))                    -> -softplus(-x)
  local_log_exp        log(exp(x))                        -> x
  local_logsumexp      log(sum(exp(x), axis))             -> logsumexp(x, axis)
                       (x when the sum is over no axis)
  local_log_add_exp    log(exp(x) + exp(y))               -> logaddexp(x, y)
  local_log_erfc       log(erfc(x))                       -> its asymptotic series for large x
  local_log1p          log(1 + x), log(x + 1), log(1 - x) -> log1p(x), log1p(-x)
  local_expm1          exp(x) - 1, exp(x) + -1            -> expm1(x)
  local_1m_sigmoid     1 - sigmoid(x)                     -> sigmoid(-x)
  local_exp_log        exp(log(x)), exp(log1p(x))         -> switch(x >= 0, x, nan),
                                                             switch(x >= -1, 1 + x, nan)
  local_exp_over_1_plus_exp
                       exp(x) / (1 + exp(x)), 1 / (1 + exp(x)) -> sigmoid(x), sigmoid(-x)

Seven of them, each one expression rewritten into another (local_log1p_exp,
local_log1m_sigmoid, local_log_sigmoid, local_log_exp, local_log1p, local_expm1,
local_1m_sigmoid), are written as data, input and output patterns (PatternNodeRewriter,
graph/rewriting/pattern.py); the others compute their replacement (a threshold, a series,
a guard) and are functions.

Each replacement is computed in the dtype of the intermediate it replaces (the dtype of
1 + x for log1p, of exp(x) for expm1, ...) and has exactly the Type of the variable it
replaces (a cast where the dtype differs, specify_shape where the original knows a length
the replacement does not); when that cannot be arranged (a constant of ones that broadcasts
x to a larger shape) the rule does not fire. The rules match real floating-point
intermediates only: on integers 1 + x may wrap around, which the rewritten form would not
reproduce, and complex logarithms have branch cuts.

exp(log(x)) is x only for x >= 0 (exp(log(-1)) is NaN): local_exp_log states that domain in
the graph (a switch to NaN), as PyTensor does, rather than assume it. log(sum(exp(x),
keepdims=True)) (a DimShuffle between the log and the sum) is not matched: logsumexp builds
exactly that shape of graph itself.
"""

from __future__ import annotations

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.graph.rewriting.db import EquilibriumDatabase
from sympile.graph.rewriting.pattern import PatternNodeRewriter
from sympile.scalar import basic as scalar
from sympile.tensor import math
from sympile.tensor.elemwise.ops import Elemwise, is_elemwise_of
from sympile.tensor.reduction import CAReduce, logsumexp
from sympile.tensor.rewriting.basic import rewrite_db
from sympile.tensor.rewriting.matching import (
    as_type_of,
    inputs_of,
    is_constant,
    is_real_float,
    negate,
    one_minus,
    one_plus,
)
from sympile.tensor.variable import constant

__all__ = [
    "local_1m_sigmoid",
    "local_exp_log",
    "local_exp_over_1_plus_exp",
    "local_expm1",
    "local_log1m_sigmoid",
    "local_log1mexp",
    "local_log1p",
    "local_log1p_exp",
    "local_log_add_exp",
    "local_log_erfc",
    "local_log_exp",
    "local_log_sigmoid",
    "local_logsumexp",
    "stabilize_db",
]

# After constant folding, so that constant subexpressions are already single constants,
# and before the final merge, which merges what the rules duplicate.


# -- matching helpers ---------------------------------------------------------------------------

_log = Elemwise(scalar.log)
_log1p = Elemwise(scalar.log1p)
_sub = Elemwise(scalar.sub)
_add = Elemwise(scalar.add)


# -- rules --------------------------------------------------------------------------------------

# -- the rules written as patterns (graph/rewriting/pattern.py) ---------------------------------
# A name in a pattern binds a variable; `_real("e", p)` matches what p matches when it is
# computed in a real float dtype and binds it to e, so that the replacement computes x in e's
# dtype, as the intermediate it replaces did. `_fit` then gives the replacement exactly the
# Type of the variable it replaces. exp(x) etc. may have other users: they keep it.

_exp = Elemwise(scalar.exp)
_sigmoid = Elemwise(scalar.sigmoid)


def _real(name: str | None, pattern):
    constrained = {"pattern": pattern, "constraint": is_real_float}
    return constrained if name is None else {**constrained, "name": name}


def _constant(value: float, name: str):
    return {"pattern": name, "constraint": lambda variable: is_constant(variable, value)}


def _in_dtype_of(x: Variable, intermediate: Variable) -> Variable:
    return math.cast(x, intermediate.type.dtype)


def _fit(replacement: Variable, replaced: Variable) -> Variable | None:
    fitted = as_type_of(replacement, replaced)
    return None if fitted is None else fitted[0]


def _pattern_rule(name: str, in_patterns: list, out_pattern) -> PatternNodeRewriter:
    return PatternNodeRewriter(in_patterns, out_pattern, name=name,
                               allow_multiple_clients=True, adapt=_fit)


_ONE = _constant(1, "one")
_MINUS_ONE = _constant(-1, "minus_one")
_EXP_X = _real("e", (_exp, "x"))
_SIGMOID_X = _real("s", (_sigmoid, "x"))

# exp(x) overflows to inf for x > 709 (float64) although log(1 + exp(x)) is about x;
# softplus is computed as logaddexp(0, x), finite wherever the result is.
local_log1p_exp = _pattern_rule(
    "local_log1p_exp",
    [(_log, _real(None, (_add, _ONE, _EXP_X))), (_log, _real(None, (_add, _EXP_X, _ONE))),
     (_log1p, _EXP_X)],
    (math.softplus, (_in_dtype_of, "x", "e")))

# 1 - sigmoid(x) rounds to 0 for x > 37 (float64), whose log is -inf; the exact value is
# about -x, which -softplus(x) gives.
local_log1m_sigmoid = _pattern_rule(
    "local_log1m_sigmoid", [(_log, _real(None, (_sub, _ONE, _SIGMOID_X)))],
    (math.neg, (math.softplus, (_in_dtype_of, "x", "s"))))

# sigmoid(x) underflows to 0 for x < -745 (float64), whose log is -inf; the exact value is
# about x, which -softplus(-x) gives.
local_log_sigmoid = _pattern_rule(
    "local_log_sigmoid", [(_log, _SIGMOID_X)],
    (math.neg, (math.softplus, (negate, (_in_dtype_of, "x", "s")))))

# exp(x) overflows to inf (x > 709) or underflows to 0 (x < -745), so the round trip gives
# +-inf where x itself is the exact answer.
local_log_exp = _pattern_rule("local_log_exp", [(_log, _EXP_X)], (_in_dtype_of, "x", "e"))

# For |x| below the float epsilon, 1 + x rounds to 1 and the log to 0, losing x entirely
# (log(1 + 1e-20) = 0, the exact value is 1e-20); log1p keeps it.
def _log1p_argument(x: Variable, argument: Variable) -> Variable:
    """x for log(1 + x), -x for log(1 - x), in the dtype of 1 +- x."""
    x = _in_dtype_of(x, argument)
    return negate(x) if is_elemwise_of(argument, scalar.sub) else x


local_log1p = _pattern_rule(
    "local_log1p",
    [(_log, _real("a", (_add, _ONE, "x"))), (_log, _real("a", (_add, "x", _ONE))),
     (_log, _real("a", (_sub, _ONE, "x")))],
    (math.log1p, (_log1p_argument, "x", "a")))

# For |x| below the float epsilon, exp(x) rounds to 1 and the difference to 0, losing x
# entirely (exp(1e-20) - 1 = 0, the exact value is 1e-20); expm1 keeps it.
local_expm1 = _pattern_rule(
    "local_expm1",
    [_real(None, (_sub, _EXP_X, _ONE)), _real(None, (_add, _EXP_X, _MINUS_ONE)),
     _real(None, (_add, _MINUS_ONE, _EXP_X))],
    (math.expm1, (_in_dtype_of, "x", "e")))

# For large x, sigmoid(x) rounds to 1 and 1 - sigmoid(x) to 0 (cancellation), while
# sigmoid(-x) is the small positive value itself, accurate to the last bit.
local_1m_sigmoid = _pattern_rule(
    "local_1m_sigmoid", [_real(None, (_sub, _ONE, _SIGMOID_X))],
    (math.sigmoid, (negate, (_in_dtype_of, "x", "s"))))


def _is_shifted_by_logsumexp(variable: Variable) -> bool:
    """True if `variable` is x - switch(isfinite(m), m, 0), the shifted input logsumexp
    exponentiates (so that log(sum(exp(...))) over it is not rewritten again)."""
    terms = inputs_of(variable, scalar.sub)
    if terms is None:
        return False
    choice = inputs_of(terms[1], scalar.switch)
    return choice is not None and is_elemwise_of(choice[0], scalar.isfinite)


@node_rewriter([_log])
def local_logsumexp(fgraph: FunctionGraph, node: Apply):
    """log(sum(exp(x), axis)) -> logsumexp(x, axis); -> x for a sum over no axis."""
    # exp overflows for large x (sum(exp([1000, 1000])) is inf) and the sum underflows to 0
    # for very negative x; logsumexp subtracts the maximum before exponentiating.
    total = node.inputs[0].owner
    if total is None or not isinstance(total.op, CAReduce) or total.op.scalar_op != scalar.add:
        return None
    (terms,) = total.inputs
    exp_inputs = inputs_of(terms, scalar.exp)
    if exp_inputs is None or not is_real_float(terms) \
            or not is_real_float(node.inputs[0]) or _is_shifted_by_logsumexp(exp_inputs[0]):
        return None
    x = math.cast(exp_inputs[0], terms.type.dtype)
    if total.op.axis == ():
        # A sum over no axis is the identity: this is log(exp(x)).
        return as_type_of(x, node.outputs[0])
    return as_type_of(logsumexp(x, total.op.axis), node.outputs[0])


_true_div = Elemwise(scalar.true_div)


def _typed_constant(value: float, dtype: str) -> Variable:
    """A 0-d constant of `dtype`, so that it does not upcast a float32 graph."""
    return constant(np.asarray(value, dtype=dtype))


@node_rewriter([_exp])
def local_exp_log(fgraph: FunctionGraph, node: Apply):
    """exp(log(x)) -> switch(x >= 0, x, nan); exp(log1p(x)) -> switch(x >= -1, 1 + x, nan).

    Domain assumption made explicit (as PyTensor's local_exp_log does): the identity holds
    for x >= 0 (x >= -1) only, and the switch keeps NaN where log gives NaN, so the value
    changes only by the rounding the round trip would add (and exp(log(x)) keeps x = 0 and
    inf exactly)."""
    (argument,) = node.inputs
    if not is_real_float(argument) or argument.owner is None:
        return None
    dtype = argument.type.dtype
    for scalar_op, lower_bound in ((scalar.log, 0.0), (scalar.log1p, -1.0)):
        inputs = inputs_of(argument, scalar_op)
        if inputs is None:
            continue
        x = math.cast(inputs[0], dtype)
        value = x if scalar_op == scalar.log else math.add(_typed_constant(1.0, dtype), x)
        guarded = math.switch(math.ge(x, _typed_constant(lower_bound, dtype)), value,
                              _typed_constant(np.nan, dtype))
        return as_type_of(guarded, node.outputs[0])
    return None


# log(erfc(x)) is computed by its asymptotic series from these x on: below, erfc(x) is a
# normal float of the dtype (erfc(26) = 5.6e-296, erfc(9) = 4.1e-37 in float32) and the naive
# formula is exact; above, erfc underflows and the series truncated after its x**-8 term has
# an absolute error below 945 / (32 x**10) (2e-13 at 26, 1e-8 at 9).
_LOG_ERFC_THRESHOLD = {"float64": 26.0, "float32": 9.0, "float16": 3.5}


def _is_clipped_for_log_erfc(variable: Variable) -> bool:
    """True if `variable` is minimum(x, threshold), the naive branch local_log_erfc builds (so
    that log(erfc(...)) over it is not rewritten again)."""
    terms = inputs_of(variable, scalar.minimum)
    return terms is not None \
        and is_constant(terms[1], _LOG_ERFC_THRESHOLD[variable.type.dtype])


@node_rewriter([_log])
def local_log_erfc(fgraph: FunctionGraph, node: Apply):
    """log(erfc(x)) -> switch(x < t, log(erfc(minimum(x, t))), series(maximum(x, t))), with
    series(x) = -x**2 - log(x) - log(pi) / 2
                + log(1 - 1/(2x**2) + 3/(4x**4) - 15/(8x**6) + 105/(16x**8)),
    the asymptotic expansion of log(erfc(x)) for large x (t in _LOG_ERFC_THRESHOLD)."""
    # erfc(x) underflows to 0 for x > 26.6 (float64), whose log is -inf, while the exact
    # value is about -x**2. Each branch only sees inputs where it is finite.
    (argument,) = node.inputs
    erfc_inputs = inputs_of(argument, scalar.erfc)
    if erfc_inputs is None or not is_real_float(argument) \
            or argument.type.dtype not in _LOG_ERFC_THRESHOLD:
        return None
    dtype = argument.type.dtype
    x = math.cast(erfc_inputs[0], dtype)
    if _is_clipped_for_log_erfc(x):
        return None
    threshold = _typed_constant(_LOG_ERFC_THRESHOLD[dtype], dtype)

    def number(value: float) -> Variable:
        return _typed_constant(value, dtype)

    large = math.maximum(x, threshold)
    inverse_square = math.reciprocal(math.sqr(large))
    # Horner's form of the series' polynomial in 1 / x**2.
    polynomial = number(105 / 16)
    for coefficient in (-15 / 8, 3 / 4, -1 / 2, 1.0):
        polynomial = math.add(math.mul(polynomial, inverse_square), number(coefficient))
    series = math.sub(math.sub(math.neg(math.sqr(large)), math.log(large)),
                      number(0.5 * np.log(np.pi)))
    series = math.add(series, math.log(polynomial))
    naive = math.log(math.erfc(math.minimum(x, threshold)))
    return as_type_of(math.switch(math.lt(x, threshold), naive, series), node.outputs[0])


@node_rewriter([_log])
def local_log1mexp(fgraph: FunctionGraph, node: Apply):
    """log(1 - exp(x)) -> switch(x < -log(2), log1p(-exp(x)), log(-expm1(x)))."""
    # For x near 0 (x < 0), exp(x) rounds to 1 and 1 - exp(x) to 0 (log(1 - exp(-1e-20)) is
    # -inf, the exact value about -46); -expm1(x) keeps it. For very negative x, -expm1(x)
    # rounds to 1 while log1p(-exp(x)) keeps the small exp(x) (Maechler, "Accurately computing
    # log(1 - exp(-|a|))", 2012).
    complement = one_minus(node.inputs[0])
    if complement is None:
        return None
    exp_inputs = inputs_of(complement, scalar.exp)
    if exp_inputs is None or not is_real_float(complement):
        return None
    dtype = complement.type.dtype
    x = math.cast(exp_inputs[0], dtype)
    far = math.log1p(math.neg(math.exp(x)))
    near = math.log(math.neg(math.expm1(x)))
    choice = math.switch(math.lt(x, _typed_constant(-np.log(2.0), dtype)), far, near)
    return as_type_of(choice, node.outputs[0])


@node_rewriter([_log])
def local_log_add_exp(fgraph: FunctionGraph, node: Apply):
    """log(exp(x) + exp(y)) -> logaddexp(x, y)."""
    # exp overflows for x > 709 (float64) although the result is about max(x, y);
    # logaddexp factors the larger exponential out.
    terms = inputs_of(node.inputs[0], scalar.add)
    if terms is None or not is_real_float(node.inputs[0]):
        return None
    exponents = [inputs_of(term, scalar.exp) for term in terms]
    if None in exponents or not all(is_real_float(term) for term in terms):
        return None
    dtype = node.inputs[0].type.dtype
    left, right = (math.cast(inputs[0], dtype) for inputs in exponents)
    return as_type_of(math.logaddexp(left, right), node.outputs[0])


@node_rewriter([_true_div])
def local_exp_over_1_plus_exp(fgraph: FunctionGraph, node: Apply):
    """exp(x) / (1 + exp(x)) -> sigmoid(x) and 1 / (1 + exp(x)) -> sigmoid(-x)."""
    # For x > 709 (float64) exp(x) is inf and the quotient inf / inf is NaN; sigmoid is 1.
    numerator, denominator = node.inputs
    if not is_real_float(node.outputs[0]):
        return None
    exponential = one_plus(denominator)
    exp_inputs = None if exponential is None else inputs_of(exponential, scalar.exp)
    if exp_inputs is None or not is_real_float(exponential):
        return None
    x = math.cast(exp_inputs[0], exponential.type.dtype)
    if numerator is exponential:
        return as_type_of(math.sigmoid(x), node.outputs[0])
    if is_constant(numerator, 1):
        return as_type_of(math.sigmoid(negate(x)), node.outputs[0])
    return None


stabilize_db = EquilibriumDatabase("stabilize")
# On a log node the rules are tried in this order: the patterns that contain another's
# (log(1 + exp(x)) contains log(1 + x)) come first, so the more stable form wins.
for _rule in (local_log1p_exp, local_log1m_sigmoid, local_log1mexp, local_log_sigmoid,
              local_log_exp, local_logsumexp, local_log_add_exp, local_log_erfc, local_log1p,
              local_expm1, local_1m_sigmoid, local_exp_log, local_exp_over_1_plus_exp):
    stabilize_db.register(_rule.name, _rule, "stabilize", "fast_run")
del _rule

rewrite_db.register("stabilize", stabilize_db, "stabilize", "fast_run",
                    phase="stabilize")
