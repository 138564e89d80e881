"""Loading a contraction library safely: ABI check, subprocess probe, device checks.

libhiptensor cannot simply be opened with ``ctypes.CDLL``: a static initializer
(``HipStaticDeviceGuard`` in ``library/src/hip_device.cpp``) runs inside ``dlopen`` and
calls ``exit(EXIT_FAILURE)`` when the current device's ``gcnArchName`` is not one it
knows or its ``warpSize`` is not accepted, and ``CHECK_HIP_ERROR`` exits the same way
when ``hipGetDevice`` / ``hipGetDeviceProperties`` fail (no GPU visible to HIP). So
``registry.load_hiptensor`` does, in order:

1. read the ELF dynamic symbol table (no load): hipTENSOR 1.x, 2.0 and 2.1 export their
   API only under C++-mangled names (``_Z15hiptensorCreate...``; the C headers came with
   2.2), which ctypes cannot bind;
2. load the library in a child Python process and call ``hiptensorGetVersion`` there: if
   the child dies, the caller gets a LibraryProbeError naming the path, the exit status
   and the likely cause instead of losing the process;
3. check every visible GPU (``cupy.cuda.runtime.getDeviceProperties``: ``gcnArchName``,
   ``warpSize``) against what that version's initializer accepts (``HIPTENSOR_GUARDS``);
4. load in-process with a device the initializer accepts made current (the child
   tested device 0; the parent may have made another device current).

A device the initializer does not accept does not stop the load when the probe passed
(it only checks the current device): it is recorded as unsupported, and contractions
on it run through GEMM (tensorlib). cuTENSOR has no such initializer and keeps the
plain in-process load (``LoadSpec.probe``).

Facts below are from the hipTENSOR sources: ROCm/hipTensor ``develop`` at e247c72
(hipTENSOR 1.4.0, 2024-10) and ROCm/rocm-libraries ``projects/hiptensor`` (2.3.0-dev at
893f0ef, 2.4.0 at 15a06ac): ``hip_device.cpp``, ``hiptensor.cpp``, ``CHANGELOG.md``.
Device facts and the device switch are module functions (``device_facts``,
``current_device``, ``device_context``) so that tests replace them without a GPU.
"""
from __future__ import annotations

import contextlib
import json
import re
import signal
import struct
import subprocess
import sys
from dataclasses import dataclass
from typing import FrozenSet, Optional, Sequence, Tuple

PROBE_TIMEOUT_S = 300   # a large libhiptensor takes seconds to map; a hung child is an error


