"""Configuration flags, read at compile time.

Set in code (`sympile.config.floatX = "float32"`) or from the environment:
SYMPILE_FLAGS="floatX=float32,mode=FAST_COMPILE".
"""

from __future__ import annotations

import difflib
import os
import shutil
import warnings
from collections.abc import Callable
from typing import Any

from sympile.frames import user_stacklevel


def _float_dtype(value: str) -> str:
    if value not in ("float16", "float32", "float64"):
        raise ValueError(f"config.floatX must be float16, float32 or float64, got {value!r}")
    return value


def _mode_name(value: Any) -> Any:
    return value


def _on_unused(value: str) -> str:
    if value not in ("raise", "warn", "ignore"):
        raise ValueError(f"expected 'raise', 'warn' or 'ignore', got {value!r}")
    return value


def _test_value_mode(value: Any) -> str:
    if value not in ("off", "ignore", "warn", "raise"):
        raise ValueError(f"config.compute_test_value must be 'off', 'ignore', 'warn' or "
                         f"'raise', got {value!r}")
    return value


def _compiler(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _default_compiler() -> str:
    """$CC when it names a runnable compiler (as Python's build tools read it), else the
    first C compiler on PATH (gcc, then cc, then clang), or '' when there is none."""
    chosen = os.environ.get("CC", "").strip()
    if chosen and shutil.which(chosen.split()[0]):
        return chosen.split()[0]
    for name in ("gcc", "cc", "clang"):
        if shutil.which(name):
            return name
    return ""


def _default_compiledir() -> str:
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache_home, "sympile")


def _backend(value: Any) -> str:
    if value not in ("c", "python"):
        raise ValueError(f"config.backend must be 'c' or 'python', got {value!r}")
    return value


def _blas_skinny(value: Any) -> str:
    if value not in ("auto", "avx2", "off"):
        raise ValueError(f"config.blas_skinny must be 'auto', 'avx2' or 'off', got {value!r}")
    return value


# Theano's optimizer names (Mode(optimizer=...), config.optimizer) and the rewrite tags each
# selects; None is no rewrite.
OPTIMIZERS: dict[str, tuple[str, ...] | None] = {
    "fast_run": ("fast_run",), "o4": ("fast_run",), "o3": ("fast_run",), "o2": ("fast_run",),
    "fast_compile": ("fast_compile",), "o1": ("fast_compile",), "merge": ("merge",),
    "stabilize": ("merge", "canonicalize", "stabilize"), "None": None}
# Theano's linker names: 'py' runs perform() (the Python backend), the others compile C
# (config.backend decides, as for FAST_RUN); '_nogc' also frees intermediates after each call.
LINKERS = ("cvm", "vm", "c", "c|py", "cvm_nogc", "vm_nogc", "c|py_nogc", "py")


def optimizer_name(value: Any, who: str = "config.optimizer") -> str:
    """A Theano optimizer name (None is 'None'), else ValueError naming `who`."""
    name = "None" if value is None else str(value)
    if name not in OPTIMIZERS:
        raise ValueError(f"{who} must be one of {', '.join(OPTIMIZERS)}, got {value!r}")
    return name


def linker_name(value: Any, who: str = "config.linker") -> str:
    """A Theano linker name, else ValueError naming `who`."""
    if value not in LINKERS:
        raise ValueError(f"{who} must be one of {', '.join(LINKERS)}, got {value!r}")
    return value


def _exception_verbosity(value: Any) -> str:
    if value not in ("low", "high"):
        raise ValueError(f"config.exception_verbosity must be 'low' or 'high', got {value!r}")
    return value


class GpuUnavailableError(RuntimeError):
    """config.device names a GPU that this machine or environment cannot use."""


