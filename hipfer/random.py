"""NumPy's random ``Generator`` API on hipfer's counter-based generator: the same seed
gives the same numbers on CPU and GPU.

    g = hipfer.random.default_rng(42)
    u = g.random((3, 4))               # uniform [0, 1), float64
    z = g.normal(0.0, 2.0, size=1000)  # NumPy's signature
    k = g.integers(0, 10, size=5)

Every draw comes from the counter streams of hipfer.prims.counter_rng (uniform, normal,
integer); each call consumes as many counters as it draws (normal: rounded up to even),
so a sequence of calls is reproducible and independent of the device and of the launch
geometry. Everything runs on the generator's device:

- gamma (Marsaglia-Tsang), poisson (inversion below 10, PTRS above) and binomial
  (inversion below n p = 10, BTRS above) are sampler prims (kernels/rng.cuh): element i
  takes counter offset + i and its rejection retries from a private stream seeded by it,
  at most 16 attempts, then a fixed fallback (the mode; astronomically rare);
- beta, dirichlet, chisquare and standard_t build on gamma; the other laws are
  compositions of the uniform and normal streams with hipfer's functions;
- permutations sort 64-bit random keys.

Differences from NumPy: the numbers are not NumPy's (different bit generator and
algorithms); results are 0-d Tensors where NumPy returns Python scalars (size=None with
scalar parameters); tensor parameters are validated with one device-to-host read of a
bool per check; ``shuffle`` takes Tensors only.
"""
from __future__ import annotations

import math as _math
import operator as _operator
import os as _os
import warnings as _warnings

import numpy as _np

from . import _creation as _cr
from . import _data_type_functions as _dtf
from . import _dtypes
from . import _elementwise as _ew
from . import _indexing as _ix
from . import _ops
from . import _searching as _se
from . import _sorting as _so
from . import _statistical as _st
from . import _views as _vw
from . import linalg as _la
from ._creation import _dev, _norm_shape
from ._tensor import Tensor
from .prims import counter_rng as _counter_rng
from .prims import descriptors as _d

__all__ = ["Generator", "Philox", "default_rng"]

_M64 = (1 << 64) - 1


def _fresh_seed() -> int:
    return int.from_bytes(_os.urandom(8), "little")


def _as_seed(seed, name: str) -> int:
    """An int (non-negative, as NumPy) or a sequence of them (mixed by SeedSequence)."""
    if isinstance(seed, (bool, _np.bool_)) or isinstance(seed, (float, _np.floating)):
        raise TypeError(f"{name}: seed must be an int or a sequence of ints, got "
                        f"{type(seed).__name__}")
    if isinstance(seed, (int, _np.integer)):
        if seed < 0:
            raise ValueError(f"{name}: seed must be non-negative, got {seed}")
        return int(seed) & _M64
    if isinstance(seed, _np.random.SeedSequence):
        ss = seed
    else:
        try:
            ss = _np.random.SeedSequence([int(_operator.index(s)) for s in seed])
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name}: seed must be an int or a sequence of non-negative "
                            f"ints") from e
    return int(ss.generate_state(1, _np.uint64)[0])


def _is_t(x) -> bool:
    return isinstance(x, Tensor)


def _shape_of(x) -> tuple:
    return tuple(x.shape) if _is_t(x) else ()


def _any(x) -> bool:
    """True when any element of the Python or tensor bool x is set (one sync for tensors)."""
    if _is_t(x):
        return x.size > 0 and bool(_st.any(x))
    return bool(_np.any(x))


