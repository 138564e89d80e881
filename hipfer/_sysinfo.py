"""What ``hipfer info`` and ``hipfer.show_config()`` report: versions, devices, the GPU
stack (or why no GPU is usable), the kernel launch path and cache, the contraction
library. It imports only hipfer's lower layers (the registry, the device, the caches),
lazily, so it works where CuPy is missing, broken or has no driver.
"""
from __future__ import annotations

import platform


def _hipfer_version() -> str:
    from hipfer._version import __version__
    return __version__


def _runtime_version(stack: str, v) -> str:
    """CUDA encodes 12040 as 12.4; HIP encodes major*10^7 + minor*10^5 + patch."""
    if not isinstance(v, int):
        return str(v)
    if stack == "rocm":
        return f"{v // 10_000_000}.{v // 100_000 % 100}.{v % 100_000}"
    if stack == "cuda":
        return f"{v // 1000}.{v % 1000 // 10}"
    return str(v)


def _gpu_names(count: int) -> list:
    """Device names (and the gfx arch on ROCm); [] when CuPy cannot say."""
    try:
        import cupy
        names = []
        for i in range(count):
            p = cupy.cuda.runtime.getDeviceProperties(i)
            name = p.get("name", b"?")
            name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
            arch = p.get("gcnArchName", b"")
            arch = arch.decode(errors="replace") if isinstance(arch, bytes) else str(arch)
            names.append(f"{name} ({arch})" if arch else name)
        return names
    except Exception:  # a half-working driver must not break `info`
        return []


def _default_device() -> str:
    from hipfer._device import get_default_device
    try:
        return str(get_default_device())
    except ValueError as e:  # a bad HIPFER_DEVICE
        return f"invalid ({e})"


def _contraction_library(args) -> dict:
    """Load the libraries named on the command line, then report what is loaded. Loading
    hipTENSOR never ends this process: registry.load_hiptensor first loads it in a child
    process (its static initializer exits on a GPU it does not support) and reports a
    child that died as an OSError."""
    from hipfer.prims import registry
    errors = {}
    for kind, path in (("hiptensor", args.hiptensor), ("cutensor", args.cutensor)):
        if path:
            try:
                getattr(registry, f"load_{kind}")(path)
            except (OSError, ValueError) as e:
                errors[kind] = str(e)
    lib = registry.contraction_library()
    loaded = None
    if lib is not None:
        loaded = {"kind": lib.kind, "path": lib.path, "version": lib.version,
                  "version_str": lib.version_str,
                  # per GPU: does the library run there ([] when the loader saw no GPU)
                  "devices": [{"device": f"gpu:{d.index}", "arch": d.arch,
                               "warp_size": d.warp_size, "supported": d.supported,
                               "reason": d.reason or None} for d in lib.devices]}
    return {"loaded": loaded, "errors": errors}


def _launch_path(gpu_usable: bool) -> str:
    """How GPU kernels launch: through the C extension hipfer._launch or cupy.RawKernel."""
    if gpu_usable:
        try:
            from hipfer.backends.cupy import _engine
            return f"hipfer._launch {_engine.fast_launch_status()}"
        except Exception as e:  # a half-working driver must not break `info`
            return f"unknown ({e})"
    import importlib.util
    if importlib.util.find_spec("hipfer._launch") is not None:
        return "hipfer._launch built (used on a GPU)"
    return "hipfer._launch not built: kernels would launch through cupy.RawKernel"


def _kernel_cache(gpu_usable: bool) -> str:
    """Where compiled kernel groups are kept across processes (hipfer's cache or CuPy's)."""
    if gpu_usable:
        try:
            from hipfer.backends.cupy import _engine
            return _engine.kernel_cache_status()
        except Exception as e:  # a half-working driver must not break `info`
            return f"unknown ({e})"
    from hipfer import _kcache
    return f"{_kcache.default_dir()} (mode {_kcache.mode()}; used on a GPU)"


def _cpu_warm_path() -> str:
    """How tiny NumPy-backend calls run: through the C extension hipfer._warm or not."""
    from hipfer import _warmpath
    return _warmpath.STATUS


def collect_info(args) -> dict:
    import numpy as np
    from hipfer.prims.registry import devices, gpu_status
    st = gpu_status()
    versions = {k: (_runtime_version(st.stack, v) if k in ("runtime", "driver") else str(v))
                for k, v in st.versions.items()}
    return {
        "hipfer": _hipfer_version(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "backends": ["numpy"] + (["cupy"] if st.usable else []),
        "devices": [str(d) for d in devices()],
        "default_device": _default_device(),
        "gpu": {
            "usable": st.usable,
            "stack": st.stack or None,
            "count": st.count,
            "versions": versions,
            "names": _gpu_names(st.count) if st.usable else [],
            "reason": st.reason or None,
        },
        "contraction": _contraction_library(args),
        "launch": _launch_path(st.usable),
        "kernel_cache": _kernel_cache(st.usable),
        "cpu_warm_path": _cpu_warm_path(),
    }


def _format_info(info: dict) -> str:
    gpu = info["gpu"]
    lines = [
        f"hipfer          {info['hipfer']}",
        f"python          {info['python']}",
        f"numpy           {info['numpy']}",
        f"backends        {', '.join(info['backends'])}",
        f"devices         {', '.join(info['devices'])}",
        f"default device  {info['default_device']}",
    ]
    if gpu["usable"]:
        vers = ", ".join(f"{k} {v}" for k, v in gpu["versions"].items())
        lines.append(f"gpu stack       {gpu['stack'].upper()} ({vers})")
        for i, name in enumerate(gpu["names"]):
            lines.append(f"  gpu:{i}         {name}")
    else:
        lines.append(f"gpu             none usable: {gpu['reason']}")
        if gpu["versions"]:
            lines.append("                " + ", ".join(f"{k} {v}" for k, v in gpu["versions"].items()))
    lines.append(f"kernel launch   {info['launch']}")
    lines.append(f"kernel cache    {info['kernel_cache']}")
    lines.append(f"cpu warm path   {info['cpu_warm_path']}")
    lib = info["contraction"]["loaded"]
    lines.append("contraction     " + (
        f"{lib['kind']} {lib['path']} (version {lib['version_str']})" if lib
        else "no hipTENSOR/cuTENSOR loaded (GEMM-based einsum)"))
    for d in (lib or {}).get("devices", ()):
        what = "contracts here" if d["supported"] else \
            f"not supported, einsum uses GEMM: {d['reason']}"
        lines.append(f"  {d['device']:<14}{d['arch'] or '?'}: {what}")
    for kind, err in info["contraction"]["errors"].items():
        lines.append(f"  {kind} failed: {err}")
    return "\n".join(lines)
