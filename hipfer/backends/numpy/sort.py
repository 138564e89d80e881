"""Sort, Argsort, Topk, Select and Partition on NumPy.

Ascending order puts NaN last (NumPy's). Descending is ascending on the reversed axis,
read backwards: NaN comes first and, with a stable sort, equal elements keep their
original order in both directions. Topk ranks NaN above every number and breaks ties
by the lower index, so it is a prefix of the stable sort in the right direction.
Select and Partition are NumPy's introselect (np.partition, np.argpartition).
"""
from __future__ import annotations

import numpy as np

from ...prims import descriptors as d
from ._common import Handler


def _kind(stable: bool) -> str:
    return "stable" if stable else "quicksort"


def argsort(x, axis, descending, stable):
    if not descending:
        return np.argsort(x, axis=axis, kind=_kind(stable))
    n = x.shape[axis]
    rev = np.argsort(np.flip(x, axis), axis=axis, kind=_kind(stable))
    return (n - 1) - np.flip(rev, axis)


def _make_sort(desc, dtypes, shapes, outs, strides, conj):
    axis = desc.axis % len(shapes[0])
    kind = _kind(desc.stable)
    if desc.descending:
        def sort(x):
            return np.flip(np.sort(np.flip(x, axis), axis=axis, kind=kind), axis)
    else:
        def sort(x):
            return np.sort(x, axis=axis, kind=kind)

    def run(inputs, out):
        if out.size:
            np.copyto(out, sort(inputs[0]))
    return run


def _make_argsort(desc, dtypes, shapes, outs, strides, conj):
    axis = desc.axis % len(shapes[0])

    def run(inputs, out):
        if out.size:
            np.copyto(out, argsort(inputs[0], axis, desc.descending, desc.stable))
    return run


def _make_topk(desc, dtypes, shapes, outs, strides, conj):
    axis = desc.axis % len(shapes[0])
    first_k = tuple(slice(0, desc.k) if i == axis else slice(None)
                    for i in range(len(shapes[0])))

    def run(inputs, out):
        values, indices = out
        if values.size == 0:
            return
        x = inputs[0]
        idx = argsort(x, axis, descending=desc.largest, stable=True)[first_k]
        np.copyto(indices, idx)
        np.copyto(values, np.take_along_axis(x, idx, axis))
    return run


#: Select partitions around at most this many distinct ranks, else it sorts
_MAX_KTH = 64


def _make_select(desc, dtypes, shapes, outs, strides, conj):
    n = shapes[0][-1]

    def run(inputs, out):
        if out.size == 0:
            return
        x, k = inputs
        k = np.clip(k, 0, n - 1)
        kth = np.unique(k)
        s = np.partition(x, kth, axis=-1) if len(kth) <= _MAX_KTH else np.sort(x, axis=-1)
        np.copyto(out, np.take_along_axis(s, k, axis=-1))
    return run


def _make_partition(desc, dtypes, shapes, outs, strides, conj):
    axis, kth = desc.axis % len(shapes[0]), list(desc.kth)

    def run(inputs, out):
        if not out.size:
            return
        if desc.indices:
            np.copyto(out, np.argpartition(inputs[0], kth, axis=axis))
        else:  # in place in out: no second copy
            np.copyto(out, inputs[0])
            out.partition(kth, axis=axis)
    return run


HANDLERS = {
    d.Select: Handler(_make_select),
    d.Partition: Handler(_make_partition),
    d.Sort: Handler(_make_sort),
    d.Argsort: Handler(_make_argsort),
    d.Topk: Handler(_make_topk),
}
