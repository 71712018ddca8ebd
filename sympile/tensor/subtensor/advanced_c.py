"""C code of AdvancedSubtensor and AdvancedIncSubtensor (and its inplace form) for a general
advanced index: integer arrays on any axes (broadcast together) and boolean masks (their
nonzero() arrays), mixed with integers, slices (constant or symbolic parts), numpy.newaxis
and Ellipsis, with numpy's layout of the result.

The layout is fixed by the types: the region's axes are the basic entries' axes with the
broadcast shape B of the advanced entries (integer arrays, and integers with them) in place
of the first one when the advanced entries are adjacent, else in front (as _layout). At run
time the C checks what _layout / numpy check, in their order and with their messages
(integers, slice steps and mask shapes entry by entry, then the broadcast, then, when B is
not empty, every array entry against its axis), computes one byte offset into x per position
of B, and walks the region in C order: reads copy each element, writes add (every
occurrence of a repeated element adds, numpy.add.at) or set (the last occurrence wins).

With ignore_duplicates (numpy's x[index] += y) the region is first read and incremented into
a buffer, then written: a repeated element gets one increment, from its last occurrence.
uint64 index arrays give no C code (perform runs), nor increments of bool or of dtypes
without C arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_file, c_string
from sympile.tensor.subtensor.index_kinds import ARRAY, MASK, SCALAR, IndexSlice
from sympile.tensor.subtensor.rows_c import VALUE_CHECK_SUPPORT, update_target, value_check

__all__ = ["advanced_index_read_c_code", "advanced_index_write_c_code"]

# Python's slice.indices for a step already checked non-zero: the first index and the count.
_SLICE_SUPPORT = c_file(__file__, "advanced_slices.h")

# The IndexError of arrays that do not broadcast, with _layout's shape text: "(2,) () (3,4)".
_BROADCAST_ERROR_SUPPORT = c_file(__file__, "advanced_broadcast_error.h")


@dataclass(frozen=True)
class _RegionAxis:
    """One axis of the region: `kind` 'slice' (x axis `x_axis` through slice number
    `slice_number`), 'full' (all of x axis `x_axis`), 'new' (numpy.newaxis) or 'broadcast'
    (axis `x_axis` of B)."""

    kind: str
    x_axis: int
    slice_number: int = -1


@dataclass(frozen=True)
class _Plan:
    """What the C of one index does, from its types."""

    slices: tuple  # (x axis, start, stop, step) per slice; each part None, an int or an input
    integers: tuple  # (x axis, constant int or None, input position or None) per integer
    masks: tuple  # (x axis, input position, ndim) per mask
    # (x axis, C expression of the PyArrayObject *, ndim, dtype) per integer array, a mask's
    # nonzero() arrays included
    arrays: tuple
    # ('array', array number), ('integer', number) or ('mask', number of its first array) in
    # idx_list order
    advanced_order: tuple
    region: tuple  # _RegionAxis per axis of the region
    broadcast_ndim: int


def _index_dtype_supported(dtype: str) -> bool:
    return dtype in C_TYPES and dtype not in ("bool", "uint64")


def _plan(op, node: Apply, names: CNames, first_index: int) -> _Plan | None:
    x_type = node.inputs[0].type
    index_inputs = node.inputs[first_index:]
    if x_type.dtype not in NPY_TYPES:
        return None
    if not all(_index_dtype_supported(v.type.dtype) or v.type.dtype == "bool"
               for v in index_inputs):
        return None
    steps = op._steps(x_type.ndim, index_inputs)
    slices, integers, masks, arrays, advanced_order = [], [], [], [], []
    pieces: list[tuple[bool, list[_RegionAxis]]] = []
    for step in steps:
        entry = step.entry
        if entry is None:
            pieces.append((False, [_RegionAxis("new", -1)]))
        elif entry is Ellipsis:
            pieces.append((False, [_RegionAxis("full", axis)
                                   for axis in range(step.axis, step.axis + step.n_axes)]))
        elif isinstance(entry, IndexSlice):
            inputs = iter(step.inputs)
            parts = tuple(("input", first_index + next(inputs)) if part == SCALAR else part
                          for part in entry.parts)
            pieces.append((False, [_RegionAxis("slice", step.axis, len(slices))]))
            slices.append((step.axis, *parts))
        elif entry == ARRAY:
            position = first_index + step.inputs[0]
            variable = node.inputs[position]
            advanced_order.append(("array", len(arrays)))
            arrays.append((step.axis, names.inputs[position], variable.type.ndim,
                           variable.type.dtype))
            pieces.append((True, []))
        elif entry == MASK:
            position = first_index + step.inputs[0]
            advanced_order.append(("mask", len(arrays)))
            # A 0-d mask selects no axis: one array of length 1 (True) or 0 (False) that
            # only takes part in the broadcast (x axis None).
            arrays += [(None if step.n_axes == 0 else step.axis + axis,
                        f"((PyArrayObject *)PyTuple_GET_ITEM(mask{len(masks)}_nonzero, {axis}))",
                        1, "int64") for axis in range(max(step.n_axes, 1))]
            masks.append((step.axis, position, step.n_axes))
            pieces.append((True, []))
        else:
            position = first_index + step.inputs[0] if entry == SCALAR else None
            constant = None if entry == SCALAR else int(entry)
            advanced_order.append(("integer", len(integers)))
            integers.append((step.axis, constant, position))
            pieces.append((True, []))
    broadcast_ndim = max((ndim for _, _, ndim, _ in arrays), default=0)
    broadcast = [_RegionAxis("broadcast", axis) for axis in range(broadcast_ndim)]
    positions = [i for i, (advanced, _) in enumerate(pieces) if advanced]
    basic = [(i, axes) for i, (advanced, axes) in enumerate(pieces) if not advanced]
    if positions and positions[-1] - positions[0] + 1 == len(positions):
        region = [axis for i, axes in basic if i < positions[0] for axis in axes] + broadcast \
            + [axis for i, axes in basic if i > positions[-1] for axis in axes]
    else:
        region = broadcast + [axis for _, axes in basic for axis in axes]
    return _Plan(tuple(slices), tuple(integers), tuple(masks), tuple(arrays),
                 tuple(advanced_order),
                 tuple(region), broadcast_ndim)


def _cleanup(plan: _Plan) -> str:
    """C that releases the masks' nonzero() tuples."""
    return "".join(f"Py_XDECREF(mask{number}_nonzero); " for number in range(len(plan.masks)))


