"""Every kernel group, its instantiation list and its source text are as recorded in
tests/data/kernel_manifest.txt (tools/kernel_manifest.py): moving code around the tree
must leave what ``hipfer dump-kernels`` writes byte-identical, and an instantiation list
that silently loses entries fails here. After a deliberate kernel change, rewrite the
manifest with ``python3 tools/kernel_manifest.py --write`` and commit it with the change.
"""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("kernel_manifest",
                                               ROOT / "tools" / "kernel_manifest.py")
km = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(km)


def test_kernel_groups_are_as_recorded():
    diff = km.differences(km.current(), km.recorded())
    assert not diff, ("kernel groups differ from tests/data/kernel_manifest.txt (rewrite it "
                      "with tools/kernel_manifest.py --write if deliberate):\n"
                      + "\n".join(diff))


def test_differences_name_what_changed():
    then = [("a", 3, "x"), ("b", 2, "y"), ("c", 1, "z")]
    now = [("a", 2, "x"), ("b", 2, "q"), ("d", 1, "w")]
    assert km.differences(now, then) == ["c: gone (had 1 instantiations)",
                                         "d: new (1 instantiations)", "a: 3 -> 2 instantiations",
                                         "b: same instantiation count, different text"]
    assert km.differences(then, then) == []
