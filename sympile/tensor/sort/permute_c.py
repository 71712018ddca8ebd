"""C code of PermuteAlongAxis (sort's derivative rules): perform's checks with its messages
(equal shapes, entries in [0, n), each line along the axis a permutation), then one pass
that gathers, out[..., j, ...] = x[..., p[..., j, ...], ...], or with inverse scatters,
out[..., p[..., j, ...], ...] = x[..., j, ...], into a C-contiguous output (elements copied:
every dtype; any strides). The C is permute.c, one function per permutation dtype.
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_file, render

__all__ = ["permute_along_axis_c_code"]


_PERMUTE = c_file(__file__, "permute.c")


def permute_support(index_dtype: str) -> tuple[str, str]:
    """(name, definition) of permute.c's function for permutations of `index_dtype`."""
    name = f"sympile_permute_along_axis_{index_dtype}"
    return name, render(_PERMUTE, {"NAME": index_dtype, "I": C_TYPES[index_dtype]})


def permute_along_axis_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of PermuteAlongAxis: see the module docstring."""
    x_type, permutation_type = node.inputs[0].type, node.inputs[1].type
    if x_type.dtype not in NPY_TYPES or permutation_type.dtype not in C_TYPES:
        return None
    (x, permutation), (output,) = names.inputs, names.outputs
    function, support = permute_support(permutation_type.dtype)
    return CCode(body=f"""
if ({function}({x}, {permutation}, {op.axis}, {int(op.inverse)}, {NPY_TYPES[x_type.dtype]},
             &{output}) != 0) {{
    {names.fail}
}}
""", support=(support,))
