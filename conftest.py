"""Test configuration: ``--backend numpy|cupy|all`` selects where tests run.

Default: numpy, plus cupy when CuPy sees a usable GPU. Tests that take the ``be``
fixture run once per selected backend; ``be.asarray`` / ``be.asnumpy`` move NumPy data
to and from that backend, ``be.device`` is its hipfer device.
"""

import numpy as np
import pytest


def pytest_addoption(parser):
    parser.addoption("--backend", action="store", default=None,
                     choices=("numpy", "cupy", "all"),
                     help="backends to test: numpy, cupy or all (default: numpy, plus cupy "
                          "when a GPU is usable)")
    parser.addoption("--cutensor", action="store", default=None, metavar="PATH",
                     help="load this libcutensor.so.2 in every test process, so contractions "
                          "(einsum, Contract) take the cuTENSOR fast path where it applies")


def pytest_configure(config):
    path = config.getoption("--cutensor")
    if path:
        import hipfer
        hipfer.load_cutensor(path)


def _selected(config):
    from hipfer.prims.registry import gpu_status
    opt = config.getoption("--backend")
    if opt == "numpy":
        return ["numpy"]
    if opt in ("cupy", "all"):
        st = gpu_status()
        if not st.usable:
            raise pytest.UsageError(f"--backend {opt}: no usable GPU ({st.reason})")
        return ["cupy"] if opt == "cupy" else ["numpy", "cupy"]
    return ["numpy", "cupy"] if gpu_status().usable else ["numpy"]


class BackendCase:
    def __init__(self, name):
        from hipfer._device import Device
        from hipfer.prims.registry import get_backend
        self.name = name
        self.device = Device("cpu") if name == "numpy" else Device("gpu", 0)
        self.backend = get_backend(self.device)
        if name == "cupy":
            import cupy
            self.xp = cupy
        else:
            self.xp = np

    def asarray(self, a):
        return self.xp.asarray(a)

    def asnumpy(self, a):
        """NumPy data of a backend array or a Tensor: an explicit copy for a Tensor, so the
        refuse-host test mode (hipfer._tensor.refuse_host) does not refuse it."""
        from hipfer import Tensor
        if isinstance(a, Tensor):
            return np.asarray(a, copy=True)
        if self.name == "cupy":
            import cupy
            return cupy.asnumpy(a)
        return np.asarray(a)

    def __repr__(self):
        return self.name


def pytest_generate_tests(metafunc):
    if "be" in metafunc.fixturenames:
        names = _selected(metafunc.config)
        metafunc.parametrize("be", names, indirect=True, ids=names)


_cases = {}


@pytest.fixture
def be(request):
    name = request.param
    if name not in _cases:
        _cases[name] = BackendCase(name)
    case = _cases[name]
    from hipfer._device import default_device
    with default_device(case.device):
        yield case


@pytest.fixture
def refuse_host():
    """CPU tensors refuse implicit NumPy conversion within the test, as GPU tensors do."""
    from hipfer._tensor import refuse_host as mode
    with mode():
        yield


@pytest.fixture
def rng(request):
    """A fresh generator per test, seeded from the test id (reproducible, never zeros)."""
    import zlib
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
