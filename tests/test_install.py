"""README's quickstart install, `pip install .` into a new virtual environment: it holds the
prebuilt tier (setup.py's sympile.compile.prebuild, run in pip's isolated build environment,
which reaches its numpy only through the PYTHONPATH pip gives it: a venv that has no numpy
yet once made the tier silently absent), and a first function there compiles no fixed unit."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.link.c.utils import requires_compiler

ROOT = Path(__file__).resolve().parent.parent

_FIRST_FUNCTION = """
import os, subprocess, sys
import numpy as np
import sympile, sympile.tensor as T
from sympile.cache import store
sources = []
run = store.subprocess.run
def recording(command, *arguments, **keywords):
    sources.extend(os.path.basename(part) for part in command if part.endswith((".c", ".h")))
    return run(command, *arguments, **keywords)
store.subprocess.run = recording
sympile.config.compile_async = False
x = T.fmatrix("x")
w = sympile.shared(np.ones((3, 2), "float32"))
f = sympile.function([x], T.nnet.softmax(T.dot(x, w)))
assert np.allclose(f(np.ones((4, 3), "float32")), 0.5)
print(sorted(set(sources)))
"""


@pytest.mark.slow
@requires_compiler
def test_a_new_environment_gets_the_prebuilt_tier(tmp_path):
    environment = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(environment)], check=True)
    python = str(environment / "bin" / "python")
    # From a copy: pip builds in the source tree's build/, which the wheel test also uses.
    source = tmp_path / "source"
    shutil.copytree(ROOT / "sympile", source / "sympile",
                    ignore=shutil.ignore_patterns("__pycache__", "_prebuilt"))
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run([python, "-m", "pip", "install", "-q", str(source)], check=True,
                   timeout=1200)
    package = subprocess.run([python, "-c", "import sympile, os; "
                              "print(os.path.dirname(sympile.__file__))"], cwd=tmp_path,
                             capture_output=True, text=True, check=True).stdout.strip()
    assert Path(package).resolve().is_relative_to(environment.resolve()), package
    assert any((Path(package) / "_prebuilt").rglob("*.h.gch"))
    compiled = subprocess.run(
        [python, "-c", _FIRST_FUNCTION], cwd=tmp_path, capture_output=True, text=True,
        env={"PATH": "/usr/bin:/bin", "SYMPILE_FLAGS": f"compiledir={tmp_path / 'cache'}"})
    assert compiled.returncode == 0, compiled.stderr
    # The op units, the main unit: never the header or a fixed unit's own source names.
    assert "sympile_unit.h" not in compiled.stdout, compiled.stdout
