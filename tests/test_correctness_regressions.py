"""Regressions of the wrong results and gaps differential testing found (issue 19), each
against NumPy on fresh random data, on every selected backend."""
from __future__ import annotations

import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import hipfer as hf
from hipfer import linalg as hla

from test_tensor import host


def _t(a):
    return hf.asarray(np.asarray(a))


# ------------------------------------------------------------------ take_along_axis
@pytest.mark.parametrize("xs,ixs,axis", [
    ((3, 2), (1, 2), -1), ((3, 2), (3, 1), 0), ((4, 1, 5), (1, 3, 2), 2),
    ((2, 3, 4), (2, 3, 7), -1), ((3, 0), (1, 0), 1), ((0, 3), (1, 3), 1),
    ((3, 4), (3, 0), 1), ((5,), (8,), 0), ((2, 1), (2, 6), 1),
])
def test_take_along_axis_broadcasts_as_numpy(be, rng, xs, ixs, axis):
    x = rng.standard_normal(xs)
    n = xs[axis]
    ix = rng.integers(-n, n, ixs) if n else np.zeros(ixs, np.int64)
    want = np.take_along_axis(x, ix, axis=axis)
    got = hf.take_along_axis(_t(x), _t(ix), axis=axis)
    assert got.shape == want.shape
    np.testing.assert_array_equal(host(got), want)


def test_take_along_axis_bad_input(be):
    x = _t(np.arange(6.0).reshape(3, 2))
    with pytest.raises(ValueError, match="take_along_axis.*same number"):
        hf.take_along_axis(x, _t(np.array([1, 0])), axis=-1)
    with pytest.raises(ValueError, match="take_along_axis.*do not broadcast"):
        hf.take_along_axis(x, _t(np.zeros((2, 2), np.int64)), axis=-1)
    with pytest.raises(IndexError):  # also numpy.exceptions.AxisError's other base
        hf.take_along_axis(x, _t(np.zeros((3, 2), np.int64)), axis=2)


# ------------------------------------------------------------------------- clip
@pytest.mark.parametrize("xdt,bdt", [(np.int8, np.int16), (np.uint8, np.int32),
                                     (np.uint32, np.int16), (np.int16, np.uint64),
                                     (np.int64, np.int8)])
def test_clip_integer_bounds_of_another_dtype(be, rng, xdt, bdt):
    info, binfo = np.iinfo(xdt), np.iinfo(bdt)
    x = rng.integers(info.min, info.max, 50, dtype=xdt, endpoint=True)
    lo = rng.integers(binfo.min, binfo.max, 50, dtype=bdt, endpoint=True)
    hi = rng.integers(binfo.min, binfo.max, 50, dtype=bdt, endpoint=True)
    got = hf.clip(_t(x), min=_t(lo), max=_t(hi))
    assert got.dtype == xdt
    # the exact values, clamped into x's dtype at the end (x's own range holds the result)
    want = np.minimum(np.maximum(x.astype(object), lo.astype(object)), hi.astype(object))
    want = np.clip(want, int(info.min), int(info.max)).astype(xdt)
    np.testing.assert_array_equal(host(got), want)


def test_clip_examples_of_the_report(be):
    got = hf.clip(_t(np.array([96, -5], np.int8)), max=_t(np.array(298, np.int16)))
    np.testing.assert_array_equal(host(got), np.array([96, -5], np.int8))
    got = hf.clip(_t(np.array([3, 4000000000], np.uint32)), min=_t(np.array(-653, np.int16)))
    np.testing.assert_array_equal(host(got), np.array([3, 4000000000], np.uint32))


# -------------------------------------------------------------- sum / prod as bool
@pytest.mark.parametrize("fn", ["sum", "prod"])
@pytest.mark.parametrize("src", [np.bool_, np.int32, np.float64])
def test_bool_dtype_reductions(be, rng, fn, src):
    for shape, axis in (((7,), None), ((3, 4), 0), ((3, 4), 1), ((0, 3), 0), ((), None)):
        x = (rng.integers(0, 3, shape) * (rng.random(shape) < 0.6)).astype(src)
        want = getattr(np, fn)(x, axis=axis, dtype=bool)
        got = getattr(hf, fn)(_t(x), axis=axis, dtype=hf.bool)
        assert got.dtype == np.bool_ and got.shape == np.shape(want)
        np.testing.assert_array_equal(host(got), want)


