"""CPU checks of the GPU reductions: the planning of hipfer.kernels.reduction (mapping an
operand onto M outputs x K reduced elements, the split of K, the AntiTrace diagonal),
the kernel groups, and the CuPy handlers' plumbing with reduction.cuh emulated in NumPy.

The emulator follows the kernels' index arithmetic (offset_of, the splits, the thread
path's rows, the partial workspace, the diagonal test) and does the arithmetic with
NumPy, so it checks that every element is read once and every result lands where it
should. The kernels' own arithmetic runs on a GPU in tests/test_prims_reduction.py.
"""
import re
import string
from types import SimpleNamespace

import numpy as np
import pytest

from hipfer.kernels import CTYPE, KERNEL_DIR, module_source
from hipfer.kernels import reduction as kr
from hipfer.prims import descriptors as d
from hipfer.prims.infer import infer
from hipfer.prims.optable import ReduceOp

from _util import StridedOut, assert_accumulated, nan_filled, random_array, run_prim


# ---------------------------------------------------------------- index helpers
def offset_of(i, dims, strides):
    """hf::offset_of, vectorised over the int64 array i."""
    i = np.asarray(i, np.int64).copy()
    off = np.zeros_like(i)
    for n, s in zip(reversed(tuple(dims)), reversed(tuple(strides))):
        q = i // n
        off += (i - q * n) * s
        i = q
    return off


def thread_rows(ks, red_shape, red_a):
    """The thread kernel's walk: row q of the innermost axis, then position i in it."""
    n_last, s_last = red_shape[-1], red_a[-1]
    q, i = ks // n_last, ks % n_last
    return offset_of(q, red_shape[:-1], red_a[:-1]) + i * s_last


def flat_origin(arr):
    """(flat view of the owning buffer, element offset of arr[0, ..., 0] in it)."""
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    assert root.flags.c_contiguous
    flat = root.reshape(-1)
    delta = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return flat, delta // arr.dtype.itemsize


def strided_view(rng, shape, *, broadcast=True):
    """An int64 view of `shape` with random axis order, steps (+-1, +-2) and maybe one
    broadcast (stride 0) axis."""
    nd = len(shape)
    perm = rng.permutation(nd)
    store = [shape[p] for p in perm]
    steps = rng.choice([1, 2, -1, -2], nd)
    big = [n * abs(int(s)) for n, s in zip(store, steps)]
    v = rng.integers(-1000, 1000, int(np.prod(big))).reshape(big)
    v = v[tuple(slice(None, None, int(s)) for s in steps)].transpose(np.argsort(perm))
    if broadcast and nd and rng.random() < 0.3:
        b = int(rng.integers(nd))
        idx = [slice(None)] * nd
        idx[b] = slice(0, 1)
        v = np.broadcast_to(v[tuple(idx)], shape)
    assert v.shape == tuple(shape)
    return v


def einsum_ref(v, modes_a, modes_c):
    letter = {m: string.ascii_letters[i] for i, m in enumerate(dict.fromkeys(modes_a))}
    spec = "".join(letter[m] for m in modes_a) + "->" + "".join(letter[m] for m in modes_c)
    return np.einsum(spec, v)


def emulate_sum(v, g):
    """The kernels' gather for every (output, k), summed: must equal the einsum."""
    flat, origin = flat_origin(v)
    shape, ka, ko = kr.keep_layout(g, kr.c_strides(g.keep_shape))
    ms = np.arange(g.M)
    base = offset_of(ms, shape, ka)
    ks = np.arange(g.K)
    rows = offset_of(ks, g.red_shape, g.red_a)
    np.testing.assert_array_equal(thread_rows(ks, g.red_shape, g.red_a), rows)
    out = np.zeros(g.M, np.int64)
    out[offset_of(ms, shape, ko)] = flat[origin + base[:, None] + rows[None, :]].sum(axis=1)
    return out.reshape(g.keep_shape)


# ------------------------------------------------------------------- planning
def test_collapse_merges_contiguous_axes():
    assert kr.collapse((2, 3, 4), (12, 4, 1)) == ((24,), [(1,)])
    assert kr.collapse((2, 1, 4), (4, 99, 1), (4, 0, 1)) == ((8,), [(1,), (1,)])
    assert kr.collapse((2, 3), (1, 2)) == ((2, 3), [(1, 2)])
    assert kr.collapse((1, 1), (5, 7)) == ((1,), [(0,)])
    assert kr.collapse((3, 4), (-4, -1)) == ((12,), [(-1,)])


def test_diagonal_sums_strides_of_repeated_labels():
    assert kr.diagonal(("i", "j", "i"), (3, 4, 3), (12, 3, 1)) == (("i", "j"), (3, 4), (13, 3))


