"""The Tensor's NumPy-style methods and attributes (hipfer/_ndarray_methods.py) against the
same numpy.ndarray method on the same data: dtypes x shapes (0-d, empty, 2-d, 3-d) x
layouts (contiguous, transposed, stepped, broadcast, conj-flagged), NaN/inf, on every
backend."""
import pickle
import warnings

import numpy as np
import pytest

import hipfer as hf
from hipfer._tensor import Tensor
from _util import random_array

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint16, np.float32,
                                np.float64, np.complex128)]
SHAPES = [(), (0,), (4,), (3, 4), (2, 3, 4)]
LAYOUTS = ["contig", "transposed", "stepped", "broadcast", "conj"]


def make(be, rng, shape, dtype, layout="contig", special=False):
    """(tensor on be.device, the NumPy array it reads as)."""
    dt = np.dtype(dtype)
    kw = dict(low=-4, high=5) if dt.kind == "i" else dict(low=0, high=6) if dt.kind == "u" else {}
    if dt.kind in "fc":
        kw["special"] = special and dt.kind == "f"
    shape = tuple(shape)
    if layout == "transposed" and len(shape) > 1:
        a = random_array(rng, shape[::-1], dt, **kw)
        return hf.asarray(be.asarray(a)).transpose(), a.T
    if layout == "stepped" and shape:
        a = random_array(rng, shape[:-1] + (2 * shape[-1],), dt, **kw)
        return hf.asarray(be.asarray(a))[..., ::2], a[..., ::2]
    if layout == "broadcast" and len(shape) > 1:
        a = random_array(rng, shape[-1:], dt, **kw)
        return hf.broadcast_to(hf.asarray(be.asarray(a)), shape), np.broadcast_to(a, shape)
    a = random_array(rng, shape, dt, **kw)
    t = hf.asarray(be.asarray(a))
    if layout == "conj" and dt.kind == "c":
        return hf.conj(t), np.asarray(np.conj(a))
    return t, a


def host(t):
    return t.get()


