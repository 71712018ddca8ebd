"""Theano's theano.misc.pkl_utils: dump/load of any picklable object (models, shared
variables, compiled functions) as a zip file whose arrays are stored apart, in numpy's .npy
format, so that they load with numpy alone: `numpy.load(zipfile.ZipFile(f).open(name))`.

The zip holds 'pkl' (the pickle, referring to arrays by name) and one entry per distinct
array (by identity): a shared variable's value under the variable's name where that name is
given and unique, 'array_N' otherwise.

Load only files you trust: unpickling runs whatever code the pickle names, so load() of a file
from someone else can run code as you. load(f, allow_pickle=False) reads the arrays alone
(numpy's .npy format with allow_pickle=False), safely for a file of any origin.
"""

from __future__ import annotations

import io
import pickle
import zipfile
from typing import Any, BinaryIO

import numpy as np

from sympile.tensor.sharedvar import SharedVariable


class _ArrayPickler(pickle.Pickler):
    def __init__(self, file: BinaryIO, archive: zipfile.ZipFile, protocol: int):
        super().__init__(file, protocol=protocol)
        self.archive = archive
        self.names: dict[int, str] = {}
        self.keep: list[Any] = []  # ids stay valid while the arrays are alive

    def persistent_id(self, obj: Any) -> str | None:
        if type(obj) is not np.ndarray or obj.dtype.hasobject:
            if isinstance(obj, SharedVariable) and obj.name \
                    and obj.name not in self.names.values() \
                    and not obj.name.startswith("array_") and obj.name != "pkl":
                value = obj.container.storage[0]
                if type(value) is np.ndarray and id(value) not in self.names:
                    self._store(value, obj.name)
            return None
        name = self.names.get(id(obj))
        return name if name is not None else self._store(obj, f"array_{len(self.names)}")

    def _store(self, array: np.ndarray, name: str) -> str:
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        self.archive.writestr(name, buffer.getvalue())
        self.names[id(array)] = name
        self.keep.append(array)
        return name


class _ArrayUnpickler(pickle.Unpickler):
    def __init__(self, file: BinaryIO, archive: zipfile.ZipFile):
        super().__init__(file)
        self.archive = archive
        self.loaded: dict[str, np.ndarray] = {}

    def persistent_load(self, name: str) -> np.ndarray:
        if name not in self.loaded:
            if name not in self.archive.namelist():
                raise pickle.UnpicklingError(f"pkl_utils.load: the archive has no array "
                                             f"{name!r}")
            self.loaded[name] = _read_array(self.archive, name)
        return self.loaded[name]


def _read_array(archive: zipfile.ZipFile, name: str) -> np.ndarray:
    with archive.open(name) as entry:
        return np.load(io.BytesIO(entry.read()), allow_pickle=False)


def dump(obj: Any, file_handler: BinaryIO, protocol: int = pickle.DEFAULT_PROTOCOL) -> None:
    """Write `obj` to the binary file `file_handler` as a zip of its pickle and its arrays."""
    with zipfile.ZipFile(file_handler, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        buffer = io.BytesIO()
        _ArrayPickler(buffer, archive, protocol).dump(obj)
        archive.writestr("pkl", buffer.getvalue())


def load(file_handler: BinaryIO, allow_pickle: bool = True) -> Any:
    """The object that dump() wrote to `file_handler`. Unpickling runs the code the file
    names: load only files you trust. With allow_pickle=False, only the arrays, as a dict
    {name: array}, read without unpickling anything (safe for a file of any origin)."""
    try:
        archive = zipfile.ZipFile(file_handler, "r")
    except zipfile.BadZipFile as error:
        raise ValueError(f"pkl_utils.load: not a file written by pkl_utils.dump ({error})") \
            from None
    with archive:
        if "pkl" not in archive.namelist():
            raise ValueError("pkl_utils.load: the zip file has no 'pkl' entry (not written by "
                             "pkl_utils.dump)")
        if not allow_pickle:
            return {name: _read_array(archive, name) for name in archive.namelist()
                    if name != "pkl"}
        with archive.open("pkl") as entry:
            return _ArrayUnpickler(io.BytesIO(entry.read()), archive).load()
