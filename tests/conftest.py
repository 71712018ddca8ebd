import fcntl
import os
import tempfile

import pytest
from hypothesis import HealthCheck, settings

from sympile.config import config

# FAST_RUN compiles C by default; the suite runs it on the Python backend (a gcc call per
# function would dominate its time) and the C tests choose the C backend explicitly.
# SYMPILE_TEST_BACKEND=c runs everything on C.
config.backend = os.environ.get("SYMPILE_TEST_BACKEND", "python")

# C-backend tests check the C code's results: their functions compile before they return
# (tests/test_compile_async.py turns the background compile on where it tests it).
config.compile_async = False

# The suite compiles into a cache of its own, never the user's (kept between runs, so a second
# run finds its modules compiled); SYMPILE_TEST_COMPILEDIR chooses another.
config.compiledir = os.environ.get("SYMPILE_TEST_COMPILEDIR") or os.path.join(
    tempfile.gettempdir(), f"sympile-tests-{os.getuid()}")
# Python processes the tests start (examples, concurrency tests) use it too.
os.environ["SYMPILE_FLAGS"] = ",".join(
    filter(None, [os.environ.get("SYMPILE_FLAGS", ""), f"compiledir={config.compiledir}",
                  "compile_async=False"]))

# No example database: a local run replays nothing a previous run found, so it passes or
# fails as CI's (which starts without one) would; a failure prints the blob that
# reproduces it (@reproduce_failure), and the case is then kept as a fixed test.
settings.register_profile(
    "default", deadline=None, max_examples=40, database=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=60)
settings.load_profile(os.environ.get("SYMPILE_HYPOTHESIS_PROFILE", "default"))


# The suite runs on one pytest-xdist worker per core (pyproject's addopts). Tests marked
# `alone` measure the machine's load (the thread governor's), which another worker's test
# would be: each takes the work lock exclusively, every other test takes it shared (also
# across concurrent runs of the suite by one user). The gate keeps an `alone` test that waits
# from being overtaken by the tests that start after it.
_LOCKS = os.path.join(tempfile.gettempdir(), f"sympile-tests-{os.getuid()}")


def _lock(name: str, mode: int) -> int:
    descriptor = os.open(f"{_LOCKS}.{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, mode)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _unlock(descriptor: int) -> None:
    fcntl.flock(descriptor, fcntl.LOCK_UN)
    os.close(descriptor)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    mode = fcntl.LOCK_EX if item.get_closest_marker("alone") else fcntl.LOCK_SH
    gate = _lock("gate", mode)
    try:
        work = _lock("work", mode)
    except BaseException:
        _unlock(gate)
        raise
    if mode == fcntl.LOCK_SH:
        _unlock(gate)
    try:
        yield
    finally:
        _unlock(work)
        if mode == fcntl.LOCK_EX:
            _unlock(gate)
