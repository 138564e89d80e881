"""NumPy's dispatch protocols on the Tensor: NEP 13 (``__array_ufunc__``), NEP 18
(``__array_function__``) and NEP 35 (``like=``), as CuPy has them for its ndarray.

The mapping is general and by name, so a NumPy function that hipfer gains later is
dispatched with no new code here:

- a ufunc ``np.<name>`` and a function ``np.<name>`` -> ``hipfer.<name>``;
  ``np.linalg.<name>`` -> ``hipfer.linalg.<name>``; ``np.fft.<name>`` ->
  ``hipfer.fft.<name>`` (found by the function's ``__module__`` and ``__name__``);
- ``ALIASES`` names the NumPy functions whose hipfer name differs (amax -> max, ...),
  ``ADAPTERS`` the few whose semantics need more than a rename (np.diagonal's
  axis1/axis2, np.take and np.squeeze with axis=None, np.linalg.pinv's default cutoff).

Arguments are bound with NumPy's own signature and passed on by ``_call``: a NumPy
parameter that hipfer has under the same name (after ``RENAMES``) goes by keyword, the
others fill hipfer's positional-only parameters in order; a NumPy argument left at its
default that hipfer does not take is dropped, one set to something else raises TypeError
("numpy.sum(): hipfer does not support where= yet"). ``out=`` (both protocols),
``where=`` and ``dtype=`` (ufuncs) are handled here for every function; so are the ufunc
methods ``reduce``, ``accumulate``, ``outer`` and ``at`` (see ``REDUCE``,
``ACCUMULATE``, ``AT``). The details:

- ``out=``: the result is cast to out's dtype under NumPy's 'same_kind' rule and stored
  (a ufunc's result may broadcast to out's shape; a function's must match it); out is
  returned. An out that is a NumPy array gives NotImplemented (device data is never
  written to the host implicitly);
- ``where=`` (ufuncs): ``where(mask, result, out)``; without out, the masked places hold
  zeros (NumPy leaves them unset);
- ``dtype=``: a ufunc casts its inputs to it ('same_kind') and computes there; a function
  whose hipfer counterpart has no dtype= computes in it (mean, std, var) or casts its
  result to it;
- ``reduce``: add, multiply, maximum, minimum, logical_and, logical_or (axis defaults to
  0, as NumPy's does; initial= and where= are refused); ``accumulate``: add, multiply;
  ``outer``: every binary ufunc; ``at``: add and subtract, unbuffered (repeated indices
  accumulate) through IndexPut's accumulating scatter, with integer-array indices;
- NEP 35: a NumPy creation function called with ``like=t`` (asarray, array, zeros, ones,
  full, empty, arange, eye, identity, ...) runs hipfer's counterpart with
  ``device=t.device``.

Operands that are not Tensors -- NumPy arrays, lists and tuples -- become tensors on the
Tensor operand's device (host data the user passed explicitly moves there); Python and
NumPy scalars stay scalars, so they keep NumPy 2's weak/strong promotion. An operand of a
foreign array type (a CuPy or Dask array, a torch tensor), an ``out`` that is not a
Tensor, and every function hipfer lacks give NotImplemented, so NumPy raises TypeError
naming the function: nothing is ever converted to a NumPy array behind the user's back.
Results are Tensors (0-d tensors where NumPy returns scalars, as CuPy does).
"""
from __future__ import annotations

import inspect

import numpy as np

from ._core import cast, store_out
from ._creation import asarray, zeros
from ._indexing import index_put
from ._elementwise import where as _where
from ._numpy_signatures import SIGNATURES
from ._tensor import Tensor
from ._views import broadcast_to, diagonal, moveaxis, reshape

#: NumPy name -> hipfer name, where they differ (ufuncs and functions alike)
ALIASES = {
    "amax": "max", "amin": "min", "round": "around",  # np.round has decimals=
}

#: per NumPy function: NumPy parameter name -> hipfer parameter name
RENAMES = {
    "clip": {"a_min": "min", "a_max": "max"},
    "std": {"ddof": "correction"}, "var": {"ddof": "correction"},
}

#: NumPy defaults that differ from hipfer's and must be passed on
DEFAULTS: dict = {}

