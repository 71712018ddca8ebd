"""The on-disk cache of compiled C: modules, the object files of op units, and the
precompiled unit header.

Layout: `config.compiledir/<platform>-<python tag>/<key>/` holds the source (`module.c`,
`unit.c`, or the header; kept for debugging and error messages), the product (the module's
shared library `<name>-<build id><EXT_SUFFIX>`, a new name at each build, since a process
never loads one path twice; a unit's `unit.o`, the header's `.gch`), `meta.json` (the
key's inputs, the build time, the product's size and sha256) and `lock` (fcntl.flock target).

The key is the sha256 of the source, the kind of entry, the compiler (real path and
`--version` text), the flags, the Python ABI, the numpy version and C-API version, and
FORMAT_VERSION; a module's key also covers the keys of the units it links, a unit's the unit
header. An entry is trusted only when its metadata matches the key and the product's size and
sha256 match the metadata, checked before use (a truncated library would crash the process at
dlopen). A build holds the entry's lock, compiles into a temporary file and renames it into
place, then writes the metadata last, so a reader never sees metadata describing a half-written
product. A module with units is built under its lock: the header first, then its missing
units and its main unit in parallel (one compiler process per core, longest source first),
then one link.

Builds and loads hold a shared lock on the root's `.lock`, clear/verify/prune an exclusive
one: removing entries waits for running builds, so it never takes a header, unit or module
from under one (a running program keeps its mapped libraries). A product that is not a
plausible object file (a "compiler" that succeeds without writing one) is a CompileError,
and a cached library that does not load is removed and rebuilt: no entry that failed to load
stays. Damage (a file where a directory belongs, or the reverse) is removed and rebuilt; a
cache that cannot be written (read-only, not a directory) is replaced, after one warning,
by a private temporary one for the rest of the process.

Another user can plant nothing: sympile.cache.trust's checks refuse a compiledir that anyone
but this user (or root) could write to, and every directory and file is created private
(0700, 0600) and read without following symbolic links.

The prebuilt tier: `sympile/_prebuilt/` in the installed package has the same layout, holding
the fixed units and the unit header compiled when the package was built
(sympile.compile.prebuild, run by setup.py). A module build takes a unit or the header from
it where the cache has no valid entry and the tier has one of the same key (so built by the
same compiler, flags, Python and numpy), under the same checks as the cache's (its
directories and files writable by this user or root only, the product's size and sha256).
It is only read: nothing is written there after the build, and entries it lacks are
compiled into the cache as before.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import secrets
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy

from sympile.cache.progress import CompileProgress
from sympile.cache.trust import (
    UnsafeCacheError,
    check_ancestors,
    check_compiledir,
    check_private_directory,
    check_shared_library,
    is_private_file,
    make_private_directory,
)
from sympile.config import config
from sympile.graph.ccode import resolve_resume_lines

# 3: a module's library has a name of its own per build (meta.json's product_name).
FORMAT_VERSION = 3
META_NAME = "meta.json"
LOCK_NAME = "lock"
ROOT_LOCK_NAME = ".lock"
SOURCE_NAME = "module.c"
UNIT_SOURCE_NAME = "unit.c"
UNIT_OBJECT_NAME = "unit.o"
_STDERR_LIMIT = 4000


class CompileError(RuntimeError):
    """The C compiler rejected a module; the message holds its stderr and the kept source."""


class CompilerDiskFull(CompileError, OSError):
    """The compiler could not write its output: the disk (or the user's quota) is full. An
    OSError with errno ENOSPC, so that load() moves to a private cache as for Python's own
    writes; where the precompiled header alone does not fit, units compile without it."""

    def __init__(self, message: str):
        CompileError.__init__(self, message)
        self.errno = errno.ENOSPC
        self.filename = None
        self.strerror = message


@dataclass(frozen=True)
class Entry:
    """One cache directory as `list_entries` reports it."""
    key: str
    path: str
    size: int
    age_s: float
    valid: bool


# The package's directory, which the #line marks of its C files name (graph.ccode.c_file).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# The prebuilt tier's compiledir (see the docstring); sympile.compile.prebuild fills it.
PREBUILT_DIR = os.path.join(_PACKAGE_DIR, "_prebuilt")


def platform_tag() -> str:
    return f"{sysconfig.get_platform()}-{sys.implementation.cache_tag}"


# config.compiledir -> the private temporary directory used instead, when it is unusable.
_private_dirs: dict[str, str] = {}


def cache_root() -> str:
    """The directory of this platform's and Python's entries (under config.compiledir, or
    under the private temporary cache that replaced it in this process)."""
    base = _private_dirs.get(config.compiledir, config.compiledir)
    return os.path.join(base, platform_tag())


# The compiledirs (real paths) this process has created or checked (sympile.cache.trust).
_secured: set[str] = set()


def _secure_root() -> str:
    """cache_root(), created 0700 where missing, after the checks of sympile.cache.trust on
    the compiledir, the directories above it and the platform directory (once per process
    and compiledir); UnsafeCacheError for one another user could write to."""
    root = cache_root()
    base = os.path.dirname(root)
    if os.path.realpath(base) not in _secured or not os.path.isdir(root):
        os.makedirs(base, mode=0o700, exist_ok=True)
        check_compiledir(base)
        make_private_directory(root)
        _secured.add(os.path.realpath(base))
    return root


def _use_private_cache(reason: str) -> None:
    """Compile into a private temporary cache from now on, after one warning."""
    if config.compiledir in _private_dirs:
        raise CompileError(f"sympile's private compile cache is unusable too: {reason}")
    private = tempfile.mkdtemp(prefix="sympile-cache-")
    warnings.warn(f"sympile: the compile cache {config.compiledir} is unusable ({reason}); "
                  f"this process loads what it holds as it is and compiles the rest into the "
                  f"private temporary cache {private} "
                  f"(set config.compiledir, or SYMPILE_FLAGS=compiledir=..., to a writable "
                  f"directory to keep compiled code between runs)", stacklevel=3)
    _private_dirs[config.compiledir] = private


class _RootLock:
    """A flock on the cache root's lock file: shared while building and loading (any number
    of processes at once), exclusive while removing entries (clear, prune, verify), so that
    removing never takes a header, unit or module from under a build that links it."""

    def __init__(self, exclusive: bool):
        self.exclusive = exclusive
        self.descriptor = -1

    def __enter__(self) -> _RootLock:
        self.descriptor = _open_lock(os.path.join(_secure_root(), ROOT_LOCK_NAME))
        fcntl.flock(self.descriptor, fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH)
        return self

    def __exit__(self, *exc_info) -> None:
        os.close(self.descriptor)


def _repair(error: OSError) -> bool:
    """Remove what damaged the cache where `error` happened: a file where a directory must be
    (an entry or the platform directory replaced by a file), a directory where a file must be
    (meta.json, lock); True if something under config.compiledir was removed."""
    path = getattr(error, "filename", None)
    base = os.path.realpath(_private_dirs.get(config.compiledir, config.compiledir))
    if not isinstance(path, str) or not os.path.realpath(path).startswith(base + os.sep):
        return False
    if isinstance(error, IsADirectoryError) and os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
        return True
    # The nearest existing ancestor that is not a directory.
    current = path
    while os.path.realpath(current).startswith(base + os.sep):
        if os.path.lexists(current) and not os.path.isdir(current):
            os.unlink(current)
            return True
        current = os.path.dirname(current)
    return False


def _open_lock(path: str) -> int:
    """A descriptor of the lock file at `path` (created 0600), never through a symbolic
    link: one found there is removed first."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
    try:
        return os.open(path, flags, 0o600)
    except OSError as error:
        if error.errno != errno.ELOOP:
            raise
    os.unlink(path)
    return os.open(path, flags | os.O_EXCL, 0o600)


