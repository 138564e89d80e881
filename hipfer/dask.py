"""hipfer.dask: Dask arrays whose chunks are hipfer tensors, and one Dask worker per GPU.

Nothing here needs a call from the user: once hipfer and ``dask.array`` are both imported
(in either order: ``hipfer._dask_hook`` watches for the second import), ``register()``
teaches Dask's dispatch about Tensor -- concatenation, tensordot, einsum, take,
percentile, empty, element counts, divide, conversion to NumPy (an explicit copy) -- and
registers Tensor as a chunk type, its ``sizeof`` and, when ``distributed`` is imported,
its serialization. ``import hipfer`` never imports Dask.

    import dask, dask.array as da, hipfer as hf
    x = da.from_array(hf.ones((4096, 4096)), chunks=1024)     # hipfer chunks
    with dask.config.set({"array.backend": "hipfer"}):         # da.ones, da.random, ...
        y = da.random.default_rng(0).random((4096, 4096), chunks=1024)
    (x @ y).sum().compute()                                    # a 0-d hipfer Tensor

``to_hipfer(arr)`` turns a Dask array of NumPy or CuPy chunks into hipfer chunks (the
``array.backend`` entry point's ``to_backend``); ``arr.map_blocks(to_numpy)`` or
``to_numpy(arr)`` go back explicitly. ``gpu_cluster()`` starts one worker per GPU of this
machine (the device chosen per worker through ``HIP_VISIBLE_DEVICES`` on ROCm and
``CUDA_VISIBLE_DEVICES`` on CUDA, as dask-cuda's LocalCUDACluster does). See
docs/dask.md.
"""
from __future__ import annotations

import math

import numpy as np

import dask
import dask.array as da
from dask.array import dispatch as _dispatch
from dask.array.backends import ArrayBackendEntrypoint
from dask.array.chunk_types import register_chunk_type
from dask.sizeof import sizeof as _sizeof
from dask.utils import Dispatch

import hipfer as hf
from hipfer import Tensor

__all__ = ["register", "to_hipfer", "to_numpy", "to_hipfer_dispatch", "HipferBackendEntrypoint",
           "RandomState", "gpu_cluster", "worker_env"]

#: block -> hipfer Tensor, by the block's type (NumPy, CuPy, Tensor; others by DLPack)
to_hipfer_dispatch = Dispatch("to_hipfer_dispatch")

_REGISTERED = False


# --------------------------------------------------------------------- dispatch
def _concatenate(arrays, axis=0):
    arrays = [a if isinstance(a, Tensor) else hf.asarray(a) for a in arrays]
    if axis is None:
        arrays, axis = [hf.reshape(a, (-1,)) for a in arrays], 0
    return hf.concat(arrays, axis=axis)


def _tensordot(a, b, axes=2):
    return hf.tensordot(a, b, axes=axes)


def _einsum(*operands, dtype=None, optimize="auto", casting="safe", order="K", **kwargs):
    # Dask passes NumPy's einsum keywords; order and casting say nothing about the values
    out = hf.einsum(*operands, optimize=optimize, **kwargs)
    return out if dtype is None else hf.astype(out, hf.result_type(dtype))


def _take(a, indices, axis=0):
    if not isinstance(indices, Tensor):
        indices = hf.asarray(np.asarray(indices), device=a.device)  # host indices: Dask's own
    return hf.take(a, indices, axis=axis)


def _percentile(a, q, method="linear"):
    # dask.array.percentile's per-block step: (percentiles, number of values)
    n = len(a)
    if not n:
        return None, n
    q = hf.asarray(np.asarray(list(q), dtype=np.float64), device=a.device)
    return hf.percentile(a, q, method=method), n


def _empty(shape, dtype=None, **kwargs):
    return hf.empty(shape, dtype=None if dtype is None else hf.result_type(dtype))


def _counted_shape(x, axis, keepdims):
    if axis is None:
        axis = tuple(range(x.ndim))
    elif not isinstance(axis, (tuple, list)):
        axis = (axis,)
    axis = tuple(a % x.ndim for a in axis) if x.ndim else ()
    count = math.prod(x.shape[a] for a in axis)
    shape = tuple((1 if i in axis else n) for i, n in enumerate(x.shape) if keepdims or i not in axis)
    return count, shape


def _numel(x, axis=None, keepdims=False, dtype=None, **kwargs):
    """The number of elements reduced over axis, shaped as the reduction (Dask's mean)."""
    count, shape = _counted_shape(x, axis, keepdims)
    return hf.full(shape, count, dtype=hf.float64 if dtype is None else hf.result_type(dtype),
                   device=x.device)


def _nannumel(x, axis=None, keepdims=False, dtype=None, **kwargs):
    """The number of non-NaN elements reduced over axis (Dask's nanmean)."""
    out = hf.sum(hf.logical_not(hf.isnan(x)), axis=axis, keepdims=keepdims)
    return hf.astype(out, hf.float64 if dtype is None else hf.result_type(dtype))


