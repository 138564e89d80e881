"""Backends: ``numpy`` (CPU, the reference) and ``cupy`` (GPU: HIP/CUDA RawKernels)."""
