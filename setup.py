"""Only the optional C extensions live here; everything else is in pyproject.toml.

hipfer._launch (hipfer/_launch.c) is the GPU backend's compiled kernel-launch path. It
needs a C compiler and Python's headers, no GPU toolkit; where it cannot be built the
install goes on without it and kernels launch through cupy.RawKernel (slower per call).

hipfer._warm (hipfer/_warm.c) is the NumPy backend's compiled warm path for small
calls; it also needs NumPy's headers. Without it the same calls take the Python path.
"""
from setuptools import Extension, setup

extensions = [Extension("hipfer._launch", ["hipfer/_launch.c"], optional=True)]
try:
    import numpy
except ImportError:  # no NumPy where this builds: the Python path serves
    pass
else:
    extensions.append(Extension("hipfer._warm", ["hipfer/_warm.c"], optional=True,
                                include_dirs=[numpy.get_include()]))

setup(ext_modules=extensions)
