"""C code of Softmax, LogSoftmax and SoftmaxGrad (float32/float64, any axis and strides) and
of the fused CrossentropySoftmax1Hot and its gradient CrossentropySoftmax1HotDx (target checks
as perform's). Other dtypes fall back to perform().

Every slice along the op's axis runs through a vectorised row kernel of rows_c.py (see
there for the accuracy): in place when its elements are adjacent in memory, else copied to a
buffer and back. The rows run on one thread: on a machine busy with other work, OpenMP's
threads waiting for one another at the end of the row loop made it up to 10 times slower.
"""

from __future__ import annotations

import functools

from sympile.graph.basic import Apply
from sympile.graph.ccode import (
    C_TYPES,
    NPY_TYPES,
    CCode,
    CNames,
    c_file,
    c_string,
    library_code,
    render,
    served_by,
)
from sympile.tensor.nnet.rows_c import kernel_name, row_library, scaled_row_kernel

__all__ = ["crossentropy_dx_library", "crossentropy_library", "crossentropy_softmax_c_code",
           "crossentropy_softmax_dx_c_code", "softmax_family_c_code"]

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
    _, declarations, library = row_library(kind, dtype)
    return CCode(body=body, support=(declarations, slices), units=(library,))


_TARGETS = c_file(__file__, "targets.c")
_CROSSENTROPY = c_file(__file__, "crossentropy.c")
_CROSSENTROPY_DX = c_file(__file__, "crossentropy_dx.c")


def _targets_support(target_dtype: str) -> str:
    """targets.c for targets of `target_dtype`: sympile_check_targets_<dtype>."""
    return render(_TARGETS, {"YNAME": target_dtype, "Y": C_TYPES[target_dtype]})


def crossentropy_support(dtype: str, target_dtype: str
                         ) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(function name, support pieces, library units) of crossentropy.c for logits of
    `dtype`."""
    name = f"{dtype}_{target_dtype}"
    function = render(_CROSSENTROPY, {
        "NAME": name, "T": C_TYPES[dtype], "Y": C_TYPES[target_dtype], "YNAME": target_dtype,
        "NPY": NPY_TYPES[dtype], "KERNEL": kernel_name("crossentropy", dtype)})
    _, declarations, library = row_library("crossentropy", dtype)
    return (f"sympile_crossentropy_softmax_{name}",
            (declarations, _targets_support(target_dtype), function), (library,))


def crossentropy_dx_support(dtypes: tuple[str, str, str], target_dtype: str
                            ) -> tuple[str, tuple[str, ...]]:
    """(function name, support pieces) of crossentropy_dx.c for dloss, sm and the output of
    `dtypes`."""
    loss_dtype, probability_dtype, output_dtype = dtypes
    name = "_".join((*dtypes, target_dtype))
    scaled, kernel = scaled_row_kernel(probability_dtype, output_dtype)
    function = render(_CROSSENTROPY_DX, {
        "NAME": name, "L": C_TYPES[loss_dtype], "P": C_TYPES[probability_dtype],
        "O": C_TYPES[output_dtype], "Y": C_TYPES[target_dtype], "YNAME": target_dtype,
        "NPY": NPY_TYPES[output_dtype], "SCALED": scaled})
    return (f"sympile_crossentropy_softmax_dx_{name}",
            (kernel, _targets_support(target_dtype), function))


def _targets_have_c_type(node: Apply, position: int) -> bool:
    # uint64 entries above INT64_MAX would not compare as perform's do.
    return node.inputs[position].type.dtype in C_TYPES \
        and node.inputs[position].type.dtype != "uint64"


_NODE = c_file(__file__, "crossentropy_node.c")
_DX_NODE = c_file(__file__, "crossentropy_dx_node.c")
_ENTRY = "int @NAME@_node(PyObject *const *cells, const void *data);"


@functools.cache
def crossentropy_library(dtype: str, target_dtype: str) -> tuple[tuple[str, str, str],
                                                                  tuple[str, ...]]:
    """((name, declarations, library unit), the units it calls) of CrossentropySoftmax1Hot's
    entry `<name>_node` (crossentropy_node.c) for logits of `dtype`."""
    function, support, units = crossentropy_support(dtype, target_dtype)
    text = "\n".join([*support, render(_NODE, {"FUNCTION": function})])
    return library_code(f"sympile_crossentropy_{dtype}_{target_dtype}", _ENTRY, text), units


@functools.cache
def crossentropy_dx_library(dtypes: tuple[str, str, str], target_dtype: str
                            ) -> tuple[str, str, str]:
    """(name, declarations, library unit) of CrossentropySoftmax1HotDx's entry `<name>_node`
    (crossentropy_dx_node.c) for dloss, sm and the output of `dtypes`."""
    function, support = crossentropy_dx_support(dtypes, target_dtype)
    text = "\n".join([*support, render(_DX_NODE, {"FUNCTION": function})])
    return library_code(f"sympile_crossentropy_dx_{'_'.join(dtypes)}_{target_dtype}", _ENTRY,
                        text)


def crossentropy_softmax_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C of CrossentropySoftmax1Hot: per row, sm = softmax(x) and loss = -(x[y] - peak -
    log_total) from the shifted logits' exps (rows_c's crossentropy kernel, crossentropy.c),
    rows of x with strided elements copied to a buffer first; a library entry, its table the
    op's name."""
    dtype = node.inputs[0].type.dtype
    if dtype not in _DTYPES or not _targets_have_c_type(node, 1):
        return None
    library, units = crossentropy_library(dtype, node.inputs[1].type.dtype)
    return served_by(library, "node", "char *", [c_string(op)], units=units)


def crossentropy_softmax_dx_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C of CrossentropySoftmax1HotDx: out[i, k] = (sm[i, k] - [k == y[i]]) * dloss[i], in
    the output's dtype as perform computes it; a library entry, its table the op's name."""
    dtypes = [variable.type.dtype for variable in (node.inputs[0], node.inputs[1],
                                                    node.outputs[0])]
    if not set(dtypes) <= set(_DTYPES) or not _targets_have_c_type(node, 2):
        return None
    return served_by(crossentropy_dx_library(tuple(dtypes), node.inputs[2].type.dtype),
                     "node", "char *", [c_string(op)])