def same(got, ref, dtype=True):
    """got (a Tensor, a tuple of them or a Python value) equals ref (NumPy's result)."""
    if isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref)
        for g, r in zip(got, ref):
            same(g, r, dtype)
        return
    if ref is None:
        assert got is None
        return
    assert isinstance(got, Tensor), type(got)
    ref = np.asarray(ref)
    h = host(got)
    assert h.shape == ref.shape, (h.shape, ref.shape)
    if dtype:
        assert h.dtype == ref.dtype, (h.dtype, ref.dtype)
    if ref.dtype.kind in "fc" and ref.size:
        tol = 2e-3 if ref.dtype.itemsize <= 4 or ref.dtype == np.complex64 else 1e-10
        np.testing.assert_allclose(h, ref, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(h, ref)


# name -> (call, dtype kinds it applies to, shapes it needs): the same call on both sides
def _ax(a):
    return 0 if a.ndim else None


CASES = {
    "sum": (lambda a: a.sum(), "biufc"),
    "sum_axis_keep": (lambda a: a.sum(axis=_ax(a), keepdims=True), "biufc"),
    "sum_axes_dtype": (lambda a: a.sum(axis=(0, -1) if a.ndim > 1 else None, dtype=np.float64), "biuf"),
    "sum_initial": (lambda a: a.sum(initial=2), "iuf"),
    "sum_where": (lambda a: a.sum(where=a.real > 0 if a.dtype.kind in "fc" else True), "biufc"),
    "prod": (lambda a: a.prod(axis=-1 if a.ndim else None), "biufc"),
    "mean": (lambda a: a.mean(axis=_ax(a)), "iufc"),
    "mean_where": (lambda a: a.mean(where=a > 0), "if"),
    "std": (lambda a: a.std(), "iufc"),
    "var_ddof": (lambda a: a.var(axis=-1 if a.ndim else None, ddof=1), "iuf"),
    "var_where": (lambda a: a.var(axis=-1 if a.ndim else None, where=a >= 0), "if"),
    "min": (lambda a: a.min(axis=-1 if a.ndim else None, keepdims=True), "biuf"),
    "max": (lambda a: a.max(), "biuf"),
    "max_initial": (lambda a: a.max(axis=_ax(a), initial=1), "iuf"),
    "min_where_initial": (lambda a: a.min(initial=3, where=a > 0), "iuf"),
    "argmin": (lambda a: a.argmin(), "biuf"),
    "argmax_axis": (lambda a: a.argmax(axis=-1 if a.ndim else None), "biuf"),
    "all": (lambda a: a.all(axis=_ax(a)), "biufc"),
    "any_keep": (lambda a: a.any(keepdims=True), "biufc"),
    "cumsum": (lambda a: a.cumsum(), "biufc"),
    "cumprod_axis": (lambda a: a.cumprod(axis=-1 if a.ndim else None), "iuf"),
    "ptp": (lambda a: a.ptp(axis=_ax(a)) if isinstance(a, Tensor) else np.ptp(a, axis=_ax(a)), "iuf"),
    "astype_f32": (lambda a: a.astype(np.float32), "biuf"),
    # floats to int64 only where the value fits: inf, NaN and out-of-range values are
    # undefined casts (NumPy gives INT64_MIN on x86, the GPU saturates)
    "astype_C": (lambda a: a.astype(np.int64, order="C"), "biu"),
    "copy": (lambda a: a.copy(), "biufc"),
    "copy_F": (lambda a: a.copy(order="F"), "biufc"),
    "reshape_F": (lambda a: a.reshape(-1, order="F"), "biufc"),
    "reshape_args": (lambda a: a.reshape(*((1,) + a.shape)), "biufc"),
    "ravel": (lambda a: a.ravel(), "biufc"),
    "ravel_F": (lambda a: a.ravel(order="F"), "biufc"),
    "ravel_K": (lambda a: a.ravel(order="K"), "biufc"),
    "flatten_A": (lambda a: a.flatten("A"), "biufc"),
    "transpose": (lambda a: a.transpose(), "biufc"),
    "transpose_axes": (lambda a: a.transpose(*range(a.ndim)[::-1]), "biufc"),
    "swapaxes": (lambda a: a.swapaxes(0, -1) if a.ndim else a.copy(), "biufc"),
    "squeeze": (lambda a: a.reshape((1,) + a.shape + (1,)).squeeze(), "biufc"),
    "repeat": (lambda a: a.repeat(2), "biufc"),
    "repeat_axis": (lambda a: a.repeat(2, axis=-1) if a.ndim else a.repeat(2), "biufc"),
    "take": (lambda a: a.take([0, -1]) if a.size else a.take([]), "biufc"),
    "take_wrap": (lambda a: a.take([[5, -7]], axis=-1, mode="wrap") if a.size else a.copy(), "biufc"),
    "take_clip": (lambda a: a.take(7, mode="clip") if a.size else a.copy(), "biufc"),
    "clip": (lambda a: a.clip(-1, 2), "iuf"),
    "clip_max": (lambda a: a.clip(max=1), "if"),
    "round": (lambda a: a.round(), "iufc"),
    "round_2": (lambda a: a.round(2), "fc"),
    "round_neg": (lambda a: a.round(-1), "if"),
    "nonzero": (lambda a: a.nonzero() if a.ndim else (), "biuf"),
    "argsort": (lambda a: a.argsort(axis=-1 if a.ndim else None, kind="stable"), "iuf"),
    "argsort_none": (lambda a: a.argsort(axis=None, kind="stable"), "iuf"),
    "trace": (lambda a: a.trace() if a.ndim >= 2 else a.sum(), "biufc"),
    "trace_offset": (lambda a: a.trace(1, -1, 0, dtype=np.float64) if a.ndim >= 2 else a.sum(), "iuf"),
    "diagonal": (lambda a: a.diagonal(-1, 1, 0) if a.ndim >= 2 else a.copy(), "biufc"),
    "conjugate": (lambda a: a.conjugate(), "biufc"),
    "real": (lambda a: a.real, "biufc"),
    "imag": (lambda a: a.imag, "biufc"),
    "dot_self": (lambda a: a.dot(a.swapaxes(-1, -2) if a.ndim > 1 else a), "iufc"),
    "view_same": (lambda a: a.view(), "biufc"),
}


class _NoHost:
    """Within it, a tensor's values cannot reach the host (as GPU data cannot implicitly):
    the methods run on the device."""
    def __enter__(self):
        self.saved = Tensor._host, Tensor.__array__

        def refuse(*args, **kw):
            raise AssertionError("a method copied tensor data to the host")
        Tensor._host = Tensor.__array__ = refuse

    def __exit__(self, *exc):
        Tensor._host, Tensor.__array__ = self.saved


def _run(fn, a):
    try:
        with np.errstate(all="ignore"):
            return fn(a), None
    except Exception as e:  # noqa: BLE001 - compared with hipfer's below
        return None, e


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's, on empty and NaN data
@pytest.mark.parametrize("case,dtype", [(c, t) for c in sorted(CASES) for t in DTYPES
                                        if t.kind in CASES[c][1]],
                         ids=lambda v: str(v))
def test_method_matches_numpy(be, rng, case, dtype):
    fn = CASES[case][0]
    for shape in SHAPES:
        for layout in LAYOUTS:
            if layout in ("transposed", "broadcast") and len(shape) < 2:
                continue
            if layout == "conj" and dtype.kind != "c":
                continue
            t, a = make(be, rng, shape, dtype, layout, special=case not in ("argsort", "argsort_none"))
            ref, err = _run(fn, a)
            where = f"{case} {dtype} {shape} {layout}"
            if err is not None:
                with pytest.raises(type(err)), _NoHost():
                    fn(t)
                continue
            with np.errstate(all="ignore"), _NoHost():
                got = fn(t)
            try:
                same(got, ref)
            except AssertionError as e:
                raise AssertionError(f"{where}: {e}") from None
            if isinstance(got, Tensor):
                assert got.device == be.device


# ------------------------------------------------------------------ in place and out=
def test_out_stores_into_a_tensor(be, rng):
    t, a = make(be, rng, (3, 4), np.float64)
    out = hf.zeros((4,), dtype=hf.float64)
    assert t.sum(axis=0, out=out) is out
    same(out, a.sum(axis=0))
    iout = hf.zeros((3,), dtype=hf.int64)
    t.argmax(axis=1, out=iout)
    same(iout, a.argmax(axis=1))
    with pytest.raises(ValueError, match="sum"):
        t.sum(out=out)
    with pytest.raises(TypeError, match="out"):
        t.sum(out=np.zeros(()))
    c = hf.zeros((3, 4), dtype=hf.float64)
    t.cumsum(axis=1, out=c)
    same(c, a.cumsum(axis=1))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64], ids=str)
