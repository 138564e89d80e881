"""NumPy's file formats: .npy / .npz (save, load, savez, savez_compressed) and text
(savetxt, loadtxt), written and read by NumPy itself.

Files live on the host, so saving copies each tensor's values to the host (explicitly,
once) and loading makes tensors on ``device=`` (default: the default device) from the
host data NumPy read. ``allow_pickle`` defaults as in NumPy (False for load).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ._creation import asarray
from ._tensor import Tensor

__all__ = ["fromfile", "fromstring", "genfromtxt", "load", "loadtxt", "save", "savetxt",
           "savez", "savez_compressed"]


def _to_host(a):
    """A tensor's values as a NumPy array (the explicit copy a file needs); anything
    else as it is (NumPy takes array_likes)."""
    return a._host() if isinstance(a, Tensor) else a


def _to_device(a, device, name="load"):
    """NumPy data read from a file as a tensor on device; other objects (pickles) as
    NumPy returned them."""
    if isinstance(a, np.ndarray) and a.dtype.kind in "biufc":
        return asarray(np.array(a, copy=True), device=device)  # never a view of a memmap
    if isinstance(a, np.ndarray):
        raise TypeError(f"hipfer.{name}: cannot make a tensor of dtype {a.dtype}")
    return a


def save(file, arr, allow_pickle=True):
    """Save a tensor (or array_like) to a .npy file, NumPy's format (a host copy)."""
    np.save(file, _to_host(arr), allow_pickle=allow_pickle)


def savez(file, /, *args, allow_pickle=True, **kwds):
    """Save tensors to an uncompressed .npz archive (arr_0, ... and the keyword names)."""
    np.savez(file, *map(_to_host, args), allow_pickle=allow_pickle,
             **{k: _to_host(v) for k, v in kwds.items()})


def savez_compressed(file, /, *args, allow_pickle=True, **kwds):
    """Save tensors to a compressed .npz archive (arr_0, ... and the keyword names)."""
    np.savez_compressed(file, *map(_to_host, args), allow_pickle=allow_pickle,
                        **{k: _to_host(v) for k, v in kwds.items()})


class _NpzFile(Mapping):
    """A loaded .npz archive: a read-only mapping name -> tensor on the device given to
    load, each read from the file when first asked for (as NumPy's NpzFile); close it,
    or use it in a with block."""

    def __init__(self, npz, device):
        self._npz, self._device = npz, device
        self.files = list(npz.files)

    def __getitem__(self, key):
        return _to_device(self._npz[key], self._device)

    def __iter__(self):
        return iter(self.files)

    def __len__(self):
        return len(self.files)

    def __contains__(self, key):
        return key in self.files

    def close(self):
        self._npz.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"hipfer.NpzFile({self.files})"


def load(file, mmap_mode=None, allow_pickle=False, fix_imports=True, encoding="ASCII", *,
         max_header_size=10000, device=None):
    """Load a .npy file as a tensor on device, or a .npz archive as a read-only mapping
    of tensors (NumPy's NpzFile interface: files, close, with). mmap_mode maps the file
    while reading; the tensor is a copy on device all the same. Pickled objects other
    than arrays (allow_pickle=True) come back as NumPy gives them."""
    out = np.load(file, mmap_mode=mmap_mode, allow_pickle=allow_pickle,
                  fix_imports=fix_imports, encoding=encoding, max_header_size=max_header_size)
    if isinstance(out, np.lib.npyio.NpzFile):
        return _NpzFile(out, device)
    return _to_device(out, device)


def savetxt(fname, X, fmt="%.18e", delimiter=" ", newline="\n", header="", footer="",
            comments="# ", encoding=None):
    """Save a 1-d or 2-d tensor to a text file, NumPy's format (a host copy)."""
    np.savetxt(fname, _to_host(X), fmt=fmt, delimiter=delimiter, newline=newline,
               header=header, footer=footer, comments=comments, encoding=encoding)


def loadtxt(fname, dtype=float, comments="#", delimiter=None, converters=None, skiprows=0,
            usecols=None, unpack=False, ndmin=0, encoding=None, max_rows=None, *,
            quotechar=None, device=None):
    """Load a text file as a tensor on device (unpack=True: a tuple of tensors),
    NumPy's parser; structured dtypes are not supported."""
    out = np.loadtxt(fname, dtype=dtype, comments=comments, delimiter=delimiter,
                     converters=converters, skiprows=skiprows, usecols=usecols,
                     unpack=unpack, ndmin=ndmin, encoding=encoding, max_rows=max_rows,
                     quotechar=quotechar)
    if isinstance(out, (tuple, list)):  # unpack=True of a structured dtype
        return tuple(_to_device(o, device, "loadtxt") for o in out)
    return _to_device(out, device, "loadtxt")


def fromfile(file, dtype=float, count=-1, sep="", offset=0, *, device=None, like=None):
    """NumPy's fromfile (raw binary, or text with sep), read on the host and moved to
    device (or like's device)."""
    device = like.device if device is None and isinstance(like, Tensor) else device
    return _to_device(np.fromfile(file, dtype=dtype, count=count, sep=sep, offset=offset),
                      device, "fromfile")


def fromstring(string, dtype=float, count=-1, *, sep, device=None, like=None):
    """NumPy's fromstring of text (sep is required: NumPy's binary mode is deprecated),
    parsed on the host and moved to device (or like's device)."""
    device = like.device if device is None and isinstance(like, Tensor) else device
    return _to_device(np.fromstring(string, dtype=dtype, count=count, sep=sep), device,
                      "fromstring")


def genfromtxt(fname, dtype=float, comments="#", delimiter=None, skip_header=0,
               skip_footer=0, converters=None, missing_values=None, filling_values=None,
               usecols=None, names=None, excludelist=None, deletechars=None,
               replace_space="_", autostrip=False, case_sensitive=True, defaultfmt="f%i",
               unpack=None, usemask=False, loose=True, invalid_raise=True, max_rows=None,
               encoding=None, *, ndmin=0, device=None, like=None):
    """NumPy's genfromtxt (missing values filled) parsed on the host and moved to device;
    structured dtypes (names=, dtype=None guessing columns) and masked results are not
    tensors and are refused."""
    if usemask:
        raise TypeError("hipfer.genfromtxt: masked arrays are not tensors (usemask=True)")
    device = like.device if device is None and isinstance(like, Tensor) else device
    out = np.genfromtxt(fname, dtype=dtype, comments=comments, delimiter=delimiter,
                        skip_header=skip_header, skip_footer=skip_footer,
                        converters=converters, missing_values=missing_values,
                        filling_values=filling_values, usecols=usecols, names=names,
                        excludelist=excludelist, deletechars=deletechars,
                        replace_space=replace_space, autostrip=autostrip,
                        case_sensitive=case_sensitive, defaultfmt=defaultfmt, unpack=unpack,
                        loose=loose, invalid_raise=invalid_raise, max_rows=max_rows,
                        encoding=encoding, ndmin=ndmin)
    if isinstance(out, (tuple, list)):
        return tuple(_to_device(o, device, "genfromtxt") for o in out)
    return _to_device(out, device, "genfromtxt")

