"""Every public callable of hipfer and every Tensor pickles, so dask.distributed,
multiprocessing and joblib can ship them.

Functions (the compiled warm path's ``hipfer._warm.Warm`` objects included) and classes
pickle by module and name: the round trip gives the very same object, on every protocol,
with the warm path and without it. A Tensor pickles its data and its lazy conjugation
flag: the round trip reads the same values, dtype and shape for every dtype, 0-d, empty,
non-contiguous, broadcast and conjugated tensors. Last, hipfer.exp, hipfer.sum and
tensors go through a spawned multiprocessing pool and back.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hipfer as hf
from hipfer import _warmpath

ROOT = Path(__file__).resolve().parent.parent
PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)
MODULES = ("hipfer", "hipfer.linalg", "hipfer.fft", "hipfer.random", "hipfer.nn")


def public_callables(module) -> dict:
    """name -> object for each callable of module's public API (its __all__)."""
    return {n: getattr(module, n) for n in module.__all__ if callable(getattr(module, n))}


def _module(name: str):
    import importlib
    return importlib.import_module(name)


@pytest.mark.parametrize("proto", PROTOCOLS)
@pytest.mark.parametrize("modname", MODULES)
def test_every_public_callable_pickles_as_itself(modname, proto):
    found = public_callables(_module(modname))
    assert found
    bad = {}
    for name, obj in found.items():
        try:
            back = pickle.loads(pickle.dumps(obj, proto))
        except Exception as e:  # noqa: BLE001 - report every failure at once
            bad[name] = f"{type(e).__name__}: {e}"
            continue
        if back is not obj:
            bad[name] = f"came back as {back!r}"
    assert not bad, f"{modname}, protocol {proto}: {bad}"


def test_the_warm_path_objects_pickle_by_their_namespace_name():
    if not _warmpath.enabled():
        pytest.skip(f"warm path {_warmpath.STATUS}")
    from hipfer import _warm
    warm = {n: f for n, f in public_callables(hf).items() if isinstance(f, _warm.Warm)}
    assert {"exp", "add", "less", "sum", "max"} <= set(warm)
    from hipfer._elementwise import NUMPY_SAME
    for name, f in warm.items():
        if name in NUMPY_SAME:  # NumPy's other name of one function (true_divide: divide)
            assert f is getattr(hf, NUMPY_SAME[name])
            continue
        assert (f.__module__, f.__qualname__, f.__name__) == ("hipfer", name, name)
        assert pickle.dumps(f, 0) == f"chipfer\n{name}\np0\n.".encode()
    import copy
    assert copy.copy(hf.exp) is hf.exp and copy.deepcopy(hf.exp) is hf.exp


_FALLBACK = """
import pickle, hipfer as hf, hipfer._warmpath as w
assert not w.enabled(), w.STATUS
for m in (hf, hf.linalg, hf.fft, hf.random, hf.nn):
    for n in m.__all__:
        f = getattr(m, n)
        if callable(f):
            for p in range(pickle.HIGHEST_PROTOCOL + 1):
                assert pickle.loads(pickle.dumps(f, p)) is f, (m.__name__, n, p)
print("ok")
"""


