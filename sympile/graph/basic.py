"""The IR: Variable, Constant, Apply, and the walks over graphs built from them.

Every walk here is iterative, so deep graphs (a chain of 10,000 ops) never hit Python's
recursion limit.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sympile.config import config
from sympile.graph.utils import Scratchpad, user_creation_site

if TYPE_CHECKING:
    from sympile.graph.op import Op
    from sympile.graph.type import Type

_variable_ids = itertools.count()


class Variable:
    """A symbolic value of a given Type: a graph input (owner is None) or output `index` of the
    Apply node `owner`.

    tag.trace is 'file:line' of the user code that built the variable, for error messages.
    """

    def __init__(self, type: Type, owner: Apply | None = None, index: int | None = None,
                 name: str | None = None):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Variable: name must be a string or None, got {name!r}")
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self.tag = Scratchpad()
        self.tag.trace = user_creation_site()
        self.auto_name = f"{self.__class__.__name__}_{next(_variable_ids)}"

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        if self.owner is not None:
            op = self.owner.op
            if len(self.owner.outputs) == 1:
                return f"{op}.out"
            return f"{op}.{self.index}"
        return f"<{self.type}>"

    def __repr__(self) -> str:
        if config.print_test_value and hasattr(self.tag, "test_value"):
            return repr(self.tag.test_value)
        return str(self)

    def clone(self, name: str | None = None) -> Variable:
        """A new ownerless Variable of the same Type, with this one's name (or `name`) and a
        copy of its tag (so the copy keeps the user's creation site)."""
        copy = self.__class__(self.type, None, None, name if name is not None else self.name)
        copy.tag = Scratchpad()
        copy.tag.__dict__.update(self.tag.__dict__)
        return copy

    def get_parents(self) -> list[Apply]:
        """The node computing this variable, as a list (empty for a graph input)."""
        return [self.owner] if self.owner is not None else []

    def creation_site(self) -> str:
        """Where the user built this variable ('file:line'), for error messages."""
        trace = getattr(self.tag, "trace", None)
        return trace if trace else "unknown location"


class Constant(Variable):
    """A Variable with a fixed value, `type.filter(data)`. Never owned by an Apply node.

    Two constants with equal `signature()` are interchangeable (the merge pass relies on it).
    """

    def __init__(self, type: Type, data: Any, name: str | None = None):
        super().__init__(type, None, None, name)
        self.data = type.filter(data)

    def __str__(self) -> str:
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
        """True if `other` is a Constant of the same Type holding the same value."""
        return isinstance(other, Constant) and self.signature() == other.signature()

    def clone(self, name: str | None = None) -> Constant:
        """A new Constant with the same Type, data, name (or `name`) and a copy of the tag."""
        copy = self.__class__(self.type, self.data, name if name is not None else self.name)
        copy.tag.__dict__.update(self.tag.__dict__)
        return copy

    @property
    def value(self) -> Any:
        return self.data


class Apply:
    """One application of `op` to input Variables, producing output Variables.

    The outputs must be fresh (ownerless) Variables; the node takes ownership of them, setting
    their `owner` and `index`.
    """

    def __init__(self, op: Op, inputs: Sequence[Variable], outputs: Sequence[Variable]):
        inputs, outputs = list(inputs), list(outputs)
        # Check everything before setting any owner, so a bad call leaves the outputs untouched.
        for index, variable in enumerate(inputs):
            if not isinstance(variable, Variable):
                raise TypeError(f"{op}: input {index} is {variable!r}, expected a Variable")
        for index, output in enumerate(outputs):
            if not isinstance(output, Variable):
                raise TypeError(f"{op}: output {index} is {output!r}, expected a Variable")
            if isinstance(output, Constant):
                raise TypeError(f"{op}: output {index} is the constant {output}; a constant "
                                f"cannot be computed by a node")
            if output.owner is not None:
                raise ValueError(f"{op}: output {index} ({output}) already belongs to the node "
                                 f"{output.owner}")
            if any(other is output for other in outputs[:index]):
                raise ValueError(f"{op}: output {index} ({output}) is listed twice")
        self.op = op
        self.inputs = inputs
        self.outputs = outputs
        for index, output in enumerate(outputs):
            output.owner = self
            output.index = index

    def __str__(self) -> str:
        return f"{self.op}({', '.join(str(i) for i in self.inputs)})"

    def __repr__(self) -> str:
        return str(self)

    @property
    def out(self) -> Variable:
        """The single output, or the op's `default_output`."""
        default = getattr(self.op, "default_output", None)
        if default is not None:
            return self.outputs[default]
        if len(self.outputs) != 1:
            raise AttributeError(f"{self.op} has {len(self.outputs)} outputs and no "
                                 f"default_output; use .outputs")
        return self.outputs[0]

    @property
    def nin(self) -> int:
        return len(self.inputs)

    @property
    def nout(self) -> int:
        return len(self.outputs)

    def get_parents(self) -> list[Variable]:
        """The input Variables."""
        return list(self.inputs)

    def clone(self) -> Apply:
        """A copy with the same op and inputs and fresh outputs (cloned: same names and tags)."""
        return Apply(self.op, self.inputs, [output.clone() for output in self.outputs])

    def clone_with_new_inputs(self, inputs: Sequence[Variable], strict: bool = True) -> Apply:
        """This node's op applied to `inputs`, with the outputs' names and tags carried over.

        Inputs of the original Types give a plain copy. Otherwise:
        strict=True: each new input must be accepted by the original input's Type
        (`type.convert_variable`, e.g. a more precise static shape), else TypeError;
        strict=False: any inputs the op accepts.
        Where a Type differs, the op's make_node rebuilds the node, so the output Types follow
        the new inputs.
        """
        inputs = list(inputs)
        if len(inputs) != len(self.inputs):
            raise ValueError(f"{self.op}.clone_with_new_inputs: expected {len(self.inputs)} "
                             f"inputs, got {len(inputs)}")
        remake = False
        for index, (new, old) in enumerate(zip(inputs, self.inputs)):
            if not isinstance(new, Variable):
                raise TypeError(f"{self.op}.clone_with_new_inputs: input {index} is {new!r}, "
                                f"expected a Variable")
            if new.type == old.type:
                continue
            if strict:
                converted = old.type.convert_variable(new)
                if converted is None:
                    raise TypeError(f"{self.op}.clone_with_new_inputs: input {index} has type "
                                    f"{new.type}, which the original type {old.type} does not "
                                    f"accept")
                inputs[index] = converted
                if converted.type == old.type:
                    continue
            remake = True
        if not remake:
            return Apply(self.op, inputs, [output.clone() for output in self.outputs])
        node = self.op.make_node(*inputs)
        if len(node.outputs) != len(self.outputs):
            raise ValueError(f"{self.op}.make_node gave {len(node.outputs)} outputs on the new "
                             f"inputs, the original node has {len(self.outputs)}")
        for old, new in zip(self.outputs, node.outputs):
            new.name = old.name
            new.tag.__dict__.update(old.tag.__dict__)
        return node


# ---------------------------------------------------------------------------------------------
# Walks over graphs.

def _as_list(variables: Variable | Iterable[Variable]) -> list[Variable]:
    if isinstance(variables, Variable):
        return [variables]
    result = list(variables)
    for index, variable in enumerate(result):
        if not isinstance(variable, Variable):
            raise TypeError(f"expected Variables, got {variable!r} at position {index}")
    return result


def ancestors(variables: Variable | Iterable[Variable],
              blockers: Iterable[Variable] | None = None) -> list[Variable]:
    """Every Variable that `variables` depend on, themselves included, each once.

    The walk does not look past `blockers` (they are listed, their ancestors are not).
    Order: depth first from the first of `variables`, each variable before its inputs, the
    inputs of a node from left to right.
    """
    blocked = {id(v) for v in blockers or ()}
    seen: set[int] = set()
    result: list[Variable] = []
    stack = list(reversed(_as_list(variables)))
    while stack:
        variable = stack.pop()
        if id(variable) in seen:
            continue
        seen.add(id(variable))
        result.append(variable)
        if variable.owner is not None and id(variable) not in blocked:
            stack.extend(reversed(variable.owner.inputs))
    return result


def graph_inputs(variables: Variable | Iterable[Variable],
                 blockers: Iterable[Variable] | None = None) -> list[Variable]:
    """The ownerless Variables (inputs and constants) that `variables` depend on, plus the
    blockers reached, in the order of `ancestors`."""
    blocked = {id(v) for v in blockers or ()}
    return [v for v in ancestors(variables, blockers)
            if v.owner is None or id(v) in blocked]


def applys_between(inputs: Iterable[Variable], outputs: Iterable[Variable]) -> list[Apply]:
    """The Apply nodes computing `outputs` without looking past `inputs`, in topological
    order."""
    return io_toposort(inputs, outputs)


def io_toposort(inputs: Iterable[Variable], outputs: Iterable[Variable],
                orderings: Mapping[Apply, Sequence[Apply]] | None = None) -> list[Apply]:
    """The Apply nodes computing `outputs`, not looking past `inputs`, each after every node it
    depends on and after the nodes `orderings[node]` lists. Deterministic: a depth-first
    post-order visiting a node's inputs left to right, then its ordered predecessors.

    Raises ValueError if the graph (with its orderings) has a cycle (which only a broken
    rewrite, or a DestroyHandler asked for an impossible order, can create).
    """
    orderings = orderings or {}
    stop = {id(v) for v in inputs}
    order: list[Apply] = []
    done: set[int] = set()
    # On the stack, (node, False) asks to visit node's inputs, (node, True) to emit node.
    # A node is "open" between the two; meeting an open node again means a cycle.
    open_nodes: set[int] = set()
    stack: list[tuple[Apply, bool]] = []
    for output in reversed(_as_list(outputs)):
        if output.owner is not None and id(output) not in stop:
            stack.append((output.owner, False))
    while stack:
        node, expanded = stack.pop()
        if expanded:
            open_nodes.discard(id(node))
            done.add(id(node))
            order.append(node)
            continue
        if id(node) in done:
            continue
        if id(node) in open_nodes:
            raise ValueError(f"io_toposort: the graph has a cycle through {node}")
        open_nodes.add(id(node))
        stack.append((node, True))
        for before in reversed(orderings.get(node, ())):
            if id(before) not in done:
                stack.append((before, False))
        for variable in reversed(node.inputs):
            owner = variable.owner
            if owner is not None and id(variable) not in stop and id(owner) not in done:
                stack.append((owner, False))
    return order


def prioritized(nodes: Sequence[Apply],
                orderings: Mapping[Apply, Sequence[Apply]] | None = None) -> list[Apply]:
    """`nodes` (in a topological order) reordered by their ops' `schedule`. The nodes of
    schedule -1 come as early as they can: the one that needs the fewest nodes first, right
    after those nodes (in their order), then the next one. The nodes of schedule 1 come as
    late as they can: each next node is, of those whose inputs and `orderings`
    predecessors have run, the one of the smallest (schedule, position so far). The others
    keep their order."""
    position = {node: index for index, node in enumerate(nodes)}
    predecessors = {node: {v.owner for v in node.inputs if v.owner in position}
                    | {b for b in (orderings or {}).get(node, ()) if b in position}
                    for node in nodes}

    def needed(node: Apply) -> set[Apply]:
        found = {node}
        stack = [node]
        while stack:
            for predecessor in predecessors[stack.pop()]:
                if predecessor not in found:
                    found.add(predecessor)
                    stack.append(predecessor)
        return found

    early = sorted(((needed(node), position[node]) for node in nodes if node.op.schedule < 0),
                   key=lambda pair: (len(pair[0]), pair[1]))
    base: list[Apply] = []
    placed: set[Apply] = set()
    for group in [closure for closure, _ in early] + [set(nodes)]:
        fresh = sorted(group - placed, key=position.__getitem__)
        base += fresh
        placed.update(fresh)
    order_of = {node: index for index, node in enumerate(base)}
    successors: dict[Apply, list[Apply]] = {node: [] for node in nodes}
    for node, before in predecessors.items():
        for predecessor in before:
            successors[predecessor].append(node)
    waiting = {node: len(before) for node, before in predecessors.items()}
    ready = [(node.op.schedule, order_of[node]) for node in base if not waiting[node]]
    heapq.heapify(ready)
    order: list[Apply] = []
    while ready:
        node = base[heapq.heappop(ready)[1]]
        order.append(node)
        for successor in successors[node]:
            waiting[successor] -= 1
            if not waiting[successor]:
                heapq.heappush(ready, (successor.op.schedule, order_of[successor]))
    return order


def toposort(outputs: Variable | Iterable[Variable]) -> list[Apply]:
    """Every Apply node `outputs` depend on, in topological order."""
    return io_toposort([], _as_list(outputs))


def clone_get_equiv(inputs: Sequence[Variable], outputs: Sequence[Variable],
                    copy_inputs: bool = True, copy_orphans: bool = True,
                    memo: dict[Any, Any] | None = None) -> dict[Any, Any]:
    """Copy the graph from `inputs` to `outputs`; return the map from every original Variable
    and Apply node to its copy.

    copy_inputs: clone the given inputs (otherwise they map to themselves).
    copy_orphans: clone the ownerless variables that are not in `inputs` (mostly constants;
    otherwise they map to themselves).
    memo: pre-maps variables to replacements (a substitution); the walk stops at them. It is
    updated in place and returned.
    Nodes whose inputs changed Type are rebuilt with the op's make_node.
    """
    inputs, outputs = _as_list(inputs), _as_list(outputs)
    equiv: dict[Any, Any] = {} if memo is None else memo
    for variable in inputs:
        if variable not in equiv:
            equiv[variable] = variable.clone() if copy_inputs else variable
    walk_stop = inputs + [key for key in equiv if isinstance(key, Variable)]
    for node in io_toposort(walk_stop, outputs):
        if node in equiv:
            continue
        for variable in node.inputs:
            if variable not in equiv:
                # Every owned input was mapped with its node earlier (topological order).
                equiv[variable] = variable.clone() if copy_orphans else variable
        new_node = node.clone_with_new_inputs([equiv[v] for v in node.inputs], strict=False)
        equiv[node] = new_node
        for old, new in zip(node.outputs, new_node.outputs):
            equiv.setdefault(old, new)
    for variable in outputs:
        if variable not in equiv:
            # Only ownerless outputs are left: the others were mapped with their nodes.
            equiv[variable] = variable.clone() if copy_orphans else variable
    return equiv


def clone(inputs: Sequence[Variable], outputs: Sequence[Variable],
          copy_inputs: bool = True, copy_orphans: bool = True) -> tuple[list[Variable],
                                                                        list[Variable]]:
    """Copy the graph from inputs to outputs; returns (new inputs, new outputs)."""
    equiv = clone_get_equiv(inputs, outputs, copy_inputs, copy_orphans)
    return [equiv[v] for v in inputs], [equiv[v] for v in outputs]


def clone_replace(outputs: Variable | Sequence[Variable],
                  replace: Mapping[Variable, Variable] | Iterable[tuple[Variable, Variable]]
                  | None = None) -> Variable | list[Variable]:
    """A copy of the graph of `outputs` in which each key of `replace` is substituted by its
    value (once: a replacement that depends on what it replaces keeps the original there).

    The graph inputs and constants are shared with the original, which is left untouched.
    Nodes downstream of a replacement of another Type are rebuilt by their op's make_node,
    which rejects inputs it cannot take. Returns a Variable for a Variable, else a list.
    """
    if replace is None:
        pairs = []
    elif isinstance(replace, Mapping):
        pairs = list(replace.items())
    else:
        pairs = list(replace)
    single = isinstance(outputs, Variable)
    output_list = _as_list(outputs)
    memo: dict[Any, Any] = {}
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"clone_replace: replace must be a dict or (variable, replacement) "
                            f"pairs, got {pair!r}")
        old, new = pair
        if not isinstance(old, Variable) or not isinstance(new, Variable):
            raise TypeError(f"clone_replace: replacements must be Variable pairs, got "
                            f"({old!r}, {new!r})")
        memo[old] = new
    # Map every ownerless ancestor to itself, so inputs and constants are shared, and stop the
    # walk at the replaced variables, so nothing above them is copied.
    for variable in graph_inputs(output_list, blockers=list(memo)):
        memo.setdefault(variable, variable)
    equiv = clone_get_equiv([], output_list, copy_inputs=False, copy_orphans=False, memo=memo)
    cloned = [equiv[v] for v in output_list]
    return cloned[0] if single else cloned


