"""hipfer's on-disk cache of compiled kernel modules (code objects, cubins), where CuPy
keeps none: the CuPy backend (backends/cupy/_engine.py) compiles each kernel group with
name expressions, and CuPy reads its own disk cache for such modules only from 14.2 on,
and only on CUDA. Pure Python, no CuPy: the file-system and security logic is tested on
the CPU.

An entry holds the binary and the lowered (mangled) name of each name expression, under
the SHA-256 of everything the binary depends on (``key_digest``). It is code that gets
executed, so:

- the directory is private to the user: created 0700; a directory that is a symlink, is
  not owned by the user, or is writable by group or others is refused (one warning, then
  kernels are compiled as if there were no cache). All entry operations go through the
  directory's file descriptor, so the checked directory is the one used;
- an entry is loaded only if it is a regular file owned by the user, not writable by
  group or others, and its header matches: format, the key's digest, the body's length
  and its SHA-256. A corrupted, truncated, foreign or edited entry is a miss (it is
  recompiled and replaced), never loaded;
- entries are written to a temporary file in the same directory and renamed over the
  entry (os.replace), so concurrent processes see the old entry or the new one, whole.

``HIPFER_KERNEL_CACHE``: ``auto`` (default: where CuPy has no cache), ``on`` (also where
CuPy has one), ``off``. ``HIPFER_KERNEL_CACHE_DIR``: the directory, by default
``$XDG_CACHE_HOME/hipfer/kernels`` or ``~/.cache/hipfer/kernels``; one subdirectory per
device architecture. Deleting the directory clears the cache.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import stat
import struct
import warnings
from typing import Iterable, List, Optional, Sequence, Tuple

FORMAT = 1  # in every key and entry header; bump when the layout or the key changes
ENV_MODE = "HIPFER_KERNEL_CACHE"
ENV_DIR = "HIPFER_KERNEL_CACHE_DIR"
MAX_ENTRY = 1 << 30  # bytes; anything larger is not ours

_MAGIC = b"HFKCACHE"
_HEADER = struct.Struct("<8sII32s32sQ")  # magic, format, flags, key, body SHA-256, body length
_U32 = struct.Struct("<I")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC


class UnsafeCacheDir(OSError):
    """The cache directory is a symlink, someone else's, or writable by others."""


# ------------------------------------------------------------------ configuration
def mode() -> str:
    """'auto', 'on' or 'off', from HIPFER_KERNEL_CACHE."""
    v = os.environ.get(ENV_MODE, "").strip().lower()
    if v in ("", "auto"):
        return "auto"
    if v in ("on", "1", "yes"):
        return "on"
    if v in ("off", "0", "no"):
        return "off"
    raise ValueError(f"{ENV_MODE}={v!r}: expected auto, on or off")


def default_dir() -> str:
    """HIPFER_KERNEL_CACHE_DIR, else $XDG_CACHE_HOME/hipfer/kernels (an absolute
    XDG_CACHE_HOME only, as the XDG spec says), else ~/.cache/hipfer/kernels."""
    d = os.environ.get(ENV_DIR)
    if d:
        return os.path.abspath(os.path.expanduser(d))
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hipfer", "kernels")


