"""Dask arrays with hipfer chunks (hipfer/dask.py): the dispatch registration in either
import order, the operations Dask runs on chunks, the ``array.backend: hipfer`` entry
point, conversions, distributed's serialization and a two-worker cluster.

Everything runs in the refuse-host mode (CPU tensors refuse implicit conversion to NumPy
as GPU tensors do; the cluster's workers get HIPFER_REFUSE_HOST=1), so a Dask path that
quietly converts a chunk fails here. Each result is checked to be a hipfer Tensor and
compared with the same computation in NumPy.
"""
import subprocess
import sys

import numpy as np
import pytest

import hipfer as hf

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import hipfer.dask as hd  # noqa: E402

pytestmark = pytest.mark.usefixtures("refuse_host")


def host(t):
    assert isinstance(t, hf.Tensor), type(t)
    return np.asarray(t, copy=True)


def chunked(a, chunks):
    x = da.from_array(hf.asarray(a), chunks=chunks)
    assert isinstance(x._meta, hf.Tensor)
    return x


def compute(x, **kw):
    out = x.compute(scheduler="sync", **kw)
    assert isinstance(out, hf.Tensor), type(out)
    return out


@pytest.fixture
def data():
    rng = np.random.default_rng(20)
    return rng.standard_normal((12, 10)), rng.standard_normal((10, 8))