def _with_cleanup(plan: _Plan, names: CNames) -> CNames:
    """names whose fail statement first releases the masks' nonzero() tuples."""
    if not plan.masks:
        return names
    return CNames(names.inputs, names.outputs, f"{{ {_cleanup(plan)}{names.fail} }}")


def _scalar(names: CNames, node: Apply, position: int) -> str:
    dtype = node.inputs[position].type.dtype
    return f"(npy_int64)*(const {C_TYPES[dtype]} *)PyArray_DATA({names.inputs[position]})"


def _part(part, names: CNames, node: Apply) -> tuple[str, str]:
    """(whether given, C int64 value) of a slice part."""
    if part is None:
        return "0", "0"
    if isinstance(part, tuple):
        return "1", _scalar(names, node, part[1])
    return "1", f"(npy_int64){part}"


def _basic_checks(op, plan: _Plan, names: CNames, node: Apply, word: str) -> str:
    """C, in idx_list order, that computes each slice's first index and count (ValueError
    for a zero step) and checks and normalizes each integer."""
    x = names.inputs[0]
    lines = [f"PyObject *mask{number}_nonzero = NULL;" for number in range(len(plan.masks))]
    slice_number = integer_number = mask_number = 0
    for entry in op.idx_list:
        if isinstance(entry, IndexSlice):
            axis, start, stop, step = plan.slices[slice_number]
            has_start, start_value = _part(start, names, node)
            has_stop, stop_value = _part(stop, names, node)
            step_value = _part(step, names, node)[1] if step is not None else "1"
            lines.append(f"""npy_int64 slice{slice_number}_first, slice{slice_number}_step;
npy_intp slice{slice_number}_count;
{{
    slice{slice_number}_step = {step_value};
    if (slice{slice_number}_step == 0) {{
        PyErr_Format(PyExc_ValueError, "%s: slice step cannot be zero", {c_string(op)});
        {names.fail}
    }}
    slice{slice_number}_count = sympile_slice_first_and_count(
        PyArray_DIM({x}, {axis}), {has_start}, {start_value}, {has_stop}, {stop_value},
        slice{slice_number}_step, &slice{slice_number}_first);
}}""")
            slice_number += 1
        elif entry == MASK:
            lines.append(_mask_check(op, plan, names, mask_number, word == "length"))
            mask_number += 1
        elif entry is not None and entry is not Ellipsis and not _is_array(entry):
            axis, constant, position = plan.integers[integer_number]
            value = f"(npy_int64){constant}" if position is None \
                else _scalar(names, node, position)
            lines.append(f"""npy_int64 integer{integer_number} = {value};
{{
    const npy_intp length = PyArray_DIM({x}, {axis});
    if (integer{integer_number} < -length || integer{integer_number} >= length) {{
        PyErr_Format(PyExc_IndexError, "%s: index %lld is out of bounds for axis {axis} "
                     "with {word} %lld", {c_string(op)}, (long long)integer{integer_number},
                     (long long)length);
        {names.fail}
    }}
    if (integer{integer_number} < 0) integer{integer_number} += length;
}}""")
            integer_number += 1
    return "\n".join(lines)


