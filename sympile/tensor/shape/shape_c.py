"""C code of Shape, Shape_i, the views that change only the type, SpecifyShape (x itself, its
lengths checked), MakeVector (scalars into a vector) and Reshape (numpy's PyArray_Newshape: a
view of x when its strides allow one, a copy otherwise, as x.reshape), each with perform's
checks and messages. All but MakeVector are entries of one library unit (shape.c, shape.h),
which the program calls with the node's table: their nodes compile no C of their own."""

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
    served_by,
)
from sympile.tensor.c_toolkit import INTEGER_VALUE

__all__ = ["lengths_agree_c_code", "make_vector_c_code", "reshape_c_code", "shape_c_code",
           "shape_i_c_code", "shape_library", "specify_shape_c_code", "view_c_code"]

_SHAPE = c_file(__file__, "shape.c")
_DECLARATIONS = c_file(__file__, "shape.h")
# The dtypes of lengths C reads (integer_value.h; uint64 lengths above INT64_MAX would not
# compare as perform's Python ints do).
_LENGTH_DTYPES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"}


@functools.cache
def shape_library() -> tuple[str, str, str]:
    """(name, declarations, library unit) of shape.c: the entries of shape.h."""
    return library_code("sympile_shape", _DECLARATIONS, INTEGER_VALUE + _SHAPE)


def _integer_inputs(node: Apply, positions) -> bool:
    return all(node.inputs[position].type.dtype in _LENGTH_DTYPES for position in positions)


def shape_c_code() -> CCode:
    """shape(x): the int64 vector of x's lengths."""
    return served_by(shape_library(), "shape")


def shape_i_c_code(axis: int) -> CCode:
    """shape_i(x): the length of `axis`, an int64 scalar."""
    return served_by(shape_library(), "shape_i", "int", [str(axis)])


def specify_shape_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """x, after checking each given length (a negative one means any length)."""
    if not _integer_inputs(node, range(1, len(node.inputs))):
        return None
    return served_by(shape_library(), "specify_shape", "int", [str(len(node.inputs) - 1)])


def make_vector_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """The vector of the scalar inputs, each converted to the op's dtype: shape.c's entry
    for integer scalars into int64 (a shape), else code of the node's own."""
    dtypes = [variable.type.dtype for variable in node.inputs]
    if op.dtype not in C_TYPES or not set(dtypes) <= set(C_TYPES):
        return None
    if op.dtype == "int64" and set(dtypes) <= _LENGTH_DTYPES:
        return served_by(shape_library(), "make_vector", "int", [str(len(dtypes))])
    element_type = C_TYPES[op.dtype]
    (output,) = names.outputs
    stores = "\n".join(
        f"values[{position}] = ({element_type})*(const {C_TYPES[dtype]} *)"
        f"PyArray_DATA({name});"
        for position, (dtype, name) in enumerate(zip(dtypes, names.inputs)))
    return CCode(body=f"""
{{
    const npy_intp length = {len(dtypes)};
    if (sympile_prepare_output(&{output}, 1, &length, {NPY_TYPES[op.dtype]}) != 0) {{
        {names.fail}
    }}
    {element_type} *values = ({element_type} *)PyArray_DATA({output});
    (void)values;
    {stores}
}}
""")


def reshape_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """x.reshape(shape): the entries checked as perform does (count, >= -1, one -1 at most,
    the size), the -1 resolved, then PyArray_Newshape."""
    if not _integer_inputs(node, [1]):
        return None
    return served_by(shape_library(), "reshape", "SympileReshape",
                     [str(op.ndim), c_string(op)])


def view_c_code() -> CCode:
    """The C of an op whose output is its input itself (a view changing only the type)."""
    return served_by(shape_library(), "view")


def lengths_agree_c_code(op, node: Apply, names: CNames) -> CCode:
    """The target itself, after perform's comparisons of lengths, with its message. The
    message names the node it guards (with its constants), so the code goes into the
    function's main unit, not a unit of its own that each new function would compile."""
    checks = []
    for (i, a), (j, b) in op.pairs:
        first, second = names.inputs[i], names.inputs[j]
        checks.append(f"""
if (PyArray_DIM({first}, {a}) != PyArray_DIM({second}, {b})) {{
    PyObject *one = PyArray_IntTupleFromIntp(PyArray_NDIM({first}), PyArray_DIMS({first}));
    PyObject *other = PyArray_IntTupleFromIntp(PyArray_NDIM({second}), PyArray_DIMS({second}));
    if (one != NULL && other != NULL)
        PyErr_Format(PyExc_ValueError, "%s: input shapes %R and %R disagree (axis {a} has "
                     "length %lld, axis {b} has length %lld)", {c_string(op.what)}, one, other,
                     (long long)PyArray_DIM({first}, {a}), (long long)PyArray_DIM({second}, {b}));
    Py_XDECREF(one);
    Py_XDECREF(other);
    {names.fail}
}}""")
    target, output = names.inputs[0], names.outputs[0]
    return CCode(body="\n".join(checks) + f"""
Py_INCREF({target});
if (sympile_assign_output(&{output}, {target}) != 0) {{
    {names.fail}
}}
""", in_main_unit=True)
