"""Only the optional C extension lives here; everything else is in pyproject.toml.

hipfer._launch (hipfer/_launch.c) is the GPU backend's compiled kernel-launch path. It
needs a C compiler and Python's headers, no GPU toolkit; where it cannot be built the
install goes on without it and kernels launch through cupy.RawKernel (slower per call).
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("hipfer._launch", ["hipfer/_launch.c"], optional=True)])
