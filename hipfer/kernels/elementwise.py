"""Name expressions for the kernels of elementwise.cuh (pure Python, no CuPy).

The CuPy backend and ``instances()`` build names with the same functions, so what the
backend asks for at run time is exactly what the offline compile check compiled. Each
function returns the pair ``(vec, nd)`` of name expressions for one instantiation; vec is
None where the vector kernel cannot help (one element per 16 bytes already) or for rare
paths, which then run the N-d kernel. ``tile_of(pair)`` names the tiled variant (the plain
copies only) that the backend runs for an input laid out transposed to the output;
``instances()`` lists it with its pair.
"""
from __future__ import annotations

import math
from typing import List, Optional, Tuple

import numpy as np

from ..prims.descriptors import GenerateKind, MetadataBinary
from ..prims.infer import infer, real_dtype
from ..prims.optable import BinaryOp, OpRow, UnaryOp
from ..prims.semiring import Semiring
from . import DTYPES, ctype, dtypes_of_kinds

FILE = "elementwise.cuh"

Pair = Tuple[Optional[str], str]

#: kernels with a tiled variant (``tile_of``): the plain copy only (see tile_of)
TILED = ("unary",)
#: the tiled kernels' block (32 lanes x 8 rows) and tile edge (HF_TILE in elementwise.cuh)
TILE_BLOCK = 256
TILE = 32
#: rows of tiles per band of the tiled kernels' walk (HF_TILE_BAND)
TILE_BAND = 16

#: the functor of each semiring operation name (Semiring.add / Semiring.mul)
_SEMIRING_FN = {"add": "hf::op_add", "mul": "hf::op_multiply",
                "max": "hf::op_maximum", "min": "hf::op_minimum"}
_GEN = {GenerateKind.CONSTANT: "hf::gen_fill", GenerateKind.IOTA: "hf::gen_iota"}
_BOOL = np.dtype(np.bool_)


