"""jacobian and hessian (Theano's theano.gradient.jacobian and hessian): one symbolic loop
whose step i is the reverse sweep of element i of the flattened expression, as Theano's.

They build a scan, and scan sits above the gradient layer, so they live here;
sympile/__init__.py hands them down to sympile.gradient and sympile.tensor, where Theano's
users find them.
"""

from __future__ import annotations

from collections.abc import Sequence

from sympile.config import config
from sympile.gradient import grad
from sympile.graph.basic import Variable
from sympile.scan.basic import scan
from sympile.tensor.basic.ops import arange, concatenate, zeros
from sympile.tensor.shape.ops import reshape, shape, shape_i
from sympile.tensor.type import is_discrete
from sympile.tensor.variable import as_tensor_variable

__all__ = ["hessian", "jacobian"]


def jacobian(expression: Variable, wrt: Variable | Sequence[Variable],
             consider_constant=None, disconnected_inputs: str = "raise"):
    """d expression / d wrt, of shape expression.shape + wrt.shape: one symbolic loop (a scan)
    whose step i is the reverse sweep of element i of the flattened expression, as Theano's.
    The scan rewrites move the work that does not depend on i (the forward pass) out of it."""
    single = isinstance(wrt, Variable)
    wrt_list = [wrt] if single else list(wrt)
    expression = as_tensor_variable(expression, op="jacobian")
    flat = expression.flatten() if expression.type.ndim != 1 else expression
    results = []
    for variable in wrt_list:
        if flat.type.shape[0] == 0:
            table = _empty_jacobian(variable)
        else:
            def row(index: Variable, variable: Variable = variable) -> Variable:
                return grad(flat[index], variable, consider_constant=consider_constant,
                            disconnected_inputs=disconnected_inputs)

            table = scan(row, sequences=arange(flat.shape[0]), name="jacobian")[0]
        if expression.type.ndim == 1:
            results.append(table)
        else:
            target = concatenate([shape(expression), shape(variable)])
            results.append(reshape(table, target, ndim=expression.type.ndim + variable.type.ndim))
    return results[0] if single else results


def _empty_jacobian(variable: Variable) -> Variable:
    return zeros((0,) + tuple(shape_i(variable, a) for a in range(variable.type.ndim)),
                 dtype=variable.type.dtype if not is_discrete(variable) else config.floatX)


def hessian(cost: Variable, wrt: Variable | Sequence[Variable], consider_constant=None,
            disconnected_inputs: str = "raise"):
    """The Hessian of scalar `cost` with respect to each of wrt: shape wrt.shape * 2."""
    single = isinstance(wrt, Variable)
    wrt_list = [wrt] if single else list(wrt)
    results = []
    for variable in wrt_list:
        gradient = grad(cost, variable, consider_constant=consider_constant,
                        disconnected_inputs=disconnected_inputs)
        results.append(jacobian(gradient, variable, consider_constant=consider_constant,
                                disconnected_inputs="ignore"))
    return results[0] if single else results
