"""Data types: the standard's promotion tables, NumPy's rules across kinds, weak Python
scalars, in-place operators, finfo/iinfo/can_cast/isdtype/astype, float16."""
import itertools

import numpy as np
import pytest

import hipfer as hf
from hipfer import _dtypes

I = ["int8", "int16", "int32", "int64"]
U = ["uint8", "uint16", "uint32", "uint64"]
F = ["float32", "float64"]
C = ["complex64", "complex128"]
STANDARD = ["bool"] + I + U + F + C

# The standard's tables, written out (not derived from NumPy): (a, b) -> result.
_TABLE = {}
for _a, _b in itertools.combinations_with_replacement(I, 2):
    _TABLE[_a, _b] = max(_a, _b, key=I.index)
for _a, _b in itertools.combinations_with_replacement(U, 2):
    _TABLE[_a, _b] = max(_a, _b, key=U.index)
_TABLE.update({
    ("uint8", "int8"): "int16", ("uint8", "int16"): "int16", ("uint8", "int32"): "int32",
    ("uint8", "int64"): "int64",
    ("uint16", "int8"): "int32", ("uint16", "int16"): "int32", ("uint16", "int32"): "int32",
    ("uint16", "int64"): "int64",
    ("uint32", "int8"): "int64", ("uint32", "int16"): "int64", ("uint32", "int32"): "int64",
    ("uint32", "int64"): "int64",
    ("float32", "float32"): "float32", ("float32", "float64"): "float64",
    ("float64", "float64"): "float64",
    ("complex64", "complex64"): "complex64", ("complex64", "complex128"): "complex128",
    ("complex128", "complex128"): "complex128",
    ("float32", "complex64"): "complex64", ("float32", "complex128"): "complex128",
    ("float64", "complex64"): "complex128", ("float64", "complex128"): "complex128",
    ("bool", "bool"): "bool",
})
_UNDEFINED = [("uint64", i) for i in I]


def host(t):
    return np.asarray(t.to_device("cpu"))


def _data(rng, dt, shape=(3, 4)):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -50), min(info.max, 50), shape, endpoint=True).astype(dt)
    x = rng.standard_normal(shape) * 10
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


# ------------------------------------------------------------- promotion tables
@pytest.mark.parametrize("pair", sorted(_TABLE), ids="-".join)
def test_standard_table(pair):
    a, b = pair
    want = np.dtype(_TABLE[pair])
    assert hf.result_type(np.dtype(a), np.dtype(b)) == want
    assert hf.result_type(np.dtype(b), np.dtype(a)) == want


@pytest.mark.parametrize("pair", _UNDEFINED, ids="-".join)
def test_uint64_with_signed_raises(pair, be):
    a, b = (np.dtype(t) for t in pair)
    with pytest.raises(TypeError, match="uint64"):
        hf.result_type(a, b)
    x, y = hf.asarray(np.ones(3, a)), hf.asarray(np.ones(3, b))
    with pytest.raises(TypeError):
        x + y
    with pytest.raises(TypeError):
        hf.multiply(y, x)


def test_mixed_kinds_follow_numpy():
    kinds = {"b": ["bool"], "iu": I + U, "fc": F + C + ["float16"]}
    for (k1, n1), (k2, n2) in itertools.combinations(kinds.items(), 2):
        for a in n1:
            for b in n2:
                want = np.result_type(np.dtype(a), np.dtype(b))
                assert hf.result_type(hf.__dict__[a], hf.__dict__[b]) == want, (a, b)


def test_float16_promotes_within_floats():
    assert hf.result_type(hf.float16, hf.float32) == hf.float32
    assert hf.result_type(hf.float16, hf.complex64) == hf.complex64
    assert hf.result_type(hf.float16, hf.int16) == hf.float32  # NumPy's across kinds


def test_result_type_is_order_independent():
    # pairwise NumPy promotion would depend on order here (uint64, float32, int64)
    names = ["int64", "float32", "uint8", "bool"]
    got = {hf.result_type(*[np.dtype(n) for n in p]) for p in itertools.permutations(names)}
    assert got == {hf.float64}
    with pytest.raises(TypeError):
        hf.result_type(hf.uint64, hf.float32, hf.int64)


