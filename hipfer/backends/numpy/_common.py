"""Shared pieces of the NumPy backend: the handler record, conj folding, alpha/beta
scaling and mode-label helpers."""
from __future__ import annotations

import string
import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np

NUMERIC_KINDS = "biufc"

try:  # NumPy 2: the floating-point error state is one context variable
    from numpy._core.umath import _extobj_contextvar as _FP_STATE
    from numpy._core.umath import _make_extobj
except ImportError:  # pragma: no cover - NumPy 1.x
    _FP_STATE = None

if _FP_STATE is not None:
    _IGNORING: dict = {}  # error state -> that state with every error ignored

    def fp_ignore():
        """Enter ``np.errstate(all="ignore")``; returns the token for ``fp_restore``.

        On NumPy 2, errstate's ``__enter__`` sets the error-state context variable to a
        new state derived from the current one (buffer size and error callback kept).
        States are immutable, so the derived state is made once per current state and
        remembered: entering costs a lookup instead of twice a tiny ufunc call.
        Use as ``tok = fp_ignore()`` / ``try: ... finally: fp_restore(tok)``."""
        cur = _FP_STATE.get()
        ign = _IGNORING.get(cur)
        if ign is None:
            if len(_IGNORING) >= 64:
                _IGNORING.clear()
            ign = _IGNORING[cur] = _make_extobj(all="ignore")  # derived from cur
        return _FP_STATE.set(ign)

    fp_restore = _FP_STATE.reset
else:  # pragma: no cover - NumPy 1.x
    def fp_ignore():
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def fp_restore(state):
        state.__exit__(None, None, None)


def numeric(desc, dtypes) -> bool:
    """The NumPy backend runs every descriptor infer accepts, on numeric dtypes."""
    if dtypes is None:
        return True
    return all(np.dtype(t).kind in NUMERIC_KINDS for t in dtypes)


@dataclass(frozen=True)
class Handler:
    """One descriptor type's implementation: ``make(desc, dtypes, shapes, outs, strides,
    conj) -> run(inputs, out, **params)`` and the ``supports`` predicate."""
    make: Callable
    supports: Callable = numeric


def conj_flags(dtypes, conj) -> tuple:
    """The conj flags that matter: only complex inputs can be read conjugated."""
    return tuple(bool(c) and dt.kind == "c" for c, dt in zip(conj, dtypes))


def conj_loader(dtypes, conj) -> Callable:
    """inputs -> inputs with flagged complex operands conjugated (identity when none)."""
    flags = conj_flags(dtypes, conj)
    if not any(flags):
        return tuple
    return lambda xs: tuple(np.conjugate(x) if f else x for x, f in zip(xs, flags))


CHUNK_BYTES = 1 << 20  # of out per chunk: a chunk's several passes stay in cache (1 MiB
                       # measured best on a Zen EPYC: smaller chunks cost more per call)


