"""Inspection and interchange: __array_api_version__, __array_namespace__ (and
array-api-compat), __array_namespace_info__(), DLPack with NumPy / PyTorch / CuPy, and
the signatures of every namespace function against the specification's."""
import inspect
import types

import numpy as np
import pytest

import hipfer as hf
from hipfer._device import Device


def host(t):
    return np.asarray(t.to_device("cpu"))


def ptr(a) -> int:
    return a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else a.data.ptr


# ------------------------------------------------------------- the specification's signatures
# name -> parameter list as written in the array API 2025.12 specification (the stubs in
# data-apis/array-api, src/array_api_stubs/_2025_12). Only names hipfer has are checked,
# so the test keeps passing as topic modules add theirs.
_X = "x, /"
_X12 = "x1, x2, /"
_RED = "x, /, *, axis=None, keepdims=False"
_LIKE = "x, /, *, dtype=None, device=None"
_FFT = "x, /, *, n=None, axis=-1, norm='backward'"
_FFTN = "x, /, *, s=None, axes=None, norm='backward'"
_FREQ = "n, /, *, d=1.0, dtype=None, device=None"
UNARY = """abs acos acosh asin asinh atan atanh bitwise_invert ceil conj cos cosh exp expm1
floor imag isfinite isinf isnan log log10 log1p log2 logical_not negative positive real
reciprocal round sign signbit sin sinh sqrt square tan tanh trunc""".split()
BINARY = """add atan2 bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor
copysign divide equal floor_divide greater greater_equal hypot less less_equal logaddexp
logical_and logical_or logical_xor maximum minimum multiply nextafter not_equal pow
remainder subtract""".split()
NAMESPACE = {
    **{n: _X for n in UNARY}, **{n: _X12 for n in BINARY},
    "clip": "x, /, min=None, max=None",
    # creation
    "arange": "start, /, stop=None, step=1, *, dtype=None, device=None",
    "asarray": "obj, /, *, dtype=None, device=None, copy=None",
    "empty": "shape, *, dtype=None, device=None",
    "empty_like": _LIKE,
    "eye": "n_rows, n_cols=None, /, *, k=0, dtype=None, device=None",
    "from_dlpack": "x, /, *, device=None, copy=None",
    "full": "shape, fill_value, *, dtype=None, device=None",
    "full_like": "x, /, fill_value, *, dtype=None, device=None",
    "linspace": "start, stop, /, num, *, dtype=None, device=None, endpoint=True",
    "meshgrid": "*arrays, indexing='xy'",
    "ones": "shape, *, dtype=None, device=None",
    "ones_like": _LIKE,
    "tril": "x, /, *, k=0",
    "triu": "x, /, *, k=0",
    "zeros": "shape, *, dtype=None, device=None",
    "zeros_like": _LIKE,
    # data types
    "astype": "x, dtype, /, *, copy=True, device=None",
    "can_cast": "from_, to, /",
    "finfo": "type, /",
    "iinfo": "type, /",
    "isdtype": "dtype, kind",
    "result_type": "*arrays_and_dtypes",
    # indexing
    "take": "x, indices, /, *, axis=None",
    "take_along_axis": "x, indices, /, *, axis=-1",
    # inspection
    "__array_namespace_info__": "",
    # linear algebra
    "matmul": _X12,
    "matrix_transpose": _X,
    "tensordot": "x1, x2, /, *, axes=2",
    "vecdot": "x1, x2, /, *, axis=-1",
    # manipulation
    "broadcast_arrays": "*arrays",
    "broadcast_shapes": "*shapes",
    "broadcast_to": "x, /, shape",
    "concat": "arrays, /, *, axis=0",
    "expand_dims": "x, /, axis",
    "flip": "x, /, *, axis=None",
    "moveaxis": "x, source, destination, /",
    "permute_dims": "x, /, axes",
    "repeat": "x, repeats, /, *, axis=None",
    "reshape": "x, /, shape, *, copy=None",
    "roll": "x, /, shift, *, axis=None",
    "squeeze": "x, /, axis",
    "stack": "arrays, /, *, axis=0",
    "tile": "x, repetitions, /",
    "unstack": "x, /, *, axis=0",
    # searching
    "argmax": "x, /, *, axis=None, keepdims=False",
    "argmin": "x, /, *, axis=None, keepdims=False",
    "count_nonzero": _RED,
    "nonzero": _X,
    "searchsorted": "x1, x2, /, *, side='left', sorter=None",
    "where": "condition, x1, x2, /",
    # sets
    "isin": "x1, x2, /, *, invert=False",
    "unique_all": _X, "unique_counts": _X, "unique_inverse": _X, "unique_values": _X,
    # sorting
    "argsort": "x, /, *, axis=-1, descending=False, stable=True",
    "sort": "x, /, *, axis=-1, descending=False, stable=True",
    # statistical
    "cumulative_prod": "x, /, *, axis=None, dtype=None, include_initial=False",
    "cumulative_sum": "x, /, *, axis=None, dtype=None, include_initial=False",
    "max": _RED, "mean": _RED, "min": _RED,
    "prod": "x, /, *, axis=None, dtype=None, keepdims=False",
    "std": "x, /, *, axis=None, correction=0.0, keepdims=False",
    "sum": "x, /, *, axis=None, dtype=None, keepdims=False",
    "var": "x, /, *, axis=None, correction=0.0, keepdims=False",
    # utility
    "all": _RED, "any": _RED,
    "diff": "x, /, *, axis=-1, n=1, prepend=None, append=None",
}
LINALG = {
    "cholesky": "x, /, *, upper=False",
    "cross": "x1, x2, /, *, axis=-1",
    "det": _X, "diagonal": "x, /, *, offset=0",
    "eig": _X, "eigh": _X, "eigvals": _X, "eigvalsh": _X, "inv": _X,
    "matmul": _X12,
    "matrix_norm": "x, /, *, keepdims=False, ord='fro'",
    "matrix_power": "x, n, /",
    "matrix_rank": "x, /, *, rtol=None",
    "matrix_transpose": _X,
    "outer": _X12,
    "pinv": "x, /, *, rtol=None",
    "qr": "x, /, *, mode='reduced'",
    "slogdet": _X,
    "solve": _X12,
    "svd": "x, /, *, full_matrices=True",
    "svdvals": _X,
    "tensordot": "x1, x2, /, *, axes=2",
    "trace": "x, /, *, offset=0, dtype=None",
    "vecdot": "x1, x2, /, *, axis=-1",
    "vector_norm": "x, /, *, axis=None, keepdims=False, ord=2",
}
FFT = {
    "fft": _FFT, "ifft": _FFT, "rfft": _FFT, "irfft": _FFT, "hfft": _FFT, "ihfft": _FFT,
    "fftn": _FFTN, "ifftn": _FFTN, "rfftn": _FFTN, "irfftn": _FFTN,
    "fftfreq": _FREQ, "rfftfreq": _FREQ,
    "fftshift": "x, /, *, axes=None", "ifftshift": "x, /, *, axes=None",
}
_OTHER = "self, other, /"
ARRAY = {
    **{f"__{n}__": _OTHER for n in """add sub mul truediv floordiv mod pow matmul and or xor
       lshift rshift lt le gt ge eq ne iadd isub imul itruediv ifloordiv imod ipow imatmul
       iand ior ixor ilshift irshift radd rsub rmul rtruediv rfloordiv rmod rpow rmatmul
       rand ror rxor rlshift rrshift""".split()},
    **{f"__{n}__": "self, /" for n in "abs neg pos invert bool complex float int index dlpack_device".split()},
    "__array_namespace__": "self, /, *, api_version=None",
    "__dlpack__": "self, /, *, stream=None, max_version=None, dl_device=None, copy=None",
    "__getitem__": "self, key, /",
    "__setitem__": "self, key, value, /",
    "to_device": "self, device, /, *, stream=None",
}


