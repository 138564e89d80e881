"""NumPy's math routines on the device: scans (cumsum, cumprod), differences (ediff1d,
gradient, unwrap), integration (trapezoid), products (dot, vdot, inner, outer, kron,
trace, cross), convolve, interp, the closeness predicates (isclose, allclose,
array_equal, array_equiv) and bit packing (packbits, unpackbits).

Each is a small composition of hipfer's namespace functions with NumPy's signature; the
data stays on the input's device. The predicates that NumPy answers with a Python bool
read one scalar back (said in their docstrings).
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from . import _dtypes, fft, linalg
from ._core import cast, store_out
from ._creation import arange, asarray, zeros
from ._elementwise import (abs as abs_, bitwise_and, bitwise_left_shift, bitwise_right_shift,
                           conj, divide, equal, greater, imag, isfinite, isnan, less,
                           less_equal, logical_and, logical_or, multiply, not_equal, real,
                           remainder, round as round_, subtract, where)
from ._indexing import take
from ._manipulation import concat, stack
from ._searching import searchsorted
from ._sorting import argsort
from ._statistical import all as all_, cumulative_prod, cumulative_sum, sum as sum_
from ._tensor import Tensor
from ._utility import diff
from ._views import AxisError, broadcast_shapes, broadcast_to, diagonal, flip, moveaxis, reshape

__all__ = ["allclose", "around", "array_equal", "array_equiv", "convolve", "cross", "cumprod",
           "cumsum", "real_if_close",
           "dot", "ediff1d", "gradient", "inner", "interp", "isclose", "kron", "outer",
           "packbits", "trace", "trapezoid", "unpackbits", "unwrap", "vdot"]


# ------------------------------------------------------------------ helpers
def _arr(x, device=None) -> Tensor:
    """x as a Tensor: a Tensor itself, else host data the user passed (array_like), put
    on device (the other operand's) or the default device."""
    if isinstance(x, Tensor):
        return x
    return asarray(x, device=device)


def _pair(a, b):
    """Both operands as Tensors on the device of whichever is one."""
    dev = a.device if isinstance(a, Tensor) else b.device if isinstance(b, Tensor) else None
    return _arr(a, dev), _arr(b, dev)


def _axis(axis, ndim: int, fn: str) -> int:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"hipfer.{fn}: axis must be an int, got {type(axis).__name__}")
    if not -ndim <= axis < max(ndim, 1) or ndim == 0:
        raise AxisError(f"hipfer.{fn}: axis {axis} is out of bounds for array of dimension {ndim}")
    return int(axis) % ndim


def _out(res: Tensor, out, fn: str) -> Tensor:
    """res, or res written into out (NumPy's out= rules: _core.store_out) and out returned."""
    return store_out(res, out, f"hipfer.{fn}")


def _broadcast(fn: str, *shapes) -> tuple:
    """The broadcast shape, or NumPy's ValueError naming the function called."""
    try:
        return broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"hipfer.{fn}: shapes {', '.join(map(str, shapes))} cannot be "
                         "broadcast together") from None


def _along(x: Tensor, axis: int, sl: slice) -> Tensor:
    return x[(slice(None),) * axis + (sl,)]


# ------------------------------------------------------------------ rounding
def around(a, decimals=0, out=None) -> Tensor:
    """NumPy's round/around: half to even at decimals (NumPy's method: scale, round,
    unscale); integers are unchanged for decimals >= 0 and computed in float64 below."""
    decimals = operator.index(decimals)
    x = _arr(a)
    if x.dtype.kind in "biu":
        if decimals >= 0:
            return _out(x if out is not None else asarray(x, copy=True), out, "around")
        f = 10.0 ** -decimals
        r = cast(multiply(round_(divide(cast(x, _dtypes.float64), f)), f), x.dtype)
        return _out(r, out, "around")
    if decimals == 0:
        return _out(round_(x), out, "around")
    f = 10.0 ** abs(decimals)
    r = divide(round_(multiply(x, f)), f) if decimals > 0 else multiply(round_(divide(x, f)), f)
    return _out(r, out, "around")


