"""Whole-graph code generation: one C translation unit for one compiled function.

Every variable keeps the storage cell (a one-element list) the Python backend would give it,
so shared variables, Function's output handling and perform() fallbacks see the same cells.
A node runs the op's own C code (`Op.c_code`) when it has some, else a Python thunk that runs
its perform(). A node with C code is a function of its cells (inputs, then outputs) and of
its table (the node's constants, a constant of the main unit, CCode.data): either a library
unit's entry, which compiles nothing for the node (CCode.entry), or an op unit, a translation
unit of its own named by the hash of its text. Units are compiled in parallel and cached on
disk one by one, so the same op on the same types, in this function or any other, is
compiled once (whatever its table holds). The main unit is tables (program.h): each node's
function, table and cells, the graph inputs to check (type, ndim and static lengths: a wrong
value is a TypeError, never a crash), and the order of the steps, which the program unit's
runner walks.

Conditionals are lazy, as in the Python backend (sympile.link.python.vm.lazy_schedule): the
step of a conditional reads its condition, runs only the steps of the branch taken (C code
or thunks alike), then the conditional's own node.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sympile.config import config
from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.ccode import NPY_TYPES, CCode, CNames, render
from sympile.link.c import prelude
from sympile.link.schedule import Step, is_conditional, lazy_schedule


@dataclass
class NodePlan:
    """How one node runs: its C code, or the index of its perform() thunk."""

    node: Apply
    code: CCode | None
    thunk_index: int | None = None
    function: str = ""  # the op unit's function (C code only)


@dataclass
class ModulePlan:
    variables: list[Variable]
    index: dict[Variable, int]
    nodes: list[NodePlan]
    steps: list[Step] = field(default_factory=list)
    checked_inputs: list[Variable] = field(default_factory=list)
    source: str = ""
    units: list[str] = field(default_factory=list)  # the op and library units' sources
    # The op functions compiled in the main unit (CCode.in_main_unit), by name, and their
    # support pieces (each once).
    main_functions: dict[str, str] = field(default_factory=dict)
    main_support: list[str] = field(default_factory=list)
    # Whether calls run under the thread governor (a library unit among `units`).
    governed: bool = False

    @property
    def openmp(self) -> bool:
        return any(plan.code is not None and plan.code.openmp for plan in self.nodes)

    @property
    def fallback_nodes(self) -> list[Apply]:
        return [plan.node for plan in self.nodes if plan.code is None]


def _is_array(variable: Variable) -> bool:
    return variable.type.is_ndarray


def has_c_code(node: Apply) -> bool:
    """Whether the C backend runs `node` with the op's C code (not its perform())."""
    return _node_c_code(node, _node_names(node)) is not None


def _node_names(node: Apply) -> CNames:
    return CNames(inputs=tuple(f"input_{i}" for i in range(len(node.inputs))),
                  outputs=tuple(f"output_{i}" for i in range(len(node.outputs))),
                  fail="goto fail;")


def _node_c_code(node: Apply, names: CNames) -> CCode | None:
    if not all(_is_array(v) for v in node.inputs + node.outputs):
        return None
    code = node.op.c_code(node, names)
    if code is not None and not isinstance(code, CCode):
        raise TypeError(f"{node.op}.c_code returned {code!r}, expected a CCode or None")
    return code


def plan_module(variables: list[Variable], nodes: list[Apply], outputs: Sequence[Variable],
                orderings: Mapping[Apply, Sequence[Apply]] | None = None) -> ModulePlan:
    """Decide how each node runs and generate the module's source; `outputs` (the graph's)
    are computed on every run, also where only a branch of a conditional uses them;
    `orderings` are the graph's (fgraph.orderings()), kept by the lazy schedule."""
    index = {variable: position for position, variable in enumerate(variables)}
    plans = []
    thunk_count = 0
    units: dict[str, str] = {}
    main_functions: dict[str, str] = {}
    main_support: dict[str, None] = {}
    for node in nodes:
        code = _node_c_code(node, _node_names(node))
        if code is None:
            plans.append(NodePlan(node, None, thunk_count))
            thunk_count += 1
        else:
            if code.entry:
                function = code.entry
                main_support.update(dict.fromkeys(code.support))
            else:
                function, unit, definition = _op_unit(node, code)
                if code.in_main_unit:
                    main_support.update(dict.fromkeys(code.support))
                    main_functions.setdefault(function, definition)
                else:
                    units.setdefault(function, unit)
            main_support.update(dict.fromkeys(code.table))
            for library in code.units:
                units.setdefault(library, library_unit(library, code.blas))
            plans.append(NodePlan(node, code, function=function))
    plan = ModulePlan(variables, index, plans, lazy_schedule(nodes, outputs, orderings),
                      units=[prelude.PROGRAM_UNIT, *units.values()],
                      main_functions=main_functions, main_support=list(main_support))
    plan.governed = config.openmp and config.openmp_follow_load and plan.openmp
    if plan.governed:
        plan.units.append(library_unit(prelude.THREAD_GOVERNOR))
    produced_by_c = {v for p in plans if p.code is not None for v in p.node.outputs}
    read_by_c = {v for p in plans if p.code is not None for v in p.node.inputs}
    # Every array input is checked, also those only perform() reads: under trust_input a
    # wrong dtype must still be a TypeError, not a result of the wrong type. (Inputs of
    # other types, sparse matrices, only perform() reads; Function's filter checks them.)
    read = {v for p in plans for v in p.node.inputs}
    plan.checked_inputs = [v for v in variables
                           if v in read and v.owner is None and not isinstance(v, Constant)
                           and v.type.is_ndarray]
    plan.source = _source(plan, read_by_c - produced_by_c)
    return plan