def test_result_type_arguments(be, rng):
    x = hf.asarray(_data(rng, "int16"))
    assert hf.result_type(x) == hf.int16
    assert hf.result_type(x, hf.uint8) == hf.int16
    assert hf.result_type(x, 1) == hf.int16
    assert hf.result_type(x, 1.0) == hf.float64
    assert hf.result_type(hf.float32, 1j) == hf.complex64
    assert hf.result_type(hf.float32, 1, 2.0, True) == hf.float32
    with pytest.raises(TypeError, match="at least one"):
        hf.result_type(1, 2.0)
    with pytest.raises(TypeError):
        hf.result_type("not a dtype")
    with pytest.raises(TypeError, match="not supported"):
        hf.result_type(np.dtype("datetime64[s]"))


@pytest.mark.parametrize("pair", [("uint8", "int8"), ("uint16", "int32"), ("int8", "int64"),
                                  ("float32", "complex128"), ("int32", "float32"),
                                  ("bool", "uint16"), ("uint32", "int8")], ids="-".join)
def test_operators_promote(pair, be, rng):
    a_np, b_np = _data(rng, pair[0]), _data(rng, pair[1], (4,))
    want_dt = hf.result_type(np.dtype(pair[0]), np.dtype(pair[1]))
    x, y = hf.asarray(a_np), hf.asarray(b_np)
    for got, ref in ((x + y, a_np.astype(want_dt) + b_np.astype(want_dt)),
                     (y * x, b_np.astype(want_dt) * a_np.astype(want_dt)),
                     (x - y[::-1], a_np.astype(want_dt) - b_np[::-1].astype(want_dt))):
        if want_dt == hf.bool:
            continue
        assert got.dtype == want_dt
        np.testing.assert_array_equal(host(got), ref)


# ------------------------------------------------------------- Python scalars
# (tensor dtype, scalar) -> result dtype; documented in hipfer/_dtypes.py
_SCALARS = {  # lists, not dicts: True == 1 as a dict key
    "bool": [(True, "bool"), (1, "int64"), (1.5, "float64"), (1j, "complex128")],
    "int8": [(True, "int8"), (1, "int8"), (1.5, "float64"), (1j, "complex128")],
    "uint16": [(True, "uint16"), (7, "uint16"), (1.5, "float64"), (1j, "complex128")],
    "float16": [(True, "float16"), (1, "float16"), (1.5, "float16"), (1j, "complex64")],
    "float32": [(True, "float32"), (1, "float32"), (1.5, "float32"), (1j, "complex64")],
    "float64": [(True, "float64"), (1, "float64"), (1.5, "float64"), (1j, "complex128")],
    "complex64": [(True, "complex64"), (1, "complex64"), (1.5, "complex64"), (2j, "complex64")],
}


@pytest.mark.parametrize("name", sorted(_SCALARS))
def test_weak_scalars(name, be, rng):
    a = _data(rng, name)
    x = hf.asarray(a)
    for s, want in _SCALARS[name]:
        want = np.dtype(want)
        assert hf.result_type(x, s) == want
        if want == hf.bool:
            continue  # bool + bool is logical or; covered elsewhere
        for got, ref in ((x + s, a.astype(want) + np.asarray(s, want)),
                         (s - x, np.asarray(s, want) - a.astype(want)),
                         (x * s, a.astype(want) * np.asarray(s, want))):
            assert got.dtype == want, (name, s)
            np.testing.assert_allclose(host(got), ref, rtol=1e-3 if name == "float16" else 1e-12)


@pytest.mark.parametrize("name,value", [("int8", 128), ("int8", -129), ("uint8", -1),
                                        ("bool", 2 ** 63),
                                        ("uint8", 256), ("int64", 2 ** 63),
                                        ("uint64", -1), ("uint64", 2 ** 64)])
def test_int_scalar_out_of_range(name, value, be):
    x = hf.asarray(np.ones(3, name))
    with pytest.raises(OverflowError, match="out of bounds"):
        x + value
    with pytest.raises(OverflowError):
        value * x
    with pytest.raises(OverflowError):
        hf.result_type(x, value)


def test_scalar_at_the_bounds(be):
    x = hf.asarray(np.zeros(2, np.uint64))
    np.testing.assert_array_equal(host(x + (2 ** 64 - 1)), [2 ** 64 - 1] * 2)
    y = hf.asarray(np.zeros(2, np.int8))
    np.testing.assert_array_equal(host(y + (-128)), [-128, -128])
    np.testing.assert_array_equal(host(127 - y), [127, 127])