def _unusable(error: OSError) -> bool:
    return error.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC)


# The cache root's record of compilers' `--version` texts (compiler_identity).
COMPILERS_NAME = "compilers.json"


@functools.cache
def compiler_identity(cxx: str) -> tuple[str, str]:
    """(real path, `--version` text) of a compiler, once per process and compiler. The text
    is recorded in the cache root with the compiler file's identity (device, inode, size,
    modification and change times), so that a new process does not start the compiler just
    to ask (3-7 ms, a sixth of a warm function()); replacing the compiler changes that
    identity. A wrapper script whose target changes keeps its record until `sympile-cache
    clear`."""
    found = shutil.which(cxx)
    if found is None:
        raise CompileError(f"C compiler {cxx!r} (config.cxx) was not found on PATH")
    path = os.path.realpath(found)
    try:
        info = os.stat(path)
    except OSError:
        info = None
    signature = None if info is None else [info.st_dev, info.st_ino, info.st_size,
                                           info.st_mtime_ns, info.st_ctime_ns]
    records = _compiler_records()
    known = records.get(path)
    if signature is not None and isinstance(known, dict) \
            and known.get("signature") == signature and isinstance(known.get("version"), str):
        return path, known["version"]
    result = subprocess.run([found, "--version"], capture_output=True, text=True)
    version = result.stdout.strip()
    if signature is not None and result.returncode == 0:
        records[path] = {"signature": signature, "version": version}
        try:
            _write_atomic(os.path.join(_secure_root(), COMPILERS_NAME),
                          json.dumps(records).encode())
        except (OSError, UnsafeCacheError):
            pass  # only a shortcut: the next process asks the compiler again
    return path, version


def _compiler_records() -> dict:
    """The cache root's compiler records ({} where it has none this user alone could have
    written)."""
    path = os.path.join(cache_root(), COMPILERS_NAME)
    if not is_private_file(path):
        return {}
    try:
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW)) as stream:
            records = json.load(stream)
    except (OSError, ValueError):
        return {}
    return records if isinstance(records, dict) else {}


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
              "source_sha256": hashlib.sha256(_relocatable(source).encode()).hexdigest(),
              "compiler": path, "compiler_version": version, "flags": list(flags),
              "soabi": sysconfig.get_config_var("SOABI") or sys.implementation.cache_tag,
              "numpy": numpy.__version__, "numpy_c_api": _numpy_c_api_version()}
    if depends:
        inputs["depends"] = list(depends)
    return inputs