def _spec_params(spec: str) -> list:
    ns: dict = {}
    exec(f"def f({spec}): pass", ns)  # the table's text is ours, not input
    return list(inspect.signature(ns["f"]).parameters.values())


def _signature_problem(obj, spec: str):
    """None when obj's signature starts with the specified parameters (same names, kinds
    and defaults) and adds only keyword-only parameters with defaults (the standard
    allows extra arguments)."""
    try:
        got = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError) as e:
        return f"no signature ({e})"
    want = _spec_params(spec)
    for i, w in enumerate(want):
        if i >= len(got):
            return f"missing parameter {w}"
        g = got[i]
        if (g.name, g.kind, g.default) != (w.name, w.kind, w.default):
            return f"parameter {i}: {g} ({g.kind.description}), the standard has {w} ({w.kind.description})"
    for g in got[len(want):]:
        if g.kind is not g.KEYWORD_ONLY or g.default is g.empty:
            return f"extra parameter {g} must be keyword-only with a default"
    return None


def _spaces():
    yield "hipfer", hf, NAMESPACE
    for sub, table in (("linalg", LINALG), ("fft", FFT)):
        mod = getattr(hf, sub, None)
        if isinstance(mod, types.ModuleType):
            yield f"hipfer.{sub}", mod, table
    yield "Tensor", hf.Tensor, ARRAY