def key_digest(parts: dict) -> str:
    """The hex SHA-256 naming an entry: of ``parts`` (JSON-able: source or its digest,
    options, name expressions, arch, compiler and CuPy versions) and FORMAT."""
    blob = json.dumps({"format": FORMAT, **parts}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def arch_tag(arch: str) -> str:
    """A directory name for a device architecture: 'gfx90a:sramecc+:xnack-' ->
    'gfx90a_sramecc+_xnack-'."""
    tag = re.sub(r"[^A-Za-z0-9.+-]+", "_", arch).strip("._")[:64]
    return tag or "unknown"


# ------------------------------------------------------------------ entry format
def _check_digest(digest: str) -> str:
    """A key digest is also the entry's file name: 64 lowercase hex digits, nothing else."""
    if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise ValueError(f"not a key digest: {digest!r}")
    return digest


def encode_entry(digest: str, exprs: Sequence[str], names: Sequence[str],
                 binary: bytes) -> bytes:
    """Header + body; the body is the (name expression, lowered name) pairs, then the
    binary."""
    if len(exprs) != len(names):
        raise ValueError(f"{len(exprs)} name expressions but {len(names)} lowered names")
    if not binary:
        raise ValueError("empty binary")
    parts = [_U32.pack(len(exprs))]
    for text in (s for pair in zip(exprs, names) for s in pair):
        b = text.encode()
        parts += [_U32.pack(len(b)), b]
    parts.append(bytes(binary))
    body = b"".join(parts)
    head = _HEADER.pack(_MAGIC, FORMAT, 0, bytes.fromhex(digest),
                        hashlib.sha256(body).digest(), len(body))
    return head + body


def decode_entry(data: bytes, digest: str, exprs: Sequence[str]
                 ) -> Optional[Tuple[List[str], bytes]]:
    """(lowered names in exprs' order, binary), or None unless the entry is whole and is
    the one for this key and these name expressions."""
    if len(data) < _HEADER.size:
        return None
    magic, fmt, flags, key, body_hash, length = _HEADER.unpack_from(data)
    body = data[_HEADER.size:]
    if (magic != _MAGIC or fmt != FORMAT or flags != 0 or key != bytes.fromhex(digest)
            or length != len(body) or hashlib.sha256(body).digest() != body_hash):
        return None
    try:
        count, = _U32.unpack_from(body)
        if count != len(exprs):
            return None
        at, texts = _U32.size, []
        for _ in range(2 * count):
            n, = _U32.unpack_from(body, at)
            at += _U32.size
            if at + n > len(body):
                return None
            texts.append(body[at:at + n].decode())
            at += n
    except (struct.error, UnicodeDecodeError):
        return None
    names = texts[1::2]
    if list(texts[0::2]) != list(exprs) or not all(names) or any("\0" in s for s in names):
        return None
    binary = body[at:]
    return (names, binary) if binary else None


# ------------------------------------------------------------------ the directory
def _check_private(st: os.stat_result, what: str) -> None:
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeCacheDir(f"{what} is not a directory")
    if st.st_uid != os.geteuid():
        raise UnsafeCacheDir(f"{what} is owned by uid {st.st_uid}, not by this user "
                             f"({os.geteuid()})")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeCacheDir(f"{what} is writable by group or others "
                             f"(mode {stat.S_IMODE(st.st_mode):o})")


def _open_dir(name: str, parent_fd: Optional[int], what: str) -> int:
    """The descriptor of a private directory, made 0700 if missing; raises UnsafeCacheDir
    for a symlink, someone else's directory, or one writable by others."""
    try:
        os.mkdir(name, 0o700, dir_fd=parent_fd)
    except FileExistsError:
        pass
    try:
        if stat.S_ISLNK(os.lstat(name, dir_fd=parent_fd).st_mode):
            raise UnsafeCacheDir(f"{what} is a symlink")
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as e:
        if isinstance(e, UnsafeCacheDir):
            raise
        raise UnsafeCacheDir(f"{what} cannot be opened as a directory ({e})") from None
    try:
        _check_private(os.fstat(fd), what)
    except BaseException:
        os.close(fd)
        raise
    return fd


_warned: set = set()


def _warn_once(key, msg: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(msg, RuntimeWarning, stacklevel=3)


class KernelStore:
    """The entries of one device architecture: ``root/<arch tag>/<key digest>``.

    ``load`` and ``save`` never raise for file-system trouble: a refused directory warns
    once and turns the store off (kernels are then compiled every time, as without a
    cache); a failed write warns once and is skipped."""

    def __init__(self, root: str, arch: str):
        self.root = os.path.abspath(root)
        self.sub = arch_tag(arch)
        self.disabled: Optional[str] = None  # why, once refused
        if os.name != "posix" or os.open not in os.supports_dir_fd:  # owners, dir_fd
            self.disabled = "the kernel cache needs a POSIX system"

    def _dir(self) -> Optional[int]:
        if self.disabled:
            return None
        parent = os.path.dirname(self.root)
        try:
            os.makedirs(parent, 0o700, exist_ok=True)  # ~/.cache above it: the usual modes
            fd = _open_dir(self.root, None, f"the kernel cache {self.root}")
            try:
                return _open_dir(self.sub, fd, f"the kernel cache {self.root}/{self.sub}")
            finally:
                os.close(fd)
        except OSError as e:
            self.disabled = str(e)
            _warn_once(("dir", self.root), f"hipfer: not using {e}; kernels are compiled at "
                       f"every start (set {ENV_DIR} to a private directory, or "
                       f"{ENV_MODE}=off)")
            return None

    def load(self, digest: str, exprs: Sequence[str]) -> Optional[Tuple[List[str], bytes]]:
        """(lowered names, binary) of a valid entry, else None."""
        _check_digest(digest)
        dfd = self._dir()
        if dfd is None:
            return None
        try:
            try:
                # O_NONBLOCK: a FIFO in place of the entry must not hang the open
                fd = os.open(digest, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC,
                             dir_fd=dfd)
            except OSError:  # absent, or a symlink (ELOOP): a miss
                return None
            try:
                st = os.fstat(fd)
                if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid()
                        or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
                    _warn_once(("entry", self.root), f"hipfer: ignoring kernel cache entry "
                               f"{self.root}/{self.sub}/{digest}: not a private file of "
                               f"this user")
                    return None
                if not _HEADER.size <= st.st_size <= MAX_ENTRY:
                    return None
                data = _read_all(fd, st.st_size)
            finally:
                os.close(fd)
            return decode_entry(data, digest, exprs)
        except OSError:
            return None
        finally:
            os.close(dfd)

    def save(self, digest: str, exprs: Sequence[str], names: Sequence[str],
             binary: bytes) -> bool:
        """Write the entry atomically; whether it was written."""
        blob = encode_entry(_check_digest(digest), exprs, names, binary)
        dfd = self._dir()
        if dfd is None:
            return False
        tmp = f".{digest[:16]}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                         0o600, dir_fd=dfd)
            try:
                view = memoryview(blob)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.replace(tmp, digest, src_dir_fd=dfd, dst_dir_fd=dfd)
            return True
        except OSError as e:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            _warn_once(("write", self.root), f"hipfer: cannot write to the kernel cache "
                       f"{self.root}/{self.sub} ({e})")
            return False
        finally:
            os.close(dfd)


def _read_all(fd: int, size: int) -> bytes:
    """The file's bytes, reading at most one byte past ``size`` (a file that grew is
    then caught by the length check)."""
    chunks, left = [], size + 1
    while left > 0:
        b = os.read(fd, min(left, 1 << 24))
        if not b:
            break
        chunks.append(b)
        left -= len(b)
    return b"".join(chunks)


# ------------------------------------------------------------------ loaded libraries
def mapped_libraries(stems: Iterable[str], maps: Optional[str] = None) -> List[str]:
    """Paths of the shared objects mapped into this process (/proc/self/maps, or the
    ``maps`` text given) whose file name starts with one of ``stems`` (``libamdhip64.so``),
    in first-mapped order; [] where /proc is missing."""
    if maps is None:
        try:
            with open("/proc/self/maps") as f:
                maps = f.read()
        except OSError:
            return []
    stems = tuple(stems)
    out: List[str] = []
    for line in maps.splitlines():
        fields = line.split(None, 5)  # address perms offset dev inode [path]
        if len(fields) < 6:
            continue
        path = fields[5].strip()
        if not path.startswith("/") or path.endswith(" (deleted)"):
            continue
        if os.path.basename(path).startswith(stems) and path not in out:
            out.append(path)
    return out


def file_fingerprint(paths: Iterable[str]) -> List[list]:
    """[path, size, mtime_ns] of each path that exists: changes when a library is
    replaced in place (a ROCm or CUDA update that keeps its version number)."""
    out = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        out.append([p, st.st_size, st.st_mtime_ns])
    return out