def _relocatable(source: str) -> str:
    """`source` as its key sees it: the package's directory in its #line marks replaced by a
    fixed name, so that a unit compiled where the package was built (the prebuilt tier) has
    the key of the same unit generated where it is installed. Those marks only name files
    in the compiler's messages; nothing compiled depends on them."""
    return source.replace(f'"{_PACKAGE_DIR}', '"<sympile>/')


def compute_key(inputs: dict) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:32]


def module_name(key: str) -> str:
    return f"sympile_{key}"


def _new_library_path(directory: str, key: str) -> str:
    """Where a new build of the module `key` goes: a name no earlier build had, because a
    process never loads a path twice (glibc returns the library already mapped from that
    path, and Python the module it made from it), so a rebuilt module must not reuse one."""
    return os.path.join(directory, f"{module_name(key)}-{secrets.token_hex(6)}"
                                   f"{sysconfig.get_config_var('EXT_SUFFIX')}")


def _remove_other_libraries(directory: str, key: str, kept: str) -> None:
    """Remove the earlier builds of module `key` but `kept` (a process that has one mapped
    keeps it: unlinking leaves its mapping)."""
    prefix = module_name(key) + "-"
    for name in os.listdir(directory):
        if name.startswith(prefix) and name != os.path.basename(kept):
            _unlink_quietly(os.path.join(directory, name))


def _product_path(directory: str, key: str, kind: str, source_name: str) -> str:
    """Where a unit's object or the header's precompiled form is (modules: _new_library_path
    when built, the metadata's product_name after)."""
    if kind == "unit":
        return os.path.join(directory, UNIT_OBJECT_NAME)
    return os.path.join(directory, source_name + ".gch")


def _file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_meta(directory: str) -> dict | None:
    try:
        path = os.path.join(directory, META_NAME)
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW)) as stream:
            meta = json.load(stream)
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def entry_is_valid(directory: str, key: str, inputs: dict | None = None) -> bool:
    """True when the metadata matches (the key, and `inputs` when given) and the product's size
    and sha256 are the recorded ones."""
    return valid_product(directory, key, inputs) is not None


def valid_product(directory: str, key: str, inputs: dict | None = None) -> str | None:
    """The path of the entry's product (a module's library, a unit's object, the header's
    precompiled form) when the entry is valid (entry_is_valid), else None."""
    if os.path.islink(directory):
        return None
    meta = _read_meta(directory)
    if meta is None or meta.get("key") != key or meta.get("format") != FORMAT_VERSION:
        return None
    if inputs is not None and meta.get("inputs") != inputs:
        return None
    recorded = meta.get("inputs")
    name = meta.get("product_name")
    # A bare file name of this entry's directory, nothing else.
    if not isinstance(recorded, dict) or not isinstance(name, str) \
            or name != os.path.basename(name) or name in ("", ".", ".."):
        return None
    product = os.path.join(directory, name)
    if not is_private_file(product):
        return None
    try:
        if os.path.getsize(product) != meta.get("library_size"):
            return None
        return product if _file_sha256(product) == meta.get("library_sha256") else None
    except OSError:
        return None


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

    def __enter__(self) -> _EntryLock:
        path = os.path.join(self.directory, LOCK_NAME)
        while True:
            make_private_directory(self.directory)
            try:
                descriptor = _open_lock(path)
            except FileNotFoundError:
                continue
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            try:
                if os.stat(path).st_ino == os.fstat(descriptor).st_ino:
                    self.descriptor = descriptor
                    # Whoever wrote them held this lock and is gone: a compile killed midway.
                    _remove_temporaries(self.directory)
                    return self
            except FileNotFoundError:
                pass
            os.close(descriptor)

    def __exit__(self, *exc_info) -> None:
        os.close(self.descriptor)


def _remove_temporaries(directory: str) -> None:
    """Remove the temporary files (.tmp-*) of an entry's directory: the caller holds the
    entry's lock or the root's exclusively, so no compile is writing them."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.startswith(".tmp-"):
            _unlink_quietly(os.path.join(directory, name))


def _named_module_source(source: str, key: str) -> str:
    """The module's source with its names #defined after the first line (the unit header's
    #include), not on the command line: gcc uses a precompiled header only where the command
    line defines the macros it was built with."""
    name = module_name(key)
    first, newline, rest = source.partition("\n")
    return (f'{first}{newline}#define SYMPILE_PYINIT PyInit_{name}\n'
            f'#define SYMPILE_MODULE_NAME "{name}"\n{rest}')


def _write_source(path: str, source: str) -> None:
    """Write a generated source, its C files' RESUME_LINEs resolved (sympile.graph.ccode)."""
    _write_atomic(path, resolve_resume_lines(source, path).encode())