def test_sort_and_partition_in_place(be, rng, dtype):
    for layout in ("contig", "transposed"):
        t, a = make(be, rng, (5, 6), dtype, layout, special=True)
        a = a.copy()
        assert t.sort(axis=0) is None
        a.sort(axis=0)
        same(t, a)
        t.sort()
        a.sort()
        same(t, a)
    t, a = make(be, rng, (7,), dtype)
    a = a.copy()
    t.partition(3)
    a.partition(3)
    assert host(t)[3] == a[3] and (host(t)[:3] <= a[3]).all() and (host(t)[4:] >= a[3]).all()
    idx = t.argpartition(2)
    assert host(t)[host(idx)][2] == np.sort(a)[2]
    with pytest.raises(ValueError, match="kth"):
        t.partition(7)
    with pytest.raises(ValueError, match="order"):
        t.sort(order="x")
    with pytest.raises(ValueError, match="kind"):
        t.sort(kind="bogus")


def test_fill_put_flat_setters(be, rng):
    t, a = make(be, rng, (3, 4), np.float64)
    a = a.copy()
    t.fill(2.5)
    a.fill(2.5)
    same(t, a)
    ti = hf.zeros((4,), dtype=hf.int32)
    ti.fill(7.9)
    same(ti, np.full(4, 7, np.int32))
    for layout in ("contig", "transposed"):
        t, a = make(be, rng, (3, 4), np.float32, layout)
        a = a.copy()
        t.put([0, 5, -1], [10, 20])
        a.put([0, 5, -1], [10, 20])
        same(t, a)
        t.put(13, 1.5, mode="wrap")
        a.put(13, 1.5, mode="wrap")
        same(t, a)
        t.flat[2] = -3
        a.flat[2] = -3
        t.flat[4:7] = [1, 2, 3]
        a.flat[4:7] = [1, 2, 3]
        same(t, a)
        same(t.flat[5], a.flat[5])
        same(t.flat[[1, 2]], a.flat[[1, 2]])
        assert len(t.flat) == a.size
        assert [float(v) for v in t.flat] == a.ravel().tolist()
        same(t.flat.copy(), a.flat.copy())
        t.flat = [7, 8]
        a.flat = [7, 8]
        same(t, a)


