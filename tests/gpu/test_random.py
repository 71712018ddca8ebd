"""RandomStreams on the device: the same numbers as on the CPU for the same seed, call
after call, for uniform, float32 normal and bernoulli draws; the float64 normal stays on the
host (reported). MRG_RandomStreams' uniforms with their states on the device, the CPU's
numbers too."""

import warnings

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gpu import GpuArraySharedVariable, GpuHostOpsWarning
from sympile.gpu.random import GpuMRGUniform, GpuPhiloxDraw
from sympile.gpu.runtime import placement_target
from sympile.sandbox.rng_mrg import MRG_RandomStreams
from sympile.tensor.random import RandomStreams


def _draws(build, context, calls=3):
    """The values of `calls` calls of a function of build(RandomStreams(seed=7))."""
    streams = RandomStreams(seed=7)
    outputs = build(streams)
    if context is None:
        f = sympile.function([], outputs)
    else:
        with placement_target(context), warnings.catch_warnings():
            warnings.simplefilter("error", GpuHostOpsWarning)
            f = sympile.function([], outputs)
        assert any(isinstance(n.op, GpuPhiloxDraw) for n in f.maker.fgraph.apply_nodes)
    return [f() for _ in range(calls)]


@pytest.mark.parametrize("size", [(3, 5), (7,), (0, 4), (2, 3, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_is_the_cpus(dtype, size, context):
    def build(streams):
        return [streams.uniform(size=size, low=-1.0, high=3.0, dtype=dtype),
                streams.uniform(size=size, dtype=dtype)]
    for got, want in zip(_draws(build, context), _draws(build, None)):
        for a, b in zip(got, want):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bernoulli_is_the_cpus(dtype, context):
    # Integer draws of host values stay on the host (placement moves integer work only when
    # it reads device values); their kernels are compiled in test_nvrtc.
    def build(streams):
        return [streams.binomial(size=(4, 9), p=p, dtype=dtype) for p in (0.0, 0.3, 1.0)]
    for got, want in zip(_draws(build, context), _draws(build, None)):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_bad_probability(context):
    p = T.dscalar("p")
    streams = RandomStreams(seed=1)
    with placement_target(context):
        f = sympile.function([p], streams.binomial(size=(3,), p=p, dtype="float32"))
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
        f(1.5)


@pytest.mark.parametrize("size", [(3, 5), (7,), (1,), (0, 4), (1000,)])
def test_float32_normal_is_the_cpus(size, context):
    """Bit for bit: Box-Muller with the CPU's log, sin and cos, every element of a block
    (cosines and sines, an odd count's last pair cut short)."""
    def build(streams):
        return [streams.normal(size=size, dtype="float32"),
                streams.normal(size=size, avg=2.0, std=0.5, dtype="float32")]
    for got, want in zip(_draws(build, context), _draws(build, None)):
        for a, b in zip(got, want):
            assert a.dtype == b.dtype == np.float32
            np.testing.assert_array_equal(a, b)


def test_float64_normal_stays_on_the_host_and_says_so(context):
    streams = RandomStreams(seed=1)
    with placement_target(context), pytest.warns(GpuHostOpsWarning, match="normal"):
        sympile.function([], streams.normal(size=(3,), dtype="float64") * 2)


def _mrg_draws(context, build, calls=4):
    """`calls` calls of a function of build(MRG_RandomStreams(1234)), its streams made inside
    placement_target(context) (on that device) or on the host (context None)."""
    if context is None:
        streams = MRG_RandomStreams(1234)
        f = sympile.function([], build(streams))
    else:
        with placement_target(context):
            streams = MRG_RandomStreams(1234)
            f = sympile.function([], build(streams))
        assert all(isinstance(state, GpuArraySharedVariable)
                   for state, *_ in streams.state_updates)
        assert any(isinstance(n.op, GpuMRGUniform) for n in f.maker.fgraph.apply_nodes)
    return [f() for _ in range(calls)], f


@pytest.mark.parametrize("size, nstreams", [((7, 5), None), ((3,), 8), ((10,), 4), ((1,), None),
                                            ((5, 6), 7)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mrg_uniform_is_the_cpus_with_its_state_on_the_device(size, nstreams, dtype, context):
    """Theano's GPU MRG: each stream's numbers from a thread of its own, the CPU's bits
    (fewer elements than streams, a partial last round, several rounds)."""

    def build(streams):
        return [streams.uniform(size, dtype=dtype, nstreams=nstreams),
                streams.binomial(size, p=0.3, dtype="int8", nstreams=nstreams)]

    want, _ = _mrg_draws(None, build)
    got, f = _mrg_draws(context, build)
    for got_call, want_call in zip(got, want):
        for a, b in zip(got_call, want_call):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
    # Its draws and state updates are replayed with the step (nothing moved per draw).
    assert f._vm.replays == 3 and not f._vm._excluded


@pytest.mark.parametrize("dtype, rtol", [("float32", 4e-7), ("float64", 8e-16)])
def test_mrg_normal_on_the_device(dtype, rtol, context):
    """The normal's Box-Muller runs in the device's elementwise kernels, whose log, sin and
    cos are not the CPU's to the last bit: its uniforms are the CPU's, its values within an
    ulp or two."""
    (got,), _ = _mrg_draws(context, lambda s: [s.normal((6, 5), dtype=dtype)], calls=1)
    (want,), _ = _mrg_draws(None, lambda s: [s.normal((6, 5), dtype=dtype)], calls=1)
    np.testing.assert_allclose(got[0], want[0], rtol=rtol, atol=0)
