"""C code of Softmax, LogSoftmax and SoftmaxGrad (float32/float64, any axis and strides) and
of the fused CrossentropySoftmax1Hot and its gradient CrossentropySoftmax1HotDx (target checks
as perform's). Other dtypes fall back to perform().

Every slice along the op's axis runs through a vectorised row kernel of nnet_c_rows (see
there for the accuracy): in place when its elements are adjacent in memory, else copied to a
buffer and back. The rows run on one thread: on a machine busy with other work, OpenMP's
threads waiting for one another at the end of the row loop made it up to 10 times slower.
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_file, render
from sympile.tensor.nnet.rows_c import kernel_name, row_kernels, scaled_row_kernel

__all__ = ["crossentropy_softmax_c_code", "crossentropy_softmax_dx_c_code",
           "softmax_family_c_code"]

_DTYPES = ("float32", "float64")

# Runs the row kernel on every slice along `axis` of the arrays (the inputs, then the output,
# all of one shape): a slice whose elements are adjacent in memory is passed where it lies,
# others are copied into a buffer (and the output's back from it). Rows of C-contiguous
# arrays along their last axis follow each other; others find their start from the row's
# index in C order. Returns -1 when the buffer cannot be allocated.
_SLICES = c_file(__file__, "slices.c")


def softmax_family_c_code(kind: str, op, node: Apply, names: CNames) -> CCode | None:
    """The C of `op` (kind 'softmax', 'log_softmax' or 'softmax_grad'), or None."""
    dtypes = {variable.type.dtype for variable in (*node.inputs, *node.outputs)}
    if len(dtypes) != 1 or not dtypes <= set(_DTYPES):
        return None
    (dtype,) = dtypes
    ctype = C_TYPES[dtype]
    axis = op.axis % node.inputs[-1].type.ndim
    output = names.outputs[0]
    first = names.inputs[-1]
    check = ""
    if kind == "softmax_grad":
        check = (f"if (PyArray_NDIM({names.inputs[0]}) != ndim || !PyArray_SAMESHAPE("
                 f"{names.inputs[0]}, {names.inputs[1]})) {{ PyErr_Format(PyExc_ValueError, "
                 f"\"{op}: dy and sm must have the same shape\"); {names.fail} }}")
    count = len(names.inputs) + 1
    slices_name = f"sympile_{kind}_slices_{dtype}"
    arguments = ", ".join(f"pointers[{a}]" for a in range(count))
    slices = render(_SLICES, {"name": slices_name, "count": count, "T": ctype,
                              "call": f"{kernel_name(kind, dtype)}(length, {arguments});"})
    arrays = ", ".join((*names.inputs, output))
    body = f"""
{{
    const int ndim = PyArray_NDIM({first});
    const npy_intp *dims = PyArray_DIMS({first});
    const npy_intp length = dims[{axis}];
    const npy_intp rows = length == 0 ? 0 : PyArray_SIZE({first}) / length;
    {check}
    if (sympile_prepare_output(&{output}, ndim, dims, {NPY_TYPES[dtype]})) {{ {names.fail} }}
    PyArrayObject *const arrays[{count}] = {{{arrays}}};
    if ({slices_name}(arrays, {axis}, rows, length)) {{ PyErr_NoMemory(); {names.fail} }}
}}
"""
    return CCode(body=body, support=(*row_kernels(kind, dtype), slices))


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
    """C of CrossentropySoftmax1Hot: per row, sm = softmax(x) and loss = -(x[y] - peak -
    log_total) from the shifted logits' exps (nnet_c_rows' crossentropy kernel), rows of
    x with strided elements copied to a buffer first."""
    dtype = node.inputs[0].type.dtype
    if dtype not in _DTYPES or not _targets_have_c_type(node, 1):
        return None
    ctype = C_TYPES[dtype]
    x, targets = names.inputs
    loss, probabilities = names.outputs
    target_type = C_TYPES[node.inputs[1].type.dtype]
    return CCode(body=f"""
{_target_macro(targets, target_type)}
{{
    const npy_intp rows = PyArray_DIM({x}, 0), classes = PyArray_DIM({x}, 1);
    {_target_checks(op, targets, "rows", "classes", names.fail)}
    if (sympile_prepare_output(&{loss}, 1, &rows, {NPY_TYPES[dtype]})
            || sympile_prepare_output(&{probabilities}, 2, PyArray_DIMS({x}),
                                      {NPY_TYPES[dtype]})) {{
        {names.fail}
    }}
    const npy_intp step = PyArray_STRIDE({x}, 1);
    const int buffered = classes > 1 && step != (npy_intp)sizeof({ctype});
    {ctype} *buffer = buffered ? ({ctype} *)malloc((size_t)classes * sizeof({ctype})) : NULL;
    if (buffered && buffer == NULL) {{
        PyErr_NoMemory();
        {names.fail}
    }}
    {ctype} *losses = ({ctype} *)PyArray_DATA({loss});
    {ctype} *probability_rows = ({ctype} *)PyArray_DATA({probabilities});
    for (npy_intp i = 0; i < rows; ++i) {{
        const char *row = PyArray_BYTES({x}) + i * PyArray_STRIDE({x}, 0);
        if (buffered)
            for (npy_intp k = 0; k < classes; ++k) buffer[k] = *(const {ctype} *)(row + k * step);
        losses[i] = ({ctype}){kernel_name("crossentropy", dtype)}(
            classes, buffered ? buffer : (const {ctype} *)row, probability_rows + i * classes,
            (npy_intp)TARGET(i));
    }}
    free(buffer);
}}
#undef TARGET
""", support=row_kernels("crossentropy", dtype))


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
    scaled, kernel = scaled_row_kernel(dtypes[1], dtypes[2])
    return CCode(body=f"""
{_target_macro(targets, target_type)}
{_matrix_macro("SM", probabilities, probability_type)}
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
    const npy_intp step = PyArray_STRIDE({probabilities}, 1);
    const int adjacent = step == (npy_intp)sizeof({probability_type});
    for (npy_intp i = 0; i < rows; ++i) {{
        const {output_type} scale =
            ({output_type})*(const {loss_type} *)(loss_data + i * loss_stride);
        const npy_intp target = (npy_intp)TARGET(i);
        {output_type} *out_row = ({output_type} *)PyArray_DATA({output}) + i * classes;
        if (adjacent) {{
            {scaled}(classes, &SM(i, 0), out_row, scale);
        }} else {{
            for (npy_intp k = 0; k < classes; ++k)
                out_row[k] = ({output_type})SM(i, k) * scale;
        }}
        out_row[target] = (({output_type})SM(i, target) - 1) * scale;
    }}
}}
#undef TARGET
#undef SM
""", support=(kernel,))
