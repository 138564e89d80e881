"""ctypes bindings for the cuTENSOR 2.x and hipTENSOR 2.x tensor contraction.

The two libraries expose the same plan-based API under two prefixes (hipTENSOR 2.x
mirrors cuTENSOR 2.x):

    {p}Create -> {p}CreateTensorDescriptor (A, B, C) -> {p}CreateContraction
    -> {p}CreatePlanPreference -> {p}EstimateWorkspaceSize -> {p}CreatePlan
    -> [{p}PlanGetAttribute(REQUIRED_WORKSPACE)] -> {p}Contract (per call)

so the call code here is shared and each library is one ``LibraryTable``: its symbol
prefix, its enum values (data types, operators, algorithm, JIT mode, workspace
preference), how it names compute precisions (cuTENSOR 2.x: exported *symbols* holding
``cutensorComputeDescriptor_t`` pointers, read from the library; hipTENSOR 2.x: plain
enum values, per GPU architecture), how it encodes its version, which statuses mean "not
supported" at plan time, and what it is known to get wrong.

Values are those of the public headers: cuTENSOR 2.8 ``cutensor/types.h`` (data types
are ``cudaDataType_t``: R_16F 2, R_32F 0, R_64F 1, C_32F 4, C_64F 5; OP_IDENTITY 1,
OP_CONJ 9; ALGO_DEFAULT -1; WORKSPACE_DEFAULT 2; JIT_MODE_NONE 0; PLAN_REQUIRED_WORKSPACE
0; version = major*10000 + minor*100 + patch) and hipTENSOR 2.x ``hiptensor_types.h``
(rocm-libraries projects/hiptensor, 2.4.0: HIPTENSOR_R_16F 2, R_32F 0, R_64F 1, C_32F 4,
C_64F 5; COMPUTE_DESC_16F 1<<0, 32F 1<<2, 64F 1<<4, C32F 1<<11, C64F 1<<12; statuses
ALLOC_FAILED 3, ARCH_MISMATCH 8, EXECUTION_FAILED 13, NOT_SUPPORTED 15; same operator/
algo/JIT/workspace values; version = major*1000000 + minor*1000 + patch, as
hiptensorGetVersion computes it).

hipTENSOR facts from its sources (rocm-libraries projects/hiptensor, 2.3.0-dev at 893f0ef
and 2.4.0 at 15a06ac; ``hip_device.cpp``, ``hiptensor.cpp``, ``hiptensor_contraction.cpp``,
``contraction_selection.cpp``, ``contraction_solution_impl.hpp``) that the table encodes:
- CreateContraction answers ARCH_MISMATCH when ``matrixCoreSupport(compute)`` is false:
  64F/C64F only on gfx90a/gfx942/gfx950, 32F/C32F on those and gfx908, 16F/16BF also on
  gfx11/gfx12 (2.3+); CreateTensorDescriptor answers it for R_64F without FP64;
- CreatePlan's ``bruteForceModel`` answers ALLOC_FAILED when its scratch hipMalloc
  fails and EXECUTION_FAILED when no candidate kernel ran; it allocates
  product(extents) elements per operand but launches with the caller's strides, so a
  strided operand overruns that scratch: only packed operands are passed;
- extents and strides become 32-bit ``ck::index_t`` (``toCKVec``): an operand spanning
  more than 2^31-1 bytes runs through GEMM;
- a non-NULL descC selects the bilinear kernel, CK's ``Bilinear`` computes
  ``alpha * x0 + beta * x1`` with no beta == 0 case (NaN * 0 is NaN), while a NULL descC
  selects the scale kernel, which reads neither C nor beta: with beta == 0 the plan is
  made without C (part of the plan key) -- no fill of ``out`` and no read of it;
- ``plan->mRequiredWorkspace = workspaceSizeLimit``: REQUIRED_WORKSPACE only echoes the
  limit, so the estimate passed as that limit is what is allocated.

What the handler does with a contraction (``make_contract``): modes of extent 1 are
dropped; every operand is described with its own strides (in elements), so transposed
and sliced views contract without a copy where the library takes strides (cuTENSOR); an
input the library cannot take as it is (a zero or negative stride, which both reject;
any non-packed layout for hipTENSOR) is copied to a packed array first, and such an
output is computed into a temporary. Plans (descriptors, plan, workspace size) are
cached per device by (modes, dtype, extents, strides, operators, alignments, whether C
is read). Workspace comes from CuPy's memory pool; the stream is CuPy's current one. A
case the library refuses at plan time (``plan_refusals``), a dtype the device's
architecture has no kernels for, a device the library does not support, and a layout a
known-bad version would miscompute, run as a transpose-transpose-GEMM contraction
(``gemm_contract``) instead; every other library error is a RuntimeError naming the
function and the library's error string. Library handles are created once per device
and kept for the life of the process ({p}Destroy is never called).

This module imports CuPy only where it touches device memory, so its tables, layout
analysis, plan cache and argument marshalling are testable on the CPU.
"""
from __future__ import annotations

import collections
import ctypes
import threading
from dataclasses import dataclass, field
from math import prod
from typing import Callable, FrozenSet, Mapping, Optional, Tuple

import numpy as np

from ...prims import libprobe, registry
from ...prims.semiring import Semiring

INT32_MAX = 2 ** 31 - 1

#: engine counts, per call: 'cutensor' / 'hiptensor' (one library contraction),
#: 'gemm' (the fallback), 'empty' (nothing to contract). Read by tests and benchmarks.
stats: collections.Counter = collections.Counter()


