"""Generate docs/numpy.md: how NumPy code meets hipfer tensors -- the dispatch rules (the
docstrings of hipfer/_numpy_dispatch.py and hipfer/_core.operands) and a table of
NumPy's ufuncs and functions (numpy, numpy.linalg, numpy.fft, and the methods of
numpy.random.Generator) with whether CuPy has each, what hipfer dispatches it to, the
backends it runs on and notes (LEFT_OUT: what hipfer leaves out on purpose, and why).

    python docs/gen_numpy.py --write    # rewrite docs/numpy.md
    python docs/gen_numpy.py --check    # exit 1 if the committed file is stale

The table's columns are COLUMNS: (title, function of (module, name, numpy object) -> cell).
The CuPy column reads CuPy's public surface as tools/cupy_api.py recorded it
(CUPY_SURFACE), so the table needs no CuPy installed; tests/test_numpy_dispatch.py checks
that every name CuPy has, hipfer has too or lists in LEFT_OUT.
"""
import inspect
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TABLE = HERE / "numpy.md"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import numpy as np  # noqa: E402

import hipfer  # noqa: E402,F401
from hipfer import _core  # noqa: E402
from hipfer import _numpy_dispatch as nd  # noqa: E402
from generated import write_or_check  # noqa: E402

MODULES = (("numpy", np), ("numpy.linalg", np.linalg), ("numpy.fft", np.fft),
           ("numpy.random.Generator", np.random.Generator))

#: CuPy's public names, one dotted name per line (tools/cupy_api.py's record)
CUPY_SURFACE = ROOT / "tests" / "data" / "cupy_api_14.2.0.txt"
#: NumPy's module -> CuPy's
CUPY_MODULES = {"numpy": "cupy", "numpy.linalg": "cupy.linalg", "numpy.fft": "cupy.fft",
                "numpy.random.Generator": "cupy.random.Generator"}

#: NumPy names hipfer leaves out on purpose: (module, name) -> the reason (the notes column;
#: names of older NumPys too, which CuPy still has)
LEFT_OUT: dict = {
    ("numpy", "in1d"): "deprecated in NumPy 2.0 and removed in 2.4: use isin",
    ("numpy", "trapz"): "deprecated in NumPy 2.0 and removed in 2.4: use trapezoid",
}

#: the backends of a function that does not run on both (the backends column)
BACKENDS: dict = {}


def _hipfer_name(fn) -> str:
    mod = {"hipfer.linalg": "linalg.", "hipfer.fft": "fft."}.get(
        getattr(fn, "__module__", ""), "")
    return f"`{mod}{getattr(fn, '__name__', '?')}`"


def cupy_names() -> frozenset:
    lines = CUPY_SURFACE.read_text().splitlines()
    return frozenset(ln for ln in lines if ln and not ln.startswith("#"))


def cupy_cell(module, name, obj) -> str:
    return "yes" if f"{CUPY_MODULES[module]}.{name}" in cupy_names() else ""


def hipfer_target(module, name):
    """hipfer's counterpart of NumPy's module.name, or None."""
    if module == "numpy.random.Generator":
        import hipfer.random
        return getattr(hipfer.random.Generator, name, None)
    found = nd.target(module, name)
    return None if found is None else found[0]


def hipfer_cell(module, name, obj) -> str:
    if module == "numpy.random.Generator":
        return f"`random.Generator.{name}`" if hipfer_target(module, name) else ""
    found = nd.target(module, name)
    if found is None:
        return ""
    fn, _, _ = found
    if (module, name) in nd.ADAPTERS:
        return f"adapter (`{fn.__name__.strip('_')}`)"
    cell = _hipfer_name(fn)
    if isinstance(obj, np.ufunc):
        methods = [m for m, table in (("reduce", nd.REDUCE), ("accumulate", nd.ACCUMULATE))
                   if name in table]
        methods += ["outer"] if obj.nin == 2 and obj.nout == 1 else []
        methods += ["at"] if name in nd.AT else []
        if methods:
            cell += " (" + ", ".join(methods) + ")"
    return cell