def test_signatures_match_the_specification():
    problems, checked = [], 0
    for where, space, table in _spaces():
        for name, spec in table.items():
            obj = getattr(space, name, None)
            if obj is None:
                continue
            checked += 1
            why = _signature_problem(obj, spec)
            if why:
                problems.append(f"{where}.{name}: {why}")
    assert not problems, "\n".join(problems)
    assert checked > 60


def test_public_functions_have_their_names():
    bad = []
    for where, space, _ in _spaces():
        if space is hf.Tensor:
            continue
        for name, obj in vars(space).items():
            if name.startswith("_") or not isinstance(obj, types.FunctionType):
                continue
            if "<locals>" in obj.__qualname__ or obj.__name__ != name:
                bad.append(f"{where}.{name}: __name__={obj.__name__!r} "
                           f"__qualname__={obj.__qualname__!r}")
    assert not bad, "\n".join(bad)
    assert hf.add.__qualname__ == "add" and hf.less.__name__ == "less"
    assert hf.Tensor.__radd__.__qualname__ == "Tensor.__radd__"


def test_the_table_checker_catches_mistakes():
    def good(x, /, *, axis=None, keepdims=False, extra=1):
        pass

    def not_positional_only(x, *, axis=None, keepdims=False):
        pass

    def wrong_default(x, /, *, axis=None, keepdims=True):
        pass

    def extra_positional(x, y, /, *, axis=None, keepdims=False):
        pass

    spec = NAMESPACE["sum"].replace("dtype=None, ", "")
    assert _signature_problem(good, spec) is None
    for bad in (not_positional_only, wrong_default, extra_positional):
        assert _signature_problem(bad, spec), bad.__name__


# ------------------------------------------------------------- version, namespace
def test_api_version():
    assert hf.__array_api_version__ == "2025.12"


def test_array_namespace(be):
    x = hf.asarray(np.ones(3))
    assert x.__array_namespace__() is hf
    assert x.__array_namespace__(api_version="2025.12") is hf
    assert x.__array_namespace__(api_version="2023.12") is hf
    with pytest.raises(ValueError, match="2026.12"):
        x.__array_namespace__(api_version="2026.12")


def test_array_api_compat_finds_hipfer(be):
    compat = pytest.importorskip("array_api_compat")
    x, y = hf.asarray(np.ones(3)), hf.asarray(np.zeros((2, 3)))
    assert compat.array_namespace(x) is hf
    assert compat.array_namespace(x, y, 1.0) is hf
    assert compat.is_array_api_obj(x)
    assert compat.device(x) == x.device


# ------------------------------------------------------------- __array_namespace_info__
def test_info_object():
    info = hf.__array_namespace_info__()
    caps = info.capabilities()
    assert set(caps) == {"boolean indexing", "data-dependent shapes", "max dimensions"}
    assert isinstance(caps["boolean indexing"], bool)
    assert isinstance(caps["data-dependent shapes"], bool)
    assert caps["max dimensions"] == 12
    assert info.default_device() == hf.get_default_device()
    with hf.default_device("cpu"):
        assert info.default_device() == Device("cpu")
    want = {"real floating": hf.float64, "complex floating": hf.complex128,
            "integral": hf.int64, "indexing": hf.int64}
    assert info.default_dtypes() == want
    assert info.default_dtypes(device="cpu") == want
    devs = info.devices()
    assert Device("cpu") in devs and all(isinstance(d, Device) for d in devs)


