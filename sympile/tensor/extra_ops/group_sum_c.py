"""C code of GroupSum (Repeat's gradient): perform's check with its message (the counts, one
per group of like's length on the axis, or one for all, are >= 0 and add up to y's length),
then each group's entries summed in order along the axis into the C-contiguous output (empty
groups 0). Integers wrap as numpy's; float sums are sequential, where numpy's reduceat sums
a contiguous last axis pairwise (equal to rounding). bool, float16 and complex give no C code.
The C is group_sum.c, one function per dtype and counts' dtype.
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_file, render

__all__ = ["group_sum_c_code"]


_GROUP_SUM = c_file(__file__, "group_sum.c")


def group_sum_support(dtype: str, count_dtype: str) -> tuple[str, str]:
    """(name, definition) of group_sum.c's function for y of `dtype`, counts of
    `count_dtype`."""
    name = f"sympile_group_sum_{dtype}_{count_dtype}"
    return name, render(_GROUP_SUM, {"NAME": name.removeprefix("sympile_group_sum_"),
                                     "T": C_TYPES[dtype], "C": C_TYPES[count_dtype],
                                     "NPY": NPY_TYPES[dtype]})


def group_sum_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of GroupSum: see the module docstring."""
    y_type, repeats_type = node.inputs[0].type, node.inputs[1].type
    dtype = y_type.dtype
    if dtype not in C_TYPES or dtype == "bool" or repeats_type.dtype not in C_TYPES:
        return None
    (y, repeats, like), (output,) = names.inputs, names.outputs
    shared = repeats_type.ndim == 0 or repeats_type.shape[0] == 1
    function, support = group_sum_support(dtype, repeats_type.dtype)
    return CCode(body=f"""
if ({function}({y}, {repeats}, {like}, {op.axis}, {int(shared)}, &{output}) != 0) {{
    {names.fail}
}}
""", support=(support,))
