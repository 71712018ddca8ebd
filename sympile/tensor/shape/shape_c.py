"""C code of SpecifyShape (x itself, its lengths checked), MakeVector (scalars into a vector)
and Reshape (numpy's PyArray_Newshape: a view of x when its strides allow one, a copy
otherwise, as x.reshape), each with perform's checks and messages (shape.c)."""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_file, c_string

__all__ = ["lengths_agree_c_code", "make_vector_c_code", "reshape_c_code",
           "specify_shape_c_code"]

# SpecifyShape's check and Reshape, with perform's messages.
_SHAPE = c_file(__file__, "shape.c")


def _integer_scalar(node: Apply, names: CNames, position: int) -> str:
    dtype = node.inputs[position].type.dtype
    return f"(npy_int64)*(const {C_TYPES[dtype]} *)PyArray_DATA({names.inputs[position]})"


def _integer_inputs(node: Apply, positions) -> bool:
    # uint64 lengths above INT64_MAX would not compare as perform's Python ints do.
    return all(node.inputs[position].type.dtype in C_TYPES
               and node.inputs[position].type.dtype not in ("bool", "uint64")
               for position in positions)


def specify_shape_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """x, after checking each given length (a negative one means any length)."""
    lengths = range(1, len(node.inputs))
    if not _integer_inputs(node, lengths):
        return None
    x = names.inputs[0]
    ndim = len(node.inputs) - 1
    reads = "\n".join(f"lengths[{axis}] = {_integer_scalar(node, names, axis + 1)};"
                      for axis in range(ndim))
    return CCode(body=f"""
{{
    npy_int64 lengths[{max(ndim, 1)}];
    {reads}
    if (sympile_specify_shape_check({x}, lengths, {ndim}) != 0) {{
        {names.fail}
    }}
}}
Py_INCREF({x});
sympile_assign_output(&{names.outputs[0]}, {x});
""", support=(_SHAPE,))


def make_vector_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """The vector of the scalar inputs, each converted to the op's dtype."""
    dtypes = [variable.type.dtype for variable in node.inputs]
    if op.dtype not in C_TYPES or not set(dtypes) <= set(C_TYPES):
        return None
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
    x, shape = names.inputs
    ndim = op.ndim
    entry_type = C_TYPES[node.inputs[1].type.dtype]
    return CCode(body=f"""
{{
    const npy_intp entries = PyArray_DIM({shape}, 0);
    npy_intp requested[{max(ndim, 1)}];
    for (int axis = 0; axis < {ndim} && axis < entries; ++axis)
        requested[axis] = (npy_intp)*(const {entry_type} *)(
            PyArray_BYTES({shape}) + axis * PyArray_STRIDE({shape}, 0));
    if (sympile_reshape({x}, requested, entries, {ndim}, {c_string(op)},
                        &{names.outputs[0]}) != 0) {{
        {names.fail}
    }}
}}
""", support=(_SHAPE,))


def view_c_code(node: Apply, names: CNames) -> CCode:
    """The C of an op whose output is its input itself (a view changing only the type)."""
    (x,), (output,) = names.inputs, names.outputs
    return CCode(body=f"""
Py_INCREF({x});
if (sympile_assign_output(&{output}, {x}) != 0) {{
    {names.fail}
}}
""")


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