# ====================================================================== versions
def decode_cutensor(v: int) -> tuple:
    """cutensorGetVersion: major * 10000 + minor * 100 + patch."""
    return (v // 10000, v // 100 % 100, v % 100)


def decode_hiptensor(v: int) -> tuple:
    """hiptensorGetVersion: major * 1e6 + minor * 1e3 + patch (hiptensor.cpp, 2.2+)."""
    return (v // 1_000_000, v // 1000 % 1000, v % 1000)


DECODE_VERSION = {"cutensor": decode_cutensor, "hiptensor": decode_hiptensor}


def version_str(kind: str, version: int) -> str:
    return ".".join(str(x) for x in DECODE_VERSION[kind](version))


# ================================================================ device guards
@dataclass(frozen=True)
class LoadGuard:
    """What a library's static initializer accepts, for versions [lo, hi)."""
    lo: int
    hi: Optional[int]
    archs: FrozenSet[str]        # gfx names, without target features (":sramecc+")
    warp_sizes: FrozenSet[int]

    def covers(self, version: int) -> bool:
        return version >= self.lo and (self.hi is None or version < self.hi)


_GFX11 = ("gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151", "gfx1152", "gfx1153")
HIPTENSOR_GUARDS = (
    # 1.0 (CHANGELOG): gfx908, gfx90a; 1.1 added gfx940/941/942; 1.x accepts wave64 only
    LoadGuard(1_000_000, 1_001_000, frozenset({"gfx908", "gfx90a"}), frozenset({64})),
    LoadGuard(1_001_000, 2_000_000,
              frozenset({"gfx908", "gfx90a", "gfx940", "gfx941", "gfx942"}), frozenset({64})),
    # 2.0 dropped gfx940/941 and added gfx950; the 2.x guard takes wave32 and wave64.
    # gfx1200/1201: in hip_device.cpp at rocm-libraries 1219efd (before gfx11 was added;
    # which 2.x first had them is not pinned down -- the probe tests device 0 anyway);
    # contraction kernels for gfx12 came with 2.3
    LoadGuard(2_000_000, 2_003_000,
              frozenset({"gfx908", "gfx90a", "gfx942", "gfx950", "gfx1200", "gfx1201"}),
              frozenset({32, 64})),
    # 2.3 added gfx11 (hip_device.cpp has no gfx1103, although the CHANGELOG names it)
    LoadGuard(2_003_000, None,
              frozenset({"gfx908", "gfx90a", "gfx942", "gfx950", "gfx1200", "gfx1201", *_GFX11}),
              frozenset({32, 64})),
)


@dataclass(frozen=True)
class GpuFacts:
    """One visible GPU as the loader sees it."""
    index: int
    arch: str          # gcnArchName up to the first ':' ('' where the runtime has none)
    warp_size: int


@dataclass(frozen=True)
class DeviceSupport:
    """Whether a loaded library runs on one GPU, and if not, why."""
    index: int
    arch: str
    warp_size: int
    supported: bool
    reason: str = ""


def _text(v) -> str:
    return v.decode(errors="replace") if isinstance(v, bytes) else str(v)


def base_arch(gcn_arch_name) -> str:
    """'gfx90a' of b'gfx90a:sramecc+:xnack-'."""
    return _text(gcn_arch_name).split(":", 1)[0].strip()


def device_facts() -> Optional[Tuple[GpuFacts, ...]]:
    """Every GPU CuPy sees (ROCm: with its gfx arch), or None when CuPy cannot say."""
    try:
        import cupy
        rt = cupy.cuda.runtime
        if not rt.is_hip:
            return None  # no gcnArchName on CUDA: nothing a hipTENSOR guard could check
        out = []
        for i in range(rt.getDeviceCount()):
            p = rt.getDeviceProperties(i)
            out.append(GpuFacts(i, base_arch(p.get("gcnArchName", b"")),
                                int(p.get("warpSize", 0))))
        return tuple(out)
    except Exception:  # no CuPy, no driver, no device: the probe decides alone
        return None


def current_device() -> Optional[int]:
    try:
        import cupy
        return int(cupy.cuda.runtime.getDevice())
    except Exception:
        return None


def device_context(index: int):
    """A context manager making GPU ``index`` current (HIP's hipSetDevice, via CuPy)."""
    import cupy
    return cupy.cuda.Device(index)


# ====================================================================== specs
@dataclass(frozen=True)
class LoadSpec:
    """How one kind of contraction library is opened."""
    kind: str
    name: str
    prefix: str
    probe: bool                      # load in a child process first
    guards: Tuple[LoadGuard, ...]    # what its static initializer accepts, per version
    c_api_since: str = ""            # first version that exports the C API
    exit_cause: str = ""             # why the child may die while loading


HIPTENSOR = LoadSpec(
    kind="hiptensor", name="hipTENSOR", prefix="hiptensor", probe=True,
    guards=HIPTENSOR_GUARDS, c_api_since="2.2",
    exit_cause="libhiptensor's static initializer calls exit(EXIT_FAILURE) when the "
               "current GPU's architecture or warp size is not one it supports, and when "
               "hipGetDevice / hipGetDeviceProperties fail (no GPU visible to HIP: see "
               "HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and access to /dev/kfd)")
# cuTENSOR runs no device code while loading (its first device call is cutensorCreate,
# which reports an unsupported GPU as a status): the in-process load stays
CUTENSOR = LoadSpec(kind="cutensor", name="cuTENSOR", prefix="cutensor", probe=False,
                    guards=())
SPECS = {"hiptensor": HIPTENSOR, "cutensor": CUTENSOR}


def _archs(archs) -> str:
    return ", ".join(sorted(archs, key=lambda a: (len(a), a)))  # gfx9.. before gfx1..


def guard_for(spec: LoadSpec, version: int) -> Optional[LoadGuard]:
    return next((g for g in spec.guards if g.covers(version)), None)


def guard_summary(spec: LoadSpec) -> str:
    """'2.0-2.2: gfx908, ...; 2.3+: ...' for messages."""
    parts = []
    for g in spec.guards:
        if g.lo < 2_000_000:
            continue  # 1.x is refused for its ABI before anything is loaded
        lo = ".".join(map(str, DECODE_VERSION[spec.kind](g.lo)[:2]))
        span = f"{lo}+" if g.hi is None else \
            f"{lo}-{'.'.join(map(str, DECODE_VERSION[spec.kind](g.hi - 1000)[:2]))}"
        parts.append(f"{span}: {_archs(g.archs)}")
    return "; ".join(parts)


def check_devices(spec: LoadSpec, version: int,
                  facts: Optional[Sequence[GpuFacts]]) -> Tuple[DeviceSupport, ...]:
    """The verdict for every GPU in facts (() when facts are unknown). A version the
    table has no row for is trusted on every device: the probe passed."""
    if not facts:
        return ()
    guard = guard_for(spec, version) if spec.guards else None
    vs = version_str(spec.kind, version)
    out = []
    for f in facts:
        reason = ""
        if guard is not None and f.arch not in guard.archs:
            reason = (f"{spec.name} {vs} does not support {f.arch or 'this GPU'} (it accepts "
                      f"{_archs(guard.archs)})")
        elif guard is not None and f.warp_size not in guard.warp_sizes:
            reason = (f"{spec.name} {vs} does not support warp size {f.warp_size} "
                      f"({f.arch}; it accepts {sorted(guard.warp_sizes)})")
        out.append(DeviceSupport(f.index, f.arch, f.warp_size, not reason, reason))
    return tuple(out)


def loading_device(verdicts: Sequence[DeviceSupport]) -> Optional[int]:
    """The GPU to make current while the library's initializer runs: the current one
    when it is supported, else the first supported one, else 0 (the one the probe saw);
    None when no switch is needed, or none is possible (CuPy knows no current device:
    then HIP's is its default, device 0, as in the probe)."""
    cur = current_device()
    if not verdicts or cur is None:
        return None
    ok = [v.index for v in verdicts if v.supported]
    if cur in ok:
        return None
    target = ok[0] if ok else 0
    return None if target == cur else target


def open_in_process(path: str, device: Optional[int]):
    """ctypes.CDLL(path) with GPU ``device`` current (None: as it is)."""
    import ctypes
    ctx = contextlib.nullcontext() if device is None else device_context(device)
    with ctx:
        return ctypes.CDLL(path)


# ============================================================ ELF symbol table
_SHT_DYNSYM = 11
_MANGLED = re.compile(r"^_Z\d+(\w+)")


def dynamic_symbols(path: str, needle: str) -> Optional[set]:
    """The defined dynamic symbols of an ELF shared object whose names contain
    ``needle``, read without loading it; None when the file is not a readable ELF."""
    try:
        with open(path, "rb") as f:
            ident = f.read(16)
            if len(ident) < 16 or ident[:4] != b"\x7fELF" or ident[4] not in (1, 2):
                return None
            wide, end = ident[4] == 2, "<" if ident[5] == 1 else ">"
            head = f.read(48 if wide else 36)
            if wide:
                shoff, = struct.unpack_from(end + "Q", head, 24)
                shentsize, shnum = struct.unpack_from(end + "HH", head, 42)
                sh_fmt, sym_fmt = end + "IIQQQQIIQQ", end + "IBBHQQ"
            else:
                shoff, = struct.unpack_from(end + "I", head, 16)
                shentsize, shnum = struct.unpack_from(end + "HH", head, 30)
                sh_fmt, sym_fmt = end + "IIIIIIIIII", end + "IIIBBH"
            if not shoff:
                return None

            def section(i):
                f.seek(shoff + i * shentsize)
                return struct.unpack(sh_fmt, f.read(struct.calcsize(sh_fmt)))

            if shnum == 0:  # extended numbering: the count is section 0's sh_size
                shnum = section(0)[5]
            needle_b = needle.encode()
            for i in range(shnum):
                sh = section(i)
                if sh[1] != _SHT_DYNSYM:
                    continue
                strtab = section(sh[6])
                f.seek(strtab[4])
                names = f.read(strtab[5])
                f.seek(sh[4])
                table = f.read(sh[5])
                out = set()
                for sym in struct.iter_unpack(sym_fmt, table[:len(table) - len(table)
                                                             % struct.calcsize(sym_fmt)]):
                    name_off, shndx = sym[0], (sym[3] if wide else sym[5])
                    if shndx == 0:
                        continue  # undefined: imported from another library
                    stop = names.find(b"\0", name_off)
                    name = names[name_off:stop if stop >= 0 else None]
                    if needle_b in name:
                        out.add(name.decode(errors="replace"))
                return out
            return set()
    except (OSError, struct.error, IndexError):
        return None


def mangled_api(symbols: set, prefix: str) -> list:
    """The C++-mangled free functions of the API (``_Z15hiptensorCreate...``)."""
    return sorted(s for s in symbols
                  if (m := _MANGLED.match(s)) and m.group(1).startswith(prefix))


# ====================================================================== probe
@dataclass(frozen=True)
class ProbeResult:
    error: str = ""          # ctypes could not open the file (its message)
    missing: tuple = ()      # required symbols the loaded library lacks
    version: int = 0         # as the version function reports it (0: none)


class LibraryProbeError(OSError):
    """The child process that loaded the library died."""

    def __init__(self, msg, path, returncode, stderr):
        super().__init__(msg)
        self.path, self.returncode, self.stderr = path, returncode, stderr


_PROBE = r"""
import ctypes, json, os, sys
path, names, version_fn = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
try:
    lib = ctypes.CDLL(path)
except OSError as e:
    out = {"error": str(e)}
else:
    out = {"missing": [n for n in names if not hasattr(lib, n)], "version": 0}
    fn = getattr(lib, version_fn, None)
    if fn is not None:
        fn.restype, fn.argtypes = ctypes.c_size_t, []
        out["version"] = int(fn())
sys.stdout.write("\nHIPFER-PROBE " + json.dumps(out) + "\n")
sys.stdout.flush()
os._exit(0)  # the library's destructors are not part of the probe
"""


def _status(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


def probe(spec: LoadSpec, path: str, required: Sequence[str], version_fn: str,
          facts: Optional[Sequence[GpuFacts]] = None,
          timeout: float = PROBE_TIMEOUT_S) -> ProbeResult:
    """Load path in a child process; raise LibraryProbeError when the child dies."""
    cmd = [sys.executable, "-I", "-c", _PROBE, path, ",".join(required), version_fn]
    try:
        # the child inherits the environment: HIP_VISIBLE_DEVICES etc. decide its device 0
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LibraryProbeError(
            f"loading {path!r} as the {spec.name} library did not finish within "
            f"{timeout:.0f} s in a probe process", path, None, "") from None
    out = r.stdout.decode(errors="replace")
    line = next((ln for ln in reversed(out.splitlines()) if ln.startswith("HIPFER-PROBE ")),
                None)
    if line is None:
        err = r.stderr.decode(errors="replace").strip()
        tail = " | ".join(err.splitlines()[-3:])
        gpus = ""
        if facts:
            gpus = "; GPUs seen: " + ", ".join(
                f"gpu:{g.index} {g.arch or '?'} (warp size {g.warp_size})" for g in facts)
        accepts = f"; {spec.name} accepts {guard_summary(spec)}" if spec.guards else ""
        raise LibraryProbeError(
            f"loading {path!r} as the {spec.name} library killed the probe process: it "
            f"{_status(r.returncode)} before {version_fn} returned. Likely cause: "
            f"{spec.exit_cause or 'the library aborts while it is loaded'}{gpus}{accepts}"
            + (f". Its stderr: {tail}" if tail else ""),
            path, r.returncode, err)
    got = json.loads(line[len("HIPFER-PROBE "):])
    return ProbeResult(got.get("error", ""), tuple(got.get("missing", ())),
                       int(got.get("version", 0)))

