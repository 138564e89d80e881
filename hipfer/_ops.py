"""The one path from a namespace function to a backend: descriptor -> plan -> execute.

``run(desc, tensors)`` finds the (single) device of the operands, asks its backend for
the cached plan (keyed by descriptor, dtypes, shapes, and strides on backends that
specialise on layout, plus the lazy-conjugation flags), allocates the outputs and
executes. Everything in the namespace goes through here.

``Site(desc)`` is the same path for a descriptor fixed once (an elementwise function, a
cast to one dtype, the scalar fill). Its warm call is one lookup in the backend's
``plans.sites`` table under a flat key -- the backend found from the operands' array
type instead of through the registry, the descriptor not hashed -- then one execute.
"""
from __future__ import annotations

import re
from typing import Optional, Sequence

import numpy as np

from ._device import CPU, Device, get_default_device
from ._tensor import _is_cupy
from .prims.registry import get_backend

_ndarray = np.ndarray
_cpu: list = []  # [the NumPy backend] once asked for
_gpu: dict = {}  # CuPy device id -> its backend


def device_of(tensors) -> Device:
    dev = None
    for t in tensors:
        d = t.device
        if dev is None:
            dev = d
        elif d != dev:
            raise ValueError(f"operands are on different devices ({dev} and {d}); "
                             "move them with to_device() first")
    if dev is None:
        dev = get_default_device()
    return dev


def _cpu_backend():
    if not _cpu:
        _cpu.append(get_backend(CPU))
    return _cpu[0]


_gpu_types: set = set()  # the CuPy array types met so far


def backend_of_data(data):
    """The backend of the device that holds this backend array -- what
    ``get_backend(Tensor(data).device)`` gives -- found from the array's type."""
    t = type(data)
    if t is _ndarray:
        return _cpu[0] if _cpu else _cpu_backend()
    if t in _gpu_types or _is_cupy(data):
        _gpu_types.add(t)
        index = data.data.device_id  # the allocation's device (no cupy.cuda.Device made)
        be = _gpu.get(index)
        if be is None:
            be = _gpu[index] = get_backend(Device("gpu", index))
        return be
    return _cpu_backend()


def backend_of(tensors):
    """The backend of the operands' common device (the default device's when there are
    none); operands on different devices raise ValueError, as device_of does."""
    be = None
    for t in tensors:
        b = backend_of_data(t._data)
        if be is None:
            be = b
        elif b is not be:
            return get_backend(device_of(tensors))  # raises, naming both devices
    return be if be is not None else get_backend(device_of(tensors))


def _alloc(be, outs):
    """The output array of a one-output plan, else the tuple of its outputs."""
    if len(outs) == 1:
        return be.empty(*outs[0])
    return tuple(be.empty(s, dt) for s, dt in outs)


def layout_perm(out_shape, arrays):
    """NumPy's order='K' for an elementwise output, simplified: the axis order (outermost
    first, by decreasing |stride|) shared by every operand that has the output's full
    shape and a nonzero stride on every axis longer than 1; None for C order, for no such
    operand, or when they disagree (NumPy then gives C order too; on the CPU an out laid
    out like one operand and against the other runs at half NumPy's speed). Axes of
    length 1 go outermost (their place does not change the memory order)."""
    if len(out_shape) < 2:
        return None
    shape = tuple(out_shape)
    big = [i for i, n in enumerate(shape) if n > 1]
    found = None
    for a in arrays:
        if a.shape != shape:
            continue
        st = a.strides
        if any(st[i] == 0 for i in big):
            continue  # a broadcast view says nothing about the layout wanted
        order = sorted(big, key=lambda i: -abs(st[i]))  # stable: ties keep the axis order
        if found is None:
            found = order
        elif order != found:
            return None
    if found is None or found == big:
        return None
    return tuple(i for i, n in enumerate(shape) if n <= 1) + tuple(found)