def _temporary_path(directory: str, suffix: str) -> str:
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=suffix)
    os.close(descriptor)
    return temporary


_FALLBACK = ("to run without C, set sympile.config.backend = 'python' (or "
             "SYMPILE_FLAGS=backend=python); config.cxx and config.cxxflags choose the "
             "compiler and its extra flags")


# What gcc and clang print when a write fails for want of space (strerror(ENOSPC)).
_DISK_FULL = os.strerror(errno.ENOSPC)


def _run_compiler(command: list[str], source_path: str, what: str = "compilation") -> None:
    """Run the compiler; a failure is a CompileError with its (trimmed) output, the command
    and how to do without C."""
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        output = (result.stderr.strip() + "\n" + result.stdout.strip()).strip() \
            or "(the compiler printed nothing)"
        if len(output) > _STDERR_LIMIT:
            output = output[:_STDERR_LIMIT] + "\n[... output trimmed]"
        error = CompilerDiskFull if _DISK_FULL in output else CompileError
        raise error(f"C {what} failed (exit {result.returncode}) with "
                           f"{os.path.basename(command[0])}:\n{output}\n"
                           f"command: {_command_text(command)}\n"
                           f"source kept at {source_path}\n{_FALLBACK}")


def _command_text(command: list[str]) -> str:
    text = " ".join(command)
    return text if len(text) <= 1000 else text[:1000] + " ..."


# What a compiled product starts with, per platform (a compiler that "succeeds" without
# writing one, as `true` does, must not leave an entry that every later run fails to load).
_OBJECT_MAGIC = {"linux": (b"\x7fELF",), "darwin": (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe",
                                                 b"\xca\xfe\xba\xbe")}


def _check_product(path: str, kind: str, command: list[str]) -> None:
    """CompileError unless the compiler wrote a plausible product at `path`."""
    try:
        with open(path, "rb") as stream:
            start = stream.read(4)
    except OSError:
        start = b""
    magic = _OBJECT_MAGIC.get(sys.platform, ()) if kind in ("module", "unit") else ()
    if not start or (magic and not start.startswith(magic)):
        raise CompileError(f"the C compiler reported success but wrote no valid "
                           f"{'shared library' if kind == 'module' else kind} "
                           f"({len(start)}-byte start {start!r})\ncommand: "
                           f"{_command_text(command)}\n{_FALLBACK}")


def _compiler_command(inputs: dict, extra_arguments: tuple[str, ...]) -> list[str]:
    return [inputs["compiler"], *extra_arguments, "-I" + sysconfig.get_paths()["include"],
            "-I" + numpy.get_include()]


def _write_meta(directory: str, key: str, inputs: dict, source_name: str, source: str,
                product: str) -> None:
    """Written last: metadata never describes a half-written product."""
    meta = {"key": key, "format": FORMAT_VERSION, "inputs": inputs, "created": time.time(),
            "source_name": source_name, "source_size": len(source.encode()),
            "product_name": os.path.basename(product),
            "library_size": os.path.getsize(product), "library_sha256": _file_sha256(product)}
    _write_atomic(os.path.join(directory, META_NAME), json.dumps(meta, indent=1).encode())


def _compile(source: str, flags: tuple[str, ...], directory: str, key: str, inputs: dict,
             source_name: str, extra_arguments: tuple[str, ...] = ()) -> str:
    """Compile the entry's product, write its metadata; returns the product's path."""
    kind = inputs["kind"]
    if kind == "module":
        source = _named_module_source(source, key)
    source_path = os.path.join(directory, source_name)
    _write_source(source_path, source)
    _unlink_quietly(os.path.join(directory, META_NAME))
    product = _new_library_path(directory, key) if kind == "module" \
        else _product_path(directory, key, kind, source_name)
    temporary = _temporary_path(directory, os.path.splitext(product)[1])
    kind_flags = {"module": ("-shared",), "unit": ("-c",), "header": ("-x", "c-header")}[kind]
    command = [*_compiler_command(inputs, extra_arguments), *kind_flags, source_path,
               "-o", temporary, *flags]
    try:
        _run_compiler(command, source_path)
        _check_product(temporary, kind, command)
        os.replace(temporary, product)
    finally:
        _unlink_quietly(temporary)
    _write_meta(directory, key, inputs, source_name, source, product)
    if kind == "module":
        _remove_other_libraries(directory, key, product)
    return product


def _entry(source: str, flags: tuple[str, ...], kind: str,
           depends: tuple[str, ...] = ()) -> tuple[str, str, dict]:
    """(key, directory, key inputs) of the entry of (source, flags, kind, depends)."""
    inputs = key_inputs(source, flags, kind, depends)
    key = compute_key(inputs)
    return key, os.path.join(_secure_root(), key), inputs