def require_cupy(index: int) -> Any:
    """The cupy module, once it is known that GPU `index` exists; else GpuUnavailableError
    saying what to install or set. CuPy is imported here only, never by a plain install."""
    try:
        import cupy
    except ImportError as error:
        raise GpuUnavailableError(
            f"config.device='cuda{index}' needs CuPy ({error}); install it with "
            f"pip install 'sympile[cuda]', or set config.device='cpu'") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CuPy's CUDARuntimeError: no driver, or no device
        raise GpuUnavailableError(
            f"config.device='cuda{index}': CUDA reports no usable GPU ({error}); set "
            f"config.device='cpu'") from None
    if index >= count:
        raise GpuUnavailableError(
            f"config.device='cuda{index}': this machine has {count} GPU(s), cuda0 to "
            f"cuda{count - 1}")
    return cupy


def _device(value: Any) -> str:
    """'cpu', or 'cuda' / 'cudaN' (Theano's names), checked when set: CuPy must import and
    the GPU must exist."""
    if value == "cpu":
        return value
    if not (isinstance(value, str) and value.startswith("cuda")
            and (value == "cuda" or value[4:].isdigit())):
        raise ValueError(f"config.device must be 'cpu', 'cuda' or 'cudaN' (cuda0, cuda1, ...), "
                         f"got {value!r}")
    require_cupy(int(value[4:] or 0))
    return value


def _no_theano_bug(value: Any) -> bool:
    if _boolean(value):
        raise ValueError("this flag asks for warnings about a bug of an old Theano version; "
                         "sympile never had it, so it can only be False")
    return False


def _theano_version(value: Any) -> str:
    text = str(value)
    if text not in ("None", "all") and not all(part.isdigit() for part in text.split(".")):
        raise ValueError(f"expected 'None', 'all' or a Theano version such as '0.9', got "
                         f"{value!r}")
    return text


# Theano's warn.* flags about bugs of its old versions, which Theano programs turn off
# (theano.config.warn.subtensor_merge_bug = False): False is true of sympile; True is
# refused, since there is no such bug to warn about.
_THEANO_BUG_WARNINGS = ("argmax_pushdown_bug", "gpusum_01_011_0111_bug", "sum_sum_bug",
                        "sum_div_dimshuffle_bug", "subtensor_merge_bug", "gpu_set_subtensor1",
                        "vm_gc_bug", "signal_conv2d_interface", "reduce_join",
                        "inc_set_subtensor1", "identify_1pexp_bug")


_NOTED: set[str] = set()


def _note_once(setting: str, why: str) -> None:
    """One warning per process that a Theano setting changes nothing here, and why."""
    if setting not in _NOTED:
        _NOTED.add(setting)
        warnings.warn(f"sympile: {setting} changes nothing: {why}",
                      stacklevel=user_stacklevel())


def _cycle_detection(value: Any) -> str:
    text = str(value)
    if text not in ("regular", "fast"):
        raise ValueError(f"expected 'regular' or 'fast', got {value!r}")
    if text == "fast":
        _note_once("cycle_detection='fast'", "sympile's check of inplace operations is exact "
                   "and incremental (its time grows about linearly with the graph)")
    return text


def _cast_policy(value: Any) -> str:
    text = str(value)
    if text not in ("custom", "numpy+floatX"):
        raise ValueError(f"expected 'custom' or 'numpy+floatX', got {value!r}")
    if text != "custom":
        # 'custom', Theano's default, is what not setting the flag gives.
        _note_once(f"cast_policy={text!r}", "sympile's dtypes for Python numbers are numpy "
                   "2's (NEP 50: a Python number takes the dtype of the tensor it meets, so "
                   "fvector + 1.5 is float32; alone, a Python float takes config.floatX)")
    return text


def _conv_assert_shape(value: Any) -> bool:
    if not _boolean(value):
        _note_once("conv.assert_shape=False", "sympile always checks conv2d's and conv3d's "
                   "shape hints when the function runs")
    return True