#: ufunc.reduce / ufunc.accumulate / ufunc.at -> the hipfer function that does it
REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
          "logical_and": "all", "logical_or": "any"}
ACCUMULATE = {"add": "cumulative_sum", "multiply": "cumulative_prod"}
AT = ("add", "subtract")  # IndexPut accumulates by addition only

#: NumPy functions whose dtype= is the dtype they compute in (the input is cast to it);
#: for the others hipfer lacks dtype= for, it is the result's dtype
_DTYPE_IN = frozenset({"mean", "std", "var"})

_UFUNC_KEYS = ("casting", "order", "subok", "signature", "axes", "axis", "keepdims")
_UFUNC_DEFAULTS = {"casting": "same_kind", "order": "K", "subok": True}

# NumPy parameters that hold arrays: a list or tuple there becomes a tensor, and in a
# sequence parameter ('arrays', ...) each element does
_ARRAY_PARAMS = frozenset({"a", "x", "x1", "x2", "b", "v", "y", "condition", "m", "arr",
                           "ar", "ar1", "ar2", "element", "test_elements", "indices",
                           "values", "val", "object", "prototype", "A", "start", "stop",
                           "repeats"})
_SEQ_PARAMS = frozenset({"arrays", "tup", "xi", "args", "operands"})
# NumPy functions whose sequence is a nesting to keep (np.block's list of lists of blocks):
# passed on as given, the hipfer function converts its leaves
_NESTED = frozenset({"block"})


# ------------------------------------------------------------------ adapters
def _diagonal(x, /, offset=0, axis1=0, axis2=1):
    return diagonal(moveaxis(x, (axis1, axis2), (-2, -1)), offset=offset)


def _take(ns, x, indices, /, axis=None):
    if axis is None and x.ndim != 1:  # NumPy takes from the flattened array
        x, axis = reshape(x, (-1,)), 0
    return ns.take(x, indices, axis=axis)


def _squeeze(ns, x, /, axis=None):
    if axis is None:  # NumPy drops every axis of length one
        axis = tuple(i for i, n in enumerate(x.shape) if n == 1)
    return ns.squeeze(x, axis)


def _pinv(ns, a, /, rcond=None, hermitian=False, *, rtol=np._NoValue):
    """np.linalg.pinv: NumPy's cutoff 1e-15 when neither rcond nor rtol is given (hipfer's
    pinv has the standard's default, max(M, N) * eps)."""
    if rcond is not None and rtol is not np._NoValue:
        raise ValueError("numpy.linalg.pinv(): rcond and rtol cannot both be given")
    if rcond is None:
        rcond = 1e-15 if rtol is np._NoValue else rtol
    return ns.linalg.pinv(a, rcond=rcond, hermitian=hermitian)


#: (NumPy module, name) -> adapter; those taking the namespace first are marked True
ADAPTERS = {
    ("numpy", "diagonal"): (_diagonal, False),
    ("numpy", "take"): (_take, True),
    ("numpy", "squeeze"): (_squeeze, True),
    ("numpy.linalg", "pinv"): (_pinv, True),
}


# ------------------------------------------------------------------ lookup
_NS: dict = {}  # "numpy" / "numpy.linalg" / "numpy.fft" -> the hipfer (sub)module


def _public(mod, name: str):
    """mod.<name> when it is a public hipfer function, else None (no modules, classes,
    dtypes, constants or names a module merely imported)."""
    if name.startswith("_"):
        return None
    names = getattr(mod, "__all__", None)
    if names is not None and name not in names and mod is not _NS.get("numpy"):
        return None
    fn = getattr(mod, name, None)
    if fn is None or isinstance(fn, (type, np.dtype)) or not callable(fn):
        return None
    if not str(getattr(fn, "__module__", "")).startswith("hipfer"):
        return None
    return fn


_TARGETS: dict = {}  # (module, name) -> (callable, np_name, takes_ns) or None


def target(module: str, name: str):
    """(hipfer callable, NumPy name, whether it takes the namespace first) for NumPy's
    module.name, or None when hipfer has no counterpart."""
    key = (module, name)
    if key in _TARGETS:
        return _TARGETS[key]
    found = None
    if key in ADAPTERS:
        fn, takes_ns = ADAPTERS[key]
        found = (fn, name, takes_ns)
    elif module in _NS:
        fn = _public(_NS[module], ALIASES.get(name, name))
        found = None if fn is None else (fn, name, False)
    _TARGETS[key] = found
    return found


