"""Composite: a graph of scalar ops run as one scalar op.

Elemwise(Composite(...)) computes a whole elementwise expression in one node (the fusion
rewrite of sympile.tensor.rewriting.fusion builds them): each input is read once and no
intermediate tensor is kept in the compiled function's storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Constant, Variable, io_toposort
from sympile.graph.ccode import C_TYPES
from sympile.scalar.basic import (
    DISCRETE_DTYPES,
    ScalarOp,
    ScalarType,
    add,
    elementwise_impl,
    get_scalar_type,
)
from sympile.scalar.c_rules import CScalarCode, c_literal

__all__ = ["Composite"]


def _scalar_constant(value: Any, dtype: str) -> Constant:
    return get_scalar_type(dtype).make_constant(np.asarray(value, dtype=dtype)[()])


class Composite(ScalarOp):
    """The scalar graph from `inputs` (ScalarType variables without owner) to `outputs`.

    The graph is copied, so later changes to the given variables do not reach the op. Two
    composites are equal when their graphs are the same up to the names of the variables:
    the same ops applied in the same order to the same inputs and constants (`key`).
    """

    __props__ = ("key",)

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable]):
        inputs, outputs = list(inputs), list(outputs)
        if not outputs:
            raise ValueError("Composite: expected at least one output")
        for index, variable in enumerate(inputs):
            if not isinstance(variable, Variable) or not isinstance(variable.type, ScalarType) \
                    or variable.owner is not None or isinstance(variable, Constant):
                raise TypeError(f"Composite: input {index} must be a scalar variable without "
                                f"owner, got {variable!r}")
        if len(set(map(id, inputs))) != len(inputs):
            raise ValueError("Composite: an input is listed twice")
        for index, variable in enumerate(outputs):
            if not isinstance(variable, Variable) or not isinstance(variable.type, ScalarType):
                raise TypeError(f"Composite: output {index} must be a scalar variable, got "
                                f"{variable!r}")
        self.inputs, self.outputs = _copy_graph(inputs, outputs)
        self.nodes = io_toposort(self.inputs, self.outputs)
        self.nin, self.nout = len(self.inputs), len(self.outputs)
        self.key, self.text = _describe(self.inputs, self.outputs, self.nodes)

    @property
    def name(self) -> str:
        return f"composite{{{self.text}}}"

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"Composite({self.text})"

    def impl(self, *inputs: Any) -> Any:
        """The graph evaluated on `inputs` (numpy scalars or arrays, which then broadcast):
        each node's impl in topological order, each result in its variable's dtype."""
        values: dict[Variable, Any] = dict(zip(self.inputs, inputs))
        for node in self.nodes:
            arguments = [v.data if isinstance(v, Constant) else values[v] for v in node.inputs]
            results = elementwise_impl(node.op, *arguments)
            if len(node.outputs) == 1:
                results = (results,)
            for variable, result in zip(node.outputs, results):
                result = np.asarray(result)
                if result.dtype.name != variable.type.dtype:
                    result = result.astype(variable.type.dtype)
                values[variable] = result
        # A constant output has the inputs' broadcast shape, as every other output.
        shape = np.broadcast_shapes(*(np.shape(value) for value in inputs))
        results = tuple(np.full(shape, v.data, dtype=v.type.dtype) if isinstance(v, Constant)
                        else values[v] for v in self.outputs)
        return results[0] if self.nout == 1 else results

    def output_dtypes(self, *input_dtypes: str) -> tuple[str, ...]:
        """The dtypes of the graph's outputs; TypeError unless the inputs have the dtypes of
        the graph's inputs (the graph's ops were typed for them)."""
        expected = tuple(v.type.dtype for v in self.inputs)
        if tuple(input_dtypes) != expected:
            raise TypeError(f"{self}: expected inputs of dtypes {', '.join(expected)}, got "
                            f"{', '.join(input_dtypes)}")
        return tuple(v.type.dtype for v in self.outputs)

    def c_scalar(self, inputs: Sequence[str], outputs: Sequence[str],
                 input_dtypes: Sequence[str], output_dtypes: Sequence[str]
                 ) -> CScalarCode | None:
        """The inner nodes' statements in order, in one block: each result is a temporary
        named after the first output (so the temporaries of a composite nested in this one
        have other names), each node's statements in their own braces. None if an inner node
        has no C code."""
        if tuple(input_dtypes) != tuple(v.type.dtype for v in self.inputs) or \
                tuple(output_dtypes) != tuple(v.type.dtype for v in self.outputs):
            return None
        names: dict[Variable, str] = dict(zip(self.inputs, inputs))

        def name_of(variable: Variable) -> str:
            if variable in names:
                return names[variable]
            return c_literal(variable.data, variable.type.dtype)

        lines: list[str] = []
        support: list[str] = []
        for index, node in enumerate(self.nodes):
            results = tuple(f"{outputs[0]}_t{index}" if len(node.outputs) == 1
                            else f"{outputs[0]}_t{index}_{position}"
                            for position in range(len(node.outputs)))
            if not all(v.type.dtype in C_TYPES for v in node.inputs + node.outputs):
                return None
            code = node.op.c_scalar(tuple(name_of(v) for v in node.inputs), results,
                                    tuple(v.type.dtype for v in node.inputs),
                                    tuple(v.type.dtype for v in node.outputs))
            if code is None:
                return None
            lines += [f"{C_TYPES[v.type.dtype]} {name};" for v, name in zip(node.outputs, results)]
            lines.append(f"{{ {code.statements} }}")
            support += [piece for piece in code.support if piece not in support]
            names.update(zip(node.outputs, results))
        lines += [f"{output} = {name_of(v)};" for v, output in zip(self.outputs, outputs)]
        return CScalarCode("{\n" + "\n".join(lines) + "\n}", tuple(support))

    def L_op(self, inputs, outputs, output_grads):
        """Reverse mode through the graph: it is rebuilt on `inputs`, then each node's L_op
        turns the gradients of its outputs into those of its inputs, summed over the uses of
        each variable. An input the outputs do not depend on gets a zero gradient."""
        values: dict[Variable, Variable] = dict(zip(self.inputs, inputs))
        rebuilt: list[Apply] = []
        for node in self.nodes:
            new_node = node.op.make_node(*[values.get(v, v) for v in node.inputs])
            rebuilt.append(new_node)
            values.update(zip(node.outputs, new_node.outputs))
        grads: dict[Variable, Variable] = {}
        for output, gradient in zip(self.outputs, output_grads):
            _accumulate(grads, values.get(output, output), gradient)
        for node in reversed(rebuilt):
            if not any(o in grads for o in node.outputs):
                continue
            output_grads_of_node = [grads[o] if o in grads else _scalar_constant(0, _grad_dtype(o))
                                    for o in node.outputs]
            input_grads = node.op.L_op(node.inputs, node.outputs, output_grads_of_node)
            for variable, gradient in zip(node.inputs, input_grads):
                if not isinstance(variable, Constant):
                    _accumulate(grads, variable, gradient)
        return [grads[x] if x in grads else _scalar_constant(0, _grad_dtype(x)) for x in inputs]


def _grad_dtype(variable: Variable) -> str:
    """The dtype of a gradient with respect to `variable` (float64 for a discrete one)."""
    dtype = variable.type.dtype
    return "float64" if dtype in DISCRETE_DTYPES else dtype


def _accumulate(grads: dict[Variable, Variable], variable: Variable,
                gradient: Variable) -> None:
    grads[variable] = add(grads[variable], gradient) if variable in grads else gradient


def _copy_graph(inputs: list[Variable], outputs: list[Variable]
                ) -> tuple[list[Variable], list[Variable]]:
    """Fresh inputs of the same types and the graph rebuilt on them with each op's make_node;
    ValueError if the outputs depend on a variable that is neither an input nor a constant."""
    values: dict[Variable, Variable] = {v: v.type() for v in inputs}
    for node in io_toposort(inputs, outputs):
        arguments = []
        for variable in node.inputs:
            if variable in values:
                arguments.append(values[variable])
            elif isinstance(variable, Constant):
                arguments.append(variable)
            else:
                raise ValueError(f"Composite: the outputs depend on {variable}, which is not an "
                                 f"input")
        if not isinstance(node.op, ScalarOp):
            raise TypeError(f"Composite: {node.op} is not a scalar op")
        values.update(zip(node.outputs, node.op.make_node(*arguments).outputs))
    new_outputs = []
    for variable in outputs:
        if variable in values:
            new_outputs.append(values[variable])
        elif isinstance(variable, Constant):
            new_outputs.append(variable)
        else:
            raise ValueError(f"Composite: output {variable} does not depend on the inputs only")
    return [values[v] for v in inputs], new_outputs


_MAX_NAME = 200


def _describe(inputs: list[Variable], outputs: list[Variable], nodes: list[Apply]
              ) -> tuple[tuple, str]:
    """(key, text) of the graph: the key holds the ops and constant values (equal keys: the
    same computation), the text shows it, e.g. 'i0, i1 -> mul(exp(i0), i1)'."""
    names: dict[Variable, str] = {v: f"i{i}" for i, v in enumerate(inputs)}
    refs: dict[Variable, tuple] = {v: ("input", i) for i, v in enumerate(inputs)}
    key: list[tuple] = [tuple(("input", v.type.dtype) for v in inputs)]

    def ref(variable: Variable) -> tuple:
        if variable not in refs:
            data = np.asarray(variable.data)
            refs[variable] = ("constant", data.dtype.name, data.tobytes())
            names[variable] = repr(data[()].item())
        return refs[variable]

    for index, node in enumerate(nodes):
        key.append((node.op, tuple(ref(v) for v in node.inputs)))
        call = f"{node.op}({', '.join(names[v] for v in node.inputs)})"
        if len(call) > _MAX_NAME:
            # A variable used many times would repeat its whole expression at each use.
            call = f"n{index}"
        for position, output in enumerate(node.outputs):
            refs[output] = ("node", index, position)
            names[output] = call if len(node.outputs) == 1 else f"{call}[{position}]"
    key.append(tuple(ref(v) for v in outputs))
    text = f"{', '.join(names[v] for v in inputs)} -> {', '.join(names[v] for v in outputs)}"
    return tuple(key), text
