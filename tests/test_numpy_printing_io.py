"""Printing (hipfer/_printing.py, the Tensor's repr) and NumPy-format I/O
(hipfer/_io.py), against NumPy. Every test runs in the refuse-host mode, so a silent
conversion of device data to NumPy fails here as it would on a GPU."""
from __future__ import annotations

import io

import numpy as np
import pytest

import hipfer as hf
from hipfer._tensor import Tensor
from tests._util import ALL_DTYPES, ids, random_array

pytestmark = pytest.mark.usefixtures("refuse_host")

SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (1100,), (30, 40), (3, 70, 6)]


def host(t):
    assert isinstance(t, Tensor), type(t)
    return np.asarray(t, copy=True)


def data(rng, shape, dt):
    return random_array(rng, shape, dt, special=True)


def expected_repr(a, device=None, **opts):
    body = np.array2string(a, separator=", ", prefix="tensor(", **opts)
    dev = "" if device is None or device.kind == "cpu" else f", device='{device}'"
    return f"tensor({body}, dtype={a.dtype}{dev})"


# ------------------------------------------------------------------ repr and str
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=ids(ALL_DTYPES))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_repr_matches_numpy_formatting(be, rng, dt, shape):
    a = data(rng, shape, dt)
    t = hf.asarray(be.asarray(a))
    assert repr(t) == expected_repr(a, t.device)
    assert str(t) == repr(t)
    assert hf.array_repr(t) == repr(t)
    assert hf.array_str(t) == np.array_str(a)
    assert hf.array2string(t) == np.array2string(a)


@pytest.mark.parametrize("shape", [(9, 8), (1500,), (4, 5, 60)], ids=str)
def test_repr_of_views(be, rng, shape):
    big = data(rng, tuple(2 * n for n in shape), np.float32)
    step = tuple(slice(None, None, 2) for _ in shape)
    t = hf.asarray(be.asarray(big))
    assert repr(t[step]) == expected_repr(big[step], t.device)
    tt = hf.permute_dims(t, tuple(range(t.ndim))[::-1])
    assert repr(tt) == expected_repr(big.T, t.device)
    c = hf.asarray(be.asarray(data(rng, shape, np.complex64)))
    assert repr(hf.conj(c)) == expected_repr(np.conj(host(c)), t.device)


OPTIONS = [dict(precision=3), dict(threshold=10), dict(edgeitems=1, threshold=5),
           dict(edgeitems=4, threshold=20), dict(linewidth=40), dict(suppress=True),
           dict(sign="+"), dict(sign=" "), dict(floatmode="fixed", precision=2),
           dict(floatmode="unique"), dict(floatmode="maxprec_equal", precision=4),
           dict(nanstr="NaN", infstr="Inf"),
           dict(formatter={"float_kind": lambda v: f"<{v:.1f}>"}),
           dict(formatter={"int": lambda v: hex(int(v))}),
           dict(legacy="1.25")]


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: ",".join(o))
@pytest.mark.parametrize("dt", [np.float64, np.float16, np.int32, np.complex128, np.bool_],
                         ids=str)
def test_print_options_apply_to_repr(be, rng, opts, dt):
    a = data(rng, (6, 30), dt) * (np.asarray(1e-6, dt) if np.dtype(dt).kind in "fc" else 1)
    t = hf.asarray(be.asarray(a))
    with hf.printoptions(**opts):
        assert hf.get_printoptions() == np.get_printoptions()
        want = expected_repr(a, t.device)
        assert repr(t) == want
        assert hf.array_str(t) == np.array_str(a)
    with np.printoptions(**opts):  # NumPy's own options are hipfer's
        assert repr(t) == want


def test_set_printoptions_is_numpys(be, rng):
    a = rng.standard_normal((4, 4))
    t = hf.asarray(be.asarray(a))
    saved = np.get_printoptions()
    try:
        hf.set_printoptions(precision=2, suppress=True)
        assert np.get_printoptions()["precision"] == 2
        assert repr(t) == expected_repr(a, t.device)
        np.set_printoptions(precision=6, threshold=3)
        assert hf.get_printoptions()["threshold"] == 3
        assert repr(t) == expected_repr(a, t.device)
    finally:
        np.set_printoptions(**{k: v for k, v in saved.items() if k != "override_repr"})
    assert np.get_printoptions() == saved


