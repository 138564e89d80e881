"""Every kind of kernel argument the CuPy backend builds, made by hipfer's own code where
it is a function (shape_arg, struct_arg, tiling_arg, _as_scalar, ...), else as the backend
spells it inline; tests/test_cupy_api.py packs them through CuPy 13.3's rules.

Run as a script (``python tests/_kernel_args.py [--stub-cupy]``) it prints the pickled list
of (label, value) pairs, so tests run it in a subprocess: with --stub-cupy (no CuPy
installed) an empty ``cupy`` module stands in for the import of hipfer.backends.cupy,
whose module-level code reads only ``cupy.ndarray``. ``battery()``: values on both sides
of CuPy 13.3's rules, to check a model of them against the real thing.
"""
from __future__ import annotations

import pickle
import sys
import types
from pathlib import Path

import numpy as np

#: an address standing in for device memory (radix's workspace pointers are ints)
ADDRESS = 0x7F00_0000_0000


class FakeArray:
    """The .data.ptr of a device array, for the helpers that test alignment."""

    def __init__(self, ptr=ADDRESS):
        self.data = types.SimpleNamespace(ptr=ptr)
        self.itemsize = 4


def _stub_cupy():
    """An importable stand-in for CuPy (hipfer.backends.cupy reads cupy.ndarray on import)."""
    for name in ("cupy", "cupyx"):
        mod = types.ModuleType(name)
        mod.ndarray = type("ndarray", (), {})
        sys.modules[name] = mod


def collect() -> list:
    """[(label, value)]: every argument kind (see the module doc)."""
    from hipfer.backends.cupy import _engine as eng
    from hipfer.backends.cupy import elementwise, indexing, reduction, rng
    from hipfer.kernels import CTYPE
    from hipfer.kernels import indexing as kidx
    from hipfer.kernels import radix
    from hipfer.kernels import rng as krng
    from hipfer.nn._batchnorm import gpu as bn
    from hipfer.nn._batchnorm import kernels as kbn
    from hipfer.nn._blas import gpu as fused_blas
    from hipfer.nn._conv import gpu as fused_conv
    from hipfer.nn._logic.ops import log_tiny
    from hipfer.nn._lrp import gpu as fused_lrp
    from hipfer.prims import descriptors as d

    out = []

    def add(label, v):
        if isinstance(v, tuple):  # helpers that make several arguments
            for k, x in enumerate(v):
                add(f"{label}[{k}]", x)
        else:
            out.append((label, v))

    # hf::Shape / hf::Strides and the structs by value (0-d structured arrays)
    add("shape_arg((2, 3))", eng.shape_arg((2, 3)))
    add("shape_arg(())", eng.shape_arg(()))
    add("strides_arg((3, 1))", eng.strides_arg((3, 1)))
    for op, pool in (("max_pool", True), ("im2col", False)):
        desc = d.Fused.of(op, kernel=(3, 3), stride=(2, 2), padding=(1, 1), dilation=(1, 1))
        cols = fused_conv._cols(desc, 2, 3, 9, 16)
        add(f"fused_conv COLS ({op})", cols)
        add(f"fused_conv GEOM ({op})",
            fused_conv._geom(desc, (8, 8), pool, None if pool else int(cols["tap"])))
    add("fused_lrp POOL_GEOM", eng.struct_arg(
        fused_lrp.POOL_GEOM, zip(fused_lrp.POOL_GEOM.names, (8, 8, 4, 4, 2, 2, 2, 2, 0, 0))))
    for merge in (True, False):
        fields, _ = kbn.tiling(4, 3, 1000, 4, merge=merge)
        add(f"fused_batchnorm TILING (merge={merge})", kbn.tiling_arg(fields))
    fields, _ = kbn.rows_tiling(2, 8, 100, 4, 4)
    add("fused_batchnorm ROWS_TILING", kbn.tiling_arg(fields, kbn.ROWS_TILING))

    # scalars of every dtype the kernels take: NumPy's exact scalar types
    values = (0, 1, -1, 2.5, True, 1 + 2j, np.float64(0.5), np.int64(3), np.bool_(True))
    for dt in CTYPE:
        add(f"{dt}.type(1)", dt.type(1))
        for v in values:
            if dt.kind not in "c" and isinstance(v, complex):
                continue  # complex to real warns, as in NumPy; the backends never do it
            add(f"elementwise._as_scalar({v!r}, {dt})", elementwise._as_scalar(v, dt))
        coefs = reduction._Coefs(dt)
        add(f"reduction._Coefs[{dt}](1, 0)", coefs(1, 0))
        add(f"reduction._Coefs[{dt}](2, 3)", coefs(2, 3))
    for dt in (np.dtype(np.float32), np.dtype(np.float64)):
        add(f"fused_logic log_tiny({dt})", log_tiny(dt))
    add("elementwise._conj_mask", elementwise._conj_mask(
        (np.dtype(np.complex64), np.dtype(np.float32)), (True, False)))
    add("fused_blas._aligned", fused_blas._aligned(FakeArray(), FakeArray(ADDRESS + 4)))
    add("fused_batchnorm._aligned", bn._aligned(FakeArray()))
    add("rng Integer range", rng._Rng(krng.integer_expr, "iu").extra_args(
        d.Integer(low=-5, high=2 ** 64 - 7)))
    add("rng seed", np.uint64(int(-3) & krng.MASK64))
    add("fused_activation threshold", np.float32(0.25))
    add("np.int64 size", np.int64(2 ** 40))
    add("np.int32 flag", np.int32(7))
    add("np.float64 correction", np.float64(1.0))
    add("np.bool_ conj", np.bool_(False))
    add("semiring null pointer np.uintp(0)", np.uintp(0))
    add("the error flag / an absent operand: None", None)
    # geometry tuples built by the launchers (grid_for reads the device: fixed here)
    indexing.grid_for = lambda n, *a, **k: 1
    add("indexing.Gather args", indexing.Gather._args((3, 1), (2, 3), 1, (5, 1), (0, 1),
                                                      (3, 1))[1])
    # radix's launches: workspace addresses as Python ints, None for absent buffers
    plan = radix.plan(1000, 300, runs=True)
    steps, *_ = radix.launches(plan, FakeArray(), 300, None, ADDRESS)
    for expr, blocks, threads, args in steps:
        for k, v in enumerate(args):
            if not isinstance(v, FakeArray):  # the keys: a device array
                add(f"radix {expr} args[{k}]", v)
    add("size-1 ndarray", np.ones(1, np.float32))
    add("kidx.size_of as int", kidx.size_of((2, 3)))
    return out


