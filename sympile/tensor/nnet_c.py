"""C code of Softmax, LogSoftmax and SoftmaxGrad (float32/float64): one loop per slice
along the op's axis, any strides; accumulation in double. Other dtypes fall back to
perform(). Also the fused CrossentropySoftmax1Hot and its gradient CrossentropySoftmax1HotDx
(one pass per row, target checks as perform's)."""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames

__all__ = ["crossentropy_softmax_c_code", "crossentropy_softmax_dx_c_code",
           "softmax_family_c_code"]

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


def _target_checks(op, targets: str, rows: str, classes: str, fail: str) -> str:
    """C that checks the targets as perform's _checked_target_values does: one per row, and
    every class index in [0, classes) (the error gives their minimum and maximum)."""
    return f"""
if (PyArray_DIM({targets}, 0) != {rows}) {{
    PyErr_Format(PyExc_ValueError, "{op}: %lld targets for %lld rows: expected one class "
                 "index per row", (long long)PyArray_DIM({targets}, 0), (long long){rows});
    {fail}
}}
if ({rows} > 0) {{
    long long lowest = 0, highest = 0;
    for (npy_intp i = 0; i < {rows}; ++i) {{
        long long target = (long long)TARGET(i);
        if (i == 0 || target < lowest) lowest = target;
        if (i == 0 || target > highest) highest = target;
    }}
    if (lowest < 0 || highest >= (long long){classes}) {{
        PyErr_Format(PyExc_IndexError, "{op}: target class indices must be in [0, %lld), "
                     "got values from %lld to %lld", (long long){classes}, lowest, highest);
        {fail}
    }}
}}
"""


def _target_macro(targets: str, target_type: str) -> str:
    return (f"#define TARGET(i) (*(const {target_type} *)(PyArray_BYTES({targets}) "
            f"+ (i) * PyArray_STRIDE({targets}, 0)))")


def _matrix_macro(name: str, array: str, element_type: str) -> str:
    return (f"#define {name}(i, k) (*({element_type} *)(PyArray_BYTES({array}) "
            f"+ (i) * PyArray_STRIDE({array}, 0) + (k) * PyArray_STRIDE({array}, 1)))")


def _targets_have_c_type(node: Apply, position: int) -> bool:
    # uint64 entries above INT64_MAX would not compare as perform's do.
    return node.inputs[position].type.dtype in C_TYPES \
        and node.inputs[position].type.dtype != "uint64"


def crossentropy_softmax_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C of CrossentropySoftmax1Hot: per row, the shifted logits' log-sum-exp (in double),
    loss = -(x[y] - peak - log_total) and sm = exp(x - peak - log_total), as perform
    computes them from the log-probabilities."""
    dtype = node.inputs[0].type.dtype
    if dtype not in _DTYPES or not _targets_have_c_type(node, 1):
        return None
    ctype = C_TYPES[dtype]
    x, targets = names.inputs
    loss, probabilities = names.outputs
    target_type = C_TYPES[node.inputs[1].type.dtype]
    return CCode(body=f"""
{_target_macro(targets, target_type)}
{_matrix_macro("X", x, ctype)}
{_matrix_macro("SM", probabilities, ctype)}
{{
    const npy_intp rows = PyArray_DIM({x}, 0), classes = PyArray_DIM({x}, 1);
    {_target_checks(op, targets, "rows", "classes", names.fail)}
    if (sympile_prepare_output(&{loss}, 1, &rows, {NPY_TYPES[dtype]})
            || sympile_prepare_output(&{probabilities}, 2, PyArray_DIMS({x}),
                                      {NPY_TYPES[dtype]})) {{
        {names.fail}
    }}
    {ctype} *losses = ({ctype} *)PyArray_DATA({loss});
    for (npy_intp i = 0; i < rows; ++i) {{
        double peak = -INFINITY;
        for (npy_intp k = 0; k < classes; ++k) {{ double v = X(i, k); if (v > peak) peak = v; }}
        /* No finite maximum (all -inf, or a +inf): shift by 0, as perform() does. */
        if (!isfinite(peak)) peak = 0;
        double total = 0;
        for (npy_intp k = 0; k < classes; ++k) total += exp(X(i, k) - peak);
        const double log_total = log(total);
        losses[i] = ({ctype})(-((X(i, TARGET(i)) - peak) - log_total));
        for (npy_intp k = 0; k < classes; ++k)
            SM(i, k) = ({ctype})exp((X(i, k) - peak) - log_total);
    }}
}}
#undef TARGET
#undef X
#undef SM
""")


def crossentropy_softmax_dx_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C of CrossentropySoftmax1HotDx: out[i, k] = (sm[i, k] - [k == y[i]]) * dloss[i], in
    the output's dtype as perform computes it."""
    dtypes = [variable.type.dtype for variable in (node.inputs[0], node.inputs[1],
                                                    node.outputs[0])]
    if not set(dtypes) <= set(_DTYPES) or not _targets_have_c_type(node, 2):
        return None
    loss_type, probability_type, output_type = (C_TYPES[dtype] for dtype in dtypes)
    loss_grad, probabilities, targets = names.inputs
    (output,) = names.outputs
    target_type = C_TYPES[node.inputs[2].type.dtype]
    return CCode(body=f"""
{_target_macro(targets, target_type)}
{_matrix_macro("SM", probabilities, probability_type)}
{_matrix_macro("OUT", output, output_type)}
{{
    const npy_intp rows = PyArray_DIM({probabilities}, 0);
    const npy_intp classes = PyArray_DIM({probabilities}, 1);
    {_target_checks(op, targets, "rows", "classes", names.fail)}
    if (PyArray_DIM({loss_grad}, 0) != rows) {{
        PyErr_Format(PyExc_ValueError, "{op}: dloss has %lld entries for %lld rows",
                     (long long)PyArray_DIM({loss_grad}, 0), (long long)rows);
        {names.fail}
    }}
    if (sympile_prepare_output(&{output}, 2, PyArray_DIMS({probabilities}),
                               {NPY_TYPES[dtypes[2]]})) {{
        {names.fail}
    }}
    const char *loss_data = PyArray_BYTES({loss_grad});
    const npy_intp loss_stride = PyArray_STRIDE({loss_grad}, 0);
    for (npy_intp i = 0; i < rows; ++i) {{
        const {output_type} scale =
            ({output_type})*(const {loss_type} *)(loss_data + i * loss_stride);
        const npy_intp target = (npy_intp)TARGET(i);
        for (npy_intp k = 0; k < classes; ++k) {{
            {output_type} value = ({output_type})SM(i, k);
            if (k == target) value -= 1;
            OUT(i, k) = value * scale;
        }}
    }}
}}
#undef TARGET
#undef SM
#undef OUT
""")
