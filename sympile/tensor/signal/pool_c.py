"""The C code of 2d pooling (pool.py) on float32 and float64: Pool, MaxPoolGrad and
AveragePoolGrad as loops over the windows of each plane (pool.c), planes threaded above
config.openmp_elemwise_minsize input elements; pool_3d and the second-order ops run
perform(). The loops are one library unit per dtype (pool_library), compiled once per
cache: a node is that unit's entry, given a table of its options (no C of its own)."""

from __future__ import annotations

import functools

from sympile.config import config
from sympile.graph.basic import Apply
from sympile.graph.ccode import CCode, CNames, c_file, c_string, library_code, render, served_by

__all__ = ["pool_c_code", "pool_library"]

_POOL = c_file(__file__, "pool.c")
_DECLARATIONS = c_file(__file__, "pool.h")
_MODES = {"max": 0, "sum": 1, "average_inc_pad": 2, "average_exc_pad": 3}


@functools.cache
def pool_library(dtype: str) -> tuple[str, str, str]:
    """(name, declarations, library unit) of the pooling loops for `dtype`:
    `<name>_pool_setup`, `_pool_forward`, `_pool_backward` and the nodes' entry
    `_pool_node` as pool.h declares them."""
    values = {"T": f"npy_{dtype}"}
    return library_code(f"sympile_pool_{dtype}", render(_DECLARATIONS, values),
                        render(_POOL, values))


def pool_c_code(op, node: Apply, names: CNames, kind: str) -> CCode | None:
    """kind 'forward' (Pool(x)), 'max_grad' (MaxPoolGrad(x, maxout, gz)) or 'average_grad'
    (AveragePoolGrad(x, gz)): pool.c's entry with the node's table."""
    dtype = node.outputs[0].type.dtype
    if op.nd != 2 or dtype not in ("float32", "float64") or any(
            variable.type.dtype != dtype for variable in node.inputs):
        return None
    threaded = config.openmp_elemwise_minsize if config.openmp else 0
    kinds = {"forward": 0, "max_grad": 1, "average_grad": 2}
    return served_by(pool_library(dtype), "pool_node", f"sympile_pool_node_npy_{dtype}", [
        str(kinds[kind]), str(int(op.ignore_border)), str(_MODES[op.mode]),
        f"{{{op.ws[0]}, {op.ws[1]}}}", f"{{{op.stride[0]}, {op.stride[1]}}}",
        f"{{{op.pad[0]}, {op.pad[1]}}}", c_string(op.label), str(threaded)],
        openmp=config.openmp)