def _build_entry(source: str, flags: tuple[str, ...], kind: str, source_name: str,
                 depends: tuple[str, ...] = (),
                 extra_arguments: tuple[str, ...] = ()) -> tuple[str, str, bool]:
    """Make sure a valid entry for (source, kind, flags, depends: the keys of the entries it
    is built from) is on disk, compiling it if needed (with `extra_arguments`). Returns (key,
    product path, whether this call ran the compiler)."""
    key, directory, inputs = _entry(source, flags, kind, depends)
    product = valid_product(directory, key, inputs)
    if product is not None:
        return key, product, False
    with _EntryLock(directory):
        product = valid_product(directory, key, inputs)
        if product is not None:
            return key, product, False
        product = _compile(source, flags, directory, key, inputs, source_name,
                           extra_arguments)
    return key, product, True


def _header_kind() -> str:
    """'header' (precompiled) where config.cxx is gcc, which finds a `<header>.gch` by itself;
    'header-text' elsewhere (clang needs other flags: the header is parsed in every unit)."""
    gcc = "Free Software Foundation" in compiler_identity(config.cxx)[1]
    return "header" if gcc else "header-text"


# The cache roots where the precompiled header did not fit: units include its text there.
_header_unfit: set[str] = set()


def _unit_header(header: tuple[str, str], flags: tuple[str, ...], kind: str) -> None:
    """Build the unit header's entry if needed (header: file name, text): the header,
    precompiled where gcc runs; its directory is `cache_root()/<its key>`. Where the
    precompiled header does not fit on the disk (it is about 14 MB), say so once and leave
    its text there for the units to parse."""
    header_name, text = header
    root = cache_root()
    if kind == "header" and root not in _header_unfit:
        try:
            _build_entry(text, flags, kind, header_name)
            return
        except CompilerDiskFull as error:
            _header_unfit.add(root)
            warnings.warn(f"sympile: the precompiled header (about 14 MB) does not fit in "
                          f"{root} ({_DISK_FULL}); its units compile without it, more "
                          f"slowly. Free some space, or set config.compiledir to a "
                          f"directory on another disk. The compiler said: "
                          f"{''.join(str(error).splitlines()[1:2])}", stacklevel=2)
    product = os.path.join(root, compute_key(key_inputs(text, flags, kind)), header_name)
    if not is_private_file(product):
        make_private_directory(os.path.dirname(product))
        _unlink_quietly(product)
        _write_source(product, text)


def build(source: str, flags: tuple[str, ...], units: tuple[str, ...] = (),
          unit_header: tuple[str, str] = ("", ""),
          main_flags: tuple[str, ...] | None = None,
          progress: bool = True) -> tuple[str, str, bool]:
    """Make sure a valid entry for the module (source, flags) linked with `units` (the source
    of each op unit, compiled with `flags`; they include `unit_header`, given as (file name,
    text)) is on disk, compiling what is missing. With units, the module's own source (its
    main unit) is compiled with `main_flags` (default: `flags`), which also link it. A valid
    module entry is used without looking at its units' entries (its key covers their keys).
    progress: show CompileProgress (as config.compile_progress allows) while units compile.

    Returns (key, library path, whether this call ran the compiler).
    """
    if not units:
        return _build_entry(source, flags, "module", SOURCE_NAME)
    main_flags = flags if main_flags is None else main_flags
    header_kind = _header_kind()
    header_key, key, inputs = _module_key(source, flags, units, unit_header, main_flags)
    directory = os.path.join(_secure_root(), key)
    library = valid_product(directory, key, inputs)
    if library is not None:
        return key, library, False
    with _EntryLock(directory):
        library = valid_product(directory, key, inputs)
        if library is not None:
            return key, library, False
        library = _build_module(source, flags, main_flags, units, unit_header, header_kind,
                                header_key, directory, key, inputs, progress)
    return key, library, True


def build_units(units: tuple[str, ...], flags: tuple[str, ...],
                unit_header: tuple[str, str]) -> list[str]:
    """Compile the unit header and `units` (see build) into the cache where it lacks them,
    one compiler process per core, as a module build would compile them, linking nothing:
    the fixed units that sympile.compile.prebuild puts in the prebuilt tier. Returns the
    entries' keys, the header's first."""
    header_kind = _header_kind()
    header_key = compute_key(key_inputs(unit_header[1], flags, header_kind))
    arguments = ("-I" + os.path.join(cache_root(), header_key),)
    with _RootLock(exclusive=False):
        _unit_header(unit_header, flags, header_kind)
        outcomes = _run_in_parallel(
            [functools.partial(_build_entry, unit, flags, "unit", UNIT_SOURCE_NAME,
                               (header_key,), arguments) for unit in units],
            os.cpu_count() or 1)
    for _, error in outcomes:
        if error is not None:
            raise error
    return [header_key, *(result[0] for result, _ in outcomes)]