def test_numpy_scalars_are_typed(be):
    x = hf.asarray(np.ones(3, np.float32))
    assert (x + np.float64(1)).dtype == hf.float64  # NumPy 2: typed, not weak
    assert (x + np.float32(1)).dtype == hf.float32
    assert (np.int8(2) * hf.asarray(np.ones(2, np.int16))).dtype == hf.int16


def test_true_division_of_integers(be, rng):
    a = _data(rng, "int16")
    got = hf.asarray(a) / 4
    assert got.dtype == hf.float64
    np.testing.assert_allclose(host(got), a / 4)


def test_unsupported_operands_give_type_error(be):
    x = hf.asarray(np.ones(3))
    # (a list is an operand since issue 20: tests/test_mixed_operands.py)
    for bad in ("a", ["a"], None, object()):
        with pytest.raises(TypeError):
            x + bad
        with pytest.raises(TypeError):
            bad * x
    assert (x == None) is False  # noqa: E711 - NotImplemented both ways: identity


# ------------------------------------------------------------- in-place operators
def test_inplace_keeps_dtype_and_identity(be, rng):
    a = _data(rng, "float32")
    x = hf.asarray(a.copy())
    ident = id(x)
    x += 1
    x *= hf.asarray(np.full(4, 2, np.float32))
    x -= hf.asarray(np.float32(0.5))
    assert id(x) == ident and x.dtype == hf.float32
    np.testing.assert_allclose(host(x), (a + 1) * 2 - 0.5, rtol=1e-6)
    i = hf.asarray(_data(rng, "int16"))
    i += hf.asarray(np.ones(4, np.int8))  # int16 + int8 -> int16: allowed
    assert i.dtype == hf.int16


@pytest.mark.parametrize("left,right", [("int16", 1.5), ("int32", "float32"),
                                        ("float32", "float64"), ("int8", "int16"),
                                        ("float64", 1j), ("uint8", "int8"), ("bool", 1)])
def test_inplace_refuses_promotion(left, right, be):
    x = hf.asarray(np.ones(3, left))
    other = hf.asarray(np.ones(3, right)) if isinstance(right, str) else right
    before = host(x).copy()
    with pytest.raises(TypeError, match="in-place|promote"):
        x += other
    assert x.dtype == np.dtype(left)
    np.testing.assert_array_equal(host(x), before)


def test_inplace_true_division_of_ints_refused(be):
    x = hf.asarray(np.arange(4))
    with pytest.raises(TypeError):
        x /= 2