def real_if_close(a, tol=100) -> Tensor:
    """NumPy's real_if_close: a's real part when a is complex and every imaginary part is
    below tol (in machine epsilons when tol > 1), else a. The answer's dtype depends on the
    data: one sync of one bool."""
    x = _arr(a)
    if x.dtype.kind != "c":
        return x
    re_dt = _dtypes.as_dtype(np.finfo(x.dtype).dtype)
    if tol > 1:
        tol = np.finfo(re_dt).eps * tol
    if bool(all_(less(abs_(imag(x)), tol))):
        return real(x)
    return x


# ------------------------------------------------------------------ scans
def _scan(fn, name, a, axis, dtype, out):
    x = _arr(a)
    if axis is None or x.ndim == 0:  # NumPy scans the flattened array (0-d: as 1-d)
        x, axis = reshape(x, (-1,)), 0 if axis is None else axis
    axis = _axis(axis, x.ndim, name)
    return _out(fn(x, axis=axis, dtype=None if dtype is None else np.dtype(dtype)), out, name)


def cumsum(a, axis=None, dtype=None, out=None) -> Tensor:
    """NumPy's cumsum: running sum along axis (None: of the flattened array), integers
    widened to 64 bits unless dtype is given."""
    return _scan(cumulative_sum, "cumsum", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None) -> Tensor:
    """NumPy's cumprod: running product along axis (None: of the flattened array),
    integers widened to 64 bits unless dtype is given."""
    return _scan(cumulative_prod, "cumprod", a, axis, dtype, out)


# ------------------------------------------------------------------ differences
def ediff1d(ary, to_end=None, to_begin=None) -> Tensor:
    """Differences of consecutive elements of the flattened ary, with to_begin and to_end
    (flattened, cast to ary's dtype under 'same_kind') joined at the ends."""
    x = reshape(_arr(ary), (-1,))
    if x.dtype.kind == "b":
        raise TypeError("hipfer.ediff1d: boolean subtract is not supported, use bitwise_xor")
    parts = [subtract(x[1:], x[:-1])]
    for what, v in (("to_begin", to_begin), ("to_end", to_end)):
        if v is None:
            continue
        t = reshape(_arr(v, x.device), (-1,))
        if not np.can_cast(t.dtype, x.dtype, "same_kind"):
            raise TypeError(f"hipfer.ediff1d: dtype of `{what}` must be compatible with input "
                            f"`ary` under the `same_kind` rule.")
        t = cast(t, x.dtype)
        parts = [t] + parts if what == "to_begin" else parts + [t]
    return concat(parts) if len(parts) > 1 else parts[0]


def _ndim(v) -> int:
    return v.ndim if isinstance(v, Tensor) else np.ndim(v)


