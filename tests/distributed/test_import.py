"""sympile.distributed without MPI: importing sympile (and sympile.distributed) never imports
mpi4py; only init() does, with a clear message when it is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import sympile.tensor as T
from sympile import distributed

REPOSITORY = Path(__file__).resolve().parent.parent.parent


def test_import_sympile_does_not_import_mpi4py():
    result = subprocess.run([sys.executable, "-c", "import sys, sympile, sympile.distributed; "
                             "assert 'mpi4py' not in sys.modules, 'imported'"],
                            cwd=REPOSITORY, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_init_without_mpi4py_says_how_to_install_it():
    program = ("import sys; sys.modules['mpi4py'] = None\n"
               "from sympile import distributed\n"
               "try:\n    distributed.init()\n"
               "except ImportError as error:\n    print(error)\n")
    result = subprocess.run([sys.executable, "-c", program], cwd=REPOSITORY,
                            capture_output=True, text=True, timeout=120)
    assert "pip install 'sympile[mpi]'" in result.stdout, result.stdout + result.stderr


def test_a_bucket_needs_tensors_of_one_dtype():
    """Checked where the graph is built, before any rank runs it."""
    with pytest.raises(TypeError, match="one bucket need one dtype, got float32, float64"):
        distributed.all_reduce([T.fvector("a"), T.dvector("b")])
    with pytest.raises(TypeError, match="'mean' needs float tensors"):
        distributed.all_reduce([T.lvector("n")], "mean")
    with pytest.raises(ValueError, match="at least one tensor"):
        distributed.all_reduce([])
