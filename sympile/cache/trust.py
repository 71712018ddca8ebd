"""Who could have written what the compile cache loads: the checks that keep another local
user from planting code that sympile would compile into, link or dlopen.

A compiled module is code this process runs. A file in the cache is trusted only when no
one but this user (or root) could have written it, which is what ssh and gpg require of
their directories:

- the compiledir, and every directory of the cache below it, is a real directory (not a
  symlink), owned by this user or root, and writable by no one else; sympile creates them
  0700 and its files 0600;
- every directory above the compiledir is owned by this user or root and writable by no one
  else, or sticky like /tmp (where no one else can rename or remove what is ours);
- a product (a library, a unit's object file, a header) is a regular file, owned by this user
  or root, writable by no one else: a symlink is never followed (lstat, O_NOFOLLOW); one
  found where a product should be is treated as damage, removed and rebuilt.

Why ownership suffices (and no signature is kept): the sha256 in an entry's meta.json is
written in the same directory as the product, so it catches damage (a truncated file), not an
attacker, who would rewrite both. With the rules above, the only writers of the directory are
this user and root, who can already run any code as this user; a key or signature stored on
the same account would add nothing against them.

A compiledir that breaks a rule is refused with UnsafeCacheError, which names the path, what
is wrong and the fix; nothing in it is loaded.
"""

from __future__ import annotations

import errno
import os
import pwd
import stat
import struct

__all__ = ["UnsafeCacheError", "check_ancestors", "check_compiledir", "check_shared_library",
           "check_private_directory", "is_private_file", "make_private_directory"]

_WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH


class UnsafeCacheError(RuntimeError):
    """A compile cache that another user could write to: sympile loads nothing from it."""


def _trusted(uid: int) -> bool:
    return uid in (os.geteuid(), 0)


def _owner_name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _refuse(path: str, problem: str, fix: str) -> UnsafeCacheError:
    return UnsafeCacheError(
        f"sympile: the compile cache directory {path} {problem}, so another user could put "
        f"code there that this process would run; sympile loads nothing from it. {fix}")


_OWN_COMPILEDIR = ("or set a compiledir of your own: SYMPILE_FLAGS=compiledir=<dir> or "
                   "sympile.config.compiledir = '<dir>'")


def check_private_directory(path: str) -> None:
    """UnsafeCacheError unless `path` is a real directory owned by this user or root that no
    one else can write to."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise _refuse(path, f"is a symbolic link (to {os.readlink(path)})",
                      f"Remove the link (rm {path}) {_OWN_COMPILEDIR}.")
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "sympile's compile cache: not a directory", path)
    if not _trusted(info.st_uid):
        raise _refuse(path, f"belongs to {_owner_name(info.st_uid)}",
                      f"Use a directory you own {_OWN_COMPILEDIR}.")
    if info.st_mode & _WRITABLE_BY_OTHERS:
        raise _refuse(path, f"is writable by other users (mode {stat.S_IMODE(info.st_mode):o})",
                      f"Make it private (chmod 700 {path}) {_OWN_COMPILEDIR}.")


def check_ancestors(path: str) -> None:
    """UnsafeCacheError unless every directory above `path` (after resolving symbolic
    links) is owned by this user or root and writable by no one else unless sticky."""
    current = os.path.dirname(os.path.realpath(path))
    while True:
        info = os.stat(current)
        if not _trusted(info.st_uid):
            raise _refuse(path, f"is inside {current}, which belongs to "
                                f"{_owner_name(info.st_uid)}, who could replace it",
                          f"Move it under a directory you own {_OWN_COMPILEDIR}.")
        if info.st_mode & _WRITABLE_BY_OTHERS and not info.st_mode & stat.S_ISVTX:
            raise _refuse(path, f"is inside {current}, which other users can write to "
                                f"(mode {stat.S_IMODE(info.st_mode):o}, not sticky), so they "
                                f"could replace it",
                          f"Make that directory private (chmod go-w {current}) "
                          f"{_OWN_COMPILEDIR}.")
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


def check_compiledir(path: str) -> None:
    """UnsafeCacheError unless the compiledir `path` (existing) and the directories above it
    pass the checks above; a compiledir that is a link the user made (to another disk) is
    checked at its target."""
    check_private_directory(os.path.realpath(path))
    check_ancestors(path)


def make_private_directory(path: str) -> None:
    """Create `path` (0700) if it does not exist, replacing a symbolic link found there;
    then check it (check_private_directory). Its parent must exist and be checked."""
    try:
        os.mkdir(path, 0o700)
        return
    except FileExistsError:
        pass
    if os.path.islink(path):
        os.unlink(path)
        os.mkdir(path, 0o700)
        return
    check_private_directory(path)


def is_private_file(path: str) -> bool:
    """True if `path` is a regular file (not a symbolic link) owned by this user or root that
    no one else can write to."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and _trusted(info.st_uid) \
        and not info.st_mode & _WRITABLE_BY_OTHERS


def check_shared_library(path: str) -> None:
    """ImportError unless `path` holds a complete ELF shared library: the header, and every
    segment and the section table it describes, lie inside the file. dlopen maps a file
    without reading it whole, so a truncated library (whose recorded size and hash were made
    to match) would fault (SIGBUS) on first use instead of failing to load."""
    try:
        with open(path, "rb") as stream:
            header = stream.read(64)
            size = os.fstat(stream.fileno()).st_size
            if len(header) < 64 or header[:4] != b"\x7fELF" or header[4] != 2:
                raise ImportError(f"{path} is not a 64-bit ELF shared library")
            order = "<" if header[5] == 1 else ">"
            (phoff, shoff) = struct.unpack_from(order + "QQ", header, 32)
            (phentsize, phnum, shentsize, shnum) = struct.unpack_from(order + "HHHH", header, 54)
            if phoff + phentsize * phnum > size or shoff + shentsize * shnum > size:
                raise ImportError(f"{path} is truncated: its headers lie past its end")
            stream.seek(phoff)
            table = stream.read(phentsize * phnum)
            for index in range(phnum):
                # Elf64_Phdr: p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz, ...
                offset, = struct.unpack_from(order + "Q", table, index * phentsize + 8)
                filesz, = struct.unpack_from(order + "Q", table, index * phentsize + 32)
                if offset + filesz > size:
                    raise ImportError(f"{path} is truncated: segment {index} lies past its "
                                      f"end ({offset + filesz} > {size} bytes)")
    except OSError as error:
        raise ImportError(f"{path} cannot be read: {error}") from None