# ===================================================================== mode analysis
@dataclass(frozen=True)
class Modes:
    """The labels of a pairwise contraction out(c) = sum a(a) b(b), by role."""
    batch: tuple     # in a, b and c
    free_a: tuple    # in a and c      (M)
    free_b: tuple    # in b and c      (N)
    inner: tuple     # in a and b only (K, contracted)
    only_a: tuple    # in a only       (summed over before the product)
    only_b: tuple    # in b only

    @classmethod
    def of(cls, ma, mb, mc) -> "Modes":
        sa, sb, sc = set(ma), set(mb), set(mc)
        return cls(batch=tuple(m for m in mc if m in sa and m in sb),
                   free_a=tuple(m for m in mc if m in sa and m not in sb),
                   free_b=tuple(m for m in mc if m in sb and m not in sa),
                   inner=tuple(m for m in ma if m in sb and m not in sc),
                   only_a=tuple(m for m in ma if m not in sb and m not in sc),
                   only_b=tuple(m for m in mb if m not in sa and m not in sc))


@dataclass(frozen=True)
class Operand:
    """One tensor as the library sees it: mode ids, extents and element strides, in
    increasing-stride order (extent-1 modes dropped)."""
    modes: Tuple[int, ...]
    extents: Tuple[int, ...]
    strides: Tuple[int, ...]

    @property
    def size(self) -> int:
        return prod(self.extents)

    @property
    def packed(self) -> bool:
        """Packed column-major in this (increasing-stride) order."""
        expect = 1
        for n, s in zip(self.extents, self.strides):
            if s != expect:
                return False
            expect *= n
        return True


@dataclass(frozen=True)
class Layout:
    """A contraction's operands for one set of input/output strides."""
    a: Operand
    b: Operand
    c: Operand
    copy_a: bool      # the library cannot take the input as it is: contract a packed copy
    copy_b: bool
    temp_c: bool      # nor the output: compute into a temporary, then copy it in
    roles: Modes      # the roles of the kept (extent > 1) mode ids


def c_strides(shape) -> tuple:
    """C-order element strides of a packed array of shape."""
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(int(n), 1)
    return tuple(reversed(out))


def _operand(ids, shape, strides, keep, dense: bool) -> Tuple[Operand, bool]:
    """(Operand over the kept modes, whether a packed C-order copy is needed: for a
    zero/negative stride always, for any non-packed layout when ``dense``)."""
    kept = [i for i, m in enumerate(ids) if m in keep]

    def described(st):
        order = sorted(kept, key=lambda i: (st[i], i))
        return Operand(tuple(ids[i] for i in order), tuple(int(shape[i]) for i in order),
                       tuple(int(st[i]) for i in order))

    if not any(strides[i] <= 0 for i in kept):
        op = described(strides)
        if not dense or op.packed:
            return op, False
    return described(c_strides(shape)), True


def layout(ids_a, ids_b, ids_c, shape_a, shape_b, shape_c,
           strides_a, strides_b, strides_c, dense: bool = False) -> Layout:
    """The library view of a contraction over integer mode ids, shapes and element
    strides; ``dense``: every operand is packed (in some mode order), copying those that
    are not. Assumes no extent is 0 (the caller handles empty contractions)."""
    size = {**dict(zip(ids_a, shape_a)), **dict(zip(ids_b, shape_b))}
    keep = {m for m, n in size.items() if n != 1}
    a, ca = _operand(ids_a, shape_a, strides_a, keep, dense)
    b, cb = _operand(ids_b, shape_b, strides_b, keep, dense)
    c, tc = _operand(ids_c, shape_c, strides_c, keep, dense)
    roles = Modes.of(tuple(m for m in ids_a if m in keep), tuple(m for m in ids_b if m in keep),
                     tuple(m for m in ids_c if m in keep))
    return Layout(a, b, c, ca, cb, tc, roles)


# ================================================================ the library tables
@dataclass(frozen=True)
class KnownBad:
    """Versions [lo, hi) of a library known to return wrong results (or to crash) for
    the contractions ``applies`` selects. scope 'desc': decided from the descriptor
    alone (has_fast_path says no); scope 'layout': decided per shapes/strides (that call
    runs on the GEMM fallback)."""
    lo: int
    hi: Optional[int]
    scope: str
    applies: Callable
    reason: str

    def covers(self, version: int) -> bool:
        return version >= self.lo and (self.hi is None or version < self.hi)


@dataclass(frozen=True)
class ModeRules:
    """Which mode structures a library contracts (beyond those, has_fast_path is False)."""
    batch: str = ""            # non-empty: why batch modes (in a, b and c) are refused
    single_operand: str = ""   # non-empty: why modes in one input only are refused
    max_per_group: Optional[int] = None   # most M, N or K modes
    nonempty_groups: bool = False         # needs at least one M, N and K mode


@dataclass(frozen=True)
class ArchRule:
    """The compute types a library has on some GPU architectures, for versions [lo, hi):
    dtype char -> compute descriptor. A dtype it lacks is refused there (``reason``)."""
    lo: int
    hi: Optional[int]
    archs: FrozenSet[str]
    compute: Mapping[str, object]
    reason: str = ""
    scalar: Optional[Mapping[str, str]] = None  # alpha/beta types that differ from the
                                                # table's (they follow the compute type)

    def covers(self, version: int, arch: str) -> bool:
        return (arch in self.archs and version >= self.lo
                and (self.hi is None or version < self.hi))


