"""The C code of the convolution ops (abstract_conv.py), 2d and 3d, on float32 and float64:
im2col and BLAS gemm (conv_gemm.c), threads chosen as for the BLAS products
(blas_threads.c); other dtypes, and unshared convolutions, run perform(). The kernels are
one library unit per dtype (conv_library), compiled once per cache; a node is that unit's
entry (conv_node), given a table of its geometry (no C of its own)."""

from __future__ import annotations

from sympile.config import config
from sympile.graph.basic import Apply
from sympile.graph.ccode import CCode, CNames, c_file, c_string, library_code, render, served_by
from sympile.tensor.blas.blas_c import blas_threads_support

__all__ = ["conv_c_code", "conv_library"]

_GEMM = c_file(__file__, "conv_gemm.c")
_DECLARATIONS = c_file(__file__, "conv_gemm.h")


def conv_library(dtype: str) -> tuple[str, str, str, tuple[str, ...]]:
    """(name, declarations, library unit, the BLAS routines it calls) of the convolution
    kernels for `dtype`: `<name>_conv_setup`, `<name>_conv_gemm` and the nodes' entry
    `<name>_conv_node` as conv_gemm.h declares them."""
    prefix = "s" if dtype == "float32" else "d"
    values = {"T": f"npy_{dtype}", "p": prefix}
    return (*library_code(f"sympile_conv_{dtype}", render(_DECLARATIONS, values),
                          blas_threads_support(dtype) + render(_GEMM, values)),
            (f"{prefix}gemm",))
_BORDERS = {"valid": 0, "full": 1, "half": 2}


def conv_c_code(op, node: Apply, names: CNames, kind: int) -> CCode | None:
    """kind 0: AbstractConv, 1: AbstractConvGradWeights, 2: AbstractConvGradInputs."""
    dtype = node.outputs[0].type.dtype
    if op.unshared or dtype not in ("float32", "float64") or any(
            variable.type.dtype != dtype for variable in node.inputs[:2]):
        return None
    border = _BORDERS.get(op.border_mode, 3)
    nd = op.convdim
    pads = ((0, 0),) * nd if border != 3 else op.explicit_padding
    library, declarations, unit, blas = conv_library(dtype)

    def triple(values) -> str:
        return "{" + ", ".join(map(str, values)) + "}"

    return served_by((library, declarations, unit), "conv_node", f"sympile_conv_node_npy_{dtype}",
                     [str(kind), str(nd), str(border), str(int(op.filter_flip)),
                      triple(before for before, _ in pads), triple(after for _, after in pads),
                      triple(op.subsample), triple(op.filter_dilation), str(op.num_groups),
                      c_string(f"conv{nd}d")], blas=blas, openmp=config.openmp)
