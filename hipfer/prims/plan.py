"""Plans and the plan cache shared by every backend.

A backend is a ``Backend`` subclass that registers one *family implementation* per
family it has. A family implementation is any object with

    supports(desc, dtypes) -> bool                    # may this backend run it at all
    make(desc, dtypes, shapes, outs, strides, conj) -> run(inputs, out, **params)

``Backend.plan`` validates once (``infer``), asks the family for its ``run`` callable and
caches the resulting ``Plan`` under (desc, dtypes, shapes, strides, conj): a warm call is
one dict lookup. ``Backend`` then implements every family Protocol of ``protocols.py``.
"""
from __future__ import annotations

import abc
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .descriptors import family_of
from .infer import infer, probe_shapes
from .protocols import SUPPORT_METHOD


class Plan:
    """What a backend decided for one (desc, dtypes, shapes[, strides, conj])."""
    __slots__ = ("desc", "dtypes", "shapes", "strides", "conj", "outs", "run")

    def __init__(self, desc, dtypes, shapes, strides, conj, outs, run):
        self.desc, self.dtypes, self.shapes = desc, dtypes, shapes
        self.strides, self.conj, self.outs, self.run = strides, conj, outs, run

    @property
    def out_shape(self) -> tuple:
        return self.outs[0][0]

    @property
    def out_dtype(self) -> np.dtype:
        return self.outs[0][1]

    def __repr__(self):
        return f"Plan({self.desc!r}, dtypes={[str(t) for t in self.dtypes]}, shapes={self.shapes})"


class PlanCache:
    """Insertion-ordered dict with a size bound (oldest entries leave first).

    ``sites`` is a second table for callers that run one fixed descriptor many times
    (``hipfer._ops.Site``): it maps a flat key -- (site, dtypes..., shapes...[, strides...],
    conj flags...) -- to what the site replays for it (``Backend.runner`` of the plan that
    ``Backend.plan`` returned, or that plan), so a warm call neither builds the nested plan
    key nor hashes the descriptor (a dataclass hash, in Python). Its plans are the same
    objects as in the main table, and ``clear`` empties both."""

    def __init__(self, capacity: int = 8192):
        self.capacity = capacity
        self._d: dict = {}
        self.sites: dict = {}

    def get(self, key):
        return self._d.get(key)

    def put(self, key, plan):
        if len(self._d) >= self.capacity:
            self._d.pop(next(iter(self._d)))
        self._d[key] = plan

    def put_site(self, key, plan):
        if len(self.sites) >= self.capacity:
            self.sites.pop(next(iter(self.sites)))
        self.sites[key] = plan

    def __len__(self):
        return len(self._d)

    def clear(self):
        self._d.clear()
        self.sites.clear()


class Handlers:
    """A family implementation assembled from per-descriptor-type handlers.

    Backend modules export ``HANDLERS = {DescriptorType: handler}``; a handler has the
    same ``supports`` / ``make`` pair as a family implementation.
    """

    def __init__(self, handlers: dict):
        self.handlers = handlers

    def supports(self, desc, dtypes) -> bool:
        h = self.handlers.get(type(desc))
        return h is not None and h.supports(desc, dtypes)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        return self.handlers[type(desc)].make(desc, dtypes, shapes, outs, strides, conj)

    def why_not(self, desc, dtypes) -> str:
        """A handler's optional ``why_not(desc, dtypes)`` reason for not supporting desc."""
        h = self.handlers.get(type(desc))
        return h.why_not(desc, dtypes) if hasattr(h, "why_not") else ""


def assemble_families(package: str, modules) -> dict:
    """family name -> Handlers, from the HANDLERS of each module package.<name>."""
    import importlib
    from .descriptors import FAMILY_OF
    by_family: dict = {}
    for name in modules:
        mod = importlib.import_module(f"{package}.{name}")
        for dtype_, handler in mod.HANDLERS.items():
            by_family.setdefault(FAMILY_OF[dtype_], {})[dtype_] = handler
    return {fam: Handlers(h) for fam, h in by_family.items()}


def _make_support(family: str) -> Callable:
    def has_support(self, desc, dtypes=None) -> bool:
        try:
            if family_of(desc) != family:
                return False
        except TypeError:
            return False
        return self._supports(desc, dtypes)
    has_support.__name__ = SUPPORT_METHOD[family]
    has_support.__doc__ = f"True when this backend can plan {family} descriptor desc (for dtypes, if given)."
    return has_support