def _module_key(source: str, flags: tuple[str, ...], units: tuple[str, ...],
                unit_header: tuple[str, str], main_flags: tuple[str, ...]
                ) -> tuple[str, str, dict]:
    """(the unit header's key, the module's key, its key inputs) of a module built from
    `source` and `units` (see build); without units the header key is ''."""
    if not units:
        inputs = key_inputs(source, flags, "module")
        return "", compute_key(inputs), inputs
    header_key = compute_key(key_inputs(unit_header[1], flags, _header_kind()))
    unit_keys = tuple(compute_key(key_inputs(unit, flags, "unit", (header_key,)))
                      for unit in units)
    inputs = key_inputs(source, main_flags, "module", (header_key, *unit_keys))
    return header_key, compute_key(inputs), inputs


def _load_read_only(source: str, flags: tuple[str, ...], units: tuple[str, ...],
                    unit_header: tuple[str, str],
                    main_flags: tuple[str, ...] | None) -> ModuleType | None:
    """The module from a valid entry of config.compiledir itself, read without its locks,
    where that cache cannot be written (a cache prepared once and mounted read-only); None
    when it holds none. The same checks of who could have written it apply."""
    base = config.compiledir
    entry_root = os.path.join(base, platform_tag())
    if not os.path.isdir(entry_root) or os.path.islink(entry_root):
        return None
    check_compiledir(base)
    check_private_directory(entry_root)
    _, key, inputs = _module_key(source, flags, units, unit_header,
                                 flags if main_flags is None else main_flags)
    library = valid_product(os.path.join(entry_root, key), key, inputs)
    if library is None:
        return None
    try:
        return _import_library(key, library)
    except (ImportError, OSError):
        return None


def _prebuilt_root() -> str | None:
    """This platform's directory of the prebuilt tier, where there is one that only this
    user or root could have written (the checks of a compiledir); else None."""
    root = os.path.join(PREBUILT_DIR, platform_tag())
    try:
        check_private_directory(root)
        check_ancestors(root)
    except (OSError, UnsafeCacheError):
        return None
    return root


def _prebuilt_product(key: str, inputs: dict) -> str | None:
    """The product of the prebuilt tier's valid entry `key` (of these key inputs), or None."""
    root = _prebuilt_root()
    if root is None:
        return None
    directory = os.path.join(root, key)
    try:
        check_private_directory(directory)
    except (OSError, UnsafeCacheError):
        return None
    return valid_product(directory, key, inputs)


def _header_directory(unit_header: tuple[str, str], flags: tuple[str, ...], header_kind: str,
                      header_key: str) -> tuple[str, bool]:
    """(the directory units find the unit header in, whether it is the prebuilt tier's): the
    cache's, unless only the prebuilt tier holds the precompiled header (gcc's), with its
    text beside it."""
    directory = os.path.join(cache_root(), header_key)
    if header_kind != "header":
        return directory, False
    inputs = key_inputs(unit_header[1], flags, header_kind)
    if valid_product(directory, header_key, inputs) is not None:
        return directory, False
    product = _prebuilt_product(header_key, inputs)
    if product is None or not is_private_file(os.path.join(os.path.dirname(product),
                                                           unit_header[0])):
        return directory, False
    return os.path.dirname(product), True


def _build_module(source: str, flags: tuple[str, ...], main_flags: tuple[str, ...],
                  units: tuple[str, ...], unit_header: tuple[str, str], header_kind: str,
                  header_key: str, directory: str, key: str, inputs: dict,
                  progress_shown: bool) -> str:
    """Compile what the module needs and link it. Where every unit is on disk (a new
    function of ops compiled before), that is one compiler run: the main unit compiled and
    linked with the units' objects, where two runs would pay the compiler's start twice.
    Else see _compile_and_link. The caller holds the module entry's lock. Returns the
    library's path."""
    header_directory, header_prebuilt = _header_directory(unit_header, flags, header_kind,
                                                          header_key)
    arguments = ("-I" + header_directory,)
    source = _named_module_source(source, key)
    source_path = os.path.join(directory, SOURCE_NAME)
    _write_source(source_path, source)
    _unlink_quietly(os.path.join(directory, META_NAME))
    cached = []
    for unit in units:
        unit_key, unit_directory, unit_inputs = _entry(unit, flags, "unit", (header_key,))
        cached.append(valid_product(unit_directory, unit_key, unit_inputs)
                      or _prebuilt_product(unit_key, unit_inputs))
    linked = _temporary_path(directory, sysconfig.get_config_var("EXT_SUFFIX"))
    try:
        if all(cached):
            if not header_prebuilt:
                _unit_header(unit_header, flags, header_kind)
            _link(source_path, inputs, arguments, [source_path, *cached], linked, main_flags,
                  "compilation")
        else:
            _compile_and_link(source, source_path, flags, main_flags, units, cached,
                              unit_header, None if header_prebuilt else header_kind,
                              header_key, arguments, inputs, linked, progress_shown)
        library = _new_library_path(directory, key)
        os.replace(linked, library)
    finally:
        _unlink_quietly(linked)
    _write_meta(directory, key, inputs, SOURCE_NAME, source, library)
    _remove_other_libraries(directory, key, library)
    return library


