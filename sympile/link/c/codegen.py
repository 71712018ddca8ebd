"""Whole-graph code generation: one C translation unit for one compiled function.

Every variable keeps the storage cell (a one-element list) the Python backend would give it,
so shared variables, Function's output handling and perform() fallbacks see the same cells.
Each node becomes one C function: the op's own C code (`Op.c_code`) when it has some, else a
call to a Python thunk that runs its perform(). A node with C code is an op unit: a function
of its cells alone (inputs, then outputs), in a translation unit of its own, named by the hash
of its text. Units are compiled in parallel and cached on disk one by one, so the same op on the
same types, in this function or any other, is compiled once; the main unit holds the Program
and calls each unit with the node's cells. `sympile_run_once` checks every graph input
a node reads (type, ndim and static lengths: a wrong value is a TypeError, never a
crash) and calls the nodes in order.

Conditionals are lazy, as in the Python backend (sympile.link.python.vm.lazy_schedule): the
step of a conditional reads its condition, calls only the nodes of the branch taken (C code
or thunks alike), then calls the conditional's own node.
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
    # The op functions compiled in the main unit (CCode.in_main_unit), by name.
    main_functions: dict[str, str] = field(default_factory=dict)

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
    for node in nodes:
        code = _node_c_code(node, _node_names(node))
        if code is None:
            plans.append(NodePlan(node, None, thunk_count))
            thunk_count += 1
        else:
            function, unit = _op_unit(node, code)
            if code.in_main_unit:
                main_functions.setdefault(function, unit.split("\n", 1)[1])
            else:
                units.setdefault(function, unit)
            for library in code.units:
                units.setdefault(library, f'#include "{prelude.UNIT_HEADER_NAME}"\n{library}')
            plans.append(NodePlan(node, code, function=function))
    plan = ModulePlan(variables, index, plans, lazy_schedule(nodes, outputs, orderings),
                      units=[prelude.PROGRAM_UNIT, *units.values()],
                      main_functions=main_functions)
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


def _static_shape(variable: Variable) -> str:
    lengths = [-1 if length is None else length for length in variable.type.shape]
    return "{" + ", ".join(map(str, lengths or [0])) + "}"


def _check_array(plan: ModulePlan, variable: Variable) -> str:
    """C that checks `variable`'s cell holds an array of its Type (or returns -1)."""
    cell = plan.index[variable]
    return (f"    static const npy_intp shape_{cell}[] = {_static_shape(variable)};\n"
            f"    if (sympile_check_array(self, {cell}, {NPY_TYPES[variable.type.dtype]}, "
            f"{variable.type.ndim}, shape_{cell})) return -1;")


def _normalize_result(plan: ModulePlan, variable: Variable) -> str:
    """C that makes a perform() result an array of `variable`'s dtype, then checks it."""
    cell = plan.index[variable]
    return (f"    if (sympile_normalize_result(self, {cell}, {NPY_TYPES[variable.type.dtype]}, "
            f"{variable.type.ndim})) return -1;\n" + _check_array(plan, variable))


_FUNCTION_PLACEHOLDER = "@FUNCTION@"
# The main unit runs a long program in functions of this many top-level steps: gcc's time
# on one function grows faster than its length (a 4,000-node program at -O1: 12.5 s in one
# function, 9.5 s in parts).
RUN_CHUNK = 256


def _op_unit(node: Apply, code: CCode) -> tuple[str, str]:
    """(function name, source) of the op unit running `code`: `int name(PyObject *const
    *cells)`, cells = the node's input cells then its output cells. Equal text, equal name."""
    n_inputs = len(node.inputs)
    lines = [f'#include "{prelude.UNIT_HEADER_NAME}"']
    lines += [prelude.blas_declaration(name, external=True) for name in code.blas]
    lines += list(code.support)
    lines += [f"/* {node.op} */", f"int {_FUNCTION_PLACEHOLDER}(PyObject *const *cells)", "{"]
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
    text = "\n".join(lines)
    function = "sympile_op_" + hashlib.sha256(text.encode()).hexdigest()[:24]
    return function, text.replace(_FUNCTION_PLACEHOLDER, function)


def _c_node(plan: ModulePlan, position: int, node_plan: NodePlan) -> str:
    """The main unit's node function: calls the op unit with the node's cells."""
    cells = ", ".join(f"self->cells[{plan.index[v]}]"
                      for v in node_plan.node.inputs + node_plan.node.outputs)
    return "\n".join([
        f"/* {node_plan.node.op} */",
        f"static int sympile_node_{position}(Program *self)", "{",
        f"    PyObject *const cells[] = {{{cells}}};",
        f"    if ({node_plan.function}(cells)) {{",
        f"        self->failed_node = {position};", "        return -1;", "    }",
        "    return 0;", "}", ""])