def backends_cell(module, name, obj) -> str:
    if hipfer_target(module, name) is None:
        return ""
    return BACKENDS.get((module, name), "numpy, cupy")


def notes_cell(module, name, obj) -> str:
    if (module, name) in LEFT_OUT:
        return LEFT_OUT[(module, name)]
    fn = hipfer_target(module, name)
    doc = " ".join(_doc(fn).split()) if fn is not None else ""
    # a function whose output size depends on the data says so in its docstring
    return "syncs once (output size)" if re.search(r"\bsyncs?\b", doc) else ""


#: the table's columns after the NumPy name
COLUMNS = [("CuPy", cupy_cell), ("hipfer", hipfer_cell), ("backends", backends_cell),
           ("notes", notes_cell)]


def _entries():
    """(module, name, object) of NumPy's public ufuncs and functions (and the
    Generator's methods), each once."""
    seen, out = set(), []
    for module, mod in MODULES:
        for name in sorted(dir(mod)):
            obj = getattr(mod, name)
            if name.startswith("_") or inspect.ismodule(obj) or inspect.isclass(obj):
                continue
            if inspect.isclass(mod):  # the methods of a class
                if callable(obj):
                    out.append((module, name, obj))
                continue
            if not (isinstance(obj, np.ufunc) or inspect.isfunction(obj) or
                    inspect.isbuiltin(obj) or hasattr(obj, "_implementation")):
                continue
            key = (module, obj.__name__ if isinstance(obj, np.ufunc) else name)
            if key in seen:
                continue
            seen.add(key)
            out.append((module, key[1], obj))
    return out


def _doc(obj) -> str:
    return inspect.cleandoc(obj.__doc__ or "")


def _mixed_rule() -> str:
    """The rule as operands' docstring states it (its first paragraph after the summary
    line, up to the read_only note)."""
    doc = _doc(_core.operands)
    start = doc.index("The rule")
    return doc[start:doc.index("read_only:")].replace(
        ' (docs/numpy.md, "Mixed operands")', "").strip()


