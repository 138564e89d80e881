"""The standard's constants."""
import math

__all__ = ["e", "inf", "nan", "newaxis", "pi"]

e = math.e
inf = math.inf
nan = math.nan
pi = math.pi
newaxis = None  # an alias of None, for indexing