def vec_width(*dtypes) -> int:
    """Elements per thread of the vector kernel (vec_width<...> in elementwise.cuh): a
    16-byte access of the narrowest operand, at most two of the widest."""
    sizes = [np.dtype(t).itemsize for t in dtypes]
    return min(16 // min(sizes), 32 // max(sizes))


def nd_run(*dtypes) -> int:
    """Elements per run of the N-d kernels (nd_run<...> in elementwise.cuh): at least 4,
    and a 16-byte access of the widest operand."""
    return max(4, 16 // max(np.dtype(t).itemsize for t in dtypes))


def nd_runs(shape, run: int) -> int:
    """Runs the N-d kernel walks for a (merged) shape: one thread-iteration each."""
    inner = shape[-1]
    return math.prod(shape[:-1]) * -(-inner // run)


def tile_shape(*dtypes) -> Tuple[int, int]:
    """(ma, mb) of the tiled kernels (tile_geom<...> in elementwise.cuh): tiles of
    TILE * ma (axis a, the second to last) x TILE * mb (axis b, the last) elements."""
    size = max(np.dtype(t).itemsize for t in dtypes)
    return (1 if size >= 16 else 2 if size >= 4 else 4), (1 if size >= 8 else 2)


def tiles(shape, ma: int, mb: int) -> int:
    """Tiles the tiled kernel walks for a (merged, rank >= 2) shape: one block-iteration each."""
    return math.prod(shape[:-2]) * -(-shape[-2] // (TILE * ma)) * -(-shape[-1] // (TILE * mb))


def tile_of(pair: Pair) -> Optional[str]:
    """The tiled kernel (an input laid out transposed to the output) of a pair, or None.

    Only the plain copies have one (``cast(d, d)``: MakeContiguous, materializing a
    transposed array). Results keep their operands' layout (order 'K'), so a single
    transposed operand never needs a tile; mixed layouts (``a.T + b``) take the N-d
    kernel over blocks of the two axes (backends/cupy/elementwise.py ``_blocked``: 0.85
    of the copy bandwidth for float32 ``a.T + b`` on an H200). Tiled variants of every
    unary, binary and where kernel reached only 0.37 there and made the offline compile
    of the elementwise groups about 9x slower (60 s instead of 7 per group and target)."""
    return _TILE_OF.get(pair[1])


def _pair(kernel: str, targs, dtypes=(), vec: bool = True) -> Pair:
    """(vec, nd) names; no vec kernel when vec is False or the operands' width is 1."""
    args = ", ".join(targs)
    has_vec = vec and vec_width(*dtypes) > 1
    return (f"hf::ew_{kernel}_vec<{args}>" if has_vec else None), f"hf::ew_{kernel}_nd<{args}>"


def _metadata_ops() -> tuple:
    """The binary ops MetadataBinary takes (on bool and integers), as infer decides."""
    ops = []
    for op in BinaryOp:
        try:
            infer(MetadataBinary(op), (np.dtype(np.int32),) * 2, ((), ()))
        except (TypeError, ValueError):
            continue
        ops.append(op)
    return tuple(ops)


METADATA_OPS = _metadata_ops()


def binary_dtypes(op: BinaryOp) -> tuple:
    """Every dtype a binary op's kernels run on: its row's kinds, plus bool and the
    integers where MetadataBinary takes it (bool subtract there is a != b)."""
    return dtypes_of_kinds(op.row.kinds + ("biu" if op in METADATA_OPS else ""))


def result_dtype(row: OpRow, dt: np.dtype) -> np.dtype:
    """The output dtype of an op row on input dtype dt (the row's result rule)."""
    if row.result == "bool":
        return _BOOL
    return real_dtype(dt) if row.result == "real" else np.dtype(dt)


def unary(row: OpRow, dt) -> Pair:
    dt = np.dtype(dt)
    r = result_dtype(row, dt)
    return _pair("unary", (f"hf::op_{row.name}", ctype(dt), ctype(r)), (dt, r))


def binary(row: OpRow, dt) -> Pair:
    dt = np.dtype(dt)
    r = result_dtype(row, dt)
    return _pair("binary", (f"hf::op_{row.name}", ctype(dt), ctype(dt), ctype(r)), (dt, r))


def where(dt) -> Pair:
    return _pair("where", (ctype(dt),), (dt,))


def cast(src, dst) -> Pair:
    """src -> dst with NumPy's unsafe astype rules (src == dst: a copy)."""
    return _pair("unary", (f"hf::cast_op<{ctype(dst)}>", ctype(src), ctype(dst)), (src, dst))


def complex_scale(dt) -> Pair:
    """complex dt times its real dtype."""
    c, r = ctype(dt), ctype(real_dtype(np.dtype(dt)))
    return _pair("binary", ("hf::scale_op", c, r, c), (dt,))


def generate_work_dtype(kind: GenerateKind, dt) -> np.dtype:
    """The dtype of the generator's parameters: int64 for a bool iota (start + i * step
    != 0, as the NumPy backend computes it), else dt."""
    dt = np.dtype(dt)
    return np.dtype(np.int64) if kind is GenerateKind.IOTA and dt == _BOOL else dt


def generate(kind: GenerateKind, dt) -> Pair:
    return _pair("generate", (_GEN[kind], ctype(dt), ctype(generate_work_dtype(kind, dt))), (dt,))


def scaled_copy(dt) -> Pair:
    """out = alpha * x + beta * out (MakeContiguous with alpha/beta: rare, N-d only)."""
    t = ctype(dt)
    return _pair("unary_scaled", (f"hf::cast_op<{t}>", "hf::ep_axpby", t), vec=False)


def semiring_functor(op: BinaryOp, semiring: Semiring) -> str:
    """The functor computing a op b in the semiring: ADD is its sum, MUL its product."""
    if op not in (BinaryOp.ADD, BinaryOp.MUL):
        raise ValueError(f"semiring elementwise op must be ADD or MUL, got {op.name}")
    return _SEMIRING_FN[semiring.add if op is BinaryOp.ADD else semiring.mul]


def semiring_plain(op: BinaryOp, semiring: Semiring, dt) -> Pair:
    """out = a op b (alpha 1, beta 0): the op's ordinary binary kernel."""
    t = ctype(dt)
    return _pair("binary", (semiring_functor(op, semiring), t, t, t), (dt,))


def semiring_scaled(op: BinaryOp, semiring: Semiring, dt) -> Pair:
    """Standard: out = alpha * (a op b) + beta * out. Tropical (beta == 1, rare: N-d
    only): out = out (+) (a op b), (+) the semiring's sum."""
    t = ctype(dt)
    if semiring is Semiring.STANDARD:
        return _pair("binary_scaled", (semiring_functor(op, semiring), "hf::ep_axpby", t), (dt,))
    epi = f"hf::ep_accumulate<{_SEMIRING_FN[semiring.add]}>"
    return _pair("binary_scaled", (semiring_functor(op, semiring), epi, t), vec=False)


#: nd kernel name -> its tiled variant, for the copies (tile_of)
_TILE_OF = {cast(d, d)[1]: "hf::ew_unary_tile<" + cast(d, d)[1][len("hf::ew_unary_nd<"):]
            for d in DTYPES}


# ------------------------------------------------------------------ every group
# Compile time is per file as much as per kernel, so ops share files: the rows of one
# (arity, family) spread round-robin over files of at most this many ops.
_OPS_PER_GROUP = 6


def _flat(pairs) -> List[str]:
    """The names of the pairs' kernels and of their tiled variants."""
    return list(dict.fromkeys(e for p in pairs for e in (*p, tile_of(p)) if e is not None))


def _op_groups():
    by_kind: dict = {}
    for op in list(UnaryOp) + list(BinaryOp):
        by_kind.setdefault((op.row.arity, op.row.family), []).append(op)
    for (arity, family), ops in by_kind.items():
        k = math.ceil(len(ops) / _OPS_PER_GROUP)
        for j in range(k):
            name = f"ew_{'unary' if arity == 1 else 'binary'}_{family}" + (f"_{j + 1}" if k > 1 else "")
            if arity == 1:
                yield name, _flat(unary(op.row, t) for op in ops[j::k] for t in dtypes_of_kinds(op.row.kinds))
            else:
                yield name, _flat(binary(op.row, t) for op in ops[j::k] for t in binary_dtypes(op))


def instances():
    """Every group this module can generate: (group name, source file, exprs)."""
    groups = list(_op_groups())
    groups.append(("ew_where_generate", _flat(
        [where(t) for t in DTYPES] + [generate(k, t) for k in GenerateKind for t in DTYPES]
        + [complex_scale(t) for t in dtypes_of_kinds("c")] + [scaled_copy(t) for t in DTYPES])))
    for part, kinds in (("from_int", "biu"), ("from_float", "fc")):
        groups.append((f"ew_cast_{part}", _flat(cast(s, t) for s in dtypes_of_kinds(kinds) for t in DTYPES)))
    groups.append(("ew_semiring", _flat(
        semiring_scaled(op, s, t) for s in Semiring for op in (BinaryOp.ADD, BinaryOp.MUL)
        for t in dtypes_of_kinds("iuf" if s.is_tropical else "biufc"))))
    return [(name, FILE, exprs) for name, exprs in groups]