def _spacings(f: Tensor, varargs, axes, fn):
    """One spacing per axis: a scalar, or the differences of a 1-d coordinate tensor."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and _ndim(varargs[0]) == 0:  # one scalar for every axis
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"hipfer.{fn}: invalid number of arguments")
    out = []
    for ax, d in zip(axes, varargs):
        if _ndim(d) == 0:
            out.append(d)
            continue
        d = _arr(d, f.device)
        if d.ndim != 1:
            raise ValueError(f"hipfer.{fn}: distances must be either scalars or 1d")
        if d.shape[0] != f.shape[ax]:
            raise ValueError(f"hipfer.{fn}: when 1d, distances must match the length of the "
                             "corresponding dimension")
        if d.dtype.kind in "biu":
            d = cast(d, _dtypes.float64)
        out.append(diff(d))
    return out


def _gradient_last(f: Tensor, h, edge_order: int) -> Tensor:
    """NumPy's gradient along f's last axis; h a scalar spacing or a 1-d tensor of them."""
    uniform = not isinstance(h, Tensor) or h.ndim == 0
    if uniform:
        mid = (f[..., 2:] - f[..., :-2]) / (2.0 * h)
    else:
        dx1, dx2 = h[:-1], h[1:]
        a, b = -dx2 / (dx1 * (dx1 + dx2)), (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        mid = a * f[..., :-2] + b * f[..., 1:-1] + c * f[..., 2:]
    if edge_order == 1:
        first = (f[..., 1:2] - f[..., 0:1]) / (h if uniform else h[0:1])
        last = (f[..., -1:] - f[..., -2:-1]) / (h if uniform else h[-1:])
    else:
        if uniform:
            a, b, c = -1.5 / h, 2.0 / h, -0.5 / h
        else:
            dx1, dx2 = h[0:1], h[1:2]
            a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
            b = (dx1 + dx2) / (dx1 * dx2)
            c = -dx1 / (dx2 * (dx1 + dx2))
        first = a * f[..., 0:1] + b * f[..., 1:2] + c * f[..., 2:3]
        if uniform:
            a, b, c = 0.5 / h, -2.0 / h, 1.5 / h
        else:
            dx1, dx2 = h[-2:-1], h[-1:]
            a = dx2 / (dx1 * (dx1 + dx2))
            b = -(dx2 + dx1) / (dx1 * dx2)
            c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
        last = a * f[..., -3:-2] + b * f[..., -2:-1] + c * f[..., -1:]
    return concat([cast(first, f.dtype), cast(mid, f.dtype), cast(last, f.dtype)], axis=-1)


def gradient(f, /, *varargs, axis=None, edge_order=1):
    """NumPy's gradient: second-order central differences inside, first- or second-order
    (edge_order) one-sided ones at the ends; varargs are scalar spacings or coordinate
    arrays, one per axis. A tuple for several axes, a Tensor for one. Unlike NumPy,
    evenly spaced coordinate arrays are not detected (that would read data back), so
    they take the uneven formula (equal up to rounding)."""
    f = _arr(f)
    if f.ndim == 0:
        raise ValueError("hipfer.gradient: Shape of array too small to calculate a numerical "
                         "gradient")
    if axis is None:
        axes = tuple(range(f.ndim))
    else:
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        axes = tuple(_axis(a, f.ndim, "gradient") for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError("hipfer.gradient: duplicate value in 'axis'")
    if edge_order not in (1, 2):
        raise ValueError("hipfer.gradient: 'edge_order' greater than 2 not supported")
    if f.dtype.kind == "b":
        raise TypeError("hipfer.gradient: boolean subtract is not supported")
    if f.dtype.kind in "iu":
        f = cast(f, _dtypes.float64)
    outs = []
    for ax, h in zip(axes, _spacings(f, varargs, axes, "gradient")):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("hipfer.gradient: Shape of array too small to calculate a "
                             "numerical gradient, at least (edge_order + 1) elements are "
                             "required.")
        g = _gradient_last(moveaxis(f, ax, -1), h, edge_order)
        outs.append(moveaxis(g, -1, ax))
    return outs[0] if len(outs) == 1 else tuple(outs)


def trapezoid(y, x=None, dx=1.0, axis=-1) -> Tensor:
    """Integral of y along axis by the trapezoidal rule, at sample points x (1-d, or y's
    shape) or evenly spaced by dx."""
    y = _arr(y)
    axis = _axis(axis, y.ndim, "trapezoid")
    if x is None:
        d = dx
    else:
        x = _arr(x, y.device)
        if x.ndim == 1:
            d = diff(x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = reshape(d, tuple(shape))
        else:
            d = diff(x, axis=axis)
    mid = (_along(y, axis, slice(1, None)) + _along(y, axis, slice(None, -1))) / 2.0
    return sum_(d * mid, axis=axis)


def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi) -> Tensor:
    """Unwrap by taking the complement of jumps larger than discont (default period/2)
    along axis, as NumPy does (integer p with an integer period stays integer)."""
    p = _arr(p)
    axis = _axis(axis, p.ndim, "unwrap")
    dd = diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    dt = np.result_type(dd.dtype, period)  # a Python period is weak, as in NumPy
    dd = cast(dd, dt)
    if dt.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    ddmod = remainder(dd - low, period) + low
    if ambiguous:
        ddmod = where(logical_and(equal(ddmod, low), greater(dd, 0)), high, ddmod)
    correct = where(less(abs_(dd), discont), 0, ddmod - dd)
    up = cast(p, dt)
    return concat([_along(up, axis, slice(0, 1)),
                   _along(up, axis, slice(1, None)) + cumulative_sum(correct, axis=axis, dtype=dt)],
                  axis=axis)


# ------------------------------------------------------------------ products
def _bool_product(fn, a: Tensor, b: Tensor) -> Tensor:
    """A product-sum of bools is NumPy's OR of ANDs: computed in int64, then != 0."""
    if a.dtype.kind == "b" and b.dtype.kind == "b":
        return not_equal(fn(cast(a, _dtypes.int64), cast(b, _dtypes.int64)), 0)
    return fn(a, b)


