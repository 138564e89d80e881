"""The case table of ``hipfer bench``: the device's limits and every case, with its peers.

A case is named before its inputs exist (so ``--only`` costs nothing); ``Spec.build()``
then makes random inputs on the host (never zeros), moves them to the device once, and
gives every library the same memory: hipfer's Tensor, the NumPy array (CPU), the CuPy
array and a DLPack view of it for torch (GPU). Views (a transpose, a step slice, a
broadcast, a conjugate) are taken once outside the timed call.

The limits: on the CPU, memcpy bandwidth (numpy.copyto of a large array) and numpy.matmul
rates; on the GPU, device-to-device copy bandwidth and cuBLAS/hipBLAS GEMM rates (through
cupy.matmul), each per dtype (float32, float64, complex64) on large square matrices.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["GROUPS", "GEMM_DTYPES", "NO_TEMPS", "Context", "Case", "Spec", "Target", "make_context",
           "measure_limits", "specs", "to_numpy"]

#: every case group, in report order
GROUPS = ("elementwise_unary", "elementwise_binary", "reduction", "where", "take", "sort",
          "matmul", "einsum", "fused", "overhead", "numpy_api", "fuse")
GEMM_DTYPES = ("float32", "float64", "complex64")


# ------------------------------------------------------------------------ targets
@dataclass(frozen=True)
class Target:
    """A goal of issue 7: metric op threshold. metric: "of_limit", "vs:<peer>" (hipfer
    time / peer time), "vs:baseline" (hipfer time / the case's baseline time) or
    "of_baseline" (baseline time / hipfer time: the fraction of the baseline's speed)."""
    label: str
    metric: str
    op: str          # ">=" or "<="
    threshold: float

    def check(self, value) -> bool | None:
        if value is None:
            return None
        return value >= self.threshold if self.op == ">=" else value <= self.threshold


ELEM_CONTIG = Target("elementwise >=0.85 copy", "of_limit", ">=", 0.85)
ELEM_STRIDED = Target("strided/broadcast >=0.6 copy", "of_limit", ">=", 0.6)
REDUCTION = Target("reduction >=0.85 read", "of_limit", ">=", 0.85)
GEMM = Target("GEMM >=0.95 bare BLAS", "of_baseline", ">=", 0.95)
CONJ = Target("conj(a)@b <=1.05 a@b", "vs:baseline", "<=", 1.05)
OVERHEAD = Target("overhead <= cupy", "vs:cupy", "<=", 1.0)
CPU_NUMPY = Target("cpu <=1.2x numpy", "vs:numpy", "<=", 1.2)
#: a fused op holds nothing but its outputs: the bytes it allocates beyond them (the pool's
#: rounding, a few host objects on the CPU) stay under 64 KiB
NO_TEMPS = Target("fused: no temporaries", "temp_bytes", "<=", 65536)


# ------------------------------------------------------------------------ context
@dataclass
class Context:
    """What the cases need: the device, the libraries, the peers, the sizes."""
    device: str                  # "cpu" or "gpu"
    quick: bool
    hf: object
    nn: object
    cupy: object = None
    torch: object = None
    peers: tuple = ()
    sizes: dict = field(default_factory=dict)
    seed: int = 0

    @property
    def hf_device(self) -> str:
        return "cpu" if self.device == "cpu" else "gpu:0"

    def rng(self, salt: int = 0):
        return np.random.default_rng(self.seed + salt)

    def to_device(self, a):
        """A host array on the benchmark's device (numpy stays as it is)."""
        if self.device == "gpu" and isinstance(a, np.ndarray):
            return self.cupy.asarray(a)
        return a

    def module(self, lib: str):
        return {"hipfer": self.hf, "numpy": np, "cupy": self.cupy, "torch": self.torch}[lib]

    def wrap(self, lib: str, a):
        """lib's array for the device array a (the same memory), or a itself (not an array)."""
        is_arr = isinstance(a, np.ndarray) or (self.cupy is not None and isinstance(a, self.cupy.ndarray))
        if not is_arr:
            return a
        if lib == "hipfer":
            return self.hf.asarray(a, device=self.hf_device)
        if lib == "torch":
            return self.torch.from_dlpack(a)
        return a


def make_context(device: str, quick: bool) -> Context:
    """The context for device "cpu" or "gpu"; a clear error when the GPU is not usable."""
    import hipfer as hf
    import hipfer.nn as nn
    if device == "gpu":
        from hipfer.prims.registry import gpu_status
        st = gpu_status()
        if not st.usable:
            raise RuntimeError(f"--device gpu: no GPU is usable ({st.reason}); "
                               "use --device cpu, or see `hipfer info`")
        import cupy
        try:
            import torch
            if not torch.cuda.is_available():
                torch = None
        except Exception:  # torch missing or broken: not a peer
            torch = None
        peers = ("cupy",) + (("torch",) if torch is not None else ())
        return Context("gpu", quick, hf, nn, cupy=cupy, torch=torch, peers=peers,
                       sizes=_sizes("gpu", quick))
    return Context("cpu", quick, hf, nn, peers=("numpy",), sizes=_sizes("cpu", quick))


def _sizes(device: str, quick: bool) -> dict:
    if device == "gpu":
        return dict(n=1 << (24 if quick else 26), copy_bytes=1 << (28 if quick else 30),
                    gemm=2048 if quick else 8192, sort=1 << (22 if quick else 24),
                    attn=(2, 4, 256, 64) if quick else (8, 16, 1024, 64),
                    mps=(8, 32) if quick else (16, 256), lattice=(3, 3, 4) if quick else (4, 4, 12))
    return dict(n=1 << (22 if quick else 24), copy_bytes=1 << (26 if quick else 29),
                gemm=512 if quick else 2048, sort=1 << (18 if quick else 22),
                attn=(2, 4, 128, 64) if quick else (4, 8, 512, 64),
                mps=(8, 32) if quick else (16, 64), lattice=(3, 3, 4) if quick else (4, 4, 8))


# ------------------------------------------------------------------------ limits
def gemm_flops(n_or_mkn, dtype) -> float:
    m, k, n = (n_or_mkn,) * 3 if isinstance(n_or_mkn, int) else n_or_mkn
    return (8 if np.dtype(dtype).kind == "c" else 2) * float(m) * k * n


def measure_limits(ctx: Context, time_ms) -> dict:
    """The device's copy bandwidth (GB/s, read + written) and GEMM rate per dtype (TFLOP/s)."""
    from .timing import copy_bandwidth
    xp = ctx.cupy if ctx.device == "gpu" else np
    out = {"copy_bytes": ctx.sizes["copy_bytes"], "gemm_n": ctx.sizes["gemm"], "gemm_tflops": {}}
    out["copy_gbps"] = copy_bandwidth(xp, time_ms, ctx.sizes["copy_bytes"]) / 1e6
    n = ctx.sizes["gemm"]
    for i, dt in enumerate(GEMM_DTYPES):
        a, b = (ctx.to_device(_rand(ctx.rng(100 + 2 * i + j), (n, n), dt)) for j in range(2))
        t = time_ms(lambda a=a, b=b: xp.matmul(a, b))
        out["gemm_tflops"][dt] = gemm_flops(n, dt) / t / 1e9
    return out


# ------------------------------------------------------------------------ cases
@dataclass
class Case:
    """A built case: fns["hipfer"] and fns[peer] take no argument."""
    fns: dict
    dtype: str
    shape: tuple
    bytes: int | None = None      # bytes the op must move (each operand read once, out written once)
    flops: float | None = None
    targets: tuple = ()
    baseline: tuple | None = None  # (label, fn) timed with the case: bare GEMM, or hipfer a @ b
    check: bool = True             # compare hipfer's result with the first peer's
    note: str = ""


@dataclass
class Spec:
    group: str
    name: str
    build: Callable[[], Case]

    def matches(self, only: str) -> bool:
        s = only.lower()
        return not s or s in self.group.lower() or s in self.name.lower()


def _rand(rng, shape, dtype, positive=False):
    dt = np.dtype(dtype)
    if dt.kind == "c":
        re = rng.standard_normal(shape, dtype=np.float32 if dt.itemsize == 8 else np.float64)
        im = rng.standard_normal(shape, dtype=re.dtype)
        return (re + 1j * im).astype(dt)
    if positive:
        return (rng.random(shape, dtype=np.float64) + 0.5).astype(dt)
    if dt.kind == "f" and dt.itemsize >= 4:
        return rng.standard_normal(shape, dtype=dt)
    return rng.standard_normal(shape).astype(dt)


def bind(ctx: Context, arrays, op, *, torch_op=None, hf_op=None, view=None, libs=None) -> dict:
    """{lib: fn} for hipfer and each peer: fn() = op(module, *view(module, *args)), args
    being the library's arrays over the same device memory. torch_op=False: no torch."""
    devs = [ctx.to_device(a) for a in arrays]
    fns = {}
    for lib in libs or (("hipfer",) + tuple(ctx.peers)):
        if lib == "torch" and torch_op is False:
            continue
        m = ctx.module(lib)
        args = [ctx.wrap(lib, a) for a in devs]
        if view is not None:
            args = list(view(m, *args))
        f = hf_op if (lib == "hipfer" and hf_op is not None) else (
            torch_op if (lib == "torch" and torch_op is not None) else op)
        fns[lib] = (lambda f=f, m=m, args=args: f(m, *args))
    return fns


def bare_gemm(ctx: Context, a, b, label: str = "bare GEMM"):
    """(label, fn): xp.matmul on the device arrays a and b (BLAS through numpy on the CPU,
    cuBLAS / hipBLAS through cupy on the GPU), the GEMM the targets compare with."""
    xp = ctx.cupy if ctx.device == "gpu" else np
    return (label, lambda: xp.matmul(a, b))


def _shape_str(shape) -> str:
    return "x".join(str(s) for s in shape)


def _unary(ctx):
    n = ctx.sizes["n"]
    r = 1 << (n.bit_length() // 2)
    c = n // r

    def exp_contig(dt, count):
        def build():
            x = _rand(ctx.rng(1), (count,), dt)
            return Case(bind(ctx, [x], lambda m, x: m.exp(x)), dt, (count,), 2 * x.nbytes,
                        targets=(ELEM_CONTIG,))
        return Spec("elementwise_unary", f"exp contiguous {dt} {count}", build)

    def abs_c64():
        def build():
            x = _rand(ctx.rng(2), (n // 2,), "complex64")
            return Case(bind(ctx, [x], lambda m, x: m.abs(x)), "complex64", (n // 2,),
                        x.nbytes + x.nbytes // 2, targets=(ELEM_CONTIG,), note="complex -> real")
        return Spec("elementwise_unary", f"abs contiguous complex64 {n // 2}", build)

    def exp_transposed():
        def build():
            x = _rand(ctx.rng(3), (r, c), "float32")
            return Case(bind(ctx, [x], lambda m, x: m.exp(x), view=lambda m, x: (x.T,)),
                        "float32", (c, r), 2 * x.nbytes, targets=(ELEM_STRIDED,),
                        note="input is x.T")
        return Spec("elementwise_unary", f"exp transposed float32 {c}x{r}", build)

    def exp_step():
        def build():
            x = _rand(ctx.rng(4), (r, 2 * c), "float32")
            return Case(bind(ctx, [x], lambda m, x: m.exp(x), view=lambda m, x: (x[:, ::2],)),
                        "float32", (r, c), x.nbytes, targets=(ELEM_STRIDED,),
                        note="input is x[:, ::2]")
        return Spec("elementwise_unary", f"exp step-2 slice float32 {r}x{c}", build)

    return [exp_contig("float32", n), exp_contig("float64", n // 2), abs_c64(),
            exp_transposed(), exp_step()]


def _binary(ctx):
    n = ctx.sizes["n"]
    r = 1 << (n.bit_length() // 2)
    c = n // r
    g = "elementwise_binary"
    out = []

    def spec(name, build):
        out.append(Spec(g, name, build))

    def contig(opname, f, dt, count, salt):
        def build():
            a, b = _rand(ctx.rng(salt), (count,), dt), _rand(ctx.rng(salt + 1), (count,), dt)
            return Case(bind(ctx, [a, b], f), dt, (count,), 3 * a.nbytes, targets=(ELEM_CONTIG,))
        spec(f"{opname} contiguous {dt} {count}", build)

    contig("add", lambda m, a, b: a + b, "float32", n, 10)
    contig("multiply", lambda m, a, b: a * b, "float64", n // 2, 12)

    def conj_mul():
        a, b = _rand(ctx.rng(14), (n // 2,), "complex64"), _rand(ctx.rng(15), (n // 2,), "complex64")
        return Case(bind(ctx, [a, b], lambda m, a, b: a * b, view=lambda m, a, b: (m.conj(a), b)),
                    "complex64", (n // 2,), 3 * a.nbytes, targets=(ELEM_CONTIG,),
                    note="conj(a) taken outside the call (hipfer, torch: a flag; numpy/cupy: a copy)")
    spec(f"multiply conj(a)*b complex64 {n // 2}", conj_mul)

    def transposed():
        a, b = _rand(ctx.rng(16), (r, c), "float32"), _rand(ctx.rng(17), (c, r), "float32")
        return Case(bind(ctx, [a, b], lambda m, a, b: a + b, view=lambda m, a, b: (a.T, b)),
                    "float32", (c, r), 3 * a.nbytes, targets=(ELEM_STRIDED,), note="a.T + b")
    spec(f"add transposed float32 {c}x{r}", transposed)

    def row():
        a, v = _rand(ctx.rng(18), (r, c), "float32"), _rand(ctx.rng(19), (c,), "float32")
        return Case(bind(ctx, [a, v], lambda m, a, v: a + v, view=lambda m, a, v: (a, v[None, :])),
                    "float32", (r, c), 2 * a.nbytes + v.nbytes, targets=(ELEM_STRIDED,),
                    note="a + v[None, :]")
    spec(f"add broadcast row float32 {r}x{c}", row)

    def col():
        a, u = _rand(ctx.rng(20), (r, c), "float32"), _rand(ctx.rng(21), (r,), "float32")
        return Case(bind(ctx, [a, u], lambda m, a, u: a + u, view=lambda m, a, u: (a, u[:, None])),
                    "float32", (r, c), 2 * a.nbytes + u.nbytes, targets=(ELEM_STRIDED,),
                    note="a + u[:, None]")
    spec(f"add broadcast column float32 {r}x{c}", col)

    def outer():
        u, v = _rand(ctx.rng(22), (r,), "float32"), _rand(ctx.rng(23), (c,), "float32")
        return Case(bind(ctx, [u, v], lambda m, u, v: u * v,
                         view=lambda m, u, v: (u[:, None], v[None, :])),
                    "float32", (r, c), 4 * r * c + u.nbytes + v.nbytes, targets=(ELEM_STRIDED,),
                    note="u[:, None] * v[None, :] (writes only)")
    spec(f"multiply outer broadcast float32 {r}x{c}", outer)
    return out


def _reduction(ctx):
    n = ctx.sizes["n"]
    r = 1 << (n.bit_length() // 2)
    c = n // r
    g = "reduction"

    def torch_op(fname, axis):
        f = "sum" if fname == "sum" else "amax"  # torch.max(x, dim) also returns indices
        if axis is None:
            return lambda t, x: getattr(t, f)(x)
        return lambda t, x: getattr(t, f)(x, dim=axis)

    def red(fname, dt, shape, axis, targets, salt):
        label = "full" if axis is None else f"axis={axis}".replace(" ", "")

        def build():
            x = _rand(ctx.rng(salt), shape, dt)
            kept = [] if axis is None else [i for i in range(len(shape))
                                            if i not in np.atleast_1d(axis) % len(shape)]
            out_elems = int(np.prod([shape[i] for i in kept]))
            return Case(bind(ctx, [x], lambda m, x: getattr(m, fname)(x, axis=axis),
                             torch_op=torch_op(fname, axis)),
                        dt, shape, x.nbytes + out_elems * x.itemsize, targets=targets)
        return Spec(g, f"{fname} {label} {dt} {_shape_str(shape)}", build)

    return [red("sum", "float32", (n,), None, (REDUCTION,), 30),
            red("sum", "float64", (n // 2,), None, (REDUCTION,), 31),
            red("sum", "float32", (r, c), -1, (REDUCTION,), 32),
            red("max", "float32", (r, c), -1, (REDUCTION,), 33),
            red("sum", "float32", (r, c), 0, (), 34),
            red("sum", "float32", (n // 64, 64), -1, (REDUCTION,), 35),        # short rows
            red("sum", "float32", (max(1, n // 200704), 64, 56, 56), (0, 2, 3), (), 36)]  # bias grad


def _where(ctx):
    n = ctx.sizes["n"]

    def three():
        rng = ctx.rng(40)
        cond = rng.random(n) < 0.5
        a, b = _rand(rng, (n,), "float32"), _rand(rng, (n,), "float32")
        return Case(bind(ctx, [cond, a, b], lambda m, c, a, b: m.where(c, a, b)), "float32", (n,),
                    n + 3 * a.nbytes, targets=(ELEM_CONTIG,))

    def scalar():
        rng = ctx.rng(41)
        cond = rng.random(n) < 0.5
        a = _rand(rng, (n,), "float32")
        return Case(bind(ctx, [cond, a], lambda m, c, a: m.where(c, a, 0.0)), "float32", (n,),
                    n + 2 * a.nbytes, targets=(ELEM_CONTIG,), note="where(c, x, 0.0)")
    return [Spec("where", f"where(c, x, y) float32 {n}", three),
            Spec("where", f"where(c, x, scalar) float32 {n}", scalar)]


def _take(ctx):
    n = ctx.sizes["n"]
    d = 256
    rows = n // d

    def take_rows():
        rng = ctx.rng(50)
        x, idx = _rand(rng, (rows, d), "float32"), rng.integers(0, rows, rows)
        return Case(bind(ctx, [x, idx], lambda m, x, i: m.take(x, i, axis=0),
                         torch_op=lambda t, x, i: t.index_select(x, 0, i)),
                    "float32", (rows, d), 2 * x.nbytes + idx.nbytes,
                    note="random rows; torch: index_select")

    def take_flat():
        rng = ctx.rng(51)
        x, idx = _rand(rng, (n,), "float32"), rng.integers(0, n, n)
        return Case(bind(ctx, [x, idx], lambda m, x, i: m.take(x, i),
                         torch_op=lambda t, x, i: t.take(x, i)),
                    "float32", (n,), 2 * x.nbytes + idx.nbytes, note="random elements")
    return [Spec("take", f"take rows axis=0 float32 {rows}x{d}", take_rows),
            Spec("take", f"take 1-d float32 {n}", take_flat)]


def _sort(ctx):
    n = ctx.sizes["sort"]
    cols = 1024

    def sort(shape, salt):
        def build():
            x = _rand(ctx.rng(salt), shape, "float32")
            return Case(bind(ctx, [x], lambda m, x: m.sort(x, axis=-1, kind="stable") if m is np
                             else m.sort(x, axis=-1),  # cupy.sort is stable
                             hf_op=lambda m, x: m.sort(x, axis=-1, stable=True),
                             torch_op=lambda t, x: t.sort(x, dim=-1, stable=True)[0]),
                        "float32", shape, 2 * x.nbytes,
                        note="stable; torch.sort also makes indices")
        return Spec("sort", f"sort last axis float32 {_shape_str(shape)}", build)
    return [sort((n,), 60), sort((n // cols, cols), 61)]


def _matmul(ctx):
    n = ctx.sizes["gemm"]
    g = "matmul"
    out = []

    def square(dt, salt):
        def build():
            a, b = (ctx.to_device(_rand(ctx.rng(salt + j), (n, n), dt)) for j in range(2))
            return Case(bind(ctx, [a, b], lambda m, a, b: a @ b), dt, (n, n, n),
                        flops=gemm_flops(n, dt), targets=(GEMM,), baseline=bare_gemm(ctx, a, b))
        out.append(Spec(g, f"a @ b {dt} {n}^3", build))
    for i, dt in enumerate(GEMM_DTYPES):
        square(dt, 70 + 2 * i)

    def transposed():
        a, b = (ctx.to_device(_rand(ctx.rng(80 + j), (n, n), "float32")) for j in range(2))
        return Case(bind(ctx, [a, b], lambda m, a, b: a @ b, view=lambda m, a, b: (a.T, b)),
                    "float32", (n, n, n), flops=gemm_flops(n, "float32"), targets=(GEMM,),
                    baseline=bare_gemm(ctx, a.T, b), note="a.T @ b")
    out.append(Spec(g, f"a.T @ b float32 {n}^3", transposed))

    def conj():
        a, b = (ctx.to_device(_rand(ctx.rng(82 + j), (n, n), "complex64")) for j in range(2))
        fns = bind(ctx, [a, b], lambda m, a, b: a @ b, view=lambda m, a, b: (m.conj(a), b))
        A, B = ctx.wrap("hipfer", a), ctx.wrap("hipfer", b)
        hf = ctx.hf
        return Case(fns, "complex64", (n, n, n), flops=gemm_flops(n, "complex64"),
                    targets=(CONJ,), baseline=("hipfer a @ b", lambda: hf.matmul(A, B)),
                    note="conj(a) taken outside the call (hipfer, torch: a flag; numpy/cupy: a copy)")
    out.append(Spec(g, f"conj(a) @ b complex64 {n}^3", conj))

    def batched():
        bs, h = 8, n // 2
        a, b = (ctx.to_device(_rand(ctx.rng(84 + j), (bs, h, h), "float32")) for j in range(2))
        return Case(bind(ctx, [a, b], lambda m, a, b: a @ b), "float32", (bs, h, h, h),
                    flops=bs * gemm_flops(h, "float32"), targets=(GEMM,),
                    baseline=bare_gemm(ctx, a, b, "bare batched GEMM"))
    out.append(Spec(g, f"batched a @ b float32 8x{n // 2}^3", batched))
    return out


def _einsum_fn(m, *args):
    """einsum as each library spells it; numpy and cupy get optimize=True (their default
    contracts left to right)."""
    name = getattr(m, "__name__", "")
    if name in ("numpy", "cupy"):
        return m.einsum(*args, optimize=True)
    return m.einsum(*args)


def mps_network(rng, sites, bond, phys, dtype):
    """<psi|psi> of an open-boundary MPS: (arrays, labels, which operands are conjugated)."""
    arrays, labels, conj = [], [], []
    nxt = iter(range(52))
    lk, lb = next(nxt), next(nxt)
    for k in range(sites):
        dl = 1 if k == 0 else bond
        dr = 1 if k == sites - 1 else bond
        a = _rand(rng, (dl, phys, dr), dtype) / np.sqrt(bond)
        a = a.astype(dtype)
        s, rk, rb = next(nxt), next(nxt), next(nxt)
        arrays += [a, a]
        labels += [[lk, s, rk], [lb, s, rb]]
        conj += [False, True]
        lk, lb = rk, rb
    return arrays, labels, conj


def lattice_network(rng, rows, cols, bond, dtype):
    """Partition function of a rows x cols lattice: one tensor a site, one bond an edge."""
    edge = {}
    arrays, labels = [], []
    for r in range(rows):
        for c in range(cols):
            legs = []
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                rr, cc = r + dr, c + dc
                if 0 <= rr < rows and 0 <= cc < cols:
                    key = (min((r, c), (rr, cc)), max((r, c), (rr, cc)))
                    legs.append(edge.setdefault(key, len(edge)))
            arrays.append((np.abs(_rand(rng, (bond,) * len(legs), dtype)) / bond).astype(dtype))
            labels.append(legs)
    return arrays, labels, [False] * len(arrays)


def _network_case(ctx, arrays, labels, conj, dtype, shape, flops=None, note=""):
    def view(m, *xs):
        return [m.conj(x) if cj else x for x, cj in zip(xs, conj)]

    def op(m, *xs):
        args = []
        for x, lab in zip(xs, labels):
            args += [x, lab]
        return _einsum_fn(m, *args, [])
    return Case(bind(ctx, arrays, op, view=view), dtype, shape, flops=flops, note=note)


def _einsum(ctx):
    n = ctx.sizes["gemm"]
    g = "einsum"
    out = []

    def gemm_shaped(sub, dt, salt):
        def build():
            a, b = (ctx.to_device(_rand(ctx.rng(salt + j), (n, n), dt)) for j in range(2))
            return Case(bind(ctx, [a, b], lambda m, a, b: _einsum_fn(m, sub, a, b)), dt, (n, n, n),
                        flops=gemm_flops(n, dt), targets=(GEMM,),
                        baseline=bare_gemm(ctx, a.T if sub.startswith("ki") else a, b))
        out.append(Spec(g, f"{sub} {dt} {n}^3", build))
    gemm_shaped("ik,kj->ij", "float32", 90)
    gemm_shaped("ki,kj->ij", "float32", 92)
    gemm_shaped("ik,kj->ij", "complex64", 94)

    b, h, s, d = ctx.sizes["attn"]

    def attention():
        q, k = (ctx.to_device(_rand(ctx.rng(96 + j), (b, h, s, d), "float32")) for j in range(2))
        sub = "bhqd,bhkd->bhqk"
        return Case(bind(ctx, [q, k], lambda m, q, k: _einsum_fn(m, sub, q, k)), "float32",
                    (b, h, s, d), flops=2.0 * b * h * s * s * d, targets=(GEMM,),
                    baseline=bare_gemm(ctx, q, k.swapaxes(-1, -2), "bare batched GEMM q @ k^T"))
    out.append(Spec(g, f"attention bhqd,bhkd->bhqk float32 {b}x{h}x{s}x{d}", attention))

    sites, bond = ctx.sizes["mps"]
    for dt in ("complex64", "float64"):
        def mps(dt=dt):
            arrays, labels, conj = mps_network(ctx.rng(98), sites, bond, 2, dt)
            return _network_case(ctx, arrays, labels, conj, dt, (sites, bond),
                                 note="<psi, psi>, bra = conj(ket)")
        out.append(Spec(g, f"MPS norm {sites} sites D={bond} {dt}", mps))

    rr, cc, bd = ctx.sizes["lattice"]

    def lattice():
        arrays, labels, conj = lattice_network(ctx.rng(99), rr, cc, bd, "float64")
        return _network_case(ctx, arrays, labels, conj, "float64", (rr, cc, bd))
    out.append(Spec(g, f"lattice Z {rr}x{cc} D={bd} float64", lattice))
    return out


def _fused(ctx):
    n = ctx.sizes["n"]
    cols = 1024
    rows = n // cols
    g = "fused"
    nn = ctx.nn
    out = []

    def F():
        return ctx.torch.nn.functional

    def relu():
        x = _rand(ctx.rng(110), (n,), "float32")
        return Case(bind(ctx, [x], lambda m, x: m.maximum(x, 0.0), hf_op=lambda m, x: nn.relu(x),
                         torch_op=lambda t, x: t.relu(x)), "float32", (n,), 2 * x.nbytes,
                    note="peers: maximum(x, 0) / torch.relu")
    out.append(Spec(g, f"nn.relu float32 {n}", relu))

    def silu():
        x = _rand(ctx.rng(111), (n,), "float32")
        return Case(bind(ctx, [x], lambda m, x: x / (1.0 + m.exp(-x)), hf_op=lambda m, x: nn.silu(x),
                         torch_op=lambda t, x: F().silu(x)), "float32", (n,), 2 * x.nbytes,
                    note="peers: x / (1 + exp(-x)) / F.silu")
    out.append(Spec(g, f"nn.silu float32 {n}", silu))

    def softmax_ref(m, x):
        e = m.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def softmax():
        x = _rand(ctx.rng(112), (rows, cols), "float32")
        return Case(bind(ctx, [x], softmax_ref, hf_op=lambda m, x: nn.softmax_rows(x),
                         torch_op=lambda t, x: t.softmax(x, -1)), "float32", (rows, cols),
                    2 * x.nbytes, note="peers: exp(x - max) / sum / torch.softmax")
    out.append(Spec(g, f"nn.softmax_rows float32 {rows}x{cols}", softmax))

    def lse_ref(m, x):
        mx = x.max(axis=-1, keepdims=True)
        return (mx + m.log(m.exp(x - mx).sum(axis=-1, keepdims=True)))[..., 0]

    def logsumexp():
        x = _rand(ctx.rng(113), (rows, cols), "float32")
        return Case(bind(ctx, [x], lse_ref, hf_op=lambda m, x: nn.logsumexp_rows(x),
                         torch_op=lambda t, x: t.logsumexp(x, -1)), "float32", (rows, cols),
                    x.nbytes + 4 * rows, note="peers: max + log(sum(exp(x - max))) / torch.logsumexp")
    out.append(Spec(g, f"nn.logsumexp_rows float32 {rows}x{cols}", logsumexp))

    def layer_norm_ref(m, x, gm, bt):
        mu = x.mean(axis=-1, keepdims=True)
        xc = x - mu
        var = (xc * xc).mean(axis=-1, keepdims=True)
        return xc / m.sqrt(var + 1e-5) * gm + bt

    def layer_norm():
        rng = ctx.rng(114)
        x, gm, bt = _rand(rng, (rows, cols), "float32"), _rand(rng, (cols,), "float32"), _rand(rng, (cols,), "float32")
        return Case(bind(ctx, [x, gm, bt], layer_norm_ref,
                         hf_op=lambda m, x, gm, bt: nn.layer_norm(x, gm, bt, eps=1e-5),
                         torch_op=lambda t, x, gm, bt: F().layer_norm(x, (cols,), gm, bt, 1e-5)),
                    "float32", (rows, cols), 3 * x.nbytes,
                    note="hipfer also writes xhat (counted); peers: the formula / F.layer_norm")
    out.append(Spec(g, f"nn.layer_norm float32 {rows}x{cols}", layer_norm))

    def rms_ref(m, x, gm):
        return x / m.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * gm

    def rms_norm():
        rng = ctx.rng(115)
        x, gm = _rand(rng, (rows, cols), "float32"), _rand(rng, (cols,), "float32")
        has = ctx.torch is not None and hasattr(F(), "rms_norm")
        return Case(bind(ctx, [x, gm], rms_ref, hf_op=lambda m, x, gm: nn.rms_norm(x, gm, eps=1e-6),
                         torch_op=(lambda t, x, gm: F().rms_norm(x, (cols,), gm, 1e-6)) if has else False),
                    "float32", (rows, cols), 2 * x.nbytes,
                    note="peers: the formula / F.rms_norm")
    out.append(Spec(g, f"nn.rms_norm float32 {rows}x{cols}", rms_norm))
    if ctx.device != "gpu":  # the target is about device memory; NumPy references use temporaries
        return out
    return [Spec(s.group, s.name, _with_targets(s.build, NO_TEMPS)) for s in out]


def _with_targets(build, *targets):
    def built():
        case = build()
        case.targets = tuple(case.targets) + targets
        return case
    return built


def _overhead(ctx):
    g = "overhead"
    targets = (OVERHEAD,) if "cupy" in ctx.peers else ()

    def tiny(name, op, nargs, torch_op=None):
        def build():
            xs = [_rand(ctx.rng(120 + i), (10,), "float32") for i in range(nargs)]
            return Case(bind(ctx, xs, op, torch_op=torch_op), "float32", (10,), targets=targets,
                        note="warm host time per call")
        return Spec(g, f"{name} 10 float32", build)
    return [tiny("x + y", lambda m, x, y: x + y, 2),
            tiny("x * 2.0", lambda m, x: x * 2.0, 1),
            tiny("exp(x)", lambda m, x: m.exp(x), 1),
            tiny("sum(x)", lambda m, x: m.sum(x), 1)]


def _numpy_api(ctx):
    """NumPy's functions beyond the standard (issue 21): the warm per-call time on 1000
    elements against NumPy's (CPU) or CuPy's (GPU) same call, and the memory-bound ones at
    full size against the read floor (their input read once, or `reads` times: the radix
    select's four key passes and the NaN check of median and percentile)."""
    g = "numpy_api"
    n = ctx.sizes["n"]

    def case(name, op, make, *, size_note="1000", full=False, salt=0, reads=1):
        def build():
            rng = ctx.rng(200 + salt)
            xs = make(rng, n if full else 1000)
            nbytes = reads * sum(x.nbytes for x in xs if isinstance(x, np.ndarray)) \
                if full else None
            note = "input read once" if reads == 1 else f"input read {reads} times"
            return Case(bind(ctx, xs, op, torch_op=False), "float32", xs[0].shape,
                        nbytes, targets=(REDUCTION,) if full else (),
                        note=note if full else "warm per-call time")
        return Spec(g, f"{name} {'float32 ' + _shape_str((n,)) if full else size_note}", build)

    def f32(rng, m):
        return [_rand(rng, (m,), "float32")]

    def f32_nan(rng, m):
        x = _rand(rng, (m,), "float32")
        x[::17] = np.nan
        return [x]

    def ints(rng, m):
        return [rng.integers(0, 256, size=m).astype(np.int32)]

    def two(rng, m):
        return [_rand(rng, (m,), "float32"), _rand(rng, (m,), "float32")]

    return [
        case("median", lambda m, x: m.median(x), f32, salt=1),
        case("percentile 90", lambda m, x: m.percentile(x, 90.0), f32, salt=2),
        case("nansum", lambda m, x: m.nansum(x), f32_nan, salt=3),
        case("nanmax", lambda m, x: m.nanmax(x), f32_nan, salt=4),
        case("histogram 64 bins", lambda m, x: m.histogram(x, bins=64, range=(-4.0, 4.0))[0],
             f32, salt=5),
        case("bincount", lambda m, x: m.bincount(x, minlength=256), ints, salt=6),
        case("unique", lambda m, x: m.unique(x), ints, salt=7),
        case("partition", lambda m, x: m.partition(x, 500)[500], f32, salt=8),
        case("pad 3", lambda m, x: m.pad(x, 3, mode="reflect"), f32, salt=9),
        case("isclose", lambda m, x, y: m.isclose(x, y), two, salt=10),
        case("interp", lambda m, x, y: m.interp(x, m.sort(y), y), two, salt=11),
        case("polyval deg 5", lambda m, x: m.polyval(x[:6], x), f32, salt=12),
        case("nansum", lambda m, x: m.nansum(x), f32_nan, full=True, salt=13),
        case("nanmax", lambda m, x: m.nanmax(x), f32_nan, full=True, salt=14),
        case("histogram 256 bins", lambda m, x: m.histogram(x, bins=256, range=(-4.0, 4.0))[0],
             f32, full=True, salt=15),
        case("bincount 256", lambda m, x: m.bincount(x, minlength=256), ints, full=True,
             salt=16),
        case("median", lambda m, x: m.median(x), f32, full=True, salt=17, reads=5),
        case("percentile 90", lambda m, x: m.percentile(x, 90.0), f32, full=True, salt=18,
             reads=5),
        case("partition n/2", lambda m, x: m.partition(x, x.shape[0] // 2)[x.shape[0] // 2],
             f32, full=True, salt=19, reads=5),
    ]


def _damped(m, a, b, c, w, t):
    return a * m.exp(-b * t) + c * m.sin(w * t)


def _fuse(ctx):
    """hipfer.fuse (issue 24): a 7-op float32 chain and the same chain ending in a sum,
    one pass against each peer's eager chain; the warm host time of a fused call."""
    import hipfer as hf
    g = "fuse"
    n = ctx.sizes["n"]
    gpu = ctx.device == "gpu"
    chain_t = ((Target("fuse >=0.85 copy", "of_limit", ">=", 0.85),
                Target("fuse >=3x cupy", "vs:cupy", "<=", 1 / 3)) if gpu else
               (Target("fuse >=2x numpy", "vs:numpy", "<=", 0.5),))
    sum_t = (chain_t[0],) if gpu else (Target("fuse+sum >=2x numpy", "vs:numpy", "<=", 0.5),)
    fused = hf.fuse(lambda a, b, c, w, t: _damped(hf, a, b, c, w, t))
    fused_sum = hf.fuse(lambda a, b, c, w, t: hf.sum(_damped(hf, a, b, c, w, t)))
    rows = hf.fuse(lambda a, b, c, w, t: hf.sum(_damped(hf, a, b, c, w, t), axis=1))
    cols = hf.fuse(lambda a, b, c, w, t: hf.sum(_damped(hf, a, b, c, w, t), axis=0))
    width = 1024

    def case(name, size, op, hf_op, targets, note, salt, out_bytes, shape=None):
        shape = shape or (size,)

        def build():
            xs = [_rand(ctx.rng(salt + i), shape, "float32") for i in range(5)]
            return Case(bind(ctx, xs, op, hf_op=hf_op, torch_op=False), "float32", shape,
                        5 * size * 4 + out_bytes(size), targets=targets, note=note)
        return Spec(g, name, build)
    grid = (n // width, width)
    return [case(f"a*exp(-b*t)+c*sin(w*t) float32 {n}", n, _damped,
                 lambda m, *xs: fused(*xs), chain_t, "one pass", 140, lambda k: 4 * k),
            case(f"sum(a*exp(-b*t)+c*sin(w*t)) float32 {n}", n,
                 lambda m, *xs: m.sum(_damped(m, *xs)), lambda m, *xs: fused_sum(*xs), sum_t,
                 "elementwise + reduction", 150, lambda k: 4),
            case(f"sum(chain, axis=1) float32 {grid[0]}x{width}", n,
                 lambda m, *xs: m.sum(_damped(m, *xs), axis=1), lambda m, *xs: rows(*xs),
                 sum_t, "rows (GPU: a block per row)", 170, lambda k: 4 * (k // width), grid),
            case(f"sum(chain, axis=0) float32 {grid[0]}x{width}", n,
                 lambda m, *xs: m.sum(_damped(m, *xs), axis=0), lambda m, *xs: cols(*xs),
                 sum_t, "columns (GPU: a thread per column)", 180, lambda k: 4 * width, grid),
            case("fused chain call 16 float32", 16, _damped, lambda m, *xs: fused(*xs), (),
                 "warm host time per call", 160, lambda k: 4 * k)]


_GROUP_FNS = {"elementwise_unary": _unary, "elementwise_binary": _binary, "reduction": _reduction,
              "where": _where, "take": _take, "sort": _sort, "matmul": _matmul, "einsum": _einsum,
              "fused": _fused, "overhead": _overhead, "numpy_api": _numpy_api, "fuse": _fuse}


def specs(ctx: Context) -> list:
    """Every case of the table, in GROUPS order (inputs not made yet)."""
    out = []
    for g in GROUPS:
        out += _GROUP_FNS[g](ctx)
    return out


# ------------------------------------------------------------------------ results
def to_numpy(x):
    """A host NumPy array of a result: hipfer Tensor, NumPy / CuPy array, torch tensor, or
    the first item of a tuple (layer_norm's y, torch.max's values)."""
    if isinstance(x, (tuple, list)):
        x = x[0]
    if hasattr(x, "resolve_conj") and hasattr(x, "_data"):  # hipfer Tensor
        x = x.resolve_conj()._data
    elif hasattr(x, "detach"):  # torch
        x = x.detach().resolve_conj().cpu().numpy()
    if hasattr(x, "get") and not isinstance(x, np.ndarray):  # cupy
        x = x.get()
    return np.asarray(x)
