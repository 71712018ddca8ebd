"""The on-disk cache of compiled C: modules, the object files of op units, and the
precompiled unit header.

Layout: `config.compiledir/<platform>-<python tag>/<key>/` holds the source (`module.c`,
`unit.c`, or the header; kept for debugging and error messages), the product (the module's
shared library `<name><EXT_SUFFIX>`, a unit's `unit.o`, the header's `.gch`), `meta.json` (the
key's inputs, the build time, the product's size and sha256) and `lock` (fcntl.flock target).

The key is the sha256 of the source, the kind of entry, the compiler (real path and
`--version` text), the flags, the Python ABI, the numpy version and C-API version, and
FORMAT_VERSION; a module's key also covers the keys of the units it links, a unit's the unit
header. An entry is trusted only when its metadata matches the key and the product's size and
sha256 match the metadata, checked before use (a truncated library would crash the process at
dlopen). A build holds the entry's lock, compiles into a temporary file and renames it into
place, then writes the metadata last, so a reader never sees metadata describing a half-written
product. The units a module needs are built in parallel (one compiler process per core).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType

import numpy

from sympile.config import config

FORMAT_VERSION = 2
META_NAME = "meta.json"
LOCK_NAME = "lock"
SOURCE_NAME = "module.c"
UNIT_SOURCE_NAME = "unit.c"
UNIT_OBJECT_NAME = "unit.o"
_STDERR_LIMIT = 4000


class CompileError(RuntimeError):
    """The C compiler rejected a module; the message holds its stderr and the kept source."""


@dataclass(frozen=True)
class Entry:
    """One cache directory as `list_entries` reports it."""
    key: str
    path: str
    size: int
    age_s: float
    valid: bool


def platform_tag() -> str:
    return f"{sysconfig.get_platform()}-{sys.implementation.cache_tag}"


def cache_root() -> str:
    """The directory of this platform's and Python's entries (under config.compiledir)."""
    return os.path.join(config.compiledir, platform_tag())


@functools.lru_cache(maxsize=None)
def compiler_identity(cxx: str) -> tuple[str, str]:
    """(real path, `--version` text) of a compiler; run once per process and compiler."""
    found = shutil.which(cxx)
    if found is None:
        raise CompileError(f"C compiler {cxx!r} (config.cxx) was not found on PATH")
    result = subprocess.run([found, "--version"], capture_output=True, text=True)
    return os.path.realpath(found), result.stdout.strip()


def _numpy_c_api_version() -> str:
    try:
        from numpy._core import _multiarray_umath
    except ImportError:
        from numpy.core import _multiarray_umath
    return str(getattr(_multiarray_umath, "_get_ndarray_c_version", lambda: "")())


def key_inputs(source: str, flags: tuple[str, ...], kind: str = "module",
               depends: tuple[str, ...] = ()) -> dict:
    """Everything a compiled product depends on: the source, the kind of entry ('module',
    'unit' or 'header'), the toolchain, the flags, and the keys of the entries it is built
    from (`depends`)."""
    path, version = compiler_identity(config.cxx)
    inputs = {"format": FORMAT_VERSION, "kind": kind,
              "source_sha256": hashlib.sha256(source.encode()).hexdigest(),
              "compiler": path, "compiler_version": version, "flags": list(flags),
              "soabi": sysconfig.get_config_var("SOABI") or sys.implementation.cache_tag,
              "numpy": numpy.__version__, "numpy_c_api": _numpy_c_api_version()}
    if depends:
        inputs["depends"] = list(depends)
    return inputs


def compute_key(inputs: dict) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:32]


def module_name(key: str) -> str:
    return f"sympile_{key}"


def library_path(directory: str, key: str) -> str:
    return os.path.join(directory, module_name(key) + sysconfig.get_config_var("EXT_SUFFIX"))


def _product_path(directory: str, key: str, kind: str, source_name: str) -> str:
    if kind == "module":
        return library_path(directory, key)
    if kind == "unit":
        return os.path.join(directory, UNIT_OBJECT_NAME)
    return os.path.join(directory, source_name + ".gch")


def _file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_meta(directory: str) -> dict | None:
    try:
        with open(os.path.join(directory, META_NAME)) as stream:
            meta = json.load(stream)
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def entry_is_valid(directory: str, key: str, inputs: dict | None = None) -> bool:
    """True when the metadata matches (the key, and `inputs` when given) and the product's size
    and sha256 are the recorded ones."""
    meta = _read_meta(directory)
    if meta is None or meta.get("key") != key or meta.get("format") != FORMAT_VERSION:
        return False
    if inputs is not None and meta.get("inputs") != inputs:
        return False
    recorded = meta.get("inputs")
    if not isinstance(recorded, dict) or not isinstance(meta.get("source_name"), str):
        return False
    library = _product_path(directory, key, recorded.get("kind"), meta["source_name"])
    try:
        if os.path.getsize(library) != meta.get("library_size"):
            return False
        return _file_sha256(library) == meta.get("library_sha256")
    except OSError:
        return False


def _write_atomic(path: str, data: bytes) -> None:
    descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        _unlink_quietly(temporary)
        raise


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class _EntryLock:
    """An exclusive flock on an entry's lock file, retried when `clear` removed the directory
    between opening and locking (the lock file held must still be the one at its path)."""

    def __init__(self, directory: str):
        self.directory = directory
        self.descriptor = -1

    def __enter__(self) -> "_EntryLock":
        path = os.path.join(self.directory, LOCK_NAME)
        while True:
            os.makedirs(self.directory, exist_ok=True)
            try:
                descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            except FileNotFoundError:
                continue
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            try:
                if os.stat(path).st_ino == os.fstat(descriptor).st_ino:
                    self.descriptor = descriptor
                    return self
            except FileNotFoundError:
                pass
            os.close(descriptor)

    def __exit__(self, *exc_info) -> None:
        os.close(self.descriptor)


def _compile(source: str, flags: tuple[str, ...], directory: str, key: str, inputs: dict,
             source_name: str, extra_arguments: tuple[str, ...] = (),
             objects: tuple[str, ...] = ()) -> None:
    kind = inputs["kind"]
    name = module_name(key)
    if kind == "module":
        # The module's names go into its text after the first line (the unit header's
        # #include), not on the command line: gcc uses a precompiled header only where the
        # command line defines the macros it was built with.
        first, newline, rest = source.partition("\n")
        source = (f'{first}{newline}#define SYMPILE_PYINIT PyInit_{name}\n'
                  f'#define SYMPILE_MODULE_NAME "{name}"\n{rest}')
    source_path = os.path.join(directory, source_name)
    _write_atomic(source_path, source.encode())
    _unlink_quietly(os.path.join(directory, META_NAME))
    product = _product_path(directory, key, kind, source_name)
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-",
                                             suffix=os.path.splitext(product)[1])
    os.close(descriptor)
    kind_flags = {"module": ("-shared",), "unit": ("-c",), "header": ("-x", "c-header")}[kind]
    command = [inputs["compiler"], *extra_arguments, "-I" + sysconfig.get_paths()["include"],
               "-I" + numpy.get_include(), *kind_flags, source_path, "-o", temporary, *flags]
    command += objects
    try:
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            stderr = result.stderr.strip()
            if len(stderr) > _STDERR_LIMIT:
                stderr = stderr[:_STDERR_LIMIT] + "\n[... stderr trimmed]"
            raise CompileError(f"C compilation failed (exit {result.returncode}) with "
                               f"{os.path.basename(inputs['compiler'])}:\n{stderr}\n"
                               f"source kept at {source_path}")
        os.replace(temporary, product)
    finally:
        _unlink_quietly(temporary)
    meta = {"key": key, "format": FORMAT_VERSION, "inputs": inputs, "created": time.time(),
            "source_name": source_name, "source_size": len(source.encode()),
            "library_size": os.path.getsize(product), "library_sha256": _file_sha256(product)}
    _write_atomic(os.path.join(directory, META_NAME), json.dumps(meta, indent=1).encode())


def _build_entry(source: str, flags: tuple[str, ...], kind: str, source_name: str,
                 depends: tuple[str, ...] = (), extra_arguments: tuple[str, ...] = (),
                 objects: tuple[str, ...] = ()) -> tuple[str, str, bool]:
    """Make sure a valid entry for (source, kind, flags, depends: the keys of the entries it
    is built from) is on disk, compiling it if needed (with `extra_arguments`, linking
    `objects`). Returns (key, product path, whether this call ran the compiler)."""
    inputs = key_inputs(source, flags, kind, depends)
    key = compute_key(inputs)
    directory = os.path.join(cache_root(), key)
    product = _product_path(directory, key, kind, source_name)
    if entry_is_valid(directory, key, inputs):
        return key, product, False
    with _EntryLock(directory):
        if entry_is_valid(directory, key, inputs):
            return key, product, False
        _compile(source, flags, directory, key, inputs, source_name, extra_arguments, objects)
    return key, product, True


def _header_kind() -> str:
    """'header' (precompiled) where config.cxx is gcc, which finds a `<header>.gch` by itself;
    'header-text' elsewhere (clang needs other flags: the header is parsed in every unit)."""
    gcc = "Free Software Foundation" in compiler_identity(config.cxx)[1]
    return "header" if gcc else "header-text"


def _unit_header(header: tuple[str, str], flags: tuple[str, ...]) -> str:
    """The directory of the unit header's entry (header: file name, text), built if needed:
    the header, precompiled where gcc runs."""
    header_name, text = header
    kind = _header_kind()
    if kind == "header":
        return os.path.dirname(_build_entry(text, flags, kind, header_name)[1])
    product = os.path.join(cache_root(), compute_key(key_inputs(text, flags, kind)), header_name)
    if not os.path.exists(product):
        os.makedirs(os.path.dirname(product), exist_ok=True)
        _write_atomic(product, text.encode())
    return os.path.dirname(product)


def build(source: str, flags: tuple[str, ...], units: tuple[str, ...] = (),
          unit_header: tuple[str, str] = ("", "")) -> tuple[str, str, bool]:
    """Make sure a valid entry for the module (source, flags) linked with `units` (the source
    of each op unit, compiled with the same flags; they include `unit_header`, given as (file
    name, text)) is on disk, compiling what is missing, the units in parallel. A valid module
    entry is used without looking at its units' entries (its key covers their keys).

    Returns (key, library path, whether this call ran the compiler).
    """
    if not units:
        return _build_entry(source, flags, "module", SOURCE_NAME)
    header_key = compute_key(key_inputs(unit_header[1], flags, _header_kind()))
    unit_keys = tuple(compute_key(key_inputs(unit, flags, "unit", (header_key,)))
                      for unit in units)
    depends = (header_key, *unit_keys)
    inputs = key_inputs(source, flags, "module", depends)
    key = compute_key(inputs)
    directory = os.path.join(cache_root(), key)
    if entry_is_valid(directory, key, inputs):
        return key, library_path(directory, key), False
    arguments = ("-I" + _unit_header(unit_header, flags),)
    workers = min(len(units), os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(
            lambda unit: _build_entry(unit, flags, "unit", UNIT_SOURCE_NAME, (header_key,),
                                      arguments), units))
    key, library, ran = _build_entry(source, flags, "module", SOURCE_NAME, depends, arguments,
                                     tuple(path for _, path, _ in results))
    return key, library, ran or any(compiled for _, _, compiled in results)


_loaded: dict[str, ModuleType] = {}


def _import_library(key: str, library: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(module_name(key), library)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class LoadResult:
    module: ModuleType
    compile_s: float
    load_s: float
    cache_hit: bool


def load(source: str, flags: tuple[str, ...], units: tuple[str, ...] = (),
         unit_header: tuple[str, str] = ("", "")) -> LoadResult:
    """The module compiled from `source` with `flags` and linked with `units` (see build):
    from this process's memo, else from a valid cache entry, else compiled now."""
    start = time.perf_counter()
    memo = hashlib.sha256()
    for piece in (config.cxx, *flags, source, *unit_header, *units):
        memo.update(piece.encode() + b"\0")
    memo_key = memo.hexdigest()
    module = _loaded.get(memo_key)
    if module is not None:
        return LoadResult(module, time.perf_counter() - start, 0.0, True)
    key, library, compiled = build(source, flags, units, unit_header)
    built = time.perf_counter()
    try:
        module = _import_library(key, library)
    except ImportError:
        if os.path.exists(library):
            raise
        # Another process's `clear` removed the entry between the check and dlopen.
        key, library, compiled = build(source, flags, units, unit_header)
        built = time.perf_counter()
        module = _import_library(key, library)
    _loaded[memo_key] = module
    return LoadResult(module, built - start, time.perf_counter() - built, not compiled)


def list_entries() -> list[Entry]:
    root = cache_root()
    try:
        names = sorted(os.listdir(root))
    except FileNotFoundError:
        return []
    entries = []
    now = time.time()
    for name in names:
        directory = os.path.join(root, name)
        if not os.path.isdir(directory):
            continue
        size = 0
        for file_name in os.listdir(directory):
            try:
                size += os.path.getsize(os.path.join(directory, file_name))
            except OSError:
                pass
        meta = _read_meta(directory) or {}
        created = meta.get("created")
        if not isinstance(created, (int, float)):
            created = os.path.getmtime(directory)
        entries.append(Entry(name, directory, size, now - created,
                             entry_is_valid(directory, name)))
    return entries


def total_size() -> int:
    return sum(entry.size for entry in list_entries())


def clear() -> int:
    """Remove every entry; returns how many. Each entry is removed while holding its lock, so a
    process building it finishes first; processes that loaded a library keep their mapping."""
    removed = 0
    for entry in list_entries():
        with _EntryLock(entry.path):
            shutil.rmtree(entry.path, ignore_errors=True)
        removed += 1
    return removed
