"""No other local user can plant code in the compile cache (sympile.cache.trust): a compiledir
others can write to is refused, what sympile creates is private, and no symbolic link in the
cache is followed."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from sympile.cache import store
from sympile.cache.trust import UnsafeCacheError, check_shared_library
from sympile.config import config
from sympile.link.c import cmodule
from tests.link.c.test_cache import module_source
from tests.link.c.utils import requires_compiler

pytestmark = requires_compiler

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user "
                                                       "takes root")


def build_in(compiledir, source: str | None = None):
    with config.change_flags(compiledir=str(compiledir)):
        return store.build(source or module_source(1), cmodule.compile_flags())


def load_in(compiledir, source: str):
    with config.change_flags(compiledir=str(compiledir)):
        return store.load(source, cmodule.compile_flags()).module


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.mark.parametrize("bits", [0o777, 0o770, 0o1777])
def test_a_compiledir_others_can_write_to_is_refused(tmp_path, bits):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(bits)
    with pytest.raises(UnsafeCacheError, match=rf"{shared} is writable by other users "
                                               rf"\(mode {bits:o}\).*chmod 700 {shared}"):
        build_in(shared)
    assert os.listdir(shared) == []


def test_a_directory_above_it_others_can_write_to_is_refused_unless_sticky(tmp_path):
    open_parent = tmp_path / "open"
    open_parent.mkdir()
    open_parent.chmod(0o777)
    with pytest.raises(UnsafeCacheError, match=rf"inside {open_parent}, which other users can "
                                               rf"write to \(mode 777, not sticky\)"):
        build_in(open_parent / "cache")
    sticky_parent = tmp_path / "sticky"
    sticky_parent.mkdir()
    sticky_parent.chmod(0o1777)
    key, library, compiled = build_in(sticky_parent / "cache")
    assert compiled and os.path.isfile(library)


def _directory_of_another_user(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, 12345, 12345)
    return theirs


@as_root
def test_a_compiledir_of_another_user_is_refused(tmp_path):
    theirs = _directory_of_another_user(tmp_path)
    with pytest.raises(UnsafeCacheError, match=rf"{theirs} belongs to uid 12345"):
        build_in(theirs)


@as_root
def test_a_cache_inside_another_users_directory_is_refused(tmp_path):
    theirs = _directory_of_another_user(tmp_path)
    with pytest.raises(UnsafeCacheError, match=rf"inside {theirs}, which belongs to uid 12345"):
        build_in(theirs / "cache")


def test_a_compiledir_that_links_to_a_private_directory_is_used(tmp_path):
    """The user's own link (a cache on another disk): its target is what is checked."""
    target = tmp_path / "disk"
    target.mkdir(mode=0o700)
    os.symlink(target, tmp_path / "cache")
    key, library, compiled = build_in(tmp_path / "cache")
    assert compiled and os.path.islink(tmp_path / "cache")
    assert os.path.realpath(library).startswith(str(target))
    target.chmod(0o777)
    store._secured.clear()
    with pytest.raises(UnsafeCacheError, match=rf"{target} is writable by other users"):
        build_in(tmp_path / "cache")


def test_a_symlinked_platform_directory_is_replaced_not_followed(tmp_path):
    compiledir = tmp_path / "cache"
    key, library, _ = build_in(compiledir)
    platform = os.path.dirname(os.path.dirname(library))
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(platform, elsewhere, symlinks=True)
    shutil.rmtree(platform)
    os.symlink(elsewhere, platform)
    store._secured.clear()
    assert build_in(compiledir)[2] is True
    assert not os.path.islink(platform) and mode(platform) == 0o700
    assert os.listdir(elsewhere) == [os.path.basename(os.path.dirname(library))]


