"""Pickling and copy.deepcopy of compiled functions (Theano pickles them; RNN-SLU
deep-copies its model), and misc.pkl_utils.dump/load."""

from __future__ import annotations

import copy
import io
import os
import pickle
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.ifelse import ifelse
from sympile.misc import pkl_utils
from sympile.tensor.shared_randomstreams import RandomStreams
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler

MODES = [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler), "FAST_COMPILE"]


@pytest.mark.parametrize("mode", MODES)
def test_pickled_function_computes_and_updates_its_own_shared_copy(mode):
    x = T.dvector("x")
    w = sympile.shared(np.ones(2), "w")
    f = sympile.function([x], (x * w).sum(), updates=[(w, w + 1)], mode=mode, name="f")
    loaded = pickle.loads(pickle.dumps(f))
    assert loaded.name == "f"
    if mode == "FAST_COMPILE":  # a predefined mode loads as itself
        assert loaded.maker.mode is sympile.compile.get_mode("FAST_COMPILE")
    assert loaded([1.0, 2.0]) == f([1.0, 2.0]) == 3.0
    assert w.get_value().tolist() == [2.0, 2.0]
    assert loaded([1.0, 2.0]) == 6.0  # the loaded function updated its own copy of w
    assert w.get_value().tolist() == [2.0, 2.0]


@pytest.mark.parametrize("mode", MODES)
def test_deepcopy_of_a_model_keeps_functions_and_parameters_together(mode):
    class Model:
        def __init__(self):
            x = T.dvector("x")
            self.w = sympile.shared(np.zeros(2), "w")
            self.step = sympile.function([x], self.w.sum(), updates=[(self.w, self.w + x)],
                                         mode=mode)

    model = Model()
    model.step([1.0, 1.0])
    best = copy.deepcopy(model)
    assert best.w is not model.w and best.w.get_value().tolist() == [1.0, 1.0]
    best.step([5.0, 5.0])
    assert best.w.get_value().tolist() == [6.0, 6.0]  # the copy's function updates the copy
    assert model.w.get_value().tolist() == [1.0, 1.0]


@pytest.mark.parametrize("mode", MODES)
def test_pickle_scan_ifelse_and_random_streams(mode):
    w = sympile.shared(np.array([1.0, 2.0]), "w")
    s = T.dvector("s")
    steps, _ = sympile.scan(lambda a, acc: acc + a * w, sequences=s,
                            outputs_info=T.zeros_like(w))
    c = T.dscalar("c")
    f = sympile.function([c, s], ifelse(c > 0, steps[-1], -steps[-1]), mode=mode)
    f(1.0, [1.0, 2.0])
    loaded = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(loaded(1.0, [1.0, 2.0]), [3.0, 6.0])
    np.testing.assert_array_equal(loaded(-1.0, [1.0, 2.0]), [-3.0, -6.0])
    draws = sympile.function([], RandomStreams(7).normal((3,)), mode=mode)
    same_state = copy.deepcopy(draws)
    np.testing.assert_array_equal(draws(), same_state())
    np.testing.assert_array_equal(draws(), same_state())


@requires_compiler
def test_loaded_in_a_fresh_process_from_the_disk_cache(tmp_path):
    """The second process builds no C: its modules are in the cache the first one filled."""
    x = T.dmatrix("x")
    f = sympile.function([x], T.tanh(x).sum(axis=0) * 3.0 + 1.0, mode=C_MODE)
    path = tmp_path / "f.pkl"
    path.write_bytes(pickle.dumps(f))
    program = textwrap.dedent(f"""
        import pickle, numpy as np
        from sympile.config import config
        config.compiledir = {sympile.config.compiledir!r}
        f = pickle.loads(open({str(path)!r}, "rb").read())
        print(f(np.ones((2, 3))).tolist(), f._vm.build_times["cache_hit"])
    """)
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    values, hit = done.stdout.split("] ")
    np.testing.assert_allclose(eval(values + "]"), np.tanh(np.ones((2, 3))).sum(0) * 3 + 1)
    assert hit.strip() == "True"


def test_pkl_utils_dump_and_load():
    x = T.dvector("x")
    w = sympile.shared(np.arange(3.0), "weights")
    b = sympile.shared(np.zeros(3), "b")
    f = sympile.function([x], x * w + b)
    buffer = io.BytesIO()
    pkl_utils.dump({"params": [w, b], "predict": f, "plain": np.eye(2)}, buffer)
    buffer.seek(0)
    names = zipfile.ZipFile(buffer).namelist()
    assert "pkl" in names and "weights" in names and "b" in names
    with zipfile.ZipFile(buffer).open("weights") as entry:  # numpy reads the arrays alone
        np.testing.assert_array_equal(np.load(io.BytesIO(entry.read())), np.arange(3.0))
    buffer.seek(0)
    loaded = pkl_utils.load(buffer)
    np.testing.assert_array_equal(loaded["plain"], np.eye(2))
    np.testing.assert_array_equal(loaded["predict"]([1.0, 1.0, 1.0]), [0.0, 1.0, 2.0])
    loaded["params"][0].set_value(np.ones(3))
    np.testing.assert_array_equal(loaded["predict"]([1.0, 1.0, 1.0]), [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="pkl_utils.load: not a file written by"):
        pkl_utils.load(io.BytesIO(b"not a zip"))


class _RunsCode:
    """What an attacker's pickle holds: unpickling it calls a function of its choosing."""

    def __reduce__(self):
        return (_record_call, ("ran",))


_CALLS: list[str] = []


def _record_call(value: str) -> str:
    _CALLS.append(value)
    return value


def test_pkl_utils_load_of_the_arrays_alone_runs_no_code():
    buffer = io.BytesIO()
    pkl_utils.dump({"weights": sympile.shared(np.arange(3.0), "weights"), "trap": _RunsCode(),
                    "plain": np.eye(2)}, buffer)
    buffer.seek(0)
    arrays = pkl_utils.load(buffer, allow_pickle=False)
    assert _CALLS == []
    assert sorted(arrays) == ["array_1", "weights"]
    np.testing.assert_array_equal(arrays["weights"], np.arange(3.0))
    np.testing.assert_array_equal(arrays["array_1"], np.eye(2))
    buffer.seek(0)
    assert pkl_utils.load(buffer)["trap"] == "ran" and _CALLS == ["ran"]