ARGS = [dict(), dict(precision=2), dict(max_line_width=30), dict(suppress_small=True),
        dict(separator=", "), dict(prefix="xx(", suffix=")"), dict(threshold=7),
        dict(threshold=7, edgeitems=1), dict(edgeitems=2, threshold=0),
        dict(sign="+", floatmode="fixed"), dict(formatter={"all": lambda v: "*"}),
        dict(legacy="1.13")]


@pytest.mark.parametrize("kw", ARGS, ids=lambda k: ",".join(k) or "default")
@pytest.mark.parametrize("shape", [(), (7,), (5, 9), (2, 3, 40)], ids=str)
def test_array2string_arguments(be, rng, kw, shape):
    a = data(rng, shape, np.float64)
    t = hf.asarray(be.asarray(a))
    assert hf.array2string(t, **kw) == np.array2string(a, **kw)


def test_array_repr_and_str_arguments(be, rng):
    a = rng.standard_normal((3, 5)) * 1e-7
    t = hf.asarray(be.asarray(a))
    for args in [(None, 2, True), (30, None, None), (None, 3, False)]:
        assert hf.array_str(t, *args) == np.array_str(a, *args)
        assert hf.array_repr(t, *args) == expected_repr(
            a, t.device, max_line_width=args[0], precision=args[1], suppress_small=args[2])
    assert hf.array_str(hf.asarray(be.asarray(np.float64(0.5)))) == np.array_str(
        np.array(0.5))
    # NumPy data goes to NumPy's functions unchanged
    assert hf.array_repr(a) == np.array_repr(a)
    assert hf.array_str(a) == np.array_str(a)
    assert hf.array2string(a) == np.array2string(a)
    with pytest.raises(TypeError, match="hipfer.array2string"):
        hf.array2string([1, 2])


@pytest.mark.parametrize("shape", [(100000,), (300, 400), (20, 30, 40)], ids=str)
def test_repr_copies_only_the_corners(be, rng, shape, monkeypatch):
    a = rng.standard_normal(shape)
    t = hf.asarray(be.asarray(a))
    sizes = []
    real = Tensor._host

    def spy(self):
        sizes.append(self.size)
        return real(self)

    monkeypatch.setattr(Tensor, "_host", spy)
    edge = np.get_printoptions()["edgeitems"]
    assert repr(t) == expected_repr(a, t.device)
    assert hf.array2string(t, edgeitems=2) == np.array2string(a, edgeitems=2)
    assert sizes and max(sizes) <= (2 * edge + 1) ** len(shape), sizes


def test_printing_through_numpy(be, rng):
    a = rng.integers(-9, 9, (4, 3))
    t = hf.asarray(be.asarray(a))
    assert np.array2string(t, separator=";") == np.array2string(a, separator=";")
    assert np.array_str(t) == np.array_str(a)
    assert np.array_repr(t) == repr(t)
    assert f"{t}" == str(t)


# ------------------------------------------------------------------ .npy / .npz
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=ids(ALL_DTYPES))
@pytest.mark.parametrize("shape", [(), (0,), (6,), (3, 4)], ids=str)
def test_save_load_roundtrip(be, rng, tmp_path, dt, shape):
    a = data(rng, shape, dt)
    f = tmp_path / "a.npy"
    hf.save(f, hf.asarray(be.asarray(a)))
    np.testing.assert_array_equal(np.load(f), a)
    assert np.load(f).dtype == a.dtype
    t = hf.load(f, device=be.device)
    assert isinstance(t, Tensor) and t.device == be.device
    assert host(t).dtype == a.dtype and host(t).shape == a.shape
    np.testing.assert_array_equal(host(t), a)