@dataclass(frozen=True)
class LibraryTable:
    kind: str                  # registry kind: 'cutensor' / 'hiptensor'
    name: str                  # for messages
    prefix: str                # C symbol prefix
    stack: str                 # the CuPy stack it runs on: 'cuda' / 'rocm'
    min_version: int           # the 2.x API
    data_type: Mapping[str, int]        # NumPy dtype char -> the library's data type
    compute: Mapping[str, object]       # dtype char -> compute descriptor: an enum value,
                                        # or the name of an exported symbol holding it
    scalar: Mapping[str, str]           # dtype char -> dtype char of alpha/beta
    op_identity: int
    op_conj: int
    algo_default: int
    jit_none: int
    workspace_default: int
    plan_required_workspace: int
    plan_refusals: FrozenSet[int]       # statuses that mean "not supported" while planning
    decode_version: Callable
    conj_op_ok: Callable                # version -> whether the CONJ operator is honoured
    conj_op_note: str
    modes: ModeRules
    known_bad: Tuple[KnownBad, ...] = ()
    compute_is_symbol: bool = False
    workspace_from_plan: bool = True    # PLAN_REQUIRED_WORKSPACE is the chosen kernel's need
    beta0_without_c: bool = False       # beta == 0: plan without C (C is then never read)
    dense_operands: str = ""            # non-empty: why only packed operands are passed
    index_limit: Optional[int] = None   # the most bytes an operand may span
    index_note: str = ""
    # per GPU architecture, the compute types there (first rule that covers the device);
    # empty: table.compute everywhere, no per-device checks
    arch_rules: Tuple[ArchRule, ...] = ()

    def version_str(self, version: int) -> str:
        return ".".join(str(x) for x in self.decode_version(version))

    def functions(self) -> tuple:
        """The symbols the bindings call (PlanGetAttribute is optional)."""
        return tuple(self.prefix + f for f in _FUNCTIONS)

    def arch_rule(self, version: int, arch: str) -> Optional[ArchRule]:
        return next((r for r in self.arch_rules if r.covers(version, arch)), None)


_decode_cutensor = libprobe.decode_cutensor
_decode_hiptensor = libprobe.decode_hiptensor


# -- layout-level conditions of the known-bad table
def _batch_stride_over_int32(lay: Layout) -> bool:
    batch = set(lay.roles.batch)
    return any(s > INT32_MAX for op in (lay.a, lay.b, lay.c)
               for m, s in zip(op.modes, op.strides) if m in batch)


def _any_operand_over(limit: int) -> Callable:
    def applies(lay: Layout) -> bool:
        return any(op.size > limit for op in (lay.a, lay.b, lay.c))
    applies.__name__ = f"any_operand_over_{limit}"
    return applies


def _not_canonical_packed(lay: Layout) -> bool:
    """hipTENSOR 2.4 reads A = [M.., K..], B = [N.., K..], C = [M.., N..] positionally,
    packed column-major; anything else is miscomputed."""
    r = lay.roles
    if not (lay.a.packed and lay.b.packed and lay.c.packed):
        return True
    na, nb = len(lay.a.modes), len(lay.b.modes)
    m_a, k_a = lay.a.modes[:na - len(r.inner)], lay.a.modes[na - len(r.inner):]
    n_b, k_b = lay.b.modes[:nb - len(r.inner)], lay.b.modes[nb - len(r.inner):]
    return (set(m_a) != set(r.free_a) or set(n_b) != set(r.free_b) or k_a != k_b
            or lay.c.modes != m_a + n_b)


_CUTENSOR = LibraryTable(
    kind="cutensor", name="cuTENSOR", prefix="cutensor", stack="cuda", min_version=20000,
    data_type={"e": 2, "f": 0, "d": 1, "F": 4, "D": 5},
    compute={"e": "CUTENSOR_COMPUTE_DESC_32F", "f": "CUTENSOR_COMPUTE_DESC_32F",
             "d": "CUTENSOR_COMPUTE_DESC_64F", "F": "CUTENSOR_COMPUTE_DESC_32F",
             "D": "CUTENSOR_COMPUTE_DESC_64F"},
    compute_is_symbol=True,
    scalar={"e": "f", "f": "f", "d": "d", "F": "F", "D": "D"},
    op_identity=1, op_conj=9, algo_default=-1, jit_none=0, workspace_default=2,
    plan_required_workspace=0,
    plan_refusals=frozenset({15}),   # CUTENSOR_STATUS_NOT_SUPPORTED
    decode_version=_decode_cutensor,
    conj_op_ok=lambda v: True, conj_op_note="",
    modes=ModeRules(),  # batch modes, and modes of one input only (since 1.5), are fine
    known_bad=(
        KnownBad(20000, 20400, "layout", _batch_stride_over_int32,
                 "cuTENSOR before 2.4.0 miscomputes batched contractions that map to "
                 "cuBLASLt when a batch mode's stride exceeds INT32_MAX (fixed in 2.4.0)"),
        KnownBad(20300, 20600, "layout", _any_operand_over(2 ** 30 - 1),
                 "cuTENSOR 2.3.x-2.5.x writes out of bounds on the host in "
                 "cutensorCreatePlan when a tensor has more than 2^30-1 elements "
                 "(NVIDIA/cuDecomp#112)"),
        # open upstream; reproduced with cuTENSOR 2.8 (cutensorGetVersion 20800) on an
        # H200: the process dies in gpu4pyscf#850's 'Lpq,snqi->snpiL' (3.7e9 outputs)
        KnownBad(20700, None, "layout", _any_operand_over(INT32_MAX),
                 "cuTENSOR 2.7 and later die with SIGFPE in some contractions of tensors "
                 "with more than 2^31-1 elements (pyscf/gpu4pyscf#850; seen with 2.8.0)"),
    ),
)

# hipTENSOR's compute descriptors (hiptensor_types.h)
_H16F, _H32F, _H64F, _HC32F, _HC64F = 1 << 0, 1 << 2, 1 << 4, 1 << 11, 1 << 12
_HIP_CDNA_COMPUTE = {"e": _H32F, "f": _H32F, "d": _H64F, "F": _HC32F, "D": _HC64F}
_GFX11 = frozenset({"gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151", "gfx1152",
                    "gfx1153"})
_GFX12 = frozenset({"gfx1200", "gfx1201"})

