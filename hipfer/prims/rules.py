"""Shape and dtype rule helpers shared by the descriptors' ``infer`` and ``probe_shapes``.

This module sits below the descriptors: it imports none of them, so every module of
``hipfer.prims.descriptors`` can use it without an import circle, and
``hipfer.prims.infer`` re-exports its public dtype and shape helpers. A rule receives
dtypes as ``np.dtype`` and shapes as tuples of non-negative ints (``infer`` normalises
them first). Errors are TypeError (dtypes) and ValueError (shapes, modes, parameters),
each naming the descriptor; the tests match the messages, so change them with care.
"""
from __future__ import annotations

import numpy as np

from .optable import BinaryOp, ReduceOp, UnaryOp

INDEX_KINDS = "iu"


def real_dtype(dt: np.dtype) -> np.dtype:
    """complex64 -> float32, complex128 -> float64, else unchanged."""
    if dt.kind == "c":
        return np.dtype(np.float32) if dt.itemsize == 8 else np.dtype(np.float64)
    return dt


def complex_dtype(dt: np.dtype) -> np.dtype:
    if dt.kind == "c":
        return dt
    return np.dtype(np.complex64) if dt == np.float32 else np.dtype(np.complex128)


def broadcast_shapes(*shapes, what="operands") -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"{what}: shapes {', '.join(map(str, shapes))} cannot be broadcast "
                         "together") from None


def name(desc) -> str:
    return type(desc).__name__


def expect(desc, dtypes, shapes, n):
    if len(dtypes) != n or len(shapes) != n:
        raise ValueError(f"{name(desc)} takes {n} operand(s), got {len(dtypes)} dtype(s) and "
                         f"{len(shapes)} shape(s)")


def check_kind(desc, op_name, dt, kinds):
    if dt.kind not in kinds:
        raise TypeError(f"{name(desc)}({op_name}) does not support dtype {dt}")


def norm_axis(desc, axis, ndim):
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{name(desc)}: axis {axis} is out of range for {ndim}-d operand")
    return axis % max(ndim, 1)


def check_modes(desc, modes, shape, what="modes_a", allow_repeats=False):
    """label -> size for one operand, after checking that modes fit its shape."""
    if len(modes) != len(shape):
        raise ValueError(f"{name(desc)}: {what} {modes} has {len(modes)} labels but the "
                         f"operand has {len(shape)} axes")
    sizes = {}
    for m, n in zip(modes, shape):
        if m in sizes:
            if not allow_repeats:
                raise ValueError(f"{name(desc)}: label {m!r} repeats in {what} {modes}")
            if sizes[m] != n:
                raise ValueError(f"{name(desc)}: label {m!r} has sizes {sizes[m]} and {n}")
        sizes[m] = n
    return sizes


def out_modes(desc, modes_c, sizes, what="modes_c"):
    """The output shape of labels modes_c (no repeats), each of a known size."""
    if len(set(modes_c)) != len(modes_c):
        raise ValueError(f"{name(desc)}: {what} {modes_c} repeats a label")
    missing = [m for m in modes_c if m not in sizes]
    if missing:
        raise ValueError(f"{name(desc)}: output labels {missing} do not appear in the inputs")
    return tuple(sizes[m] for m in modes_c)


def nonempty_axis(desc, shape, axis):
    """The axis normalised, for a descriptor that works along one axis of a >= 1-d operand."""
    if len(shape) == 0:
        raise ValueError(f"{name(desc)}: needs at least one axis, got a 0-d operand")
    return norm_axis(desc, axis, len(shape))


# ------------------------------------------------------------------ elementwise
def unary(desc, dtypes, shapes, op: UnaryOp, family):
    expect(desc, dtypes, shapes, 1)
    row = op.row
    if row.family != family:
        raise ValueError(f"{name(desc)}: {op.name} belongs to the {row.family} family")
    dt = dtypes[0]
    check_kind(desc, op.name, dt, row.kinds)
    if row.result == "bool":  # isnan, isinf, isfinite, signbit
        out = np.dtype(np.bool_)
    else:
        out = real_dtype(dt) if row.result == "real" else dt
    return ((tuple(shapes[0]), out),)


def binary(desc, dtypes, shapes, op: BinaryOp, families, kinds=None):
    expect(desc, dtypes, shapes, 2)
    row = op.row
    if row.family not in families:
        raise ValueError(f"{name(desc)}: {op.name} is not one of this family's ops")
    a, b = dtypes
    if a != b:
        raise TypeError(f"{name(desc)}({op.name}): operand dtypes differ ({a} and {b}); "
                        "promote them first")
    check_kind(desc, op.name, a, kinds or row.kinds)
    out = np.dtype(np.bool_) if row.result == "bool" else a
    return ((broadcast_shapes(*shapes, what=name(desc)), out),)


def where(desc, dtypes, shapes, kinds):
    expect(desc, dtypes, shapes, 3)
    c, a, b = dtypes
    if c != np.bool_:
        raise TypeError(f"{name(desc)}: the condition must be bool, got {c}")
    if a != b:
        raise TypeError(f"{name(desc)}: value dtypes differ ({a} and {b})")
    check_kind(desc, "where", a, kinds)
    return ((broadcast_shapes(*shapes, what=name(desc)), a),)


def same(desc, dtypes, shapes):
    """One operand, whose shape and dtype the output keeps."""
    expect(desc, dtypes, shapes, 1)
    return ((shapes[0], dtypes[0]),)


# ------------------------------------------------------------------- reductions
def reduced_size(modes_a, modes_c, shape) -> int:
    n = 1
    for m, s in zip(modes_a, shape):
        if m not in modes_c:
            n *= s
    return n


def reduce_op(desc, ops):
    """desc.op must be one of its family's reductions."""
    if desc.op not in ops:
        raise ValueError(f"{name(desc)}: {desc.op.name} is not one of this family's reductions")


def reduction(desc, dtypes, shapes, op: ReduceOp, kinds=None):
    """op over the labels of desc.modes_a missing from desc.modes_c (kinds: op's own if None)."""
    expect(desc, dtypes, shapes, 1)
    dt = dtypes[0]
    sizes = check_modes(desc, desc.modes_a, shapes[0])
    out_shape = out_modes(desc, desc.modes_c, sizes)
    check_kind(desc, op.name, dt, kinds or op.kinds)
    if op in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.NANMAX, ReduceOp.NANMIN) \
            and reduced_size(desc.modes_a, desc.modes_c, shapes[0]) == 0 \
            and int(np.prod(out_shape)) > 0:
        raise ValueError(f"{name(desc)}({op.name}): zero-size reduction has no identity")
    if op in (ReduceOp.ALL, ReduceOp.ANY):
        out = np.dtype(np.bool_)
    elif op is ReduceOp.SUM and dt == np.bool_:
        out = np.dtype(np.int64)
    elif op in (ReduceOp.VAR, ReduceOp.STD, ReduceOp.NANVAR, ReduceOp.NANSTD):
        out = real_dtype(dt)
    else:
        out = dt
    return ((out_shape, out),)


# ------------------------------------------------------------ probe shapes
def ones(n: int) -> tuple:
    return (1,) * n


def axis_probe(axis: int) -> tuple:
    """The smallest all-ones shape on which axis (possibly negative) is in range."""
    return ones(max(axis + 1, -axis, 1))
