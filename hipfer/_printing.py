"""Printing: NumPy's array2string, array_repr, array_str and its print options.

hipfer keeps no print options of its own: it uses NumPy's, so ``np.set_printoptions``
(and ``np.printoptions``) change how tensors print exactly as they change ndarrays, and
``hipfer.set_printoptions`` / ``get_printoptions`` / ``printoptions`` are NumPy's under
hipfer's name. Formatting needs the values on the host: each function here copies the
elements it shows, and only those -- above the threshold, the corners (edgeitems per
side and axis) are gathered on the device first and only they are copied.
"""
from __future__ import annotations

import numpy as np

from ._manipulation import concat
from ._tensor import Tensor

__all__ = ["array2string", "array_repr", "array_str", "base_repr", "binary_repr",
           "format_float_positional", "format_float_scientific", "get_printoptions",
           "printoptions", "set_printoptions"]


def _corners(x: Tensor, axis: int, edge: int) -> Tensor:
    """x's leading and trailing edge elements along every axis from axis on that is
    longer than 2 * edge, with one more element between them (never shown: it makes
    NumPy summarise the axis), gathered on the device."""
    if axis == x.ndim:
        return x
    n = x.shape[axis]
    if n <= 2 * edge:
        return _corners(x, axis + 1, edge)
    pre = (slice(None),) * axis
    lead = _corners(x[pre + (slice(0, edge),)], axis + 1, edge)
    trail = _corners(x[pre + (slice(n - edge, n),)], axis + 1, edge)
    return concat([lead, lead[pre + (slice(edge - 1, edge),)], trail], axis=axis)


def shown(x: Tensor, threshold=None, edgeitems=None):
    """(the host values that printing x shows, the threshold to format them with):
    all of x up to the threshold (NumPy's print option unless given), else only its
    corners, formatted with threshold 0 so that NumPy summarises them."""
    opts = np.get_printoptions()
    threshold = opts["threshold"] if threshold is None else threshold
    edgeitems = opts["edgeitems"] if edgeitems is None else edgeitems
    if x.size <= threshold or edgeitems < 1:
        return x._host(), threshold
    return _corners(x, 0, edgeitems)._host(), 0


def _host(a, name: str, threshold=None, edgeitems=None):
    """(host data, threshold) for a Tensor; NumPy data and array_likes as they are."""
    if isinstance(a, Tensor):
        return shown(a, threshold, edgeitems)
    if isinstance(a, np.ndarray):
        return a, threshold
    raise TypeError(f"hipfer.{name}: expected a Tensor or an ndarray, got {type(a).__name__}")


def array2string(a, max_line_width=None, precision=None, suppress_small=None, separator=" ",
                 prefix="", *, formatter=None, threshold=None, edgeitems=None, sign=None,
                 floatmode=None, suffix="", legacy=None):
    """NumPy's array2string of a tensor's values (copies only the elements shown); the
    deprecated style= is not taken (NumPy 2.4 has dropped it)."""
    host, thr = _host(a, "array2string", threshold, edgeitems)
    return np.array2string(host, max_line_width, precision, suppress_small, separator, prefix,
                           formatter=formatter, threshold=thr, edgeitems=edgeitems, sign=sign,
                           floatmode=floatmode, suffix=suffix, legacy=legacy)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """repr(arr) with these options: ``tensor([...], dtype=...)`` (with the device when
    it is not the CPU) for a tensor, as its repr; NumPy's array_repr for an ndarray."""
    if not isinstance(arr, Tensor):
        return np.array_repr(arr, max_line_width, precision, suppress_small)
    host, thr = shown(arr)
    body = np.array2string(host, max_line_width, precision, suppress_small, separator=", ",
                           prefix="tensor(", threshold=thr)
    dev = "" if arr.device.kind == "cpu" else f", device='{arr.device}'"
    return f"tensor({body}, dtype={arr.dtype}{dev})"


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """NumPy's str of the values: ``[1 2 3]`` (a 0-d tensor: its scalar's str)."""
    if not isinstance(a, Tensor):
        return np.array_str(a, max_line_width, precision, suppress_small)
    host, thr = shown(a)
    if host.ndim == 0:
        return np.array_str(host, max_line_width, precision, suppress_small)
    return np.array2string(host, max_line_width, precision, suppress_small, " ", "",
                           threshold=thr)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     suppress=None, nanstr=None, infstr=None, formatter=None, sign=None,
                     floatmode=None, *, legacy=None, override_repr=None):
    """NumPy's set_printoptions: the options are NumPy's, shared by tensors and ndarrays."""
    np.set_printoptions(precision=precision, threshold=threshold, edgeitems=edgeitems,
                        linewidth=linewidth, suppress=suppress, nanstr=nanstr, infstr=infstr,
                        formatter=formatter, sign=sign, floatmode=floatmode, legacy=legacy,
                        override_repr=override_repr)


def get_printoptions():
    """NumPy's current print options (a dict), which tensors print with."""
    return np.get_printoptions()


def printoptions(*args, **kwargs):
    """A context manager setting NumPy's (and so hipfer's) print options in the block."""
    return np.printoptions(*args, **kwargs)


# ------------------------------------------------------------------ one number as text
def _value(x):
    """A Python or NumPy scalar as it is; a 0-d tensor's value (one explicit sync)."""
    if isinstance(x, Tensor):
        if x.ndim:
            raise TypeError(f"expected a scalar or a 0-d tensor, got a {x.ndim}-d tensor")
        return x.to_device("cpu")._data[()]
    return x


def binary_repr(num, width=None) -> str:
    """NumPy's binary_repr: num (an int or a 0-d integer tensor) in base 2, two's
    complement of width bits for negative numbers when width is given."""
    return np.binary_repr(int(_value(num)), width)


def base_repr(number, base=2, padding=0) -> str:
    """NumPy's base_repr: number (an int or a 0-d integer tensor) in base (2..36), with
    padding zeros on the left."""
    return np.base_repr(int(_value(number)), base, padding)


def format_float_positional(x, precision=None, unique=True, fractional=True, trim="k",
                            sign=False, pad_left=None, pad_right=None, min_digits=None) -> str:
    """NumPy's format_float_positional of a float or a 0-d float tensor (its value and
    dtype: float16/32 print their own shortest digits)."""
    return np.format_float_positional(_value(x), precision, unique, fractional, trim, sign,
                                      pad_left, pad_right, min_digits)


def format_float_scientific(x, precision=None, unique=True, trim="k", sign=False,
                            pad_left=None, exp_digits=None, min_digits=None) -> str:
    """NumPy's format_float_scientific of a float or a 0-d float tensor."""
    return np.format_float_scientific(_value(x), precision, unique, trim, sign, pad_left,
                                      exp_digits, min_digits)