def _blas_ldflags(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string of linker flags, got {value!r}")
    if value.strip():
        _note_once(f"blas.ldflags={value!r}", "sympile links no BLAS: it calls the BLAS that "
                   "scipy ships, through scipy's table of its functions")
    return ""


def _tags(value: Any) -> tuple[str, ...]:
    """Theano's colon-separated rewrite tags ('inplace:fusion'), or a sequence of them."""
    tags = value.split(":") if isinstance(value, str) else list(value)
    return tuple(str(tag) for tag in tags if tag)


def _positive_int(value: Any) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(f"expected a positive integer, got {value!r}")
    return number


def _boolean(value: Any) -> bool:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"expected a boolean, got {value!r}")
    return bool(value)


_FLAGS: dict[str, tuple[Any, Callable[[Any], Any], str]] = {
    "floatX": ("float64", _float_dtype, "default dtype of float variables and Python floats"),
    "mode": ("Mode", _mode_name, "default compilation mode of function(): 'Mode' (the "
                                 "rewrites of config.optimizer on config.linker), 'FAST_RUN', "
                                 "'FAST_COMPILE', 'DEBUG_MODE', 'NanGuardMode' or a Mode"),
    "optimizer": ("fast_run", optimizer_name, "rewrites of the default mode: fast_run, "
                                          "fast_compile, merge, stabilize or None"),
    "linker": ("cvm", linker_name, "backend of the default mode: 'py' (Python), or 'cvm', 'c', "
                               "'c|py', 'vm' (C as config.backend says); '_nogc' forms free "
                               "intermediates after each call"),
    **{f"optimizer_{verb}": ((), _tags, f"rewrite tags (colon-separated, as Theano's) that "
                                        f"the default mode {what}")
       for verb, what in (("including", "also runs"), ("excluding", "leaves out"),
                          ("requiring", "requires of every rewrite it runs"))},
    "exception_verbosity": ("low", _exception_verbosity,
                            "'high': run-time errors also print the failing node's graph"),
    "profile": (False, _boolean, "profile every function (function(profile=True)) and print "
                                 "their summaries when Python exits"),
    "device": ("cpu", _device, "where functions run: 'cpu', or 'cuda' / 'cudaN' (a GPU "
                                        "through CuPy: sympile.gpu)"),
    "gpu_graphs": (True, _boolean, "replay a function's device work as a CUDA Graph from its "
                                   "third call (sympile.gpu.graphs); False: launch each kernel "
                                   "from Python at every call"),
    "warn.round": (False, _boolean, "warn when round() is called without a mode (Theano's "
                                    "default changed to numpy's half_to_even)"),
    "warn.ignore_bug_before": ("all", _theano_version,
                               "Theano's: warn about bugs fixed after this version; sympile "
                               "has none of Theano's old bugs, so none is ever reported"),
    **{f"warn.{bug}": (False, _no_theano_bug, "Theano's warning about one of its old bugs, "
                                              "which sympile never had: only False")
       for bug in _THEANO_BUG_WARNINGS},
    "cycle_detection": ("regular", _cycle_detection,
                        "Theano's choice of check for inplace operations: sympile's is always "
                        "exact and incremental ('fast' warns once that it changes nothing)"),
    "cast_policy": ("custom", _cast_policy,
                    "Theano's rule for the dtypes of Python numbers: sympile's is numpy 2's "
                    "(NEP 50) and floatX for a lone Python float, whatever this says "
                    "('numpy+floatX' warns once that it changes nothing)"),
    "blas.ldflags": ("", _blas_ldflags,
                     "Theano's BLAS link flags: sympile calls scipy's BLAS and links none, so "
                     "it is always '' (other values warn once that they change nothing)"),
    "conv.assert_shape": (True, _conv_assert_shape,
                          "Theano's run-time check of conv shape hints: sympile always checks "
                          "them (False warns once that it changes nothing)"),
    "on_unused_input": ("raise", _on_unused, "default of function(on_unused_input=...)"),
    "on_opt_error": ("raise", _on_unused,
                     "what compiling does when a graph rewrite raises on a node: 'raise' it "
                     "(Theano's default was 'warn'), or 'warn' once per failure, or 'ignore', "
                     "and go on without that rewrite there"),
    "compute_test_value": ("off", _test_value_mode,
                           "Theano's test values: 'off', or compute each new variable's "
                           "tag.test_value from its inputs' as the graph is built ('raise', "
                           "'warn' or 'ignore' when an input has none), so that a shape "
                           "error is raised at the line that builds the graph"),
    "print_test_value": (False, _boolean, "repr() of a variable shows its test value, when "
                                          "it has one"),
    "allow_gc": (False, _boolean, "free intermediate results after each call"),
    "backend": ("c", _backend, "backend of FAST_RUN: 'c' (the Python backend, after one "
                               "warning, when there is no C compiler) or 'python'"),
    "cxx": (_default_compiler(), _compiler,
            "C compiler of the C backend ('' : no compiler, use the Python backend)"),
    "compiledir": (_default_compiledir(), str, "where compiled C modules are cached"),
    "cxxflags": ("", str, "extra C compiler flags, space-separated (e.g. -fsanitize=address)"),
    "compile_async": (True, _boolean,
                      "return a new C-backend function at once and run its first calls on the "
                      "Python backend while its C compiles on a background thread, switching "
                      "to the C code between two calls (f.wait_compiled() waits for it)"),
    "compile_progress": (True, _boolean,
                         "show a progress bar on stderr (on a terminal only) while the C of a "
                         "function compiles for more than a second"),
    "openmp": ((os.cpu_count() or 1) > 1, _boolean,
               "run large elementwise loops and reductions on several threads (OpenMP)"),
    "openmp_follow_load": (True, _boolean,
                           "while other processes keep cores busy, run a call's OpenMP loops "
                           "and BLAS splits on the cores left (looked up in /proc/stat at "
                           "most every 0.1 s)"),
    "openmp_elemwise_minsize": (200_000, _positive_int,
                                "fewest elements for which a loop runs on several threads"),
    "blas_parallel_minsize": (500_000, _positive_int,
                              "fewest multiply-adds for which a BLAS call (gemm, gemv, ger, "
                              "dot) may run on several threads"),
    "blas_skinny": ("auto", _blas_skinny,
                    ("products whose result has few rows, or whose inner length is short, "
                     "by sympile's kernels instead of BLAS's gemm: 'auto' (AVX-512 or AVX2, "
                     "as the CPU runs), 'avx2' (never AVX-512), 'off' (always BLAS)")),
}


