"""C code of Softmax, LogSoftmax and SoftmaxGrad (float32/float64): one loop per slice
along the op's axis, any strides; accumulation in double. Other dtypes fall back to
perform()."""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames

__all__ = ["softmax_family_c_code"]

_DTYPES = ("float32", "float64")

# Pointers to element `k` of slice `row` of each array: the other axes' indices come from
# `row` in C order, the slice's own axis is stepped by its stride.
_SLICE_LOOP = """
{{
    int ndim = PyArray_NDIM({first});
    const npy_intp *dims = PyArray_DIMS({first});
    npy_intp length = dims[{axis}];
    npy_intp rows = length == 0 ? 0 : PyArray_SIZE({first}) / length;
    {check}
    if (sympile_prepare_output(&{output}, ndim, dims, {typenum})) {{ {fail} }}
    for (npy_intp row = 0; row < rows; ++row) {{
        {declare_pointers}
        npy_intp rest = row;
        for (int axis = ndim - 1; axis >= 0; --axis) {{
            if (axis == {axis}) continue;
            npy_intp index = rest % dims[axis];
            rest /= dims[axis];
            {advance_pointers}
        }}
        {body}
    }}
}}
"""

_SOFTMAX = """
double peak = -INFINITY;
for (npy_intp k = 0; k < length; ++k) {{ double v = X(k); if (v > peak) peak = v; }}
/* No finite maximum (all -inf, or a +inf): shift by 0, as perform() does. */
if (!isfinite(peak)) peak = 0;
double total = 0;
for (npy_intp k = 0; k < length; ++k) total += exp(X(k) - peak);
{finish}
"""

_FINISH = {
    "softmax": "for (npy_intp k = 0; k < length; ++k)\n"
               "    OUT(k) = ({ctype})(exp(X(k) - peak) / total);",
    "log_softmax": "double log_total = log(total);\n"
                   "for (npy_intp k = 0; k < length; ++k)\n"
                   "    OUT(k) = ({ctype})(X(k) - peak - log_total);",
}

_SOFTMAX_GRAD = """
double total = 0;
for (npy_intp k = 0; k < length; ++k) total += DY(k) * SM(k);
for (npy_intp k = 0; k < length; ++k) OUT(k) = ({ctype})(SM(k) * (DY(k) - total));
"""


def softmax_family_c_code(kind: str, op, node: Apply, names: CNames) -> CCode | None:
    """The C of `op` (kind 'softmax', 'log_softmax' or 'softmax_grad'), or None."""
    dtypes = {variable.type.dtype for variable in (*node.inputs, *node.outputs)}
    if len(dtypes) != 1 or not dtypes <= set(_DTYPES):
        return None
    (dtype,) = dtypes
    ctype = C_TYPES[dtype]
    axis = op.axis % node.inputs[-1].type.ndim
    output = names.outputs[0]
    arrays = {"OUT": output}
    if kind == "softmax_grad":
        arrays.update(DY=names.inputs[0], SM=names.inputs[1])
        body = _SOFTMAX_GRAD.format(ctype=ctype)
        check = (f"if (PyArray_NDIM({names.inputs[0]}) != ndim || !PyArray_SAMESHAPE("
                 f"{names.inputs[0]}, {names.inputs[1]})) {{ PyErr_Format(PyExc_ValueError, "
                 f"\"{op}: dy and sm must have the same shape\"); {names.fail} }}")
        first = names.inputs[1]
    else:
        arrays["X"] = names.inputs[0]
        body = _SOFTMAX.format(finish=_FINISH[kind].format(ctype=ctype))
        check = ""
        first = names.inputs[0]
    declare = " ".join(f"char *{name.lower()}_data = PyArray_BYTES({array});"
                       for name, array in arrays.items())
    advance = " ".join(f"{name.lower()}_data += index * PyArray_STRIDES({array})[axis];"
                       for name, array in arrays.items())
    macros = "\n".join(
        f"#define {name}(k) (*({ctype} *)({name.lower()}_data + (k) * "
        f"PyArray_STRIDES({array})[{axis}]))" for name, array in arrays.items())
    undefine = "\n".join(f"#undef {name}" for name in arrays)
    loop = _SLICE_LOOP.format(first=first, axis=axis, check=check, output=output,
                              typenum=NPY_TYPES[dtype], fail=names.fail,
                              declare_pointers=declare, advance_pointers=advance, body=body)
    return CCode(body=f"{macros}\n{loop}\n{undefine}\n")
