"""Fused conv ops on NumPy (the reference; rules in ops.py).

Every op loops over the kh*kw taps of the window in order (i, then j) and handles all
windows of one tap as one strided slice of the padded plane. The GPU kernels sum in
the same tap order, so the two agree bit for bit.
"""
from __future__ import annotations

import numpy as np

from ...prims.fused_ops import makers
from . import ops
from .ops import bad_argmax, geometry, knl


def _taps(k, s, d, o):
    """(i, j, rows, cols): tap (i, j) of every window, as slices of the padded plane."""
    for i in range(k[0]):
        for j in range(k[1]):
            yield (i, j, slice(i * d[0], i * d[0] + s[0] * (o[0] - 1) + 1, s[0]),
                   slice(j * d[1], j * d[1] + s[1] * (o[1] - 1) + 1, s[1]))


def _padded(x, p, fill=0):
    return np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])), constant_values=fill)


def _inside(o, s, p, k, n, a):
    """Window start (in x) of each output position along axis a, and its tap validity
    (a (o, k) mask: the tap reads x, not padding)."""
    start = np.arange(o[a]) * s[a] - p[a]
    pos = start[:, None] + np.arange(k[a])[None, :]
    return start, (pos >= 0) & (pos < n)


def _im2col(desc, dtypes, shapes, outs):
    n, c, h, w = shapes[0]
    k, s, p, d, o = geometry(desc, (h, w))

    def run(inputs, out):
        xp = _padded(inputs[0], p)
        cols = _columns(desc, out, n, c, k, o)
        for i, j, ri, rj in _taps(k, s, d, o):
            cols[:, :, i, j] = xp[:, :, ri, rj]
    return run


def _columns(desc, a, n, c, k, o):
    """Columns of either layout as an (n, c, kh, kw, oh, ow) view."""
    if knl(desc):
        return a.reshape(c, k[0], k[1], n, o[0], o[1]).transpose(3, 0, 1, 2, 4, 5)
    return a.reshape(n, c, k[0], k[1], o[0], o[1])


def _col2im_add(desc, dtypes, shapes, outs):
    (n, c, h, w), dt = outs[0]
    k, s, p, d, o = geometry(desc, (h, w))

    def run(inputs, out):
        cols = _columns(desc, inputs[0], n, c, k, o)
        xp = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), dt)
        for i, j, ri, rj in _taps(k, s, d, o):
            xp[:, :, ri, rj] += cols[:, :, i, j]
        out[...] = xp[:, :, p[0]:p[0] + h, p[1]:p[1] + w]
    return run


def _max_pool(desc, dtypes, shapes, outs):
    n, c, h, w = shapes[0]
    k, s, p, d, o = geometry(desc, (h, w), pool=True)
    y0, vy = _inside(o, s, p, k, h, 0)
    x0, vx = _inside(o, s, p, k, w, 1)

    def run(inputs, out):
        y, arg = out
        xp = _padded(inputs[0], p)
        arg[...] = -1
        for i, j, ri, rj in _taps(k, s, d, o):
            v = xp[:, :, ri, rj]
            # the first valid tap, then a larger value or the first NaN; padding never
            take = (arg < 0) | (v > y) | (np.isnan(v) & ~np.isnan(y))
            take &= (vy[:, i][:, None] & vx[:, j][None, :])
            np.copyto(y, v, where=take)
            np.copyto(arg, (y0 + i)[:, None] * w + (x0 + j)[None, :], where=take)
    return run


def _window_taps(desc, arg, h, w, k, s, p, o):
    """The tap (ti, tj) of each argmax within its window; IndexError for the first
    argmax (C order) that is not an input position inside its window."""
    y0 = (np.arange(o[0]) * s[0] - p[0])[:, None]
    x0 = (np.arange(o[1]) * s[1] - p[1])[None, :]
    ay, ax = np.divmod(arg, w)
    ti, tj = ay - y0, ax - x0
    ok = (arg >= 0) & (arg < h * w) & (ti >= 0) & (ti < k[0]) & (tj >= 0) & (tj < k[1])
    if not ok.all():
        pos = int(np.argmin(ok.reshape(-1)))
        raise IndexError(bad_argmax(desc, pos, int(arg.reshape(-1)[pos])))
    return ti, tj


def _max_unpool(desc, dtypes, shapes, outs):
    (n, c, h, w), dt = outs[0]
    k, s, p, d, o = geometry(desc, (h, w), pool=True)

    def run(inputs, out):
        g, arg = inputs
        ti, tj = _window_taps(desc, arg, h, w, k, s, p, o)
        xp = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), dt)
        zero = dt.type(0)
        for i, j, ri, rj in _taps(k, s, d, o):
            xp[:, :, ri, rj] += np.where((ti == i) & (tj == j), g, zero)
        out[...] = xp[:, :, p[0]:p[0] + h, p[1]:p[1] + w]
    return run


def _divisor(desc, h, w, k, s, p, o, dt):
    """The (oh, ow) divisor of each window: k*k, or its count of input elements."""
    if desc.get("count_include_pad"):
        return dt.type(k[0] * k[1])
    vy = _inside(o, s, p, k, h, 0)[1].sum(1)
    vx = _inside(o, s, p, k, w, 1)[1].sum(1)
    return (vy[:, None] * vx[None, :]).astype(dt)


def _avg_pool(desc, dtypes, shapes, outs):
    n, c, h, w = shapes[0]
    k, s, p, d, o = geometry(desc, (h, w), pool=True)
    dt = outs[0][1]
    div = _divisor(desc, h, w, k, s, p, o, dt)

    def run(inputs, out):
        xp = _padded(inputs[0], p)
        acc = np.zeros(out.shape, dt)
        for _, _, ri, rj in _taps(k, s, d, o):
            acc += xp[:, :, ri, rj]
        np.divide(acc, div, out=out)
    return run


def _avg_pool_backward(desc, dtypes, shapes, outs):
    (n, c, h, w), dt = outs[0]
    k, s, p, d, o = geometry(desc, (h, w), pool=True)
    div = _divisor(desc, h, w, k, s, p, o, dt)

    def run(inputs, out):
        g = inputs[0] / div
        xp = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), dt)
        for _, _, ri, rj in _taps(k, s, d, o):
            xp[:, :, ri, rj] += g
        out[...] = xp[:, :, p[0]:p[0] + h, p[1]:p[1] + w]
    return run


MAKERS = makers(ops.OPS, {
    ops.IM2COL: _im2col, ops.COL2IM_ADD: _col2im_add, ops.MAX_POOL: _max_pool,
    ops.MAX_UNPOOL: _max_unpool, ops.AVG_POOL: _avg_pool,
    ops.AVG_POOL_BACKWARD: _avg_pool_backward})
