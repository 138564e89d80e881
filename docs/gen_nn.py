"""Generate the op list of docs/nn.md from hipfer.nn, so it cannot go stale.

    python docs/gen_nn.py            # print the list
    python docs/gen_nn.py --write    # rewrite it in docs/nn.md
    python docs/gen_nn.py --check    # exit 1 when docs/nn.md is stale

The list sits between ``<!-- nn:begin -->`` and ``<!-- nn:end -->``: per topic, its
folder and each public function's signature and the first paragraph of its docstring.
"""
from __future__ import annotations

import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's hipfer, not an installed one
DOC = ROOT / "docs" / "nn.md"
BEGIN, END = "<!-- nn:begin -->", "<!-- nn:end -->"


def _summary(fn) -> str:
    doc = inspect.getdoc(fn) or ""
    return " ".join(doc.split("\n\n")[0].split()).replace("|", "\\|")


def generated() -> str:
    import hipfer.nn as nn
    out = []
    for topic, mod in nn.TOPICS.items():
        folder = mod.__name__.replace(".", "/")  # the topic's package: all of its parts
        out += [f"### {topic}", "", f"In `{folder}/`.", "", "| function | what it does |",
                "| --- | --- |"]
        for name in mod.__all__:
            fn = getattr(mod, name)
            sig = str(inspect.signature(fn)).replace("|", "\\|")
            out.append(f"| `{name}{sig}` | {_summary(fn)} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def committed(doc: str) -> str:
    return doc.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def main(argv) -> int:
    text = DOC.read_text()
    if "--check" in argv:
        return 0 if committed(text) == generated() else 1
    if "--write" in argv:
        head, rest = text.split(BEGIN, 1)
        DOC.write_text(f"{head}{BEGIN}\n{generated()}{END}{rest.split(END, 1)[1]}")
        return 0
    print(generated(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
