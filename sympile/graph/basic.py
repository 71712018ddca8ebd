"""The IR: Variable, Constant, Apply, and the walks over graphs built from them."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sympile.graph.utils import Scratchpad, user_creation_site

if TYPE_CHECKING:
    from sympile.graph.op import Op
    from sympile.graph.type import Type

_variable_ids = itertools.count()


class Variable:
    """A symbolic value of a given Type: a graph input (owner is None) or an Apply's output."""

    def __init__(self, type: Type, owner: Apply | None = None, index: int | None = None,
                 name: str | None = None):
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self.tag = Scratchpad()
        self.tag.trace = user_creation_site()
        self.auto_name = f"{self.__class__.__name__}_{next(_variable_ids)}"

    def __str__(self):
        if self.name is not None:
            return self.name
        if self.owner is not None:
            op = self.owner.op
            if len(self.owner.outputs) == 1:
                return f"{op}.out"
            return f"{op}.{self.index}"
        return f"<{self.type}>"

    def __repr__(self):
        return str(self)

    def clone(self, name: str | None = None) -> Variable:
        """A new ownerless Variable of the same Type, name and tag."""
        copy = self.__class__(self.type, None, None, name if name is not None else self.name)
        copy.tag = Scratchpad()
        copy.tag.__dict__.update(self.tag.__dict__)
        return copy

    def get_parents(self) -> list[Apply]:
        return [self.owner] if self.owner is not None else []

    def creation_site(self) -> str:
        """Where the user built this variable, for error messages."""
        trace = getattr(self.tag, "trace", None)
        return trace if trace else "unknown location"


class Constant(Variable):
    """A Variable with a fixed value. Equal constants are interchangeable (see `signature`)."""

    def __init__(self, type: Type, data: Any, name: str | None = None):
        super().__init__(type, None, None, name)
        self.data = type.filter(data)

    def __str__(self):
        if self.name is not None:
            return self.name
        text = str(self.data)
        if len(text) > 20:
            text = text[:10].strip() + "..." + text[-5:].strip()
        return text

    def signature(self) -> tuple:
        """A hashable key: two constants with equal signatures hold the same value and Type."""
        return (self.type, self.type.data_signature(self.data))

    def equals(self, other: Any) -> bool:
        return isinstance(other, Constant) and self.signature() == other.signature()

    def clone(self, name: str | None = None) -> Constant:
        copy = self.__class__(self.type, self.data, name if name is not None else self.name)
        copy.tag.__dict__.update(self.tag.__dict__)
        return copy

    @property
    def value(self):
        return self.data


class Apply:
    """One application of an Op to input Variables, producing output Variables."""

    def __init__(self, op: Op, inputs: Sequence[Variable], outputs: Sequence[Variable]):
        self.op = op
        self.inputs = list(inputs)
        self.outputs = []
        for index, output in enumerate(outputs):
            if output.owner is None:
                output.owner = self
                output.index = index
            elif output.owner is not self or output.index != index:
                raise ValueError(f"{op}: output {index} already belongs to another Apply node")
            self.outputs.append(output)
        for index, variable in enumerate(self.inputs):
            if not isinstance(variable, Variable):
                raise TypeError(f"{op}: input {index} is {variable!r}, expected a Variable")

    def __str__(self):
        return f"{self.op}({', '.join(str(i) for i in self.inputs)})"

    def __repr__(self):
        return str(self)

    @property
    def out(self) -> Variable:
        """The single (or default) output."""
        default = getattr(self.op, "default_output", None)
        if default is not None:
            return self.outputs[default]
        if len(self.outputs) != 1:
            raise AttributeError(f"{self.op} has {len(self.outputs)} outputs; use .outputs")
        return self.outputs[0]

    @property
    def nin(self) -> int:
        return len(self.inputs)

    @property
    def nout(self) -> int:
        return len(self.outputs)

    def get_parents(self) -> list[Variable]:
        return list(self.inputs)

    def clone(self) -> Apply:
        """A copy with the same inputs and fresh outputs."""
        return Apply(self.op, self.inputs, [o.clone() for o in self.outputs])

    def clone_with_new_inputs(self, inputs: Sequence[Variable], strict: bool = True) -> Apply:
        """This node on other inputs. strict: the inputs must have the original Types;
        otherwise the Op rebuilds the node with make_node."""
        if len(inputs) != len(self.inputs):
            raise ValueError(f"{self.op}: expected {len(self.inputs)} inputs, got {len(inputs)}")
        if all(new.type == old.type for new, old in zip(inputs, self.inputs)):
            return Apply(self.op, inputs, [o.clone() for o in self.outputs])
        if strict:
            for new, old in zip(inputs, self.inputs):
                if new.type != old.type:
                    raise TypeError(f"{self.op}: cannot replace an input of type {old.type} "
                                    f"by one of type {new.type}")
        node = self.op.make_node(*inputs)
        for old, new in zip(self.outputs, node.outputs):
            new.name = old.name
            new.tag.__dict__.update(old.tag.__dict__)
        return node