def _mask_check(op, plan: _Plan, names: CNames, number: int, layout_message: bool) -> str:
    """C that checks mask `number` against the axes it indexes (with _layout's message for
    the writes, numpy's for the reads) and sets mask{number}_nonzero."""
    axis, position, ndim = plan.masks[number]
    x, mask = names.inputs[0], names.inputs[position]
    if ndim == 0:
        return f"""{{
    npy_intp count = *(const npy_bool *)PyArray_DATA({mask}) ? 1 : 0;
    PyObject *selection = PyArray_ZEROS(1, &count, NPY_INT64, 0);
    mask{number}_nonzero = selection == NULL ? NULL : PyTuple_Pack(1, selection);
    Py_XDECREF(selection);
    if (mask{number}_nonzero == NULL) {{
        {names.fail}
    }}
}}"""
    axes = f"axis {axis}" if ndim == 1 else f"axes {axis}..{axis + ndim - 1}"
    if layout_message:
        report = f"""PyObject *mask_shape = PyArray_IntTupleFromIntp({ndim}, PyArray_DIMS({mask}));
PyObject *x_lengths = PyArray_IntTupleFromIntp({ndim}, PyArray_DIMS({x}) + {axis});
if (mask_shape != NULL && x_lengths != NULL)
    PyErr_Format(PyExc_IndexError, "%s: a boolean mask of shape %R does not match the "
                 "indexed {axes} of lengths %R", {c_string(op)}, mask_shape, x_lengths);
Py_XDECREF(mask_shape);
Py_XDECREF(x_lengths);"""
    else:
        report = f"""PyErr_Format(PyExc_IndexError, "%s: boolean index did not match indexed array "
             "along axis %d; size of axis is %lld but size of corresponding boolean axis is "
             "%lld", {c_string(op)}, {axis} + axis, (long long)PyArray_DIM({x}, {axis} + axis),
             (long long)PyArray_DIM({mask}, axis));"""
    return f"""for (int axis = 0; axis < {ndim}; ++axis) {{
    if (PyArray_DIM({mask}, axis) != PyArray_DIM({x}, {axis} + axis)) {{
        {report}
        {names.fail}
    }}
}}
mask{number}_nonzero = PyArray_Nonzero({mask});
if (mask{number}_nonzero == NULL) {{
    {names.fail}
}}"""