def battery() -> list:
    """[(label, value)]: values CuPy 13.3 packs and values it rejects."""
    struct = np.zeros((), np.dtype([("a", "<i8"), ("b", "<i4")], align=True))
    vals = [("np.void (a struct's scalar)", struct[()]),
            ("np.longdouble", np.longdouble(1)), ("np.clongdouble", np.clongdouble(1)),
            ("np.datetime64", np.datetime64(1, "s")), ("np.timedelta64", np.timedelta64(1)),
            ("np.str_", np.str_("a")), ("np.bytes_", np.bytes_(b"a")), ("str", "a"),
            ("bytes", b"ab"), ("list", [1]), ("tuple", (1,)), ("object", object()),
            ("size-2 ndarray", np.zeros(2, np.int32)), ("size-0 ndarray", np.zeros(0)),
            ("0-d ndarray", np.asarray(2.0)), ("0-d struct ndarray", struct),
            ("(1, 1) ndarray", np.zeros((1, 1), np.int8)),
            ("int", 3), ("big int", 2 ** 63 - 1), ("too big int", 2 ** 64), ("bool", True),
            ("float", 1.5), ("complex", 1j), ("None", None)]
    for c in "?bhilqpBHILQPefdFDgG":
        vals.append((f"np.dtype({c!r}).type", np.dtype(c).type(0)))
    return vals


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    if "--stub-cupy" in sys.argv:
        _stub_cupy()
    sys.stdout.buffer.write(pickle.dumps({"collect": collect(), "battery": battery()}))