def _divide(x1, x2, out=None, dtype=None):
    res = hf.divide(x1, x2)
    return res if dtype is None else hf.astype(res, hf.result_type(dtype))


def _tensor_to_numpy(data, **kwargs):
    """A hipfer block as NumPy data: the explicit copy Dask's ``to_backend("numpy")``
    and ``to_numpy_dispatch`` ask for."""
    return np.asarray(data, copy=True)


def register() -> None:
    """Teach Dask about hipfer (idempotent; run by the import hook, see the module doc)."""
    global _REGISTERED
    if _REGISTERED:
        return
    _dispatch.concatenate_lookup.register(Tensor, _concatenate)
    _dispatch.tensordot_lookup.register(Tensor, _tensordot)
    _dispatch.einsum_lookup.register(Tensor, _einsum)
    _dispatch.take_lookup.register(Tensor, _take)
    _dispatch.percentile_lookup.register(Tensor, _percentile)
    _dispatch.empty_lookup.register(Tensor, _empty)
    _dispatch.numel_lookup.register(Tensor, _numel)
    _dispatch.nannumel_lookup.register(Tensor, _nannumel)
    _dispatch.divide_lookup.register(Tensor, _divide)
    _dispatch.to_numpy_dispatch.register(Tensor, _tensor_to_numpy)
    _sizeof.register(Tensor)(lambda t: t.size * t.dtype.itemsize)
    register_chunk_type(Tensor)
    _REGISTERED = True
    # the array.backend "hipfer" without the entry point too (a tree on PYTHONPATH, not
    # pip-installed, has no entry points)
    from dask.array.backends import array_creation_dispatch
    if "hipfer" not in array_creation_dispatch._lookup:
        array_creation_dispatch.register_backend("hipfer", HipferBackendEntrypoint())
    import sys
    dist = sys.modules.get("distributed")
    if dist is not None and not getattr(dist.__spec__, "_initializing", False):
        register_serialization()  # (a distributed still importing runs it when done)


_SERIALIZATION = False


# ------------------------------------------------------------------ conversions
@to_hipfer_dispatch.register(Tensor)
def _tensor_to_hipfer(data, device=None, **kwargs):
    return data if device is None else data.to_device(device)


@to_hipfer_dispatch.register(np.ndarray)
def _numpy_to_hipfer(data, device=None, **kwargs):
    return hf.asarray(data, device=device)


@to_hipfer_dispatch.register(object)
def _other_to_hipfer(data, device=None, **kwargs):
    # CuPy and other DLPack producers: zero-copy on their device
    t = hf.from_dlpack(data) if hasattr(data, "__dlpack__") else hf.asarray(data)
    return t if device is None else t.to_device(device)


def _meta(device=None, dtype=None):
    return hf.empty((0,), dtype=dtype or hf.float64, device=device)


def to_hipfer(arr, device=None):
    """A Dask array with hipfer chunks on device (default: the default device) made from
    arr's blocks (NumPy blocks move to the device; CuPy blocks convert zero-copy)."""
    if isinstance(arr._meta, Tensor) and device is None:
        return arr
    return arr.map_blocks(to_hipfer_dispatch, device=device, dtype=arr.dtype,
                          meta=_meta(device, arr.dtype))


def to_numpy(arr):
    """A Dask array with NumPy chunks from arr's hipfer chunks (an explicit copy each)."""
    return arr.map_blocks(_tensor_to_numpy, dtype=arr.dtype, meta=np.empty((0,), arr.dtype))


# --------------------------------------------------------- the array.backend entry point
class RandomState:
    """The legacy ``RandomState`` API Dask's ``da.random.<name>`` functions call per block
    under ``array.backend: hipfer``: seeded from Dask's per-block state data, drawing with
    hipfer's counter-based generator on the default device."""

    def __init__(self, seed=None):
        if seed is not None and not isinstance(seed, (int, np.integer)):
            # Dask hands each block an array of state words: fold them into one seed
            words = np.asarray(seed, dtype=np.uint64).ravel()
            seed = int(np.bitwise_xor.reduce(words * np.uint64(0x9E3779B97F4A7C15) +
                                             np.arange(words.size, dtype=np.uint64)))
        self._rng = hf.random.default_rng(seed)

    def random_sample(self, size=None, dtype=np.float64):
        return self._rng.random(size, dtype=dtype)

    random = random_sample

    def standard_normal(self, size=None):
        return self._rng.standard_normal(size)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return self._rng.normal(loc, scale, size)

    def uniform(self, low=0.0, high=1.0, size=None):
        return self._rng.uniform(low, high, size)

    def randint(self, low, high=None, size=None, dtype=np.int64):
        return self._rng.integers(low, high, size, dtype=dtype)

    def __getattr__(self, name):
        # the distributions hipfer's Generator has under the same name (exponential, ...)
        return getattr(self._rng, name)