# ------------------------------------------------------- writing into a conj view
def test_real_values_into_a_conjugated_view_keep_a_positive_zero(be, rng):
    base = (rng.standard_normal(6) + 1j * rng.standard_normal(6)).astype(np.complex128)
    for key in (Ellipsis, slice(1, 4), np.array([0, 5])):
        t = hf.conj(_t(base))
        vals = rng.standard_normal(6)[key] if key is not Ellipsis else rng.standard_normal(6)
        t[key] = _t(vals)
        got = host(t)[key]
        np.testing.assert_array_equal(got.real, vals)
        assert not np.signbit(got.imag).any(), got
        np.testing.assert_array_equal(host(t.resolve_conj())[key], vals + 0j)


# ------------------------------------------------------------------ float16 spread
@pytest.mark.parametrize("fn", ["mean", "var", "std"])
def test_float16_statistics_accumulate_in_float32(be, rng, fn):
    for x in (np.full(30000, 3.0, np.float16), np.full(140000, 7.5, np.float16),
              (rng.standard_normal((300, 700)) * 50).astype(np.float16)):
        for axis in (None, 0) if x.ndim == 2 else (None,):
            # the float64 result rounded to float16 (NumPy's float16 var overflows here)
            want = getattr(np, fn)(x.astype(np.float64), axis=axis).astype(np.float16)
            got = getattr(hf, fn)(_t(x), axis=axis)
            assert got.dtype == np.float16 and got.shape == np.shape(want)
            np.testing.assert_allclose(host(got).astype(np.float64), want.astype(np.float64),
                                       rtol=2e-3, atol=1e-2)
            assert np.isfinite(host(got)).all()


# --------------------------------------------------------------------- float16 fft
@pytest.mark.parametrize("name,out", [("fft", np.complex64), ("ifft", np.complex64),
                                      ("rfft", np.complex64), ("ihfft", np.complex64),
                                      ("irfft", np.float32), ("hfft", np.float32),
                                      ("fftn", np.complex64), ("rfftn", np.complex64),
                                      ("irfftn", np.float32), ("ifftn", np.complex64)])
def test_float16_transforms_compute_in_float32(be, rng, name, out):
    x = rng.standard_normal((4, 6)).astype(np.float16)
    got = getattr(hf.fft, name)(_t(x))
    assert got.dtype == out
    want = getattr(np.fft, name)(x.astype(np.float32))
    np.testing.assert_allclose(host(got), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name,kw,shape", [("irfft", {"n": 4}, (0,)), ("fft", {"n": 5}, (0,)),
                                           ("rfft", {"n": 6}, (2, 0)),
                                           ("irfftn", {"s": (3, 4), "axes": (0, 1)}, (0, 3)),
                                           ("fftn", {"s": (2, 2), "axes": (0, 1)}, (0, 0))])
def test_transforms_of_nothing_are_zeros(be, name, kw, shape):
    dt = np.complex128 if name.startswith(("irfft", "fft")) else np.float64
    got = getattr(hf.fft, name)(_t(np.zeros(shape, dt)), **kw)
    want_shape = getattr(np.fft, name)(np.zeros(shape, dt), **kw).shape
    assert got.shape == want_shape
    assert not host(got).any() and np.isfinite(host(got)).all()


# ------------------------------------------------------------ linalg on non-finite
@pytest.mark.parametrize("name", ["svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals"])
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_decompositions_refuse_non_finite_input(be, rng, name, bad):
    a = rng.standard_normal((4, 4))
    a = a + a.T
    a[1, 2] = a[2, 1] = bad
    with pytest.raises(hla.LinAlgError, match=f"{name}\\(\\).*inf or NaN"):
        getattr(hla, name)(_t(a))
    assert issubclass(hla.LinAlgError, ValueError)


def test_svd_of_inf_returns_in_a_fresh_process():
    """OpenBLAS's gesdd never returns for a matrix holding inf: the check must come first
    (a child process, so that a regression fails here instead of hanging the suite)."""
    code = ("import numpy as np, hipfer as hf\n"
            "a = np.ones((3, 3)); a[0, 0] = np.inf\n"
            "try:\n    hf.linalg.svd(hf.asarray(a, device='cpu'))\n"
            "except ValueError as e:\n    print('refused', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("refused svd()"), r.stdout + r.stderr


# ----------------------------------------------------------------- norms of nothing
# The rule (NumPy 2.3+'s; 2.2 raised for all of them): a norm that is a largest value is
# 0 over nothing, a norm that is a smallest value has none. Written out here, so the
# test does not depend on which NumPy runs it.
def _reduced_count(shape, ord):
    """How many values the extreme of matrix_norm(ord) is taken over."""
    m, n = shape[-2:]
    return {1: n, -1: n, np.inf: m, -np.inf: m, 2: min(m, n), -2: min(m, n)}.get(ord, 1)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 4), (2, 0, 3)])
