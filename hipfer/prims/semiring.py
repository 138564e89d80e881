"""Semirings for contraction: (add, mul, zero, one).

Standard is (+, x). The tropical semirings replace the sum with max or min: MaxPlus is
(max, +), MinPlus is (min, +), MaxMul is (max, x) (for non-negative operands, as in
Viterbi with probabilities). hipTENSOR/cuTENSOR only do Standard.
"""
from __future__ import annotations

from enum import Enum
import math

import numpy as np


class Semiring(Enum):
    STANDARD = ("standard", "add", "mul", 0.0, 1.0)
    MAX_PLUS = ("max_plus", "max", "add", -math.inf, 0.0)
    MIN_PLUS = ("min_plus", "min", "add", math.inf, 0.0)
    MAX_MUL = ("max_mul", "max", "mul", 0.0, 1.0)

    @property
    def cname(self) -> str:
        return self.value[0]

    @property
    def add(self) -> str:
        """The semiring's sum: 'add', 'max' or 'min'."""
        return self.value[1]

    @property
    def mul(self) -> str:
        """The semiring's product: 'mul' or 'add'."""
        return self.value[2]

    @property
    def zero(self) -> float:
        """Identity of the semiring's sum (what an empty contraction gives)."""
        return self.value[3]

    @property
    def one(self) -> float:
        return self.value[4]

    @property
    def is_tropical(self) -> bool:
        return self is not Semiring.STANDARD

    def zero_for(self, dtype):
        """The semiring's additive identity in dtype (integers: the dtype's min / max
        stand in for -inf / +inf)."""
        dt = np.dtype(dtype)
        z = self.zero
        if dt.kind in "iu" and math.isinf(z):
            info = np.iinfo(dt)
            z = info.min if z < 0 else info.max
        return dt.type(z)

    def check_scale(self, alpha, beta) -> None:
        """Tropical semirings take alpha == 1 and beta in {0, 1} (1: out = out (+) result)."""
        if self.is_tropical and (alpha != 1 or beta not in (0, 1)):
            raise ValueError(f"{self.name} semiring: alpha must be 1 and beta 0 or 1, "
                             f"got alpha={alpha!r}, beta={beta!r}")