def test_real_imag_setters_and_the_conj_flag(be, rng):
    t, a = make(be, rng, (2, 3), np.complex128)
    a = a.copy()
    t.real = 1.0
    a.real = 1.0
    t.imag = hf.asarray(be.asarray(np.arange(3.0)))
    a.imag = np.arange(3.0)
    same(t, a)
    assert t.real._data.base is not None or t.real.shape == a.real.shape  # a view
    c = hf.conj(t)  # reads as conj(a): its imag is -a.imag, and writes land negated
    same(c.imag, np.conj(a).imag)
    c.imag = 5.0
    same(c, a.real + 5j)
    same(t, a.real - 5j)
    c.imag = hf.asarray(be.asarray(np.array([1.0, 2.0, 3.0])))
    same(c, a.real + np.array([1j, 2j, 3j]))
    r = hf.asarray(be.asarray(np.arange(3.0)))
    r.real = 2.0
    same(r, np.full(3, 2.0))
    with pytest.raises(TypeError):
        r.imag = 1.0


def test_attributes(be, rng):
    t, a = make(be, rng, (3, 5), np.complex64, "transposed")
    assert t.nbytes == a.nbytes and t.itemsize == a.itemsize
    assert len(t) == len(a)
    assert [tuple(host(row).tolist()) for row in t] == [tuple(r.tolist()) for r in a]
    assert t.tolist() == a.tolist()
    assert t.tobytes() == a.tobytes() and t.tobytes("F") == a.tobytes("F")
    assert t.item(3) == a.item(3) and t.item(1, 2) == a.item(1, 2) and t.item((0, 1)) == a.item((0, 1))
    with pytest.raises(ValueError):
        t.item()
    with pytest.raises(IndexError):
        t.item(15)
    assert hf.asarray(be.asarray(np.array([[4]]))).item() == 4
    assert isinstance(t.get(), np.ndarray)
    np.testing.assert_array_equal(hf.conj(t).get(), np.conj(a))
    assert hf.conj(t).get().flags.c_contiguous


def test_view_and_byteswap(be, rng):
    t, a = make(be, rng, (3, 4), np.float32)
    for dt in (np.int32, np.uint8, np.complex64, np.float16):
        v = t.view(dt)
        same(v, a.view(dt))
        assert v._data.base is not None  # a view of the same memory
    v = t.view(np.uint8)
    v[0, 0] = 0
    assert host(t)[0, 0] != a[0, 0] or a.view(np.uint8)[0, 0] == 0
    tt, aa = make(be, rng, (3, 4), np.float32, "transposed")
    with pytest.raises(ValueError, match="view"):
        tt.view(np.float64)
    c, ac = make(be, rng, (2, 2), np.complex128, "conj")
    same(c.view(np.float64), ac.view(np.float64))
    with pytest.raises(TypeError):
        t.view(np.ndarray)
    with pytest.raises(TypeError):
        t.view("S4")
    for dtype in (np.int16, np.float64, np.complex64, np.uint8):
        t, a = make(be, rng, (2, 3), dtype, "transposed")
        same(t.byteswap(), a.byteswap())


