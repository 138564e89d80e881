"""The base of every descriptor class and the family registry it fills.

Below the family modules of this package (each imports it; it imports none of them).
"""
from __future__ import annotations

from typing import ClassVar, Hashable, Tuple

from ..protocols import ALL_FAMILIES

Modes = Tuple[Hashable, ...]

#: the family names, in the order of the docs: one per Protocol of protocols.py
FAMILIES = tuple(ALL_FAMILIES)

#: descriptor class -> family name, filled as each class is defined (Descriptor)
FAMILY_OF: dict = {}


class Descriptor:
    """Base of the descriptor classes (each a frozen dataclass): a subclass names its
    family in its class statement, ``class Sort(Descriptor, family="sort")``, which
    registers it in FAMILY_OF, and carries its own rules:

        infer(dtypes, shapes) -> ((shape, dtype), ...)   validate, give the outputs
        probe_shapes(n_inputs) -> shapes                 small shapes infer accepts

    ``hipfer.prims.infer.infer`` normalises the dtypes and shapes and calls the first;
    ``has_*_support(desc, dtypes)``, which knows no shapes, checks dtypes and parameters
    by inferring on the second. The rules hold no state and add no dataclass field, so
    a descriptor's hash and equality (it is a plan-cache key) are its fields' alone."""
    family: ClassVar[str]

    def __init_subclass__(cls, family: str = "", **kwargs):
        super().__init_subclass__(**kwargs)
        if family not in FAMILIES:
            raise TypeError(f"descriptor {cls.__name__}: family {family!r} is not one of "
                            f"{', '.join(FAMILIES)} (hipfer.prims.protocols.ALL_FAMILIES)")
        cls.family = family
        FAMILY_OF[cls] = family

    def infer(self, dtypes: tuple, shapes: tuple) -> tuple:
        raise NotImplementedError(f"{type(self).__name__} defines no infer rule")

    def probe_shapes(self, n_inputs: int) -> tuple:
        """0-d operands: what an elementwise rule accepts (override where shapes matter)."""
        return ((),) * max(n_inputs, 1)


def family_of(desc) -> str:
    try:
        return FAMILY_OF[type(desc)]
    except KeyError:
        raise TypeError(f"unknown descriptor {desc!r}: not a hipfer.prims descriptor") from None