def _module_of(func) -> str:
    """'numpy', 'numpy.linalg', 'numpy.fft' or 'numpy.lib.stride_tricks' for NumPy's
    functions (else the module)."""
    mod = getattr(func, "__module__", None) or "numpy"
    for known in ("numpy.linalg", "numpy.fft", "numpy.lib.stride_tricks"):
        if mod.startswith(known):
            return known
    return "numpy" if mod.startswith("numpy") else mod


# ------------------------------------------------------------------ operands
def _is_foreign(v) -> bool:
    """An array of another library (CuPy, Dask, torch, ...): never converted here."""
    if isinstance(v, (Tensor, np.ndarray, np.generic)):
        return False
    t = type(v)
    return any(hasattr(t, a) for a in ("__array_ufunc__", "__array_function__",
                                       "__dlpack__", "__cuda_array_interface__",
                                       "__array_namespace__"))


def _device_of(values):
    for v in values:
        if isinstance(v, Tensor):
            return v.device
        if isinstance(v, (list, tuple)):
            d = _device_of(v)
            if d is not None:
                return d
    return None


def _contains_tensor(v) -> bool:
    return isinstance(v, Tensor) or (isinstance(v, (list, tuple)) and
                                     any(map(_contains_tensor, v)))


def _to_tensor(v, device):
    """v as a tensor on device: explicit host data the user passed moves there."""
    if isinstance(v, Tensor):
        return v
    if _contains_tensor(v):  # a nested sequence of tensors: stack it on the device
        return _NS["numpy"].stack([_to_tensor(e, device) for e in v])
    return asarray(v, device=device)


def _convert(v, device, array_param: bool):
    if isinstance(v, np.ndarray) or (array_param and isinstance(v, (list, tuple))):
        return _to_tensor(v, device)
    return v


# ------------------------------------------------------------------ binding
_SIGS: dict = {}

#: NumPy C functions whose published signature is narrower than what they accept
#: (np.arange(0, 4, 1, np.int64) passes dtype positionally: Dask's arange does), or that
#: publish none (fromstring)
_TRUE_SIGNATURES = {
    "numpy.arange": "(start_or_stop, /, stop=None, step=1, dtype=None, *, device=None, "
                    "like=None)",
    "numpy.fromstring": "(string, dtype=float, count=-1, *, sep, like=None)",
}


def _from_text(text):
    ns: dict = {}
    exec(f"def f{text}: pass", ns)  # our own tables' text: literals only
    return inspect.signature(ns["f"])


def _signature(fn):
    s = _SIGS.get(fn, False)
    if s is False:
        fixed = _TRUE_SIGNATURES.get(f"{_module_of(fn)}.{getattr(fn, '__name__', '')}")
        try:
            s = _from_text(fixed) if fixed else inspect.signature(fn)
        except (TypeError, ValueError):
            s = _c_signature(fn)
        _SIGS[fn] = s
    return s


def _c_signature(fn):
    """A NumPy C function's signature where NumPy (< 2.3) gives none: from the table
    tools/gen_numpy_signatures.py made with a NumPy that does."""
    text = SIGNATURES.get(f"{_module_of(fn)}.{getattr(fn, '__name__', '')}")
    return None if text is None else _from_text(text)


def _is_default(value, default) -> bool:
    if value is default:
        return True
    if default is inspect.Parameter.empty or isinstance(value, (Tensor, np.ndarray)):
        return False
    try:
        return type(value) is type(default) and bool(value == default)
    except Exception:
        return False


def _unsupported(qual: str, name: str) -> TypeError:
    return TypeError(f"{qual}(): hipfer does not support {name}= yet")