_HIPTENSOR = LibraryTable(
    kind="hiptensor", name="hipTENSOR", prefix="hiptensor", stack="rocm",
    min_version=2_000_000,
    data_type={"e": 2, "f": 0, "d": 1, "F": 4, "D": 5},
    compute=_HIP_CDNA_COMPUTE,       # where the device's architecture is unknown
    scalar={"e": "f", "f": "f", "d": "d", "F": "F", "D": "D"},
    op_identity=1, op_conj=9, algo_default=-1, jit_none=0, workspace_default=2,
    plan_required_workspace=0,
    # NOT_SUPPORTED 15; ARCH_MISMATCH 8 (no matrix cores for the compute type, f64 on a
    # GPU without FP64); EXECUTION_FAILED 13 (no candidate kernel ran); ALLOC_FAILED 3
    # (bruteForceModel's scratch): all mean "use another engine", not "fail"
    plan_refusals=frozenset({15, 8, 13, 3}),
    decode_version=_decode_hiptensor,
    # 2.2 accepts HIPTENSOR_OP_CONJ on an input and ignores it; 2.4 fails the plan
    # (JuliaGPU/AMDGPU.jl#1065): a conjugated operand is conjugated into a copy instead
    conj_op_ok=lambda v: False,
    conj_op_note="hipTENSOR ignores (2.2) or rejects (2.4) HIPTENSOR_OP_CONJ on an input",
    modes=ModeRules(
        batch="hipTENSOR 2.3.0 returns wrong results for batched contractions "
              "(ROCm/ROCm#6559) and 2.4 refuses them",
        single_operand="hipTENSOR contracts only modes shared by both inputs",
        max_per_group=6,          # its kernels go up to 6 M, 6 N and 6 K modes
        nonempty_groups=True),    # MmNnKk kernels with m, n, k >= 1
    known_bad=(
        KnownBad(2_004_000, None, "layout", _not_canonical_packed,
                 "hipTENSOR 2.4 reads operands positionally and silently miscomputes any "
                 "layout other than packed column-major A[M..,K..], B[N..,K..], "
                 "C[M..,N..] (JuliaGPU/AMDGPU.jl#1065)"),
    ),
    workspace_from_plan=False,    # REQUIRED_WORKSPACE echoes CreatePlan's limit
    beta0_without_c=True,         # the bilinear kernel computes NaN * 0 for beta == 0
    dense_operands="hipTENSOR's plan-time kernel trial (bruteForceModel) allocates "
                   "product(extents) elements per operand but launches with the "
                   "operand's strides",
    index_limit=INT32_MAX,
    index_note="hipTENSOR hands extents and strides to Composable Kernel as 32-bit "
               "ck::index_t",
    arch_rules=(
        ArchRule(2_000_000, None, frozenset({"gfx90a", "gfx942", "gfx950"}),
                 _HIP_CDNA_COMPUTE),
        ArchRule(2_000_000, None, frozenset({"gfx908"}),
                 {c: _HIP_CDNA_COMPUTE[c] for c in "efF"},
                 "gfx908 has no FP64 matrix cores, and hipTENSOR no f64 / complex128 "
                 "kernels for it"),
        # 2.3 added gfx11/gfx12 contractions for FP16/BF16 data with 16F/16BF compute
        # only: matrixCoreSupport refuses 32F/64F there, and f16 with 32F compute
        # (alpha and beta are then read as _Float16: readVal in data_types.cpp)
        ArchRule(2_003_000, None, _GFX11 | _GFX12, {"e": _H16F},
                 "on gfx11/gfx12 hipTENSOR has matrix-core kernels only for 16-bit "
                 "compute types (float16 runs with COMPUTE_DESC_16F)", scalar={"e": "e"}),
        ArchRule(2_000_000, 2_003_000, _GFX12, {},
                 "hipTENSOR before 2.3 has no gfx12 contraction kernels"),
    ),
)

TABLES = {"cutensor": _CUTENSOR, "hiptensor": _HIPTENSOR}
KIND_FOR_STACK = {"cuda": "cutensor", "rocm": "hiptensor"}

# the functions every binding calls, after the prefix ({p}Destroy is not one: handles
# live as long as the process)
_FUNCTIONS = ("Create", "CreateTensorDescriptor", "DestroyTensorDescriptor",
              "CreateContraction", "DestroyOperationDescriptor", "CreatePlanPreference",
              "DestroyPlanPreference", "EstimateWorkspaceSize", "CreatePlan", "DestroyPlan",
              "Contract", "GetErrorString")


# ====================================================================== bindings
_vp = ctypes.c_void_p
_pvp = ctypes.POINTER(ctypes.c_void_p)
_i64p = ctypes.POINTER(ctypes.c_int64)
_i32p = ctypes.POINTER(ctypes.c_int32)


def _argtypes(compute_t) -> dict:
    i, u32, u64 = ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64
    return {
        "Create": [_pvp],
        "CreateTensorDescriptor": [_vp, _pvp, u32, _i64p, _i64p, i, u32],
        "DestroyTensorDescriptor": [_vp],
        "CreateContraction": [_vp, _pvp, _vp, _i32p, i, _vp, _i32p, i, _vp, _i32p, i,
                              _vp, _i32p, compute_t],
        "DestroyOperationDescriptor": [_vp],
        "CreatePlanPreference": [_vp, _pvp, i, i],
        "DestroyPlanPreference": [_vp],
        "EstimateWorkspaceSize": [_vp, _vp, _vp, i, ctypes.POINTER(u64)],
        "CreatePlan": [_vp, _pvp, _vp, _vp, u64],
        "PlanGetAttribute": [_vp, _vp, i, _vp, ctypes.c_size_t],
        "DestroyPlan": [_vp],
        "Contract": [_vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, u64, _vp],
    }


class LibraryError(RuntimeError):
    """A hipTENSOR / cuTENSOR call returned an error status."""

    def __init__(self, msg, function, status):
        super().__init__(msg)
        self.function, self.status = function, status


class NotSupported(LibraryError):
    """The library refused the contraction while planning (a status in the table's
    plan_refusals), or hipfer knows it would (status None): contract through GEMM."""