def by_chunks(fn, inputs, out, work: int = 0) -> None:
    """fn(*inputs, out=out), run over flat chunks of CHUNK_BYTES of out when that is
    possible: out and every input C-contiguous of out's shape, or a single element.
    A formula of several NumPy passes (sigmoid, a conjugate then a product) then moves
    each byte between memory and the core once, as one fused kernel would, and its
    temporaries are chunk-sized. Otherwise (broadcasting, strided views) one call.
    work: fn also takes work=, that many arrays like its chunk, from a scratch buffer
    kept per thread: a chunk's temporaries, allocated anew, page-faulted each time the
    allocator had handed the memory back (silu: 8.5 ms where 6.0 ms in cache)."""
    n = out.size
    step = max(1, CHUNK_BYTES // max(1, out.itemsize))
    if n <= step or not out.flags.c_contiguous or not all(
            x.size == 1 or (x.shape == out.shape and x.flags.c_contiguous) for x in inputs):
        fn(*inputs, out=out)
        return
    flat = [x.reshape(-1) if x.size != 1 else x for x in inputs]
    of = out.reshape(-1)
    buf = _scratch(work * step * out.itemsize) if work else None
    for i in range(0, n, step):
        kw = {}
        if work:
            m = min(step, n - i)
            kw["work"] = [buf[k * step * out.itemsize:][:m * out.itemsize].view(out.dtype)
                          for k in range(work)]
        fn(*[x[i:i + step] if x.size != 1 else x for x in flat], out=of[i:i + step], **kw)


_SCRATCH = threading.local()


def _scratch(nbytes: int) -> np.ndarray:
    """This thread's scratch bytes (at least nbytes), kept between calls."""
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or buf.nbytes < nbytes:
        buf = _SCRATCH.buf = np.empty(nbytes, np.uint8)
    return buf


def as_dtype(value, dt: np.dtype):
    """A scalar in dtype dt (unsafe cast, as a kernel taking a T parameter would do)."""
    try:
        return dt.type(value)
    except (OverflowError, TypeError, ValueError):  # e.g. -1 as uint8: wrap like astype
        return np.asarray(value).astype(dt)[()]


def quiet(dtypes) -> bool:
    """Integer and bool arithmetic never raises floating-point flags, so it can skip
    the (comparatively costly) np.errstate guard."""
    return all(t.kind in "biu" for t in dtypes)


def combine(out, res, alpha, beta) -> None:
    """out = alpha * res + beta * out, with alpha/beta in out's dtype; beta == 0 never
    reads out."""
    dt = out.dtype
    if beta == 0:
        if alpha == 1:
            np.copyto(out, res)
        else:
            np.multiply(res, as_dtype(alpha, dt), out=out)
        return
    if beta != 1:
        np.multiply(out, as_dtype(beta, dt), out=out)
    if alpha != 1:
        res = np.multiply(res, as_dtype(alpha, dt))
    np.add(out, res, out=out)


def scaled(compute: Callable, out_dtype: np.dtype) -> Callable:
    """run(inputs, out, alpha=1, beta=0) for a standard-semiring op whose
    ``compute(inputs, out)`` writes op(inputs) into out."""
    def run(inputs, out, alpha=1, beta=0):
        if out.size == 0:
            return
        tok = fp_ignore()
        try:
            if alpha == 1 and beta == 0:
                compute(inputs, out)
                return
            tmp = np.empty(out.shape, out_dtype)
            compute(inputs, tmp)
            combine(out, tmp, alpha, beta)
        finally:
            fp_restore(tok)
    return run


def tropical_scaled(compute: Callable, out_dtype: np.dtype, semiring) -> Callable:
    """run(inputs, out, alpha=1, beta=0) for a tropical semiring: alpha must be 1, beta 0
    (out = result) or 1 (out = out (+) result, the semiring's sum)."""
    add = np.maximum if semiring.add == "max" else np.minimum

    def run(inputs, out, alpha=1, beta=0):
        semiring.check_scale(alpha, beta)
        if out.size == 0:
            return
        with np.errstate(all="ignore"):
            if beta == 0:
                compute(inputs, out)
                return
            tmp = np.empty(out.shape, out_dtype)
            compute(inputs, tmp)
            add(out, tmp, out=out)
    return run


def letters(*mode_lists) -> list:
    """Map hashable mode labels to einsum letters, consistently across the lists."""
    table: dict = {}
    pool = string.ascii_letters
    out = []
    for modes in mode_lists:
        s = []
        for m in modes:
            if m not in table:
                if len(table) == len(pool):
                    raise ValueError(f"more than {len(pool)} distinct mode labels")
                table[m] = pool[len(table)]
            s.append(table[m])
        out.append("".join(s))
    return out


def reduce_layout(modes_a, modes_c):
    """(reduced axes of a, permutation taking out (modes_c order) to the kept axes in
    modes_a order) -- reduce with ``out=out.transpose(perm)``."""
    axes = tuple(i for i, m in enumerate(modes_a) if m not in modes_c)
    kept = [m for m in modes_a if m in modes_c]
    perm = tuple(modes_c.index(m) for m in kept)
    return axes, perm
