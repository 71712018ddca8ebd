"""Random streams as Theano users know them: import paths, default updates, reseeding,
copies and pickles, symbolic sizes, dtypes, scan, gradients, rewrites, and bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.config import config
from sympile.gradient import verify_grad, verify_rop
from sympile.tensor.random import MRG_RandomStreams, RandomDraw, RandomStreams
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler

STREAMS = [RandomStreams, MRG_RandomStreams]


def test_theano_and_pytensor_import_paths():
    from sympile.sandbox.rng_mrg import MRG_RandomStreams as from_sandbox
    from sympile.tensor.random import RandomStream
    from sympile.tensor.shared_randomstreams import RandomStreams as from_tensor
    assert from_tensor is RandomStreams and from_sandbox is MRG_RandomStreams
    assert issubclass(RandomStream, RandomStreams)
    assert T.shared_randomstreams.RandomStreams is RandomStreams
    assert sympile.sandbox.rng_mrg.MRG_RandomStreams is MRG_RandomStreams


@pytest.mark.parametrize("streams", STREAMS)
def test_default_update_draws_anew_each_call(streams):
    rng = streams(seed=3)
    u = rng.uniform((5,))
    f = sympile.function([], u)
    first, second = f(), f()
    assert not np.array_equal(first, second)
    frozen = sympile.function([], u, no_default_updates=True)
    assert np.array_equal(frozen(), frozen())


@pytest.mark.parametrize("streams", STREAMS)
def test_no_default_updates_list_and_explicit_updates(streams):
    rng = streams(seed=3)
    u, v = rng.uniform((4,)), rng.normal((4,))
    state_u = rng.state_updates[0][0]
    f = sympile.function([], [u, v], no_default_updates=[state_u])
    (u1, v1), (u2, v2) = f(), f()
    assert np.array_equal(u1, u2) and not np.array_equal(v1, v2)
    with pytest.raises(TypeError, match="no_default_updates must be True, False or a list"):
        sympile.function([], u, no_default_updates="yes")
    # An explicit update of the state takes the place of its default update.
    g = sympile.function([], u, updates=[(state_u, state_u)])
    assert np.array_equal(g(), g())


@pytest.mark.parametrize("streams", STREAMS)
def test_seed_restarts_every_stream(streams):
    rng = streams(seed=10)
    u, z = rng.uniform((6,)), rng.normal((3,))
    f = sympile.function([], [u, z])
    first = f()
    f()
    rng.seed(10)
    assert all(np.array_equal(a, b) for a, b in zip(first, f()))
    rng.seed(11)
    assert not np.array_equal(first[0], f()[0])
    rng.seed()  # the construction seed
    assert all(np.array_equal(a, b) for a, b in zip(first, f()))


@pytest.mark.parametrize("streams", STREAMS)
def test_same_seed_same_numbers_and_two_calls_two_draws(streams):
    values = [sympile.function([], streams(seed=8).uniform((4,)))() for _ in range(2)]
    assert np.array_equal(*values)
    rng = streams(seed=8)
    a, b = rng.uniform((4,)), rng.uniform((4,))  # two variables: two draws
    first, second = sympile.function([], [a, b])()
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("streams", STREAMS)
def test_functions_sharing_a_stream_and_copies(streams):
    rng = streams(seed=21)
    u = rng.uniform((3,))
    f, g = sympile.function([], u), sympile.function([], u * 1)
    a = f()
    b = g()  # g continues where f left the state
    assert not np.array_equal(a, b)
    rng.seed(21)
    assert np.array_equal(g(), a)
    rng.seed(21)
    copied = f.copy()  # a copy returns a list of outputs, as Theano's
    assert np.array_equal(copied()[0], a) and np.array_equal(f(), b)
    rng.seed(21)
    frozen = f.copy(delete_updates=True)
    assert np.array_equal(frozen()[0], a) and np.array_equal(frozen()[0], a)


@pytest.mark.parametrize("streams", STREAMS)
def test_state_survives_pickling(streams):
    rng = streams(seed=5)
    u = rng.uniform((4,))
    f = sympile.function([], u)
    f()
    state = rng.state_updates[0][0]
    restored = pickle.loads(pickle.dumps(state))
    assert np.array_equal(restored.get_value(), state.get_value())
    expected = f()
    state.set_value(restored.get_value())
    assert np.array_equal(f(), expected)


@pytest.mark.parametrize("streams", STREAMS)
def test_symbolic_size(streams):
    rng = streams(seed=2)
    x = T.dmatrix("x")
    u = rng.uniform(size=x.shape, dtype="float64")
    f = sympile.function([x], x + u)
    assert f(np.zeros((3, 4))).shape == (3, 4) and f(np.zeros((2, 1))).shape == (2, 1)
    n = T.lscalar("n")
    v = rng.normal((n, 2), dtype="float64")
    assert sympile.function([n], v)(5).shape == (5, 2)


def test_dtype_follows_floatx():
    for floatx in ("float32", "float64"):
        with config.change_flags(floatX=floatx):
            for streams in STREAMS:
                rng = streams(seed=1)
                assert rng.uniform((2,)).dtype == floatx
                assert rng.normal((2,)).dtype == floatx
                assert rng.normal((2,), avg=T.dvector()).dtype == "float64"
    assert RandomStreams(seed=1).binomial((3,), p=0.5).dtype == "int64"


@pytest.mark.parametrize("mode", [pytest.param(PYTHON_MODE, id="python"),
                                  pytest.param(C_MODE, id="c", marks=requires_compiler)])
@pytest.mark.parametrize("streams", STREAMS)
def test_scan_draws_a_new_mask_every_step(streams, mode):
    rng = streams(seed=42)
    masks, updates = sympile.scan(lambda: rng.binomial(size=(64,), p=0.5, dtype="int8"),
                                  n_steps=100)
    assert len(updates) == 1
    f = sympile.function([], masks, updates=updates, mode=mode)
    first = f()
    assert first.shape == (100, 64) and len({row.tobytes() for row in first}) == 100
    assert not np.array_equal(first, f())
    rng.seed(42)
    assert np.array_equal(first, f())


@pytest.mark.parametrize("streams", STREAMS)
def test_reparameterised_gradients(streams):
    """normal(avg, std) and uniform(low, high) are differentiable in their parameters; the
    draw stays fixed while verify_grad and verify_rop differentiate."""
    def normal(avg, std):
        return streams(seed=9).normal((4,), avg=avg, std=std, dtype="float64") ** 2

    def uniform(low, high):
        return T.exp(streams(seed=9).uniform((5,), low=low, high=high, dtype="float64"))

    point = [np.array([0.5, -1.0, 2.0, 0.0]), np.array([1.0, 0.3, 2.0, 1.5])]
    verify_grad(normal, point, rng=0)
    verify_rop(normal, point, rng=0)
    verify_grad(uniform, [np.array(-1.0), np.array(2.0)], rng=0)


def test_samples_are_disconnected_from_the_state():
    rng = RandomStreams(seed=1)
    p = T.dscalar("p")
    sample = rng.binomial((3,), n=5, p=p)
    with pytest.raises(Exception, match="disconnected|not part of"):
        T.grad(sample.sum().astype("float64"), p)
    assert T.grad(sample.sum().astype("float64"), p, disconnected_inputs="ignore") is not None


def test_random_draws_are_never_merged_nor_folded():
    rng = RandomStreams(seed=4)
    rng.uniform((3,))
    state, new_state = rng.state_updates[0]
    draw = new_state.owner
    # The same op applied twice to one state: merging would make the two draws one.
    twin = draw.op(*draw.inputs)[1]
    f = sympile.function([], [draw.outputs[1], twin], no_default_updates=True)
    nodes = [node for node in f.maker.fgraph.toposort() if isinstance(node.op, RandomDraw)]
    assert len(nodes) == 2
    constant_state = T.constant(np.array([7, 0], np.uint64))
    folded = RandomDraw("uniform", "float64", 1)(constant_state, [4])[1]
    g = sympile.function([], folded)
    assert any(isinstance(node.op, RandomDraw) for node in g.maker.fgraph.toposort())


def test_unused_draw_kept_for_its_update_costs_an_addition():
    rng = RandomStreams(seed=1)
    rng.normal((10_000,))
    state, new_state = rng.state_updates[0]
    f = sympile.function([], T.constant(1.0), updates=[(state, new_state)])
    assert not any(isinstance(node.op, RandomDraw) for node in f.maker.fgraph.toposort())
    before = state.get_value()
    f()
    assert state.get_value()[1] == before[1] + 1 and state.get_value()[0] == before[0]


@pytest.mark.parametrize("mode", [pytest.param(PYTHON_MODE, id="python"),
                                  pytest.param(C_MODE, id="c", marks=requires_compiler)])
def test_bad_parameters_name_the_method_and_argument(mode):
    rng = RandomStreams(seed=1)
    with pytest.raises(ValueError, match=r"RandomStreams.normal: std must be >= 0"):
        rng.normal((3,), std=-1.0)
    with pytest.raises(ValueError, match=r"RandomStreams.binomial: p must be in \[0, 1\]"):
        rng.binomial((3,), p=1.5)
    with pytest.raises(ValueError, match="RandomStreams.multinomial: each row of pvals"):
        rng.multinomial((2,), n=3, pvals=[0.5, 0.6])
    with pytest.raises(ValueError, match="RandomStreams.choice: p must sum to 1"):
        rng.choice((2,), a=3, p=[0.2, 0.2, 0.2])
    with pytest.raises(ValueError, match="RandomStreams.uniform: size must have no negative"):
        rng.uniform((3, -1))
    with pytest.raises(ValueError, match="MRG_RandomStreams.uniform: size must have positive"):
        MRG_RandomStreams(seed=1).uniform((0, 2))
    # The same checks when the values arrive at run time; the states do not move.
    std, p, n = T.dscalar("std"), T.dscalar("p"), T.lscalar("n")
    size = T.lvector("size")
    pvals = T.dvector("pvals")
    cases = [
        (rng.normal((3,), std=std), std, -1.0, "RandomStreams.normal: std must be >= 0"),
        (rng.binomial((3,), p=p), p, 1.5, r"RandomStreams.binomial: p must be in \[0, 1\]"),
        (rng.binomial((3,), n=n, p=0.5), n, -2, "RandomStreams.binomial: n must be >= 0"),
        (rng.uniform(size, ndim=2), size, np.array([2, -1]),
         "RandomStreams.uniform: size must have no negative entry"),
        (rng.multinomial((2,), n=3, pvals=pvals), pvals, np.array([0.5, 0.6]),
         "RandomStreams.multinomial: each row of pvals must be non-negative and sum to 1"),
        (MRG_RandomStreams(seed=2).binomial((3,), p=p), p, -0.5,
         r"MRG_RandomStreams.binomial: p must be in \[0, 1\]"),
    ]
    for output, variable, bad, message in cases:
        f = sympile.function([variable], output, mode=mode)
        states = [s.get_value() for s, _ in rng.state_updates]
        with pytest.raises(ValueError, match=message):
            f(bad)
        assert all(np.array_equal(s.get_value(), v) for (s, _), v in zip(rng.state_updates,
                                                                           states))
    with pytest.raises(ValueError, match="seed must not be 0"):
        MRG_RandomStreams(seed=0)
    with pytest.raises(ValueError, match="seed must be in"):
        MRG_RandomStreams(seed=2**31)
    with pytest.raises(TypeError, match="seed must be a non-negative int"):
        RandomStreams(seed=-3)
    with pytest.raises(NotImplementedError, match="only n=1"):
        MRG_RandomStreams(seed=1).binomial((3,), n=2)


def test_shuffle_row_elements():
    rng = RandomStreams(seed=6)
    x = T.dmatrix("x")
    f = sympile.function([x], rng.shuffle_row_elements(x))
    value = np.arange(20.0).reshape(4, 5)
    shuffled = f(value)
    assert (np.sort(shuffled, axis=1) == value).all() and not (shuffled == value).all()
    assert (rng.shuffle_row_elements(T.dvector()).type.ndim == 1)


def test_integers_excludes_high():
    rng = RandomStreams(seed=6)
    values = sympile.function([], rng.integers(3, 6, size=(2000,)))()
    assert set(np.unique(values)) == {3, 4, 5}


def test_pytensor_random_stream_argument_order():
    """PyTensor's RandomStream puts the parameters first: normal(loc, scale, size)."""
    from sympile.tensor.random import RandomStream
    rng = RandomStream(seed=12)
    draws = [rng.normal(10.0, 0.1, size=(500,)), rng.uniform(2.0, 3.0, size=(500,)),
             rng.binomial(4, 0.5, size=(7,)), rng.poisson(3.0, size=(5,)),
             rng.choice(5, size=(3,), replace=False), rng.permutation(6),
             rng.permutation(np.array([3.0, 4.0, 5.0])), rng.multinomial(5, [0.5, 0.5]),
             rng.integers(0, 3, size=(4,))]
    normal, uniform, binomial, poisson, choice, permutation, permuted, counts, integers = \
        sympile.function([], draws)()
    assert abs(normal.mean() - 10.0) < 0.05 and 2.0 <= uniform.min() < uniform.max() < 3.0
    assert binomial.shape == (7,) and poisson.shape == (5,) and len(set(choice)) == 3
    assert sorted(permutation) == list(range(6)) and sorted(permuted) == [3.0, 4.0, 5.0]
    assert counts.sum() == 5 and set(integers) <= {0, 1, 2}