def test_inplace_cannot_broadcast_left(be):
    x = hf.asarray(np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        x += hf.asarray(np.ones((2, 3)))
    y = hf.asarray(np.ones((2, 3)))
    y += hf.asarray(np.arange(3.0))  # the right side may broadcast
    np.testing.assert_array_equal(host(y), np.ones((2, 3)) + np.arange(3.0))


def test_inplace_on_views(be, rng):
    a = _data(rng, "float64", (4, 6))
    x = hf.asarray(a.copy())
    v = x[::2, 1::2]
    v += 10
    ref = a.copy()
    ref[::2, 1::2] += 10
    np.testing.assert_array_equal(host(x), ref)


def test_inplace_with_scalar_overflow(be):
    x = hf.asarray(np.ones(3, np.int8))
    with pytest.raises(OverflowError):
        x += 1000


# ------------------------------------------------------------- operator coverage
_OPS = {
    "__floordiv__": ("floor_divide", np.floor_divide), "__mod__": ("remainder", np.remainder),
    "__or__": ("bitwise_or", np.bitwise_or), "__xor__": ("bitwise_xor", np.bitwise_xor),
    "__lshift__": ("bitwise_left_shift", np.left_shift),
    "__rshift__": ("bitwise_right_shift", np.right_shift),
    "__and__": ("bitwise_and", np.bitwise_and), "__pow__": ("pow", np.power),
}


@pytest.mark.parametrize("dunder", sorted(_OPS))
def test_integer_operators(dunder, be, rng):
    fname, ref = _OPS[dunder]
    a = rng.integers(1, 6, (3, 4)).astype(np.int32)
    b = rng.integers(1, 4, (4,)).astype(np.int32)
    x, y = hf.asarray(a), hf.asarray(b)
    got = getattr(x, dunder)(y)
    np.testing.assert_array_equal(host(got), ref(a, b))
    rdunder = "__r" + dunder[2:]
    np.testing.assert_array_equal(host(getattr(y, rdunder)(x)), ref(a, b))
    np.testing.assert_array_equal(host(getattr(x, dunder)(2)), ref(a, np.int32(2)))
    np.testing.assert_array_equal(host(getattr(x, rdunder)(3)), ref(np.int32(3), a))
    x2 = hf.asarray(a.copy())
    res = getattr(x2, "__i" + dunder[2:])(y)
    assert res is x2 and x2.dtype == hf.int32
    np.testing.assert_array_equal(host(x2), ref(a, b))


@pytest.mark.parametrize("dunder,fname,ref", [("__invert__", "bitwise_invert", np.invert),
                                              ("__neg__", "negative", np.negative),
                                              ("__pos__", "positive", np.positive),
                                              ("__abs__", "abs", np.abs)])
def test_unary_operators(dunder, fname, ref, be, rng):
    a = rng.integers(-9, 9, (3, 4)).astype(np.int16)
    got = getattr(hf.asarray(a)[:, ::-1], dunder)()
    assert got.dtype == hf.int16
    np.testing.assert_array_equal(host(got), ref(a[:, ::-1]))


def test_matmul_operators(be, rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 4))
    x, y = hf.asarray(a), hf.asarray(b)
    np.testing.assert_allclose(host(x @ y), a @ b, rtol=1e-12)
    np.testing.assert_allclose(host(y.__rmatmul__(x)), a @ b, rtol=1e-12)
    x2 = hf.asarray(a.copy())
    x2 @= y
    np.testing.assert_allclose(host(x2), a @ b, rtol=1e-12)
    with pytest.raises(TypeError):
        x @ 2.0
    with pytest.raises(ValueError):
        y2 = hf.asarray(b.copy())
        y2 @= hf.asarray(a.T.copy())  # (4,4) @ (4,3) -> (4,3): shape changes


def test_every_standard_operator_exists():
    names = """add sub mul truediv floordiv mod pow matmul and or xor lshift rshift lt le gt ge
    eq ne neg pos abs invert""".split()
    for n in names:
        assert callable(getattr(hf.Tensor, f"__{n}__"))
    for n in "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift".split():
        assert getattr(hf.Tensor, f"__r{n}__").__name__ == f"__r{n}__"
        assert getattr(hf.Tensor, f"__i{n}__").__qualname__ == f"Tensor.__i{n}__"


def test_comparison_reflection(be, rng):
    a = rng.standard_normal(5)
    x = hf.asarray(a)
    np.testing.assert_array_equal(host(0.0 < x), 0.0 < a)
    np.testing.assert_array_equal(host(1 >= x), 1 >= a)
    assert (x < 0.0).dtype == hf.bool


# ------------------------------------------------------------- finfo / iinfo
@pytest.mark.parametrize("name", ["float16", "float32", "float64", "complex64", "complex128"])
def test_finfo(name):
    f = hf.finfo(np.dtype(name))
    ref = np.finfo(np.dtype(name))
    assert type(f.bits) is int and f.bits == ref.bits
    for field in ("eps", "max", "min", "smallest_normal"):
        v = getattr(f, field)
        assert type(v) is float and v == float(getattr(ref, field))
    assert f.dtype == ref.dtype and f.dtype.kind == "f"


def test_finfo_iinfo_accept_tensors(be):
    assert hf.finfo(hf.asarray(np.ones(2, np.float32))).bits == 32
    assert hf.iinfo(hf.asarray(np.ones(2, np.uint16))).max == 65535


@pytest.mark.parametrize("name", I + U)
def test_iinfo(name):
    i = hf.iinfo(np.dtype(name))
    ref = np.iinfo(np.dtype(name))
    assert (i.bits, i.min, i.max) == (ref.bits, int(ref.min), int(ref.max))
    assert all(type(v) is int for v in (i.bits, i.min, i.max))
    assert i.dtype == np.dtype(name)


