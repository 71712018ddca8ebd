"""Theano's `theano.compile.pfunc`: pfunc, the function() that Theano's function() calls, and
rebuild_collect_shared, the graph copy it starts with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sympile.compile.function import Function, Out, default_updates, function, normalize_updates
from sympile.graph.basic import Variable, clone_get_equiv, graph_inputs
from sympile.tensor.sharedvar import SharedVariable, shared

__all__ = ["pfunc", "rebuild_collect_shared"]


def pfunc(params: Sequence[Any], outputs: Any = None, mode: Any = None, updates: Any = None,
          givens: Any = None, no_default_updates: Any = False, accept_inplace: bool = False,
          name: str | None = None, rebuild_strict: bool = True,
          allow_input_downcast: bool | None = None, profile: Any = None,
          on_unused_input: str | None = None,
          output_keys: Sequence[str] | None = None) -> Function:
    """Theano's pfunc: function() with its inputs called `params`; `output_keys` names the
    outputs (a list of as many), which makes the function return a dict as function() does
    for outputs given as a dict."""
    if output_keys is not None:
        if not isinstance(outputs, (list, tuple)) or len(outputs) != len(output_keys):
            raise ValueError(f"pfunc: output_keys names {len(output_keys)} outputs, but "
                             f"outputs is {outputs!r}; expected a list of as many")
        outputs = dict(zip(output_keys, outputs))
    return function(params, outputs, mode=mode, updates=updates, givens=givens,
                    no_default_updates=no_default_updates, accept_inplace=accept_inplace,
                    name=name, rebuild_strict=rebuild_strict,
                    allow_input_downcast=allow_input_downcast, profile=profile,
                    on_unused_input=on_unused_input)


def rebuild_collect_shared(outputs: Any, inputs: Sequence[Variable] | None = None,
                           replace: Any = None, updates: Any = None,
                           rebuild_strict: bool = True, copy_inputs_over: bool = True,
                           no_default_updates: Any = False) -> tuple[list, Any, list]:
    """Theano's first step of pfunc: a copy of the graph of `outputs` (a Variable, an Out, a
    list of them, or None) with `replace` substituted (a dict or pairs; a replacement that is
    not a Variable becomes a shared variable), the shared variables it uses collected, with
    their default updates (unless `no_default_updates`: True or a list) and the explicit
    `updates`, whose expressions are copied too.

    copy_inputs_over=True keeps the graph's inputs, constants and shared variables (the copy
    shares them); False copies them too. rebuild_strict=False lets a replacement of another
    type rebuild the nodes below it (always allowed here, as clone_replace does).

    Returns (inputs, outputs, [clone_d, update_d, update_expr, shared_inputs]): the inputs'
    copies, the outputs' copies in the form given, the map from every original variable and
    node to its copy, the shared variable -> update expression map (copied), the (shared
    variable, update) pairs in order, and the shared variables the copies use.
    """
    del rebuild_strict  # nodes below a replacement are always rebuilt by their op
    clone_d: dict[Any, Any] = {}
    shared_inputs: list[SharedVariable] = []

    def copy_ownerless(variable: Variable) -> Variable:
        if isinstance(variable, SharedVariable) and variable not in shared_inputs:
            shared_inputs.append(variable)
        return variable if copy_inputs_over else variable.clone()

    def copy_graph(variables: list[Variable]) -> list[Variable]:
        for variable in graph_inputs(variables, blockers=list(clone_d)):
            if variable not in clone_d:
                clone_d[variable] = copy_ownerless(variable)
        clone_get_equiv([], variables, copy_inputs=False, copy_orphans=False, memo=clone_d)
        return [clone_d[v] for v in variables]

    pairs = []
    for original, replacement in (replace.items() if isinstance(replace, Mapping)
                                  else replace or []):
        if not isinstance(original, Variable):
            raise TypeError(f"rebuild_collect_shared: replace's keys must be Variables, got "
                            f"{original!r}")
        if original in clone_d:
            raise ValueError(f"rebuild_collect_shared: {original} is replaced, but an earlier "
                             f"replacement depends on it; replacements may not depend on each "
                             f"other")
        if not isinstance(replacement, Variable):
            replacement = shared(replacement)
        pairs.append((original, replacement))
        (clone_d[original],) = copy_graph([replacement])

    copied_inputs = []
    for variable in inputs or []:
        if isinstance(variable, SharedVariable):
            raise TypeError(f"rebuild_collect_shared: shared variable {variable} cannot be an "
                            f"explicit input; substitute a non-shared variable with replace")
        if variable not in clone_d:
            clone_d[variable] = variable if copy_inputs_over else variable.clone()
        copied_inputs.append(clone_d[variable])

    listed = [outputs] if isinstance(outputs, (Variable, Out)) else list(outputs or [])
    for value in listed:
        if not isinstance(value, (Variable, Out)):
            raise TypeError(f"rebuild_collect_shared: outputs must be Variables or Out "
                            f"instances, got {value!r}")
    roots = [value.variable if isinstance(value, Out) else value for value in listed]
    copies = copy_graph(roots)
    copied_outputs = [Out(copy, borrow=value.borrow) if isinstance(value, Out) else copy
                      for value, copy in zip(listed, copies)]

    update_expr = normalize_updates(updates)
    update_expr += default_updates(roots + [value for _, value in update_expr], update_expr,
                                   dict(pairs), no_default_updates)
    update_expr = [(target, copy) for (target, _), copy in
                   zip(update_expr, copy_graph([value for _, value in update_expr]))]
    for target, _ in update_expr:
        if target not in shared_inputs:
            shared_inputs.append(target)
    update_d = dict(update_expr)
    result = copied_outputs if isinstance(outputs, (list, tuple)) or outputs is None \
        else copied_outputs[0]
    return copied_inputs, result, [clone_d, update_d, update_expr, shared_inputs]