def is_in_ancestors(node: Apply, candidate: Apply) -> bool:
    """True if `candidate` is `node` or one of the nodes `node` depends on."""
    if candidate is node:
        return True
    return any(v.owner is candidate for v in ancestors(node.inputs))


def equal_computations(xs: Sequence[Variable], ys: Sequence[Variable],
                       in_xs: Sequence[Variable] | None = None,
                       in_ys: Sequence[Variable] | None = None) -> bool:
    """True if the graphs of `xs` and `ys` compute the same thing, pairwise: equal ops and
    Types, output indices and structure, equal constants; `in_xs[i]` stands for `in_ys[i]`,
    and any other ownerless non-constant variable only for itself. How subgraphs are shared
    does not matter (exp(a) + exp(a) with one exp node or two compute the same thing).
    """
    xs, ys = _as_list(xs), _as_list(ys)
    in_xs, in_ys = _as_list(in_xs or []), _as_list(in_ys or [])
    if len(xs) != len(ys) or len(in_xs) != len(in_ys):
        return False
    partner_of_x = {id(x): y for x, y in zip(in_xs, in_ys)}
    partner_of_y = {id(y): x for x, y in zip(in_xs, in_ys)}
    verified: set[tuple[int, int]] = set()
    stack = list(zip(xs, ys))
    while stack:
        x, y = stack.pop()
        key = (id(x), id(y))
        if key in verified:
            continue
        if id(x) in partner_of_x or id(y) in partner_of_y:
            if partner_of_x.get(id(x)) is not y:
                return False
        elif x is y and not partner_of_x:
            # The same variable, and no input of it is renamed: nothing to compare.
            pass
        elif x.type != y.type:
            return False
        elif isinstance(x, Constant) or isinstance(y, Constant):
            if not (isinstance(x, Constant) and x.equals(y)):
                return False
        elif x.owner is None or y.owner is None:
            if x is not y:
                return False
        else:
            if x.index != y.index or x.owner.op != y.owner.op \
                    or len(x.owner.inputs) != len(y.owner.inputs) \
                    or len(x.owner.outputs) != len(y.owner.outputs):
                return False
            stack.extend(zip(x.owner.inputs, y.owner.inputs))
        verified.add(key)
    return True