def test_choose_compress_searchsorted_dot(be, rng):
    idx = hf.asarray(be.asarray(np.array([[0, 1, 2], [2, 1, 0]])))
    ch = [np.arange(3), np.arange(3) * 10, np.full((2, 3), 7)]
    same(idx.choose([hf.asarray(be.asarray(c)) for c in ch]), np.array([[0, 1, 2], [2, 1, 0]]).choose(ch))
    same(idx.choose(ch, mode="wrap"), np.array([[0, 1, 2], [2, 1, 0]]).choose(ch, mode="wrap"))
    t, a = make(be, rng, (3, 4), np.float64)
    same(t.compress([True, False, True], axis=0), a.compress([True, False, True], axis=0))
    same(t.compress([False, True]), a.compress([False, True]))
    s = hf.asarray(be.asarray(np.array([1.0, 2.0, 3.0])))
    same(s.searchsorted(2.0), np.array([1.0, 2.0, 3.0]).searchsorted(2.0))
    same(s.searchsorted([0.5, 3.0], side="right"), np.array([1.0, 2.0, 3.0]).searchsorted([0.5, 3.0], side="right"))
    for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 2, 3), (4, 3, 5)), ((), (3,))]:
        x, ax = make(be, rng, sa, np.float64)
        y, ay = make(be, rng, sb, np.float64)
        same(x.dot(y), ax.dot(ay))
    same(x.dot(ay), ax.dot(ay))


# ------------------------------------------------------------------ conversions
def test_scalar_conversions_follow_numpy(be):
    for a in (np.array(2.5), np.array([2.5]), np.array([[0.0]]), np.array([1.0, 2.0]),
              np.array([]), np.array(3), np.array(1 + 2j)):
        t = hf.asarray(be.asarray(a))
        for conv in (bool, float, int, complex):
            with warnings.catch_warnings():  # NumPy < 2.3 deprecates what 2.3+ refuses
                warnings.simplefilter("error", DeprecationWarning)
                ref, err = _run(conv, a)
            if err is not None:
                kind = TypeError if isinstance(err, DeprecationWarning) else type(err)
                with pytest.raises(kind):
                    conv(t)
            else:
                assert conv(t) == ref
    assert hf.asarray(be.asarray(np.array(5))).__index__() == 5
    with pytest.raises(TypeError):
        hf.asarray(be.asarray(np.array([5]))).__index__()


def test_format(be):
    t = hf.asarray(be.asarray(np.array(3.14159)))
    assert f"{t:.3f}" == "3.142" and f"{t:.3g}" == "3.14" and f"{t}" == f"{np.array(3.14159)}"
    assert f"{hf.asarray(be.asarray(np.array(7, np.int32))):5d}" == "    7"
    assert f"{hf.conj(hf.asarray(be.asarray(np.array(1 + 2j)))):.1f}" == f"{1 - 2j:.1f}"
    v = hf.asarray(be.asarray(np.array([1.0, 2.0])))
    with pytest.raises(TypeError):
        f"{v:.3f}"
    assert f"{v}" == str(v)


def test_interfaces(be):
    t = hf.asarray(be.asarray(np.arange(6.0).reshape(2, 3)))
    c = hf.conj(hf.asarray(be.asarray(np.array([1 + 1j, 2 - 1j]))))
    assert not hasattr(c, "__cuda_array_interface__")
    # __array_interface__ only where it is __array__'s zero-copy answer (NumPy reads it
    # first): CPU data without a conj flag, not in the refuse-host mode
    assert not hasattr(c, "__array_interface__")
    if be.name == "numpy":
        assert t.__array_interface__ == t._data.__array_interface__
        with hf._tensor.refuse_host():
            assert not hasattr(t, "__array_interface__")
            with pytest.raises(TypeError):
                np.asarray(t)
        assert not hasattr(t, "__cuda_array_interface__")
        assert np.shares_memory(np.asarray(t), t._data)  # zero-copy through __array__
        np.testing.assert_array_equal(np.asarray(c), np.array([1 - 1j, 2 + 1j]))
    else:
        assert t.__cuda_array_interface__ == t._data.__cuda_array_interface__
        assert not hasattr(t, "__array_interface__")