def _is_array(entry) -> bool:
    return entry == ARRAY


def _array_loops(ndim: int, dims: str, statement: str) -> str:
    """Nested C loops over the `ndim` axes of lengths dims[axis] (counters a0, a1, ...)."""
    opening = "".join(f"for (npy_intp a{axis} = 0; a{axis} < {dims}[{axis}]; ++a{axis}) {{\n"
                      for axis in range(ndim))
    return opening + statement + "\n" + "}" * ndim


def _broadcast(op, plan: _Plan, names: CNames, word: str) -> str:
    """C that computes B (`broadcast`, `broadcast_size`), the step of each array through B
    (0 along the axes it is broadcast over), and, when B is not empty, checks every array
    entry against its axis."""
    x = names.inputs[0]
    ndim = plan.broadcast_ndim
    lines = [f"npy_intp broadcast[{max(ndim, 1)}];",
             f"for (int axis = 0; axis < {ndim}; ++axis) broadcast[axis] = 1;",
             "int broadcasts = 1;"]
    for _, array, array_ndim, _ in plan.arrays:
        offset = ndim - array_ndim
        lines.append(f"""for (int axis = 0; axis < {array_ndim}; ++axis) {{
    const npy_intp length = PyArray_DIM({array}, axis);
    npy_intp *target = &broadcast[{offset} + axis];
    if (length != 1) {{
        if (*target == 1) *target = length;
        else if (*target != length) broadcasts = 0;
    }}
}}""")
    shapes = ", ".join("NULL" if kind == "integer" else plan.arrays[number][1]
                       for kind, number in plan.advanced_order)
    lines.append(f"""if (!broadcasts) {{
    PyArrayObject *const shapes[{len(plan.advanced_order)}] = {{{shapes}}};
    sympile_index_broadcast_error({c_string(op)}, {len(plan.advanced_order)}, shapes);
    {names.fail}
}}
npy_intp broadcast_size = 1;
for (int axis = 0; axis < {ndim}; ++axis) broadcast_size *= broadcast[axis];""")
    for number, (axis, array, array_ndim, dtype) in enumerate(plan.arrays):
        offset = ndim - array_ndim
        if axis is None:
            lines.append(f"npy_intp array{number}_steps[{max(ndim, 1)}];")
            continue
        lines.append(f"npy_intp array{number}_steps[{max(ndim, 1)}];")
        lines += [f"array{number}_steps[{b}] = 0;" for b in range(offset)]
        lines += [f"array{number}_steps[{offset + a}] = PyArray_DIM({array}, {a}) == 1 ? 0 "
                  f": PyArray_STRIDE({array}, {a});" for a in range(array_ndim)]
        element = (f"(npy_int64)*(const {C_TYPES[dtype]} *)(PyArray_BYTES({array})"
                   + "".join(f" + a{a} * PyArray_STRIDE({array}, {a})"
                             for a in range(array_ndim)) + ")")
        check = f"""const npy_int64 index = {element};
if (index < -length || index >= length) {{
    PyErr_Format(PyExc_IndexError, "%s: index %lld is out of bounds for axis {axis} with "
                 "{word} %lld", {c_string(op)}, (long long)index, (long long)length);
    {names.fail}
}}"""
        lines.append(f"""if (broadcast_size > 0) {{
    const npy_intp length = PyArray_DIM({x}, {axis});
    const npy_intp *dims = PyArray_DIMS({array});
    {_array_loops(array_ndim, "dims", check)}
}}""")
    return "\n".join(lines)