# --------------------------------------------------------------- registration
@pytest.mark.parametrize("order", ["hipfer first", "dask first"])
def test_registration_in_either_order(order):
    first, second = ("hipfer", "dask.array") if order == "hipfer first" else ("dask.array", "hipfer")
    code = f"""
import sys
import {first}
import {second}
import hipfer
assert "hipfer.dask" in sys.modules, "not registered"
import hipfer.dask as hd
from dask.array.dispatch import concatenate_lookup
assert hd._REGISTERED and concatenate_lookup.dispatch(hipfer.Tensor) is hd._concatenate
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_import_hipfer_does_not_import_dask():
    r = subprocess.run([sys.executable, "-c", "import sys, hipfer; "
                        "assert not any(m == 'dask' or m.startswith('dask.') "
                        "for m in sys.modules), 'dask imported'"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_dispatch_and_chunk_type():
    from dask.array import dispatch as dd
    from dask.array.chunk_types import is_valid_chunk_type
    from dask.sizeof import sizeof
    t = hf.ones((3, 4), dtype=hf.float32)
    assert is_valid_chunk_type(hf.Tensor)
    assert sizeof(t) == 48
    for lookup in (dd.concatenate_lookup, dd.tensordot_lookup, dd.einsum_lookup,
                   dd.take_lookup, dd.percentile_lookup, dd.empty_lookup, dd.numel_lookup,
                   dd.nannumel_lookup, dd.divide_lookup, dd.to_numpy_dispatch):
        assert lookup.dispatch(hf.Tensor).__module__ == "hipfer.dask", lookup


# --------------------------------------------------------------- chunk operations
OPS = {
    "ufunc": (lambda m, x: m.sin(x) * 2 + 1),
    "sum": (lambda m, x: x.sum()),
    "sum axis": (lambda m, x: x.sum(axis=0)),
    "mean": (lambda m, x: x.mean(axis=1)),
    "std": (lambda m, x: x.std()),
    "var ddof": (lambda m, x: x.var(axis=0, ddof=1)),
    "max": (lambda m, x: x.max(axis=1)),
    "argmax": (lambda m, x: x.argmax(axis=0)),
    "astype": (lambda m, x: x.astype(np.float32)),
    "transpose": (lambda m, x: x.T + 0),
    "reshape": (lambda m, x: x.reshape(120)),
    "where": (lambda m, x: m.where(x > 0, x, -x)),
    "fancy index": (lambda m, x: x[[0, 5, 11]]),
    "slice": (lambda m, x: x[1::3, ::2]),
    "concatenate": (lambda m, x: m.concatenate([x, x * 2], axis=1)),
    "stack": (lambda m, x: m.stack([x, x])),
    "isnan any": (lambda m, x: m.isnan(x).any()),
    "count_nonzero": (lambda m, x: m.count_nonzero(x > 0)),
}


@pytest.mark.parametrize("name", list(OPS))
def test_chunk_operations(name, data):
    a, _ = data
    x = chunked(a, (5, 4))
    got = compute(OPS[name](da, x))
    want = OPS[name](np, a)
    np.testing.assert_allclose(host(got), want, rtol=1e-6, atol=1e-12)


def test_rechunk_keeps_hipfer(data):
    a, _ = data
    x = chunked(a, (5, 4)).rechunk((3, 10))
    blocks = x.to_delayed().ravel()
    assert all(isinstance(b.compute(scheduler="sync"), hf.Tensor) for b in blocks)
    np.testing.assert_array_equal(host(compute(x)), a)


def test_contractions(data):
    a, b = data
    x, y = chunked(a, (5, 4)), chunked(b, (4, 3))
    np.testing.assert_allclose(host(compute(x @ y)), a @ b, rtol=1e-12)
    np.testing.assert_allclose(host(compute(da.tensordot(x, y, axes=1))), a @ b, rtol=1e-12)
    np.testing.assert_allclose(host(compute(da.einsum("ij,jk->ik", x, y))), a @ b, rtol=1e-12)
    np.testing.assert_allclose(host(compute(da.dot(x, y))), a @ b, rtol=1e-12)


def test_threaded_scheduler(data):
    a, b = data
    x, y = chunked(a, (3, 5)), chunked(b, (5, 4))
    out = ((x @ y) ** 2).sum(axis=0).compute(scheduler="threads")
    assert isinstance(out, hf.Tensor)
    np.testing.assert_allclose(host(out), ((a @ b) ** 2).sum(axis=0), rtol=1e-12)


def test_numel_and_divide_dispatch():
    from dask.array import dispatch as dd
    t = hf.asarray(np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan]]))
    for axis, keepdims in ((None, False), (0, True), (1, False), ((0, 1), True)):
        n = dd.numel_lookup(t, axis=axis, keepdims=keepdims)
        nn = dd.nannumel_lookup(t, axis=axis, keepdims=keepdims)
        ref = np.ones((2, 3))
        np.testing.assert_array_equal(host(n), ref.sum(axis=axis, keepdims=keepdims))
        np.testing.assert_array_equal(host(nn), (~np.isnan(host(t))).sum(axis=axis,
                                                                         keepdims=keepdims))
    q = dd.divide_lookup(t, hf.asarray(2.0), dtype=np.float32)
    assert q.dtype == hf.float32


# --------------------------------------------------------------- backend entry point
def test_array_backend_hipfer():
    with dask.config.set({"array.backend": "hipfer"}):
        made = {"ones": da.ones((6, 4), chunks=3), "zeros": da.zeros((5,), chunks=2),
                "full": da.full((4, 4), 7.0, chunks=2), "empty": da.empty((3,), chunks=2),
                "arange": da.arange(10, chunks=4)}
    for name, x in made.items():
        assert isinstance(x._meta, hf.Tensor), name
        out = compute(x)
        if name != "empty":
            want = {"ones": np.ones((6, 4)), "zeros": np.zeros(5), "full": np.full((4, 4), 7.0),
                    "arange": np.arange(10)}[name]
            np.testing.assert_array_equal(host(out), want)


def test_random_under_the_hipfer_backend():
    with dask.config.set({"array.backend": "hipfer"}):
        rng = da.random.default_rng(5)
        x = rng.random((8, 6), chunks=4, dtype="float32")
        z = rng.standard_normal((10,), chunks=5)
        legacy = da.random.random((8, 6), chunks=4)
    for a, dt in ((x, np.float32), (z, np.float64), (legacy, np.float64)):
        assert isinstance(a._meta, hf.Tensor)
        out = host(compute(a))
        assert out.dtype == dt and np.isfinite(out).all()
    u = host(compute(x))
    assert 0 <= u.min() and u.max() < 1 and len(np.unique(u)) > 40
    np.testing.assert_array_equal(host(compute(x)), u)  # one graph, one answer
    # the blocks draw different streams
    assert not np.array_equal(u[:4, :4], u[4:, :4])


def test_to_hipfer_and_back(data):
    a, _ = data
    x = da.from_array(a, chunks=5)  # NumPy chunks (host data the user gave)
    y = hd.to_hipfer(x)
    assert isinstance(y._meta, hf.Tensor)
    np.testing.assert_array_equal(host(compute(y * 1)), a)
    z = hd.to_numpy(y)
    out = z.compute(scheduler="sync")
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, a)
    with dask.config.set({"array.backend": "hipfer"}):
        assert isinstance(x.to_backend()._meta, hf.Tensor)
    assert type(y.to_backend("numpy").compute(scheduler="sync")) is np.ndarray


# --------------------------------------------------------------- distributed
distributed = pytest.importorskip("distributed")


def test_serialization_round_trip():
    from distributed.protocol import deserialize, serialize
    a = np.arange(24.0).reshape(4, 6)
    for t in (hf.asarray(a), hf.asarray(a)[:, ::2], hf.conj(hf.asarray(a + 1j))):
        header, frames = serialize(t, serializers=["dask"])
        assert header["serializer"] == "dask"  # not pickle
        back = deserialize(header, frames)
        assert isinstance(back, hf.Tensor) and back.device == t.device
        np.testing.assert_array_equal(host(back), host(t))
    # a contiguous CPU tensor goes as its own buffer (no copy)
    t = hf.asarray(a, device="cpu")
    header, frames = serialize(t, serializers=["dask"])
    assert any(np.shares_memory(np.frombuffer(f, dtype=np.uint8), t._data) for f in frames)


@pytest.fixture(scope="module")
def client():
    from distributed import Client
    cluster = hd.gpu_cluster(2, env={"HIPFER_REFUSE_HOST": "1"}, silence_logs=40)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_cluster_computes_with_hipfer_chunks(client, data):
    a, b = data
    x, y = chunked(a, (4, 5)), chunked(b, (5, 4))
    fut = client.compute(((x @ y) + 1).sum(axis=1))
    out = fut.result()
    assert isinstance(out, hf.Tensor)
    np.testing.assert_allclose(host(out), ((a @ b) + 1).sum(axis=1), rtol=1e-12)
    # the workers hold hipfer chunks and run in the refuse-host mode
    info = client.run(lambda: __import__("hipfer")._tensor.REFUSE_HOST)
    assert len(info) == 2 and all(info.values())


def test_submit_hipfer_functions(client):
    t = hf.asarray(np.arange(10.0))
    fut = client.submit(hf.sum, t)
    out = fut.result()
    assert isinstance(out, hf.Tensor) and float(out) == 45.0
    [remote] = client.scatter([t])
    out = client.submit(hf.cumulative_sum, remote).result()
    np.testing.assert_array_equal(host(out), np.cumsum(np.arange(10.0)))


def _workloads():
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import dask_workloads
    return dask_workloads


def test_example_workloads_local():
    """examples/dask_workloads.py at a small size (each checked against NumPy there)."""
    pytest.importorskip("xarray")
    times = _workloads().run(n=64, chunk=16)
    assert set(times) == set(_workloads().WORKLOADS)


def test_example_workloads_on_the_cluster(client):
    pytest.importorskip("xarray")
    with dask.config.set(scheduler=client):
        _workloads().run(n=64, chunk=16, only=["reduction", "matmul chain",
                                               "tall-skinny QR/SVD", "einsum/tensordot"])
