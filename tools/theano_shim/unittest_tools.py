"""theano.tests.unittest_tools for Theano's tests run against sympile: the helpers those
tests call, written on sympile's public API and numpy (Theano's own module reaches into
Theano's internals)."""

from __future__ import annotations

import copy
import sys
import unittest
from unittest import SkipTest

import numpy as np

import sympile
import sympile.tensor as T
from sympile.compile.mode import get_mode

try:
    from parameterized import parameterized
except ImportError:  # the tests that use it fail; the others run
    parameterized = None

# Theano's config.unittests.rseed default.
SEED = 666

# Theano's default comparison tolerances (theano.tensor.basic, cmp_sloppy=0).
TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-5), "float64": (1e-8, 1e-5)}


def attr(*args, **kwargs):
    return lambda function: function


def custom_name_func(testcase_func, param_num, param):
    return f"{testcase_func.__name__}_" + parameterized.to_safe_name(
        "_".join(str(x) for x in param.args))


def fetch_seed(pseed=None):
    return int(pseed or SEED)


def seed_rng(pseed=None):
    seed = fetch_seed(pseed)
    np.random.seed(seed)
    return seed


def verify_grad(op, pt, n_tests=2, rng=None, *args, **kwargs):
    if rng is None:
        seed_rng()
        rng = np.random
    T.verify_grad(op, pt, n_tests, rng, *args, **kwargs)


verify_grad.E_grad = T.verify_grad.E_grad


class MockRandomState:
    def __init__(self, val):
        self.val = val

    def rand(self, *shape):
        return np.zeros(shape, dtype="float64") + self.val

    def randint(self, minval, maxval=None, size=1):
        if maxval is None:
            minval, maxval = 0, minval
        out = np.zeros(size, dtype="int64")
        if self.val == 0:
            return out + minval
        return out + maxval - 1


class TestOptimizationMixin:
    def assertFunctionContains(self, f, op, min=1, max=sys.maxsize):
        count = sum(node.op == op for node in f.maker.fgraph.toposort())
        assert min <= count <= max, (op, count)

    def assertFunctionContains0(self, f, op):
        return self.assertFunctionContains(f, op, min=0, max=0)

    def assertFunctionContains1(self, f, op):
        return self.assertFunctionContains(f, op, min=1, max=1)

    def assertFunctionContainsN(self, f, op, N):
        return self.assertFunctionContains(f, op, min=N, max=N)

    def assertFunctionContainsClass(self, f, op, min=1, max=sys.maxsize):
        count = sum(isinstance(node.op, op) for node in f.maker.fgraph.toposort())
        assert min <= count <= max, (op, count)

    def assertFunctionContainsClassN(self, f, op, N):
        return self.assertFunctionContainsClass(f, op, min=N, max=N)

    def SkipTest(self, msg="Skip this test"):
        raise SkipTest(msg)


class T_OpContractMixin:
    """Theano's check of the Op contract for the ops of `self.ops`: each equals itself, its
    copies and `self.clone(op)`, and no other op of the list nor `self.other_op`; equal
    ops hash equal; str() names each one."""

    other_op = T.add

    def copy(self, op):
        return copy.copy(op)

    def deepcopy(self, op):
        return copy.deepcopy(op)

    def clone(self, op):
        raise NotImplementedError("the test class returns a new instance like op")

    def test_eq(self):
        for index, op in enumerate(self.ops):
            for same in (op, self.copy(op), self.deepcopy(op), self.clone(op)):
                assert op == same, (op, same)
            assert op != self.other_op
            assert all(op != other for position, other in enumerate(self.ops)
                       if position != index)

    def test_hash(self):
        for index, op in enumerate(self.ops):
            for same in (op, self.copy(op), self.deepcopy(op), self.clone(op)):
                assert hash(op) == hash(same), (op, same)
            assert all(hash(op) != hash(other) for position, other in enumerate(self.ops)
                       if position != index)

    def test_name(self):
        for op in self.ops:
            assert str(op)


class InferShapeTester(unittest.TestCase):
    """Theano's check of an Op's infer_shape: the shapes graph holds no node of the op,
    the outputs graph does, and the shapes agree with the outputs'."""

    def setUp(self):
        seed_rng()
        mode = getattr(self, "mode", None)
        self.mode = get_mode(mode).including("canonicalize")

    def _compile_and_check(self, inputs, outputs, numeric_inputs, cls, excluding=None,
                           warn=True, check_topo=True):
        mode = self.mode.excluding(*excluding) if excluding else self.mode
        outputs_function = sympile.function(inputs, outputs, mode=mode)
        shapes_function = sympile.function(inputs, [o.shape for o in outputs], mode=mode)
        if check_topo:
            assert not any(isinstance(node.op, cls)
                           for node in shapes_function.maker.fgraph.toposort())
        assert any(isinstance(node.op, cls) for node in outputs_function.maker.fgraph.toposort())
        for out, shape in zip(outputs_function(*numeric_inputs),
                              shapes_function(*numeric_inputs)):
            assert np.all(np.shape(out) == shape), (np.shape(out), shape)


class WrongValue(Exception):
    def __init__(self, expected, value, rtol, atol):
        super().__init__(f"expected {expected!r}, got {value!r} (rtol {rtol}, atol {atol})")


def allclose(expected, value, rtol=None, atol=None) -> bool:
    """Theano's theano.tensor.basic._allclose, the comparison its tests use: numpy's
    allclose with the tolerances of the less precise dtype of the two."""
    expected, value = np.asarray(expected), np.asarray(value)
    dtypes = (expected.dtype.name, value.dtype.name)
    # The less precise dtype of the two sets the tolerances, as in Theano.
    narrowest = next((d for d in ("float16", "float32") if d in dtypes), "float64")
    # Read where Theano's tests set them: theano.tensor.basic.float32_atol and the like.
    default_atol = getattr(T.basic, f"{narrowest}_atol")
    default_rtol = getattr(T.basic, f"{narrowest}_rtol")
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    return bool(np.allclose(expected, value, rtol=rtol, atol=atol, equal_nan=True))


def assert_allclose(expected, value, rtol=None, atol=None):
    if not allclose(expected, value, rtol, atol):
        raise WrongValue(expected, value, rtol, atol)


def assertFailure_fast(f):
    return f