def test_info_wrong_kind():
    # NumPy's type for these (np.finfo(np.int32) raises ValueError), so except clauses
    # written for NumPy keep working
    with pytest.raises(ValueError, match="floating"):
        hf.finfo(hf.int32)
    with pytest.raises(ValueError, match="integer"):
        hf.iinfo(hf.float32)
    with pytest.raises(ValueError):
        hf.iinfo(hf.bool)


# ------------------------------------------------------------- can_cast / isdtype
def test_can_cast():
    for a, b in itertools.product(STANDARD + ["float16"], repeat=2):
        want = bool(np.can_cast(np.dtype(a), np.dtype(b), "safe"))
        assert hf.can_cast(np.dtype(a), np.dtype(b)) is want, (a, b)
    # within a kind category it agrees with the promotion tables
    for (a, b), r in _TABLE.items():
        assert hf.can_cast(np.dtype(a), np.dtype(r)) and hf.can_cast(np.dtype(b), np.dtype(r))
    assert not hf.can_cast(hf.uint64, hf.int64) and not hf.can_cast(hf.int64, hf.uint64)
    assert hf.can_cast(hf.asarray(np.ones(2, np.int8), device="cpu"), hf.int16)
    with pytest.raises(TypeError):
        hf.can_cast("nope", hf.int8)


def test_isdtype():
    kinds = {"bool": ["bool"], "signed integer": I, "unsigned integer": U, "integral": I + U,
             "real floating": F + ["float16"], "complex floating": C,
             "numeric": I + U + F + C + ["float16"]}
    for kind, members in kinds.items():
        for n in STANDARD + ["float16"]:
            assert hf.isdtype(np.dtype(n), kind) is (n in members), (n, kind)
    assert hf.isdtype(hf.int8, hf.int8) and not hf.isdtype(hf.int8, hf.int16)
    assert hf.isdtype(hf.float32, ("integral", hf.float32))
    assert hf.isdtype(hf.complex64, ("bool", "complex floating"))
    assert not hf.isdtype(hf.float64, ("bool", hf.float32))
    with pytest.raises(ValueError, match="unknown kind"):
        hf.isdtype(hf.int8, "integer")


# ------------------------------------------------------------- astype
@pytest.mark.parametrize("src", STANDARD)
def test_astype(src, be, rng):
    a = _data(rng, src, (5, 6))
    x = hf.asarray(a)[::-1, ::2]
    for dst in STANDARD:
        if np.dtype(src).kind == "c" and np.dtype(dst).kind in "iuf":
            with pytest.raises(TypeError, match="imaginary"):
                hf.astype(x, np.dtype(dst))
            continue
        if np.dtype(src).kind in "fc" and np.dtype(dst).kind in "iu":
            continue  # out-of-range float -> int is unspecified
        got = hf.astype(x, np.dtype(dst))
        assert got.dtype == np.dtype(dst) and got.shape == x.shape
        np.testing.assert_array_equal(host(got), a[::-1, ::2].astype(dst))


def test_astype_copy_rules(be, rng):
    x = hf.asarray(_data(rng, "float32"))
    assert hf.astype(x, hf.float32, copy=False) is x
    y = hf.astype(x, hf.float32)
    assert y is not x
    y[...] = 0
    assert host(x).any()  # the copy is independent
    assert hf.astype(x, hf.float64, copy=False).dtype == hf.float64


def test_astype_conjugated_and_bool(be, rng):
    a = _data(rng, "complex64")
    z = hf.conj(hf.asarray(a))
    got = hf.astype(z, hf.complex128)
    assert not got.is_conj()
    np.testing.assert_allclose(host(got), np.conj(a).astype(np.complex128))
    np.testing.assert_array_equal(host(hf.astype(z, hf.bool)), a != 0)
    b = hf.asarray(np.array([True, False, True]))
    np.testing.assert_array_equal(host(hf.astype(b, hf.complex64)), [1, 0, 1])


def test_astype_device(be, rng):
    a = _data(rng, "int32")
    x = hf.asarray(a)
    got = hf.astype(x, hf.float64, device="cpu")
    assert got.device == hf.Device("cpu")
    np.testing.assert_array_equal(np.asarray(got), a.astype(np.float64))
    assert hf.astype(x, hf.int32, copy=False, device=x.device) is x