def test_matrix_norms_of_empty_matrices(be, shape):
    z = np.zeros(shape)
    for ord in (1, 2, np.inf, "fro", "nuc", -1, -2, -np.inf):
        smallest = not isinstance(ord, str) and ord < 0
        if smallest and _reduced_count(shape, ord) == 0:
            with pytest.raises(ValueError, match="matrix_norm"):
                hla.matrix_norm(_t(z), ord=ord)
            continue
        got = hla.matrix_norm(_t(z), ord=ord)
        assert got.shape == shape[:-2] and got.dtype == np.float64
        np.testing.assert_array_equal(host(got), np.zeros(shape[:-2]))


def test_vector_norms_of_nothing(be):
    for shape, axis in (((0,), None), ((2, 0), 1), ((0, 3), 0), ((0, 3), None)):
        z = np.zeros(shape)
        out = np.zeros(shape).sum(axis=axis).shape
        for ord in (np.inf, 0, 1, 2, 3.5):
            got = hla.vector_norm(_t(z), ord=ord, axis=axis)
            assert got.shape == out
            np.testing.assert_array_equal(host(got), np.zeros(out))
        with pytest.raises(ValueError, match="vector_norm"):
            hla.vector_norm(_t(z), ord=-np.inf, axis=axis)
    # an empty result of non-empty axes is fine for the minimum too
    got = hla.vector_norm(_t(np.zeros((0, 3))), ord=-np.inf, axis=1)
    assert got.shape == (0,)


# --------------------------------------------------------------- indexing of nothing
def test_integer_indices_broadcasting_to_nothing_check_no_value(be):
    x = _t(np.arange(3.0).reshape(3, 1))
    got = x[np.zeros(0, np.uint8), np.array([1], np.uint8)]
    want = np.arange(3.0).reshape(3, 1)[np.zeros(0, np.uint8), np.array([1], np.uint8)]
    assert got.shape == want.shape == (0,)
    with pytest.raises(IndexError):  # a non-empty index is still checked
        x[np.array([0]), np.array([1])]


# ------------------------------------------------------------------------ fftshift
@pytest.mark.parametrize("axes", [(0, 0), (1, 0, 1), (-1, 1), (0, 0, 0)])
def test_fftshift_with_repeated_axes(be, rng, axes):
    x = rng.standard_normal((5, 6))
    for name in ("fftshift", "ifftshift"):
        np.testing.assert_array_equal(host(getattr(hf.fft, name)(_t(x), axes=axes)),
                                      getattr(np.fft, name)(x, axes=axes))


# ---------------------------------------------------------------------------- diff
def test_diff_of_order_zero_is_x(be, rng):
    x = rng.standard_normal((3, 4))
    got = hf.diff(_t(x), n=0, append=_t(np.ones((3, 1))), prepend=_t(np.ones((3, 2))))
    np.testing.assert_array_equal(host(got), np.diff(x, n=0, append=np.ones((3, 1))))
    assert got.shape == (3, 4)


# ------------------------------------------------------------------------ messages
def test_messages_name_the_function_called(be):
    a, b = _t(np.ones((2, 3))), _t(np.ones((4, 3)))
    cases = [
        (lambda: hf.add(a, b), ValueError, r"^add\(\): shapes"),
        (lambda: hf.less(a, b), ValueError, r"^less\(\): "),
        (lambda: hf.max(_t(np.zeros(0))), ValueError, r"^max\(\): "),
        (lambda: hf.take(_t(np.array(1.0)), _t(np.array([0]))), ValueError, r"^take\(\): "),
        (lambda: hf.where(_t(np.ones((2, 3), bool)), a, b), ValueError, r"^where\(\): "),
        (lambda: hf.argmax(a, axis=5), IndexError, r"^argmax\(\): axis 5"),
    ]
    for call, err, pattern in cases:
        with pytest.raises(err, match=pattern) as info:
            call()
        for internal in ("ScalarBinary", "ScalarReduce", "MetadataWhere", "MaskWhere",
                         "IndexSelect", "Gather", "ArgReduce"):
            assert internal not in str(info.value), info.value