class Generator:
    """NumPy's Generator over hipfer's counter-based stream: the numbers depend only on
    (seed, offset) and the call sequence, not on the device; each call advances offset
    by what it drew. seed=None draws fresh entropy; device= picks where draws live
    (default: the default device at each call)."""

    def __init__(self, seed=None, *, offset: int = 0, device=None):
        self.seed = _fresh_seed() if seed is None else _as_seed(seed, "hipfer.random.Generator")
        self.offset = int(offset)
        self.device = None if device is None else _dev(device)

    def __repr__(self):
        return f"Generator(seed={self.seed}, offset={self.offset})"

    @property
    def state(self) -> dict:
        """{'seed', 'offset'}: enough to replay the stream (Generator(seed, offset=...))."""
        return {"seed": self.seed, "offset": self.offset}

    def spawn(self, n_children: int) -> list:
        """n independent child generators (seeds mixed from this one's seed and offset
        by NumPy's SeedSequence; each call gives new ones); this generator's stream is
        left as it is."""
        n = _operator.index(n_children)
        done = getattr(self, "_spawned", 0)  # later calls give further children, as NumPy
        ss = _np.random.SeedSequence([self.seed, self.offset & _M64])
        self._spawned = done + n
        return [Generator(c, device=self.device) for c in ss.spawn(done + n)[done:]]

    # ------------------------------------------------------------------ raw streams
    def _where(self, device=None):
        return _dev(device if device is not None else self.device)

    def _draw(self, desc, shape, dtype, device=None, step_even=False):
        shape = _norm_shape(shape)
        out = _ops.generate(desc, shape, _dtypes.as_dtype(dtype), self._where(device),
                            seed=self.seed, offset=self.offset)
        n = _math.prod(shape)
        self.offset += n + (n & 1 if step_even else 0)
        return Tensor(out)

    def _u(self, shape, device=None):
        """float64 uniform on [0, 1)."""
        return self._draw(_d.Uniform(), shape, _dtypes.float64, device)

    def _z(self, shape, device=None):
        """float64 standard normal."""
        return self._draw(_d.Normal(), shape, _dtypes.float64, device, step_even=True)

    def _bits(self, shape, device=None):
        """uint64 raw random bits."""
        return self._draw(_d.Integer(0, 1 << 64), shape, _dtypes.uint64, device)

    # ------------------------------------------------------------------ parameters
    def _param(self, x, name: str, what: str, dtype=None):
        """A Python float for a real scalar, else a float64 (or dtype) Tensor on the
        generator's device."""
        dtype = dtype or _dtypes.float64
        if not _is_t(x) and _np.ndim(x) == 0 and not isinstance(x, _np.ndarray):
            if isinstance(x, (complex, _np.complexfloating)):
                raise TypeError(f"{name}: {what} must be real, got {x!r}")
            try:
                return float(x) if dtype.kind == "f" else int(_operator.index(x))
            except TypeError as e:
                raise TypeError(f"{name}: {what} must be a number, got "
                                f"{type(x).__name__}") from e
        dev = self._where()
        t = x if _is_t(x) else _cr.asarray(x, device=dev)
        if t.device != dev:
            t = t.to_device(dev)
        if t.dtype.kind == "c":
            raise TypeError(f"{name}: {what} must be real, got {t.dtype}")
        if dtype.kind == "i" and t.dtype.kind == "f":
            raise TypeError(f"{name}: {what} must be integers, got {t.dtype}")
        return _dtf.astype(t, dtype) if t.dtype != dtype else t

    @staticmethod
    def _size(name, size, *params) -> tuple:
        """The output shape: size, which the parameters must broadcast to, or else the
        parameters' broadcast shape."""
        try:
            bshape = _vw.broadcast_shapes(*(_shape_of(p) for p in params))
        except ValueError as e:
            raise ValueError(f"{name}: shape mismatch: the parameters cannot be broadcast "
                             f"together") from e
        if size is None:
            return bshape
        size = _norm_shape(size)
        try:
            ok = _vw.broadcast_shapes(size, bshape) == size
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{name}: shape mismatch: parameters of shape {bshape} cannot "
                             f"be broadcast to size {size}")
        return size

    @staticmethod
    def _check(name, bad, message):
        if _any(bad):
            raise ValueError(f"{name}: {message}")

    @staticmethod
    def _out(name, result, out, dtype):
        """result, or result written into out (NumPy's out= of the standard_* methods)."""
        if out is None:
            return result
        if not _is_t(out):
            raise TypeError(f"{name}: out must be a Tensor, got {type(out).__name__}")
        if out.dtype != dtype:
            raise TypeError(f"{name}: out has dtype {out.dtype}, the draw has {dtype}")
        out[...] = result
        return out

    @staticmethod
    def _float_dtype(name, dtype, half=False):
        """float32/float64 as NumPy (half=True: also float16, which the streams have)."""
        dt = _dtypes.as_dtype(dtype)
        ok = (_dtypes.float32, _dtypes.float64) + ((_dtypes.float16,) if half else ())
        if dt not in ok:
            raise TypeError(f"{name}: unsupported dtype {dt} (float32 or float64)")
        return dt

    @staticmethod
    def _out_size(name, size, out):
        if out is None:
            return size
        if size is not None and _norm_shape(size) != tuple(out.shape):
            raise ValueError(f"{name}: size {size} does not match out's shape {out.shape}")
        return tuple(out.shape)

    # ------------------------------------------------------------------ uniform
    def random(self, size=None, dtype=None, out=None, *, device=None) -> Tensor:
        """Uniform on [0, 1) (float64 or float32; float16 and device= are hipfer
        extensions)."""
        name = "hipfer.random.Generator.random"
        dt = self._float_dtype(name, dtype if dtype is not None else _dtypes.float64, True)
        size = self._out_size(name, size, out)
        r = self._draw(_d.Uniform(), () if size is None else size, dt,
                       out.device if out is not None else device)
        return self._out(name, r, out, dt)

    def uniform(self, low=0.0, high=1.0, size=None) -> Tensor:
        """Uniform on [low, high) (float64): low + (high - low) * random()."""
        name = "hipfer.random.Generator.uniform"
        low, high = self._param(low, name, "low"), self._param(high, name, "high")
        shape = self._size(name, size, low, high)
        span = high - low
        if _any(~_ew.isfinite(span) if _is_t(span) else not _math.isfinite(span)):
            raise OverflowError(f"{name}: high - low range exceeds valid bounds")
        return low + (high - low) * self._u(shape)

    def integers(self, low, high=None, size=None, dtype=None, endpoint=False) -> Tensor:
        """Uniform integers on [low, high) ([low, high] with endpoint=True; high=None:
        [0, low)) of any integer dtype or bool (default int64). Bounds may be tensors.
        Unbiased: Lemire's multiply-high map of 64 random bits with rejection."""
        name = "hipfer.random.Generator.integers"
        dt = _dtypes.as_dtype(dtype if dtype is not None else _dtypes.int64)
        if dt.kind not in "iub":
            raise TypeError(f"{name}: unsupported dtype {dt} (an integer dtype or bool)")
        if high is None:
            low, high = 0, low
        # bounds as Python ints or tensors of the widest integer type of dt's signedness
        wide = _dtypes.int64 if dt.kind == "i" else _dtypes.uint64
        low, high = self._bound(low, name, "low", wide), self._bound(high, name, "high", wide)
        info = _np.iinfo(_np.uint8 if dt.kind == "b" else dt)
        vmax = 1 if dt.kind == "b" else int(info.max)
        shape = self._size(name, size, low, high)
        self._check(name, low < int(info.min), f"low is out of bounds for {dt}")
        if endpoint:
            self._check(name, low > high, "low > high")
            top = high
        else:
            self._check(name, low >= high, "low >= high")
            top = high - 1  # a tensor high > low here: no wrap
        self._check(name, top > vmax, f"high is out of bounds for {dt}")
        work = _dtypes.uint8 if dt.kind == "b" else dt
        if not _is_t(low) and not _is_t(top):
            if _math.prod(shape) == 0:
                return _cr.empty(shape, dtype=dt, device=self._where())
            r = self._draw(_d.Integer(low, top + 1), shape, work)
        else:  # tensor bounds: the kernel's algorithm in uint64 tensor arithmetic
            r = _dtf.astype(self._integers_t(low, top, shape, work), work)
        return _dtf.astype(r, dt) if dt.kind == "b" else r

    def _bound(self, x, name, what, wide):
        """An integer bound: a Python int, or a tensor of dtype wide (int64/uint64)."""
        if not _is_t(x) and _np.ndim(x) == 0 and not isinstance(x, _np.ndarray):
            if isinstance(x, (float, _np.floating)) and _math.isfinite(x):
                return int(x)  # NumPy truncates float bounds
            if isinstance(x, (bool, _np.bool_)) or not isinstance(x, (int, _np.integer)):
                raise TypeError(f"{name}: {what} must be an integer, got {type(x).__name__}")
            return int(x)
        t = x if _is_t(x) else _cr.asarray(x, device=self._where())
        if t.dtype.kind == "f":  # NumPy truncates float bounds
            self._check(name, ~_ew.isfinite(t), f"{what} must be finite")
            t = _dtf.astype(t, _dtypes.int64)
        if t.dtype.kind not in "iub":
            raise TypeError(f"{name}: {what} must be integers, got {t.dtype}")
        if t.dtype.kind == "i" and wide == _dtypes.uint64:
            self._check(name, t < 0, f"{what} is out of bounds for unsigned dtypes")
        if t.dtype.kind == "u" and t.dtype.itemsize == 8 and wide == _dtypes.int64:
            self._check(name, t > _np.uint64(2**63 - 1), f"{what} is out of bounds")
        return _dtf.astype(t, wide) if t.dtype != wide else t

    def _integers_t(self, low, top, shape, work):
        """Tensor bounds [low, top]: the Integer prim's unbiased map (counter_rng.integer)
        with per-element spans. Lemire's rejection runs a fixed number of rounds: 2 for
        dtypes of 32 bits or less (span <= 2^32: the rejection chance per draw is below
        2^-32), counter_rng.INT_TRIES otherwise, as the kernel's bound."""
        u64 = _dtypes.uint64
        dev = self._where()
        lo = _dtf.astype(_as_tensor(low, dev, u64 if low >= 0 else _dtypes.int64)
                         if not _is_t(low) else low, u64)
        hi = _dtf.astype(_as_tensor(top, dev, u64 if top >= 0 else _dtypes.int64)
                         if not _is_t(top) else top, u64)
        span = _vw.broadcast_to(hi - lo + _np.uint64(1), shape)  # mod 2^64; 0 means 2^64
        safe = _pick(span == 0, _np.uint64(1), span)
        thresh = _pick(span == 0, _np.uint64(0), (_np.uint64(0) - safe) % safe)
        b = self._bits(shape)
        rounds = 2 if work.itemsize <= 4 else _counter_rng.INT_TRIES
        for _ in range(rounds - 1):
            b = _pick(b * span < thresh, _mix(b + _np.uint64(_counter_rng.GOLDEN)), b)
        return _pick(span == 0, b, _mulhi64(b, span)) + lo

    # ------------------------------------------------------------------ normal family
    def standard_normal(self, size=None, dtype=None, out=None, *, device=None) -> Tensor:
        """Standard normal (Box-Muller), float64 or float32 (float16 and device= are
        hipfer extensions)."""
        name = "hipfer.random.Generator.standard_normal"
        dt = self._float_dtype(name, dtype if dtype is not None else _dtypes.float64, True)
        size = self._out_size(name, size, out)
        r = self._draw(_d.Normal(), () if size is None else size, dt,
                       out.device if out is not None else device, step_even=True)
        return self._out(name, r, out, dt)

    def normal(self, loc=0.0, scale=1.0, size=None) -> Tensor:
        """Normal(loc, scale): loc + scale * standard_normal()."""
        name = "hipfer.random.Generator.normal"
        loc, scale = self._param(loc, name, "loc"), self._param(scale, name, "scale")
        shape = self._size(name, size, loc, scale)
        self._check(name, scale < 0, "scale < 0")
        return loc + scale * self._z(shape)

    def lognormal(self, mean=0.0, sigma=1.0, size=None) -> Tensor:
        """exp(normal(mean, sigma))."""
        name = "hipfer.random.Generator.lognormal"
        mean, sigma = self._param(mean, name, "mean"), self._param(sigma, name, "sigma")
        shape = self._size(name, size, mean, sigma)
        self._check(name, sigma < 0, "sigma < 0")
        return _ew.exp(mean + sigma * self._z(shape))

    def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8, *,
                            method="svd") -> Tensor:
        """mean + z @ A.T with cov = A A.T from svd (default), eigh or cholesky. Checking
        that cov is positive semi-definite reads one bool."""
        name = "hipfer.random.Generator.multivariate_normal"
        if method not in ("svd", "eigh", "cholesky"):
            raise ValueError(f"{name}: method must be 'svd', 'eigh' or 'cholesky', got "
                             f"{method!r}")
        if check_valid not in ("warn", "raise", "ignore"):
            raise ValueError(f"{name}: check_valid must equal 'warn', 'raise', or 'ignore'")
        dev = self._where()
        mean = _cr.asarray(mean, dtype=_dtypes.float64, device=dev)
        cov = _cr.asarray(cov, dtype=_dtypes.float64, device=dev)
        if mean.ndim != 1:
            raise ValueError(f"{name}: mean must be 1 dimensional")
        if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
            raise ValueError(f"{name}: cov must be 2 dimensional and square")
        if mean.shape[0] != cov.shape[0]:
            raise ValueError(f"{name}: mean and cov must have same length")
        k = mean.shape[0]
        shape = () if size is None else _norm_shape(size)
        if method == "cholesky":
            factor = _la.cholesky(cov)
            psd = None
        elif method == "eigh":
            s, u = _la.eigh(cov)
            psd = None if check_valid == "ignore" else ~_st.any(s < -tol)
            factor = u * _ew.sqrt(_ew.abs(s))
        else:
            u, s, vh = _la.svd(cov)
            factor = _vw.matrix_transpose(vh) * _ew.sqrt(s)
            if check_valid != "ignore":
                err = _ew.abs(_la.matmul(_vw.matrix_transpose(vh) * s, vh) - cov)
                psd = _st.all(err <= tol + tol * _ew.abs(cov))
        if psd is not None and check_valid != "ignore" and not bool(psd):
            if check_valid == "raise":
                raise ValueError(f"{name}: covariance is not symmetric positive-semidefinite.")
            _warnings.warn(f"{name}: covariance is not symmetric positive-semidefinite.",
                          RuntimeWarning, stacklevel=2)
        z = self._z(shape + (k,))
        return mean + _la.matmul(z, _vw.matrix_transpose(factor))

    # ------------------------------------------------------------------ exponential family
    def standard_exponential(self, size=None, dtype=None, method="zig", out=None) -> Tensor:
        """Standard exponential by inversion, -log1p(-random()), whatever method names
        ('zig' or 'inv'); float64 or float32."""
        name = "hipfer.random.Generator.standard_exponential"
        if method not in ("zig", "inv"):
            raise ValueError(f"{name}: method must be 'zig' or 'inv', got {method!r}")
        dt = self._float_dtype(name, dtype if dtype is not None else _dtypes.float64)
        size = self._out_size(name, size, out)
        r = -_ew.log1p(-self._u(() if size is None else size))
        return self._out(name, _dtf.astype(r, dt) if dt != r.dtype else r, out, dt)

    def _exp(self, shape):
        return -_ew.log1p(-self._u(shape))

    def exponential(self, scale=1.0, size=None) -> Tensor:
        """scale * standard_exponential()."""
        name = "hipfer.random.Generator.exponential"
        scale = self._param(scale, name, "scale")
        shape = self._size(name, size, scale)
        self._check(name, scale < 0, "scale < 0")
        return scale * self._exp(shape)

    def laplace(self, loc=0.0, scale=1.0, size=None) -> Tensor:
        """loc +- scale * exponential, the sign a fair coin (inversion of one uniform)."""
        name = "hipfer.random.Generator.laplace"
        loc, scale = self._param(loc, name, "loc"), self._param(scale, name, "scale")
        shape = self._size(name, size, loc, scale)
        self._check(name, scale < 0, "scale < 0")
        u = 1.0 - self._u(shape)  # (0, 1]
        e = _pick(u >= 0.5, -_ew.log(2.0 - 2.0 * u), _ew.log(2.0 * u))
        return loc + scale * e

    def logistic(self, loc=0.0, scale=1.0, size=None) -> Tensor:
        """loc + scale * log(u / (1 - u))."""
        name = "hipfer.random.Generator.logistic"
        loc, scale = self._param(loc, name, "loc"), self._param(scale, name, "scale")
        shape = self._size(name, size, loc, scale)
        self._check(name, scale < 0, "scale < 0")
        u = 1.0 - self._u(shape)  # (0, 1]
        return loc + scale * _ew.log(u / (1.0 - u))

    def gumbel(self, loc=0.0, scale=1.0, size=None) -> Tensor:
        """loc - scale * log(standard_exponential())."""
        name = "hipfer.random.Generator.gumbel"
        loc, scale = self._param(loc, name, "loc"), self._param(scale, name, "scale")
        shape = self._size(name, size, loc, scale)
        self._check(name, scale < 0, "scale < 0")
        u = 1.0 - self._u(shape)  # (0, 1]
        return loc - scale * _ew.log(-_ew.log(u))

    def weibull(self, a, size=None) -> Tensor:
        """standard_exponential() ** (1 / a); a = 0 gives 0 (as NumPy)."""
        name = "hipfer.random.Generator.weibull"
        a = self._param(a, name, "a")
        shape = self._size(name, size, a)
        self._check(name, a < 0, "a < 0")
        a = _as_tensor(a, self._where())
        e = self._exp(shape)
        return _pick(a == 0, 0.0, _ew.pow(e, 1.0 / _pick(a == 0, 1.0, a)))

    def pareto(self, a, size=None) -> Tensor:
        """Pareto II (Lomax, as NumPy): expm1(standard_exponential() / a)."""
        name = "hipfer.random.Generator.pareto"
        a = self._param(a, name, "a")
        shape = self._size(name, size, a)
        self._check(name, a <= 0, "a <= 0")
        return _ew.expm1(self._exp(shape) / a)

    def rayleigh(self, scale=1.0, size=None) -> Tensor:
        """scale * sqrt(2 * standard_exponential())."""
        name = "hipfer.random.Generator.rayleigh"
        scale = self._param(scale, name, "scale")
        shape = self._size(name, size, scale)
        self._check(name, scale < 0, "scale < 0")
        return scale * _ew.sqrt(2.0 * self._exp(shape))

    def standard_cauchy(self, size=None) -> Tensor:
        """A ratio of two standard normals."""
        shape = () if size is None else _norm_shape(size)
        z = self._z((2,) + shape)
        return z[0] / z[1]

    def geometric(self, p, size=None) -> Tensor:
        """Trials to the first success (int64, >= 1): ceil(log1p(-u) / log1p(-p))."""
        name = "hipfer.random.Generator.geometric"
        p = self._param(p, name, "p")
        shape = self._size(name, size, p)
        self._check(name, (p <= 0) | (p > 1) | (p != p) if _is_t(p) else not 0 < p <= 1,
                     "p <= 0, p > 1 or p contains NaNs")
        p = _as_tensor(p, self._where())
        u = self._u(shape)
        q = _ew.log1p(-_pick(p == 1, 0.5, p))
        k = _pick(p == 1, 1.0, _ew.ceil(_ew.log1p(-u) / q))
        return _dtf.astype(_ew.maximum(k, 1.0), _dtypes.int64)

    def power(self, a, size=None) -> Tensor:
        """Power distribution on [0, 1] with exponent a - 1: (1 - exp(-E)) ** (1 / a)
        for E standard exponential, NumPy's formula."""
        name = "hipfer.random.Generator.power"
        a = self._param(a, name, "a")
        shape = self._size(name, size, a)
        self._check(name, (a <= 0) | (a != a) if _is_t(a) else not a > 0,
                    "a <= 0 or a is NaN")
        return _ew.pow(-_ew.expm1(-self._exp(shape)), 1.0 / a)

    def logseries(self, p, size=None) -> Tensor:
        """Logarithmic series counts (int64, >= 1): Kemp's algorithm as NumPy runs it, on
        two uniforms per element; the rare rejected element (a count below 1 or V == 0)
        draws again from fresh counters, at most 16 rounds (then 1, the mode)."""
        name = "hipfer.random.Generator.logseries"
        p = self._param(p, name, "p")
        shape = self._size(name, size, p)
        self._check(name, (p < 0) | (p >= 1) | (p != p) if _is_t(p) else not 0 <= p < 1,
                    "p < 0, p >= 1 or p is NaN")
        r = _ew.log1p(-_as_tensor(p, self._where()))
        result = None
        todo = None
        for _ in range(16):
            v, u = self._u(shape), self._u(shape)
            q = -_ew.expm1(r * u)
            k = _ew.floor(1.0 + _ew.log(v) / _ew.log(q))
            inner = v <= q * q
            k = _pick(v >= p, 1.0, _pick(inner, k, 2.0 - _dtf.astype(v >= q, _dtypes.float64)))
            bad = inner & ((k < 1) | (v == 0)) & (v < p)
            result = k if result is None else _pick(todo, k, result)
            todo = bad if todo is None else todo & bad
            if not _any(todo):
                break
        result = _pick(todo, 1.0, result)
        return _dtf.astype(result, _dtypes.int64)

    def hypergeometric(self, ngood, nbad, nsample, size=None) -> Tensor:
        """Good items among nsample drawn without replacement from ngood good and nbad bad
        ones (int64): the urn drawn one item at a time, each draw one uniform per element,
        over min(nsample, total - nsample) draws (the smaller side, by symmetry) -- that
        many passes, and one read of their number when the parameters are tensors."""
        name = "hipfer.random.Generator.hypergeometric"
        args = [self._param(v, name, w, _dtypes.int64)
                for v, w in ((ngood, "ngood"), (nbad, "nbad"), (nsample, "nsample"))]
        g, b, n = args
        shape = self._size(name, size, g, b, n)
        self._check(name, g < 0, "ngood < 0")
        self._check(name, b < 0, "nbad < 0")
        self._check(name, n < 0, "nsample < 0")
        total = g + b
        self._check(name, total < n, "ngood + nbad < nsample")
        self._check(name, total > 10**9, "ngood + nbad > 10**9")
        dev = self._where()
        g, total, n = (_dtf.astype(_as_tensor(v, dev), _dtypes.float64) for v in (g, total, n))
        small = _ew.minimum(n, total - n)  # draws actually made
        steps = int(_st.max(small)) if small.size else 0
        good = _vw.broadcast_to(g, shape) * 1.0
        left = _vw.broadcast_to(total, shape) * 1.0
        for i in range(steps):
            live = small > i
            took = live & (self._u(shape) * left < good)
            good = good - _dtf.astype(took, _dtypes.float64)
            left = left - _dtf.astype(live, _dtypes.float64)
        drawn = g - good  # good items among the `small` drawn
        # nsample > total / 2: the drawn items are the ones left out
        res = _pick(n > total - n, g - drawn, drawn)
        return _dtf.astype(_vw.broadcast_to(res, shape), _dtypes.int64)

    def f(self, dfnum, dfden, size=None) -> Tensor:
        """Fisher's F: (chisquare(dfnum) / dfnum) / (chisquare(dfden) / dfden)."""
        name = "hipfer.random.Generator.f"
        dfnum = self._param(dfnum, name, "dfnum")
        dfden = self._param(dfden, name, "dfden")
        shape = self._size(name, size, dfnum, dfden)
        self._check(name, dfnum <= 0, "dfnum <= 0")
        self._check(name, dfden <= 0, "dfden <= 0")
        num = 2.0 * _ew.exp(self._log_gamma(dfnum / 2.0, shape)) / dfnum
        den = 2.0 * _ew.exp(self._log_gamma(dfden / 2.0, shape)) / dfden
        return num / den

    # ------------------------------------------------------------------ gamma family
    def _sample(self, desc, params, shape):
        """A parametric sampler prim (LogGamma, Poisson, Binomial) on float64 parameters
        broadcast to shape: one counter per element, each element's retries on its own
        stream (hipfer.prims.counter_rng), so the draws do not depend on the device."""
        dev = self._where()
        ts = [_vw.broadcast_to(_as_tensor(p, dev), shape) for p in params]
        out = _ops.run(desc, ts, device=dev, seed=self.seed, offset=self.offset)
        self.offset += _math.prod(shape)
        return Tensor(out)

    def _log_gamma(self, a, shape):
        """log of standard gamma variates of shape a (float >= 0 or a float64 tensor,
        broadcast to shape): Marsaglia-Tsang, boosted by u^(1/a) for a < 1, in log space
        so that tiny shapes underflow only at the final exp."""
        return self._sample(_d.LogGamma(), [a], shape)

    def standard_gamma(self, shape, size=None, dtype=None, out=None) -> Tensor:
        """Standard gamma (Marsaglia-Tsang with rejection; shape < 1 by boosting)."""
        name = "hipfer.random.Generator.standard_gamma"
        dt = self._float_dtype(name, dtype if dtype is not None else _dtypes.float64)
        size = self._out_size(name, size, out)
        a = self._param(shape, name, "shape")
        oshape = self._size(name, size, a)
        self._check(name, a < 0, "shape < 0")
        r = _ew.exp(self._log_gamma(a, oshape))
        return self._out(name, _dtf.astype(r, dt) if dt != r.dtype else r, out, dt)

    def gamma(self, shape, scale=1.0, size=None) -> Tensor:
        """scale * standard_gamma(shape)."""
        name = "hipfer.random.Generator.gamma"
        a, scale = self._param(shape, name, "shape"), self._param(scale, name, "scale")
        oshape = self._size(name, size, a, scale)
        self._check(name, a < 0, "shape < 0")
        self._check(name, scale < 0, "scale < 0")
        return scale * _ew.exp(self._log_gamma(a, oshape))

    def chisquare(self, df, size=None) -> Tensor:
        """2 * standard_gamma(df / 2)."""
        name = "hipfer.random.Generator.chisquare"
        df = self._param(df, name, "df")
        shape = self._size(name, size, df)
        self._check(name, df <= 0, "df <= 0")
        return 2.0 * _ew.exp(self._log_gamma(df / 2.0, shape))

    def standard_t(self, df, size=None) -> Tensor:
        """Student's t: z / sqrt(chisquare(df) / df)."""
        name = "hipfer.random.Generator.standard_t"
        df = self._param(df, name, "df")
        shape = self._size(name, size, df)
        self._check(name, df <= 0, "df <= 0")
        z = self._z(shape)
        g = _ew.exp(self._log_gamma(df / 2.0, shape))
        return z * _ew.sqrt(df / (2.0 * g))

    def beta(self, a, b, size=None) -> Tensor:
        """x / (x + y) for x, y standard gamma of shapes a, b (in log space: tiny shapes
        give 0 or 1, not NaN)."""
        name = "hipfer.random.Generator.beta"
        a, b = self._param(a, name, "a"), self._param(b, name, "b")
        shape = self._size(name, size, a, b)
        self._check(name, a <= 0, "a <= 0")
        self._check(name, b <= 0, "b <= 0")
        lx, ly = self._log_gamma(a, shape), self._log_gamma(b, shape)
        return 1.0 / (1.0 + _ew.exp(ly - lx))

    def dirichlet(self, alpha, size=None) -> Tensor:
        """Normalised standard gamma draws, shape size + (k,) (in log space, as beta)."""
        name = "hipfer.random.Generator.dirichlet"
        alpha = _cr.asarray(alpha, dtype=_dtypes.float64, device=self._where())
        if alpha.ndim != 1:
            raise ValueError(f"{name}: alpha must be a one-dimensional sequence of floats")
        self._check(name, (alpha < 0) | (alpha != alpha), "alpha < 0 or alpha contains NaNs")
        shape = (() if size is None else _norm_shape(size)) + tuple(alpha.shape)
        lg = self._log_gamma(alpha, shape)
        if _math.prod(shape) == 0:
            return _ew.exp(lg)
        top = _st.max(lg, axis=-1, keepdims=True)
        w = _ew.exp(lg - _pick(top == -_math.inf, 0.0, top))  # all alpha 0: all weights 0
        total = _st.sum(w, axis=-1, keepdims=True)
        return w / _pick(total == 0, 1.0, total)

    # ------------------------------------------------------------------ counts
    def poisson(self, lam=1.0, size=None) -> Tensor:
        """Poisson counts (int64): inversion over a table for lam < 10, PTRS (Hormann's
        transformed rejection, as NumPy) above."""
        name = "hipfer.random.Generator.poisson"
        lam = self._param(lam, name, "lam")
        shape = self._size(name, size, lam)
        self._check(name, (lam < 0) | (lam != lam) if _is_t(lam) else not lam >= 0,
                    "lam < 0 or lam is NaN")
        self._check(name, lam > 9.2e18, "lam value too large")
        return self._sample(_d.Poisson(), [lam], shape)

    def binomial(self, n, p, size=None) -> Tensor:
        """Binomial counts (int64): inversion over a table for n min(p, 1-p) < 10, BTRS
        (Hormann's transformed rejection) above; p > 1/2 samples n - B(n, 1 - p)."""
        name = "hipfer.random.Generator.binomial"
        if isinstance(n, (float, _np.floating)) and _math.isfinite(n):
            n = int(n)  # a float scalar n truncates, as NumPy (a float tensor is refused)
        n = self._param(n, name, "n", _dtypes.int64)
        p = self._param(p, name, "p")
        shape = self._size(name, size, n, p)
        self._check(name, n < 0, "n < 0")
        self._check(name, (p < 0) | (p > 1) | (p != p) if _is_t(p) else not 0 <= p <= 1,
                    "p < 0, p > 1 or p is NaN")
        n = _dtf.astype(n, _dtypes.float64) if _is_t(n) else float(n)
        return self._sample(_d.Binomial(), [n, p], shape)

    # ------------------------------------------------------------------ permutations
    def _perm(self, n: int):
        """A uniformly random permutation of range(n) (int64 indices): sorted random
        64-bit keys (a tie, probability ~n^2 / 2^65, keeps index order)."""
        return _so.argsort(self._bits((n,)), stable=True)

    def permutation(self, x, axis=0) -> Tensor:
        """A permuted range(x) (int x) or a permuted copy of x along axis."""
        name = "hipfer.random.Generator.permutation"
        if isinstance(x, (int, _np.integer)) and not isinstance(x, (bool, _np.bool_)):
            return self._perm(int(x))
        x = x if _is_t(x) else _cr.asarray(x, device=self._where())
        if x.ndim == 0:
            raise _np.exceptions.AxisError(f"{name}: x must be an integer or at least "
                                          f"1-dimensional")
        ax = _axis(name, axis, x.ndim)
        return _ix.take(x, self._perm(x.shape[ax]), axis=ax)

    def shuffle(self, x, axis=0) -> None:
        """Shuffle the Tensor x in place along axis (hipfer: Tensors only, not lists)."""
        name = "hipfer.random.Generator.shuffle"
        if not _is_t(x):
            raise TypeError(f"{name}: x must be a Tensor, got {type(x).__name__}")
        if x.ndim == 0:
            raise TypeError(f"{name}: x must be at least 1-dimensional")
        ax = _axis(name, axis, x.ndim)
        x[...] = _ix.take(x, self._perm(x.shape[ax]), axis=ax)

    def permuted(self, x, *, axis=None, out=None) -> Tensor:
        """x with each 1-d slice along axis shuffled independently (axis=None: all of x
        as one slice); into out if given (out may be x)."""
        name = "hipfer.random.Generator.permuted"
        x = x if _is_t(x) else _cr.asarray(x, device=self._where())
        if out is not None:
            if not _is_t(out):
                raise TypeError(f"{name}: out must be a Tensor, got {type(out).__name__}")
            if tuple(out.shape) != tuple(x.shape):
                raise ValueError(f"{name}: out must have the same shape as x")
        if axis is None:
            flat = _vw.reshape(x, (-1,))
            r = _vw.reshape(_ix.take(flat, self._perm(flat.shape[0]), axis=0), x.shape)
        else:
            ax = _axis(name, axis, x.ndim)
            keys = self._bits(tuple(x.shape))
            r = _ix.take_along_axis(x, _so.argsort(keys, axis=ax, stable=True), axis=ax)
        if out is None:
            return r
        out[...] = r
        return out

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True) -> Tensor:
        """Samples of range(a) (int a) or of a's slices along axis, uniform or with
        probabilities p; without replacement: the first of a random order (weighted:
        exponential races, E_i / p_i). Checks of p read one bool each."""
        name = "hipfer.random.Generator.choice"
        dev = self._where()
        if isinstance(a, (int, _np.integer)) and not isinstance(a, (bool, _np.bool_)):
            pop, n = None, int(a)
            if n < 0:
                raise ValueError(f"{name}: a must be a positive integer unless no samples "
                                 f"are taken")
        else:
            pop = a if _is_t(a) else _cr.asarray(a, device=dev)
            if pop.ndim == 0:
                raise ValueError(f"{name}: a must be a sequence or an integer, not a 0-d "
                                 f"tensor")
            axis = _axis(name, axis, pop.ndim)
            n = pop.shape[axis]
        shape = () if size is None else _norm_shape(size)
        k = _math.prod(shape)
        if n == 0 and k:
            raise ValueError(f"{name}: a cannot be empty unless no samples are taken")
        if p is not None:
            p = _cr.asarray(p, device=dev)
            if p.dtype.kind not in "fiu":
                raise TypeError(f"{name}: p must be real, got {p.dtype}")
            p = _dtf.astype(p, _dtypes.float64)
            if p.ndim != 1:
                raise ValueError(f"{name}: p must be 1-dimensional")
            if p.shape[0] != n:
                raise ValueError(f"{name}: a and p must have same size")
            self._check(name, ~_ew.isfinite(p) | (p < 0), "probabilities are not "
                        "non-negative")
            self._check(name, _ew.abs(_st.sum(p) - 1.0) > _math.sqrt(_np.finfo(_np.float64).eps),
                        "probabilities do not sum to 1")
        if replace:
            if p is None:
                idx = self.integers(0, max(n, 1), size=shape)
            else:
                cdf = _st.cumulative_sum(p)
                cdf = cdf / cdf[-1]
                u = self._u(shape)
                idx = _ew.minimum(_se.searchsorted(cdf, u, side="right"), n - 1)
                idx = _dtf.astype(idx, _dtypes.int64)
        else:
            if k > n:
                raise ValueError(f"{name}: Cannot take a larger sample than population when "
                                 f"replace is False")
            if p is None:
                order = self._perm(n)
            else:
                self._check(name, _st.sum(_dtf.astype(p > 0, _dtypes.int64)) < k,
                            "Fewer non-zero entries in p than size")
                race = self._exp((n,)) / p  # p = 0: +inf, never before a positive one
                order = _so.argsort(race, stable=True)
            idx = _vw.reshape(order[:k], shape)
        if pop is None:
            return idx
        return _ix.take(pop, _vw.reshape(idx, (-1,)), axis=axis).reshape(
            pop.shape[:axis] + shape + pop.shape[axis + 1:])


