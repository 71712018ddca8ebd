"""Scalar Types and Ops (see basic.py)."""

from sympile.scalar import c_rules  # noqa: F401  (sets the ops' C rules)
from sympile.scalar.basic import *  # noqa: F403
from sympile.scalar.basic import ScalarOp, ScalarType, cast_op, get_scalar_type  # noqa: F401
