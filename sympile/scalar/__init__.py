"""Scalar Types and Ops (see basic.py)."""

from sympile.scalar import c_rules  # noqa: F401  (sets the ops' C rules)
from sympile.scalar.basic import *  # noqa: F403
from sympile.scalar.basic import ScalarOp, ScalarType, cast_op, get_scalar_type  # noqa: F401

# Theano's scalar types by dtype name and its groups of them (theano.scalar.float64,
# theano.scalar.all_types, ...): str() of each is its dtype.
(bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64,
 complex64, complex128) = (get_scalar_type(dtype) for dtype in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128"))
int_types = (int8, int16, int32, int64)
uint_types = (uint8, uint16, uint32, uint64)
integer_types = int_types + uint_types
float_types = (float16, float32, float64)
complex_types = (complex64, complex128)
discrete_types = (bool, *integer_types)
continuous_types = float_types + complex_types
all_types = discrete_types + continuous_types
