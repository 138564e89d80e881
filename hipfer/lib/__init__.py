"""hipfer.lib: the parts of numpy.lib that code reaches through an array namespace
(xarray's ``xp.lib.stride_tricks.sliding_window_view``), as cupy.lib has them."""
from . import stride_tricks  # noqa: F401

__all__ = ["stride_tricks"]
