"""The manifest of every kernel group hipfer generates: its name, its instantiation count
and the SHA-256 of the text ``hipfer dump-kernels`` writes for it (the runtime source,
headers inlined, plus the instantiation list).

    python3 tools/kernel_manifest.py          # check tests/data/kernel_manifest.txt
    python3 tools/kernel_manifest.py --write  # rewrite it after a deliberate kernel change

tests/test_kernel_manifest.py runs the check: a group that disappears, an instantiation
list that loses (or gains) entries, or a source whose text changes -- also through a
file moved in the tree -- fails it until the manifest is rewritten on purpose. The text
is what CuPy's and hipfer's disk caches and HIP 5's demangled-name lookup key on.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tests" / "data" / "kernel_manifest.txt"
HEADER = ("# group  instantiations  sha256 of its dump-kernels text "
          "(python3 tools/kernel_manifest.py --write)\n")


def current() -> list:
    """[(group, instantiation count, sha256)] as the tree generates them now."""
    sys.path.insert(0, str(ROOT))
    from hipfer.kernels import all_instances, dump
    counts = {g: len(exprs) for g, _, exprs in all_instances()}
    with tempfile.TemporaryDirectory() as d:
        paths = dump(d)
        out = [(p.stem, counts[p.stem], hashlib.sha256(p.read_bytes()).hexdigest())
               for p in paths]
    return sorted(out)


def recorded(path: Path = MANIFEST) -> list:
    rows = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            g, n, h = line.split()
            rows.append((g, int(n), h))
    return sorted(rows)


def differences(now: list, then: list) -> list:
    """Readable lines for every group that differs between two manifests."""
    a, b = {g: (n, h) for g, n, h in now}, {g: (n, h) for g, n, h in then}
    out = [f"{g}: gone (had {b[g][0]} instantiations)" for g in sorted(b.keys() - a.keys())]
    out += [f"{g}: new ({a[g][0]} instantiations)" for g in sorted(a.keys() - b.keys())]
    for g in sorted(a.keys() & b.keys()):
        (n1, h1), (n0, h0) = a[g], b[g]
        if n1 != n0:
            out.append(f"{g}: {n0} -> {n1} instantiations")
        elif h1 != h0:
            out.append(f"{g}: same instantiation count, different text")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the manifest")
    args = ap.parse_args()
    now = current()
    if args.write:
        MANIFEST.write_text(HEADER + "".join(f"{g} {n} {h}\n" for g, n, h in now))
        print(f"wrote {MANIFEST.relative_to(ROOT)}: {len(now)} groups")
        return 0
    diff = differences(now, recorded())
    print("\n".join(diff) if diff else f"{len(now)} groups as recorded")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
