"""hipfer.nn: the fused device op set for model code, functional, on hipfer Tensors.

Each function is one FusedPrims op (``hipfer.prims.descriptors.Fused``): one pass over
memory on the GPU (the project's HIP kernels) and a NumPy reference on the CPU. float32
and float64; index operands are int64. See docs/nn.md.

A topic is one folder, ``hipfer/nn/_<topic>/``: its public functions (``__init__.py``),
op rows (``ops.py``), NumPy reference (``reference.py``), GPU implementation (``gpu.py``)
and kernels (``kernels.py``, ``fused_<topic>.cuh``); docs/architecture.md, "Adding a
fused op". The folders are private: the public names are hipfer.nn's own, and a topic's
name may be one of them (``hipfer.nn.activation`` is a function).
"""
from __future__ import annotations

from ._blas import *  # noqa: F401,F403
from ._activation import *  # noqa: F401,F403
from ._norm import *  # noqa: F401,F403
from ._batchnorm import *  # noqa: F401,F403
from ._movement import *  # noqa: F401,F403
from ._conv import *  # noqa: F401,F403
from ._lrp import *  # noqa: F401,F403
from ._logic import *  # noqa: F401,F403
from ._recurrent import *  # noqa: F401,F403

from . import _activation, _batchnorm, _blas, _conv, _logic, _lrp, _movement, _norm, _recurrent  # noqa: E402

#: every public function, by topic (docs/nn.md is generated from this)
TOPICS = {"blas": _blas, "activation": _activation, "norm": _norm, "batchnorm": _batchnorm,
          "movement": _movement, "conv": _conv, "lrp": _lrp, "logic": _logic,
          "recurrent": _recurrent}
__all__ = sorted(n for m in TOPICS.values() for n in m.__all__)

del annotations  # the __future__ feature, not an API name
