"""The install metadata agrees with what CI tests and with what the GPU wheels take.

pyproject.toml's NumPy floor is the version CI's second run tests (.ci/run OLDEST_NUMPY),
and each GPU extra can be resolved: a NumPy exists that hipfer, the extra's own NumPy
bound and CI's oldest run all accept (cupy-rocm-5-0 13.3, the last for ROCm 5, needs
NumPy < 2.3).
"""
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@pytest.fixture(scope="module")
def oldest_numpy() -> Version:
    m = re.search(r"^OLDEST_NUMPY=(\S+)$", (ROOT / ".ci" / "run").read_text(), re.M)
    assert m, ".ci/run no longer names OLDEST_NUMPY"
    return Version(m.group(1))


def _numpy(reqs) -> Requirement:
    return next(r for r in map(Requirement, reqs) if r.name == "numpy")


def test_the_numpy_floor_is_what_ci_tests(project, oldest_numpy):
    spec = _numpy(project["dependencies"]).specifier
    assert spec.contains(oldest_numpy), (spec, oldest_numpy)
    floor = next(Version(s.version) for s in spec if s.operator == ">=")
    # the floor's minor release is the one tested: no untested NumPy is admitted
    assert floor.release[:2] == oldest_numpy.release[:2], (floor, oldest_numpy)


def test_the_rocm5_extra_admits_the_tested_numpy(project, oldest_numpy):
    extra = project["optional-dependencies"]["rocm"]
    cupy = next(r for r in map(Requirement, extra) if r.name == "cupy-rocm-5-0")
    assert cupy.specifier.contains("13.3.0")
    bound = _numpy(extra).specifier
    assert not bound.contains("2.3.0"), "cupy-rocm-5-0 13.3 needs NumPy < 2.3"
    assert bound.contains(oldest_numpy) and _numpy(project["dependencies"]).specifier.contains(
        oldest_numpy)


def test_version_matches_pyproject():
    import tomllib
    from pathlib import Path

    import hipfer
    meta = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert hipfer.__version__ == meta["project"]["version"]