def render() -> str:
    entries = _entries()
    lines = [
        "# NumPy and hipfer tensors",
        "",
        "Generated by `python docs/gen_numpy.py --write` from the code "
        "(hipfer/_numpy_dispatch.py, hipfer/_core.py) and the installed NumPy "
        f"({np.__version__}); `tests/test_numpy_dispatch.py` fails when it is stale.",
        "",
        "## Dispatch rules",
        "",
        _doc(nd),
        "",
        "Refused implicit conversion: `numpy.asarray(t)` works for a CPU tensor (SciPy's "
        "fallbacks use it) and raises TypeError for GPU data; `numpy.asarray(t, copy=True)` "
        "or `t.to_device('cpu')` copy explicitly. `HIPFER_REFUSE_HOST=1` (or "
        "`hipfer._tensor.refuse_host()`, the tests' `refuse_host` fixture) makes CPU tensors "
        "refuse it too, so a CPU test run proves NumPy calls never reach `__array__`.",
        "",
        "## Mixed operands",
        "",
        _mixed_rule(),
        "",
        "The operators and the binary namespace functions all convert operands there; an "
        "in-place operator (`t += np.ones(3)`) computes, then stores into `t` and refuses a "
        "result of another dtype or shape. A NumPy array on the left (`np.ones(3) + t`) "
        "reaches `Tensor.__array_ufunc__`, so the result is a Tensor too; `a += t` with a "
        "NumPy `a` raises TypeError (NumPy's out= never receives device data implicitly).",
        "",
        "## Known divergences",
        "",
        "- GPU kernels compile with flush-to-zero, as CuPy's do: a float32 subnormal result "
        "(e.g. `spacing(0)`, products near 1e-38) comes back as 0 on the GPU; float64 keeps "
        "its subnormals. The CPU follows NumPy.",
        "- A negative or out-of-range float cast to an unsigned or narrower integer is "
        "undefined in C: NumPy's x86 loops wrap, GPUs saturate (`astype`, `insert`/`pad` of "
        "such values into unsigned tensors).",
        "- `fmax`/`fmin` of `+0` and `-0` return whichever zero the math library gives (C99).",
        "- `nanvar`/`nanstd` of float16 compute in float32 and round once, as `var` does in "
        "both libraries; NumPy's float16 `nanvar` accumulates in float16 and overflows to inf "
        "past 65504. `nanmean` of a slice whose values sum to NaN (inf and -inf) warns "
        "nothing; NumPy warns of an invalid value.",
        "- Transcendental functions on the GPU agree with NumPy within an ulp or two, not "
        "bit for bit.",
        "- `partition`/`argpartition` order the values within each part as the backend does "
        "(NumPy's introselect on the CPU; on the GPU index order within each part, or a full "
        "sort for short rows and more than 8 kth): any valid partition, as NumPy promises. "
        "The radix select behind `median`, `quantile` and `percentile` on the GPU returns a "
        "zero order statistic as +0.0 (-0.0 and +0.0 rank equal) and every NaN as the one "
        "NaN.",
        "- `np.require`, `np.asarray_chkfinite` have no NumPy dispatch (NumPy converts their "
        "argument first): call `hipfer.require` / `hipfer.asarray_chkfinite`.",
        "- Functions whose output size depends on the data (`nonzero`, `unique`, `argwhere`, "
        "`compress`, `histogram` with `range=None`, `bincount`, ...) read one size or "
        "range back from the device (the notes column says `syncs once`).",
        "",
        "## Coverage",
        "",
        "Each NumPy name, whether CuPy has it (CuPy's surface as recorded in "
        f"`{CUPY_SURFACE.relative_to(ROOT)}`), the hipfer function `np.<name>(tensor)` runs "
        "(`hipfer.<name>` itself where the names agree), the backends it runs on and notes. "
        "Every name CuPy has is in hipfer or has its reason in the notes.",
        "",
        "| | NumPy | CuPy | hipfer | CuPy's, hipfer lacks |",
        "| --- | --- | --- | --- | --- |",
    ]
    for module, _ in MODULES:
        rows = [e for e in entries if e[0] == module]
        cu = [e for e in rows if cupy_cell(*e)]
        hf = [e for e in rows if hipfer_target(e[0], e[1]) is not None]
        lack = [e for e in cu if hipfer_target(e[0], e[1]) is None]
        lines.append(f"| `{module}` | {len(rows)} | {len(cu)} | {len(hf)} | {len(lack)} |")
    lines.append("")
    for module, _ in MODULES:
        rows = [e for e in entries if e[0] == module]
        uf = [e for e in rows if isinstance(e[2], np.ufunc)]
        fn = [e for e in rows if not isinstance(e[2], np.ufunc)]
        kind = "methods" if module.endswith("Generator") else "functions"
        for title, group in ((f"`{module}` ufuncs", uf), (f"`{module}` {kind}", fn)):
            if not group:
                continue
            n = sum(1 for m, name, o in group if hipfer_target(m, name) is not None)
            c = sum(1 for m, name, o in group if cupy_cell(m, name, o))
            lines += [f"### {title}: hipfer {n}, CuPy {c} of {len(group)}", "",
                      "| NumPy | " + " | ".join(c for c, _ in COLUMNS) + " |",
                      "| --- |" + " --- |" * len(COLUMNS)]
            for m, name, o in group:
                cells = [f(m, name, o) or "—" for _, f in COLUMNS]
                lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None):
    return write_or_check([(TABLE, render)], "docs/gen_numpy.py", argv)


if __name__ == "__main__":
    sys.exit(main())
