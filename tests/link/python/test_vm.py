"""The reference VM: order, storage reuse, constants, error wrapping."""

import numpy as np
import pytest

import sympile.tensor as T
from sympile.graph.fgraph import FunctionGraph
from sympile.link.python.vm import PythonVM


def test_runs_nodes_in_order_and_keeps_storage():
    x = T.dvector("x")
    y = T.exp(x) + 1
    fgraph = FunctionGraph([x], [y])
    cell = [np.zeros(2)]
    vm = PythonVM(fgraph, [cell])
    vm()
    np.testing.assert_allclose(vm.output_storage[0][0], np.exp(0) + 1)
    cell[0] = np.ones(2)
    vm()
    np.testing.assert_allclose(vm.output_storage[0][0], np.e + 1)
    assert len(vm.nodes) == 2


def test_constants_are_prefilled():
    x = T.dvector("x")
    fgraph = FunctionGraph([x], [x * 3])
    vm = PythonVM(fgraph, [[np.ones(1)]])
    constants = [v for v in fgraph.variables if isinstance(v, T.TensorConstant)]
    assert all(vm.storage[c][0] is c.data for c in constants)


def test_errors_keep_their_class_and_name_the_node():
    x, y = T.dvectors("x", "y")
    fgraph = FunctionGraph([x, y], [x + y])
    vm = PythonVM(fgraph, [[np.ones(2)], [np.ones(3)]])
    with pytest.raises(ValueError, match="(?s)while computing Elemwise\\{add,no_inplace\\}.*"
                                         "input shapes: \\(2,\\), \\(3,\\)") as info:
        vm()
    assert info.value.node.op == fgraph.outputs[0].owner.op
    assert isinstance(info.value.__cause__, ValueError)
