"""The command line of hipfer's generators of whole files (docs/gen_numpy.py,
docs/gen_api_coverage.py, tools/gen_stubs.py, tools/gen_numpy_signatures.py):

    python <generator> --write    # rewrite the generated files
    python <generator> --check    # exit 1, naming each stale file and the command
"""
from __future__ import annotations

import argparse
import sys


def write_or_check(outputs, command: str, argv=None) -> int:
    """outputs: (path, render) pairs, render() giving the file's text."""
    ap = argparse.ArgumentParser()
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true")
    g.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    stale = 0
    for path, render in outputs:
        text = render()
        if args.write:
            path.write_text(text)
        elif not path.exists() or path.read_text() != text:
            print(f"{path} is stale: run python {command} --write", file=sys.stderr)
            stale = 1
    return stale