def library_unit(text: str, blas: Sequence[str] = ()) -> str:
    """The source of a library unit (fixed C, compiled once per cache) of `text`, which may
    call the `blas` routines (those of the code that asks for it)."""
    lines = [f'#include "{prelude.UNIT_HEADER_NAME}"']
    lines += [prelude.blas_declaration(name, external=True) for name in blas]
    return "\n".join([*lines, text])


def node_units(node: Apply) -> list[str]:
    """The sources of the units (other than the program unit) that a function running `node`
    with its op's C compiles for it: its op unit, where it has one, and the library units its
    code calls. Empty where the node runs perform()."""
    code = _node_c_code(node, _node_names(node))
    if code is None:
        return []
    units = [] if code.entry or code.in_main_unit else [_op_unit(node, code)[1]]
    return units + [library_unit(library, code.blas) for library in code.units]


_FUNCTION_PLACEHOLDER = "@FUNCTION@"


def _op_unit(node: Apply, code: CCode) -> tuple[str, str, str]:
    """(function name, source of the op unit, the function's definition) running `code`:
    `int name(PyObject *const *cells, const void *data)` (program.h's SympileNodeFunction;
    data is the node's table, CCode.data, or NULL), cells = the node's input cells then its
    output cells. Equal unit text, equal name."""
    n_inputs = len(node.inputs)
    head = [f'#include "{prelude.UNIT_HEADER_NAME}"']
    head += [prelude.blas_declaration(name, external=True) for name in code.blas]
    head += list(code.support)
    # A node whose constants are its table shares its unit with the others of its kind.
    lines = [f"/* {type(node.op).__name__ if code.data else node.op} */",
             f"int {_FUNCTION_PLACEHOLDER}(PyObject *const *cells, const void *data)", "{"]
    for i in range(n_inputs):
        lines.append(f"    PyArrayObject *input_{i} = (PyArrayObject *)"
                     f"PyList_GET_ITEM(cells[{i}], 0);")
    for i in range(len(node.outputs)):
        lines.append(f"    PyArrayObject *output_{i} = sympile_take_output(cells[{n_inputs + i}]);")
    lines += ["    {", code.body, "    }"]
    for i in range(len(node.outputs)):
        lines += [f"    if (output_{i} == NULL) {{",
                  f'        PyErr_SetString(PyExc_SystemError, "the C code gave no output {i}");',
                  "        goto fail;", "    }"]
    for i in range(len(node.outputs)):
        lines.append(f"    sympile_store_output(cells[{n_inputs + i}], output_{i});")
        lines.append(f"    output_{i} = NULL;")
    lines += ["    return 0;", "fail:"]
    lines += [f"    Py_XDECREF(output_{i});" for i in range(len(node.outputs))]
    lines += ["    return -1;", "}", ""]
    definition = "\n".join(lines)
    text = "\n".join([*head, definition])
    function = "sympile_op_" + hashlib.sha256(text.encode()).hexdigest()[:24]
    return (function, text.replace(_FUNCTION_PLACEHOLDER, function),
            definition.replace(_FUNCTION_PLACEHOLDER, function))


class _Tables:
    """The main unit's tables (program.h): rows of C initializers, built node by node."""

    def __init__(self, plan: ModulePlan):
        self.plan = plan
        self.nodes: list[str] = []
        self.cells: list[int] = []
        self.results: list[str] = []
        self.lengths: list[int] = []

    def check(self, variable: Variable) -> str:
        """The SympileArrayCheck of `variable`'s Type, its static lengths added."""
        first = len(self.lengths)
        self.lengths += [-1 if length is None else length for length in variable.type.shape]
        return (f"{{{self.plan.index[variable]}, {NPY_TYPES[variable.type.dtype]}, "
                f"{variable.type.ndim}, {first}}}")

    def add_node(self, node_plan: NodePlan, normalized: set[Variable]) -> None:
        node = node_plan.node
        first_cell, first_result = len(self.cells), len(self.results)
        data = "NULL"
        if node_plan.code is not None:
            function, thunk = node_plan.function, 0
            if node_plan.code.data:
                data = "&" + node_plan.code.data
            self.cells += [self.plan.index[v] for v in node.inputs + node.outputs]
        else:
            function, thunk = "NULL", node_plan.thunk_index
            self.results += [self.check(v) for v in node.outputs if v in normalized]
        self.nodes.append(f"{{{function}, {data}, {thunk}, {first_cell}, "
                          f"{len(self.cells) - first_cell}, {first_result}, "
                          f"{len(self.results) - first_result}}}  /* {_comment(node.op)} */")