def _thunk_node(plan: ModulePlan, position: int, node_plan: NodePlan,
                normalized: set[Variable]) -> str:
    lines = [f"/* {node_plan.node.op} (perform) */",
             f"static int sympile_node_{position}(Program *self)", "{",
             f"    if (sympile_call_thunk(self, {node_plan.thunk_index})) return -1;"]
    for variable in node_plan.node.outputs:
        if variable in normalized:
            lines.append(_normalize_result(plan, variable))
    lines += ["    return 0;", "}", ""]
    return "\n".join(lines)


def _source(plan: ModulePlan, normalized: set[Variable]) -> str:
    blas: list[str] = []
    functions: list[str] = []
    for node_plan in plan.nodes:
        if node_plan.code is None:
            continue
        if node_plan.function not in functions:
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
    parts += [f"int {function}(PyObject *const *cells);" for function in functions
              if function not in plan.main_functions]
    parts += list(plan.main_functions.values())
    between = list(dict.fromkeys(name for node_plan in plan.nodes if node_plan.code is not None
                                 for name in node_plan.code.between_nodes))
    parts += [f"void {name}(void);" for name in between]
    governed = plan.openmp and config.openmp and config.openmp_follow_load
    if governed:
        parts.append(prelude.THREAD_GOVERNOR)
    for position, node_plan in enumerate(plan.nodes):
        parts.append(_c_node(plan, position, node_plan) if node_plan.code is not None
                     else _thunk_node(plan, position, node_plan, normalized))
    run = ["#define SYMPILE_RUN_NODE(k) do { \\",
           "    if (self->profiling) { \\",
           "        double start = sympile_now(); \\",
           "        int failed = sympile_node_##k(self); \\",
           "        self->node_seconds[k] += sympile_now() - start; \\",
           "        self->node_calls[k]++; \\",
           "        if (failed) return -1; \\",
           "    } else if (sympile_node_##k(self)) return -1; \\",
           *[f"    {name}(); \\" for name in between],
           "} while (0)",
           ""]
    chunks = [plan.steps[start:start + RUN_CHUNK]
              for start in range(0, len(plan.steps), RUN_CHUNK)]
    if len(chunks) > 1:
        for number, chunk in enumerate(chunks):
            run += [f"static __attribute__((noinline)) int sympile_run_part_{number}"
                    f"(Program *self)", "{", *_run_steps(plan, chunk, "    "),
                    "    return 0;", "}", ""]
    run += ["static int sympile_run_nodes(Program *self)", "{"]
    for variable in plan.checked_inputs:
        run.append(_check_array(plan, variable))
    if len(chunks) > 1:
        run += [f"    if (sympile_run_part_{number}(self)) return -1;"
                for number in range(len(chunks))]
    else:
        run += _run_steps(plan, plan.steps, "    ")
    run += ["    return 0;", "}", "",
            "int sympile_run_once(Program *self)", "{"]
    if governed:
        run += ["    int threads = sympile_govern_threads();",
                "    int status = sympile_run_nodes(self);",
                "    sympile_restore_threads(threads);",
                "    return status;"]
    else:
        run.append("    return sympile_run_nodes(self);")
    run += ["}", ""]
    parts.append("\n".join(run))
    parts.append(render(prelude.MODULE_INIT, {
        "BLAS_LOADS": prelude.blas_loader(blas),
        "GOVERNOR_START": "sympile_governor_start();" if governed else ""}))
    return "\n".join(parts)


def _run_steps(plan: ModulePlan, steps: list[Step], indent: str) -> list[str]:
    """C that runs `steps`: a conditional's step runs the steps of the branch its condition
    selects, then its own node."""
    lines = []
    for step in steps:
        node = plan.nodes[step.index].node
        if is_conditional(node):
            condition = f"condition_{step.index}"
            lines += [f"{indent}{{",
                      f"{indent}    int {condition} = sympile_condition(self, "
                      f"{plan.index[node.inputs[0]]}, {step.index});",
                      f"{indent}    if ({condition} < 0) return -1;",
                      f"{indent}    if ({condition}) {{"]
            lines += _run_steps(plan, step.then_steps, indent + "        ")
            lines.append(f"{indent}    }} else {{")
            lines += _run_steps(plan, step.else_steps, indent + "        ")
            lines += [f"{indent}    }}", f"{indent}}}"]
        lines.append(f"{indent}SYMPILE_RUN_NODE({step.index});")
    return lines
