"""Every file that sympile's code, its C and its documentation name exists: prose that points
a reader at `nnet_c.py` or `blas.c` after they were renamed sends them looking for nothing.

A name is a path ending in a source or document extension (`tensor/basic/ops.py`, `blas_*.c`
is a pattern and is not one). It exists when it is a path relative to the file that names it,
a path from the repository's root, or the end of one (a bare `ops.py` is any file of that
name). The names below are not files of this repository, each for the reason given.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"(?<![\w/.*<>-])((?:\.\./|[\w.-]+/)*[\w-]+"
                  r"\.(?:py|c|h|cu|md|rst|toml|txt|json))\b")

SYSTEM_HEADERS = {"Python.h", "structmember.h", "numpy/arrayobject.h", "math.h", "stdint.h",
                  "stdio.h", "stdlib.h", "string.h", "time.h", "unistd.h", "sched.h",
                  "sys/resource.h", "dlfcn.h", "immintrin.h", "omp.h", "mpi.h"}
NOT_IN_THE_REPOSITORY = {
    **{header: "a header of the C compiler, Python, numpy, OpenMP or MPI"
       for header in SYSTEM_HEADERS},
    "module.c": "a cache entry's files, written at run time (sympile/cache/store.py)",
    "unit.c": "a cache entry's files, written at run time (sympile/cache/store.py)",
    "meta.json": "a cache entry's files, written at run time (sympile/cache/store.py)",
    "compilers.json": "the cache root's record of compilers, written at run time "
                      "(sympile/cache/store.py)",
    "sympile_unit.h": "the unit header the C backend writes into the cache",
    "sympile-bench.json": "the file the benchmarks write their figures to",
    "sympile-bench-gpu.json": "the file the GPU benchmarks write their figures to",
    "arguments.json": "written by the benchmarks for each workload's process",
    "train.py": "the user's own script in an example command line",
    "my_kernel.c": "the new C file of architecture.md's worked example",
    "tensor/elemwise/elemwise_cuda.py": "where the GPU's kernels will go (architecture.md)",
    "tensor/reduction/careduce.cu": "where the GPU's kernels will go (architecture.md)",
}


def _files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True, check=True)
    return [name for name in listed.stdout.split() if (ROOT / name).exists()]


def _exists(name: str, named_in: str, files: set[str], basenames: set[str]) -> bool:
    if (ROOT / named_in).parent.joinpath(name).resolve().exists() or (ROOT / name).exists():
        return True
    if "/" not in name:
        return name in basenames
    return any(path.endswith("/" + name) for path in files)


def _missing_names(texts: dict[str, str]) -> dict[str, set[str]]:
    files = set(_files())
    basenames = {Path(path).name for path in files}
    missing: dict[str, set[str]] = {}
    for path, text in texts.items():
        for match in NAME.finditer(text):
            name = match.group(1)
            if name in NOT_IN_THE_REPOSITORY or name.startswith("theano/"):
                continue
            if not _exists(name, path, files, basenames):
                missing.setdefault(name, set()).add(path)
    return missing


def test_every_file_named_in_sympile_and_the_docs_exists():
    texts = {path: (ROOT / path).read_text(errors="replace") for path in _files()
             if path.startswith(("sympile/", "docs/")) or path == "README.md"
             if path.endswith((".py", ".c", ".h", ".md", ".rst"))}
    missing = _missing_names(texts)
    assert not missing, "\n".join(f"{name}: named in {', '.join(sorted(where))}"
                                  for name, where in sorted(missing.items()))


def test_the_check_finds_a_stale_name():
    missing = _missing_names({"sympile/tensor/nnet/basic.py": "C in nnet_c.py and basic_c.py; "
                                                             "see ../nnet/rows_c.py"})
    assert missing == {"nnet_c.py": {"sympile/tensor/nnet/basic.py"}}
