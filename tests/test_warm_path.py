"""The NumPy backend's compiled warm path (hipfer/_warm.c, wired in by hipfer._warmpath).

Every entry of every table runs both ways -- the Warm object and the Python function it
stands in for (``__wrapped__``) -- on fresh random values with the special ones mixed
in, and the two must agree bit for bit: dtype, shape, strides and every byte. The cases
the warm path declines must still be answered, by the Python path.
"""
from __future__ import annotations

import inspect
import os
import threading
import warnings

import numpy as np
import pytest

import hipfer as hf
from hipfer import _elementwise, _warmpath

needs_warm = pytest.mark.skipif(not _warmpath.enabled(), reason="hipfer._warm is not built")

SHAPES = [(), (0,), (7,), (3, 5), (2, 3, 4)]


def _cpu(a) -> hf.Tensor:
    """A tensor on the NumPy backend (where a GPU is usable it is the default device)."""
    return hf.asarray(a, device="cpu")


def test_built_where_ci_installs():
    """CI installs with a compiler and NumPy's headers: the extension must be there, or
    every test below would skip and the warm path go untested."""
    if os.environ.get("CI"):
        assert _warmpath.enabled()


def _values(rng, dt: np.dtype, shape) -> np.ndarray:
    """Random values of dt with the special ones mixed in (never all zeros)."""
    n = int(np.prod(shape))
    if dt.kind == "b":
        v = rng.random(n) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        v = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)
        special = np.array([0, 1, info.max, info.min, 2, 3], dtype=dt)
        v[: min(n, len(special))] = special[: min(n, len(special))]
    else:
        real = np.finfo(dt).dtype
        fin = np.finfo(real)
        special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, fin.max, fin.tiny / 4, -1.5],
                           dtype=real)
        v = (rng.standard_normal(n) * 3).astype(real)
        v[: min(n, len(special))] = special[: min(n, len(special))]
        if dt.kind == "c":
            im = (rng.standard_normal(n) * 3).astype(real)
            im[::3] = special[rng.integers(0, len(special), size=len(im[::3]))]
            z = np.empty(n, dtype=dt)
            z.real, z.imag = v, im
            v = z
        rng.shuffle(v)
    return np.asarray(v, dtype=dt).reshape(shape)


def _same(fast, slow):
    assert type(fast) is hf.Tensor and type(slow) is hf.Tensor
    f, s = fast._data, slow._data
    assert type(f) is np.ndarray and f.dtype == s.dtype and f.shape == s.shape
    assert f.strides == s.strides
    assert np.ascontiguousarray(f).tobytes() == np.ascontiguousarray(s).tobytes()


def _warm_functions(kind):
    table = {_warmpath.UNARY: {**_elementwise._UNARY, **_elementwise.NUMPY_UNARY},
             _warmpath.BINARY: {**_elementwise._BINARY, **_elementwise._SWAPPED,
                                **_elementwise.NUMPY_BINARY}}[kind]
    out = [(name, getattr(hf, name)) for name in table]
    return [(name, fn) for name, fn in out if hasattr(fn, "table")]


def _ids(pairs):
    return [name for name, _ in pairs]


UNARY = _warm_functions(_warmpath.UNARY)
BINARY = _warm_functions(_warmpath.BINARY)


@needs_warm
def test_tables_cover_the_common_ops():
    names = set(_ids(UNARY)) | set(_ids(BINARY))
    for name in ("add", "subtract", "multiply", "divide", "less", "greater", "equal", "exp",
                 "floor_divide", "remainder",
                 "negative", "abs", "sqrt", "maximum", "logical_and", "bitwise_xor",
                 "absolute", "arccos", "mod", "arctan2", "fmax", "fmod"):
        assert name in names, name
    # the ufunc's loop is called directly for the float32 arithmetic at least
    for fn in (hf.add, hf.multiply, hf.exp, hf.negative):
        assert dict((row[0], row[3]) for row in fn.table)[np.dtype(np.float32)]


def _run_both(fn, *args):
    """(fast result or exception, slow result or exception, whether the fast path served)."""
    hits = fn.hits
    try:
        fast = fn(*args)
    except Exception as e:  # noqa: BLE001 - compared with the Python path's below
        fast = e
    served = fn.hits > hits
    try:
        slow = fn.__wrapped__(*args)
    except Exception as e:  # noqa: BLE001
        slow = e
    return fast, slow, served


def _check(fast, slow):
    if isinstance(slow, Exception):
        assert type(fast) is type(slow), (fast, slow)
    else:
        assert not isinstance(fast, Exception), fast
        _same(fast, slow)


