"""Derivatives through the Scan Op: L_op (backpropagation through time) and R_op."""

from __future__ import annotations

from sympile.graph.basic import Variable
from sympile.graph.gradient_types import grad_not_implemented

__all__ = ["scan_l_op", "scan_r_op"]


def scan_l_op(op, inputs: list[Variable], outputs: list[Variable],
              output_grads: list[Variable]) -> list[Variable]:
    """Every input's gradient is a not-implemented null gradient, so sympile.grad raises rather
    than return a wrong value."""
    return [grad_not_implemented(op, index, value, "backpropagation through scan is not "
                                 "implemented yet") for index, value in enumerate(inputs)]


def scan_r_op(op, inputs: list[Variable], eval_points: list[Variable | None]):
    raise NotImplementedError(f"{op}.R_op: the R operator through scan is not implemented yet")