def test_what_the_cache_creates_is_private(tmp_path):
    compiledir = tmp_path / "new" / "cache"
    source = module_source(1)
    assert load_in(compiledir, source).Program == 1
    with config.change_flags(compiledir=str(compiledir)):
        key, library, _ = store.build(source, cmodule.compile_flags())
    entry = os.path.dirname(library)
    for directory in (compiledir, os.path.dirname(entry), entry):
        assert mode(directory) == 0o700, directory
    for name in ("meta.json", "module.c", "lock"):
        assert mode(os.path.join(entry, name)) == 0o600, name
    assert not mode(library) & 0o022
    assert mode(os.path.join(os.path.dirname(entry), ".lock")) == 0o600


def test_a_library_replaced_by_a_symlink_is_never_loaded(tmp_path):
    compiledir = tmp_path / "cache"
    source = module_source(7)
    key, library, _ = build_in(compiledir, source)
    # Another module, planted where the link points.
    planted = tmp_path / "planted"
    planted.mkdir()
    _, other_library, _ = build_in(planted, module_source(666))
    os.unlink(library)
    os.symlink(other_library, library)
    # Its size and hash recorded too, as whoever could write the directory could do.
    meta_path = os.path.join(os.path.dirname(library), "meta.json")
    meta = json.loads(open(meta_path).read())
    meta["library_size"] = os.path.getsize(other_library)
    meta["library_sha256"] = hashlib.sha256(open(other_library, "rb").read()).hexdigest()
    open(meta_path, "w").write(json.dumps(meta))
    key, library, compiled = build_in(compiledir, source)
    assert compiled and not os.path.islink(library)
    assert os.path.islink(other_library) is False and os.path.getsize(other_library) > 0
    assert load_in(compiledir, source).Program == 7


def test_a_lock_replaced_by_a_symlink_creates_nothing_where_it_points(tmp_path):
    compiledir = tmp_path / "cache"
    source = module_source(3)
    key, library, _ = build_in(compiledir, source)
    entry = os.path.dirname(library)
    target = tmp_path / "victim-file"
    os.unlink(os.path.join(entry, "lock"))
    os.symlink(target, os.path.join(entry, "lock"))
    os.unlink(os.path.join(entry, "meta.json"))  # forces a rebuild under the entry's lock
    assert build_in(compiledir, source)[2] is True
    assert not target.exists()
    assert stat.S_ISREG(os.lstat(os.path.join(entry, "lock")).st_mode)


def test_a_symlinked_entry_directory_is_replaced_not_followed(tmp_path):
    compiledir = tmp_path / "cache"
    source = module_source(5)
    key, library, _ = build_in(compiledir, source)
    entry = os.path.dirname(library)
    outside = tmp_path / "outside"
    shutil.copytree(entry, outside)
    shutil.rmtree(entry)
    os.symlink(outside, entry)
    assert build_in(compiledir, source)[2] is True
    assert not os.path.islink(entry) and mode(entry) == 0o700
    # The same files, the library under the new name of its new build.
    rebuilt = sorted(os.listdir(entry))
    assert sorted(os.listdir(outside)) == sorted(
        os.path.basename(library) if name.endswith(".so") else name for name in rebuilt)
    assert os.path.basename(library) not in rebuilt


def test_temporaries_of_a_killed_compile_are_removed(tmp_path):
    """A compile killed midway leaves .tmp-* files: the next compile of the entry and prune
    remove them."""
    compiledir = tmp_path / "cache"
    source = module_source(9)
    key, library, _ = build_in(compiledir, source)
    entry = os.path.dirname(library)
    other_key, other_library, _ = build_in(compiledir)
    other = os.path.dirname(other_library)
    for directory in (entry, other):
        (Path(directory) / ".tmp-killed.o").write_bytes(b"\x7fELF half")
    os.unlink(os.path.join(entry, "meta.json"))
    assert build_in(compiledir, source)[2] is True
    assert not [name for name in os.listdir(entry) if name.startswith(".tmp-")]
    with config.change_flags(compiledir=str(compiledir)):
        assert store.prune() == 0
    assert not [name for name in os.listdir(other) if name.startswith(".tmp-")]
    assert os.path.isfile(other_library)