@dataclass
class LibPlan:
    """Everything one library contraction needs at call time (and owns)."""
    plan: int
    workspace: int
    scalar: np.dtype
    owned: list = field(default_factory=list)   # (destroy function name, pointer)


class TensorLib:
    """The bindings of one loaded library (a registry.ContractionLibrary)."""

    def __init__(self, info, table: Optional[LibraryTable] = None, capacity: int = 1024):
        self.info, self.table = info, table or TABLES[info.kind]
        self.lib, self.version = info.handle, int(info.version)
        self.missing = [s for s in self.table.functions() if not hasattr(self.lib, s)]
        self.capacity = capacity
        self._lock = threading.RLock()
        self._handles: dict = {}
        self._plans: collections.OrderedDict = collections.OrderedDict()
        self._compute: dict = {}
        self._devices: Optional[tuple] = None
        self.counts: collections.Counter = collections.Counter()  # library calls made
        if not self.missing:
            self._bind()

    # -- setup ---------------------------------------------------------------------
    def _bind(self):
        t = self.table
        compute_t = ctypes.c_void_p if t.compute_is_symbol else ctypes.c_uint32
        self.fn = {}
        for name, args in _argtypes(compute_t).items():
            f = getattr(self.lib, t.prefix + name, None)
            if f is None:  # only PlanGetAttribute may be absent
                continue
            f.argtypes, f.restype = args, ctypes.c_int
            self.fn[name] = f
        err = getattr(self.lib, t.prefix + "GetErrorString")
        err.argtypes, err.restype = [ctypes.c_int], ctypes.c_char_p
        self._err = err

    # -- devices -------------------------------------------------------------------
    def devices(self) -> tuple:
        """libprobe.DeviceSupport per visible GPU: from the loader, or (where it saw no
        GPU) asked once now; () for a library without per-architecture rules."""
        if not self.table.arch_rules:
            return ()
        if self._devices is None:
            found = self.info.devices
            if not found:
                spec = libprobe.SPECS[self.table.kind]
                found = libprobe.check_devices(spec, self.version, libprobe.device_facts())
            self._devices = tuple(found)
        return self._devices

    def _arch(self, device: int):
        """(DeviceSupport of device or None, the ArchRule that covers it or None)."""
        ds = next((d for d in self.devices() if d.index == device), None)
        rule = self.table.arch_rule(self.version, ds.arch) if ds is not None else None
        return ds, rule

    def device_reason(self, device: int, char: str) -> str:
        """'' when the library contracts dtype char on GPU device, else why not (the
        device is unsupported, or its architecture has no kernels for the dtype). A
        device the loader could not see is left to the library's own answer."""
        ds, rule = self._arch(device)
        if ds is None:
            return ""
        t, where = self.table, f"gpu:{device} ({ds.arch or 'unknown architecture'})"
        if not ds.supported:
            return f"{where}: {ds.reason}"
        if rule is None:
            return f"{t.name} {self.version_str} has no contraction kernels for {where}"
        if char not in rule.compute:
            return (f"{t.name} {self.version_str} on {where} does not contract "
                    f"{np.dtype(char)}: {rule.reason}")
        return ""

    def scalar_type(self, device: int, char: str) -> np.dtype:
        """The host type of alpha and beta (it follows the compute type)."""
        _, rule = self._arch(device)
        if rule is not None and rule.scalar and char in rule.scalar:
            return np.dtype(rule.scalar[char])
        return np.dtype(self.table.scalar[char])

    def compute_desc(self, char: str, device: Optional[int] = None):
        """The compute descriptor argument for dtype char on GPU device (None, or a GPU
        without an architecture rule: the table's default): an enum value, or the
        pointer stored in the library's exported symbol."""
        spec = self.table.compute[char]
        if device is not None:
            _, rule = self._arch(device)
            if rule is not None and char in rule.compute:
                spec = rule.compute[char]
        v = self._compute.get(spec)
        if v is None:
            if self.table.compute_is_symbol:
                try:
                    v = ctypes.c_void_p.in_dll(self.lib, spec).value
                except ValueError:
                    raise LibraryError(f"{self.table.name} at {self.info.path!r} does not "
                                       f"export {spec}", spec, -1) from None
                if not v:
                    raise LibraryError(f"{self.table.name}: {spec} is NULL", spec, -1)
            else:
                v = int(spec)
            self._compute[spec] = v
        return v

    @property
    def version_str(self) -> str:
        return self.table.version_str(self.version)

    # -- calls ---------------------------------------------------------------------
    def error_string(self, status: int) -> str:
        s = self._err(status)
        return s.decode(errors="replace") if s else f"status {status}"

    def call(self, name: str, *args):
        self.counts[name] += 1
        st = self.fn[name](*args)
        if st != 0:
            fname = self.table.prefix + name
            msg = (f"{fname} failed: {self.error_string(st)} (status {st}; "
                   f"{self.table.name} {self.version_str} at {self.info.path})")
            raise LibraryError(msg, fname, st)

    def handle(self, device: int) -> int:
        """The library handle of device (created with that device current)."""
        h = self._handles.get(device)
        if h is None:
            with self._lock:
                h = self._handles.get(device)
                if h is None:
                    p = ctypes.c_void_p()
                    self.call("Create", ctypes.byref(p))
                    h = self._handles[device] = p.value
        return h

    # -- plans ---------------------------------------------------------------------
    def plan(self, device: int, lay: Layout, char: str, ops: tuple, aligns: tuple,
             beta_zero: bool = False):
        """The cached LibPlan for this layout (or the NotSupported that refused it).
        beta_zero: the call has beta == 0, so a library that then plans without C
        (table.beta0_without_c) gets a plan that never reads C."""
        scale = bool(beta_zero and self.table.beta0_without_c)
        key = (device, lay.a, lay.b, lay.c, char, ops, aligns, scale)
        p = self._plans.get(key)
        if p is None:
            with self._lock:
                p = self._plans.get(key)
                if p is None:
                    p = self._plan(device, lay, char, ops, aligns, scale)
                    self._insert(key, p)
        return p

    def _plan(self, device, lay, char, ops, aligns, scale):
        why = self.device_reason(device, char)
        if why:
            return NotSupported(why, "", None)
        try:
            return self._create(self.handle(device), lay, char, ops, aligns, scale,
                                self.compute_desc(char, device),
                                self.scalar_type(device, char))
        except LibraryError as e:
            if e.status not in self.table.plan_refusals:
                raise
            return NotSupported(str(e), e.function, e.status)

    def _insert(self, key, p):
        while len(self._plans) >= self.capacity:
            _, old = self._plans.popitem(last=False)
            if isinstance(old, LibPlan):
                self._destroy(old)
        self._plans[key] = p

    def _destroy(self, p: LibPlan):
        for name, ptr in reversed(p.owned):
            try:
                self.call(name, ptr)
            except LibraryError:
                pass  # nothing better to do while evicting
        p.owned.clear()

    def clear(self):
        """Destroy every cached plan (the handles stay)."""
        with self._lock:
            while self._plans:
                _, p = self._plans.popitem()
                if isinstance(p, LibPlan):
                    self._destroy(p)

    def __len__(self):
        return len(self._plans)

    def _create(self, handle, lay: Layout, char: str, ops: tuple, aligns: tuple,
                scale: bool, compute, scalar: np.dtype) -> LibPlan:
        t = self.table
        p = LibPlan(0, 0, scalar)
        try:
            descs = []
            for op, align in zip((lay.a, lay.b, lay.c), aligns):
                d = ctypes.c_void_p()
                n = len(op.modes)
                self.call("CreateTensorDescriptor", handle, ctypes.byref(d), n,
                          (ctypes.c_int64 * n)(*op.extents), (ctypes.c_int64 * n)(*op.strides),
                          t.data_type[char], align)
                p.owned.append(("DestroyTensorDescriptor", d.value))
                descs.append(d.value)
            modes = [(ctypes.c_int32 * len(op.modes))(*op.modes) for op in (lay.a, lay.b, lay.c)]
            od = ctypes.c_void_p()
            # C and D share one descriptor; no C (NULL) selects hipTENSOR's scale kernel
            self.call("CreateContraction", handle, ctypes.byref(od),
                      descs[0], modes[0], ops[0], descs[1], modes[1], ops[1],
                      None if scale else descs[2], None if scale else modes[2],
                      t.op_identity, descs[2], modes[2], compute)
            p.owned.append(("DestroyOperationDescriptor", od.value))
            pref = ctypes.c_void_p()
            self.call("CreatePlanPreference", handle, ctypes.byref(pref), t.algo_default,
                      t.jit_none)
            p.owned.append(("DestroyPlanPreference", pref.value))
            est = ctypes.c_uint64()
            self.call("EstimateWorkspaceSize", handle, od.value, pref.value,
                      t.workspace_default, ctypes.byref(est))
            plan = ctypes.c_void_p()
            self.call("CreatePlan", handle, ctypes.byref(plan), od.value, pref.value, est.value)
            p.owned.append(("DestroyPlan", plan.value))
            # the kernel was chosen within this limit: allocate it, unless the library
            # says what the chosen kernel needs (cuTENSOR: often far below the estimate;
            # hipTENSOR's REQUIRED_WORKSPACE only echoes the limit back)
            p.plan, p.workspace = plan.value, int(est.value)
            if t.workspace_from_plan and "PlanGetAttribute" in self.fn:
                need = ctypes.c_uint64()
                self.call("PlanGetAttribute", handle, plan.value, t.plan_required_workspace,
                          ctypes.byref(need), ctypes.sizeof(need))
                p.workspace = int(need.value)
        except BaseException:
            self._destroy(p)
            raise
        return p

    def contract(self, device: int, p: LibPlan, alpha_h: np.ndarray, beta_h: np.ndarray,
                 a_ptr: int, b_ptr: int, c_ptr: int, ws_ptr: int, ws_size: int, stream: int):
        """One library contraction: out(c) = alpha a b + beta out, in place on c."""
        self.call("Contract", self.handle(device), p.plan, alpha_h.ctypes.data, a_ptr, b_ptr,
                  beta_h.ctypes.data, c_ptr, c_ptr, ws_ptr or None, ws_size, stream or None)