def test_axis_errors_are_numpy_axis_errors(be):
    a = _t(np.ones((2, 3)))
    for call in (lambda: hf.argmax(a, axis=2), lambda: hf.diff(a, axis=3),
                 lambda: hf.sum(a, axis=4)):
        with pytest.raises(np.exceptions.AxisError):
            call()


def test_info_of_the_wrong_kind_is_a_value_error():
    with pytest.raises(ValueError, match="finfo"):
        hf.finfo(hf.int32)
    with pytest.raises(ValueError, match="iinfo"):
        hf.iinfo(hf.float32)


def test_asarray_copy_false_says_why():
    t = hf.asarray(np.arange(3.0), device="cpu")
    # NumPy reads the zero-copy __array_interface__ and refuses the cast itself
    with pytest.raises(ValueError, match="copy"):
        np.asarray(t, dtype=np.float32, copy=False)
    assert np.shares_memory(np.asarray(t, copy=False), t._data)
    c = hf.conj(hf.asarray(np.array([1 + 2j]), device="cpu"))
    with pytest.raises(ValueError, match="conjugation flag"):
        np.asarray(c, copy=False)


def test_asarray_of_too_much_says_so():
    with pytest.raises(MemoryError, match="asarray"):
        # 2**63 bytes: past any address space, so no allocator can grant it (2**40
        # elements, 8 TiB, can be granted under overcommit and then filled until OOM)
        hf.asarray(range(2 ** 60), device="cpu")


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_tensors_pickle_with_every_protocol(protocol, rng):
    for x in (hf.asarray(rng.standard_normal((3, 4)), device="cpu")[::2, 1:],
              hf.conj(hf.asarray(rng.standard_normal(3) + 1j, device="cpu"))):
        y = pickle.loads(pickle.dumps(x, protocol=protocol))
        assert type(y) is hf.Tensor and y.is_conj() == x.is_conj() and y.dtype == x.dtype
        np.testing.assert_array_equal(host(y), host(x))


# ====================================================== found by tools/fuzz.py (issue 19)
# --------------------------------------------------- reductions of a 0-d tensor
@pytest.mark.parametrize("fn", ["sum", "prod", "max", "min", "mean", "var", "std", "all",
                                "any", "count_nonzero"])
def test_reductions_of_a_0d_tensor_take_axis_0_and_minus_1(be, rng, fn):
    x = np.asarray(rng.standard_normal())
    want = getattr(np, fn)(x)  # over no axis, as NumPy's reductions take axis 0 and -1
    for axis in (0, -1, (0,), (-1,)):
        got = getattr(hf, fn)(_t(x), axis=axis)
        assert got.shape == () and got.dtype == np.asarray(want).dtype
        np.testing.assert_allclose(host(got), want)
    with pytest.raises(np.exceptions.AxisError):
        getattr(hf, fn)(_t(x), axis=1)


@pytest.mark.parametrize("ord", [np.inf, -np.inf, 2, 1])
def test_vector_norm_of_a_0d_tensor_and_of_bad_axes(be, rng, ord):
    x = np.asarray(rng.standard_normal())
    got = hla.vector_norm(_t(x), axis=0, ord=ord)
    np.testing.assert_allclose(host(got), np.linalg.vector_norm(x, ord=ord))
    with pytest.raises(np.exceptions.AxisError):  # not IndexError("tuple index ...")
        hla.vector_norm(_t(rng.standard_normal((2, 3))), axis=5, ord=ord)


# --------------------------------------------- indices where nothing is read
def _both_raise(call_np, call_hf, err=IndexError):
    # NumPy < 2.3 warns (DeprecationWarning) where it raises now: either is its refusal
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises((err, DeprecationWarning)):
            call_np()
    with pytest.raises(err):
        call_hf()