# ------------------------------------------------------------------------- float16
def test_float16(be, rng):
    a = (rng.standard_normal((4, 5)) * 3).astype(np.float16)
    b = (rng.standard_normal(5) * 3).astype(np.float16)
    x, y = hf.asarray(a), hf.asarray(b)
    assert x.dtype == hf.float16 and x.device == be.device
    for got, ref in ((x + y, a + b), (x * y, a * b), (x - 1.5, a - np.float16(1.5)),
                     (hf.exp(x / 4), np.exp(a / np.float16(4))),
                     (hf.sqrt(hf.abs(x)), np.sqrt(np.abs(a))),
                     (hf.maximum(x, y), np.maximum(a, b)), (x > y, a > b)):
        assert got.dtype == ref.dtype
        np.testing.assert_allclose(host(got).astype(np.float64), ref.astype(np.float64),
                                   rtol=2e-3, atol=2e-3)
    assert hf.sum(x).dtype == hf.float16
    np.testing.assert_allclose(float(hf.sum(x)), float(a.astype(np.float32).sum()), rtol=2e-2, atol=0.1)
    np.testing.assert_array_equal(host(hf.max(x, axis=0)), a.max(axis=0))
    np.testing.assert_allclose(float(hf.mean(x)), float(a.astype(np.float32).mean()), rtol=2e-2, atol=0.05)
    np.testing.assert_array_equal(host(hf.astype(x, hf.float32)), a.astype(np.float32))
    np.testing.assert_array_equal(host(hf.sort(y)), np.sort(b))
    np.testing.assert_allclose(host(x @ hf.reshape(y, (5, 1))).astype(np.float64),
                               a.astype(np.float64) @ b.astype(np.float64)[:, None], rtol=5e-3, atol=2e-2)
    h = hf.asarray(np.array([np.nan, np.inf, -0.0], np.float16))
    got = host(h * 1)
    np.testing.assert_array_equal(got, [np.nan, np.inf, -0.0])
    assert np.signbit(got[2])
    assert hf.isdtype(hf.float16, "real floating")
    with pytest.raises(TypeError, match="float16"):  # no half LAPACK, as in NumPy
        hf.linalg.inv(hf.asarray(np.eye(2, dtype=np.float16)))


def test_float16_supported_by_the_gpu_backend():
    """The GPU backend's support queries say yes for float16 wherever float32 is taken
    (its handlers decide without a GPU), and the inspection API lists it everywhere."""
    pytest.importorskip("cupy")
    from hipfer.backends.cupy import CupyBackend
    from hipfer.prims.protocols import SUPPORT_METHOD
    from hipfer.prims import descriptors as d
    from hipfer.prims.optable import BinaryOp, ReduceOp, UnaryOp
    from hipfer.prims.semiring import Semiring
    gpu = CupyBackend(0)  # constructing it needs no GPU
    h, f = _dtypes.float16, _dtypes.float32
    cases = [
        (d.ScalarUnary(UnaryOp.NEG), (h,)), (d.ScalarBinary(BinaryOp.ADD), (h, h)),
        (d.AnalyticUnary(UnaryOp.EXP), (h,)), (d.PointwiseCast(f), (h,)),
        (d.PointwiseCast(h), (f,)), (d.MakeContiguous(), (h,)),
        (d.ScalarReduce(ReduceOp.SUM, (0, 1), (0,)), (h,)),
        (d.AnalyticReduce(ReduceOp.VAR, (0, 1), (0,)), (h,)),
        (d.Sort(), (h,)), (d.BatchedGemm(), (h, h)), (d.BatchedGemm(semiring=Semiring.MAX_PLUS), (h, h)),
        (d.Uniform(), (h,)), (d.Normal(), (h,)),
    ]
    for desc, dts in cases:
        has_support = getattr(gpu, SUPPORT_METHOD[d.family_of(desc)])
        assert has_support(desc, dts) is True, desc
    factorize = d.Factorize(d.FactorKind.INV)
    assert getattr(gpu, SUPPORT_METHOD[d.family_of(factorize)])(factorize, (h,)) is False
    info = hf.__array_namespace_info__()
    for dev in ("gpu:0", "cpu"):  # an extension: listed when asked for (2025.12's dtypes())
        assert "float16" in info.dtypes(device=dev, extensions=True)
        assert "float16" not in info.dtypes(device=dev)