def run_arrays(be, desc, datas: Sequence, conj: Optional[tuple] = None, out=None,
               out_shape: Optional[tuple] = None, **params):
    """Plan and execute on backend arrays; returns the output array (or tuple).
    out_shape: the output shape, for descriptors whose plan takes it (AntiTrace)."""
    if len(datas) == 1:
        a = datas[0]
        strides = (a.strides,) if be.wants_strides else None
        shapes, dtypes = (a.shape,), (a.dtype,)
    else:
        strides = tuple([a.strides for a in datas]) if be.wants_strides else None
        shapes, dtypes = tuple([a.shape for a in datas]), tuple([a.dtype for a in datas])
    if out_shape is not None:
        shapes += (tuple(out_shape),)
    p = be.plan(desc, dtypes, shapes, strides=strides, conj=conj)
    if out is None:
        outs = p.outs
        out = _alloc(be, outs)
    be.execute(p, datas, out, **params)
    return out


def run(desc, tensors: Sequence, out=None, device: Optional[Device] = None,
        out_shape: Optional[tuple] = None, called: Optional[str] = None, **params):
    """Run desc on hipfer Tensors; returns the raw output array(s) (wrap with Tensor).
    called: the public function this serves, named in the errors (as_called)."""
    if called is not None:
        try:
            return run(desc, tensors, out, device, out_shape, **params)
        except (ValueError, TypeError, IndexError) as e:
            raise as_called(e, called) from None
    if len(tensors) == 1:
        t = tensors[0]
        a = t._data
        if device is not None:
            be = get_backend(device)
        elif type(a) is _ndarray and _cpu:
            be = _cpu[0]
        else:
            be = backend_of_data(a)
        return run_arrays(be, desc, [a], (True,) if t._conj else None, out, out_shape, **params)
    be = backend_of(tensors) if device is None else get_backend(device)
    conj = tuple([t._conj for t in tensors])
    return run_arrays(be, desc, [t._data for t in tensors],
                      conj if True in conj else None, out, out_shape, **params)


def generate(desc, shape, dtype, device: Device, out=None, **params):
    """Run a descriptor with no inputs (Generate, Uniform, Normal, Integer)."""
    be = get_backend(device)
    p = be.plan(desc, (dtype,), (tuple(shape),))
    if out is None:
        out = be.empty(*p.outs[0])
    be.execute(p, (), out, **params)
    return out


_HEAD = re.compile(r"^[A-Z]\w*(\([^)]*\))?: ")  # "ScalarBinary: ", "ScalarReduce(MAX): "


def as_called(e: Exception, fn: Optional[str]) -> Exception:
    """e with the descriptor named at the head of its message (the prims' rules name the
    descriptor they check: "ScalarBinary: shapes ... cannot be broadcast together")
    replaced by the function the user called: "add(): shapes ...". The exception type is
    kept, so ``except`` clauses written for NumPy still match."""
    msg = str(e)
    if not fn or not _HEAD.match(msg):
        return e
    try:
        new = type(e)(_HEAD.sub(f"{fn}(): ", msg, count=1))
    except Exception:  # an exception type that takes other arguments: keep it as it is
        return e
    new.__cause__ = e.__cause__
    return new