# ---------------------------------------------------------------------------------------------
# Walks over graphs. All are iterative, so deep graphs (long chains of ops) do not hit the
# recursion limit.

def _as_list(variables: Variable | Iterable[Variable]) -> list[Variable]:
    if isinstance(variables, Variable):
        return [variables]
    return list(variables)


def ancestors(variables: Variable | Iterable[Variable],
              blockers: Iterable[Variable] | None = None) -> list[Variable]:
    """Every Variable that `variables` depend on (themselves included), not looking past
    `blockers`. Order: depth first, each variable once."""
    blocked = set(blockers or ())
    seen: set[int] = set()
    result: list[Variable] = []
    stack = list(reversed(_as_list(variables)))
    while stack:
        variable = stack.pop()
        if id(variable) in seen:
            continue
        seen.add(id(variable))
        result.append(variable)
        if variable.owner is not None and variable not in blocked:
            stack.extend(reversed(variable.owner.inputs))
    return result


def graph_inputs(variables: Variable | Iterable[Variable],
                 blockers: Iterable[Variable] | None = None) -> list[Variable]:
    """The ownerless Variables (inputs and constants) that `variables` depend on, plus the
    blockers reached."""
    blocked = set(blockers or ())
    return [v for v in ancestors(variables, blocked) if v.owner is None or v in blocked]


def applys_between(inputs: Iterable[Variable], outputs: Iterable[Variable]) -> list[Apply]:
    """The Apply nodes on paths from `inputs` to `outputs` (every node if inputs are the graph
    inputs), in topological order."""
    return io_toposort(inputs, outputs)


def io_toposort(inputs: Iterable[Variable], outputs: Iterable[Variable]) -> list[Apply]:
    """Apply nodes computing `outputs` from `inputs`, each after the nodes it depends on."""
    stop = {id(v) for v in inputs}
    order: list[Apply] = []
    done: set[int] = set()
    # Iterative post-order DFS: (node, expanded?)
    stack: list[tuple[Apply, bool]] = []
    for output in reversed(_as_list(outputs)):
        if output.owner is not None and id(output) not in stop:
            stack.append((output.owner, False))
    while stack:
        node, expanded = stack.pop()
        if id(node) in done:
            continue
        if expanded:
            done.add(id(node))
            order.append(node)
            continue
        stack.append((node, True))
        for variable in reversed(node.inputs):
            if variable.owner is not None and id(variable) not in stop \
                    and id(variable.owner) not in done:
                stack.append((variable.owner, False))
    return order


def toposort(outputs: Variable | Iterable[Variable]) -> list[Apply]:
    """Every Apply node `outputs` depend on, in topological order."""
    return io_toposort([], _as_list(outputs))


