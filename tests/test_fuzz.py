"""A short run of the differential fuzzer (tools/fuzz.py, issue 19) on every selected
backend: random calls across the namespace and the operators against NumPy and
array-api-strict, which must give no finding outside ALLOWED. The operands are built on
the backend; the reference sides read them with np.asarray(t.to_device("cpu")).

A finding prints its reproducer; `python3 tools/fuzz.py --seed SEED --replay N` runs the
case again (the long run: `python3 tools/fuzz.py --cases 100000 --jobs 2`)."""
from __future__ import annotations

import importlib.util
import pathlib
import re
import sys

import numpy as np
import pytest

import hipfer as hf

_TOOL = pathlib.Path(__file__).resolve().parent.parent / "tools" / "fuzz.py"


def _load():
    spec = importlib.util.spec_from_file_location("hipfer_fuzz", _TOOL)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


fuzz = _load()

SEED = 19
# a few seconds each: the GPU compiles a kernel per new (op, dtype, layout) it meets
CASES = {"numpy": 3000, "cupy": 600}

#: known divergences, (function, outcome, regex on the reason) -> why it is not a bug.
#: The deliberate ones (the standard vs NumPy) live in the tool (fuzz.DIVERGENCES) and
#: never show as findings; this is for the rest, and stays short: a divergence that is
#: a real bug is a finding to fix, not an entry here.
ALLOWED: dict = {
    # (none at present)
}


def _allowed(outcome) -> bool:
    return any(outcome.name == name and outcome.kind == kind and re.search(why, outcome.why)
               for (name, kind, why) in ALLOWED)


def _report(findings) -> str:
    return "\n\n".join(f"{o.name}: {o.kind} (case {o.index}): {o.why}\n{snippet}"
                       for o, snippet in findings)


def test_fuzz_finds_nothing_outside_the_allowlist(be):
    table, findings, _ = fuzz.run(cases=CASES[be.name], seed=SEED, device=be.device,
                                  per_fn=2, timeout=120)
    assert sum(sum(row.values()) for row in table.values()) == CASES[be.name]
    assert len(table) == len(fuzz.FAMILIES)  # every family ran
    bad = [(o, s) for o, s in findings if not _allowed(o)]
    assert not bad, f"seed {SEED}:\n{fuzz.format_table(table)}\n\n{_report(bad)}"


# ----------------------------------------------------------- the engine itself
def test_a_wrong_result_is_a_finding(be, monkeypatch):
    right = hf.negative
    monkeypatch.setattr(hf, "negative", lambda x: hf.positive(right(right(x))))
    table, findings, _ = fuzz.run(cases=300, seed=SEED, device=be.device, fn="^negative$",
                                  only={"unary"})
    assert any(o.kind == "differ" for o, _ in findings), fuzz.format_table(table)


def test_a_message_naming_a_descriptor_is_a_crash(be, monkeypatch):
    def sort(x, /, **kw):
        raise ValueError("Sort: needs at least one axis")
    monkeypatch.setattr(hf, "sort", sort)
    _, findings, _ = fuzz.run(cases=400, seed=SEED, device=be.device, fn="^sort$",
                              only={"search"})
    assert findings and all(o.kind == "crash" and "internal Sort" in o.why
                            for o, _ in findings)


def test_cases_replay_and_their_snippets_run(be):
    for i in range(40):
        a, b = fuzz.make_case(SEED, i), fuzz.make_case(SEED, i)
        assert a.src == b.src and all(np.array_equal(x.base, y.base, equal_nan=True)
                                      for x, y in zip(a.ops, b.ops))
        code = fuzz.snippet(a, be.device).replace("    print(r)", "    pass")
        try:
            exec(compile(code, f"<case {i}>", "exec"), {})
        except Exception as e:  # noqa: BLE001 - a case may be an error on purpose
            res, _ = fuzz.run_case(a, be.device, i)
            assert res.kind == "agree" and not isinstance(e, (NameError, SyntaxError)), e


@pytest.mark.parametrize("row", fuzz.DIVERGENCES, ids=[r[0] for r in fuzz.DIVERGENCES])
def test_the_divergence_table_is_complete(row):
    assert len(row) == 5 and all(isinstance(c, str) and c for c in row)