def alignment(ptr: int) -> int:
    """The alignment (bytes, at most 256) of a device pointer."""
    return min(256, ptr & -ptr) if ptr else 256


# =============================================================== support decisions
_bound: dict = {}
_bound_lock = threading.Lock()


def bind(info) -> TensorLib:
    """The TensorLib of a registry.ContractionLibrary (one per loaded path)."""
    key = (info.kind, info.path)
    tl = _bound.get(key)
    if tl is None or tl.lib is not info.handle:
        with _bound_lock:
            tl = _bound.get(key)
            if tl is None or tl.lib is not info.handle:
                tl = _bound[key] = TensorLib(info)
    return tl


def gpu_stack() -> str:
    """'rocm' or 'cuda': which contraction library this CuPy can use."""
    import cupy
    return "rocm" if cupy.cuda.runtime.is_hip else "cuda"


def _dtype_names(table) -> str:
    return ", ".join(str(np.dtype(c)) for c in table.data_type)


def _mode_reason(table: LibraryTable, roles: Modes) -> str:
    r = table.modes
    if r.batch and roles.batch:
        return f"{r.batch}: batch modes {list(roles.batch)}"
    if r.single_operand and (roles.only_a or roles.only_b):
        return f"{r.single_operand}: modes {list(roles.only_a + roles.only_b)}"
    groups = (("M", roles.free_a), ("N", roles.free_b), ("K", roles.inner))
    if r.max_per_group is not None:
        for g, ms in groups:
            if len(ms) > r.max_per_group:
                return (f"{table.name} contracts at most {r.max_per_group} {g} modes, "
                        f"this has {len(ms)}")
    if r.nonempty_groups:
        for g, ms in groups:
            if not ms:
                return f"{table.name} needs at least one {g} mode, this contraction has none"
    return ""