def _call(qual: str, np_name: str, np_sig, fn, takes_ns, args, kwargs, device,
          extra=None):
    """Call hipfer's fn with NumPy's arguments (see the module docstring)."""
    try:
        bound = np_sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{qual}(): {e}") from None
    h_sig = _signature(fn)
    h_params = list(h_sig.parameters.values())[1 if takes_ns else 0:]
    P = inspect.Parameter
    slots = [p for p in h_params if p.kind is P.POSITIONAL_ONLY]
    has_var = any(p.kind is P.VAR_POSITIONAL for p in h_params)
    by_name = {p.name: p for p in h_params if p.kind in (P.POSITIONAL_OR_KEYWORD,
                                                         P.KEYWORD_ONLY)}
    has_varkw = any(p.kind is P.VAR_KEYWORD for p in h_params)
    renames = RENAMES.get(np_name, {})
    defaults = DEFAULTS.get(np_name, {})
    pos, kw = [], {}
    for p in np_sig.parameters.values():
        given = p.name in bound.arguments
        value = bound.arguments[p.name] if given else defaults.get(p.name, p.default)
        if p.kind is P.VAR_POSITIONAL:
            if given:
                pos.extend(_convert(v, device, True) for v in value)
            continue
        if p.kind is P.VAR_KEYWORD:  # passed on where hipfer takes **kwargs too (np.pad's
            #                          mode options, np.savez's arrays, apply_along_axis's)
            if given and value and not has_varkw:
                raise _unsupported(qual, next(iter(value)))
            kw.update({k: _convert(v, device, True) for k, v in value.items()} if given else {})
            continue
        is_array = p.name in _ARRAY_PARAMS or p.name in _SEQ_PARAMS
        if np_name in _NESTED:  # np.block: the nesting is the argument
            pass
        elif given and p.name in _SEQ_PARAMS and isinstance(value, (list, tuple)):
            value = [_convert(v, device, True) for v in value]
        elif given:
            value = _convert(value, device, is_array)
        name = renames.get(p.name, p.name)
        real = value is not np._NoValue and value is not P.empty
        if name in by_name:
            hp = by_name[name]
            if (given and not _is_default(value, p.default)) or p.name in defaults or (
                    hp.default is P.empty and real):
                kw[name] = value
        elif len(pos) < len(slots) and p.kind is not P.KEYWORD_ONLY:
            if given or p.name in defaults:
                pos.append(value)
            elif slots[len(pos)].default is P.empty and real:
                pos.append(value)
            elif slots[len(pos)].default is not P.empty:
                pos.append(slots[len(pos)].default)
        elif given and not _is_default(value, p.default):
            if has_varkw:
                kw[name] = value
            elif has_var and p.kind is not P.KEYWORD_ONLY:
                pos.append(value)
            else:
                raise _unsupported(qual, p.name)
    # trailing positional slots filled with their defaults add nothing
    required = sum(1 for s in slots if s.default is P.empty)
    while not has_var and required < len(pos) <= len(slots) and \
            pos[-1] is slots[len(pos) - 1].default:
        pos.pop()
    for k, v in (extra or {}).items():
        if k in by_name:
            kw[k] = v
    if "dtype" in kw and kw["dtype"] is not None:
        kw["dtype"] = np.dtype(kw["dtype"])
    return fn(_NS["numpy"], *pos, **kw) if takes_ns else fn(*pos, **kw)


# ------------------------------------------------------------------ out= / where=
def _store(qual: str, res, out: Tensor, allow_broadcast: bool) -> Tensor:
    """res written into out under NumPy's rules for out= (_core.store_out)."""
    return store_out(res, out, f"{qual}()", allow_broadcast=allow_broadcast)


def _out_tuple(out):
    if out is None:
        return None
    out = out if isinstance(out, tuple) else (out,)
    return None if all(o is None for o in out) else out


# ------------------------------------------------------------------ __array_ufunc__
def _ufunc_fn(name: str):
    t = target("numpy", name)
    return None if t is None else t[0]


def _check_dtype_cast(qual, inputs, dt):
    for i, v in enumerate(inputs):
        if isinstance(v, (Tensor, np.ndarray, np.generic)) and \
                not np.can_cast(v.dtype, dt, "same_kind"):
            raise TypeError(f"{qual}(): cannot cast input {i} from {v.dtype} to {dt} with "
                            "casting rule 'same_kind'")