class Backend(abc.ABC):
    """Base of the NumPy and CuPy backends: routing, validation and the plan cache."""
    name = "abstract"
    #: whether plan keys include operand strides (GPU kernels specialise on layout)
    wants_strides = False
    #: whether a 0-d operand made from a Python scalar is worth caching (device memory:
    #: an allocation and a fill launch each time otherwise); see hipfer._elementwise
    caches_scalars = False

    def __init__(self):
        self.families: dict[str, Any] = {}
        self.plans = PlanCache()

    # -- the family Protocols ----------------------------------------------------
    def plan(self, desc, dtypes: Sequence, shapes: Sequence[tuple], *,
             strides: Optional[Sequence[tuple]] = None,
             conj: Optional[Sequence[bool]] = None) -> Plan:
        key = (desc, tuple(dtypes), tuple(shapes), strides, conj)
        try:
            p = self.plans._d.get(key)
        except TypeError:
            raise TypeError(f"plan key is not hashable: descriptor {desc!r}, shapes {shapes!r}") from None
        if p is not None:
            return p
        impl = self._family(desc)
        dts = tuple(np.dtype(t) for t in dtypes)
        shps = tuple(tuple(int(n) for n in s) for s in shapes)
        outs = infer(desc, dts, shps)
        if not impl.supports(desc, dts):
            why = impl.why_not(desc, dts) if hasattr(impl, "why_not") else ""
            raise TypeError(f"{desc!r} with dtypes {[str(t) for t in dts]} is not supported "
                            f"by the {self.name} backend" + (f": {why}" if why else ""))
        cj = tuple(bool(c) for c in conj) if conj is not None else (False,) * len(dts)
        st = tuple(tuple(s) for s in strides) if strides is not None else None
        p = Plan(desc, dts, shps, st, cj, outs, impl.make(desc, dts, shps, outs, st, cj))
        self.plans.put(key, p)
        return p

    def execute(self, plan: Plan, inputs: Sequence, out, **params):
        plan.run(inputs, out, **params)
        return out

    def runner(self, plan: Plan, perm: Optional[tuple] = None) -> Callable:
        """fn(inputs) -> the new output array (a tuple for several outputs): what a
        hipfer._ops.Site replays at every warm call -- allocate the plan's outputs (the one
        output in axis order perm when given, see hipfer._ops.layout_perm), execute."""
        outs = plan.outs
        if len(outs) != 1:
            def run(inputs):
                out = tuple(self.empty(s, dt) for s, dt in outs)
                self.execute(plan, inputs, out)
                return out
        else:
            (shape, dt), = outs

            def run(inputs):
                out = self.empty(shape, dt) if perm is None else self.empty_permuted(shape, dt, perm)
                self.execute(plan, inputs, out)
                return out
        run.plan = plan  # what it runs, for tests and debugging
        return run

    def synchronize(self) -> None:
        """Wait for the work queued so far (nothing to wait for on the host)."""

    # -- helpers -----------------------------------------------------------------
    def _family(self, desc):
        fam = family_of(desc)
        impl = self.families.get(fam)
        if impl is None:
            raise TypeError(f"the {self.name} backend has no {fam} family (descriptor {desc!r})")
        return impl

    def _supports(self, desc, dtypes) -> bool:
        impl = self.families.get(family_of(desc))
        if impl is None:
            return False
        if dtypes is None:
            return impl.supports(desc, None)
        try:
            dts = tuple(np.dtype(t) for t in dtypes)
            infer(desc, dts, probe_shapes(desc, len(dts)))  # dtypes and parameters valid?
        except (TypeError, ValueError):
            return False
        return impl.supports(desc, dts)

    # -- memory ------------------------------------------------------------------
    @abc.abstractmethod
    def empty(self, shape, dtype):
        """An uninitialised C-contiguous backend array."""

    def empty_permuted(self, shape, dtype, perm):
        """An uninitialised array of this shape laid out in axis order perm (outermost
        first): a transposed view of a C-contiguous one."""
        buf = self.empty(tuple(shape[i] for i in perm), dtype)
        inv = [0] * len(perm)
        for j, i in enumerate(perm):
            inv[i] = j
        return buf.transpose(inv)

    @abc.abstractmethod
    def asarray(self, obj, dtype=None):
        """A backend array on this backend's device (copies only when it must)."""


for _family in SUPPORT_METHOD:
    setattr(Backend, SUPPORT_METHOD[_family], _make_support(_family))