@needs_warm
@pytest.mark.parametrize("name,fn", UNARY, ids=_ids(UNARY))
def test_unary_matches_the_python_path(name, fn, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the ops ignore floating-point errors
        for in_dt, out_dt, _quiet, direct in fn.table:
            for shape in SHAPES:
                x = _cpu(_values(rng, in_dt, shape))
                fast, slow, served = _run_both(fn, x)
                _check(fast, slow)
                assert fast.dtype == out_dt
                # a 0-d result through the ufunc is a NumPy scalar: the Python path takes it
                assert served or (not direct and shape == ()), (name, in_dt, shape)


@needs_warm
@pytest.mark.parametrize("name,fn", BINARY, ids=_ids(BINARY))
def test_binary_matches_the_python_path(name, fn, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for in_dt, out_dt, _quiet, direct in fn.table:
            for shape in SHAPES:
                a = _cpu(_values(rng, in_dt, shape))
                b = _cpu(_values(rng, in_dt, shape))
                fast, slow, served = _run_both(fn, a, b)
                _check(fast, slow)
                assert served or (not direct and shape == ()), (name, in_dt, shape)


def _scalars(dt):
    floats = [2.0, -0.0, 0.0, float("nan"), float("inf"), -float("inf"), 0.1, 1e300]
    ints = [0, 3, -2, 127, 300, 2 ** 40, -(2 ** 63)]
    if dt.kind == "c":
        return floats + ints + [1 + 2j, complex(float("nan"), -0.0)]
    if dt.kind == "f":
        return floats + ints
    if dt.kind in "iu":
        return ints + [1.5]
    return [True, 1]


@needs_warm
@pytest.mark.parametrize("name,fn", BINARY, ids=_ids(BINARY))
def test_python_scalars_match_the_python_path(name, fn, rng):
    """Weak scalars on either side, the cached 0-d arrays among them: -0.0 and 0.0 stay
    apart, a NaN is found again, an int too large for the dtype raises as before."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for in_dt, *_ in fn.table:
            x = _cpu(_values(rng, in_dt, (6,)))
            for s in _scalars(in_dt) * 2:  # the second round reads the cache
                for args in ((x, s), (s, x)):
                    fast, slow, _ = _run_both(fn, *args)
                    _check(fast, slow)


@needs_warm
@np.errstate(all="ignore")
def test_operators_take_the_warm_path(rng):
    a = _cpu(_values(rng, np.dtype(np.float32), (4, 3)))
    b = _cpu(_values(rng, np.dtype(np.float32), (4, 3)))
    na, nb = a._data, b._data
    i, j = _cpu(np.arange(-6, 6, dtype=np.int32).reshape(4, 3)), _cpu(np.full((4, 3), 4, np.int32))
    ni, nj = i._data, j._data
    cases = [("__add__", lambda: a + b, na + nb), ("__radd__", lambda: 2.0 + a, 2.0 + na),
             ("__sub__", lambda: a - b, na - nb), ("__rsub__", lambda: 2.0 - a, np.float32(2) - na),
             ("__mul__", lambda: a * 2.0, na * np.float32(2)),
             ("__truediv__", lambda: a / b, na / nb), ("__rtruediv__", lambda: 1.0 / a, 1 / na),
             ("__lt__", lambda: a < b, na < nb), ("__ge__", lambda: a >= b, na >= nb),
             ("__eq__", lambda: a == b, na == nb), ("__neg__", lambda: -a, -na),
             ("__abs__", lambda: abs(a), np.abs(na)),
             ("__floordiv__", lambda: i // j, ni // nj),  # float //: the backend's fix-ups
             ("__mod__", lambda: a % 3.0, na % np.float32(3))]
    for dunder, run, want in cases:
        op = getattr(hf.Tensor, dunder)
        hits = op.hits
        got = run()
        assert op.hits == hits + 1, dunder
        np.testing.assert_array_equal(got._data, want)
        assert got.dtype == want.dtype
    # operands that are not ours: NotImplemented as before, so Python raises or reflects
    with pytest.raises(TypeError):
        a + "text"
    assert (a == None) is False  # noqa: E711 - the identity fallback
    assert a.__add__(b).shape == (4, 3) and hf.Tensor.__add__(a, b).shape == (4, 3)


@needs_warm
@np.errstate(all="ignore")
def test_declined_cases_take_the_python_path(rng):
    """Layouts, mixed dtypes, broadcasting and bool scalars are the Python path's, and
    still give NumPy's answers."""
    x = _values(rng, np.dtype(np.complex64), (6, 4))
    y = _values(rng, np.dtype(np.complex64), (6, 4))
    f = rng.standard_normal((6, 4)).astype(np.float32)
    a, b = _cpu(x), _cpu(y)
    cases = [
        (hf.add, (_cpu(f)[::2], _cpu(f)[1::2]), f[::2] + f[1::2]),
        (hf.add, (_cpu(f).mT, _cpu(f.T.copy())), f.T + f.T),
        (hf.add, (_cpu(f), _cpu(f.astype(np.float64))), f + f.astype(np.float64)),
        (hf.add, (_cpu(f[:, :1]), _cpu(f[:1, :])), f[:, :1] + f[:1, :]),
        (hf.add, (_cpu(f), True), f + np.float32(1)),
        (hf.exp, (_cpu(f)[:, ::2],), np.exp(f[:, ::2])),
        (hf.exp, (hf.conj(a)[::2],), np.exp(np.conj(x[::2]))),
    ]
    for fn, args, want in cases:
        hits = fn.hits
        got = fn(*args)
        assert fn.hits == hits
        np.testing.assert_allclose(got._host(), want, rtol=1e-6)


@needs_warm
@pytest.mark.parametrize("name,fn", UNARY + BINARY, ids=_ids(UNARY + BINARY))
def test_conjugated_operands_match_the_python_path(name, fn, rng):
    """A tensor read conjugated is conjugated a chunk at a time into a buffer: sizes
    around the chunk (256) included, either operand or both."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for in_dt, _out, _quiet, direct in fn.table:
            if in_dt.kind != "c":
                continue
            for shape in [(), (5,), (256,), (3, 257), (1000,)]:
                x = _cpu(_values(rng, in_dt, shape))
                y = _cpu(_values(rng, in_dt, shape))
                if fn.__wrapped__.__code__.co_argcount == 1:
                    cases = [(hf.conj(x),)]
                else:
                    cases = [(hf.conj(x), y), (x, hf.conj(y)), (hf.conj(x), hf.conj(y)),
                             (hf.conj(x), 2.5 - 1j)]
                for args in cases:
                    fast, slow, served = _run_both(fn, *args)
                    _check(fast, slow)
                    assert served == direct, (name, in_dt, shape)


@needs_warm
def test_floating_point_errors_stay_quiet():
    big = _cpu(np.full(5, 3e38, np.float32))
    zero = _cpu(np.zeros(5, np.float32))
    for state in ("warn", "raise"):
        with np.errstate(all=state), warnings.catch_warnings():
            warnings.simplefilter("error")
            assert np.isinf((big * big)._data).all()
            assert np.isnan((zero / zero)._data).all()
            assert np.isinf(hf.exp(big)._data).all()
            assert np.isinf(hf.sum(big)._data)
        assert np.geterr()["over"] == state or state == "raise"


@needs_warm
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
def test_reductions_match_the_python_path(name, rng):
    fn = getattr(hf, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for in_dt, *_ in fn.table:
            for shape in SHAPES:
                x = _cpu(_values(rng, in_dt, shape))
                fast, slow, served = _run_both(fn, x)
                _check(fast, slow)
                assert served or (name in ("max", "min") and 0 in shape)
            # arguments (and the Python path's checks) go to the Python path
            x = _cpu(_values(rng, in_dt, (3, 4)))
            _check(fn(x, axis=1), fn.__wrapped__(x, axis=1))
            _check(fn(x, keepdims=True), fn.__wrapped__(x, keepdims=True))


@needs_warm
def test_threads_share_the_warm_path():
    """Long loops release the GIL and reductions enter one shared context: calls from
    several threads at once still give every thread its own right answer."""
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal(200_000).astype(np.float32) for _ in range(4)]
    errors = []

    def work(i):
        try:
            a = _cpu(xs[i])
            for _ in range(20):
                np.testing.assert_array_equal((a * a)._data, xs[i] * xs[i])
                assert float(hf.sum(a)._data) == float(np.add.reduce(xs[i], axis=(0,)))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@needs_warm
def test_introspection_is_the_python_functions():
    assert hf.add.__name__ == "add" and hf.add.__doc__ == hf.add.__wrapped__.__doc__
    assert inspect.signature(hf.add) == inspect.signature(hf.add.__wrapped__)
    assert "add" in repr(hf.add)
    assert hf.Tensor.__add__.__name__ == "__add__"
    with pytest.raises(TypeError):
        hf.add(1, 2)  # no tensor at all: the Python path's error
