"""hipfer's version (pyproject.toml's, kept equal by tests/test_packaging.py)."""
__version__ = "0.1.0"
