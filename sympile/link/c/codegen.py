"""Whole-graph code generation: one C translation unit for one compiled function.

Every variable keeps the storage cell (a one-element list) the Python backend would give it,
so shared variables, Function's output handling and perform() fallbacks see the same cells.
Each node becomes one C function: the op's own C code (`Op.c_code`) when it has some, else a
call to a Python thunk that runs its perform(). `sympile_run_once` checks every graph input
a node reads (type, ndim and static lengths: a wrong value is a TypeError, never a
crash) and calls the nodes in order.

Conditionals are lazy, as in the Python backend (sympile.link.python.vm.lazy_schedule): the
step of a conditional reads its condition, calls only the nodes of the branch taken (C code
or thunks alike), then calls the conditional's own node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.ccode import NPY_TYPES, CCode, CNames
from sympile.link.c import prelude
from sympile.link.python.vm import Step, is_conditional, lazy_schedule
from sympile.tensor.type import TensorType


@dataclass
class NodePlan:
    """How one node runs: its C code, or the index of its perform() thunk."""

    node: Apply
    code: CCode | None
    thunk_index: int | None = None


@dataclass
class ModulePlan:
    variables: list[Variable]
    index: dict[Variable, int]
    nodes: list[NodePlan]
    steps: list[Step] = field(default_factory=list)
    checked_inputs: list[Variable] = field(default_factory=list)
    source: str = ""

    @property
    def openmp(self) -> bool:
        return any(plan.code is not None and plan.code.openmp for plan in self.nodes)

    @property
    def fallback_nodes(self) -> list[Apply]:
        return [plan.node for plan in self.nodes if plan.code is None]


def _is_tensor(variable: Variable) -> bool:
    return isinstance(variable.type, TensorType)


def has_c_code(node: Apply) -> bool:
    """Whether the C backend runs `node` with the op's C code (not its perform())."""
    return _node_c_code(node, _node_names(node, 0)) is not None


def _node_names(node: Apply, position: int) -> CNames:
    return CNames(inputs=tuple(f"input_{i}" for i in range(len(node.inputs))),
                  outputs=tuple(f"output_{i}" for i in range(len(node.outputs))),
                  fail="goto fail;", id=position)


def _node_c_code(node: Apply, names: CNames) -> CCode | None:
    if not all(_is_tensor(v) for v in node.inputs + node.outputs):
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
    for position, node in enumerate(nodes):
        code = _node_c_code(node, _node_names(node, position))
        if code is None:
            plans.append(NodePlan(node, None, thunk_count))
            thunk_count += 1
        else:
            plans.append(NodePlan(node, code))
    plan = ModulePlan(variables, index, plans, lazy_schedule(nodes, outputs, orderings))
    produced_by_c = {v for p in plans if p.code is not None for v in p.node.outputs}
    read_by_c = {v for p in plans if p.code is not None for v in p.node.inputs}
    # Every graph input is checked, also those only perform() reads: under trust_input a
    # wrong dtype must still be a TypeError, not a result of the wrong type.
    read = {v for p in plans for v in p.node.inputs}
    plan.checked_inputs = [v for v in variables
                           if v in read and v.owner is None and not isinstance(v, Constant)]
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


def _c_node(plan: ModulePlan, position: int, node_plan: NodePlan) -> str:
    node, code = node_plan.node, node_plan.code
    lines = [f"/* {node.op} */", f"static int sympile_node_{position}(Program *self)", "{"]
    for i, variable in enumerate(node.inputs):
        lines.append(f"    PyArrayObject *input_{i} = (PyArrayObject *)"
                     f"PyList_GET_ITEM(self->cells[{plan.index[variable]}], 0);")
    for i, variable in enumerate(node.outputs):
        lines.append(f"    PyArrayObject *output_{i} = "
                     f"sympile_take_output(self->cells[{plan.index[variable]}]);")
    lines += ["    {", code.body, "    }"]
    for i, variable in enumerate(node.outputs):
        lines += [f"    if (output_{i} == NULL) {{",
                  f'        PyErr_SetString(PyExc_SystemError, "the C code gave no output {i}");',
                  "        goto fail;", "    }"]
    for i, variable in enumerate(node.outputs):
        lines.append(f"    sympile_store_output(self->cells[{plan.index[variable]}], output_{i});")
        lines.append(f"    output_{i} = NULL;")
    lines += ["    return 0;", "fail:"]
    lines += [f"    Py_XDECREF(output_{i});" for i in range(len(node.outputs))]
    lines += [f"    self->failed_node = {position};", "    return -1;", "}", ""]
    return "\n".join(lines)


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
    supports: list[str] = []
    blas: list[str] = []
    for node_plan in plan.nodes:
        if node_plan.code is None:
            continue
        for piece in node_plan.code.support:
            if piece not in supports:
                supports.append(piece)
        for name in node_plan.code.blas:
            if name not in blas:
                if name not in prelude.BLAS_PROTOTYPES:
                    raise ValueError(f"{node_plan.node.op}: unknown BLAS routine {name!r}; "
                                     f"known: {', '.join(prelude.BLAS_PROTOTYPES)}")
                blas.append(name)
    parts = [f"#define SYMPILE_N_CELLS {len(plan.variables)}",
             f"#define SYMPILE_N_NODES {len(plan.nodes)}",
             prelude.HEADER]
    if blas:
        parts.append(prelude.BLAS_LOAD_HELPER)
        parts += [prelude.blas_declaration(name) for name in blas]
    parts += supports
    parts.append(prelude.PROGRAM)
    if any(is_conditional(node_plan.node) for node_plan in plan.nodes):
        parts.append(prelude.CONDITION_HELPER)
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
           "} while (0)",
           "",
           "static int sympile_run_once(Program *self)", "{"]
    for variable in plan.checked_inputs:
        run.append(_check_array(plan, variable))
    run += _run_steps(plan, plan.steps, "    ")
    run += ["    return 0;", "}", ""]
    parts.append("\n".join(run))
    parts.append(prelude.PROGRAM_METHODS.replace("@BLAS_LOADS@", prelude.blas_loader(blas)))
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