def test_the_pure_python_path_pickles_too():
    env = {**os.environ, "HIPFER_WARM_PATH": "0", "HIPFER_DEVICE": "cpu",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", _FALLBACK], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# ------------------------------------------------------------------------- tensors
DTYPES = ["bool", "int8", "uint16", "int64", "float16", "float32", "float64", "complex64",
          "complex128"]


def _host(t) -> np.ndarray:
    return np.asarray(t.to_device("cpu"))


def _check_same(back, t):
    assert type(back) is hf.Tensor
    assert back.dtype == t.dtype and back.shape == t.shape and back.device == t.device
    assert back.is_conj() == t.is_conj()
    # NumPy's own dtype instance, not the unpickled copy (the warm path compares identity)
    assert back._data.dtype is np.dtype(t.dtype.name)
    a, b = _host(back), _host(t)
    # bit for bit: NaN payloads and -0.0 included
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensors_of_every_dtype_pickle(be, rng, dtype):
    a = (rng.standard_normal((3, 4)) * 5).astype(dtype)
    if a.dtype.kind == "c":
        a = a + 1j * rng.standard_normal((3, 4)).astype(dtype)
    if a.dtype.kind == "f":
        a.flat[:3] = [np.nan, -np.inf, -0.0]
    t = hf.asarray(a, device=be.device)
    for proto in PROTOCOLS:
        _check_same(pickle.loads(pickle.dumps(t, proto)), t)


def _layouts(be, rng):
    base = rng.standard_normal((4, 6)) + 1j * rng.standard_normal((4, 6))
    t = hf.asarray(base, device=be.device)
    yield "0-d", hf.asarray(np.float32(-0.0), device=be.device)
    yield "empty", hf.asarray(np.empty((0, 3), np.int32), device=be.device)
    yield "strided", t[::2, 1::2]
    yield "transposed", hf.matrix_transpose(t)
    row = hf.asarray(rng.standard_normal((1, 3)), device=be.device)
    yield "broadcast", hf.broadcast_to(row, (5, 3))
    yield "conj", hf.conj(t)
    yield "conj strided", hf.conj(t)[:, ::-1]
    yield "real view", hf.real(t)


def test_tensors_of_every_layout_pickle(be, rng):
    for what, t in _layouts(be, rng):
        for proto in PROTOCOLS:
            back = pickle.loads(pickle.dumps(t, proto))
            _check_same(back, t)
            # and it computes like the original
            assert _host(hf.multiply(back, 2)).tolist() == _host(hf.multiply(t, 2)).tolist(), what


def test_unpickled_tensors_leave_the_warm_path_warm(rng):
    # an unpickled dtype object once went into the weak-scalar cache, and then the warm
    # path declined every later `x + 2` of that dtype (it compares dtypes by identity)
    if not _warmpath.enabled():
        pytest.skip(f"warm path {_warmpath.STATUS}")
    c = hf.asarray(rng.standard_normal(3) + 1j, device="cpu")
    back = pickle.loads(pickle.dumps(c))
    hf.add(back, 7.5)
    before = hf.add.hits
    hf.add(c, 7.5)
    assert hf.add.hits == before + 1


def test_a_pickled_tensor_is_its_own_copy(be, rng):
    t = hf.asarray(rng.standard_normal(5), device=be.device)
    back = pickle.loads(pickle.dumps(t))
    back[0] = 42.0
    assert _host(t)[0] != 42.0


# ---------------------------------------------------------------- multiprocessing
def test_functions_and_tensors_ship_through_a_spawned_pool(rng):
    # spawn: a fresh interpreter that imports hipfer and looks the functions up by name
    a = rng.standard_normal((3, 4))
    t = hf.asarray(a, device="cpu")
    c = hf.conj(hf.asarray(a + 1j * a, device="cpu"))[:, ::2]
    ctx = multiprocessing.get_context("spawn")
    env = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), env])  # the child finds this tree
    try:
        with ctx.Pool(1) as pool:
            e = pool.apply(hf.exp, (t,))
            s = pool.apply(hf.sum, (t,), {"axis": 1})
            f, again = pool.map(hf.exp, [c, t])
            same = pool.apply(pickle.loads, (pickle.dumps(hf.exp),))
    finally:
        os.environ["PYTHONPATH"] = env
    np.testing.assert_allclose(_host(e), np.exp(a), rtol=1e-15)
    np.testing.assert_allclose(_host(s), a.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(_host(f), np.exp(np.conj(a + 1j * a)[:, ::2]), rtol=1e-14)
    np.testing.assert_array_equal(_host(again), _host(e))
    assert same is hf.exp


def test_devices_dtypes_and_generators_pickle():
    for obj in (hf.Device("cpu"), hf.float32, hf.complex128, hf.finfo(hf.float32)):
        assert pickle.loads(pickle.dumps(obj)) == obj
    g = hf.random.Generator(7)
    g.standard_normal((3,))
    twin = pickle.loads(pickle.dumps(g))  # the same seed and offset: the same next draws
    assert _host(twin.random((4,))).tolist() == _host(g.random((4,))).tolist()