def test_indices_are_checked_when_the_result_is_empty(be, rng):
    x = rng.standard_normal((0, 3))
    ix = rng.integers(3, 9, (2,))
    _both_raise(lambda: x[:, ix], lambda: _t(x)[:, _t(ix)])
    _both_raise(lambda: np.take(x, ix, axis=0), lambda: hf.take(_t(x), _t(ix), axis=0))
    ok = rng.integers(-3, 3, (4,))
    assert _t(x)[:, _t(ok)].shape == x[:, ok].shape == (0, 4)
    # take along an axis of size 3 of an empty x: an index of 3 or more is refused (NumPy
    # checks nothing there; the standard leaves out-of-range indices unspecified)
    y = rng.standard_normal((2, 3, 0))
    with pytest.raises(IndexError, match="out of bounds for axis 1"):
        hf.take(_t(y), _t(ix), axis=1)
    assert hf.take(_t(y), _t(ok), axis=1).shape == np.take(y, ok, axis=1).shape
    z = np.zeros((2, 1, 0))
    i0 = np.zeros(1, np.int64)
    _both_raise(lambda: z.__setitem__((Ellipsis, i0, i0, i0), 1.0),
                lambda: _t(z).__setitem__((Ellipsis, _t(i0), _t(i0), _t(i0)), 1.0))


def test_a_0d_integer_index_is_checked_next_to_arrays_broadcasting_to_nothing(be, rng):
    x = rng.standard_normal((1, 1, 2))
    none, one, zero = np.zeros((0, 1), np.int32), np.array(1, np.int32), np.zeros((1, 1),
                                                                                   np.int32)
    _both_raise(lambda: x[..., none, one, zero], lambda: _t(x)[..., _t(none), _t(one), _t(zero)])
    ok = np.array(0, np.int32)
    got = _t(x)[_t(none), _t(ok), _t(zero)]
    np.testing.assert_array_equal(host(got), x[none, ok, zero])


# ----------------------------------------------------------- assigned values
def test_assigned_values_must_fit_an_empty_destination(be, rng):
    x = rng.standard_normal((5, 5, 0))
    v = rng.standard_normal((7, 5, 0))
    _both_raise(lambda: x.__setitem__(Ellipsis, v),
                lambda: _t(x).__setitem__(Ellipsis, _t(v)), ValueError)


def test_assigned_values_may_carry_leading_ones(be, rng):
    x, v = rng.standard_normal((4, 3)), rng.standard_normal((1, 1, 2, 3))
    t = _t(x)
    t[1:3] = _t(v)
    x[1:3] = v
    np.testing.assert_array_equal(host(t), x)


@pytest.mark.parametrize("dt,value", [(np.uint8, 300), (np.uint8, -1), (np.int32, 2 ** 40),
                                      (np.uint16, -2.5), (np.int16, float("inf")),
                                      (np.int64, float("nan")), (np.uint64, -1)])
def test_assigned_python_scalars_must_fit_an_integer_tensor(be, rng, dt, value):
    x = rng.integers(0, 100, (3, 2)).astype(dt)
    with pytest.raises((OverflowError, ValueError)) as want:
        x[...] = value
    for key in (Ellipsis, (slice(None), 0), np.array([1, 0])):
        with pytest.raises(want.type):
            _t(x)[key if not isinstance(key, np.ndarray) else _t(key)] = value
    t = _t(x)
    t[...] = 2.75  # a finite float in range truncates, as in NumPy
    x[...] = 2.75
    np.testing.assert_array_equal(host(t), x)


# ------------------------------------------------------------------- creation
@pytest.mark.parametrize("dt,value", [(np.uint16, -4), (np.int8, 128), (np.uint64, 2 ** 64),
                                      (np.int32, -2 ** 31 - 1)])
def test_fill_values_must_fit_an_integer_dtype(be, dt, value):
    with pytest.raises(OverflowError):
        np.full((2,), value, dtype=dt)
    with pytest.raises(OverflowError, match="^full\\(\\)"):
        hf.full((2,), value, dtype=dt)
    with pytest.raises(OverflowError, match="^full_like\\(\\)"):
        hf.full_like(_t(np.zeros(3, dt)), value)
    with pytest.raises(TypeError, match="^full_like\\(\\)"):
        hf.full_like(_t(np.zeros(3, np.float32)), 1 + 2j)


def test_asarray_of_python_ints_into_uint64_is_exact(be, rng):
    vals = [int(v) for v in rng.integers(2 ** 62, 2 ** 64 - 1, 6, dtype=np.uint64)]
    got = hf.asarray(vals, dtype=hf.uint64)
    np.testing.assert_array_equal(host(got), np.asarray(vals, dtype=np.uint64))
    with pytest.raises(OverflowError):
        hf.asarray([-1, 3], dtype=hf.uint8)


