"""How an Op describes its C code to the C backend (sympile/link/c), without importing it.

`Op.c_code(node, names)` returns a CCode, or None to have the backend call `perform()`.
The backend wraps `body` in its own block and gives it, through `names`:

- `names.inputs[i]`: a C expression of type `PyArrayObject *` for input i: a borrowed,
  non-NULL reference to an ndarray of exactly the input's dtype and ndim (any strides, maybe
  not aligned to more than the dtype, maybe read-only).
- `names.outputs[i]`: a C lvalue of type `PyArrayObject *` for output i. On entry it is NULL or
  an owned reference to the array this node gave on the previous call; the body may reuse it
  (see `sympile_prepare_output` below) or `Py_XDECREF` it and assign a new one. On success it
  must hold an owned reference to an ndarray of exactly the output's dtype and ndim. An output
  that is a view (view_map) or written over an input (destroy_map) holds a new reference to
  that array or to a view of it.
- `names.fail`: a C statement that aborts the node; run it after setting a Python exception
  (`PyErr_Format(PyExc_ValueError, "...")`). The backend adds the op, the input shapes and
  where the user created the variable, as for errors raised by perform().

The body is the inside of a C function of its own (its identifiers cannot clash with another
node's), in a translation unit of its own (an op unit, compiled once and cached for every
module that has the same code). Every unit starts with Python.h, numpy/arrayobject.h, math.h,
stdint.h, string.h and these helpers (defined by the backend):

    int sympile_prepare_output(PyArrayObject **out, int ndim, const npy_intp *dims,
                               int typenum);
        *out becomes a C-contiguous, writeable array of that shape and type: the old one when
        it fits and nothing else refers to it, otherwise a new one (uninitialised). Returns 0,
        or -1 with a Python exception set.
    int sympile_assign_output(PyArrayObject **out, PyArrayObject *value);
        *out becomes `value` (a reference this call steals; NULL means an exception is set
        and is passed on). Returns 0, or -1.

`support` pieces are top-level C (static helper functions, macros) put before the body in
its unit: give helpers names that say what they compute, including the dtype
(`sympile_sum_float32`), so equal text means equal code. `blas` names BLAS routines
(e.g. "dgemm") that the body calls through the function pointers `sympile_blas_dgemm` etc.,
which the backend loads from scipy.linalg.cython_blas (Fortran calling convention:
every argument by pointer, column-major). `openmp`: the body uses OpenMP pragmas.

`between_nodes` names functions `void name(void)`, defined in the node's library units, that
the module calls after each node it runs: for work that goes on while other nodes run (a
collective in flight makes progress only in MPI's calls). They must return at once when
there is nothing to do.

`units` are the sources of library units: top-level C that the backend compiles as
translation units of their own (after the same helpers), caches, and links into every
module whose nodes name them, once however many nodes do. They hold code too large to
compile again in each op unit (sympile.tensor.blas.skinny's kernels, the BLAS family's
entry points and helpers, the softmax rows); their functions are not static, have names
unique to their text (graph.ccode.content_name), and the node's `support` declares them.
They may call the node's `blas` routines.

`in_main_unit`: the node's C goes into the function's main unit, compiled for each new
function anyway, instead of an op unit of its own, for a small body whose text names its
node (a message that quotes another node with its constants): as a unit of its own, each
new function would compile it again. Its support pieces go into the main unit once each
however many nodes give them, so they hold declarations and named tables, no static
function; such code calls no BLAS routine.

`data` and `table`: the node's constants as a table, which the program passes to the node's
function (`&data`, for a body `data`, a `const void *`): `table` holds the C pieces the main
unit gets (the table's type, its definition: a static constant named by its text,
constant_table), and the body reads the node's rank, axes or message from it, so that its op
unit's text is the same for every node of its kind and compiled once (a reduction's over any
axes). `entry`: the node is served by a function of one of its library units, `int
entry(PyObject *const *cells, const void *data)` (cells as an op unit's function gets them,
inputs then outputs, taking and storing its outputs as that one does), called with the
table; the node compiles no C of its own (no body), and its support goes into the main unit
as in_main_unit's does (served_by).
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass

# The C type that holds one element of each dtype. float16 and complex have no arithmetic
# in C; ops give no C code for them and the backend falls back to perform().
C_TYPES = {
    "bool": "npy_bool", "int8": "npy_int8", "int16": "npy_int16", "int32": "npy_int32",
    "int64": "npy_int64", "uint8": "npy_uint8", "uint16": "npy_uint16",
    "uint32": "npy_uint32", "uint64": "npy_uint64", "float32": "npy_float32",
    "float64": "npy_float64",
}

# numpy's type numbers, by name, for PyArray_SimpleNew and friends.
NPY_TYPES = {
    "bool": "NPY_BOOL", "int8": "NPY_INT8", "int16": "NPY_INT16", "int32": "NPY_INT32",
    "int64": "NPY_INT64", "uint8": "NPY_UINT8", "uint16": "NPY_UINT16",
    "uint32": "NPY_UINT32", "uint64": "NPY_UINT64", "float16": "NPY_FLOAT16",
    "float32": "NPY_FLOAT32", "float64": "NPY_FLOAT64", "complex64": "NPY_COMPLEX64",
    "complex128": "NPY_COMPLEX128",
}


@dataclass(frozen=True)
class CCode:
    """The C of one node: `body` statements, plus top-level `support` code, the BLAS
    routines the body calls, whether it uses OpenMP, the library units its support calls
    into, and their functions to call between nodes (see the module docstring)."""

    body: str
    support: tuple[str, ...] = ()
    blas: tuple[str, ...] = ()
    openmp: bool = False
    units: tuple[str, ...] = ()
    between_nodes: tuple[str, ...] = ()
    in_main_unit: bool = False
    entry: str = ""
    data: str = ""
    table: tuple[str, ...] = ()

    def __post_init__(self):
        if self.in_main_unit and self.blas:
            raise ValueError("CCode: code in the main unit calls no BLAS routine")
        if self.entry and self.body:
            raise ValueError("CCode: a node served by a library entry has no body")


@dataclass(frozen=True)
class CNames:
    """The C names a node's body works with (see the module docstring)."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    fail: str