def _region_dims(plan: _Plan, x: str) -> str:
    ndim = len(plan.region)
    lines = [f"npy_intp region[{max(ndim, 1)}];"]
    for axis, region_axis in enumerate(plan.region):
        length = {"slice": f"slice{region_axis.slice_number}_count",
                  "full": f"PyArray_DIM({x}, {region_axis.x_axis})", "new": "1",
                  "broadcast": f"broadcast[{region_axis.x_axis}]"}[region_axis.kind]
        lines.append(f"region[{axis}] = {length};")
    return "\n".join(lines)


def _offsets(plan: _Plan, names: CNames, target: str) -> str:
    """C that sets `base` (the address of the region's first element in `target`, which has
    x's shape) and `offsets[b]`: the bytes from base to the element at position b of B."""
    lines = [f"char *base = PyArray_BYTES({target});"]
    for number, (axis, *_) in enumerate(plan.slices):
        lines.append(f"if (slice{number}_count > 0) base += slice{number}_first "
                     f"* PyArray_STRIDE({target}, {axis});")
    for number, (axis, *_) in enumerate(plan.integers):
        lines.append(f"base += integer{number} * PyArray_STRIDE({target}, {axis});")
    ndim = plan.broadcast_ndim
    terms = []
    for number, (axis, array, _, dtype) in enumerate(plan.arrays):
        if axis is None:
            continue
        pointer = f"PyArray_BYTES({array})" + "".join(
            f" + a{b} * array{number}_steps[{b}]" for b in range(ndim))
        terms.append(f"""{{
    npy_int64 index = (npy_int64)*(const {C_TYPES[dtype]} *)({pointer});
    if (index < 0) index += PyArray_DIM({target}, {axis});
    offset += index * PyArray_STRIDE({target}, {axis});
}}""")
    statement = "npy_intp offset = 0;\n" + "\n".join(terms) + "\noffsets[position++] = offset;"
    lines.append(f"""npy_intp *offsets = (npy_intp *)malloc(
    (broadcast_size > 0 ? broadcast_size : 1) * sizeof(npy_intp));
if (offsets == NULL) {{
    PyErr_NoMemory();
    {names.fail}
}}
{{
    npy_intp position = 0;
    {_array_loops(ndim, "broadcast", statement)}
}}""")
    return "\n".join(lines)


def _region_walk(plan: _Plan, target: str, statement: str, with_value: bool) -> str:
    """Nested C loops over the region in C order; inside, `element` is the address of the
    region element in `target` (and `value` that of y's element when with_value). Without
    integer arrays the integers alone select: base is the element (offsets[0] is 0)."""
    opening, closing = [], []
    parent, value_parent = "base", "y_start"
    flat = "0"
    for axis, region_axis in enumerate(plan.region):
        opening.append(f"for (npy_intp k{axis} = 0; k{axis} < region[{axis}]; ++k{axis}) {{")
        if region_axis.kind == "broadcast":
            opening.append(f"const npy_intp flat{axis} = {flat} * region[{axis}] + k{axis};")
            flat = f"flat{axis}"
            step = None
            if region_axis.x_axis == plan.broadcast_ndim - 1:
                opening.append(f"char *pointer{axis} = {parent} + offsets[{flat}];")
                parent = f"pointer{axis}"
        else:
            step = {"slice": f"slice{region_axis.slice_number}_step * "
                             f"PyArray_STRIDE({target}, {region_axis.x_axis})",
                    "full": f"PyArray_STRIDE({target}, {region_axis.x_axis})",
                    "new": None}[region_axis.kind]
            if step is not None:
                opening.append(f"char *pointer{axis} = {parent} + k{axis} * ({step});")
                parent = f"pointer{axis}"
        if with_value:
            opening.append(f"const char *value{axis} = {value_parent} "
                           f"+ k{axis} * y_strides[{axis}];")
            value_parent = f"value{axis}"
        closing.append("}")
    declarations = f"char *element = {parent};"
    if with_value:
        declarations += f"\nconst char *value = {value_parent};"
    return "\n".join(opening) + f"\n{declarations}\n{statement}\n" + "".join(closing)


