"""sympile.distributed without MPI: importing sympile (and sympile.distributed) never imports
mpi4py; only init() does, with a clear message when it is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
