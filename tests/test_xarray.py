"""xarray DataArrays backed by hipfer tensors keep hipfer (docs/dask.md, "xarray"), in the
refuse-host mode, so an xarray path that converts to NumPy behind the user's back fails;
every result is compared with the same DataArray over NumPy data."""
import numpy as np
import pytest

import hipfer as hf

xr = pytest.importorskip("xarray")

pytestmark = pytest.mark.usefixtures("refuse_host")


@pytest.fixture
def pair():
    rng = np.random.default_rng(22)
    a = rng.standard_normal((12, 5))
    a[::5, 1] = np.nan
    coords = {"x": np.arange(12.0), "g": ("x", np.arange(12) % 3)}
    return (xr.DataArray(hf.asarray(a), dims=("x", "y"), coords=coords),
            xr.DataArray(a, dims=("x", "y"), coords=coords))


OPS = {
    "add": lambda d: d * 2 + 1,
    "ufunc": lambda d: np.sin(d),
    "sum dim": lambda d: d.sum("x"),
    "mean skipna": lambda d: d.mean("x"),
    "mean noskip": lambda d: d.mean("x", skipna=False),
    "std": lambda d: d.std("y"),
    "var ddof": lambda d: d.var("x", ddof=1),
    "max": lambda d: d.max(),
    "min noskip": lambda d: d.min("y", skipna=False),
    "median": lambda d: d.median("x"),
    "cumsum": lambda d: d.cumsum("x"),
    "argmax": lambda d: d.fillna(0).argmax("x"),
    "count": lambda d: d.count("x"),
    "isel": lambda d: d.isel(x=slice(2, 9, 2)),
    "sel": lambda d: d.sel(x=[1.0, 4.0]),
    "where": lambda d: d.where(d > 0),
    "fillna": lambda d: d.fillna(-1),
    "rolling": lambda d: d.rolling(x=3).mean(),
    "rolling center": lambda d: d.rolling(x=4, center=True, min_periods=1).sum(),
    "pad": lambda d: d.pad(x=(1, 2), constant_values=0),
    "shift": lambda d: d.shift(x=2),
    "diff": lambda d: d.diff("x"),
    "quantile": lambda d: d.quantile([0.25, 0.5], dim="x"),
    "groupby mean": lambda d: d.groupby("g").mean(),
    "groupby sum": lambda d: d.groupby("g").sum(skipna=False),
    "coarsen": lambda d: d.coarsen(x=3).mean(),
    "concat": lambda d: xr.concat([d, d * 2], "x"),
    "dot": lambda d: xr.dot(d.fillna(0), d.fillna(0), dim="y"),
    "transpose": lambda d: d.T,
}


@pytest.mark.parametrize("name", list(OPS))
def test_dataarray_keeps_hipfer(name, pair):
    d, ref = pair
    got, want = OPS[name](d), OPS[name](ref)
    assert isinstance(got.data, hf.Tensor), type(got.data)
    assert got.dims == want.dims and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got.data, copy=True), want.values, rtol=1e-12,
                               atol=1e-12, equal_nan=True)


def test_interp_is_refused_not_copied(pair):
    """xarray's interp (scipy.interpolate.interp1d) and interpolate_na (np.vectorize)
    convert to NumPy inside xarray: refused, as for GPU data, never a silent host copy."""
    d, _ = pair
    with pytest.raises(TypeError, match="implicitly"):
        d.fillna(0).interp(x=[0.5, 3.25, 7.0])
    with pytest.raises(TypeError, match="implicitly"):
        d.interpolate_na("x")


def test_to_numpy_is_an_explicit_copy(pair):
    d, ref = pair
    out = d.to_numpy()
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, ref.values)
    out[0, 0] = 123.0  # a copy: the tensor is unchanged
    assert float(d.data[0, 0]) != 123.0
    with pytest.raises(TypeError, match="implicitly"):
        d.values  # NumPy's implicit conversion: refused, as for GPU data


def test_dask_backed_dataarray(pair):
    da = pytest.importorskip("dask.array")
    d, ref = pair
    chunked = d.chunk({"x": 4})
    assert isinstance(chunked.data, da.Array) and isinstance(chunked.data._meta, hf.Tensor)
    got = chunked.mean("x").compute(scheduler="sync")
    assert isinstance(got.data, hf.Tensor)
    np.testing.assert_allclose(np.asarray(got.data, copy=True), ref.mean("x").values)