# Ends the text of a C file in a generated source: the writer of the source (sympile.cache)
# turns it into `#line <its own line + 1> "<the source's path>"`, so that what follows is
# attributed to the generated file again.
RESUME_LINE = '#line 1 "@sympile-resume@"'


@functools.cache
def c_file(beside: str, name: str) -> str:
    """The text of the C file `name` in the folder of the module file `beside` (a module's
    __file__), for a generated source: headed by a #line directive, so that a compiler error
    in it names the file and its line, and closed by RESUME_LINE."""
    path = os.path.join(os.path.dirname(os.path.abspath(beside)), name)
    with open(path, encoding="utf-8") as stream:
        text = stream.read().rstrip("\n")
    return f'#line 1 "{path}"\n{text}\n{RESUME_LINE}\n'


def content_name(prefix: str, text: str) -> str:
    """`prefix` and 16 hex digits of the sha256 of C `text` less its #line marks: a name
    given by the code alone, the same wherever the package lies (the marks name its
    files), so that a library unit keeps its name, and key, from the package's build to
    its install (sympile.compile.prebuild)."""
    code = "\n".join(line for line in text.split("\n") if not line.startswith("#line "))
    return f"{prefix}_{hashlib.sha256(code.encode()).hexdigest()[:16]}"


def library_code(prefix: str, declarations: str, text: str) -> tuple[str, str, str]:
    """(name, declarations, library unit) of C `text` whose entry points are written
    `@NAME@_<entry>`, declared (with the types they take) by `declarations` for the op units
    that call them: the unit holds the declarations then the text, and `@NAME@` is
    content_name(prefix, unit) throughout."""
    unit = f"{declarations}\n{text}"
    name = content_name(prefix, unit)
    return name, declarations.replace("@NAME@", name), unit.replace("@NAME@", name)


def c_array(c_type: str, values) -> str:
    """A C99 compound literal of the ints `values`, for a table's field (at file scope it
    has static storage); C has no empty arrays, so an empty one holds a 0."""
    return f"(const {c_type}[]){{{', '.join(map(str, values)) or '0'}}}"


def served_by(library: tuple[str, str, str], entry: str, table_type: str = "",
              fields=(), units: tuple[str, ...] = (), declarations: tuple[str, ...] = (),
              openmp: bool = False, blas: tuple[str, ...] = ()) -> CCode:
    """The CCode of a node served by the library unit `library` (library_code's (name,
    declarations, unit)): the program calls `<name>_<entry>` with a constant table of type
    `table_type` holding `fields` (C initializers), named by its text (see CCode.entry);
    `units` are more library units its table points into, whose functions `declarations`
    declare; `blas`, the BLAS routines the library calls. No table where `table_type` is
    empty (the entry gets NULL)."""
    name, library_declarations, unit = library
    table, text = constant_table(name, table_type, fields) if table_type else ("", "")
    return CCode("", support=(library_declarations, *declarations), units=(*units, unit),
                 openmp=openmp, entry=f"{name}_{entry}", data=table,
                 table=(text,) if text else (), blas=blas)


def constant_table(prefix: str, table_type: str, fields) -> tuple[str, str]:
    """(name, definition) of a static constant `table_type` holding `fields` (C
    initializers), named by its text (equal tables, equal names)."""
    text = f"static const {table_type} @TABLE@ = {{{', '.join(fields)}}};"
    name = content_name(f"{prefix}_node", text)
    return name, text.replace("@TABLE@", name)


def render(text: str, values: dict[str, object]) -> str:
    """`text` (a C file's, with @name@ placeholders) with each @name@ replaced by its value,
    which must fit on one line, so that the file's line numbers still hold."""
    for name, value in values.items():
        value = str(value)
        if "\n" in value:
            raise ValueError(f"render: the value of @{name}@ spans lines: {value[:60]!r}")
        text = text.replace(f"@{name}@", value)
    return text


def c_string(text: object) -> str:
    """`text` (str() of any object) as a C string literal holding its UTF-8 bytes: printable
    ASCII as it is but for \\ and \", '?' escaped (no trigraph can form), every other byte a
    three-digit octal escape (which cannot run into the character after it)."""
    pieces = []
    for byte in str(text).encode("utf-8"):
        if byte in b'\\"?':
            pieces.append("\\" + chr(byte))
        elif 32 <= byte < 127:
            pieces.append(chr(byte))
        else:
            pieces.append(f"\\{byte:03o}")
    return '"' + "".join(pieces) + '"'


def resolve_resume_lines(source: str, path: str) -> str:
    """`source` as written to `path`: each RESUME_LINE becomes the #line directive that
    gives the lines after it their own numbers in `path`."""
    lines = source.split("\n")
    for number, line in enumerate(lines):
        if line == RESUME_LINE:
            lines[number] = f'#line {number + 2} "{path}"'
    return "\n".join(lines)