def _comment(op: object) -> str:
    """`op` named in a C comment."""
    return " ".join(str(op).replace("*/", "* /").split())


def _table(declaration: str, rows: Sequence[str], empty: str = "0") -> str:
    """A C array definition of `rows`, one entry more than them (C has no empty arrays)."""
    return f"{declaration}[] = {{\n    " + ",\n    ".join([*rows, empty]) + "\n};"


def _source(plan: ModulePlan, normalized: set[Variable]) -> str:
    """The main unit: the op functions' declarations, the module's tables (program.h), its
    sympile_run_once and its init. Tables, not a C function per node: gcc compiles data far
    faster than code, and the main unit is compiled for every new function."""
    blas: list[str] = []
    functions: list[str] = []
    for node_plan in plan.nodes:
        if node_plan.code is None:
            continue
        if node_plan.function not in functions and not node_plan.code.entry:
            functions.append(node_plan.function)
        for name in node_plan.code.blas:
            if name not in blas:
                if name not in prelude.BLAS_PROTOTYPES:
                    raise ValueError(f"{node_plan.node.op}: unknown BLAS routine {name!r}; "
                                     f"known: {', '.join(prelude.BLAS_PROTOTYPES)}")
                blas.append(name)
    parts = [f'#include "{prelude.UNIT_HEADER_NAME}"',
             f"const int sympile_n_cells = {len(plan.variables)}, "
             f"sympile_n_nodes = {len(plan.nodes)};"]
    parts += [prelude.blas_declaration(name) for name in blas]
    parts += [f"int {function}(PyObject *const *cells, const void *data);"
              for function in functions if function not in plan.main_functions]
    parts += plan.main_support
    parts += list(plan.main_functions.values())
    between = list(dict.fromkeys(name for node_plan in plan.nodes if node_plan.code is not None
                                 for name in node_plan.code.between_nodes))
    parts += [f"void {name}(void);" for name in between]
    tables = _Tables(plan)
    for node_plan in plan.nodes:
        tables.add_node(node_plan, normalized)
    inputs = [tables.check(variable) for variable in plan.checked_inputs]
    steps = _steps(plan, plan.steps)
    parts += [
        _table("const SympileNode sympile_nodes", tables.nodes, "{NULL, NULL, 0, 0, 0, 0, 0}"),
        _table("const int sympile_node_cells", [str(cell) for cell in tables.cells]),
        f"const int sympile_n_inputs = {len(inputs)};",
        _table("const SympileArrayCheck sympile_inputs", inputs, "{0, 0, 0, 0}"),
        _table("const SympileArrayCheck sympile_results", tables.results, "{0, 0, 0, 0}"),
        _table("const npy_intp sympile_lengths", [str(n) for n in tables.lengths]),
        f"const int sympile_n_steps = {len(steps)};",
        _table("const int sympile_steps", [str(entry) for entry in steps]),
        f"const int sympile_n_between = {len(between)};",
        _table("const SympileBetween sympile_between", between, "NULL")]
    run = ["int sympile_run_once(Program *self)", "{"]
    if plan.governed:
        run += ["    int threads = sympile_govern_threads();",
                "    int status = sympile_run_program(self);",
                "    sympile_restore_threads(threads);",
                "    return status;"]
    else:
        run.append("    return sympile_run_program(self);")
    parts.append("\n".join([*run, "}", ""]))
    parts.append(render(prelude.MODULE_INIT, {
        "BLAS_LOADS": prelude.blas_loader(blas),
        "GOVERNOR_START": "sympile_governor_start();" if plan.governed else ""}))
    return "\n".join(parts)


def _steps(plan: ModulePlan, steps: list[Step]) -> list[int]:
    """sympile_steps' entries of `steps` (program.h): a conditional's four entries, then
    its branches' steps."""
    entries: list[int] = []
    for step in steps:
        node = plan.nodes[step.index].node
        if is_conditional(node):
            then_steps, else_steps = _steps(plan, step.then_steps), _steps(plan, step.else_steps)
            entries += [-1 - step.index, plan.index[node.inputs[0]], len(then_steps),
                        len(else_steps), *then_steps, *else_steps]
        else:
            entries.append(step.index)
    return entries