def test_info_dtypes():
    info = hf.__array_namespace_info__()
    every = info.dtypes(device="cpu")  # the standard's dtypes; float16 is an extension
    assert list(every) == [t.name for t in hf._dtypes.ALL_DTYPES if t != hf.float16]
    assert list(info.dtypes(device="cpu", extensions=True)) == [t.name for t in hf._dtypes.ALL_DTYPES]
    assert all(every[k] == np.dtype(k) for k in every)
    assert set(info.dtypes(device="cpu", kind="integral")) == {
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
    assert set(info.dtypes(device="cpu", kind=("bool", "complex floating"))) == {
        "bool", "complex64", "complex128"}
    assert set(info.dtypes(device="cpu", kind="real floating")) == {"float32", "float64"}
    assert set(info.dtypes(device="cpu", kind="real floating", extensions=True)) == {
        "float16", "float32", "float64"}
    assert info.dtypes(device="cpu", kind=hf.int8) == {"int8": hf.int8}
    assert list(info.dtypes(device=Device("gpu", 0))) == list(every)  # the same on every device
    with pytest.raises(ValueError):
        info.dtypes(kind="integer")
    with pytest.raises(ValueError):
        info.dtypes(device="tpu")


# ------------------------------------------------------------- DLPack
def test_dlpack_device(be):
    x = hf.asarray(np.ones(3))
    kind, idx = x.__dlpack_device__()
    if be.name == "numpy":
        assert (kind, idx) == (1, 0)
    else:
        assert kind in (2, 10) and idx == x.device.index


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float64",
                                   "complex64", "complex128"])
def test_from_dlpack_backend_arrays_zero_copy(dtype, be, rng):
    a = (rng.standard_normal((4, 6)) * 5).astype(dtype)
    data = be.asarray(a)  # a numpy or cupy array
    for view in (data, data[::2, 1::3], data.T, data[1, 2, ...], data[:0]):
        t = hf.from_dlpack(view)
        assert t.device == be.device and t.dtype == np.dtype(dtype)
        assert t.shape == view.shape
        if view.size:
            assert ptr(t._data) == ptr(view)  # no copy
        np.testing.assert_array_equal(host(t), be.asnumpy(view))


def test_dlpack_round_trip_through_numpy():
    a = np.arange(12.0).reshape(3, 4)
    x = hf.asarray(a, device="cpu")
    b = np.from_dlpack(x)
    assert np.shares_memory(a, b)
    c = np.from_dlpack(x[:, ::-2])
    np.testing.assert_array_equal(c, a[:, ::-2])
    assert np.shares_memory(a, c)
    h = hf.asarray(np.array([1.5, -0.0, np.inf], np.float16), device="cpu")
    np.testing.assert_array_equal(np.from_dlpack(h), [1.5, -0.0, np.inf])


def test_dlpack_resolves_conjugation(be, rng):
    a = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    z = hf.conj(hf.asarray(a))
    got = hf.from_dlpack(be.xp.from_dlpack(z))
    np.testing.assert_array_equal(host(got), np.conj(a))
    with pytest.raises(BufferError, match="conjugated"):
        z.__dlpack__(copy=False)


def test_dlpack_versioned_and_copy_keywords(be):
    a = np.arange(6.0)
    x = hf.asarray(a)
    cap = x.__dlpack__(max_version=(1, 0))
    assert type(cap).__name__ == "PyCapsule"
    if be.name == "numpy":
        y = np.from_dlpack(x, copy=True)
    else:  # a capsule: every CuPy release takes one (the copy keyword is newer)
        y = be.xp.from_dlpack(x.__dlpack__(copy=True))
    y[0] = 42
    assert host(x)[0] == 0


