"""PROVISIONAL compiler driver (the lead's stand-in until the cache helper's version lands;
helper-22 owns this file and replaces it whole)."""
import hashlib, importlib.util, os, shutil, subprocess, sysconfig, tempfile, time

import numpy

from sympile.config import config


class CompileError(RuntimeError):
    pass


def compiler_available() -> bool:
    return bool(config.cxx) and shutil.which(config.cxx) is not None


def load_module(source, openmp=False, extra_flags=()):
    flags = ["-O2", "-fPIC", "-shared", "-fwrapv"] + (["-fopenmp"] if openmp else []) + list(extra_flags)
    key = hashlib.sha256((source + str(flags)).encode()).hexdigest()[:20]
    name = f"sympile_{key}"
    directory = os.path.join(tempfile.gettempdir(), "sympile_provisional", key)
    os.makedirs(directory, exist_ok=True)
    so = os.path.join(directory, name + sysconfig.get_config_var("EXT_SUFFIX"))
    start = time.perf_counter()
    if not os.path.exists(so):
        c = os.path.join(directory, "module.c")
        with open(c, "w") as f:
            f.write(source)
        command = [config.cxx, "-I" + sysconfig.get_paths()["include"], "-I" + numpy.get_include(),
                   f"-DSYMPILE_PYINIT=PyInit_{name}", f'-DSYMPILE_MODULE_NAME="{name}"', c,
                   "-o", so + ".tmp"] + flags
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode:
            raise CompileError(result.stderr[:5000] + f"\nsource: {c}")
        os.replace(so + ".tmp", so)
    spec = importlib.util.spec_from_file_location(name, so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.__sympile_build__ = {"compile_s": time.perf_counter() - start, "cache_hit": False}
    return module
