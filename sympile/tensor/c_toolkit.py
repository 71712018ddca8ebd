"""C that the generated code of several tensor families shares (each family's own C lives
in its package or beside its op module).

  SHAPE_TEXT   sympile_shape_text(text, size, ndim, dims): a shape as Python prints a
               tuple, for error messages (shape_text.h)
  SHAPE_ERROR  the message of operands whose shapes do not broadcast, as the Python
               backend's Elemwise words it (shape_error.h)
  INTEGER_VALUE
               sympile_integer_value(array, index): an element of an integer array of any
               dtype as an npy_int64 (integer_value.h)
  vectorized_kernel_attribute(compute_bound)
               the __attribute__ of a loop kernel written for gcc's vectoriser
"""

from __future__ import annotations

from sympile.cpu import vector_target
from sympile.graph.ccode import c_file

__all__ = ["INTEGER_VALUE", "SHAPE_ERROR", "SHAPE_TEXT", "vectorized_kernel_attribute"]

SHAPE_TEXT = c_file(__file__, "shape_text.h")

# Formats the Python backend's messages (Elemwise's runtime broadcast check) for C code.
SHAPE_ERROR = c_file(__file__, "shape_error.h")

# Reads the integers of index and length inputs of any integer dtype.
INTEGER_VALUE = c_file(__file__, "integer_value.h")

# Vectorisation of the kernels: -O2 alone only vectorises loops whose trip count is known;
# no-trapping-math lets gcc turn selects between floats into blends (it changes no value, only
# whether floating-point exception flags may be raised by both arms); fp-contract=off keeps
# a * b + c two roundings, as numpy computes it.
KERNEL_OPTIMIZE = ('optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", '
                   '"fp-contract=off")')


def vectorized_kernel_attribute(compute_bound: bool) -> str:
    """The attribute of a loop kernel written for the vectoriser (see KERNEL_OPTIMIZE),
    compiled for this machine's widest vectors when it is `compute_bound` (calls
    c_fastmath's functions, folds by compares); a loop bound by memory gains nothing."""
    target = vector_target() if compute_bound else ""
    return f"__attribute__(({KERNEL_OPTIMIZE}{', ' + target if target else ''}))"
