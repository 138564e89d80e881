"""Fused conv ops on the GPU (fused_conv.cuh)."""
from __future__ import annotations

import cupy
import numpy as np

from ...backends.cupy._engine import BLOCK, device_props, error_flag, get_kernels, struct_arg
from ...prims.fused_ops import makers
from . import kernels as K, ops
from .ops import bad_argmax, geometry, knl

#: hf::conv_geom, field for field
GEOM = np.dtype([(f, "<i4") for f in ("h", "w", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw",
                                      "dh", "dw")], align=True)
#: hf::conv_cols: where the columns of plane n*C + c lie (im2col, col2im_add)
COLS = np.dtype([("sample", "<i8"), ("channels", "<i4"), ("tap", "<i4")], align=True)


#: rows of a plane one thread of any op here owns (HF_CONV_ROWS in fused_conv.cuh)
ROWS = 8


def _geom(desc, hw, pool, tap=None):
    """hf::conv_geom of the op; tap: the columns' tap stride (im2col, col2im_add)."""
    k, s, p, d, o = geometry(desc, hw, pool=pool)
    sizes = [hw[0] * hw[1], o[0] * o[1], k[0] * k[1] * o[0] * o[1]]
    if not pool:
        # im2col / col2im_add's 32-bit offsets: a thread's rows and taps run up to ROWS
        # rows (strides) and taps (dilations) past the padded plane, and to ROWS column
        # rows past the columns, as addresses formed but not used
        span = [hw[a] + 2 * p[a] + (ROWS + 1) * (s[a] + d[a]) for a in (0, 1)]
        sizes += [span[0] * span[1], (k[0] * k[1] + ROWS) * tap + ROWS * o[1] + span[1]]
    else:
        # the pools' 32-bit offsets: a thread's rows run up to ROWS rows (strides) and a
        # window past the padded plane, its window rows up to ROWS + kernel past oh
        sizes.append((hw[0] + 2 * p[0] + (ROWS + 1) * (s[0] + k[0]))
                     * (hw[1] + 2 * p[1] + (ROWS + 1) * (s[1] + k[1])))
    if max(sizes) >= 2 ** 31:
        raise ValueError(f"{desc!r}: planes of 2^31 or more elements are not supported on the GPU")
    return struct_arg(GEOM, zip(GEOM.names, hw + o + k + s + p + d))


def _kernel(op: str, dt):
    """One kernel of the group: the group compiles once, on first use, for all ops."""
    exprs = K.instances()[0][2]
    return get_kernels(K.FILE, exprs)[exprs.index(K.expr(op, dt))]


def _launch_rows(threads: int):
    """(grid, block) for every op here: one thread per ROWS rows of a column of a plane,
    threads in one 1-d grid (grid-stride beyond 32 blocks an SM)."""
    cap = device_props(cupy.cuda.runtime.getDevice())["sm_count"] * 32
    return (max(1, min(-(-threads // BLOCK), cap)),), (BLOCK,)


def _row_threads(gather, g, planes):
    """The threads an op uses (the kernels' per_plane, times planes): ROWS output rows
    of a column (im2col, the pool forwards), or ROWS input rows of one phase modulo the
    stride (the gathers: col2im_add, max_unpool, avg_pool_backward)."""
    if not gather:
        return planes * -(-int(g["oh"]) // ROWS) * int(g["ow"])
    sh = int(g["sh"])
    return planes * -(-int(g["h"]) // (ROWS * sh)) * sh * int(g["w"])


def _im2col_rows(g) -> bool:
    """im2col's row tiling pays on wide planes at vertical stride 1 only (fused_conv.cuh,
    fused_im2col_pos); elsewhere a thread takes one output position."""
    return int(g["sh"]) == 1 and int(g["ow"]) >= 32


def _cols(desc, n, c, kk, L):
    """hf::conv_cols of the columns (N, C*kk, L), or (C*kk, N, L) for layout "knl"."""
    vals = (c, L, n * L) if knl(desc) else (1, kk * L, L)
    return struct_arg(COLS, zip(("channels", "sample", "tap"), vals))


def _maker(pool, gather, count_pad=False):
    """make(desc, dtypes, shapes, outs) -> run for the op's own kernel (kernels.py names
    each after its op); a thread owns output rows, or input rows (x's) when the op gathers.
    count_pad: the kernel takes count_include_pad (the average pools)."""
    def make(desc, dtypes, shapes, outs):
        n, c, h, w = outs[0][0] if gather else shapes[0]
        cols = None
        if not pool:
            k, _, _, _, o = geometry(desc, (h, w))
            cols = _cols(desc, n, c, k[0] * k[1], o[0] * o[1])
        g = _geom(desc, (h, w), pool, None if pool else int(cols["tap"]))
        planes = n * c
        name, threads = desc.op, _row_threads(gather, g, planes)
        if desc.op == ops.IM2COL.name and not _im2col_rows(g):
            name, threads = "im2col_pos", planes * int(g["oh"]) * int(g["ow"])
        grid, block = _launch_rows(threads)
        kernel = _kernel(name, outs[0][1])
        tail = (np.int64(planes), g)
        if count_pad:
            tail += (np.bool_(desc.get("count_include_pad")),)
        elif cols is not None:
            tail += (cols,)

        def run(inputs, out):
            if planes:
                kernel(grid, block, tuple(inputs) + (out if isinstance(out, tuple) else (out,)) + tail)
        return run
    return make


def _max_unpool(desc, dtypes, shapes, outs):
    (n, c, h, w), dt = outs[0]
    planes = n * c
    g = _geom(desc, (h, w), True)
    kernel = _kernel(desc.op, dt)
    grid, block = _launch_rows(_row_threads(True, g, planes))

    def run(inputs, out):
        if planes:
            flag = error_flag()
            kernel(grid, block, (inputs[0], inputs[1], out, np.int64(planes), g, flag.buf))
            arg = inputs[1].reshape(-1)
            flag.check(lambda pos: IndexError(bad_argmax(desc, pos, int(arg[pos]))))
    return run


MAKERS = makers(ops.OPS, {
    ops.IM2COL: _maker(pool=False, gather=False), ops.COL2IM_ADD: _maker(pool=False, gather=True),
    ops.MAX_POOL: _maker(pool=True, gather=False), ops.MAX_UNPOOL: _max_unpool,
    ops.AVG_POOL: _maker(pool=True, gather=False, count_pad=True),
    ops.AVG_POOL_BACKWARD: _maker(pool=True, gather=True, count_pad=True)})
