"""PatternNodeRewriter: a rewrite written as data, an input pattern and an output pattern.

    PatternNodeRewriter((neg, (neg, "x")), "x")                # --x -> x
    PatternNodeRewriter((mul, "x", {"pattern": "one", "constraint": is_one}), "x")
    PatternNodeRewriter((add, "x", "x"), (scale_by_two, "x"))  # x + x -> 2x

A pattern is
- a string: a pattern variable, which matches any variable and binds it to the name; a name
  used twice must match the same variable both times;
- a tuple (op, sub_pattern, ...): matches a variable computed by a node whose op equals `op`
  (an Op instance) or is an instance of it (an Op class), with as many inputs as sub-patterns,
  each matching its sub-pattern. The variable must be the one a call of the op returns (its
  default output, or its first one);
- a dict {"pattern": sub_pattern, "constraint": predicate}: matches what sub_pattern matches
  when predicate(variable) is also true (e.g. a test that a constant is 1); with a "name"
  key as well, it binds the matched variable to that name (so that the output pattern can
  read, say, the dtype of an intermediate). The whole input pattern may be such a dict;
- a Constant: matches constants holding the same value with the same Type.

The output pattern is built by calling its ops (Op instances, or any callable returning a
Variable) on the bound variables; its strings must be bound by the input pattern, and values
that are not patterns (a Constant, a number) are passed to the calls as they are.

A list of input patterns is a choice: the first that matches is rewritten (x + 1 and 1 + x).
`adapt(replacement, matched)` makes the replacement fit the matched variable's Type, or says
it cannot (None): a tensor rule passes a cast to the dtype plus the static lengths.

The engine knows nothing about tensors: constraints carry every knowledge of values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.op import Op
from sympile.graph.rewriting.basic import NodeRewriter

__all__ = ["PatternNodeRewriter", "pattern_to_str"]

Pattern = Any  # str | tuple | dict | Constant, nested


def pattern_to_str(pattern: Pattern) -> str:
    """A readable form of a pattern: ops applied to their sub-patterns, e.g. neg(neg(x))."""
    if isinstance(pattern, str):
        return pattern
    if isinstance(pattern, tuple):
        op = pattern[0]
        op_name = op.__name__ if isinstance(op, type) else getattr(op, "__name__", str(op))
        return f"{op_name}({', '.join(pattern_to_str(p) for p in pattern[1:])})"
    if isinstance(pattern, dict):
        return pattern_to_str(pattern["pattern"])
    return str(pattern)


def _is_op_entry(entry: Any) -> bool:
    return isinstance(entry, Op) or (isinstance(entry, type) and issubclass(entry, Op))


def _check_in_pattern(pattern: Pattern, where: str, names: set[str]) -> None:
    """TypeError/ValueError for a malformed input pattern; collects its variable names."""
    if isinstance(pattern, str):
        if not pattern:
            raise ValueError(f"PatternNodeRewriter: {where}: a pattern variable needs a name")
        names.add(pattern)
    elif isinstance(pattern, tuple):
        if not pattern or not _is_op_entry(pattern[0]):
            raise TypeError(f"PatternNodeRewriter: {where}: a tuple pattern must start with an "
                            f"Op or an Op class, got {pattern!r}")
        for index, sub_pattern in enumerate(pattern[1:]):
            _check_in_pattern(sub_pattern, f"{where}, input {index} of {pattern[0]}", names)
    elif isinstance(pattern, dict):
        if not {"pattern", "constraint"} <= set(pattern) <= {"pattern", "constraint", "name"} \
                or not callable(pattern["constraint"]) \
                or not isinstance(pattern.get("name", ""), str):
            raise TypeError(f"PatternNodeRewriter: {where}: a dict pattern must be "
                            f"{{'pattern': sub_pattern, 'constraint': callable}} and may have "
                            f"a 'name' string, got {pattern!r}")
        if "name" in pattern:
            names.add(pattern["name"])
        _check_in_pattern(pattern["pattern"], where, names)
    elif not isinstance(pattern, Constant):
        raise TypeError(f"PatternNodeRewriter: {where}: {pattern!r} is not a pattern (a "
                        f"string, a tuple (op, ...), a dict with a constraint or a Constant)")


def _check_out_pattern(pattern: Pattern, where: str, names: set[str]) -> None:
    """TypeError/ValueError for a malformed output pattern or an unbound name."""
    if isinstance(pattern, str):
        if pattern not in names:
            bound = ", ".join(sorted(names)) or "none"
            raise ValueError(f"PatternNodeRewriter: {where}: {pattern!r} is not bound by the "
                             f"input pattern (bound: {bound})")
    elif isinstance(pattern, tuple):
        if not pattern or not callable(pattern[0]) or isinstance(pattern[0], type):
            raise TypeError(f"PatternNodeRewriter: {where}: a tuple of the output pattern must "
                            f"start with an Op instance or a function, got {pattern!r}")
        for index, sub_pattern in enumerate(pattern[1:]):
            _check_out_pattern(sub_pattern, f"{where}, input {index} of {pattern[0]}", names)
    elif isinstance(pattern, dict):
        raise TypeError(f"PatternNodeRewriter: {where}: constraints belong in the input "
                        f"pattern, got {pattern!r}")


def _returned_index(op: Op) -> int:
    """The index of the output a call of `op` returns (its first when it returns a list)."""
    return op.default_output if op.default_output is not None else 0


class PatternNodeRewriter(NodeRewriter):
    """Replaces what matches `in_pattern` by `out_pattern` built on the bound variables (see
    the module docstring for the pattern language).

    allow_multiple_clients: with False (the default), a variable matched by an inner tuple
    pattern must be used only by the matched node, so that the rewrite removes what it
    matched instead of computing it twice. A replacement whose Type cannot stand for the
    matched variable's (the patterns cannot express dtypes) leaves the node alone.
    """

    def __init__(self, in_pattern: Pattern | list[Pattern], out_pattern: Pattern,
                 name: str | None = None, allow_multiple_clients: bool = False,
                 adapt: Callable[[Variable, Variable], Variable | None] | None = None):
        alternatives = in_pattern if isinstance(in_pattern, list) else [in_pattern]
        if not alternatives:
            raise ValueError("PatternNodeRewriter: the list of input patterns is empty")
        for index, alternative in enumerate(alternatives):
            if not isinstance(_outer_tuple(alternative), tuple):
                raise TypeError(f"PatternNodeRewriter: input pattern {index} must be a tuple "
                                f"(op, ...) or a dict constraining one, got {alternative!r}")
            names: set[str] = set()
            _check_in_pattern(alternative, f"input pattern {index}", names)
            _check_out_pattern(out_pattern, "output pattern", names)
        if not isinstance(out_pattern, (str, tuple, Variable)):
            raise TypeError(f"PatternNodeRewriter: the output pattern must be a pattern "
                            f"variable, a tuple (op, ...) or a Variable, got {out_pattern!r}")
        self.in_patterns = alternatives
        self.out_pattern = out_pattern
        self.allow_multiple_clients = allow_multiple_clients
        self.adapt = adapt
        text = " | ".join(pattern_to_str(p) for p in alternatives)
        self.name = name or f"{text} -> {pattern_to_str(out_pattern)}"
        self.__doc__ = f"{text} -> {pattern_to_str(out_pattern)}"

    def tracks(self) -> Sequence[Op | type]:
        entries: list[Op | type] = []
        for alternative in self.in_patterns:
            entry = _outer_tuple(alternative)[0]
            if entry not in entries:
                entries.append(entry)
        return entries

    def match(self, fgraph: FunctionGraph | None, variable: Variable) -> dict[str, Variable] | None:
        """The bindings under which `variable` matches the first input pattern it can, or
        None."""
        for alternative in self.in_patterns:
            bindings: dict[str, Variable] = {}
            if _match(alternative, variable, bindings, fgraph, self.allow_multiple_clients,
                      top=True):
                return bindings
        return None

    def transform(self, fgraph: FunctionGraph, node: Apply) -> list[Variable | None] | None:
        if not self.applies_to(node.op):
            return None
        target = node.outputs[_returned_index(node.op)]
        bindings = self.match(fgraph, target)
        if bindings is None:
            return None
        replacement = _build(self.out_pattern, bindings, self.name)
        if self.adapt is not None:
            replacement = self.adapt(replacement, target)
        if replacement is None or replacement is target \
                or target.type.convert_variable(replacement) is None:
            return None
        return [replacement if output is target else None for output in node.outputs]


def _outer_tuple(pattern: Pattern) -> Any:
    """The tuple pattern at the top of an input pattern (inside its constraints)."""
    while isinstance(pattern, dict):
        pattern = pattern.get("pattern")
    return pattern


def _op_matches(entry: Op | type, op: Op) -> bool:
    return isinstance(op, entry) if isinstance(entry, type) else op == entry


def _match(pattern: Pattern, variable: Variable, bindings: dict[str, Variable],
           fgraph: FunctionGraph | None, allow_multiple_clients: bool, top: bool = False) -> bool:
    """True if `variable` matches `pattern`, extending `bindings` (left partly filled on
    failure: the caller discards them)."""
    if isinstance(pattern, str):
        bound = bindings.setdefault(pattern, variable)
        return bound is variable
    if isinstance(pattern, dict):
        if "name" in pattern and bindings.setdefault(pattern["name"], variable) is not variable:
            return False
        return _match(pattern["pattern"], variable, bindings, fgraph, allow_multiple_clients,
                      top) and bool(pattern["constraint"](variable))
    if isinstance(pattern, Constant):
        return pattern.equals(variable)
    node = variable.owner
    if node is None or not _op_matches(pattern[0], node.op) \
            or len(node.inputs) != len(pattern) - 1 or variable.index != _returned_index(node.op):
        return False
    if not top and not allow_multiple_clients and fgraph is not None \
            and len(fgraph.clients.get(variable, ())) > 1:
        return False
    return all(_match(sub_pattern, input_variable, bindings, fgraph, allow_multiple_clients)
               for sub_pattern, input_variable in zip(pattern[1:], node.inputs))


def _build(pattern: Pattern, bindings: dict[str, Variable], name: str) -> Any:
    """The value of the output pattern under `bindings`: a Variable for a pattern."""
    if isinstance(pattern, str):
        return bindings[pattern]
    if not isinstance(pattern, tuple):
        return pattern
    function: Callable[..., Any] = pattern[0]
    result = function(*(_build(sub_pattern, bindings, name) for sub_pattern in pattern[1:]))
    if isinstance(result, list) and result and isinstance(result[0], Variable):
        # An op with several outputs: the pattern stands for the first (as when matching).
        result = result[0]
    if not isinstance(result, Variable):
        raise TypeError(f"rewriter {name}: {pattern_to_str(pattern)} built {result!r}, not a "
                        f"Variable")
    return result