def _unknown_flag(name: str, source: str | None = None) -> str:
    """The message for a flag that does not exist: the nearest flag's name when there is
    one (floatx -> floatX), else the list."""
    where = f" (in {source})" if source else ""
    folded = {flag.lower(): flag for flag in _FLAGS}
    close = ([folded[name.lower()]] if name.lower() in folded
             else difflib.get_close_matches(name, _FLAGS, n=1, cutoff=0.7))
    if close:
        return f"sympile.config has no flag {name!r}{where}; did you mean {close[0]!r}?"
    return f"sympile.config has no flag {name!r}{where}; flags: {', '.join(_FLAGS)}"


# THEANO_FLAGS' device names (gpu, gpu0: the old backend's) as sympile's.
_THEANO_DEVICES = {"gpu": "cuda", "cuda": "cuda", "cpu": "cpu"}


def theano_flag_pairs(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """THEANO_FLAGS as (flag, value) pairs of the flags sympile has (Theano's names), and
    the names of those it has not (Theano-only flags, and misspellings), ignored."""
    pairs, ignored = [], []
    for item in filter(None, text.split(",")):
        name, _, value = (part.strip() for part in item.partition("="))
        if name == "device":
            kind = value.rstrip("0123456789")
            value = _THEANO_DEVICES.get(kind, kind) + value[len(kind):]
        if name in _FLAGS:
            pairs.append((name, value))
        else:
            ignored.append(name)
    return pairs, ignored


class Config:
    """sympile's flags, one attribute each (`config.floatX`); setting one validates the
    value. `sympile.config` is the one instance, started from SYMPILE_FLAGS (or
    THEANO_FLAGS) when sympile is imported."""

    def __init__(self, environment: str | None = None, source: str = "SYMPILE_FLAGS"):
        object.__setattr__(self, "_values", {name: spec[0] for name, spec in _FLAGS.items()})
        pairs = [tuple(part.strip() for part in item.partition("=")[::2])
                 for item in filter(None, (environment or "").split(","))]
        self._set_all(pairs, source)

    def _set_all(self, pairs: list[tuple[str, str]], source: str) -> None:
        for name, value in pairs:
            if name not in _FLAGS:
                raise AttributeError(_unknown_flag(name, source))
            setattr(self, name, value)

    @classmethod
    def from_environment(cls, environ: Any) -> Config:
        """The flags of SYMPILE_FLAGS; where it is not set, those of THEANO_FLAGS (Theano's
        names and values mapped, Theano-only flags ignored), saying once that it was read."""
        if environ.get("SYMPILE_FLAGS") is not None or not environ.get("THEANO_FLAGS"):
            return cls(environ.get("SYMPILE_FLAGS"))
        text = environ["THEANO_FLAGS"]
        pairs, ignored = theano_flag_pairs(text)
        config = cls()
        config._set_all(pairs, "THEANO_FLAGS")
        note = f"; ignored there (Theano-only): {', '.join(ignored)}" if ignored else ""
        warnings.warn(f"sympile: read THEANO_FLAGS={text!r} (SYMPILE_FLAGS is not set){note}",
                      stacklevel=user_stacklevel())
        return config

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        if any(flag.startswith(name + ".") for flag in values):
            return _Section(self, name)
        raise AttributeError(_unknown_flag(name))

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _FLAGS:
            raise AttributeError(_unknown_flag(name))
        try:
            self._values[name] = _FLAGS[name][1](value)
        except ValueError as error:
            if str(error).startswith("config."):
                raise
            raise ValueError(f"config.{name}: {error}") from None

    def change_flags(self, *pairs: Any, **flags: Any) -> _ChangeFlags:
        """Context manager (and decorator) that sets flags and restores them afterwards:
        keywords, or (as Theano also takes them) a dict or a list of (name, value) pairs,
        whose names may be dotted ('warn.round')."""
        if len(pairs) > 1:
            raise TypeError(f"change_flags: expected one dict or list of pairs, got "
                            f"{len(pairs)} positional arguments")
        given = dict(pairs[0]) if pairs else {}
        return _ChangeFlags(self, {**given, **flags})

    def __dir__(self):
        return list(_FLAGS) + ["change_flags"]

    def __str__(self):
        return "\n".join(f"{name} = {self._values[name]!r}  # {_FLAGS[name][2]}"
                         for name in _FLAGS)


class _Section:
    """Dotted flags (Theano's config.warn.round): config.warn.round reads 'warn.round'."""

    def __init__(self, config: Config, prefix: str):
        object.__setattr__(self, "_config", config)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._config, f"{self._prefix}.{name}")

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._config, f"{self._prefix}.{name}", value)


class _ChangeFlags:
    def __init__(self, config: Config, flags: dict[str, Any]):
        self.config, self.flags, self.saved = config, flags, {}

    def __enter__(self):
        self.saved = {name: getattr(self.config, name) for name in self.flags}
        for name, value in self.flags.items():
            setattr(self.config, name, value)
        return self.config

    def __exit__(self, *exc_info):
        for name, value in self.saved.items():
            setattr(self.config, name, value)

    def __call__(self, function):
        def wrapped(*args, **kwargs):
            with self:
                return function(*args, **kwargs)
        wrapped.__name__ = function.__name__
        wrapped.__doc__ = function.__doc__
        return wrapped


config = Config.from_environment(os.environ)
