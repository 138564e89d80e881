"""hipfer.einsum against numpy.einsum (float64 / complex128 references) on each backend:
random networks of 1-12 operands with conjugated and non-contiguous operands, NumPy's
whole notation, tropical semirings against a brute-force NumPy loop, paths against
opt_einsum, and bad input."""
import random

import numpy as np
import pytest

import hipfer as hf
from hipfer._einsum import engine as _einsum
from hipfer._einsum import parse as P, path as Pa

from test_tensor import host, rand

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def random_network(r: random.Random, n: int, max_labels=8, max_size=4, max_rank=4,
                   repeats=True, zero_sizes=True):
    nl = r.randint(1, max_labels)
    labs = LETTERS[:nl]
    sizes = {c: (0 if zero_sizes and r.random() < 0.03 else r.randint(1, max_size)) for c in labs}
    terms = []
    for _ in range(n):
        k = r.randint(0, max_rank)
        t = "".join(r.choice(labs) for _ in range(k)) if repeats else "".join(r.sample(labs, min(k, nl)))
        terms.append(t)
    used = sorted(set("".join(terms)))
    out = "".join(r.sample(used, r.randint(0, len(used))))
    return ",".join(terms) + "->" + out, [tuple(sizes[c] for c in t) for t in terms]


def tol(dtype):
    return dict(rtol=2e-4, atol=2e-4) if np.dtype(dtype) in (np.float32, np.complex64) \
        else dict(rtol=1e-10, atol=1e-10)


def noncontiguous(be, a):
    """a as a strided view (every other element of a larger array, axes reversed)."""
    big = np.zeros(tuple(2 * n for n in a.shape[::-1]) or (), a.dtype)
    sl = tuple(slice(None, None, 2) for _ in a.shape)
    big[sl] = a.transpose()
    t = hf.asarray(big)[sl] if a.ndim else hf.asarray(big)
    return hf.permute_dims(t, tuple(range(a.ndim))[::-1]) if a.ndim else t


@pytest.mark.parametrize("seed", range(12))
def test_random_networks(be, seed):
    """2-6 operands, repeated labels, size-0 and size-1 labels, some conjugated (flag)
    and some non-contiguous operands, every optimize mode."""
    r, rng = random.Random(seed), np.random.default_rng(seed)
    for _ in range(25):
        n = r.randint(1, 6)
        sub, shapes = random_network(r, n)
        dtype = r.choice([np.float64, np.complex128])
        arrs = [rand(rng, s, dtype) for s in shapes]
        ts, ref = [], []
        for a in arrs:
            t = hf.asarray(a) if r.random() < 0.6 else noncontiguous(be, a)
            if dtype is np.complex128 and r.random() < 0.5:
                t, a = hf.conj(hf.asarray(np.conj(a))), a  # conj flag over conjugated data
            ts.append(t)
            ref.append(a)
        opt = r.choice(["auto", "greedy", "optimal", False, True])
        got = hf.einsum(sub, *ts, optimize=opt)
        want = np.einsum(sub, *ref)
        assert got.shape == want.shape and got.dtype == want.dtype, sub
        np.testing.assert_allclose(host(got), want, **tol(dtype), err_msg=f"{sub} {shapes} {opt}")


