"""C code of SortOp, ArgSortOp and TopKOp through numpy's own C sorts (PyArray_Sort,
PyArray_ArgSort), so that every dtype, kind and NaN placement is numpy's bit for bit, at
numpy's speed (its vectorized quicksort included), without perform()'s trip through Python.

sort copies x into the C-contiguous output (flat for axis None, in C order) and sorts it in
place with the op's kind; argsort sorts x (raveled for axis None) with numpy's stable kind
(ArgSortOp's definition) into a new int64 array that becomes the output. TopKOp sorts x
stably (the values) and argsorts it stably (the indices), then takes the k positions it picks
along the axis (the last k in reverse for kth > 0, the first -kth for kth < 0), as perform.
"""

from __future__ import annotations

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_string

__all__ = ["argsort_c_code", "sort_c_code", "topk_c_code"]

_KINDS = {"quicksort": "NPY_QUICKSORT", "mergesort": "NPY_MERGESORT",
          "heapsort": "NPY_HEAPSORT", "stable": "NPY_STABLESORT"}


def sort_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of SortOp: see the module docstring."""
    dtype = node.inputs[0].type.dtype
    if dtype not in NPY_TYPES:
        return None
    (x,), (output,) = names.inputs, names.outputs
    ndim = node.inputs[0].type.ndim
    if op.axis is None:
        # A view of the flat output with x's shape receives x in C order.
        prepare = f"""npy_intp output_dims[1] = {{PyArray_SIZE({x})}};
if (sympile_prepare_output(&{output}, 1, output_dims, {NPY_TYPES[dtype]}) != 0) {{
    {names.fail}
}}
{{
    PyArray_Dims x_shape = {{PyArray_DIMS({x}), {ndim}}};
    PyArrayObject *shaped = (PyArrayObject *)PyArray_Newshape({output}, &x_shape, NPY_CORDER);
    const int copied = shaped == NULL ? -1 : PyArray_CopyInto(shaped, {x});
    Py_XDECREF(shaped);
    if (copied < 0) {{
        {names.fail}
    }}
}}"""
        axis = 0
    else:
        prepare = f"""if (sympile_prepare_output(&{output}, {ndim}, PyArray_DIMS({x}),
                           {NPY_TYPES[dtype]}) != 0
        || PyArray_CopyInto({output}, {x}) < 0) {{
    {names.fail}
}}"""
        axis = op.axis
    return CCode(body=f"""
{prepare}
if (PyArray_Sort({output}, {axis}, {_KINDS[op.kind]}) < 0) {{
    {names.fail}
}}
""")


def argsort_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of ArgSortOp: see the module docstring."""
    if node.inputs[0].type.dtype not in NPY_TYPES:
        return None
    (x,), (output,) = names.inputs, names.outputs
    if op.axis is None:
        source = f"(PyArrayObject *)PyArray_Ravel({x}, NPY_CORDER)"
        axis = 0
    else:
        source = f"{x}"
        axis = op.axis
    return CCode(body=f"""
/* numpy's argsort gives npy_intp indices: int64 here. */
#if NPY_SIZEOF_INTP != 8
#error "ArgSortOp's C code needs a 64-bit npy_intp"
#endif
PyArrayObject *source = {source};
if (source == NULL) {{
    {names.fail}
}}
{"" if op.axis is None else "Py_INCREF(source);"}
PyObject *permutation = PyArray_ArgSort(source, {axis}, NPY_STABLESORT);
Py_DECREF(source);
if (sympile_assign_output(&{output}, (PyArrayObject *)permutation) != 0) {{
    {names.fail}
}}
""")


def topk_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of TopKOp: see the module docstring."""
    dtype, kth_dtype = node.inputs[0].type.dtype, node.inputs[1].type.dtype
    if dtype not in NPY_TYPES or kth_dtype not in C_TYPES:
        return None
    (x, kth), outputs = names.inputs, list(names.outputs)
    axis = op.axis % node.inputs[0].type.ndim
    fail = f"Py_DECREF(positions);\n    {names.fail}"
    values = indices = ""
    if op.return_values:
        values = f"""{{
    PyArrayObject *sorted = (PyArrayObject *)PyArray_NewCopy({x}, NPY_CORDER);
    if (sorted == NULL || PyArray_Sort(sorted, {axis}, NPY_STABLESORT) < 0) {{
        Py_XDECREF(sorted);
        {fail}
    }}
    PyObject *taken = PyArray_TakeFrom(sorted, (PyObject *)positions, {axis}, NULL, NPY_RAISE);
    Py_DECREF(sorted);
    if (sympile_assign_output(&{outputs.pop(0)}, (PyArrayObject *)taken) != 0) {{
        {fail}
    }}
}}"""
    if op.return_indices:
        indices = f"""{{
    PyObject *permutation = PyArray_ArgSort({x}, {axis}, NPY_STABLESORT);
    PyObject *taken = permutation == NULL ? NULL : PyArray_TakeFrom(
        (PyArrayObject *)permutation, (PyObject *)positions, {axis}, NULL, NPY_RAISE);
    Py_XDECREF(permutation);
    PyObject *cast = taken == NULL ? NULL
        : PyArray_Cast((PyArrayObject *)taken, {NPY_TYPES[op.idx_dtype]});
    Py_XDECREF(taken);
    if (sympile_assign_output(&{outputs.pop(0)}, (PyArrayObject *)cast) != 0) {{
        {fail}
    }}
}}"""
    return CCode(body=f"""
const npy_intp length = PyArray_DIM({x}, {axis});
const npy_int64 kth = (npy_int64)*({C_TYPES[kth_dtype]} *)PyArray_DATA({kth});
if (kth == 0 || kth > length || -kth > length) {{
    PyErr_Format(PyExc_ValueError, "%s: kth must be nonzero and at most the length of axis "
                 "{axis} (%ld), got %lld", {c_string(op)}, (long)length, (long long)kth);
    {names.fail}
}}
npy_intp count = kth > 0 ? (npy_intp)kth : (npy_intp)-kth;
PyArrayObject *positions = (PyArrayObject *)PyArray_SimpleNew(1, &count, NPY_INTP);
if (positions == NULL) {{
    {names.fail}
}}
npy_intp *position = (npy_intp *)PyArray_DATA(positions);
for (npy_intp i = 0; i < count; ++i) {{
    position[i] = kth > 0 ? length - 1 - i : i;
}}
{values}
{indices}
Py_DECREF(positions);
""")