def _contract(a: Tensor, b: Tensor, axes) -> Tensor:
    dt = _dtypes.result_type(a.dtype, b.dtype)
    return _bool_product(lambda u, v: linalg.tensordot(u, v, axes=axes),
                         cast(a, dt), cast(b, dt))


def dot(a, b, out=None) -> Tensor:
    """NumPy's dot: a scalar operand multiplies; 1-d with 1-d is the inner product; else
    the sum over a's last axis and b's second-to-last (last when b is 1-d)."""
    a, b = _pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return _out(multiply(a, b), out, "dot")
    kb = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[kb]:
        raise ValueError(f"hipfer.dot: shapes {a.shape} and {b.shape} not aligned: "
                         f"{a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[kb]} (dim {kb})")
    return _out(_contract(a, b, ([a.ndim - 1], [kb])), out, "dot")


def vdot(a, b, /) -> Tensor:
    """NumPy's vdot: the flattened a, conjugated, dotted with the flattened b (0-d)."""
    a, b = _pair(a, b)
    a, b = reshape(a, (-1,)), reshape(b, (-1,))
    if a.shape != b.shape:
        raise ValueError("hipfer.vdot: cannot reshape array: vectors have different lengths")
    return _contract(conj(a), b, 1)


def inner(a, b, /) -> Tensor:
    """NumPy's inner: the sum over the last axes of a and b (a scalar operand multiplies)."""
    a, b = _pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"hipfer.inner: shapes {a.shape} and {b.shape} not aligned: "
                         f"{a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[-1]} (dim {b.ndim - 1})")
    return _contract(a, b, ([a.ndim - 1], [b.ndim - 1]))


def outer(a, b, out=None) -> Tensor:
    """NumPy's outer: out[i, j] = a.ravel()[i] * b.ravel()[j]."""
    a, b = _pair(a, b)
    return _out(multiply(reshape(a, (-1, 1)), reshape(b, (1, -1))), out, "outer")