def test_pickle_helpers(be, tmp_path):
    t = hf.asarray(be.asarray(np.arange(4.0)))
    same(pickle.loads(t.dumps()), np.arange(4.0))
    t.dump(tmp_path / "t.pkl")
    with open(tmp_path / "t.pkl", "rb") as f:
        same(pickle.load(f), np.arange(4.0))
    t.tofile(tmp_path / "t.bin")
    np.testing.assert_array_equal(np.fromfile(tmp_path / "t.bin"), np.arange(4.0))


# ------------------------------------------------------------------ errors
def test_errors_name_the_method(be, rng):
    t, _ = make(be, rng, (3, 4), np.float64)
    with pytest.raises(TypeError, match="std.*mean"):
        t.std(mean=0.0)
    with pytest.raises(ValueError, match="max.*initial"):
        t.max(where=t > 0)
    with pytest.raises(TypeError, match="clip.*casting"):
        t.clip(0, 1, casting="safe")
    with pytest.raises(TypeError, match="astype"):
        t.astype(np.int32, casting="safe")
    with pytest.raises(ValueError, match="order"):
        t.ravel(order="X")
    with pytest.raises(ValueError, match="diagonal"):
        t.diagonal(0, 1, 1)
    with pytest.raises(ValueError, match="take"):
        t.take([0], mode="bogus")
    with pytest.raises(IndexError):
        t.take([12])


def test_reshape_keeps_copy_and_views(be, rng):
    t, a = make(be, rng, (3, 4), np.float64)
    v = t.reshape(4, 3)
    v[0, 0] = 99.0
    assert float(t[0, 0]) == 99.0
    with pytest.raises(ValueError):
        t.transpose().reshape(-1, copy=False)
    same(t.reshape(shape=(2, 6)), t.get().reshape(2, 6))
    same(t.reshape((2, 6), order="F"), t.get().reshape((2, 6), order="F"))
    same(t.reshape([np.int64(12)]), t.get().reshape(12))


# ------------------------------------------------------------------ repr
@pytest.mark.parametrize("shape", [(1001,), (40, 30), (3, 400), (7, 2, 100), (2000, 1), (5, 5, 5, 9)])
def test_repr_of_a_large_tensor_copies_only_what_it_shows(be, rng, monkeypatch, shape):
    dtype = np.float32 if len(shape) % 2 else np.int16
    t, a = make(be, rng, shape, dtype, special=True)
    copied = []
    real_host = Tensor._host

    def counting(self):
        h = real_host(self)
        copied.append(h.nbytes)
        return h
    monkeypatch.setattr(Tensor, "_host", counting)
    r = repr(t)
    body = np.array2string(a, separator=", ", prefix="tensor(")
    suffix = "" if be.name == "numpy" else f", device='{t.device}'"
    assert r == f"tensor({body}, dtype={t.dtype}{suffix})"
    e = np.get_printoptions()["edgeitems"]
    assert sum(copied) <= np.prod([min(n, 2 * e + 1) for n in shape]) * a.itemsize


def test_repr_small_and_printoptions(be):
    t = hf.asarray(be.asarray(np.arange(12.0).reshape(3, 4)))
    assert repr(t).startswith("tensor([[ 0.,  1.,  2.,  3.],")
    with np.printoptions(threshold=5, edgeitems=1):
        assert repr(t) == (f"tensor({np.array2string(np.arange(12.0).reshape(3, 4), separator=', ', prefix='tensor(')}"
                           f", dtype=float64{'' if be.name == 'numpy' else ', device=' + repr(str(t.device))})")
    assert str(hf.asarray(be.asarray(np.zeros((0, 3))))).startswith("tensor([]")