class HipferBackendEntrypoint(ArrayBackendEntrypoint):
    """``dask.config.set({"array.backend": "hipfer"})``: da.ones/zeros/empty/full/arange
    and da.random make hipfer chunks on the default device (a GPU when one is usable)."""

    def __init__(self):
        if not _REGISTERED:
            register()

    @classmethod
    def to_backend_dispatch(cls):
        return to_hipfer_dispatch

    @classmethod
    def to_backend(cls, data, **kwargs):
        return to_hipfer(data, **kwargs)

    @property
    def RandomState(self):
        return RandomState

    @property
    def default_bit_generator(self):
        return hf.random.Philox

    @staticmethod
    def _with_meta(name, *args, meta=None, **kwargs):
        meta = _meta(dtype=kwargs.get("dtype")) if meta is None else meta
        with dask.config.set({"array.backend": "numpy"}):
            return getattr(da, name)(*args, meta=meta, **kwargs)

    @staticmethod
    def ones(*args, **kwargs):
        return HipferBackendEntrypoint._with_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args, **kwargs):
        return HipferBackendEntrypoint._with_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args, **kwargs):
        return HipferBackendEntrypoint._with_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args, **kwargs):
        return HipferBackendEntrypoint._with_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args, like=None, **kwargs):
        like = _meta() if like is None else like
        with dask.config.set({"array.backend": "numpy"}):
            return da.arange(*args, like=like, **kwargs)


# ---------------------------------------------------------------- serialization
def register_serialization() -> None:
    """distributed's serializers for Tensor: a CPU tensor's buffer goes as it is (NumPy's
    zero-copy frames); a GPU tensor goes as device frames where the transport carries them
    (the "cuda" family, UCX) and through host frames over TCP (the "dask" family), never
    as a pickled NumPy copy. The receiver rebuilds it on its own device (idempotent)."""
    global _SERIALIZATION
    if _SERIALIZATION:
        return
    from distributed.protocol import serialize
    from distributed.protocol.cuda import cuda_deserialize, cuda_serialize
    from distributed.protocol.serialize import dask_deserialize, dask_serialize

    def make(family):
        def dumps(t):
            if family == "cuda" and t.device.kind == "cpu":
                raise TypeError("a CPU tensor has no device frames")  # next family then
            data = t.resolve_conj()._data
            header, frames = serialize(data, serializers=[family] if t.device.kind != "cpu"
                                       else ["dask"], on_error="raise")
            return {"sub": header, "device": str(t.device)}, frames

        def loads(header, frames):
            from distributed.protocol import deserialize
            data = deserialize(header["sub"], frames)
            if header["device"] == "cpu":
                return hf.asarray(data, device="cpu", copy=False)  # the received buffer
            # a GPU tensor: on this worker's GPU (its gpu:0), its device frames or a copy
            #               of the host frames TCP brought
            if isinstance(data, np.ndarray):
                return hf.asarray(data, device="gpu")
            return hf.from_dlpack(data)
        return dumps, loads

    for family, ser, de in (("dask", dask_serialize, dask_deserialize),
                            ("cuda", cuda_serialize, cuda_deserialize)):
        dumps, loads = make(family)
        ser.register(Tensor)(dumps)
        de.register(Tensor)(loads)
    _SERIALIZATION = True


# -------------------------------------------------------------------- clusters
def worker_env(gpu: int, stack: str | None = None) -> dict:
    """The environment of the worker that owns GPU number gpu of this machine: that GPU
    first in HIP_VISIBLE_DEVICES (ROCm) or CUDA_VISIBLE_DEVICES (CUDA), as dask-cuda
    does, so the worker's default device gpu:0 is it."""
    from hipfer.prims.registry import gpu_status
    stack = stack or gpu_status().stack or "cuda"
    var = "HIP_VISIBLE_DEVICES" if stack == "rocm" else "CUDA_VISIBLE_DEVICES"
    return {var: str(gpu)}


def gpu_cluster(n_workers: int | None = None, *, threads_per_worker: int = 1, env=None,
                processes: bool = True, **kwargs):
    """A ``distributed.SpecCluster`` on this machine with one worker per GPU (n_workers
    defaults to the number of usable GPUs; with no GPU, to 1 CPU worker), each worker a
    process pinned to its GPU by ``worker_env``; env: more variables for every worker
    (e.g. HIPFER_REFUSE_HOST=1). kwargs go to SpecCluster (asynchronous, name, ...).

        from distributed import Client
        with hipfer.dask.gpu_cluster() as cluster, Client(cluster) as client: ...
    """
    from distributed import Nanny, Scheduler, SpecCluster, Worker

    from hipfer.prims.registry import gpu_status
    st = gpu_status()
    gpus = st.count if st.usable else 0
    if n_workers is None:
        n_workers = gpus or 1
    workers = {}
    for i in range(n_workers):
        wenv = dict(env or {})
        if gpus:
            wenv.update(worker_env(i % gpus, st.stack))
        options = {"nthreads": threads_per_worker}
        if processes:
            options["env"] = wenv
        workers[f"hipfer-{i}"] = {"cls": Nanny if processes else Worker, "options": options}
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": None}}
    return SpecCluster(workers=workers, scheduler=scheduler, **kwargs)


register()  # importing hipfer.dask registers (the import hook imports it)