@pytest.mark.parametrize("path", [None, "block", "thread", "vec"])
def test_plan_reduce_matches_einsum(path):
    rng = np.random.default_rng(7)
    labels = "abcde"
    for _ in range(150):
        nd = int(rng.integers(0, 5))
        sizes = {m: int(rng.integers(1, 5)) for m in labels}
        modes_a = tuple(rng.choice(list(labels[:4]), nd))  # repeats happen: the diagonal
        uniq = list(dict.fromkeys(modes_a))
        keep = [m for m in uniq if rng.random() < 0.5]
        modes_c = tuple(rng.permutation(keep)) if keep else ()
        v = strided_view(rng, [sizes[m] for m in modes_a])
        st = tuple(s // 8 for s in v.strides)
        if path == "vec" and kr.plan_reduce(modes_a, modes_c, v.shape, st).red_a != (1,):
            with pytest.raises(ValueError, match="stride 1"):
                kr.plan_reduce(modes_a, modes_c, v.shape, st, path=path)
            continue
        g = kr.plan_reduce(modes_a, modes_c, v.shape, st, path=path)
        assert g.keep_shape == tuple(sizes[m] for m in modes_c)
        np.testing.assert_array_equal(emulate_sum(v, g), einsum_ref(v, modes_a, modes_c))


def test_plan_reduce_orders_reduced_axes_innermost_contiguous():
    # sum over axis 0 of a C-contiguous (K, M): kept axis contiguous -> the thread path
    g = kr.plan_reduce(("i", "j"), ("j",), (1000, 300), (300, 1))
    assert g.path == "thread" and g.red_a == (300,)
    # sum over the last axis: the vec path reads whole rows as packs, up to 32 lanes per
    # row, each lane at least one group of kr.GROUP elements
    g = kr.plan_reduce(("i", "j"), ("i",), (300, 1024), (1024, 1))
    assert g.path == "vec" and g.red_a == (1,) and g.lanes == 32
    for k, lanes in ((1000, 16), (256, 8), (64, 2), (100, 2)):
        assert kr.plan_reduce(("i", "j"), ("i",), (300, k), (k, 1)).lanes == lanes
    # ... a block per row when the rows are long or few
    assert kr.plan_reduce(("i", "j"), ("i",), (300, 20000), (20000, 1)).lanes == kr.VEC_BLOCK
    assert kr.plan_reduce(("i", "j"), ("i",), (30, 1000), (1000, 1)).lanes == kr.VEC_BLOCK
    # a strided last axis: the block path
    g = kr.plan_reduce(("i", "j"), ("i",), (300, 1000), (2000, 2))
    assert g.path == "block" and g.red_a == (2,)
    # reduced axes sorted by stride and merged: a transposed 3-d operand is one run
    g = kr.plan_reduce(("i", "j", "k"), (), (4, 5, 6), (1, 4, 20))
    assert g.red_shape == (120,) and g.red_a == (1,) and g.path == "vec"
    # a reversed run is not a vec run
    assert kr.plan_reduce(("i",), (), (1000,), (-1,)).path == "block"
    # a broadcast reduced axis goes outermost: the contiguous one stays innermost
    g = kr.plan_reduce(("i", "j"), (), (5, 100), (0, 1))
    assert g.red_shape == (5, 100) and g.red_a == (0, 1) and g.path == "block"
    # small K: one thread per output
    assert kr.plan_reduce(("i", "j"), ("i",), (5000, 8), (8, 1)).path == "thread"


@pytest.mark.parametrize("path", ["block", "thread", "vec"])
@pytest.mark.parametrize("M", [1, 2, 7, 100, 5000, 10**6])
@pytest.mark.parametrize("K", [0, 1, 5, 63, 64, 1000, 10**5, 10**8])
def test_launch_geometry_invariants(path, M, K):
    block, n_split, chunk, grid, finish_block = kr.launch_geometry(M, K, path)
    assert block % 64 == 0 and 64 <= block <= 1024
    assert finish_block % 64 == 0 and 64 <= finish_block <= 256
    assert 1 <= grid <= kr.MAX_GRID
    assert 1 <= n_split <= kr.MAX_SPLIT
    if K == 0:
        assert (n_split, chunk) == (1, 0)
        return
    assert (n_split - 1) * chunk < K <= n_split * chunk  # every split is non-empty
    if path == "block":
        assert chunk % block == 0
        assert grid == min(M * n_split, kr.MAX_GRID)
    elif path == "vec":
        lanes = kr.vec_lanes(M, K)
        assert block == kr.VEC_BLOCK and lanes in (1, 2, 4, 8, 16, 32, block)
        if lanes < block:  # short rows: each lane folds a whole group of elements
            assert lanes * kr.GROUP <= max(K, kr.GROUP)
        assert chunk % (lanes * kr.GROUP) == 0  # splits start on a pack of every width
        assert grid == min(-(-M * n_split // (block // lanes)), kr.VEC_MAX_GRID)
        if n_split > 1:  # each lane gets whole groups
            assert chunk >= lanes * kr.GROUP * kr.MIN_GROUPS_VEC
    else:
        assert grid == min(-(-M * n_split // block), kr.MAX_GRID)
    assert M * n_split * kr.ACC_BYTES <= max(M, 2 * kr.TARGET_THREADS) * kr.MAX_SPLIT * 32
    # the order depends on the shape only: the same call gives the same geometry
    assert kr.launch_geometry(M, K, path) == (block, n_split, chunk, grid, finish_block)


def test_large_reductions_split():
    assert kr.launch_geometry(1, 10**8, "block")[1] > 100      # a full reduction
    assert kr.launch_geometry(1, 10**8, "vec")[1] > 100
    assert kr.launch_geometry(1000, 10**6, "thread")[1] > 1    # sum over axis 0
    assert kr.launch_geometry(10**6, 1000, "block")[1] == 1    # enough outputs already
    assert kr.launch_geometry(10**6, 1000, "vec")[1] == 1


def test_bench_geometries():
    """The planned geometry of the `hipfer bench` reduction cases (issue 7)."""
    n = 1 << 26
    g = kr.plan_reduce(("i",), (), (n,), (1,))               # sum full float32
    assert (g.path, g.lanes, g.block, g.n_split, g.chunk) == ("vec", 256, 256, 1024, 65536)
    assert g.grid == 1024 and g.finish_block == 256 and g.vec_aligned(4)
    g = kr.plan_reduce(("i",), (), (n // 2,), (1,))          # sum full float64
    assert (g.path, g.lanes, g.n_split, g.chunk) == ("vec", 256, 1024, 32768)
    g = kr.plan_reduce(("i", "j"), ("i",), (8192, 8192), (8192, 1))  # axis=-1
    assert (g.path, g.lanes, g.block, g.n_split, g.grid) == ("vec", 32, 256, 1, 1024)
    assert g.vec_aligned(4) and g.vec_aligned(1)
    g = kr.plan_reduce(("i", "j"), ("j",), (8192, 8192), (8192, 1))  # axis=0
    assert (g.path, g.n_split, g.chunk, g.grid) == ("thread", 32, 256, 1024)


def test_vec_aligned():
    """Packs load as vectors only when every task starts on 16 bytes."""
    g = kr.plan_reduce(("i", "j"), ("i",), (300, 1000), (1000, 1))
    assert g.vec_aligned(4) and g.vec_aligned(8) and g.vec_aligned(2)
    g = kr.plan_reduce(("i", "j"), ("i",), (300, 1001), (1001, 1))
    assert not g.vec_aligned(4) and not g.vec_aligned(8) and g.vec_aligned(16)
    g = kr.plan_reduce(("i", "j"), ("i",), (300, 999), (1002, 1))  # a[:, :999] of 1002 wide
    assert not g.vec_aligned(4) and g.vec_aligned(8)
    g = kr.plan_reduce(("i", "j"), ("i",), (1, 999), (7, 1))  # size-1 kept axes do not count
    assert g.vec_aligned(4)
    g = kr.plan_reduce(("i", "j"), ("i",), (300, 1000), (-1000, 1))  # reversed rows
    assert g.path == "vec" and g.vec_aligned(4)
    assert not kr.plan_reduce(("i", "j"), ("i",), (300, 1000), (2000, 2)).vec_aligned(4)


# ------------------------------------------- red_vec's order, transcribed
def vec_fold_groups(n, lane, L, V):
    """red_fold_packs line by line: the element indices of each group lane folds, in order."""
    GP = kr.GROUP // V
    n_full, n_packs = n // V, -(-n // V)
    groups, q0 = [], lane
    while q0 + (GP - 1) * L < n_full:
        groups.append([(q0 + j * L) * V + e for j in range(GP) for e in range(V)])
        q0 += GP * L
    if q0 < n_packs:
        q_end, g, q = min(n_packs, q0 + GP * L), [], q0
        while q < q_end:
            g.extend(range(q * V, min(n, (q + 1) * V)))
            q += L
        groups.append(g)
    return groups


def vec_spec_groups(n, lane, L, V):
    """The documented order: packs lane + jL, GROUP // V of them per group."""
    GP = kr.GROUP // V
    packs = list(range(lane, -(-n // V), L))
    return [[i for q in packs[g:g + GP] for i in range(q * V, min(n, q * V + V))]
            for g in range(0, len(packs), GP)]


@pytest.mark.parametrize("V", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("L", [32, 64, 256])
def test_vec_fold_order(L, V):
    """The kernel's loops visit every element of a task once, in the documented order,
    groups of at most GROUP elements, whatever n (multiples of the pack or not)."""
    rng = np.random.default_rng(L * 100 + V)
    ns = sorted({0, 1, V - 1, V, V + 1, L * V - 1, L * V, L * kr.GROUP, L * kr.GROUP + 1,
                 3 * L * kr.GROUP - V, *rng.integers(1, 6 * L * kr.GROUP, 12).tolist()})
    for n in ns:
        seen = []
        for lane in range(L):
            got = vec_fold_groups(n, lane, L, V)
            assert got == vec_spec_groups(n, lane, L, V), (n, lane)
            assert all(0 < len(g) <= kr.GROUP for g in got)
            seen += [i for g in got for i in g]
        assert sorted(seen) == list(range(n)), n


def _tree(v, width):
    """The shuffle-down tree of red_block_merge / red_group_merge over `width` lanes:
    lane 0's result (lane i + o past the group reads a lane whose value lane 0 never uses)."""
    v = list(v)
    o = width // 2
    while o:
        v = [v[i] + v[i + o] if i + o < len(v) else v[i] for i in range(len(v))]
        o //= 2
    return v[0]


def vec_task_sum_f32(x, L, warp):
    """red_vec's float32 sum of one task in the kernel's exact order (lanes, then the
    group merge: a 32-lane tree, or a block of L threads: warp trees, then warp 0's tree)."""
    f = np.float32
    lane_sums = []
    for lane in range(L):
        v = f(0)
        for g in vec_fold_groups(len(x), lane, L, 4):
            acc = f(0)
            for i in g:
                acc = f(acc + x[i])
            v = f(v + acc)
        lane_sums.append(v)
    if L <= 32:
        return _tree(lane_sums, L)
    warps = [_tree(lane_sums[w:w + warp], warp) for w in range(0, L, warp)]
    return _tree(warps + [f(0)] * (warp - len(warps)), warp)


@pytest.mark.parametrize("L,warp", [(2, 32), (8, 64), (32, 32), (32, 64), (256, 32), (256, 64)])
def test_vec_order_rounding(L, warp):
    """The grouped order keeps a float32 sum's error near (n / (32 L) + 32 + log2 L)
    roundings of the magnitude, far below the tests' bound."""
    rng = np.random.default_rng(L + warp)
    for n in (5, 1000, 8192 + 3, 20000):
        x = (rng.standard_normal(n) * 3 + 1).astype(np.float32)
        got = vec_task_sum_f32(x, L, warp)
        exact = np.sum(x.astype(np.float64))
        steps = n / (32 * L) + 32 + np.log2(L)
        assert abs(float(got) - exact) <= steps * 2 ** -24 * np.sum(np.abs(x.astype(np.float64)))


def anti_reference(a, modes_a, modes_c, out_shape):
    idx = np.indices(out_shape)
    pos = {}
    ok = np.ones(out_shape, bool)
    for ax, m in enumerate(modes_c):
        if m in pos:
            ok &= idx[ax] == idx[pos[m]]
        else:
            pos[m] = ax
    src = a[tuple(idx[pos[m]] for m in modes_a)] if modes_a else np.broadcast_to(a, out_shape)
    return np.where(ok, src, 0)


def emulate_anti(a, g, out_shape):
    """The red_anti kernel's loop, vectorised over the output elements."""
    flat, origin = flat_origin(a)
    out = np.zeros(out_shape, a.dtype)
    ost = kr.c_strides(out_shape)
    ost = tuple(ost[i] for i in g.perm)
    r = np.arange(g.n)
    off_a = np.zeros(g.n, np.int64)
    off_o = np.zeros(g.n, np.int64)
    diag = np.ones(g.n, bool)
    prev = np.zeros(g.n, np.int64)
    for dim in reversed(range(len(g.shape))):
        q = r // g.shape[dim]
        idx = r - q * g.shape[dim]
        r = q
        off_a += idx * g.a_strides[dim]
        off_o += idx * ost[dim]
        if (g.same_next >> dim) & 1:
            diag &= idx == prev
        prev = idx
    out.reshape(-1)[off_o] = np.where(diag, flat[origin + off_a], 0)
    return out


def test_plan_anti_matches_reference():
    rng = np.random.default_rng(11)
    for _ in range(150):
        sizes = {m: int(rng.integers(1, 4)) for m in "abcd"}
        modes_c = tuple(rng.choice(list("abcd"), int(rng.integers(0, 5))))
        uniq = list(dict.fromkeys(modes_c))
        modes_a = tuple(rng.permutation([m for m in uniq if rng.random() < 0.7])) if uniq else ()
        a = strided_view(rng, [sizes[m] for m in modes_a])
        out_shape = tuple(sizes[m] for m in modes_c)
        g = kr.plan_anti(modes_a, modes_c, tuple(s // 8 for s in a.strides), out_shape)
        np.testing.assert_array_equal(emulate_anti(a, g, out_shape),
                                      anti_reference(a, modes_a, modes_c, out_shape))


# ------------------------------------------------------------- kernel groups
def test_groups_cover_every_reducer():
    groups = {name: set(exprs) for name, _, exprs in kr.instances()}
    assert all(name.startswith("red_") for name in groups)
    for r in kr.all_reducers():
        assert set(r.kernels) <= groups[r.group], r
    assert {kr.anti_kernel(t) for t in CTYPE} == groups["red_anti"]


def _infer_out(desc, dt):
    return infer(desc, (dt,), ((2, 3),))[0][1]


def test_reducer_dtypes_match_infer():
    m = ("i", "j")
    for table, fam in ((kr.SCALAR_KINDS, d.ScalarReduce), (kr.METADATA_KINDS, d.MetadataReduce)):
        for op, kinds in table.items():
            for dt in (t for t in CTYPE if t.kind in kinds):
                assert kr.reducer(op, dt).out_dtype == _infer_out(fam(op, m, ("i",)), dt)
    for op in kr.ANALYTIC_KINDS:
        for dt in (t for t in CTYPE if t.kind in "fc"):
            assert kr.reducer(op, dt).out_dtype == _infer_out(d.AnalyticReduce(op, m, ()), dt)
    for pre in kr.COMPLEX_PRE:
        for op in kr.COMPLEX_REDUCE:
            for dt in (t for t in CTYPE if t.kind == "c"):
                desc = d.ComplexRealReduce(pre, op, m, ())
                assert kr.reducer(op, dt, pre=pre).out_dtype == _infer_out(desc, dt)
    for dt in CTYPE:
        assert kr.reducer(ReduceOp.SUM, dt).out_dtype == _infer_out(d.ReduceAdd(m, ()), dt)
        assert kr.reducer(ReduceOp.SUM, dt, out_dtype=dt).out_dtype == _infer_out(d.Trace(m, ()), dt)


def test_source_is_portable():
    own = (KERNEL_DIR / kr.FILE).read_text()
    assert "#include <" not in own          # hiprtc / NVRTC: builtins only
    assert "atomicAdd" not in own and "atomicCAS" not in own  # fixed summation order
    assert "__shfl" not in own              # shuffles only through HF_SHFL_DOWN
    assert f"#define HF_RED_ACC_BYTES {kr.ACC_BYTES}" in own
    assert "red_block" in module_source(kr.FILE) and "red_block" not in module_source("common.cuh")


# ------------------------------------------------ the CuPy handlers, emulated
_TYPE = {v: k for k, v in CTYPE.items()}
_KERNEL = re.compile(r"hf::red_(block|thread|finish|vec)<hf::red_(\w+)<(.*)> >$")


def _finalize(name, args, vals, count, corr, mode, out_dt):
    """What the reducer computes over vals (its elements in any order)."""
    pre = args[2] if len(args) > 2 else "hf::pre_none"
    vals = {"hf::pre_abs": np.abs, "hf::pre_real": np.real,
            "hf::pre_imag": np.imag}.get(pre, lambda x: x)(vals)
    with np.errstate(all="ignore"):
        if name == "sum":
            r = np.any(vals) if out_dt == np.bool_ else np.sum(vals.astype(out_dt), dtype=out_dt)
            if mode:
                r = r / out_dt.type(count)
        elif name == "prod":
            r = np.all(vals) if out_dt == np.bool_ else np.prod(vals.astype(out_dt), dtype=out_dt)
        elif name in ("max", "min"):
            r = (np.max if name == "max" else np.min)(vals.astype(out_dt))
        elif name in ("all", "any"):
            r = (np.all if name == "all" else np.any)(vals != 0)
        else:
            wide = vals.astype(np.complex128)
            r = np.sum(np.abs(wide - wide.mean()) ** 2) / max(len(vals) - corr, 0) \
                if len(vals) else np.nan
            r = np.sqrt(r) if mode else r
    return np.asarray(r).astype(out_dt)[()]


def _axpby(alpha, r, beta, flat, o):
    with np.errstate(all="ignore"):
        v = r if alpha == 1 else alpha * r
        if beta == 0:
            return v
        return (flat[o] if beta == 1 else beta * flat[o]) + v


class EmulatedKernel:
    """Stands in for a cupy.RawKernel of reduction.cuh: checks the launch and the
    argument types, then does what the kernel does."""

    def __init__(self, expr, log):
        self.expr, self.log = expr, log

    def __call__(self, grid, block, args, shared_mem=0, align=None):
        if align is not None:  # the engine's kernels launch only when these pointers are aligned
            if any(a.__array_interface__["data"][0] & m for a, m in zip(args, align)):
                return False
        self.run(grid, block, args)
        return True

    def run(self, grid, block, args):
        assert len(grid) == 1 and 1 <= grid[0] <= kr.MAX_GRID
        assert len(block) == 1 and block[0] % 64 == 0 and block[0] <= 1024
        self.block = block
        self.log.append(self.expr)
        if self.expr.startswith("hf::red_anti<"):
            return self._anti(*args)
        kind, name, targs = _KERNEL.match(self.expr).groups()
        targs = targs.split(", ")
        in_dt = _TYPE[targs[0]]
        out_dt = (np.dtype(np.bool_) if name in ("all", "any") else _TYPE[targs[1]])
        if kind == "finish":
            return self._finish(name, targs, out_dt, *args)
        return self._main(kind, name, targs, in_dt, out_dt, *args)

    @staticmethod
    def _geom(shape, strides):
        n = int(shape["ndim"])
        return tuple(shape["dim"][:n]), tuple(strides["s"][:n])

    def _main(self, kind, name, targs, in_dt, out_dt, a, cj, out, part, keep, keep_a, keep_out,
              red, red_a, n_out, n_split, chunk, count, corr, mode, alpha, beta, *vec_args):
        for x, t in ((cj, np.bool_), (n_out, np.int64), (n_split, np.int64), (chunk, np.int64),
                     (count, np.int64), (corr, np.float64), (mode, np.int32)):
            assert type(x) is t
        assert len(vec_args) == (2 if kind == "vec" else 0)
        assert a.dtype == in_dt and out.dtype == out_dt
        assert alpha.dtype == out_dt and beta.dtype == out_dt
        kshape, ka = self._geom(keep, keep_a)
        _, ko = self._geom(keep, keep_out)
        rshape, ra = self._geom(red, red_a)
        S = int(n_split)
        if S > 1:
            assert part.dtype == np.uint8 and part.size >= n_out * S * kr.ACC_BYTES
            part.partials = {}
        fa, oa = flat_origin(a)
        fo, oo = flat_origin(out)
        if kind == "vec":
            lanes, vec = vec_args
            assert type(lanes) is np.int32 and type(vec) is np.bool_
            assert self.block[0] % lanes == 0 and (lanes in (1, 2, 4, 8, 16, 32) or lanes == self.block[0])
            assert count == 0 or (rshape, ra) == ((int(count),), (1,))  # one run of stride 1
            V = max(1, 16 // a.itemsize)
        for t in range(int(n_out) * S):
            m, s = (t // S, t % S) if kind in ("block", "vec") else (t % n_out, t // n_out)
            ks = np.arange(s * chunk, min(count, (s + 1) * chunk))
            rows = offset_of(ks, rshape, ra) if kind != "thread" else thread_rows(ks, rshape, ra)
            if kind == "vec":
                start = oa + int(offset_of(m, kshape, ka)) + int(s * chunk)  # the task's row
                if vec:  # every task's first element is 16-byte aligned
                    assert (a.__array_interface__["data"][0]
                            + (start - oa) * a.itemsize) % kr.PACK_BYTES == 0
                order = [i for lane in range(int(lanes))
                         for g in vec_fold_groups(len(ks), lane, int(lanes), V) for i in g]
                assert sorted(order) == list(range(len(ks)))
                rows = rows[order]
            vals = fa[oa + int(offset_of(m, kshape, ka)) + rows]
            vals = np.conj(vals) if cj else vals
            if S > 1:
                part.partials[int(m) * S + int(s)] = vals
                continue
            o = oo + int(offset_of(m, kshape, ko))
            r = _finalize(name, targs, vals, count, corr, mode, out_dt)
            fo[o] = _axpby(alpha, r, beta, fo, o)

    def _finish(self, name, targs, out_dt, part, out, keep, keep_out, n_out, n_split, count,
                corr, mode, alpha, beta):
        kshape, ko = self._geom(keep, keep_out)
        fo, oo = flat_origin(out)
        for m in range(int(n_out)):
            vals = np.concatenate([part.partials[m * int(n_split) + s] for s in range(int(n_split))])
            o = oo + int(offset_of(m, kshape, ko))
            fo[o] = _axpby(alpha, _finalize(name, targs, vals, count, corr, mode, out_dt), beta, fo, o)

    def _anti(self, a, cj, out, shape, a_st, out_st, same_next, n, alpha, beta):
        assert type(same_next) is np.int64 and type(n) is np.int64 and type(cj) is np.bool_
        assert alpha.dtype == out.dtype == a.dtype
        dims, ast = self._geom(shape, a_st)
        ost = tuple(out_st["s"][:len(dims)])
        fa, oa = flat_origin(a)
        fo, oo = flat_origin(out)
        for i in range(int(n)):
            r, off_a, off_o, prev, diag = i, 0, 0, 0, True
            for dim in reversed(range(len(dims))):
                q, idx = divmod(r, int(dims[dim]))
                r = q
                off_a += idx * int(ast[dim])
                off_o += idx * int(ost[dim])
                if (int(same_next) >> dim) & 1 and idx != prev:
                    diag = False
                prev = idx
            x = fa[oa + off_a] if diag else a.dtype.type(0)
            x = np.conj(x) if cj else x
            fo[oo + off_o] = _axpby(alpha, x, beta, fo, oo + off_o)


class _Workspace(np.ndarray):
    """cupy.empty's stand-in: a uint8 buffer that can carry the emulated partials."""


@pytest.fixture
def emu(monkeypatch):
    """A backend-like object whose reduction handlers are the CuPy ones, running the
    emulated kernels on NumPy arrays; .log lists the launched kernels."""
    pytest.importorskip("cupy")
    from hipfer.backends.cupy import reduction as rmod
    from hipfer.prims.plan import Backend, Handlers
    from hipfer.prims.descriptors import FAMILY_OF

    log = []
    monkeypatch.setattr(rmod, "get_kernels",
                        lambda file, exprs: tuple(EmulatedKernel(e, log) for e in exprs))
    monkeypatch.setattr(rmod, "cupy", SimpleNamespace(
        empty=lambda n, dt: np.empty(n, dt).view(_Workspace)))
    monkeypatch.setattr(rmod, "_address", lambda a: a.__array_interface__["data"][0])

    class Emulated(Backend):
        name = "emulated-cupy"
        wants_strides = True

        def __init__(self):
            super().__init__()
            fams = {}
            for t, h in rmod.HANDLERS.items():
                fams.setdefault(FAMILY_OF[t], {})[t] = h
            self.families = {f: Handlers(h) for f, h in fams.items()}

        def empty(self, shape, dtype):
            return np.empty(shape, dtype)

        def asarray(self, obj, dtype=None):
            return np.asarray(obj, dtype=dtype)

    return SimpleNamespace(backend=Emulated(), asarray=np.asarray, asnumpy=np.asarray, xp=np,
                           name="emulated", log=log)


@pytest.fixture
def ref():
    from hipfer.backends.numpy import NumpyBackend
    return SimpleNamespace(backend=NumpyBackend(), asarray=np.asarray, asnumpy=np.asarray,
                           xp=np, name="numpy")


def _agree(got, want, atol=None):
    """Equal (integers) or close (floats; atol: the sums' scale, for sums that cancel)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind in "fc":
        low = got.dtype.itemsize <= 8
        np.testing.assert_allclose(got, want, rtol=2e-5 if low else 1e-12,
                                   atol=max(1e-5 if low else 1e-12, atol or 0), equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


MODES = ("i", "j", "k")
MODE_CASES = [(), ("j",), ("k", "i"), ("j", "k", "i"), ("i", "j")]


def _views(rng, shape, dt):
    x = random_array(rng, shape, dt)
    big = random_array(rng, tuple(2 * n for n in shape), dt)
    t = random_array(rng, shape[::-1], dt)
    return [x, big[::2, ::-2], t.T, np.broadcast_to(x[:, :1], shape)]


# the emulator models the plain reducers; the NaN-skipping ones (kr.NAN_OPS) run on the
# GPU against NumPy in tests/test_numpy_statistics.py
_OP_CASES = ([(d.ScalarReduce, op, dt) for op, kinds in kr.SCALAR_KINDS.items()
              if op not in kr.NAN_OPS for dt in ("?", "i1", "u2", "i8", "f4", "f8", "c8", "c16") if np.dtype(dt).kind in kinds]
             + [(d.MetadataReduce, op, dt) for op in (ReduceOp.ALL, ReduceOp.ANY, ReduceOp.SUM)
                for dt in ("?", "i4", "u8")]
             + [(d.AnalyticReduce, op, dt) for op in (ReduceOp.VAR, ReduceOp.STD)
                for dt in ("f4", "c16")])


@pytest.mark.parametrize("fam,op,dt", _OP_CASES,
                         ids=[f"{f.__name__}-{o.name}-{t}" for f, o, t in _OP_CASES])
def test_emulated_reductions_match_numpy_backend(emu, ref, fam, op, dt):
    rng = np.random.default_rng(3)
    dt = np.dtype(dt)
    for modes_c in MODE_CASES:
        desc = fam(op, MODES, modes_c, 1.0) if fam is d.AnalyticReduce else fam(op, MODES, modes_c)
        for x in _views(rng, (3, 4, 5), dt):
            for conj in ((False,), (True,)) if dt.kind == "c" else ((False,),):
                _agree(run_prim(emu, desc, [x], conj), run_prim(ref, desc, [x], conj))


@pytest.mark.parametrize("dt", ["f4", "c16", "i2"])
def test_emulated_run_fresh_matches_the_checked_run(emu, dt):
    """run_fresh -- the runner's path for an out it just allocated -- launches what the
    checked run does (same kernels, same result), for aligned and misaligned operands,
    views, and split reductions (which it hands to the checked run)."""
    rng = np.random.default_rng(11)
    dt = np.dtype(dt)
    cases = [((3, 4, 5), ("j",)), ((3, 4, 5), ()), ((6, 40), ("i",)), ((3, 20000), ("i",))]
    for shape, modes_c in cases:
        modes = MODES[:len(shape)]
        x = random_array(rng, shape, dt)
        buf = random_array(rng, (x.size + 1,), dt)
        shifted = buf[1:].reshape(shape)  # one element past an aligned start
        for a in (x, shifted, x[..., ::-1]):
            desc = d.ScalarReduce(ReduceOp.SUM, modes, modes_c)
            p = emu.backend.plan(desc, (a.dtype,), (a.shape,), strides=(a.strides,))
            (oshape, odt), = p.outs
            want, got = np.empty(oshape, odt), np.empty(oshape, odt)
            emu.log.clear()
            p.run([a], want)
            checked = list(emu.log)
            emu.log.clear()
            p.run.run_fresh([a], got)
            assert emu.log == checked
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("pre", kr.COMPLEX_PRE)
@pytest.mark.parametrize("op", kr.COMPLEX_REDUCE)
def test_emulated_complex_real(emu, ref, pre, op):
    rng = np.random.default_rng(5)
    for x in _views(rng, (3, 4, 5), np.dtype(np.complex64))[:3]:
        for conj in (False, True):
            desc = d.ComplexRealReduce(pre, op, MODES, ("k",))
            _agree(run_prim(emu, desc, [x], (conj,)), run_prim(ref, desc, [x], (conj,)))


@pytest.mark.parametrize("shape,modes_c", [((3, 20000), ("i",)), ((5000, 40), ("j",)),
                                           ((300, 1000), ()), ((70, 90, 3), ("k",))])
def test_emulated_split_reductions(emu, ref, shape, modes_c):
    """Large K takes the split path (partials, then the finish kernel)."""
    rng = np.random.default_rng(9)
    modes = MODES[:len(shape)]
    g = kr.plan_reduce(modes, modes_c, shape, kr.c_strides(shape))
    assert g.n_split > 1
    x = random_array(rng, shape, np.float64)
    for desc in (d.ScalarReduce(ReduceOp.SUM, modes, modes_c),
                 d.AnalyticReduce(ReduceOp.STD, modes, modes_c, 1.0),
                 d.ScalarReduce(ReduceOp.MAX, modes, modes_c)):
        emu.log.clear()
        _agree(run_prim(emu, desc, [x]), run_prim(ref, desc, [x]))
        assert emu.log[-1].startswith("hf::red_finish<")
    xi = random_array(rng, shape, np.int16)
    desc = d.MetadataReduce(ReduceOp.SUM, modes, modes_c)
    _agree(run_prim(emu, desc, [xi]), run_prim(ref, desc, [xi]))


@pytest.mark.parametrize("dt", ["f4", "f8", "c8", "i1", "i2"])
def test_emulated_vec_paths(emu, ref, dt):
    """red_vec with 2-32 lanes per row and a block per row / per split, aligned and offset
    (unaligned) operands, K not a multiple of the pack: the launch checks the alignment
    claim and the fold order covers every element once."""
    rng = np.random.default_rng(19)
    dt = np.dtype(dt)
    for shape, modes_c, lanes in [((300, 1024), ("i",), 32), ((300, 997), ("i",), 16),
                                  ((300, 100), ("i",), 2), ((3, 20000), ("i",), 256),
                                  ((1, 70001), (), 256)]:
        modes = MODES[:len(shape)]
        flat = random_array(rng, (int(np.prod(shape)) + 1,), dt)
        for x in (flat[:-1].reshape(shape), flat[1:].reshape(shape)):  # aligned, offset
            for op in (ReduceOp.SUM, ReduceOp.MAX):
                if op is ReduceOp.MAX and dt.kind == "c":
                    continue
                desc = d.ScalarReduce(op, modes, modes_c)
                emu.log.clear()
                # float32 sums in another order: rounding of the row's magnitude
                scale = float(np.abs(x).sum(axis=-1).max()) * np.finfo(dt).eps * 4 \
                    if dt.kind in "fc" else None
                _agree(run_prim(emu, desc, [x]), run_prim(ref, desc, [x]), scale)
                assert emu.log[0].startswith("hf::red_vec<")
        assert kr.plan_reduce(modes, modes_c, shape, kr.c_strides(shape)).lanes == lanes


@pytest.mark.parametrize("dt", ["?", "i2", "u4", "f4", "c16"])
def test_emulated_scaled_families(emu, ref, dt):
    rng = np.random.default_rng(13)
    dt = np.dtype(dt)
    x = random_array(rng, (4, 3, 4), dt, low=-5 if dt.kind == "i" else None,
                     high=5 if dt.kind in "iu" else None)
    cases = [(d.ReduceAdd(MODES, ("k", "i")), x), (d.Trace(("i", "j", "i"), ("j",)), x),
             (d.Trace(("i", "j", "i"), ()), x), (d.Trace(("i", "j", "i"), ("i", "j")), x),
             (d.AntiDiag(("i", "j"), ("j", "i", "j")), x[:, :, 0]),
             (d.AntiTrace(("j",), ("i", "j", "i", "k")), x[0, :, 0]),
             (d.AntiTrace((), ("i", "i")), x[0, 0, 0])]
    for desc, a in cases:
        out_shape = {"i": 4, "j": 3, "k": 2} if isinstance(desc, d.AntiTrace) else None
        shp = tuple(out_shape[m] for m in desc.modes_c) if out_shape else None
        conj = (dt.kind == "c",)
        want = run_prim(ref, desc, [a], conj, out_shape=shp)
        out = nan_filled(emu, want.shape, want.dtype)  # beta == 0 never reads out
        _agree(run_prim(emu, desc, [a], conj, out=out, out_shape=shp), want)
        if dt.kind == "b":
            continue
        alpha, beta = (2, 3) if dt.kind in "iu" else (1.5, -0.5)
        c0 = random_array(rng, want.shape, want.dtype, low=0, high=3)
        so_e = StridedOut(emu, want.shape, want.dtype)
        so_r = StridedOut(ref, want.shape, want.dtype)
        so_e.view[...] = c0
        so_r.view[...] = c0
        run_prim(emu, desc, [a], conj, out=so_e.view, out_shape=shp, alpha=alpha, beta=beta)
        run_prim(ref, desc, [a], conj, out=so_r.view, out_shape=shp, alpha=alpha, beta=beta)
        _agree(so_e.view, so_r.view)
        so_e.check_gaps()


def test_emulated_strided_out_and_empty(emu, ref):
    rng = np.random.default_rng(17)
    x = random_array(rng, (6, 5, 4), np.float32)
    desc = d.ScalarReduce(ReduceOp.SUM, MODES, ("k", "i"))
    for kind in ("step", "transposed"):
        so = StridedOut(emu, (4, 6), np.float32, kind)
        run_prim(emu, desc, [x], out=so.view)
        _agree(so.view, run_prim(ref, desc, [x]))
        so.check_gaps()
    emu.log.clear()
    run_prim(emu, d.ScalarReduce(ReduceOp.SUM, ("i", "j"), ("i",)), [np.zeros((0, 3), np.float32)])
    run_prim(emu, d.AntiDiag(("i",), ("i", "i")), [np.zeros(0, np.float32)])
    assert emu.log == []  # size-0 outputs launch nothing
    got = run_prim(emu, d.ScalarReduce(ReduceOp.MEAN, ("i", "j"), ("j",)), [np.zeros((0, 3), np.float32)])
    assert np.isnan(got).all()


def test_emulated_run_checks_its_operands(emu):
    x = np.zeros((4, 6), np.float32)
    plan = emu.backend.plan(d.ScalarReduce(ReduceOp.SUM, ("i", "j"), ("i",)), (x.dtype,),
                            (x.shape,), strides=(x.strides,))
    out = np.empty(4, np.float32)
    with pytest.raises(ValueError, match="strides"):
        emu.backend.execute(plan, [np.zeros((6, 4), np.float32).T], out)
    with pytest.raises(ValueError, match="out must have shape"):
        emu.backend.execute(plan, [x], np.empty(5, np.float32))
    with pytest.raises(TypeError):
        emu.backend.execute(plan, [x], out, alpha=2)  # only the scaled families take alpha


# ------------------------------------- large reductions on the real backends
_LARGE = [((1 << 20,), ()), ((20000, 50), ("j",)), ((3, 40000), ("i",)), ((64, 64, 64), ("j",))]


@pytest.mark.parametrize("shape,modes_c", _LARGE, ids=[str(s) for s, _ in _LARGE])
def test_large_reductions(be, shape, modes_c):
    """Shapes whose GPU plan splits K (or, for the last, walks 2-d reduced rows); on the
    GPU this runs the split and finish kernels. Results repeat bit-for-bit."""
    rng = np.random.default_rng(21)
    modes = MODES[:len(shape)]
    axes = tuple(i for i, m in enumerate(modes) if m not in modes_c)
    assert kr.plan_reduce(modes, modes_c, shape, kr.c_strides(shape)).n_split > 1 or len(axes) > 1
    xn = random_array(rng, shape, np.float32)
    if len(shape) == 1:
        xn[12345] = np.nan  # MAX and STD propagate it through the split
    x = be.asarray(xn)
    wide = xn.astype(np.float64)
    got = run_prim(be, d.ScalarReduce(ReduceOp.SUM, modes, modes_c), [x])
    assert_accumulated(got, np.sum(wide, axis=axes), np.sum(np.abs(wide), axis=axes), np.float32)
    again = run_prim(be, d.ScalarReduce(ReduceOp.SUM, modes, modes_c), [x])
    np.testing.assert_array_equal(got, again)
    got = run_prim(be, d.ScalarReduce(ReduceOp.MAX, modes, modes_c), [x])
    np.testing.assert_array_equal(got, np.max(xn, axis=axes))
    got = run_prim(be, d.AnalyticReduce(ReduceOp.STD, modes, modes_c, 1.0), [x])
    np.testing.assert_allclose(got, np.std(wide, axis=axes, ddof=1), rtol=1e-4)
    ints = random_array(rng, shape, np.int64)
    got = run_prim(be, d.MetadataReduce(ReduceOp.SUM, modes, modes_c), [be.asarray(ints)])
    np.testing.assert_array_equal(got, np.sum(ints, axis=axes))  # wraps identically