def _axis(name, axis, ndim):
    try:
        return _vw._axis(axis, ndim)
    except _np.exceptions.AxisError as e:
        raise _np.exceptions.AxisError(f"{name}: {e}") from None


def _pick(cond, x, y):
    """where(cond, x, y), also for a Python bool cond (scalar parameters)."""
    if not _is_t(cond):
        return x if cond else y
    return _ew.where(cond, x, y)


def _as_tensor(x, device, dtype=None):
    return x if _is_t(x) else _cr.full((), x, dtype=dtype or _dtypes.float64, device=device)


def _mulhi64(a: Tensor, b: Tensor) -> Tensor:
    """High 64 bits of a * b for uint64 tensors (counter_rng.mulhi64, on tensors)."""
    m32 = _np.uint64(0xFFFFFFFF)
    s32 = _np.uint64(32)
    a_lo, a_hi = a & m32, a >> s32
    b_lo, b_hi = b & m32, b >> s32
    lo_lo, hi_lo, lo_hi, hi_hi = a_lo * b_lo, a_hi * b_lo, a_lo * b_hi, a_hi * b_hi
    cross = (lo_lo >> s32) + (hi_lo & m32) + lo_hi
    return hi_hi + (hi_lo >> s32) + (cross >> s32)


def _mix(z: Tensor) -> Tensor:
    """SplitMix64's output function (counter_rng.mix) on a uint64 tensor."""
    z = z ^ (z >> _np.uint64(30))
    z = z * _counter_rng._M1
    z = z ^ (z >> _np.uint64(27))
    z = z * _counter_rng._M2
    return z ^ (z >> _np.uint64(31))


class Philox:
    """A seed holder in the shape of NumPy's bit generators (``_seed_seq``, made from an
    int, a SeedSequence or None), for code that builds generators from one -- Dask's
    ``da.random.default_rng`` spawns one per block. ``default_rng(philox)`` gives the
    hipfer Generator of its seed; the counter-based streams themselves are hipfer's."""

    def __init__(self, seed=None):
        self._seed_seq = (seed if isinstance(seed, _np.random.SeedSequence)
                          else _np.random.SeedSequence(seed))

    @property
    def seed_seq(self):
        return self._seed_seq

    def spawn(self, n_children: int) -> list:
        return [Philox(s) for s in self._seed_seq.spawn(n_children)]

    def __repr__(self):
        return f"hipfer.random.Philox(entropy={self._seed_seq.entropy})"


def default_rng(seed=None, *, device=None) -> Generator:
    """NumPy's default_rng: seed=None draws fresh entropy (_os.urandom), an int (or a
    sequence of ints, a SeedSequence, a Philox) gives a reproducible stream, a Generator
    is returned as is. device= (a hipfer extension) picks where the draws live."""
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, Philox):
        seed = seed.seed_seq
    return Generator(seed, device=device)

del annotations  # the __future__ feature, not an API name
