"""Counter-based random numbers on NumPy: exactly hipfer.prims.counter_rng.

execute(plan, (), out, seed=..., offset=...): element i of out (C order) is the number of
counter offset + i, so every backend draws the same stream.
"""
from __future__ import annotations

from math import prod

import numpy as np

from ...prims import counter_rng
from ...prims import descriptors as d
from ._common import Handler


def _filler(draw):
    def make(desc, dtypes, shapes, outs, strides, conj):
        dt, shape = dtypes[0], shapes[0]
        n = prod(shape)

        def run(inputs, out, seed=0, offset=0):
            if n:
                out[...] = draw(desc, int(seed), int(offset), n, dt).reshape(shape)
        return run
    return Handler(make)


#: elements per block of the samplers' emulation (it holds every attempt's draws at once)
_BLOCK = 1 << 15


def _sampler(draw):
    """The parametric samplers: inputs broadcast to out's shape, element i counter
    offset + i; emulated a block of elements at a time, which gives the same numbers."""
    def make(desc, dtypes, shapes, outs, strides, conj):
        shape = outs[0][0]
        n = prod(shape)

        def run(inputs, out, seed=0, offset=0):
            if not n:
                return
            ps = [np.broadcast_to(x, shape).reshape(-1) for x in inputs]
            flat = np.empty(n, np.float64)
            for i in range(0, n, _BLOCK):
                flat[i:i + _BLOCK] = draw(int(seed), int(offset) + i,
                                          *(p[i:i + _BLOCK] for p in ps))
            out[...] = flat.reshape(shape)
        return run
    return Handler(make)


HANDLERS = {
    d.Uniform: _filler(lambda desc, s, o, n, dt: counter_rng.uniform(s, o, n, dt)),
    d.Normal: _filler(lambda desc, s, o, n, dt: counter_rng.normal(s, o, n, dt)),
    d.Integer: _filler(lambda desc, s, o, n, dt: counter_rng.integer(s, o, n, desc.low,
                                                                     desc.high, dt)),
    d.LogGamma: _sampler(counter_rng.log_gamma),
    d.Poisson: _sampler(counter_rng.poisson),
    d.Binomial: _sampler(counter_rng.binomial),
}