def advanced_index_read_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of AdvancedSubtensor for a general index: see the module docstring."""
    plan = _plan(op, node, names, first_index=1)
    if plan is None:
        return None
    names = _with_cleanup(plan, names)
    x = names.inputs[0]
    (output,) = names.outputs
    dtype = node.outputs[0].type.dtype
    item_size = np.dtype(dtype).itemsize
    ndim = len(plan.region)
    walk = _region_walk(plan, x, f"memcpy(destination, element, {item_size});\n"
                                 f"destination += {item_size};", with_value=False)
    return CCode(support=(_SLICE_SUPPORT, _BROADCAST_ERROR_SUPPORT), body=f"""
{_basic_checks(op, plan, names, node, "size")}
{_broadcast(op, plan, names, "size")}
{_region_dims(plan, x)}
if (sympile_prepare_output(&{output}, {ndim}, region, {NPY_TYPES[dtype]}) != 0) {{
    {names.fail}
}}
if (PyArray_SIZE({output}) > 0) {{
    {_offsets(plan, names, x)}
    char *destination = PyArray_BYTES({output});
    {{
        {walk}
    }}
    free(offsets);
}}
{_cleanup(plan)}
""")


def advanced_index_write_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """C code of AdvancedIncSubtensor (and its inplace form, per destroy_map) for a general
    index: see the module docstring."""
    dtype = node.outputs[0].type.dtype
    if not op.set_instead_of_inc and (dtype == "bool" or dtype not in C_TYPES):
        return None
    plan = _plan(op, node, names, first_index=2)
    if plan is None:
        return None
    names = _with_cleanup(plan, names)
    x, y = names.inputs[:2]
    (output,) = names.outputs
    ndim = len(plan.region)
    item_size = np.dtype(dtype).itemsize
    target = update_target(op, x, output, node.inputs[0].type.ndim, dtype, names.fail)
    element_type = C_TYPES.get(dtype)
    if op.set_instead_of_inc:
        walk = _region_walk(plan, output, f"memcpy(element, value, {item_size});",
                            with_value=True)
    elif op.ignore_duplicates:
        # Read and increment the whole region before writing any of it (numpy's order).
        walk = f"""{element_type} *sums = ({element_type} *)malloc(
    region_size * sizeof({element_type}));
if (sums == NULL) {{
    free(offsets);
    PyErr_NoMemory();
    {names.fail}
}}
npy_intp position = 0;
{{
{_region_walk(plan, output, f"sums[position++] = *({element_type} *)element "
                            f"+ *(const {element_type} *)value;", with_value=True)}
}}
position = 0;
{{
{_region_walk(plan, output, f"*({element_type} *)element = sums[position++];",
              with_value=True)}
}}
free(sums);"""
    else:
        walk = _region_walk(plan, output, f"*({element_type} *)element "
                                          f"+= *(const {element_type} *)value;",
                            with_value=True)
    return CCode(support=(_SLICE_SUPPORT, _BROADCAST_ERROR_SUPPORT, VALUE_CHECK_SUPPORT),
                 body=f"""
{_basic_checks(op, plan, names, node, "length")}
{_broadcast(op, plan, names, "length")}
{_region_dims(plan, x)}
{value_check(op, node, y, "region", ndim, names.fail)}
{target}
{{
    npy_intp region_size = 1;
    for (int axis = 0; axis < {ndim}; ++axis) region_size *= region[axis];
    if (region_size > 0) {{
        {_offsets(plan, names, output)}
        const char *y_start = PyArray_BYTES({y});
        {{
        {walk}
    }}
        free(offsets);
    }}
}}
{_cleanup(plan)}
""")