def kron(a, b) -> Tensor:
    """Kronecker product: blocks a[i, j, ...] * b (the operand of fewer axes gets leading
    ones)."""
    a, b = _pair(a, b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    ia = tuple(v for n in sa for v in (n, 1))   # (a0, 1, a1, 1, ...)
    ib = tuple(v for n in sb for v in (1, n))   # (1, b0, 1, b1, ...)
    prod = multiply(reshape(a, ia), reshape(b, ib))
    return reshape(prod, tuple(x * y for x, y in zip(sa, sb)))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None) -> Tensor:
    """Sum along the offset diagonal of a's axes axis1 and axis2 (integers widened as in
    sum, unless dtype is given)."""
    a = _arr(a)
    if a.ndim < 2:
        raise ValueError("hipfer.trace: diag requires an array of at least two dimensions")
    ax1, ax2 = _axis(axis1, a.ndim, "trace"), _axis(axis2, a.ndim, "trace")
    if ax1 == ax2:
        raise ValueError("hipfer.trace: axis1 and axis2 cannot be the same")
    d = diagonal(moveaxis(a, (ax1, ax2), (-2, -1)), offset=int(offset))
    return _out(sum_(d, axis=-1, dtype=None if dtype is None else np.dtype(dtype)), out, "trace")


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None) -> Tensor:
    """Cross product of 2- or 3-element vectors along axisa/axisb (axis sets all three);
    two 2-vectors give the z component only. 2-vectors warn as NumPy 2 does (deprecated)."""
    a, b = _pair(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, _axis(axisa, a.ndim, "cross"), -1)
    b = moveaxis(b, _axis(axisb, b.ndim, "cross"), -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("hipfer.cross: incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if a.shape[-1] == 2 or b.shape[-1] == 2:
        warnings.warn("hipfer.cross: Arrays of 2-dimensional vectors are deprecated. Use arrays "
                      "of 3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=2)
    dt = _dtypes.result_type(a.dtype, b.dtype)
    if dt.kind == "b":
        raise TypeError("hipfer.cross: boolean subtract is not supported")
    a, b = cast(a, dt), cast(b, dt)
    shape = _broadcast("cross", a.shape[:-1], b.shape[:-1])
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    z = broadcast_to(a0 * b1 - a1 * b0, shape)
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    a2 = a[..., 2] if a.shape[-1] == 3 else None
    b2 = b[..., 2] if b.shape[-1] == 3 else None
    x = a1 * b2 if a2 is None else (-(a2 * b1) if b2 is None else a1 * b2 - a2 * b1)
    y = -(a0 * b2) if a2 is None else (a2 * b0 if b2 is None else a2 * b0 - a0 * b2)
    c = stack([broadcast_to(x, shape), broadcast_to(y, shape), z], axis=-1)
    return moveaxis(c, -1, _axis(axisc, c.ndim, "cross"))


def convolve(a, v, mode="full") -> Tensor:
    """Discrete linear convolution of 1-d a and v, modes 'full', 'same', 'valid'. Each output
    is a dot of v reversed with a window of a (gathered on the device, in blocks); floating
    inputs with more than 128 taps go through an FFT instead (rounding relative to the
    largest output, as with any FFT convolution)."""
    a, v = _pair(a, v)
    if a.ndim > 1 or v.ndim > 1:
        raise ValueError("hipfer.convolve: a and v must be 1-d (or scalars)")
    a, v = reshape(a, (-1,)), reshape(v, (-1,))
    if a.size == 0:
        raise ValueError("hipfer.convolve: a cannot be empty")
    if v.size == 0:
        raise ValueError("hipfer.convolve: v cannot be empty")
    if v.size > a.size:
        a, v = v, a
    n, m = a.size, v.size
    starts = {"full": (0, n + m - 1), "same": ((m - 1) // 2, (m - 1) // 2 + n),
              "valid": (m - 1, n)}
    if mode not in starts:
        raise ValueError(f"hipfer.convolve: mode must be one of 'valid', 'same', 'full', "
                         f"got {mode!r}")
    lo, hi = starts[mode]
    dt = _dtypes.result_type(a.dtype, v.dtype)
    a, v = cast(a, dt), cast(v, dt)
    if dt.kind in "fc" and m > _FFT_TAPS:
        return cast(_convolve_fft(a, v)[lo:hi], dt)
    pad = zeros((m - 1,), dtype=dt, device=a.device)
    padded = concat([pad, a, pad])
    taps = arange(m, dtype=_dtypes.int64, device=a.device)
    vr = flip(v)
    step = max(1, (1 << 22) // m)  # rows per block: a bounded gathered window matrix
    parts = []
    for s in range(lo, hi, step):
        rows = arange(s, min(hi, s + step), dtype=_dtypes.int64, device=a.device)
        idx = reshape(reshape(rows, (-1, 1)) + reshape(taps, (1, -1)), (-1,))
        win = reshape(take(padded, idx), (rows.shape[0], m))
        parts.append(_contract(win, vr, 1))
    return cast(concat(parts), dt) if parts else zeros((0,), dtype=dt, device=a.device)


#: floating convolutions with more taps than this go through the FFT: O(n log n) instead of
#: O(n m); the rounding is then relative to the largest outputs, not to each one
_FFT_TAPS = 128


def _convolve_fft(a: Tensor, v: Tensor) -> Tensor:
    """The full linear convolution of 1-d floating a and v by one zero-padded FFT."""
    size = a.shape[0] + v.shape[0] - 1
    nfft = 1 << (size - 1).bit_length()
    if a.dtype.kind == "c":
        return fft.ifft(fft.fft(a, n=nfft) * fft.fft(v, n=nfft))[:size]
    return fft.irfft(fft.rfft(a, n=nfft) * fft.rfft(v, n=nfft), n=nfft)[:size]


# ------------------------------------------------------------------ interp
def _interp_real(x: Tensor, xp: Tensor, fp: Tensor, left, right) -> Tensor:
    shape, x = x.shape, reshape(x, (-1,))  # take gathers with 1-d indices
    n = xp.shape[0]
    if n == 1:
        f = broadcast_to(fp[0], x.shape)
    else:
        j = searchsorted(xp, x, side="right") - 1
        j = where(less(j, 0), 0, where(greater(j, n - 2), n - 2, j))
        x0, x1, y0, y1 = take(xp, j), take(xp, j + 1), take(fp, j), take(fp, j + 1)
        slope = (y1 - y0) / (x1 - x0)
        f = where(equal(x, x0), y0, slope * (x - x0) + y0)  # NumPy's: no inf * 0 at a node
        # NumPy's fallbacks for a NaN (infinite slope): from the right end, then y0
        alt = slope * (x - x1) + y1
        alt = where(logical_and(isnan(alt), equal(y0, y1)), y0, alt)
        f = where(isnan(f), alt, f)
        f = where(equal(x, xp[n - 1]), fp[n - 1], f)
    f = where(less(x, xp[0]), fp[0] if left is None else left, f)
    f = where(greater(x, xp[n - 1]), fp[n - 1] if right is None else right, f)
    return reshape(f, shape)


def _parts(v):
    """(real, imag) of a complex left/right value, (None, None) for None (a Tensor is split
    on its device, not read back)."""
    if isinstance(v, Tensor):
        return (real(v), imag(v)) if v.dtype.kind == "c" else (v, 0.0)
    return (None, None) if v is None else (complex(v).real, complex(v).imag)


def interp(x, xp, fp, left=None, right=None, period=None) -> Tensor:
    """Piecewise-linear interpolation of (xp, fp) at x (xp increasing, not checked, as in
    NumPy); left/right for x outside xp (default fp's end values); period for angles.
    float64 result (complex128 for complex fp)."""
    dev = next((t.device for t in (x, xp, fp) if isinstance(t, Tensor)), None)
    x, xp, fp = _arr(x, dev), _arr(xp, dev), _arr(fp, dev)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("hipfer.interp: xp and fp must be 1-D sequences")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("hipfer.interp: fp and xp are not of the same length.")
    if xp.shape[0] == 0:
        raise ValueError("hipfer.interp: array of sample points is empty")
    if x.dtype.kind == "c" or xp.dtype.kind == "c":
        raise TypeError("hipfer.interp: x and xp must be real")
    f64 = _dtypes.float64
    x, xp = cast(x, f64), cast(xp, f64)
    if period is not None:
        if period == 0:
            raise ValueError("hipfer.interp: period must be a non-zero value")
        period = abs(period)
        left = right = None
        x, xp = remainder(x, period), remainder(xp, period)
        order = argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = concat([xp[-1:] - period, xp, xp[0:1] + period])
        fp = concat([fp[-1:], fp, fp[0:1]])
    if fp.dtype.kind == "c":
        fp = cast(fp, _dtypes.complex128)
        (lr, li), (rr, ri) = _parts(left), _parts(right)
        re = _interp_real(x, xp, real(fp), lr, rr)
        im = _interp_real(x, xp, imag(fp), li, ri)
        out = zeros(re.shape, dtype=_dtypes.complex128, device=re.device)
        out.real, out.imag = re, im
        return out
    return cast(_interp_real(x, xp, cast(fp, f64), left, right), f64)


# ------------------------------------------------------------------ predicates
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    """|a - b| <= atol + rtol * |b| elementwise (b cast to a float dtype as NumPy does;
    infinities close only to themselves); equal_nan makes NaN close to NaN."""
    x, y = _pair(a, b)
    _broadcast("isclose", x.shape, y.shape)
    y = cast(y, _dtypes.result_type(y.dtype, _dtypes.float64) if y.dtype.kind in "biu"
             else y.dtype)
    rt = _arr(rtol, x.device) if not isinstance(rtol, (int, float)) else rtol
    at = _arr(atol, x.device) if not isinstance(atol, (int, float)) else atol
    diff_ = abs_(x - y) if x.dtype.kind != "b" else abs_(cast(x, y.dtype) - y)
    res = logical_or(logical_and(less_equal(diff_, at + rt * abs_(y)), isfinite(y)),
                     equal(x, y))
    if equal_nan:
        res = logical_or(res, logical_and(isnan(x), isnan(y)))
    return res


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether isclose holds everywhere: a Python bool (reads one scalar back)."""
    return bool(all_(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def _equal(a: Tensor, b: Tensor) -> Tensor:
    """equal(a, b), also for a signed integer with uint64 (no common integer dtype; NumPy 2
    compares them exactly): a negative value equals no unsigned one."""
    if {a.dtype.kind, b.dtype.kind} == {"i", "u"} and _dtypes.uint64 in (a.dtype, b.dtype):
        s, u = (a, b) if a.dtype.kind == "i" else (b, a)
        return logical_and(greater(s, -1), equal(cast(s, _dtypes.uint64), u))
    return equal(a, b)


def array_equal(a1, a2, equal_nan=False) -> bool:
    """Same shape and equal elements (equal_nan: NaN equals NaN): a Python bool (reads
    one scalar back)."""
    a, b = _pair(a1, a2)
    if a.shape != b.shape:
        return False
    eq = _equal(a, b)
    if equal_nan and (a.dtype.kind in "fc" or b.dtype.kind in "fc"):
        eq = logical_or(eq, logical_and(isnan(a), isnan(b)))
    return bool(all_(eq))


def array_equiv(a1, a2) -> bool:
    """Shapes broadcast and elements equal: a Python bool (reads one scalar back)."""
    a, b = _pair(a1, a2)
    try:
        broadcast_shapes(a.shape, b.shape)
    except ValueError:  # NumPy's answer for shapes that do not broadcast
        return False
    return bool(all_(_equal(a, b)))


# ------------------------------------------------------------------ bits
def _bit_shifts(bitorder: str, device, fn: str) -> Tensor:
    """The shift of each of a byte's 8 bits, in order: 7..0 ('big') or 0..7 ('little')."""
    if bitorder not in ("big", "little"):
        raise ValueError(f"hipfer.{fn}: 'order' must be either 'little' or 'big'")
    w = arange(8, dtype=_dtypes.uint8, device=device)
    return flip(w) if bitorder == "big" else w


def packbits(a, /, axis=None, bitorder="big") -> Tensor:
    """Pack the truth values of a (bool or integer) into uint8 along axis (None: the
    flattened a), 8 per byte, the last byte padded with zeros."""
    x = _arr(a)
    if x.dtype.kind not in "biu":
        raise TypeError("hipfer.packbits: Expected an input array of integer or boolean data type")
    if axis is None or x.ndim == 0:  # the flattened x (0-d: as 1-d, as in NumPy)
        x, axis = reshape(x, (-1,)), 0 if axis is None else axis
    axis = _axis(axis, x.ndim, "packbits")
    shifts = _bit_shifts(bitorder, x.device, "packbits")
    bits = cast(not_equal(moveaxis(x, axis, -1), 0), _dtypes.uint8)
    n = bits.shape[-1]
    if n % 8:
        bits = concat([bits, zeros(bits.shape[:-1] + (8 - n % 8,), dtype=_dtypes.uint8,
                                   device=x.device)], axis=-1)
    groups = reshape(bits, bits.shape[:-1] + (bits.shape[-1] // 8, 8))
    packed = cast(sum_(bitwise_left_shift(groups, shifts), axis=-1), _dtypes.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, /, axis=None, count=None, bitorder="big") -> Tensor:
    """Unpack the uint8 a into its bits along axis (None: the flattened a); count keeps
    that many bits (negative: drops them from the end; more: pads zeros)."""
    x = _arr(a)
    if x.dtype != _dtypes.uint8:
        raise TypeError("hipfer.unpackbits: Expected an input array of unsigned byte data type")
    if axis is None or x.ndim == 0:  # the flattened x (0-d: as 1-d, as in NumPy)
        x, axis = reshape(x, (-1,)), 0 if axis is None else axis
    axis = _axis(axis, x.ndim, "unpackbits")
    shifts = _bit_shifts(bitorder, x.device, "unpackbits")
    y = moveaxis(x, axis, -1)
    bits = bitwise_and(bitwise_right_shift(reshape(y, y.shape + (1,)), shifts), 1)
    bits = reshape(bits, y.shape[:-1] + (y.shape[-1] * 8,))
    if count is not None:
        if not isinstance(count, (int, np.integer)):
            raise TypeError("hipfer.unpackbits: count must be an integer or None")
        total = bits.shape[-1]
        if count < -total:
            raise ValueError("hipfer.unpackbits: -count larger than number of elements")
        keep = int(count) if count >= 0 else total + int(count)
        if keep <= total:
            bits = bits[..., :keep]
        else:
            bits = concat([bits, zeros(bits.shape[:-1] + (keep - total,), dtype=_dtypes.uint8,
                                       device=x.device)], axis=-1)
    return moveaxis(bits, -1, axis)