def test_save_views_conj_and_files(be, rng, tmp_path):
    a = data(rng, (6, 8), np.complex64)
    t = hf.asarray(be.asarray(a))
    for view, want in [(t[::2, ::-3], a[::2, ::-3]), (t.T, a.T), (hf.conj(t), np.conj(a))]:
        buf = io.BytesIO()
        hf.save(buf, view)
        buf.seek(0)
        got = hf.load(buf)
        np.testing.assert_array_equal(host(got), want)
    hf.save(str(tmp_path / "s"), [1, 2, 3])  # array_likes too; NumPy adds .npy
    np.testing.assert_array_equal(host(hf.load(str(tmp_path / "s.npy"))), [1, 2, 3])
    assert hf.load(tmp_path / "s.npy", mmap_mode="r").device == hf.get_default_device()


@pytest.mark.parametrize("compressed", [False, True])
def test_savez_load_mapping(be, rng, tmp_path, compressed):
    a = data(rng, (3, 5), np.float32)
    b = data(rng, (4,), np.int16)
    c = data(rng, (), np.complex128)
    f = tmp_path / "z.npz"
    save = hf.savez_compressed if compressed else hf.savez
    save(f, hf.asarray(be.asarray(a)), b, third=hf.asarray(be.asarray(c)))
    with np.load(f) as z:
        assert sorted(z.files) == ["arr_0", "arr_1", "third"]
        np.testing.assert_array_equal(z["arr_0"], a)
    with hf.load(f, device=be.device) as z:
        assert sorted(z) == ["arr_0", "arr_1", "third"] and len(z) == 3
        assert "third" in z and "nope" not in z
        for k, want in [("arr_0", a), ("arr_1", b), ("third", c)]:
            assert isinstance(z[k], Tensor) and z[k].device == be.device
            assert host(z[k]).dtype == want.dtype
            np.testing.assert_array_equal(host(z[k]), want)
        assert dict(z.items()).keys() == {"arr_0", "arr_1", "third"}


def test_load_refuses_pickles_by_default(tmp_path):
    f = tmp_path / "o.npy"
    np.save(f, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        hf.load(f)
    with pytest.raises(TypeError, match="hipfer.load"):
        hf.load(f, allow_pickle=True)
    with pytest.raises(ValueError):
        hf.save(tmp_path / "p.npy", np.array([None], dtype=object), allow_pickle=False)


def test_io_through_numpy(be, rng, tmp_path):
    a = data(rng, (3, 3), np.float64)
    t = hf.asarray(be.asarray(a))
    np.save(tmp_path / "n.npy", t)
    np.testing.assert_array_equal(np.load(tmp_path / "n.npy"), a)
    np.savez(tmp_path / "n.npz", t, x=t)
    with np.load(tmp_path / "n.npz") as z:
        np.testing.assert_array_equal(z["x"], a)
    np.savetxt(tmp_path / "n.txt", t)
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "n.txt"), a)


# ------------------------------------------------------------------ text
@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.complex128], ids=str)
def test_savetxt_loadtxt(be, rng, tmp_path, dt):
    a = random_array(rng, (4, 3), dt)
    t = hf.asarray(be.asarray(a))
    f1, f2 = tmp_path / "h.txt", tmp_path / "n.txt"
    fmt = "%d" if np.dtype(dt).kind == "i" else "%.18e"
    hf.savetxt(f1, t[::-1], fmt=fmt, delimiter=",", header="hi")
    np.savetxt(f2, a[::-1], fmt=fmt, delimiter=",", header="hi")
    assert f1.read_text() == f2.read_text()
    got = hf.loadtxt(f1, dtype=dt, delimiter=",", device=be.device)
    assert got.device == be.device
    want = np.loadtxt(f2, dtype=dt, delimiter=",")
    assert host(got).dtype == want.dtype
    np.testing.assert_array_equal(host(got), want)
    u = hf.loadtxt(f1, dtype=dt, delimiter=",", unpack=True)
    np.testing.assert_array_equal(host(u), np.loadtxt(f2, dtype=dt, delimiter=",",
                                                      unpack=True))
    one = hf.loadtxt(f1, dtype=dt, delimiter=",", usecols=1, ndmin=2)
    np.testing.assert_array_equal(host(one), np.loadtxt(f2, dtype=dt, delimiter=",",
                                                        usecols=1, ndmin=2))