# ---------------------------------------------------------------------- clip
@pytest.mark.parametrize("xdt", [np.uint8, np.int32, np.uint32])
def test_clip_refuses_a_float_tensor_bound_of_an_integer_x(be, rng, xdt):
    x = rng.integers(0, 50, 8).astype(xdt)
    bound = _t(np.asarray(-1.5, np.float16))
    for kw in ({"min": bound}, {"max": bound}):
        with pytest.raises(TypeError, match="clip"):  # as a float scalar bound: no wrapping
            hf.clip(_t(x), **kw)
    got = hf.clip(_t(x), min=_t(np.asarray(3, np.int16)))  # an integer bound clips
    np.testing.assert_array_equal(host(got), np.maximum(x, 3).astype(xdt))


# ----------------------------------------------------------------- diff, fft
def test_diff_names_itself_for_mismatched_prepend(be, rng):
    x = rng.standard_normal((4, 3))
    for kw in ({"prepend": _t(rng.standard_normal((2, 2)))},
               {"append": _t(rng.standard_normal((4, 1, 1)))}):
        with pytest.raises(ValueError, match="^diff\\(\\)"):
            hf.diff(_t(x), axis=0, **kw)


@pytest.mark.parametrize("name,shape,kw", [("irfft", (3, 1), {}), ("hfft", (4, 1), {"axis": 1}),
                                           ("fft", (0,), {}), ("ifft", (2, 0), {}),
                                           ("irfftn", (2, 1), {}),
                                           ("rfftn", (1, 0, 2), {"axes": (1, 2)})])
def test_transforms_without_data_points_name_themselves(be, rng, name, shape, kw):
    x = rng.standard_normal(shape)
    with pytest.raises(ValueError):
        getattr(np.fft, name)(x, **kw)
    with pytest.raises(ValueError, match=f"^{name}\\(\\): invalid number of data points"):
        getattr(hf.fft, name)(_t(x), **kw)


# --------------------------------------------------------------------- linalg
@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "qr", "svdvals", "pinv",
                                  "matrix_rank", "cholesky", "eigvalsh"])
@pytest.mark.parametrize("n", [0, 2])
def test_solvers_refuse_float16_empty_or_not(be, name, n):
    a = np.eye(n, dtype=np.float16)[None].repeat(2, axis=0)
    with pytest.raises(TypeError, match=f"^{name}\\(\\).*float16"):
        getattr(hla, name)(_t(a))
    with pytest.raises(TypeError, match="^solve\\(\\).*float16"):
        hla.solve(_t(a), _t(np.ones((2, n), np.float16)))


def test_functions_built_on_others_name_themselves(be, rng):
    a = rng.standard_normal((3, 3))
    a[1, 1] = np.inf
    for call, name in ((lambda: hla.matrix_rank(_t(a)), "matrix_rank"),
                       (lambda: hla.pinv(_t(a)), "pinv"),
                       (lambda: hla.matrix_norm(_t(a), ord=2), "matrix_norm")):
        with pytest.raises(hla.LinAlgError, match=f"^{name}\\(\\)"):
            call()
    with pytest.raises(TypeError, match="^matrix_power\\(\\)"):
        hla.matrix_power(_t(np.eye(2, dtype=np.float16)), -1)


# ----------------------------------------------------------- float16 scans
@pytest.mark.parametrize("fn", ["cumulative_sum", "cumulative_prod"])
def test_float16_scans_round_each_output_once(be, rng, fn):
    """Computed in float32 and rounded once per output, on every backend (NumPy's
    float16 cumsum rounds every step: 2048 + 1 == 2048)."""
    for x in (np.ones(5000, np.float16),
              (rng.standard_normal((40, 7)) * (300 if fn == "cumulative_sum" else 1.3))
              .astype(np.float16)):
        want = getattr(np, fn)(x.astype(np.float32), axis=0).astype(np.float16)
        got = getattr(hf, fn)(_t(x), axis=0)
        assert got.dtype == np.float16
        np.testing.assert_allclose(host(got).astype(np.float32), want.astype(np.float32),
                                   rtol=2e-3, atol=1e-3)


def test_result_type_memo_ignores_dtype_spellings():
    """A dtype spelled as a string has no .dtype: its memo key said nothing, so the first
    answer came back for any other string (result_type('f4') then 'not a dtype')."""
    import hipfer as hf
    assert hf.result_type("f4") == hf.float32
    assert hf.result_type("i2") == hf.int16
    with pytest.raises(TypeError):
        hf.result_type("not a dtype")