def clone_get_equiv(inputs: Sequence[Variable], outputs: Sequence[Variable],
                    copy_inputs: bool = True, copy_orphans: bool = True,
                    memo: dict[Variable, Variable] | None = None) -> dict[Variable, Variable]:
    """Map every Variable and Apply between inputs and outputs to its copy.

    copy_inputs: clone the given inputs too (otherwise they map to themselves).
    copy_orphans: clone ownerless variables that are not in `inputs` (constants mostly).
    `memo` may pre-map some variables to replacements (a substitution).
    """
    equiv: dict[Any, Any] = {} if memo is None else memo
    for variable in inputs:
        if variable not in equiv:
            equiv[variable] = variable.clone() if copy_inputs else variable
    for node in io_toposort(inputs, outputs):
        for variable in node.inputs:
            if variable not in equiv:
                if variable.owner is None and copy_orphans:
                    equiv[variable] = variable.clone()
                else:
                    equiv[variable] = variable
        new_inputs = [equiv[v] for v in node.inputs]
        if node in equiv:
            continue
        new_node = node.clone_with_new_inputs(new_inputs, strict=False)
        equiv[node] = new_node
        for old, new in zip(node.outputs, new_node.outputs):
            equiv.setdefault(old, new)
    for variable in outputs:
        if variable not in equiv:
            equiv[variable] = variable.clone() if (variable.owner is None and copy_orphans) \
                else variable
    return equiv


def clone(inputs: Sequence[Variable], outputs: Sequence[Variable],
          copy_inputs: bool = True, copy_orphans: bool = True) -> tuple[list, list]:
    """Copy the graph from inputs to outputs; returns (new inputs, new outputs)."""
    equiv = clone_get_equiv(inputs, outputs, copy_inputs, copy_orphans)
    return [equiv[v] for v in inputs], [equiv[v] for v in outputs]


def clone_replace(outputs: Variable | Sequence[Variable],
                  replace: dict[Variable, Variable] | Iterable[tuple[Variable, Variable]]
                  | None = None) -> Variable | list[Variable]:
    """Copy of the graph of `outputs` in which each key of `replace` is substituted by its
    value. Replacements must have the same Type as what they replace, or one the Op accepts."""
    pairs = list(replace.items()) if isinstance(replace, dict) else list(replace or ())
    single = isinstance(outputs, Variable)
    output_list = _as_list(outputs)
    memo: dict[Variable, Variable] = {}
    for old, new in pairs:
        if not isinstance(old, Variable) or not isinstance(new, Variable):
            raise TypeError(f"clone_replace: replacements must be Variable pairs, got "
                            f"({old!r}, {new!r})")
        memo[old] = new
    # Inputs of the walk are every ancestor without an owner plus the replaced variables, so
    # the part of the graph above a replaced variable is not visited.
    walk_inputs = graph_inputs(output_list, blockers=memo.keys())
    for variable in walk_inputs:
        memo.setdefault(variable, variable)
    equiv = clone_get_equiv(walk_inputs, output_list, copy_inputs=False, copy_orphans=False,
                            memo=memo)
    cloned = [equiv[v] for v in output_list]
    return cloned[0] if single else cloned


def is_in_ancestors(node: Apply, candidate: Apply) -> bool:
    """True if `candidate` is `node` or one of the nodes it depends on."""
    return any(v.owner is candidate for v in ancestors(node.outputs))


def equal_computations(xs: Sequence[Variable], ys: Sequence[Variable]) -> bool:
    """True if the graphs of xs and ys compute the same thing (same ops, same constants, same
    structure, ownerless non-constant inputs matched by identity)."""
    if len(xs) != len(ys):
        return False
    memo: dict[int, Variable] = {}
    stack = list(zip(xs, ys))
    while stack:
        x, y = stack.pop()
        if id(x) in memo:
            if memo[id(x)] is not y:
                return False
            continue
        if x.type != y.type:
            return False
        if isinstance(x, Constant) or isinstance(y, Constant):
            if not (isinstance(x, Constant) and x.equals(y)):
                return False
        elif x.owner is None or y.owner is None:
            if x is not y:
                return False
        else:
            if x.owner.op != y.owner.op or x.index != y.index \
                    or len(x.owner.inputs) != len(y.owner.inputs):
                return False
            stack.extend(zip(x.owner.inputs, y.owner.inputs))
        memo[id(x)] = y
    return True
