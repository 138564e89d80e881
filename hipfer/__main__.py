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
import sys


# ------------------------------------------------------------------------ info
from hipfer._sysinfo import _format_info, collect_info  # noqa: E402


def cmd_info(args) -> int:
    info = collect_info(args)
    print(json.dumps(info, indent=2) if args.json else _format_info(info))
    return 1 if info["contraction"]["errors"] else 0


# ---------------------------------------------------------------- dump-kernels
def cmd_dump_kernels(args) -> int:
    from hipfer.kernels import dump, fuse
    paths = dump(args.dir, only=args.only)
    paths += fuse.dump(args.dir, only=args.only)  # hipfer.fuse's generated sources
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
