"""einsum: the engine (engine.py: parse -> path -> pairwise plans), its vector-Jacobian
products (vjp.py) and the tropical argmax (argmax.py). The package is ``_einsum`` (not
``einsum``) so that ``hipfer.einsum`` can be the function.
"""
from __future__ import annotations

from .engine import contract, einsum, einsum_path, run_spec  # noqa: F401
from .vjp import einsum_vjp, einsum_vjp_subscripts  # noqa: F401

__all__ = ["einsum", "einsum_path", "einsum_vjp", "einsum_vjp_subscripts"]