def why_not(desc, dtypes, stack: Optional[str] = None) -> str:
    """'' when the loaded contraction library runs desc (for dtypes, when given), else
    why not -- every reason names the contraction library, and says what happens instead."""
    head = "no contraction library fast path for this Contract: "
    tail = "; einsum contracts it through BatchedGemm steps instead"
    if desc.semiring is not Semiring.STANDARD:
        return (head + f"hipTENSOR / cuTENSOR contract only over the standard (+, x) "
                f"semiring, not {desc.semiring.name}" + tail)
    stack = stack or gpu_stack()
    kind = KIND_FOR_STACK[stack]
    table = TABLES[kind]
    info = registry.contraction_library(kind)
    if info is None:
        other = next((k for k in TABLES if k != kind and registry.contraction_library(k)), None)
        if other:
            return (head + f"a {TABLES[other].name} library is loaded, but this CuPy runs on "
                    f"{stack.upper()}, which needs {table.name} "
                    f"(hipfer.load_{kind}(path))" + tail)
        return (head + f"no {table.name} library is loaded (hipfer.load_{kind}(path) opens "
                "one)" + tail)
    tl = bind(info)
    if tl.missing:
        return (head + f"{info.path!r} lacks {', '.join(tl.missing[:4])}: hipfer binds the "
                f"{table.name} 2.x API" + tail)
    if tl.version < table.min_version:
        return (head + f"{table.name} {tl.version_str} predates the 2.x API that hipfer "
                "binds" + tail)
    if dtypes is not None:
        dt = np.dtype(dtypes[0])
        if dt.char not in table.data_type or any(np.dtype(t) != dt for t in dtypes):
            return (head + f"{table.name} contracts {_dtype_names(table)}, not "
                    f"{', '.join(str(np.dtype(t)) for t in dtypes)}" + tail)
        # refused on every GPU (unsupported, or no kernels for the dtype on its arch);
        # where only some refuse, the call on those runs through GEMM (make_contract)
        reasons = [tl.device_reason(d.index, dt.char) for d in tl.devices()]
        if reasons and all(reasons):
            return head + "; ".join(dict.fromkeys(reasons)) + tail
    roles = Modes.of(desc.modes_a, desc.modes_b, desc.modes_c)
    reason = _mode_reason(table, roles)
    if reason:
        return head + reason + tail
    for kb in table.known_bad:
        if kb.scope == "desc" and kb.covers(tl.version) and kb.applies(roles):
            return head + f"{table.name} {tl.version_str}: {kb.reason}" + tail
    return ""


# ===================================================================== execution
def _host_scalar(v, dt: np.dtype, name: str) -> np.ndarray:
    """alpha/beta as a host value of the library's scalar type."""
    if np.iscomplexobj(v) and dt.kind != "c":
        if np.imag(v) != 0:
            raise TypeError(f"Contract: complex {name}={v!r} for a real contraction")
        v = np.real(v)
    return np.array(v, dtype=dt)


def _out_scalar(v, dt: np.dtype, name: str):
    """alpha/beta in the output dtype (for the GEMM path and empty contractions)."""
    return _host_scalar(v, dt, name)[()]


def scale_out(out, beta) -> None:
    """out = beta * out (beta == 0 never reads out): a contraction over an empty mode."""
    import cupy
    if beta == 0:
        out.fill(0)
    elif beta != 1:
        cupy.multiply(out, beta, out=out)


def combine(out, res, alpha, beta) -> None:
    """out = alpha * res + beta * out, scalars in out's dtype; beta == 0 never reads out."""
    import cupy
    if beta == 0:
        if alpha == 1:
            out[...] = res
        else:
            cupy.multiply(res, alpha, out=out)
        return
    if beta != 1:
        cupy.multiply(out, beta, out=out)
    if alpha != 1:
        res = cupy.multiply(res, alpha)
    cupy.add(out, res, out=out)


def gemm_contract(ma, mb, mc, conj_a: bool, conj_b: bool) -> Callable:
    """compute(a, b) -> the contraction in modes_c order (a view, possibly of a
    temporary), as transpose-transpose-GEMM: modes of one input only are summed first,
    then each operand is laid out (batch, free, contracted) and multiplied by
    cupy.matmul (cuBLAS / hipBLAS)."""
    import cupy
    r = Modes.of(ma, mb, mc)
    red_a = tuple(i for i, m in enumerate(ma) if m in r.only_a)
    red_b = tuple(i for i, m in enumerate(mb) if m in r.only_b)
    kept_a = [m for m in ma if m not in r.only_a]
    kept_b = [m for m in mb if m not in r.only_b]
    perm_a = tuple(kept_a.index(m) for m in r.batch + r.free_a + r.inner)
    perm_b = tuple(kept_b.index(m) for m in r.batch + r.inner + r.free_b)
    order = r.batch + r.free_a + r.free_b
    perm_c = tuple(order.index(m) for m in mc)

    def compute(a, b):
        size = {**dict(zip(ma, a.shape)), **dict(zip(mb, b.shape))}
        nb, nm, nn, nk = (prod(size[m] for m in g)
                          for g in (r.batch, r.free_a, r.free_b, r.inner))
        if red_a:
            a = cupy.sum(a, axis=red_a, dtype=a.dtype)
        if red_b:
            b = cupy.sum(b, axis=red_b, dtype=b.dtype)
        A = a.transpose(perm_a).reshape(nb, nm, nk)
        B = b.transpose(perm_b).reshape(nb, nk, nn)
        if conj_a:
            A = cupy.conjugate(A)
        if conj_b:
            B = cupy.conjugate(B)
        res = cupy.matmul(A, B)
        return res.reshape(tuple(size[m] for m in order)).transpose(perm_c)
    return compute


