"""Elementwise families on the GPU: one kernel launch per call, kernels of
kernels/elementwise.cuh named by hipfer.kernels.elementwise.

``make`` does all the work once: broadcasts the input strides to the output shape,
precomputes the launch (kernel, grid, merged geometry) for a C-contiguous ``out`` and
compiles the kernel pair (vector / N-d). ``run`` then checks ``out`` (shape, dtype,
layout) and the pointer alignment and launches: the vector kernel when every operand is
dense in the output's memory order and aligned, the tiled kernel when an input is laid
out transposed to the output, else the N-d kernel (see ``_Launcher``).

Plans made without strides (``plan(..., strides=None)``) assume C-contiguous inputs and
check that at run time.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import cupy
import numpy as np

from ...kernels import CTYPE
from ...kernels import elementwise as ek
from ...kernels import polyval as pk
from ...kernels.indexing import c_strides
from ...prims import descriptors as d
from ...prims.infer import real_dtype
from ...prims.optable import BinaryOp, UnaryOp
from . import _engine as eng

_GEOM_CACHE = 64  # strided-out layouts remembered per launcher


def _c_strides(shape) -> tuple:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def _as_scalar(value, dt: np.dtype):
    """value as a NumPy scalar of dtype dt (unsafe cast, as the NumPy backend does): the
    exact C++ type of a T kernel parameter."""
    return np.asarray(value).astype(dt)[()]


def _conj_mask(dtypes, conj) -> np.int32:
    """Bit k set: read input k conjugated (only complex inputs can be)."""
    return np.int32(sum(1 << k for k, (c, dt) in enumerate(zip(conj, dtypes)) if c and dt.kind == "c"))


def _known(dtypes) -> bool:
    return all(dt in CTYPE for dt in dtypes)


_ND, _TILE = 1, 2
_TILE_MIN = 16  # both tiled axes at least this long, else the N-d kernel
#: blocks of the N-d kernel over a transposed input: BLOCKED_A rows of the tiled axis by
#: BLOCKED_RUNS runs of the output's inner axis (BLOCKED_A * BLOCKED_RUNS = eng.BLOCK runs)
BLOCKED_A, BLOCKED_RUNS = 32, 8


def _tile_axis(shape, strides):
    """The axis (not the last) to tile with the last one, or None: an input that has unit
    stride there but neither unit nor zero stride on the last axis -- the N-d kernel
    would read it one element per memory transaction. strides: inputs..., then out."""
    if len(shape) < 2 or shape[-1] < _TILE_MIN:
        return None
    for s in strides[:-1]:
        if abs(s[-1]) > 1:
            for ax in range(len(shape) - 2, -1, -1):
                if abs(s[ax]) == 1 and shape[ax] >= _TILE_MIN:
                    return ax
    return None


def _blocked(shape, strides, ax: int, run: int):
    """shape and strides with axis ax and the last one cut into blocks of a by b elements
    and the block axes moved out: (..., ax / a, last / b, a, b), a = BLOCKED_A and
    b = BLOCKED_RUNS runs of the N-d kernel, both halved down to what divides the axes
    (None if not even 8 and one run do). The N-d kernel then walks one a x b block per
    thread block, so a block reads the transposed input's a-long runs and the other
    operands' b-long ones together, from L1, instead of one element per transaction."""
    last = len(shape) - 1
    a, b = BLOCKED_A, BLOCKED_RUNS * run
    while a > 8 and shape[ax] % a:
        a //= 2
    while b > run and shape[last] % b:
        b //= 2
    if shape[ax] % a or shape[last] % b or len(shape) + 2 > eng.MAX_NDIM:
        return None
    rest = [k for k in range(last) if k != ax]
    shape2 = tuple(shape[k] for k in rest) + (shape[ax] // a, shape[last] // b, a, b)
    strides2 = [tuple(s[k] for k in rest) + (s[ax] * a, s[last] * b, s[ax], s[last]) for s in strides]
    return shape2, strides2


class _Launcher:
    """One elementwise kernel pair (vec may be None) over fixed input layouts and output shape/dtype:
    ``launcher(inputs, out, *scalars)`` launches once (nothing when the output is empty).

    Per output layout (C-contiguous: made up front; others: remembered by strides) the axes
    are put in the output's memory order (descending |stride|, NumPy's order 'K') and
    merged; then
      * every operand dense in that order (rank 1, unit strides) or a broadcast scalar
        (stride 0, bit k of ``splat``): the vector kernel when the pointers are aligned
        (else the N-d kernel at rank 1);
      * an input laid out transposed to the output (``_tile_axis``): for a copy, the tiled
        kernel over that axis and the output's innermost, moved last (compiled on first
        use); for other ops, the N-d kernel over blocks of those axes (``_blocked``);
      * else the N-d kernel, grid sized by its runs.
    Generate kernels (no inputs) keep C order: iota's values are C-order positions.
    """

    def __init__(self, pair, in_dtypes, in_shapes, in_strides, out_shape, out_dtype, lead=()):
        self.out_shape, self.out_dtype = tuple(out_shape), np.dtype(out_dtype)
        self.n = math.prod(self.out_shape)
        self.n64 = np.int64(self.n)
        self.check_inputs = in_strides is None and len(in_dtypes) > 0
        self.lead = tuple(lead)  # scalar arguments passed before each call's own (see _Mapped)
        self.fresh_vec = None  # (masks, arguments after the pointers) of run_fresh's vector launch
        if in_strides is None:  # C-contiguous inputs (checked in run)
            in_strides = [tuple(s * dt.itemsize for s in _c_strides(sh)) for sh, dt in zip(in_shapes, in_dtypes)]
        self.in_es = [eng.broadcast_strides(sh, eng.elem_strides(st, dt.itemsize), self.out_shape)
                      for sh, st, dt in zip(in_shapes, in_strides, in_dtypes)]
        if self.n == 0:
            return
        # kernels with inputs: axes in the output's memory order, `splat` on the vector path
        self.has_inputs = len(in_dtypes) > 0
        kernels = eng.get_kernels(ek.FILE, tuple(e for e in pair if e is not None))
        self.vec, self.nd = (kernels[0] if pair[0] is not None else None), kernels[-1]
        self.tile_expr = ek.tile_of(pair) if len(in_dtypes) > 0 else None
        self._tile = None
        sizes = [dt.itemsize for dt in in_dtypes] + [self.out_dtype.itemsize]
        width = ek.vec_width(*in_dtypes, self.out_dtype)  # vec_width<...> of elementwise.cuh
        self.run = ek.nd_run(*in_dtypes, self.out_dtype)  # nd_run<...> of elementwise.cuh
        self.tile_shape = ek.tile_shape(*in_dtypes, self.out_dtype)  # tile_geom<...> of elementwise.cuh
        self.masks = [width * s - 1 for s in sizes]  # each operand's vector-access alignment
        self.grid_vec = (eng.grid_for(self.n, width),)
        self.block = (eng.BLOCK,)
        self.c_bytes = tuple(s * self.out_dtype.itemsize for s in _c_strides(self.out_shape))
        self.lay_c = self._layout(_c_strides(self.out_shape))
        self.geom_strided: dict = {}
        if self.lay_c[0] is not None and not self.check_inputs:
            self.fresh_vec = (self.lay_c[0], self.lay_c[1] + self.lead)

    @staticmethod
    def _geometry(shape, strides) -> tuple:
        return (eng.shape_arg(shape),) + tuple(eng.strides_arg(s) for s in strides)

    def _layout(self, out_es) -> tuple:
        """(vector-kernel alignment masks or None, the vector kernel's arguments after the
        pointers (n[, splat]), N-d kernel kind, grid, geometry) for an out with these
        element strides."""
        shape, ins, os_ = self.out_shape, self.in_es, tuple(out_es)
        if self.has_inputs and len(shape) > 1:
            order = sorted(range(len(shape)), key=lambda k: -abs(os_[k]))
            shape = tuple(shape[k] for k in order)
            ins = [tuple(s[k] for k in order) for s in ins]
            os_ = tuple(os_[k] for k in order)
        shape, strides = eng.collapse(shape, *ins, os_)
        vmasks, vtail = None, ()
        if (self.vec is not None and len(shape) == 1 and strides[-1] == (1,)
                and all(s in ((1,), (0,)) for s in strides[:-1])):
            splat = np.int32(sum(1 << k for k, s in enumerate(strides[:-1]) if s == (0,)))
            vmasks = tuple(0 if s == (0,) else m for s, m in zip(strides, self.masks))
            vtail = (self.n64, splat) if self.has_inputs else (self.n64,)
        ax = _tile_axis(shape, strides) if self.has_inputs else None
        if ax is not None and self.tile_expr is not None:
            last = len(shape) - 1
            order = [k for k in range(last) if k != ax] + [ax, last]
            shape = tuple(shape[k] for k in order)
            strides = [tuple(s[k] for k in order) for s in strides]
            grid = (eng.grid_for(ek.tiles(shape, *self.tile_shape), 1, block=1),)
            return vmasks, vtail, _TILE, grid, self._geometry(shape, strides)
        if ax is not None:
            shape, strides = _blocked(shape, strides, ax, self.run) or (shape, strides)
        return vmasks, vtail, _ND, (eng.grid_for(ek.nd_runs(shape, self.run)),), self._geometry(shape, strides)

    def _strided_out(self, out) -> tuple:
        """The layout of an out that is not C-contiguous (remembered per strides)."""
        key = out.strides
        g = self.geom_strided.get(key)
        if g is None:
            if len(self.geom_strided) >= _GEOM_CACHE:
                self.geom_strided.clear()
            g = self.geom_strided[key] = self._layout(eng.elem_strides(key, self.out_dtype.itemsize))
        return g

    def _tiled(self):
        if self._tile is None:
            self._tile = eng.get_kernels(ek.FILE, (self.tile_expr,))[0]
        return self._tile

    def _bad_out(self, out):
        return ValueError(f"out has shape {out.shape} and dtype {out.dtype}; the plan writes shape "
                          f"{self.out_shape} and dtype {self.out_dtype}")

    def run_fresh(self, inputs: Sequence, out) -> None:
        """__call__ (no per-call scalars) for an out the backend has just allocated:
        C-contiguous, of the plan's shape and dtype, so nothing about it is checked -- the
        warm path of Backend.runner, where a tiny op's time is all host time."""
        fv = self.fresh_vec
        if fv is None or not self.vec(self.grid_vec, self.block, (*inputs, out, *fv[1]), align=fv[0]):
            self(inputs, out)

    def __call__(self, inputs: Sequence, out, *scalars) -> None:
        # the warm path of a tiny op is host-bound: strides compared as a tuple (cheaper
        # than out.flags), the alignment checked by the launch itself
        if out.shape != self.out_shape or out.dtype != self.out_dtype:
            raise self._bad_out(out)
        if self.n == 0:
            return
        if self.check_inputs and not all(a.flags.c_contiguous for a in inputs):
            raise ValueError("this plan was made without strides, for C-contiguous inputs; "
                             "plan with strides=tuple(a.strides for a in inputs)")
        vm, vtail, kind, grid, geom = (self.lay_c if out.strides == self.c_bytes or out.flags.c_contiguous
                                       else self._strided_out(out))
        if self.lead:
            scalars = self.lead + scalars
        if vm is not None and self.vec(self.grid_vec, self.block, (*inputs, out, *vtail, *scalars), align=vm):
            return
        if kind == _ND:
            self.nd(grid, self.block, (*inputs, out, self.n64, *geom, *scalars))
        else:
            self._tiled()(grid, (ek.TILE_BLOCK,), (*inputs, out, self.n64, *geom, *scalars))


def _launcher(pair, dtypes, shapes, strides, outs, lead=()) -> _Launcher:
    (out_shape, out_dtype), = outs
    return _Launcher(pair, dtypes, shapes, strides, out_shape, out_dtype, lead)


def _lazy(make: Callable[[], _Launcher]) -> Callable[[], _Launcher]:
    """A launcher built (and its kernels compiled) on first use only."""
    box: list = []

    def get() -> _Launcher:
        if not box:
            box.append(make())
        return box[0]
    return get


# ------------------------------------------------------------------ handlers
class _Handler:
    """supports/make pair; subclasses say which dtypes and build ``run``."""

    def supports(self, desc, dtypes) -> bool:
        return dtypes is None or (_known(dtypes) and self.accepts(desc, dtypes))

    def accepts(self, desc, dtypes) -> bool:
        return True


class _Mapped(_Handler):
    """One launch of a kernel pair over the broadcast operands, conj folded at load;
    subclasses name the pair (``kernels(desc, dtypes)``) and the dtypes they take."""

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        # run(inputs, out) is the launcher itself: no wrapper frame on the warm path
        return _launcher(self.kernels(desc, dtypes), dtypes, shapes, strides, outs,
                         lead=(_conj_mask(dtypes, conj),))


class _Unary(_Mapped):
    """ScalarUnary, AnalyticUnary, ComplexRealUnary: out = op(x)."""

    def accepts(self, desc, dtypes):
        return dtypes[0].kind in desc.op.row.kinds

    def kernels(self, desc, dtypes):
        return ek.unary(desc.op.row, dtypes[0])


class _ComplexReal(_Unary):
    def accepts(self, desc, dtypes):
        return dtypes[0].kind == "c" and desc.op in (UnaryOp.ABS, UnaryOp.REAL, UnaryOp.IMAG)


class _Binary(_Mapped):
    """ScalarBinary, AnalyticBinary, MetadataBinary: out = op(a, b) (broadcasting)."""

    def accepts(self, desc, dtypes):
        return all(dt.kind in desc.op.row.kinds for dt in dtypes)

    def kernels(self, desc, dtypes):
        return ek.binary(desc.op.row, dtypes[0])


class _MetadataBinary(_Binary):
    """Bool/integer tensors; takes some ops beyond their row's kinds (bool subtract)."""

    def accepts(self, desc, dtypes):
        return desc.op in ek.METADATA_OPS and all(dt.kind in "biu" for dt in dtypes)


class _Where(_Mapped):
    """ScalarWhere, MetadataWhere, MaskWhere: out = cond ? a : b."""

    def __init__(self, kinds: str):
        self.kinds = kinds

    def accepts(self, desc, dtypes):
        return dtypes[0] == np.bool_ and all(dt.kind in self.kinds for dt in dtypes[1:])

    def kernels(self, desc, dtypes):
        return ek.where(dtypes[1])


class _Cast(_Mapped):
    """PointwiseCast: out = x.astype(dtype), conjugation folded in."""

    def accepts(self, desc, dtypes):
        return desc.dtype in CTYPE

    def kernels(self, desc, dtypes):
        return ek.cast(dtypes[0], desc.dtype)


class _ComplexScale(_Mapped):
    """out = a * s, a complex, s real of the same precision."""

    def accepts(self, desc, dtypes):
        return dtypes[0].kind == "c" and tuple(dtypes[1:]) == (real_dtype(dtypes[0]),)

    def kernels(self, desc, dtypes):
        return ek.complex_scale(dtypes[0])


class _Generate(_Handler):
    """CONSTANT: out[...] = value; IOTA: out[i] = start + i * step (C order)."""

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        launch = _launcher(ek.generate(desc.kind, dtypes[0]), (), (), (), outs)
        work = ek.generate_work_dtype(desc.kind, dtypes[0])
        if desc.kind is d.GenerateKind.CONSTANT:
            def run(inputs, out, value=0):
                v = _as_scalar(value, work)
                launch((), out, v, v)
        else:
            def run(inputs, out, start=0, step=1):
                launch((), out, _as_scalar(start, work), _as_scalar(step, work))
        return run


def _plain_or_scaled(plain: _Launcher, scaled, cj: int, dt):
    """run(inputs, out, alpha=1, beta=0): the plain kernel for alpha == 1, beta == 0,
    else the (lazily compiled) scaled one computing alpha * r + beta * out."""
    def run(inputs, out, alpha=1, beta=0):
        if alpha == 1 and beta == 0:
            plain(inputs, out, cj)
        else:
            scaled()(inputs, out, cj, _as_scalar(alpha, dt), _as_scalar(beta, dt))
    return run


class _MakeContiguous(_Handler):
    """out = alpha * x + beta * out, a copy when alpha == 1 and beta == 0."""

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        dt = dtypes[0]
        copy = _launcher(ek.cast(dt, dt), dtypes, shapes, strides, outs)
        scaled = _lazy(lambda: _launcher(ek.scaled_copy(dt), dtypes, shapes, strides, outs))
        cj = _conj_mask(dtypes, conj)

        return _plain_or_scaled(copy, scaled, cj, dt)


class _ElementwiseBinary(_Handler):
    """out = alpha * (a op b) + beta * out over a semiring (op: its sum or product).
    Tropical: alpha == 1 and beta in (0, 1); beta == 1 accumulates with the semiring sum."""

    def accepts(self, desc, dtypes):
        kinds = "iuf" if desc.semiring.is_tropical else "biufc"
        return desc.op in (BinaryOp.ADD, BinaryOp.MUL) and all(dt.kind in kinds for dt in dtypes)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        dt, sr = dtypes[0], desc.semiring
        plain = _launcher(ek.semiring_plain(desc.op, sr, dt), dtypes, shapes, strides, outs)
        scaled = _lazy(lambda: _launcher(ek.semiring_scaled(desc.op, sr, dt), dtypes, shapes, strides, outs))
        cj = _conj_mask(dtypes, conj)
        if sr.is_tropical:
            one = _as_scalar(1, dt)

            def run(inputs, out, alpha=1, beta=0):
                sr.check_scale(alpha, beta)
                if beta == 0:
                    plain(inputs, out, cj)
                else:
                    scaled()(inputs, out, cj, one, one)
            return run

        return _plain_or_scaled(plain, scaled, cj, dt)


class _Polyval:
    """Polyval: kernels/polyval.cuh, a thread per element of x running Horner's rule over
    p (device memory), any layout of p, x and out (element strides); a conjugated complex
    operand is conjugated into a copy first."""

    def supports(self, desc, dtypes) -> bool:
        return dtypes is None or (len(dtypes) == 2 and dtypes[0] == dtypes[1]
                                  and dtypes[0] in CTYPE)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        dt = dtypes[0]
        (kernel,) = eng.get_kernels(pk.FILE, (pk.polyval_expr(dt),))
        flags = tuple(bool(c) and dt.kind == "c" for c in (conj or (False, False)))
        n_p = np.int64(shapes[0][0])
        shape = tuple(shapes[1])
        # a conjugated operand is read from its C-contiguous conjugated copy
        p_st = np.int64(1 if flags[0] else eng.elem_strides(strides[0], dt.itemsize)[0])
        x_st = c_strides(shape) if flags[1] else eng.elem_strides(strides[1], dt.itemsize)
        n = math.prod(shape)
        args = (np.int64(n), eng.shape_arg(shape), eng.strides_arg(x_st))
        grid = (eng.grid_for(max(n, 1)),)

        def run(inputs, out):
            if not n:
                return
            p, x = (cupy.ascontiguousarray(cupy.conj(a)) if f else a
                    for a, f in zip(inputs, flags))
            ost = eng.strides_arg(eng.elem_strides(out.strides, out.itemsize))
            kernel(grid, (eng.BLOCK,), (p, n_p, p_st, x, out) + args + (ost,))
        return run


HANDLERS = {
    d.ScalarUnary: _Unary(),
    d.AnalyticUnary: _Unary(),
    d.ComplexRealUnary: _ComplexReal(),
    d.ScalarBinary: _Binary(),
    d.AnalyticBinary: _Binary(),
    d.MetadataBinary: _MetadataBinary(),
    d.ScalarWhere: _Where("biufc"),
    d.MetadataWhere: _Where("biu"),
    d.MaskWhere: _Where("fc"),
    d.PointwiseCast: _Cast(),
    d.ComplexScale: _ComplexScale(),
    d.Generate: _Generate(),
    d.MakeContiguous: _MakeContiguous(),
    d.ElementwiseBinary: _ElementwiseBinary(),
    d.Polyval: _Polyval(),
}
