"""The ``hipfer`` command line (also ``python -m hipfer``).

    hipfer info [--json] [--hiptensor PATH] [--cutensor PATH]
    hipfer dump-kernels DIR [--only SUBSTR]
    hipfer demo [ARGS...]
    hipfer bench [--quick] [--device cpu|gpu] [--json FILE] [--plot FILE.png] [--only SUBSTR]

``info`` and ``dump-kernels`` import only ``hipfer.prims.registry`` and
``hipfer.kernels``: they work where CuPy is missing, broken or has no driver, which is
exactly when one needs them.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys


# ------------------------------------------------------------------------ info
def _hipfer_version() -> str:
    import hipfer
    v = getattr(hipfer, "__version__", None)
    if v:
        return str(v)
    from importlib import metadata
    try:
        return metadata.version("hipfer")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


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


def cmd_info(args) -> int:
    info = collect_info(args)
    print(json.dumps(info, indent=2) if args.json else _format_info(info))
    return 1 if info["contraction"]["errors"] else 0


# ---------------------------------------------------------------- dump-kernels
def cmd_dump_kernels(args) -> int:
    from hipfer.kernels import dump
    paths = dump(args.dir, only=args.only)
    if not paths:
        what = f" matching {args.only!r}" if args.only else ""
        print(f"hipfer dump-kernels: no kernel groups{what}", file=sys.stderr)
        return 1
    print(f"wrote {len(paths)} kernel group(s) to {args.dir}")
    return 0


# ------------------------------------------------------------------------ demo
def cmd_demo(args) -> int:
    from hipfer import demo  # lazily: it builds tensors, which the other commands avoid
    rc = demo.main(args.args)
    return int(rc or 0)


# ----------------------------------------------------------------------- bench
def cmd_bench(args) -> int:
    from hipfer import bench  # lazily: it imports hipfer's namespace (and CuPy on a GPU)
    try:
        return bench.run(args)
    except bench.UsageError as e:
        args.bench_parser.error(str(e))  # exits 2 with the usage line, as argparse does


# ----------------------------------------------------------------------- parse
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hipfer",
        description="hipfer: array-API tensors for AMD GPUs (CuPy-ROCm), NVIDIA GPUs "
                    "(CuPy-CUDA) and the CPU (NumPy).")
    p.add_argument("--traceback", action="store_true",
                   help="show the full Python traceback when a command fails")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("info", help="versions, devices, GPU stack and why no GPU is usable")
    s.add_argument("--json", action="store_true", help="print the same as JSON")
    s.add_argument("--hiptensor", metavar="PATH", help="try loading libhiptensor.so from PATH")
    s.add_argument("--cutensor", metavar="PATH", help="try loading libcutensor.so from PATH")
    s.set_defaults(func=cmd_info)

    s = sub.add_parser("dump-kernels",
                       help="write every kernel group as a self-contained .hip file "
                            "(for tools/hip-compile-check)")
    s.add_argument("dir", help="output directory (created if missing)")
    s.add_argument("--only", default="", metavar="SUBSTR",
                   help="only the groups whose name contains SUBSTR")
    s.set_defaults(func=cmd_dump_kernels)

    s = sub.add_parser("bench",
                       help="hipfer against the device's limits and NumPy / CuPy / PyTorch "
                            "(table, --json, --plot)",
                       description="Measure the device's limits (copy bandwidth, GEMM rate per "
                                   "dtype), then hipfer against them and against NumPy (CPU) or "
                                   "CuPy and PyTorch (GPU) on the same inputs.")
    from hipfer.bench import add_arguments as _bench_arguments
    _bench_arguments(s)
    s.set_defaults(func=cmd_bench, bench_parser=s)

    # everything after `demo` goes to the demo untouched (see _split_demo_args)
    s = sub.add_parser("demo", help="run the demo (hipfer demo --help for its options)",
                       add_help=False)
    s.set_defaults(func=cmd_demo, args=[])
    return p


def _split_demo_args(argv: list):
    """(our argv, the demo's argv): argparse would try to parse `demo --size 3` itself."""
    for i, a in enumerate(argv):
        if not a.startswith("-"):
            return (argv[:i + 1], argv[i + 1:]) if a == "demo" else (argv, [])
    return argv, []


def main(argv=None) -> int:
    parser = build_parser()
    ours, demo_args = _split_demo_args(list(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(ours)
    if args.command == "demo":
        args.args = demo_args
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("hipfer: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if args.traceback:
            raise
        print(f"hipfer {args.command}: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