def test_dlpack_to_cpu_device(be):
    x = hf.asarray(np.arange(4.0))
    cap = x.__dlpack__(dl_device=(1, 0), copy=None if be.name == "numpy" else True)
    assert type(cap).__name__ == "PyCapsule"
    if be.name != "numpy":
        with pytest.raises(BufferError):
            x.__dlpack__(dl_device=(1, 0), copy=False)
    else:
        with pytest.raises(BufferError):
            x.__dlpack__(dl_device=(2, 0))


def test_from_dlpack_copy_and_device_rules(be):
    a = np.arange(6.0)
    src = be.asarray(a)
    t = hf.from_dlpack(src, copy=True)
    assert ptr(t._data) != ptr(src)
    np.testing.assert_array_equal(host(t), a)
    t0 = hf.from_dlpack(src, copy=False)
    assert ptr(t0._data) == ptr(src)
    c = hf.from_dlpack(src, device="cpu")
    assert c.device == Device("cpu")
    np.testing.assert_array_equal(np.asarray(c), a)
    if be.name != "numpy":
        with pytest.raises(BufferError):
            hf.from_dlpack(src, device="cpu", copy=False)


def test_from_dlpack_tensors(be):
    x = hf.asarray(np.arange(6.0))
    assert hf.from_dlpack(x) is x
    y = hf.from_dlpack(x, copy=True)
    assert ptr(y._data) != ptr(x._data)
    z = hf.conj(hf.asarray(np.array([1 + 2j])))
    assert hf.from_dlpack(z).is_conj()  # the flag travels; nothing is copied
    np.testing.assert_array_equal(host(hf.from_dlpack(z, copy=True)), [1 - 2j])
    c = hf.from_dlpack(x, device="cpu")
    assert c.device == Device("cpu")
    if be.name != "numpy":
        with pytest.raises(BufferError):
            hf.from_dlpack(x, device="cpu", copy=False)


def test_from_dlpack_rejects_non_producers():
    with pytest.raises(TypeError, match="__dlpack__"):
        hf.from_dlpack([1, 2, 3])
    with pytest.raises(BufferError):
        hf.from_dlpack(np.array(["a"]))  # NumPy cannot export strings


def test_torch_interchange():
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    x = hf.from_dlpack(t)
    assert x.device == Device("cpu") and x.dtype == hf.float32
    assert ptr(x._data) == t.data_ptr()
    np.testing.assert_array_equal(np.asarray(x), t.numpy())
    v = hf.from_dlpack(t[:, 1::2].T)
    np.testing.assert_array_equal(np.asarray(v), t[:, 1::2].T.numpy())
    for dt in (torch.bool, torch.int16, torch.uint8, torch.complex64, torch.float64):
        s = torch.ones(3, dtype=dt)
        np.testing.assert_array_equal(np.asarray(hf.from_dlpack(s)), s.numpy())
    a = np.arange(6.0).reshape(2, 3)
    h = hf.asarray(a, device="cpu")
    back = torch.from_dlpack(h)
    assert back.data_ptr() == ptr(a)
    z = hf.conj(hf.asarray(np.array([1 + 2j, 3 - 1j]), device="cpu"))
    np.testing.assert_array_equal(torch.from_dlpack(z).numpy(), [1 - 2j, 3 + 1j])


def test_to_device_stream_keyword(be):
    x = hf.asarray(np.arange(3.0))
    assert x.to_device(x.device, stream=None) is x
    moved = x.to_device("cpu")
    np.testing.assert_array_equal(np.asarray(moved), [0.0, 1.0, 2.0])
    if be.name != "numpy":
        import cupy
        s = cupy.cuda.Stream()
        y = hf.asarray(np.arange(3.0), device="cpu").to_device(be.device, stream=s)
        s.synchronize()
        np.testing.assert_array_equal(host(y), [0.0, 1.0, 2.0])


def test_array_attributes(be, rng):
    a = rng.standard_normal((2, 3, 4))
    x = hf.asarray(a)
    assert x.device == be.device
    np.testing.assert_array_equal(host(x.mT), np.swapaxes(a, -1, -2))
    np.testing.assert_array_equal(host(x[0].T), a[0].T)
    np.testing.assert_array_equal(host(x.T), a.T)  # NumPy's: every axis reversed
    with pytest.raises(ValueError):
        hf.asarray(np.ones(3)).mT
