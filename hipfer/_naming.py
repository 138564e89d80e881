"""Names for functions made by factories (elementwise ops from the op table, the
reductions): help(), repr and signature tools then show ``hipfer.sum``, not
``_sum_like.<locals>.fn``."""
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)


def public(name: str, fn: F) -> F:
    fn.__name__ = fn.__qualname__ = name
    return fn