def _index_reason(t: LibraryTable, lay: Layout, itemsize: int) -> str:
    """Why an operand is too large for the library's index type, or ''."""
    if t.index_limit is None:
        return ""
    for name, op in zip("abc", (lay.a, lay.b, lay.c)):
        span = (1 + sum((n - 1) * s for n, s in zip(op.extents, op.strides))) * itemsize
        if span > t.index_limit:
            return (f"{t.index_note}: {name} spans {span} bytes, more than "
                    f"{t.index_limit}")
    return ""


def plan_layout(t: LibraryTable, version: int, ids, shapes, strides, aligns,
                itemsize: int):
    """(layout, alignments the library is told, why the GEMM path runs it or '') for
    one call's shapes, element strides and pointer alignments (each a triple a, b, c)."""
    lay = layout(*ids, *shapes, *strides, dense=bool(t.dense_operands))
    # packed copies and temporaries come from CuPy's pool: 256-byte aligned
    told = tuple(256 if fresh else al
                 for fresh, al in zip((lay.copy_a, lay.copy_b, lay.temp_c), aligns))
    why = _mode_reason(t, lay.roles) or _index_reason(t, lay, itemsize)
    for kb in t.known_bad:
        if not why and kb.scope == "layout" and kb.covers(version) and kb.applies(lay):
            why = kb.reason
    return lay, told, why


def make_contract(desc, dtypes, shapes, outs, conj) -> Callable:
    """run(inputs, out, alpha=1, beta=0) for a Contract that why_not accepted."""
    import cupy
    stack = gpu_stack()
    info = registry.contraction_library(KIND_FOR_STACK[stack])
    tl = bind(info)
    t = tl.table
    dt = np.dtype(dtypes[0])
    char, itemsize = dt.char, dt.itemsize
    scalar_dt = np.dtype(t.scalar[char])
    ma, mb, mc = desc.modes_a, desc.modes_b, desc.modes_c
    labels = list(dict.fromkeys(ma + mb))
    ids_a = tuple(labels.index(m) for m in ma)
    ids_b = tuple(labels.index(m) for m in mb)
    ids_c = tuple(labels.index(m) for m in mc)
    size = {**dict(zip(ma, shapes[0])), **dict(zip(mb, shapes[1]))}
    empty_sum = any(size[m] == 0 for m in labels if m not in mc)
    cj = tuple(bool(c) and dt.kind == "c" for c in (conj or (False, False)))
    if t.conj_op_ok(tl.version):
        ops, copy_conj = tuple(t.op_conj if c else t.op_identity for c in cj), (False, False)
    else:
        ops, copy_conj = (t.op_identity, t.op_identity), cj
    layouts: dict = {}   # (strides..., alignments) -> (layout, told, fallback reason)
    gemm = None

    def run_gemm(a, b, out, alpha, beta):
        nonlocal gemm
        if gemm is None:  # operands conjugated into copies already are read as they are
            gemm = gemm_contract(ma, mb, mc, cj[0] and not copy_conj[0], cj[1] and not copy_conj[1])
        stats["gemm"] += 1
        combine(out, gemm(a, b), _out_scalar(alpha, dt, "alpha"), _out_scalar(beta, dt, "beta"))

    def run(inputs, out, alpha=1, beta=0):
        alpha_h = _host_scalar(alpha, scalar_dt, "alpha")
        beta_h = _host_scalar(beta, scalar_dt, "beta")
        if out.size == 0:
            return
        if empty_sum:
            stats["empty"] += 1
            scale_out(out, _out_scalar(beta, dt, "beta"))
            return
        a, b = inputs
        if copy_conj[0]:
            a = cupy.conjugate(a)
        if copy_conj[1]:
            b = cupy.conjugate(b)
        aligns = (alignment(a.data.ptr), alignment(b.data.ptr), alignment(out.data.ptr))
        key = (a.strides, b.strides, out.strides, aligns)
        got = layouts.get(key)
        if got is None:
            got = layouts[key] = plan_layout(
                t, tl.version, (ids_a, ids_b, ids_c), (a.shape, b.shape, out.shape),
                (_elem_strides(a), _elem_strides(b), _elem_strides(out)), aligns, itemsize)
        lay, told, why = got
        if why:
            run_gemm(a, b, out, alpha, beta)
            return
        device = cupy.cuda.runtime.getDevice()
        p = tl.plan(device, lay, char, ops, told, beta_zero=not beta_h.any())
        if isinstance(p, NotSupported):
            run_gemm(a, b, out, alpha, beta)
            return
        if p.scalar != scalar_dt:  # this device's compute type reads other scalars
            alpha_h = _host_scalar(alpha, p.scalar, "alpha")
            beta_h = _host_scalar(beta, p.scalar, "beta")
        if lay.copy_a:
            a = cupy.ascontiguousarray(a)
        if lay.copy_b:
            b = cupy.ascontiguousarray(b)
        c = out
        if lay.temp_c:
            c = cupy.empty(out.shape, out.dtype)
            if beta != 0:
                c[...] = out
        ws = cupy.empty((p.workspace,), dtype=np.uint8) if p.workspace else None
        tl.contract(device, p, alpha_h, beta_h, a.data.ptr, b.data.ptr, c.data.ptr,
                    ws.data.ptr if ws is not None else 0, p.workspace,
                    cupy.cuda.get_current_stream().ptr)
        stats[t.kind] += 1
        if c is not out:
            out[...] = c

    run.library = tl  # for tests and introspection
    return run


def _elem_strides(arr) -> tuple:
    item = arr.itemsize
    if any(s % item for s in arr.strides):
        raise ValueError(f"Contract: strides {arr.strides} are not multiples of the item "
                         f"size {item}")
    return tuple(s // item for s in arr.strides)