def _with_dtype(qual, inputs, dtype):
    """Inputs cast to dtype (NumPy computes the loop in that dtype)."""
    dt = np.dtype(dtype)
    _check_dtype_cast(qual, inputs, dt)
    return [cast(v, dt) if isinstance(v, Tensor) else
            np.asarray(v).astype(dt)[()] if isinstance(v, np.generic) else v
            for v in inputs]


def _finish(qual, res, out, where, allow_broadcast=True):
    """Apply where= and out= to a ufunc's result."""
    if where is not True and where is not None:
        base = out[0] if out else zeros(res.shape, dtype=res.dtype, device=res.device)
        mask = _to_tensor(where, res.device)
        if base.dtype != res.dtype and np.can_cast(res.dtype, base.dtype, "same_kind"):
            res = cast(res, base.dtype)
        res = _where(mask, res, base)
    if out:
        if len(out) != 1:
            raise TypeError(f"{qual}(): hipfer's ufuncs have one output")
        return _store(qual, res, out[0], allow_broadcast)
    return res


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NEP 13: NumPy's ufunc (and its methods) computed by hipfer on the tensors' device."""
    name = ufunc.__name__
    qual = f"numpy.{name}" + ("" if method == "__call__" else f".{method}")
    out = _out_tuple(kwargs.pop("out", None))
    if any(_is_foreign(v) for v in inputs) or (
            out and not all(isinstance(o, Tensor) for o in out)):
        return NotImplemented
    device = _device_of(list(inputs) + list(out or ()))
    inputs = [v if method == "at" and i == 1 else _convert(v, device, True)
              for i, v in enumerate(inputs)]  # at's index keeps its tuple form
    if not any(isinstance(v, Tensor) for v in inputs):
        inputs[0] = _to_tensor(inputs[0], device)
    if method == "__call__":
        return _ufunc_call(qual, name, inputs, out, kwargs)
    if method == "outer":
        return _ufunc_outer(qual, name, inputs, out, kwargs)
    if method == "reduce":
        return _ufunc_reduce(qual, name, inputs, out, kwargs, REDUCE)
    if method == "accumulate":
        return _ufunc_reduce(qual, name, inputs, out, kwargs, ACCUMULATE)
    if method == "at":
        return _ufunc_at(qual, name, inputs, kwargs)
    return NotImplemented


def _ufunc_call(qual, name, inputs, out, kwargs):
    fn = _ufunc_fn(name)
    if fn is None:
        return NotImplemented
    where = kwargs.pop("where", True)
    dtype = kwargs.pop("dtype", None)
    for k, v in kwargs.items():
        if k not in _UFUNC_KEYS or not (k in _UFUNC_DEFAULTS and v == _UFUNC_DEFAULTS[k]
                                        or v is None):
            raise _unsupported(qual, k)
    if dtype is not None:
        inputs = _with_dtype(qual, inputs, dtype)
    res = fn(*inputs)
    if dtype is not None and isinstance(res, Tensor) and res.dtype != np.dtype(dtype) \
            and res.dtype != np.bool_:
        res = cast(res, np.dtype(dtype))
    return _finish(qual, res, out, where)


def _ufunc_outer(qual, name, inputs, out, kwargs):
    if len(inputs) != 2 or _ufunc_fn(name) is None:
        return NotImplemented
    a, b = (_to_tensor(v, _device_of(inputs)) for v in inputs)
    a = reshape(a, a.shape + (1,) * b.ndim)
    return _ufunc_call(qual, name, [a, b], out, kwargs)


def _ufunc_reduce(qual, name, inputs, out, kwargs, table):
    hname = table.get(name)
    if hname is None or len(inputs) != 1:
        return NotImplemented
    x = _to_tensor(inputs[0], _device_of(inputs))
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    keepdims = kwargs.pop("keepdims", False)
    for k, v in kwargs.items():
        if not (k == "where" and v is True or k == "initial" and v is np._NoValue):
            raise _unsupported(qual, k)
    fn = getattr(_NS["numpy"], hname)
    takes_dtype = "dtype" in _signature(fn).parameters
    if dtype is not None and not takes_dtype:
        x = _with_dtype(qual, [x], dtype)[0]
    kw = {"dtype": np.dtype(dtype)} if dtype is not None and takes_dtype else {}
    if table is ACCUMULATE:
        if keepdims:
            raise _unsupported(qual, "keepdims")
        if x.ndim == 0:
            raise ValueError(f"{qual}(): a 0-d tensor has no axis to accumulate over")
        res = fn(x, axis=axis, **kw)
    else:
        if isinstance(axis, list):
            axis = tuple(axis)
        res = fn(x, axis=axis, keepdims=keepdims, **kw)
    return _finish(qual, res, out, True, allow_broadcast=False)


def _ufunc_at(qual, name, inputs, kwargs):
    if name not in AT or kwargs or len(inputs) != 3:
        return NotImplemented
    a, idx, b = inputs
    if not isinstance(a, Tensor):
        return NotImplemented
    keys = idx if isinstance(idx, tuple) else (idx,)
    if not all(isinstance(k, (Tensor, np.ndarray, list, int, np.integer)) for k in keys):
        return NotImplemented  # slices, Ellipsis, masks: not an accumulating scatter
    keys = tuple(_to_tensor(k, a.device) for k in keys)
    if any(k.dtype.kind not in "iu" for k in keys):
        return NotImplemented
    b = _to_tensor(b, a.device) if not isinstance(b, Tensor) else b
    if name == "subtract":
        b = _NS["numpy"].negative(b)
    b = cast(b, a.dtype) if np.can_cast(b.dtype, a.dtype, "same_kind") else None
    if b is None:
        raise TypeError(f"{qual}(): cannot cast the values to {a.dtype} with casting rule "
                        "'same_kind'")
    target_shape = np.broadcast_shapes(*(k.shape for k in keys)) + a.shape[len(keys):]
    b = broadcast_to(b, target_shape)
    a[...] = index_put(a, keys, b, accumulate=True)
    return None


# ------------------------------------------------------------------ __array_function__
def array_function(self, func, types, args, kwargs):
    """NEP 18 / NEP 35: NumPy's function computed by hipfer (like=: created on self's
    device)."""
    if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented
    name = getattr(func, "__name__", "")
    module = _module_of(func)
    found = target(module, name)
    np_sig = _signature(func) if found is not None else None
    if np_sig is None:
        return NotImplemented
    fn, np_name, takes_ns = found
    qual = f"{module}.{name}"
    kwargs = dict(kwargs)
    out = kwargs.pop("out", None)
    if out is not None and not isinstance(out, Tensor):
        return NotImplemented
    like = "like" in np_sig.parameters
    device = self.device if like else _device_of(list(args) + list(kwargs.values()))
    extra = None
    if like:  # NEP 35: NumPy passes the creation call on without like=: make it on ours
        if kwargs.get("device") not in (None, "cpu"):
            raise ValueError(f"{qual}(): device must be None or 'cpu' (NumPy's), got "
                             f"{kwargs['device']!r}")
        kwargs.pop("device", None)
        extra = {"device": device}
    dtype = None
    if kwargs.get("dtype") is not None and "dtype" not in _signature(fn).parameters:
        dtype = np.dtype(kwargs.pop("dtype"))  # NumPy's dtype= where hipfer has none
        if np_name in _DTYPE_IN and args and isinstance(args[0], Tensor):
            args = (cast(args[0], dtype),) + tuple(args[1:])
    res = _call(qual, np_name, np_sig, fn, takes_ns, args, kwargs, device or self.device,
                extra)
    if dtype is not None and isinstance(res, Tensor) and res.dtype != dtype:
        if not np.can_cast(res.dtype, dtype, "same_kind"):
            raise TypeError(f"{qual}(): cannot cast the result from {res.dtype} to {dtype} "
                            "with casting rule 'same_kind'")
        res = cast(res, dtype)
    if out is not None:
        return _store(qual, res, out, allow_broadcast=False)
    return res


def install(tensor_cls, namespace) -> None:
    """Put the protocols on the Tensor (namespace: the hipfer module)."""
    _NS.update({"numpy": namespace, "numpy.linalg": namespace.linalg,
                "numpy.fft": namespace.fft,
                "numpy.lib.stride_tricks": namespace.lib.stride_tricks})
    _TARGETS.clear()
    tensor_cls.__array_ufunc__ = array_ufunc
    tensor_cls.__array_function__ = array_function
