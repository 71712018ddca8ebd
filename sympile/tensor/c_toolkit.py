"""C that the generated code of several tensor families shares (each family's own C lives
in its package or beside its op module).

  SHAPE_TEXT   sympile_shape_text(text, size, ndim, dims): a shape as Python prints a
               tuple, for error messages (shape_text.h)
"""

from __future__ import annotations

from sympile.graph.ccode import c_file

__all__ = ["SHAPE_TEXT"]

SHAPE_TEXT = c_file(__file__, "shape_text.h")
