"""hipfer.prims: the operation families, their descriptors, plans and the backend registry.

    from hipfer import prims
    be = prims.get_backend("cpu")
    p = be.plan(prims.ScalarBinary(prims.BinaryOp.ADD), (np.float32, np.float32), ((3,), (3,)))
    be.execute(p, (a, b), out)
"""
from .descriptors import *  # noqa: F401,F403
from .descriptors import FAMILIES, FAMILY_OF, family_of, GemmOp, GenerateKind  # noqa: F401
from .infer import infer  # noqa: F401
from .optable import BinaryOp, OpRow, ReduceOp, UnaryOp  # noqa: F401
from .plan import Backend, Plan, PlanCache  # noqa: F401
from .protocols import (  # noqa: F401
    ALL_FAMILIES, AnalyticPrims, ComplexRealPrims, ComplexScalePrims, FusedPrims,
    IndexingPrims, MetadataCastPrims, MetadataPrims, RngPrims, ScalarPrims, SemiringCore,
    SemiringFastPath, SortPrims,
)
from .registry import (  # noqa: F401
    BackendRegistry, ContractionLibrary, contraction_library, devices, get_backend,
    gpu_status, load_cutensor, load_hiptensor,
)
from .semiring import Semiring  # noqa: F401
from .protocols import FftPrims, LinalgPrims  # noqa: F401,E402 (appended: linalg/fft helper)