class Site:
    """One fixed descriptor run from one place of the namespace, many times.

    ``run1(x)`` / ``run2(a, b)`` / ``run(tensors)`` do what ``run(desc, tensors)`` does,
    and ``generate(be, shape, dtype, **params)`` what ``generate`` does, with the plan
    looked up in ``be.plans.sites`` under (site, dtypes, shapes[, strides], conj flags):
    the first call of a key plans through ``Backend.plan`` (validation, the main plan
    cache) and files the plan's ``Backend.runner`` there (allocate, execute), so errors
    are raised by the same code as ever, naming ``fn`` (the public function the site
    serves) where they named the descriptor (``as_called``)."""
    __slots__ = ("desc", "keep_layout", "fn")

    def __init__(self, desc, keep_layout: bool = False, fn: Optional[str] = None):
        # keep_layout: an elementwise site writes its output in the layout of its first
        # full-size operand (NumPy's order='K'), so exp(x.T) streams x and out in order
        self.desc, self.keep_layout, self.fn = desc, keep_layout, fn

    def __repr__(self):
        return f"Site({self.desc!r})"

    def run1(self, x):
        """desc on one Tensor; returns the raw output array(s)."""
        a = x._data
        be = _cpu[0] if type(a) is _ndarray and _cpu else backend_of_data(a)
        cj = x._conj
        if be.wants_strides or self.keep_layout:  # the output layout follows the strides
            key = (self, a.dtype, a.shape, a.strides, cj)
        else:
            key = (self, a.dtype, a.shape, cj)
        sites = be.plans.sites
        hit = sites.get(key)
        if hit is None:
            try:
                p = be.plan(self.desc, (a.dtype,), (a.shape,),
                            strides=(a.strides,) if be.wants_strides else None,
                            conj=(True,) if cj else None)
            except (ValueError, TypeError, IndexError) as e:
                raise as_called(e, self.fn) from None
            hit = be.runner(p, self._out_perm(p, (a,)))
            be.plans.put_site(key, hit)
        return hit([a])

    def _out_perm(self, p, arrays):
        """The axis order to allocate the output in, or None for C order (see keep_layout)."""
        if not self.keep_layout or len(p.outs) != 1:
            return None
        return layout_perm(p.outs[0][0], arrays)

    def run2(self, x, y):
        """desc on two Tensors; returns the raw output array(s)."""
        a, b = x._data, y._data
        ta = type(a)
        if ta is _ndarray and type(b) is _ndarray and _cpu:
            be = _cpu[0]
        elif ta in _gpu_types and type(b) is ta and (i := a.data.device_id) == b.data.device_id:
            be = _gpu.get(i) or backend_of_data(a)  # the warm GPU case, inline
        else:
            be = backend_of_data(a)
            if backend_of_data(b) is not be:
                be = backend_of((x, y))  # raises, naming both devices
        ca, cb = x._conj, y._conj
        if be.wants_strides or self.keep_layout:
            key = (self, a.dtype, b.dtype, a.shape, b.shape, a.strides, b.strides, ca, cb)
        else:
            key = (self, a.dtype, b.dtype, a.shape, b.shape, ca, cb)
        sites = be.plans.sites
        hit = sites.get(key)
        if hit is None:
            try:
                p = be.plan(self.desc, (a.dtype, b.dtype), (a.shape, b.shape),
                            strides=(a.strides, b.strides) if be.wants_strides else None,
                            conj=(ca, cb) if ca or cb else None)
            except (ValueError, TypeError, IndexError) as e:
                raise as_called(e, self.fn) from None
            hit = be.runner(p, self._out_perm(p, (a, b)))
            be.plans.put_site(key, hit)
        return hit([a, b])

    def run(self, tensors: Sequence):
        """desc on any number of Tensors; returns the raw output array(s)."""
        if len(tensors) == 1:
            return self.run1(tensors[0])
        if len(tensors) == 2:
            return self.run2(tensors[0], tensors[1])
        return run(self.desc, tensors)

    def generate(self, be, shape: tuple, dtype, **params):
        """desc (no inputs) into a new array of shape and dtype on backend be."""
        key = (self, dtype, shape)
        p = be.plans.sites.get(key)
        if p is None:
            p = be.plan(self.desc, (dtype,), (tuple(shape),))
            be.plans.put_site(key, p)
        out = be.empty(*p.outs[0])
        be.execute(p, (), out, **params)
        return out


class CallSite:
    """One prim call inside a plan that is replayed many times (einsum's steps). It keeps
    the backend plan for the last (backend, strides, conj) it saw -- shapes and dtypes are
    fixed by the replayed plan -- so a warm call skips run()'s device lookup, descriptor
    hash and plan-key construction: one tuple comparison, then execute."""
    __slots__ = ("desc", "_key", "_plan")

    def __init__(self, desc):
        self.desc, self._key, self._plan = desc, None, None

    def __call__(self, be, tensors: Sequence, out_shape: Optional[tuple] = None):
        datas = [t._data for t in tensors]
        conj = tuple([t._conj for t in tensors])
        key = (be, tuple([a.strides for a in datas]), conj)
        if key != self._key:
            shapes = tuple([a.shape for a in datas])
            if out_shape is not None:
                shapes += (tuple(out_shape),)
            self._plan = be.plan(self.desc, tuple([a.dtype for a in datas]), shapes,
                                 strides=key[1] if be.wants_strides else None,
                                 conj=conj if True in conj else None)
            self._key = key
        outs = self._plan.outs
        out = _alloc(be, outs)
        be.execute(self._plan, datas, out)
        return out