@pytest.mark.parametrize("n", [7, 9, 12])
def test_large_networks(be, n):
    """Up to 12 operands (chain- and ring-like, no size-0 labels)."""
    r, rng = random.Random(n), np.random.default_rng(n)
    for _ in range(3):
        sub, shapes = random_network(r, n, max_labels=n + 2, max_size=3, max_rank=3,
                                     zero_sizes=False)
        arrs = [rand(rng, s, np.complex128) for s in shapes]
        got = hf.einsum(sub, *[hf.asarray(a) for a in arrs])
        np.testing.assert_allclose(host(got), np.einsum(sub, *arrs, optimize=True), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128,
                                   np.int32, np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("sub,shapes", [
    ("ij,jk->ik", [(5, 6), (6, 7)]),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
    ("ijk,jkl->li", [(2, 3, 4), (3, 4, 5)]),
    ("i,i->", [(7,), (7,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->", [(3, 4)]),
    ("iij,jk", [(3, 3, 4), (4, 2)]),
])
def test_dtypes(be, rng, dtype, sub, shapes):
    arrs = [rand(rng, s, dtype) for s in shapes]
    got = hf.einsum(sub, *[hf.asarray(a) for a in arrs])
    want = np.einsum(sub, *arrs)
    assert got.dtype == want.dtype and got.shape == want.shape
    if np.dtype(dtype).kind in "biu":
        np.testing.assert_array_equal(host(got), want)
    else:
        np.testing.assert_allclose(host(got), want, **tol(dtype))


def test_mixed_dtypes_promote(be, rng):
    a, b = rand(rng, (3, 4), np.int16), rand(rng, (4, 2), np.float32)
    got = hf.einsum("ij,jk", hf.asarray(a), hf.asarray(b))
    assert got.dtype == hf.float32
    np.testing.assert_allclose(host(got), np.einsum("ij,jk", a, b), rtol=1e-5)


@pytest.mark.parametrize("sub,shapes", [
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),      # broadcast batch
    ("...ij,...jk", [(2, 3, 4), (4, 2)]),                   # implicit, ... first
    ("i...->...", [(3, 2, 2)]),
    ("...", [(2, 3)]),
    ("i...i", [(3, 2, 3)]),
    ("ij...,j...->i...", [(2, 3, 4), (3, 4)]),
    ("i,i->i", [(3,), (1,)]),                               # size-1 label broadcasts
    ("ij,j->i", [(3, 4), (1,)]),
    (",ij->ij", [(), (2, 3)]),                              # 0-d operands
    (",", [(), ()]),
    ("", [()]),
    ("Ba,ab", [(2, 3), (3, 4)]),                            # implicit: ASCII order
    ("ab,ab", [(0, 3), (0, 3)]),                            # empty
    ("ij,jk", [(2, 0), (0, 3)]),                            # k = 0: zeros
    ("iji->j", [(3, 4, 3)]),
])
def test_notation(be, rng, sub, shapes):
    arrs = [rand(rng, s, np.float64) for s in shapes]
    got = hf.einsum(sub, *[hf.asarray(a) for a in arrs])
    want = np.einsum(sub, *arrs)
    assert got.shape == want.shape
    np.testing.assert_allclose(host(got), want, rtol=1e-12, atol=1e-12)


def test_interleaved(be, rng):
    a, b, c = rand(rng, (2, 3), np.float64), rand(rng, (3, 4), np.float64), rand(rng, (4, 2), np.float64)
    A, B, C = (hf.asarray(x) for x in (a, b, c))
    np.testing.assert_allclose(host(hf.einsum(A, [0, 1], B, [1, 2], [0, 2])), a @ b)
    np.testing.assert_allclose(host(hf.einsum(A, [0, 1], B, [1, 2], C, [2, 0], [])),
                               np.einsum(a, [0, 1], b, [1, 2], c, [2, 0], []))
    np.testing.assert_allclose(host(hf.einsum(A, [Ellipsis, 1], B, [1, 2])), a @ b)
    # more labels than letters: a chain of 60 2x2 matrices
    mats = [rand(rng, (2, 2), np.float64) for _ in range(60)]
    args = []
    for k, m in enumerate(mats):
        args += [hf.asarray(m), [k, k + 1]]
    want = np.linalg.multi_dot(mats)
    np.testing.assert_allclose(host(hf.einsum(*args, [0, 60])), want, rtol=1e-9)


def test_view_when_nothing_is_summed(be, rng):
    a = rand(rng, (3, 4), np.float64)
    t = hf.asarray(a)
    v = hf.einsum("ij->ji", t)
    assert be.xp.shares_memory(v._data, t._data)
    np.testing.assert_array_equal(host(v), a.T)


def test_conjugated_operands(be, rng):
    """conj(a) is the O(1) flag; the GEMM reads it (op C) whatever a's layout."""
    a, b, c = (rand(rng, s, np.complex128) for s in [(6, 5), (5, 4), (6, 3)])
    A = hf.asarray(a)
    np.testing.assert_allclose(host(hf.einsum("ij,jk->ik", hf.conj(A), hf.asarray(b))),
                               np.conj(a) @ b, rtol=1e-12)
    np.testing.assert_allclose(host(hf.einsum("ij,ik->jk", hf.conj(A), hf.asarray(c))),
                               np.conj(a).T @ c, rtol=1e-12)
    np.testing.assert_allclose(host(hf.einsum("ij,ij->", hf.conj(A), hf.conj(A))),
                               np.sum(np.conj(a) ** 2), rtol=1e-12)


def _count_copies(monkeypatch) -> list:
    """A list that gets an entry each time a GEMM step copies an operand (as_3d's copy)."""
    from hipfer._einsum import pairwise
    copies = []
    orig = pairwise.as_3d
    monkeypatch.setattr(pairwise, "as_3d", lambda t, perm, groups, shape3, be_=None, copy=None:
                        orig(t, perm, groups, shape3, be_,
                             None if copy is None else (lambda *a: copies.append(1) or copy(*a))))
    return copies


def _pairs(sub, tensors, semiring="standard"):
    """The planned pairwise steps of a two-operand einsum."""
    _, ins, out = P.parse_args([sub] + list(tensors))
    spec = P.parse(ins, out, [t.shape for t in tensors])
    return [pair for st in _einsum._plan(spec, [(0, 1)], tensors, _einsum.as_semiring(semiring)).steps
            for pair in st.pairs]


@pytest.mark.parametrize("sub,shapes,how,n_copies", [
    ("mk,nkl->nml", [(5, 7), (3, 7, 4)], "a", 0),       # matmul of a matrix with a stack
    ("nkm,kl->nml", [(3, 7, 5), (7, 2)], "b", 0),       # the stack first, transposed
    ("mk,nkl->mnl", [(5, 7), (3, 7, 4)], "a", 0),       # another output order
    ("mk,nkl->nml", [(5, 7), (1, 7, 4)], "", 0),        # a size-1 stack: one GEMM
    ("akb,nkl->nabl", [(2, 7, 3), (3, 7, 4)], "a", 1),  # the broadcast operand is copied
])
def test_broadcast_batch_instead_of_a_copy(be, rng, monkeypatch, sub, shapes, how, n_copies):
    """A free group split by the summed labels (b's n and l around k): its outer labels
    become the batch, the other operand read at stride 0 -- no copy of the stack (the
    other operand is copied once when its own groups do not nest)."""
    from hipfer._einsum import pairwise
    arrays = [rand(rng, s, np.float64) for s in shapes]
    copies = _count_copies(monkeypatch)
    tensors = [hf.asarray(a) for a in arrays]
    got = hf.einsum(sub, *tensors)
    np.testing.assert_allclose(host(got), np.einsum(sub, *arrays), rtol=1e-12, atol=1e-12)
    gemms = _pairs(sub, tensors)
    if isinstance(gemms[0], pairwise.LibraryContract):  # cuTENSOR / hipTENSOR takes it whole
        return
    assert [g.broadcast for g in gemms] == [how] and len(copies) == n_copies


@pytest.mark.parametrize("sub,shapes,plan,n_copies", [
    ("ncl,nkl->ck", [(4, 3, 5), (4, 6, 5)], "GemmSum", 0),    # a conv weight gradient
    ("ncl,nkl->kc", [(4, 3, 5), (4, 6, 5)], "GemmSum", 0),
    ("nlc,nkl->ck", [(4, 5, 3), (4, 6, 5)], "GemmSum", 0),    # split in b only
    ("nlc,nlk->ck", [(4, 5, 3), (4, 5, 6)], "Gemm", 0),       # (n, l) nests in both: one GEMM
    ("nij,njk->ik", [(3, 40, 2), (3, 2, 50)], "Gemm", 1),     # the (n, i, k) sum would be larger
])
@pytest.mark.parametrize("semiring", ["standard", "max_plus"])
def test_summed_batch_then_sum(be, rng, monkeypatch, sub, shapes, plan, n_copies, semiring):
    """A summed group split by a free label: its outer labels batch the GEMM and are
    summed afterwards (a small temporary) instead of copying the operands, unless that
    temporary would be the larger."""
    from hipfer._einsum import pairwise
    arrays = [rand(rng, s, np.float64) for s in shapes]
    copies = _count_copies(monkeypatch)
    tensors = [hf.asarray(a) for a in arrays]
    got = hf.einsum(sub, *tensors, semiring=semiring)
    if semiring == "standard":
        want = np.einsum(sub, *arrays)
    else:  # max over the summed labels of a + b
        ins, out = sub.split("->")
        labels = sorted(set(ins) - {","})
        terms = [np.einsum(f"{t}->{''.join(x for x in labels if x in t)}", a).reshape(
            [a.shape[t.index(x)] if x in t else 1 for x in labels]) for t, a in zip(ins.split(","), arrays)]
        total = terms[0] + terms[1]
        summed = tuple(i for i, x in enumerate(labels) if x not in out)
        kept = [x for x in labels if x in out]
        want = np.transpose(total.max(axis=summed), [kept.index(x) for x in out])
    np.testing.assert_allclose(host(got), want, rtol=1e-12, atol=1e-12)
    pairs = _pairs(sub, tensors, semiring)
    if isinstance(pairs[0], pairwise.LibraryContract):  # cuTENSOR / hipTENSOR takes it whole
        return
    assert type(pairs[0]).__name__ == plan and len(copies) == n_copies


def test_plans_are_cached(be, rng, monkeypatch):
    a, b = rand(rng, (3, 4), np.float64), rand(rng, (4, 5), np.float64)
    A, B = hf.asarray(a), hf.asarray(b)
    hf.einsum("ij,jk->ik", A, B)
    calls = []
    orig = _einsum._plan
    monkeypatch.setattr(_einsum, "_plan", lambda *x: calls.append(1) or orig(*x))
    monkeypatch.setattr(Pa, "find_path", lambda *x: pytest.fail("planned twice"))
    for _ in range(3):
        hf.einsum("ij,jk->ik", hf.asarray(rand(rng, (3, 4), np.float64)), B)
    assert calls == []


# --------------------------------------------------------------------- semirings
def brute_semiring(sub, arrs, sr):
    """The tropical einsum by brute force: broadcast every operand to all labels,
    combine with the semiring's product, reduce with its sum."""
    lhs, out = sub.split("->")
    terms = lhs.split(",")
    labs = sorted(set("".join(terms)))
    sizes = {c: n for t, a in zip(terms, arrs) for c, n in zip(t, a.shape)}
    total = None
    for t, a in zip(terms, arrs):
        u = "".join(dict.fromkeys(t))
        v = np.einsum(f"{t}->{u}", a)  # diagonals only: exact
        v = np.einsum(f"{u}->{''.join(c for c in labs if c in u)}", v)
        v = v.reshape([sizes[c] if c in u else 1 for c in labs])
        total = v if total is None else (total + v if sr != "max_mul" else total * v)
    total = np.broadcast_to(total, [sizes[c] for c in labs])
    red = tuple(i for i, c in enumerate(labs) if c not in out)
    if red:
        total = (np.min if sr == "min_plus" else np.max)(total, axis=red)
    kept = [c for c in labs if c in out]
    return np.transpose(total, [kept.index(c) for c in out])


@pytest.mark.parametrize("sr", ["max_plus", "min_plus", "max_mul"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_tropical_against_brute_force(be, sr, dtype):
    r = random.Random(hash((sr, np.dtype(dtype).name)) & 0xFFFF)
    rng = np.random.default_rng(r.randint(0, 1 << 30))
    for _ in range(20):
        sub, shapes = random_network(r, r.randint(1, 4), max_labels=5, zero_sizes=False)
        arrs = [rand(rng, s, dtype) for s in shapes]
        if sr == "max_mul" or np.dtype(dtype).kind == "u":
            # small integers: products and sums must not wrap (wrapping breaks the
            # distributive law that lets einsum reduce before it multiplies)
            arrs = [np.abs(a) % 4 if np.dtype(dtype).kind in "iu" else np.abs(a) for a in arrs]
        got = hf.einsum(sub, *[hf.asarray(a) for a in arrs], semiring=sr)
        want = brute_semiring(sub, arrs, sr).astype(dtype)
        assert got.shape == want.shape and got.dtype == np.dtype(dtype), sub
        np.testing.assert_allclose(host(got), want, rtol=1e-5, atol=1e-5, err_msg=f"{sub} {sr}")


def test_tropical_empty_sum_is_the_zero(be):
    a = hf.asarray(np.ones((2, 0)))
    b = hf.asarray(np.ones((0, 3)))
    np.testing.assert_array_equal(host(hf.einsum("ij,jk", a, b, semiring="max_plus")),
                                  np.full((2, 3), -np.inf))
    np.testing.assert_array_equal(host(hf.einsum("ij->i", a, semiring="min_plus")),
                                  np.full((2,), np.inf))


# --------------------------------------------------------------------------- paths
def _cost(sub, shapes, path):
    return sum(s.flops for s in Pa.steps_of(P.parse(*P._split(sub, len(shapes)), shapes), path))


@pytest.mark.parametrize("seed", range(6))
def test_auto_path_never_costlier_than_opt_einsum(seed):
    oe = pytest.importorskip("opt_einsum")
    r = random.Random(seed)
    for _ in range(40):
        n = r.randint(2, 12)
        sub, shapes = random_network(r, n, max_labels=2 * n + 2, max_size=8, repeats=False,
                                     zero_sizes=False)
        path, _ = hf.einsum_path(sub, *[np.empty(s) for s in shapes], optimize="auto")
        _, mine = oe.contract_path(sub, *shapes, shapes=True, optimize=path[1:])
        _, ref = oe.contract_path(sub, *shapes, shapes=True, optimize="auto")
        assert mine.opt_cost <= ref.opt_cost, (sub, shapes)
        assert _cost(sub, shapes, path[1:]) == mine.opt_cost  # the same cost model


def test_optimal_beats_greedy_and_naive():
    shapes = [(10, 1000), (1000, 10), (10, 1000), (1000, 10)]
    sub = "ab,bc,cd,de->ae"
    costs = {o: _cost(sub, shapes, hf.einsum_path(sub, *[np.empty(s) for s in shapes],
                                                   optimize=o)[0][1:])
             for o in ("optimal", "greedy", False)}
    assert costs["optimal"] <= costs["greedy"] <= costs[False]


def test_memory_limit():
    shapes = [(8, 8), (8, 8), (8, 8)]
    sub = "ab,cd,bd->ac"
    for opt in ("greedy", "optimal"):
        path, _ = hf.einsum_path(sub, *[np.empty(s) for s in shapes], optimize=(opt, 100))
        steps = Pa.steps_of(P.parse(*P._split(sub, 3), shapes), path[1:])
        assert all(np.prod([8] * len(s.result)) <= 100 for s in steps[:-1]), path


def test_einsum_path_report_and_explicit_path(be, rng):
    arrs = [rand(rng, s, np.float64) for s in [(3, 4), (4, 5), (5, 6)]]
    path, report = hf.einsum_path("ij,jk,kl->il", *arrs, optimize="optimal")
    assert path[0] == "einsum_path" and len(path) == 3
    for word in ("Complete contraction:  ij,jk,kl->il", "Optimized FLOP count", "remaining"):
        assert word in report
    ts = [hf.asarray(a) for a in arrs]
    want = np.einsum("ij,jk,kl->il", *arrs)
    for p in (path, path[1:], [(0, 1, 2)], [(2, 1), (0, 1)], ["einsum_path", (0,), (0, 1), (0, 1)]):
        np.testing.assert_allclose(host(hf.einsum("ij,jk,kl->il", *ts, optimize=p)), want, rtol=1e-12)


# ------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("args,err,match", [
    (("ij,jk", (2, 3), (2, 3)), ValueError, "label 'j' has size 3 in operand 0 but 2 in operand 1"),
    (("ij,jk->ik", (2, 3)), ValueError, "name 2 operand"),
    (("ij->ii", (2, 3)), ValueError, "'i' appears more than once"),
    (("ij->k", (2, 3)), ValueError, "'k' is not in any operand"),
    (("i.j", (2, 3)), ValueError, "'.' that is not part of '...'"),
    (("i1", (2, 3)), ValueError, "character '1'"),
    (("ij->i->j", (2, 3)), ValueError, "more than one '->'"),
    (("ijk", (2, 3)), ValueError, "2 axes .* 3 labels"),
    (("...i->i", (2, 3)), ValueError, "no '...'"),
    (("ii", (2, 3)), ValueError, "repeated in operand 0 with different sizes"),
    (("i...j...", (2, 3)), ValueError, "more than one '...'"),
])
def test_bad_subscripts(be, args, err, match):
    sub, *shapes = args
    with pytest.raises(err, match=match):
        hf.einsum(sub, *[hf.asarray(np.ones(s)) for s in shapes])


def test_bad_operands_and_options(be):
    a = hf.asarray(np.ones((2, 2)))
    with pytest.raises(TypeError, match="operand 1 is a ndarray"):
        hf.einsum("ij,jk", a, np.ones((2, 2)))
    with pytest.raises(TypeError):
        hf.einsum()
    with pytest.raises(ValueError, match="at least one operand"):
        hf.einsum("ij")
    with pytest.raises(TypeError, match="max_plus semiring takes real"):
        hf.einsum("ij,jk", hf.asarray(np.ones((2, 2), complex)), a, semiring="max_plus")
    with pytest.raises(TypeError, match="max_plus semiring takes real"):
        hf.einsum("ij,jk", hf.asarray(np.ones((2, 2), bool)), hf.asarray(np.ones((2, 2), bool)),
                  semiring="max_plus")
    with pytest.raises(ValueError, match="unknown semiring"):
        hf.einsum("ij", a, semiring="tropical")
    with pytest.raises(ValueError, match="optimize must be"):
        hf.einsum("ij,jk", a, a, optimize="fastest")
    with pytest.raises(ValueError, match="path step"):
        hf.einsum("ij,jk", a, a, optimize=[(0, 5)])
    with pytest.raises(ValueError, match="leaves 2 operands"):
        hf.einsum("ij,jk,kl", a, a, a, optimize=[(0, 1)])
    with pytest.raises(ValueError, match="negative label"):
        hf.einsum(a, [0, -1])
    with pytest.raises(TypeError, match="label 'x'"):
        hf.einsum(a, [0, "x"])


def test_mixed_devices(be):
    if be.name != "cupy":
        pytest.skip("needs the GPU and the CPU")
    with pytest.raises(ValueError, match="different devices"):
        hf.einsum("ij,jk", hf.asarray(np.ones((2, 2))), hf.asarray(np.ones((2, 2)), device="cpu"))


# ------------------------------------------------------------------------ gradients
@pytest.mark.parametrize("seed", range(4))
def test_vjp_adjoint_identity(be, seed):
    """<ct, einsum(.., v at i, ..)> == <grad_i, v>: einsum is linear in each operand, so
    this holds exactly for random v (repeated labels, lone labels, size-1 broadcasts)."""
    r, rng = random.Random(seed), np.random.default_rng(seed)
    for _ in range(20):
        n = r.randint(1, 4)
        sub, shapes = random_network(r, n, max_labels=5)
        dt = r.choice([np.float64, np.complex128])
        arrs = [rand(rng, s, dt) for s in shapes]
        ct = rand(rng, np.einsum(sub, *arrs).shape, dt)
        grads = hf.einsum_vjp(sub, *[hf.asarray(a) for a in arrs], cotangent=hf.asarray(ct))
        assert len(grads) == n
        for i, g in enumerate(grads):
            v = rand(rng, shapes[i], dt)
            lhs = np.sum(ct * np.einsum(sub, *(arrs[:i] + [v] + arrs[i + 1:])))
            assert g.shape == shapes[i]
            np.testing.assert_allclose(np.sum(host(g) * v), lhs, rtol=1e-9, atol=1e-9,
                                       err_msg=f"{sub} operand {i}")


def test_vjp_matmul_and_conventions(be, rng):
    a, b = rand(rng, (3, 4), np.complex128), rand(rng, (4, 5), np.complex128)
    g = rand(rng, (3, 5), np.complex128)
    A, B, G = hf.asarray(a), hf.asarray(b), hf.asarray(g)
    ga, gb = hf.einsum_vjp("ij,jk->ik", A, B, cotangent=G)
    np.testing.assert_allclose(host(ga), g @ b.T, rtol=1e-12)
    np.testing.assert_allclose(host(gb), a.T @ g, rtol=1e-12)
    ga, gb = hf.einsum_vjp("ij,jk->ik", A, B, cotangent=G, conjugate=True)
    np.testing.assert_allclose(host(ga), g @ np.conj(b).T, rtol=1e-12)
    np.testing.assert_allclose(host(gb), np.conj(a).T @ g, rtol=1e-12)
    # writing onto a diagonal (AntiTrace): d trace(x) / dx = identity
    (gt,) = hf.einsum_vjp("ii->", hf.asarray(a[:3, :3]), cotangent=hf.asarray(np.array(2.0)))
    np.testing.assert_array_equal(host(gt), 2 * np.eye(3))
    # ... networks in the interleaved form
    ga, gb = hf.einsum_vjp(A, [Ellipsis, 0], B, [0, 1], cotangent=G)
    np.testing.assert_allclose(host(ga), g @ b.T, rtol=1e-12)


def test_vjp_subscripts():
    assert hf.einsum_vjp_subscripts("ij,jk->ik") == ["ik,jk->ij", "ik,ij->jk"]
    assert hf.einsum_vjp_subscripts("ii->") == ["-> => ii"]
    assert hf.einsum_vjp_subscripts("ij,j->") == [",j->j => ij", ",ij->j"]
    with pytest.raises(ValueError, match="needs operand shapes"):
        hf.einsum_vjp_subscripts("...i->i")


def test_vjp_bad_input(be):
    a = hf.asarray(np.ones((2, 3)))
    with pytest.raises(ValueError, match="cotangent has shape"):
        hf.einsum_vjp("ij->i", a, cotangent=hf.asarray(np.ones(3)))
    with pytest.raises(TypeError, match="the cotangent is a ndarray"):
        hf.einsum_vjp("ij->i", a, cotangent=np.ones(2))


# ------------------------------------------------------------------ tropical argmax
def brute_argmax(sub, arrs, sr):
    """(values, flat index over the summed labels in first-appearance order)."""
    lhs, out = sub.split("->")
    terms = lhs.split(",")
    summed = "".join(dict.fromkeys(c for c in lhs.replace(",", "") if c not in out))
    full = out + summed
    sizes = {}
    for t, a in zip(terms, arrs):
        for c, n in zip(t, a.shape):
            sizes[c] = max(sizes.get(c, 1), n)
    total = None
    for t, a in zip(terms, arrs):
        u = "".join(dict.fromkeys(t))
        v = np.einsum(f"{t}->{u}", a)
        v = np.einsum(f"{u}->{''.join(c for c in full if c in u)}", v)
        v = v.reshape([a.shape[t.index(c)] if c in u else 1 for c in full])
        total = v if total is None else (total + v if sr != "max_mul" else total * v)
    total = np.broadcast_to(total, [sizes[c] for c in full])
    flat = total.reshape(tuple(sizes[c] for c in out) + (-1,))
    pick = np.argmin if sr == "min_plus" else np.argmax
    idx = pick(flat, axis=-1)
    return np.take_along_axis(flat, idx[..., None], -1)[..., 0], idx


@pytest.mark.parametrize("sr", ["max_plus", "min_plus", "max_mul"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("sub,shapes", [
    ("ij,jk->ik", [(5, 7), (7, 4)]),            # one GEMM with its argmax output
    ("bij,bjk->bki", [(3, 5, 9), (3, 9, 2)]),
    ("ijk,jkl->il", [(4, 3, 5), (3, 5, 2)]),    # two summed labels, flat index
    ("kji,kj->i", [(3, 4, 5), (3, 4)]),
    ("ij,j->", [(4, 6), (6,)]),
    ("ij,jk,k->i", [(4, 6), (6, 3), (3,)]),     # three operands: broadcast product
    ("ii->", [(4, 4)]),
    ("ij,ik->jk", [(6, 3), (1, 4)]),
])
def test_einsum_argmax(be, rng, sr, dtype, sub, shapes):
    # small integers make ties common: the smallest index must win
    arrs = [(rng.integers(0, 4, s)).astype(dtype) for s in shapes]
    vals, idx = hf.einsum(sub, *[hf.asarray(a) for a in arrs], semiring=sr, argmax=True)
    want_v, want_i = brute_argmax(sub, arrs, sr)
    assert idx.dtype == hf.int64 and vals.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(host(idx), want_i)
    np.testing.assert_array_equal(host(vals), want_v.astype(dtype))


def test_einsum_argmax_nan_and_empty(be):
    a = np.array([[1.0, np.nan, 3.0, np.nan]])
    b = np.zeros((4, 1))
    v, i = hf.einsum("ij,jk->ik", hf.asarray(a), hf.asarray(b), semiring="max_plus", argmax=True)
    assert np.isnan(host(v)[0, 0]) and host(i)[0, 0] == 1     # the first NaN wins, as np.argmax
    v, i = hf.einsum("ij,jk->ik", hf.asarray(np.ones((2, 0))), hf.asarray(np.ones((0, 3))),
                     semiring="max_plus", argmax=True)
    np.testing.assert_array_equal(host(i), -np.ones((2, 3)))
    np.testing.assert_array_equal(host(v), np.full((2, 3), -np.inf))
    with pytest.raises(ValueError, match="argmax=True needs a tropical semiring"):
        hf.einsum("ij,jk", hf.asarray(np.ones((2, 2))), hf.asarray(np.ones((2, 2))), argmax=True)


def test_contract_fast_path_plumbing(be, rng, monkeypatch):
    """With a contraction library loaded, GEMM steps become SemiringFastPath.Contract
    calls where the backend takes them. No library is loadable here, so pretend one is:
    the CPU backend's Contract (and the GPU's, where cuTENSOR is loaded) then runs them."""
    if be.name == "cupy" and not hf.prims.registry.contraction_library():
        pytest.skip("no hipTENSOR/cuTENSOR loaded (set HIPFER_CUTENSOR, see test_tensorlib.py)")
    from hipfer._einsum import pairwise
    monkeypatch.setattr(_einsum, "contraction_library", lambda: "a library")
    seen = []
    orig = pairwise.LibraryContract.apply
    monkeypatch.setattr(pairwise.LibraryContract, "apply",
                        lambda self, *a: seen.append(self) or orig(self, *a))
    r = random.Random(7)
    for _ in range(20):
        sub, shapes = random_network(r, r.randint(2, 5), zero_sizes=False)
        arrs = [rand(rng, s, np.complex128) for s in shapes]
        got = hf.einsum(sub, *[hf.conj(hf.asarray(np.conj(a))) for a in arrs])
        np.testing.assert_allclose(host(got), np.einsum(sub, *arrs), rtol=1e-10, atol=1e-10)
    assert seen, "no step went to Contract"