def _compile_and_link(source: str, source_path: str, flags: tuple[str, ...],
                      main_flags: tuple[str, ...], units: tuple[str, ...],
                      cached: list[str | None], unit_header: tuple[str, str],
                      header_kind: str | None, header_key: str, arguments: tuple[str, ...],
                      inputs: dict, linked: str, progress_shown: bool) -> None:
    """Compile the module's main unit and the units not `cached` (each unit's object, or
    None) on one compiler process per core, the longest sources first (the header first of
    all: the sources that include it wait for it), then link them all into `linked`.
    header_kind None: the header is the prebuilt tier's, nothing to build."""
    include = f'#include "{unit_header[0]}"'
    main_object = _temporary_path(os.path.dirname(source_path), ".o")

    def compile_main() -> str:
        _run_compiler([*_compiler_command(inputs, arguments), "-c", source_path,
                       "-o", main_object, *main_flags], source_path)
        return main_object

    def compile_unit(unit: str) -> str:
        return _build_entry(unit, flags, "unit", UNIT_SOURCE_NAME, (header_key,),
                            arguments)[1]

    missing = [index for index, product in enumerate(cached) if product is None]
    jobs = [(source, compile_main)]
    jobs += [(units[index], functools.partial(compile_unit, units[index])) for index in missing]
    progress = CompileProgress(len(jobs), enabled=config.compile_progress and progress_shown,
                               where=cache_root())
    header_built = threading.Event()
    header_error: list[BaseException] = []

    def build_header() -> None:
        try:
            if header_kind is not None:
                _unit_header(unit_header, flags, header_kind)
        except BaseException as error:
            header_error.append(error)
            raise
        finally:
            header_built.set()

    def after_header(text: str, job: Callable[[], str]) -> Callable[[], str]:
        def run() -> str:
            if text.startswith(include):
                header_built.wait()
                if header_error:
                    raise header_error[0]
            result = job()
            progress.advance()
            return result
        return run

    try:
        order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i][0]))
        outcomes = _run_in_parallel([build_header] + [after_header(*jobs[i]) for i in order],
                                    os.cpu_count() or 1)
        by_job = dict(zip(order, outcomes[1:]))
        # The first failure in unit order is the one reported, as a serial build would.
        for index in [*range(1, len(jobs)), 0]:
            if by_job[index][1] is not None:
                raise by_job[index][1]
        if outcomes[0][1] is not None:
            raise outcomes[0][1]
        built = {unit: by_job[job][0] for job, unit in enumerate(missing, start=1)}
        objects = [built.get(index, product) for index, product in enumerate(cached)]
        _link(source_path, inputs, (), [main_object, *objects], linked, main_flags)
    finally:
        progress.close()
        _unlink_quietly(main_object)


def _link(source_path: str, inputs: dict, arguments: tuple[str, ...], parts: list[str],
          linked: str, flags: tuple[str, ...], what: str = "link") -> None:
    """Link `parts` (objects, or the main unit's source, compiled on the way: `what` the
    run is, for its error) into the shared library `linked`."""
    link = [*_compiler_command(inputs, arguments), "-shared", *parts, "-o", linked, *flags]
    _run_compiler(link, source_path, what)
    _check_product(linked, "module", link)


def _run_in_parallel(jobs: list[Callable[[], Any]], workers: int
                     ) -> list[tuple[Any, BaseException | None]]:
    """(result, error) of each job, started in list order on `workers` threads; after a
    failure no job is started. Plain threads, not a ThreadPoolExecutor: that refuses new work
    once the interpreter is shutting down, when a background build
    (sympile.link.c.linker.build_in_background) still runs to put its module in the cache."""
    outcomes: list[tuple[Any, BaseException | None]] = [(None, None)] * len(jobs)
    pending = list(range(len(jobs)))
    lock = threading.Lock()
    failed = threading.Event()

    def work() -> None:
        while not failed.is_set():
            with lock:
                if not pending:
                    return
                index = pending.pop(0)
            try:
                outcomes[index] = (jobs[index](), None)
            except BaseException as error:
                outcomes[index] = (None, error)
                failed.set()

    threads = [threading.Thread(target=work, name="sympile-compile-worker")
               for _ in range(min(workers, len(jobs)))]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except BaseException:  # Ctrl-C: the compiles running end, no other starts
        failed.set()
        raise
    return outcomes


_loaded: dict[str, ModuleType] = {}


def _import_library(key: str, library: str) -> ModuleType:
    check_shared_library(library)
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


def _memo_key(source: str, flags: tuple[str, ...], units: tuple[str, ...],
              unit_header: tuple[str, str], main_flags: tuple[str, ...] | None) -> str:
    memo = hashlib.sha256()
    for piece in (config.cxx, *flags, "", *(main_flags or ()), source, *unit_header, *units):
        memo.update(piece.encode() + b"\0")
    return memo.hexdigest()


