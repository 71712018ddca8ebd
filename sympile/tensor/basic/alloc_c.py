"""C code of Alloc: a library entry (alloc.c with alloc.h, compiled once per cache) that reads
the node's lengths and calls sympile_alloc (perform's checks of the lengths and the value's
shape, with its messages, then one broadcasting copy, PyArray_CopyInto, into the output
buffer); the node's table holds its name, rank, type and checked axes."""

from __future__ import annotations

import functools

from sympile.graph.basic import Apply
from sympile.graph.ccode import (
    NPY_TYPES,
    CCode,
    CNames,
    c_array,
    c_file,
    c_string,
    library_code,
    served_by,
)

__all__ = ["alloc_c_code", "alloc_library"]

_ALLOC = c_file(__file__, "alloc.c")
_DECLARATIONS = c_file(__file__, "alloc.h")


@functools.cache
def alloc_library() -> tuple[str, str, str]:
    """(name, declarations, library unit) of alloc.c: `<name>_alloc_node`."""
    return library_code("sympile_alloc", _DECLARATIONS, _ALLOC)


def alloc_c_code(op, node: Apply, names: CNames) -> CCode:
    """C code of Alloc: see the module docstring."""
    # The value's axes of static length 1 broadcast by their type: not checked.
    checked = [int(static != 1) for static in node.inputs[0].type.shape]
    return served_by(alloc_library(), "alloc_node", "SympileAlloc", [
        c_string(op), str(len(node.inputs) - 1), NPY_TYPES[node.outputs[0].type.dtype],
        c_array("unsigned char", checked)])
