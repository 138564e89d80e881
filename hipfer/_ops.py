"""The one path from a namespace function to a backend: descriptor -> plan -> execute.

``run(desc, tensors)`` finds the (single) device of the operands, asks its backend for
the cached plan (keyed by descriptor, dtypes, shapes, and strides on backends that
specialise on layout, plus the lazy-conjugation flags), allocates the outputs and
executes. Everything in the namespace goes through here.
"""
from __future__ import annotations

from typing import Optional, Sequence

from ._device import Device
from .prims.registry import get_backend


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
        from ._device import get_default_device
        dev = get_default_device()
    return dev


def run_arrays(be, desc, datas: Sequence, conj: Optional[tuple] = None, out=None,
               out_shape: Optional[tuple] = None, **params):
    """Plan and execute on backend arrays; returns the output array (or tuple).
    out_shape: the output shape, for descriptors whose plan takes it (AntiTrace)."""
    strides = tuple(a.strides for a in datas) if be.wants_strides else None
    shapes = tuple(a.shape for a in datas) + ((tuple(out_shape),) if out_shape is not None else ())
    p = be.plan(desc, tuple(a.dtype for a in datas), shapes, strides=strides, conj=conj)
    if out is None:
        if len(p.outs) == 1:
            out = be.empty(*p.outs[0])
        else:
            out = tuple(be.empty(s, dt) for s, dt in p.outs)
    be.execute(p, datas, out, **params)
    return out


def run(desc, tensors: Sequence, out=None, device: Optional[Device] = None,
        out_shape: Optional[tuple] = None, **params):
    """Run desc on hipfer Tensors; returns the raw output array(s) (wrap with Tensor)."""
    dev = device if device is not None else device_of(tensors)
    be = get_backend(dev)
    conj = tuple(t._conj for t in tensors)
    return run_arrays(be, desc, [t._data for t in tensors],
                      conj if any(conj) else None, out, out_shape, **params)


def generate(desc, shape, dtype, device: Device, out=None, **params):
    """Run a descriptor with no inputs (Generate, Uniform, Normal, Integer)."""
    be = get_backend(device)
    p = be.plan(desc, (dtype,), (tuple(shape),))
    if out is None:
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
        conj = tuple(t._conj for t in tensors)
        key = (be, tuple(a.strides for a in datas), conj)
        if key != self._key:
            shapes = tuple(a.shape for a in datas)
            if out_shape is not None:
                shapes += (tuple(out_shape),)
            self._plan = be.plan(self.desc, tuple(a.dtype for a in datas), shapes,
                                 strides=key[1] if be.wants_strides else None,
                                 conj=conj if any(conj) else None)
            self._key = key
        outs = self._plan.outs
        out = be.empty(*outs[0]) if len(outs) == 1 else tuple(be.empty(s, t) for s, t in outs)
        be.execute(self._plan, datas, out)
        return out