def test_a_read_only_cache_serves_what_it_holds(tmp_path, monkeypatch):
    """A cache prepared once and mounted read-only: its modules load as they are, without
    locks; what it lacks compiles into a private cache, after one warning."""
    compiledir = tmp_path / "cache"
    held = module_source(11)
    build_in(compiledir, held)
    monkeypatch.setattr(store, "_private_dirs", {})
    monkeypatch.setattr(store, "_loaded", {})
    original = os.open

    def read_only(path, flags, *args, **kwargs):
        if str(path).startswith(str(compiledir)) \
                and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return original(path, flags, *args, **kwargs)

    monkeypatch.setattr(store.os, "open", read_only)
    entry = os.path.dirname(build_in(compiledir, held)[1])
    before = sorted(os.listdir(entry))
    with config.change_flags(compiledir=str(compiledir)):
        with pytest.warns(UserWarning, match="loads what it holds as it is"):
            result = store.load(held, cmodule.compile_flags())
        assert result.module.Program == 11 and result.cache_hit
        fresh = store.load(module_source(12), cmodule.compile_flags())
        assert fresh.module.Program == 12 and not fresh.cache_hit
        assert not str(fresh.module.__file__).startswith(str(compiledir))
    assert sorted(os.listdir(entry)) == before


def test_a_truncated_library_with_a_matching_record_is_rebuilt_not_loaded(tmp_path):
    """dlopen maps a library without reading it whole: a truncated one, its size and hash
    recorded to match, would fault (SIGBUS) at first use. It is checked before loading and
    rebuilt (in a fresh process, where nothing of it is loaded yet)."""
    compiledir = tmp_path / "cache"
    source = module_source(11)
    _, library, _ = build_in(compiledir, source)
    data = open(library, "rb").read()
    with open(library, "wb") as stream:
        stream.write(data[:len(data) // 2])
    meta_path = os.path.join(os.path.dirname(library), "meta.json")
    meta = json.loads(open(meta_path).read())
    meta["library_size"] = len(data) // 2
    meta["library_sha256"] = hashlib.sha256(data[:len(data) // 2]).hexdigest()
    open(meta_path, "w").write(json.dumps(meta))
    with pytest.raises(ImportError, match="truncated"):
        check_shared_library(library)
    (tmp_path / "source.c").write_text(source)
    script = (f"import sys; sys.path.insert(0, {str(Path(__file__).parents[2])!r})\n"
              f"from tests.cache.test_trust import load_in\n"
              f"source = open({str(tmp_path / 'source.c')!r}).read()\n"
              f"print(load_in({str(compiledir)!r}, source).Program)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "11"
    rebuilt = store.valid_product(os.path.dirname(library), os.path.basename(
        os.path.dirname(library)))
    assert rebuilt != library and not os.path.exists(library)  # a new path
    check_shared_library(rebuilt)  # whole


def test_what_is_not_an_elf_library_is_refused(tmp_path):
    path = tmp_path / "module.so"
    path.write_bytes(b"#!/bin/sh\n")
    with pytest.raises(ImportError, match="not a 64-bit ELF"):
        check_shared_library(str(path))


def test_a_rebuilt_module_is_loaded_from_a_new_path(tmp_path, monkeypatch):
    """A process never loads one path twice: glibc would hand back the library it mapped
    from that path before, and Python the module it made from it. So a module rebuilt in the
    process that loaded it (its entry was damaged meanwhile) comes from a new file, and the
    old one is removed."""
    compiledir = tmp_path / "cache"
    source = module_source(13)
    first = load_in(compiledir, source)
    os.unlink(os.path.join(os.path.dirname(first.__file__), "meta.json"))
    monkeypatch.setattr(store, "_loaded", {})
    again = load_in(compiledir, source)
    assert again.__file__ != first.__file__ and not os.path.exists(first.__file__)
    assert again.Program == 13 and again is not first