def is_cached(source: str, flags: tuple[str, ...], units: tuple[str, ...] = (),
              unit_header: tuple[str, str] = ("", ""),
              main_flags: tuple[str, ...] | None = None) -> bool:
    """Whether load() of these arguments would find the module loaded in this process or a
    valid entry for it on disk, compiling nothing (a quick look, without the locks: an entry
    removed meanwhile is compiled again by load)."""
    if _memo_key(source, flags, units, unit_header, main_flags) in _loaded:
        return True
    if config.compiledir in _private_dirs:
        return False
    _, key, inputs = _module_key(source, flags, units, unit_header,
                                 flags if main_flags is None else main_flags)
    try:
        return entry_is_valid(os.path.join(cache_root(), key), key, inputs)
    except OSError:
        return False


def load(source: str, flags: tuple[str, ...], units: tuple[str, ...] = (),
         unit_header: tuple[str, str] = ("", ""),
         main_flags: tuple[str, ...] | None = None, progress: bool = True) -> LoadResult:
    """The module compiled from `source` with `flags` (its main unit with `main_flags`) and
    linked with `units` (see build): from this process's memo, else from a valid cache entry,
    else compiled now (showing CompileProgress where `progress`)."""
    start = time.perf_counter()
    memo_key = _memo_key(source, flags, units, unit_header, main_flags)
    module = _loaded.get(memo_key)
    if module is not None:
        return LoadResult(module, time.perf_counter() - start, 0.0, True)
    for attempt in range(4):
        try:
            if config.compiledir in _private_dirs:
                # What the unusable compiledir holds is loaded from it as it is.
                module = _load_read_only(source, flags, units, unit_header, main_flags)
                if module is not None:
                    built, compiled = time.perf_counter(), False
                    break
            # Held from the build to the import: no entry it uses is removed meanwhile.
            with _RootLock(exclusive=False):
                key, library, compiled = build(source, flags, units, unit_header, main_flags,
                                               progress)
                built = time.perf_counter()
                module = _import_or_discard(key, library, compiled)
            break
        except _Rebuild:
            continue
        except OSError as error:
            if attempt < 3 and _repair(error):
                continue
            if _unusable(error) or isinstance(error, (IsADirectoryError, NotADirectoryError,
                                                      FileExistsError)):
                _use_private_cache(f"{type(error).__name__}: {error}")
                continue
            raise
    else:
        raise CompileError(f"sympile could not build and load a module in {cache_root()}")
    _loaded[memo_key] = module
    return LoadResult(module, built - start, time.perf_counter() - built, not compiled)


class _Rebuild(Exception):
    """A cached library that does not load was removed: build it again."""


def _import_or_discard(key: str, library: str, compiled: bool) -> ModuleType:
    """The library's module; one that does not load is never kept in the cache: a cached one
    is removed (and rebuilt by the caller), a fresh one is a CompileError."""
    try:
        if not is_private_file(library):
            raise ImportError(f"{library} is not a regular file that only this user can write")
        return _import_library(key, library)
    except (ImportError, OSError) as error:
        directory = os.path.dirname(library)
        if os.path.isdir(directory):
            with _EntryLock(directory):
                _unlink_quietly(os.path.join(directory, META_NAME))
        if compiled:
            raise CompileError(f"the C module just compiled at {library} does not load: "
                               f"{error}\n{_FALLBACK}") from None
        raise _Rebuild() from None


def list_entries() -> list[Entry]:
    if not os.path.isdir(cache_root()):
        return []
    root = _secure_root()
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


def _remove(entries: list[Entry]) -> int:
    """Remove `entries` (the caller holds the root lock exclusively, so no build is running);
    processes that loaded a library keep their mapping."""
    for entry in entries:
        shutil.rmtree(entry.path, ignore_errors=True)
    return len(entries)


def clear() -> int:
    """Remove every entry; returns how many. Waits for running builds to finish first."""
    with _RootLock(exclusive=True):
        _unlink_quietly(os.path.join(cache_root(), COMPILERS_NAME))
        return _remove(list_entries())


def verify() -> tuple[int, int]:
    """Check every entry (metadata, product size and sha256) and remove the bad ones;
    returns (entries checked, entries removed)."""
    with _RootLock(exclusive=True):
        entries = list_entries()
        return len(entries), _remove([entry for entry in entries if not entry.valid])


def prune(older_than_s: float | None = None, max_size: int | None = None) -> int:
    """Remove the entries older than `older_than_s` seconds, then the oldest ones until the
    cache holds at most `max_size` bytes; returns how many were removed. The temporary files
    that compiles killed midway left in the others are removed too."""
    with _RootLock(exclusive=True):
        for entry in list_entries():
            _remove_temporaries(entry.path)
        entries = sorted(list_entries(), key=lambda entry: -entry.age_s)
        doomed = [e for e in entries if older_than_s is not None and e.age_s > older_than_s]
        kept = [e for e in entries if e not in doomed]
        size = sum(entry.size for entry in kept)
        for entry in kept:
            if max_size is None or size <= max_size:
                break
            doomed.append(entry)
            size -= entry.size
        return _remove(doomed)
