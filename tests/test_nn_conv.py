"""hipfer.nn conv ops (im2col, col2im_add, pooling, conv2d) against direct NumPy loops,
PyTorch where importable, finite differences and their own adjoints, on each backend."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import hipfer as hf
import hipfer.nn as nn

from test_tensor import host, rand

FLOATS = [np.float32, np.float64]
ROOT = Path(__file__).resolve().parent.parent


def tol(dt):
    return dict(rtol=2e-5, atol=2e-5) if np.dtype(dt) == np.float32 else dict(rtol=1e-12, atol=1e-12)


def pair(v):
    return (v, v) if np.isscalar(v) else tuple(v)


def out_size(n, k, s, p, d=1):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def on_cpu(f, *arrays):
    """f on the CPU backend (the NumPy reference) for host arrays; host results."""
    with hf.default_device("cpu"):
        r = f(*(hf.asarray(a) for a in arrays))
    return tuple(host(t) for t in r) if isinstance(r, tuple) else host(r)


# ------------------------------------------------------ direct loop references
def ref_im2col(x, k, s, p, d):
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = map(pair, (k, s, p, d))
    n, c, h, w = x.shape
    oh, ow = out_size(h, kh, sh, ph, dh), out_size(w, kw, sw, pw, dw)
    cols = np.zeros((n, c, kh, kw, oh, ow), x.dtype)
    for i in range(kh):
        for j in range(kw):
            for oy in range(oh):
                for ox in range(ow):
                    iy, ix = oy * sh - ph + i * dh, ox * sw - pw + j * dw
                    if 0 <= iy < h and 0 <= ix < w:
                        cols[:, :, i, j, oy, ox] = x[:, :, iy, ix]
    return cols.reshape(n, c * kh * kw, oh * ow)


def ref_col2im(cols, x_shape, k, s, p, d):
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = map(pair, (k, s, p, d))
    n, c, h, w = x_shape
    oh, ow = out_size(h, kh, sh, ph, dh), out_size(w, kw, sw, pw, dw)
    c6 = cols.reshape(n, c, kh, kw, oh, ow)
    x = np.zeros(x_shape, cols.dtype)
    for i in range(kh):
        for j in range(kw):
            for oy in range(oh):
                for ox in range(ow):
                    iy, ix = oy * sh - ph + i * dh, ox * sw - pw + j * dw
                    if 0 <= iy < h and 0 <= ix < w:
                        x[:, :, iy, ix] += c6[:, :, i, j, oy, ox]
    return x


def ref_conv2d(x, w, b, s, p, d):
    (sh, sw), (ph, pw), (dh, dw) = map(pair, (s, p, d))
    n, c, h, wd = x.shape
    co, _, kh, kw = w.shape
    oh, ow = out_size(h, kh, sh, ph, dh), out_size(wd, kw, sw, pw, dw)
    y = np.zeros((n, co, oh, ow)) + (0 if b is None else b[None, :, None, None])
    for oy in range(oh):
        for ox in range(ow):
            for i in range(kh):
                for j in range(kw):
                    iy, ix = oy * sh - ph + i * dh, ox * sw - pw + j * dw
                    if 0 <= iy < h and 0 <= ix < wd:
                        y[:, :, oy, ox] += x[:, :, iy, ix] @ w[:, :, i, j].T
    return y


def _windows(shape, k, s, p):
    """(oy, ox, [(iy, ix) input taps of the window, row-major])."""
    (kh, kw), (sh, sw), (ph, pw) = map(pair, (k, s, p))
    h, w = shape[2:]
    for oy in range(out_size(h, kh, sh, ph)):
        for ox in range(out_size(w, kw, sw, pw)):
            yield oy, ox, [(oy * sh - ph + i, ox * sw - pw + j) for i in range(kh) for j in range(kw)
                           if 0 <= oy * sh - ph + i < h and 0 <= ox * sw - pw + j < w]


def ref_max_pool(x, k, s, p):
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw) = map(pair, (k, s, p))
    oh, ow = out_size(h, kh, sh, ph), out_size(w, kw, sw, pw)
    y, arg = np.zeros((n, c, oh, ow), x.dtype), np.zeros((n, c, oh, ow), np.int64)
    for a in range(n):
        for b in range(c):
            for oy, ox, taps in _windows(x.shape, k, s, p):
                best = None
                for iy, ix in taps:
                    v = x[a, b, iy, ix]
                    if best is None or v > best[0] or (np.isnan(v) and not np.isnan(best[0])):
                        best = (v, iy * w + ix)
                y[a, b, oy, ox], arg[a, b, oy, ox] = best
    return y, arg


def ref_max_unpool(g, arg, x_shape):
    dx = np.zeros(x_shape, g.dtype)
    n, c, h, w = x_shape
    for a in range(n):
        for b in range(c):
            np.add.at(dx[a, b].reshape(-1), arg[a, b].reshape(-1), g[a, b].reshape(-1))
    return dx


def ref_avg_pool(x, k, s, p, include_pad):
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw) = map(pair, (k, s, p))
    y = np.zeros((n, c, out_size(h, kh, sh, ph), out_size(w, kw, sw, pw)), x.dtype)
    for oy, ox, taps in _windows(x.shape, k, s, p):
        tot = sum(x[:, :, iy, ix] for iy, ix in taps)
        y[:, :, oy, ox] = tot / (kh * kw if include_pad else len(taps))
    return y


def ref_avg_pool_backward(g, x_shape, k, s, p, include_pad):
    kh, kw = pair(k)
    dx = np.zeros(x_shape, g.dtype)
    for oy, ox, taps in _windows(x_shape, k, s, p):
        for iy, ix in taps:
            dx[:, :, iy, ix] += g[:, :, oy, ox] / (kh * kw if include_pad else len(taps))
    return dx


def fd_check(loss, x0, grad, rng, n=12, eps=1e-6):
    """Central differences of the scalar loss(x) at n random entries of x0 (float64)
    against grad."""
    grad = np.asarray(grad)
    for idx in rng.choice(x0.size, min(n, x0.size), replace=False):
        xp, xm = x0.copy(), x0.copy()
        xp.flat[idx] += eps
        xm.flat[idx] -= eps
        fd = (loss(xp) - loss(xm)) / (2 * eps)
        assert abs(fd - grad.flat[idx]) <= 1e-6 * (1 + abs(fd)), (idx, fd, grad.flat[idx])


# (kernel, stride, padding, dilation); odd sizes, stride above the kernel, dilation
CONV_GEOMS = [(3, 1, 1, 1), ((3, 2), (2, 1), (0, 1), (1, 2)), (1, 1, 0, 1),
              ((2, 3), 3, (1, 2), 1), (5, 2, 2, 1)]
# (kernel, stride, padding): stride None is the kernel
POOL_GEOMS = [(2, None, 0), (3, 1, 1), ((3, 2), (2, 1), (1, 0)), (1, None, 0), (3, 2, 1)]
SHAPES = [(2, 3, 7, 9), (1, 1, 5, 5)]


# ------------------------------------------------------------------ im2col / col2im_add
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("geom", CONV_GEOMS)
def test_im2col_col2im(be, rng, dtype, shape, geom):
    k, s, p, d = geom
    x = rand(rng, shape, dtype)
    cols = nn.im2col(hf.asarray(x), k, stride=s, padding=p, dilation=d)
    assert cols.dtype == dtype
    np.testing.assert_array_equal(host(cols), ref_im2col(x, k, s, p, d))
    c = rand(rng, cols.shape, dtype)
    back = nn.col2im_add(hf.asarray(c), shape, k, stride=s, padding=p, dilation=d)
    assert back.shape == shape and back.dtype == dtype
    np.testing.assert_allclose(host(back), ref_col2im(c, shape, k, s, p, d), **tol(dtype))


def test_im2col_matches_torch_unfold(be, rng):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = rand(rng, (3, 4, 11, 13), np.float64)
    for k, s, p, d in CONV_GEOMS:
        cols = nn.im2col(hf.asarray(x), k, stride=s, padding=p, dilation=d)
        u = F.unfold(torch.tensor(x), k, stride=s, padding=p, dilation=d)
        np.testing.assert_array_equal(host(cols), u.numpy())
        back = nn.col2im_add(cols, x.shape, k, stride=s, padding=p, dilation=d)
        f = F.fold(u, x.shape[2:], k, stride=s, padding=p, dilation=d)
        np.testing.assert_allclose(host(back), f.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("geom", CONV_GEOMS)
def test_col2im_is_the_adjoint_of_im2col(be, rng, geom):
    k, s, p, d = geom
    x = rand(rng, (2, 3, 8, 7), np.float64)
    cols = nn.im2col(hf.asarray(x), k, stride=s, padding=p, dilation=d)
    c = rand(rng, cols.shape, np.float64)
    back = nn.col2im_add(hf.asarray(c), x.shape, k, stride=s, padding=p, dilation=d)
    lhs, rhs = np.vdot(host(cols), c), np.vdot(x, host(back))
    assert abs(lhs - rhs) <= 1e-12 * (abs(lhs) + 1)


def test_im2col_large_odd(be, rng):
    """Planes larger than a block and not a multiple of it, many planes."""
    x = rand(rng, (3, 5, 33, 65), np.float32)
    args = dict(stride=1, padding=1, dilation=1)
    cols = nn.im2col(hf.asarray(x), 3, **args)
    np.testing.assert_array_equal(host(cols), on_cpu(lambda t: nn.im2col(t, 3, **args), x))
    back = nn.col2im_add(cols, x.shape, 3, **args)
    np.testing.assert_allclose(host(back), on_cpu(lambda c: nn.col2im_add(c, x.shape, 3, **args),
                                                  host(cols)), rtol=1e-6, atol=1e-6)


# (x shape, kernel, stride, padding, dilation) around the GPU kernels' tiling: a thread
# owns 8 rows of a column (col2im_add: rows of one phase modulo the stride) and loads 3
# taps of a window row at once
TILING_CASES = [
    ((2, 3, 37, 41), 3, 1, 1, 1),                      # rows not a multiple of 8
    ((2, 2, 17, 19), 3, 2, 1, 1),                      # stride 2: a phase with no row left
    ((1, 3, 35, 30), (7, 5), 2, 3, 1),                 # kernel widths not a multiple of 3
    ((2, 2, 29, 31), (4, 5), (3, 2), (2, 1), (2, 3)),  # dilation not a multiple of the stride
    ((1, 2, 23, 26), 1, 2, 0, 1),                      # 1x1 stride 2: rows with no window
    ((1, 2, 9, 11), 3, 1, 5, 1),                       # padding wider than the kernel
    ((1, 1, 40, 5), (1, 2), 1, 0, (1, 3)),             # narrow planes, lanes across rows
    ((3, 1, 1, 67), (1, 3), 1, (0, 1), 1),             # one-row planes
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", TILING_CASES)
def test_im2col_col2im_tiling_bitwise(be, rng, dtype, case):
    """Both ops equal the NumPy backend bit for bit: col2im_add sums each element's taps
    in the same order (i, then j)."""
    shape, k, s, p, d = case
    args = dict(stride=s, padding=p, dilation=d)
    x = rand(rng, shape, dtype)
    cols = nn.im2col(hf.asarray(x), k, **args)
    np.testing.assert_array_equal(host(cols), ref_im2col(x, k, s, p, d))
    c = rand(rng, cols.shape, dtype)
    back = nn.col2im_add(hf.asarray(c), shape, k, **args)
    np.testing.assert_array_equal(host(back), on_cpu(lambda t: nn.col2im_add(t, shape, k, **args), c))
    np.testing.assert_allclose(host(back), ref_col2im(c, shape, k, s, p, d), **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", TILING_CASES)
def test_im2col_col2im_knl_layout(be, rng, dtype, case):
    """layout="knl": the same columns as (C*kh*kw, N, L), and col2im_add of them the same
    bits as of the (N, C*kh*kw, L) ones."""
    shape, k, s, p, d = case
    args = dict(stride=s, padding=p, dilation=d)
    x = rand(rng, shape, dtype)
    cols = nn.im2col(hf.asarray(x), k, layout="knl", **args)
    np.testing.assert_array_equal(host(cols), ref_im2col(x, k, s, p, d).transpose(1, 0, 2))
    c = rand(rng, cols.shape, dtype)
    back = nn.col2im_add(hf.asarray(c), shape, k, layout="knl", **args)
    want = nn.col2im_add(hf.asarray(np.ascontiguousarray(c.transpose(1, 0, 2))), shape, k, **args)
    np.testing.assert_array_equal(host(back), host(want))


def test_im2col_col2im_more_threads_than_the_grid(be, rng):
    """1.3M threads (8 rows each) where the GPU grid stops at 32 blocks of 256 an SM
    (1.08M on an H200): the grid-stride loop covers the rest. A 1x1 kernel keeps the
    columns as small as x; the loop does not depend on the window."""
    x = rand(rng, (1, 2048, 64, 80), np.float32)
    cols = nn.im2col(hf.asarray(x), 1, stride=1, padding=0)
    np.testing.assert_array_equal(host(cols), x.reshape(1, 2048, -1))
    back = nn.col2im_add(cols, x.shape, 1, stride=1, padding=0)
    np.testing.assert_array_equal(host(back), x)


# ------------------------------------------------------------------------ pooling
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("geom", POOL_GEOMS)
def test_max_pool_and_unpool(be, rng, dtype, shape, geom):
    k, s, p = geom
    x = rand(rng, shape, dtype)
    y, arg = nn.max_pool(hf.asarray(x), k, stride=s, padding=p)
    ry, rarg = ref_max_pool(x, k, k if s is None else s, p)
    assert y.dtype == dtype and arg.dtype == np.int64
    np.testing.assert_array_equal(host(y), ry)
    np.testing.assert_array_equal(host(arg), rarg)
    g = rand(rng, ry.shape, dtype)
    dx = nn.max_unpool(hf.asarray(g), arg, shape, k, stride=s, padding=p)
    np.testing.assert_allclose(host(dx), ref_max_unpool(g, rarg, shape), **tol(dtype))


def test_max_pool_ties_nan_and_padding(be):
    # ties go to the first element of the window (row-major)
    x = np.array([[[[1., 3., 3.], [3., 0., 3.], [2., 3., 1.]]]])
    y, arg = nn.max_pool(hf.asarray(x), 2, stride=1)
    np.testing.assert_array_equal(host(y)[0, 0], [[3, 3], [3, 3]])
    np.testing.assert_array_equal(host(arg)[0, 0], [[1, 1], [3, 5]])
    # a NaN wins, the first one
    x2 = x.copy()
    x2[0, 0, 1, 1] = np.nan
    x2[0, 0, 2, 2] = np.nan
    y, arg = nn.max_pool(hf.asarray(x2), 2, stride=1)
    assert np.isnan(host(y)).all()
    np.testing.assert_array_equal(host(arg)[0, 0], [[4, 4], [4, 4]])
    # padding never wins, even over -inf
    x3 = np.full((1, 2, 3, 3), -np.inf)
    y, arg = nn.max_pool(hf.asarray(x3), 3, stride=1, padding=1)
    assert (host(y) == -np.inf).all()
    np.testing.assert_array_equal(host(arg)[0, 0], [[0, 0, 1], [0, 0, 1], [3, 3, 4]])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("geom", POOL_GEOMS)
@pytest.mark.parametrize("include_pad", [True, False])
def test_avg_pool(be, rng, dtype, shape, geom, include_pad):
    k, s, p = geom
    x = rand(rng, shape, dtype)
    y = nn.avg_pool(hf.asarray(x), k, stride=s, padding=p, count_include_pad=include_pad)
    ss = k if s is None else s
    np.testing.assert_allclose(host(y), ref_avg_pool(x, k, ss, p, include_pad), **tol(dtype))
    g = rand(rng, y.shape, dtype)
    dx = nn.avg_pool_backward(hf.asarray(g), shape, k, stride=s, padding=p,
                              count_include_pad=include_pad)
    np.testing.assert_allclose(host(dx), ref_avg_pool_backward(g, shape, k, ss, p, include_pad),
                               **tol(dtype))


def test_pools_match_torch(be, rng):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = rand(rng, (2, 3, 10, 13), np.float64)
    for k, s, p in POOL_GEOMS:
        tx = torch.tensor(x, requires_grad=True)
        ty, ti = F.max_pool2d(tx, k, stride=s, padding=p, return_indices=True)
        y, arg = nn.max_pool(hf.asarray(x), k, stride=s, padding=p)
        np.testing.assert_array_equal(host(y), ty.detach().numpy())
        np.testing.assert_array_equal(host(arg), ti.numpy())
        g = rand(rng, ty.shape, np.float64)
        ty.backward(torch.tensor(g))
        dx = nn.max_unpool(hf.asarray(g), arg, x.shape, k, stride=s, padding=p)
        np.testing.assert_allclose(host(dx), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
        for include_pad in (True, False):
            tx = torch.tensor(x, requires_grad=True)
            ty = F.avg_pool2d(tx, k, stride=s, padding=p, count_include_pad=include_pad)
            y = nn.avg_pool(hf.asarray(x), k, stride=s, padding=p, count_include_pad=include_pad)
            np.testing.assert_allclose(host(y), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
            ty.backward(torch.tensor(g))
            dx = nn.avg_pool_backward(hf.asarray(g), x.shape, k, stride=s, padding=p,
                                      count_include_pad=include_pad)
            np.testing.assert_allclose(host(dx), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_pools_large_odd(be, rng):
    x = rand(rng, (3, 5, 37, 67), np.float32)
    y, arg = nn.max_pool(hf.asarray(x), 3, stride=2, padding=1)
    ry, rarg = on_cpu(lambda t: nn.max_pool(t, 3, stride=2, padding=1), x)
    np.testing.assert_array_equal(host(y), ry)
    np.testing.assert_array_equal(host(arg), rarg)
    g = rand(rng, ry.shape, np.float32)
    dx = nn.max_unpool(hf.asarray(g), arg, x.shape, 3, stride=2, padding=1)
    rdx = on_cpu(lambda a, b: nn.max_unpool(a, b, x.shape, 3, stride=2, padding=1), g, rarg)
    np.testing.assert_allclose(host(dx), rdx, rtol=1e-6, atol=1e-6)
    y = nn.avg_pool(hf.asarray(x), 3, stride=1, padding=1, count_include_pad=False)
    ry = on_cpu(lambda t: nn.avg_pool(t, 3, stride=1, padding=1, count_include_pad=False), x)
    np.testing.assert_allclose(host(y), ry, rtol=1e-6, atol=1e-6)


def rand_argmax(rng, shape, k, s, p):
    """A random input tap of each pooling window, flat in the plane: any valid argmax,
    not only max_pool's."""
    (kh, kw), (sh, sw), (ph, pw) = map(pair, (k, s, p))
    n, c, h, w = shape
    oh, ow = out_size(h, kh, sh, ph), out_size(w, kw, sw, pw)
    y0, x0 = np.arange(oh) * sh - ph, np.arange(ow) * sw - pw
    ylo, yhi = np.maximum(y0, 0), np.minimum(y0 + kh, h)
    xlo, xhi = np.maximum(x0, 0), np.minimum(x0 + kw, w)
    ay = ylo[:, None] + (rng.random((n, c, oh, ow)) * (yhi - ylo)[:, None]).astype(np.int64)
    ax = xlo[None, :] + (rng.random((n, c, oh, ow)) * (xhi - xlo)[None, :]).astype(np.int64)
    return ay * w + ax


# (x shape, kernel, stride, padding) around the GPU pools' tiling: a thread owns 8 rows
# of a column (the backwards: rows of one phase modulo the stride); the backwards slide
# the window rows along the taps when at most 2 window columns reach a column, else they
# loop over the taps; avg_pool_backward divides by kh*kw alone where every window a
# thread reads is whole
POOL_TILING_CASES = [
    ((2, 3, 37, 41), 3, 2, 1),                   # rows not a multiple of 8, sliding rows
    ((2, 2, 17, 19), 3, 3, 1),                   # stride 3: phases with no row left
    ((1, 3, 35, 30), 3, 1, 1),                   # stride 1: 3 window columns, tap loop
    ((2, 2, 29, 31), (4, 5), (3, 2), (2, 1)),    # non-square, 1-3 window columns
    ((1, 2, 23, 26), 2, 2, 0),                   # 2x2 stride 2: one window a position
    ((1, 1, 40, 5), (5, 2), (1, 3), (2, 1)),     # narrow planes, lanes across rows
    ((3, 1, 1, 67), (1, 3), 1, (0, 1)),          # one-row planes
    ((2, 2, 9, 11), 5, 4, 2),                    # windows reaching into the padding
    ((1, 2, 6, 7), (2, 3), (3, 4), (1, 1)),      # stride above the kernel: rows no window reaches
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", POOL_TILING_CASES)
def test_pools_tiling_bitwise(be, rng, dtype, case):
    """Every pool equals the NumPy backend bit for bit (the same tap order; ties and
    NaNs in max_pool): max_unpool with max_pool's argmax and with any valid one,
    avg_pool and its backward with both divisors."""
    shape, k, s, p = case
    args = dict(stride=s, padding=p)
    x = np.round(rand(rng, shape, dtype) * 2) / 2  # ties
    x.flat[rng.choice(x.size, max(1, x.size // 50), replace=False)] = np.nan
    y, arg = nn.max_pool(hf.asarray(x), k, **args)
    ry, rarg = on_cpu(lambda t: nn.max_pool(t, k, **args), x)
    np.testing.assert_array_equal(host(y), ry)
    np.testing.assert_array_equal(host(arg), rarg)
    for a in (rarg, rand_argmax(rng, shape, k, s, p)):
        g = rand(rng, ry.shape, dtype)
        dx = nn.max_unpool(hf.asarray(g), hf.asarray(a), shape, k, **args)
        rdx = on_cpu(lambda t, u: nn.max_unpool(t, u, shape, k, **args), g, a)
        np.testing.assert_array_equal(host(dx), rdx)
        np.testing.assert_allclose(rdx, ref_max_unpool(g, a, shape), **tol(dtype))
    x = rand(rng, shape, dtype)
    for include_pad in (True, False):
        kw = dict(args, count_include_pad=include_pad)
        y = nn.avg_pool(hf.asarray(x), k, **kw)
        np.testing.assert_array_equal(host(y), on_cpu(lambda t: nn.avg_pool(t, k, **kw), x))
        g = rand(rng, y.shape, dtype)
        dx = nn.avg_pool_backward(hf.asarray(g), shape, k, **kw)
        rdx = on_cpu(lambda t: nn.avg_pool_backward(t, shape, k, **kw), g)
        np.testing.assert_array_equal(host(dx), rdx)
        np.testing.assert_allclose(rdx, ref_avg_pool_backward(g, shape, k, pair(s), p, include_pad),
                                   **tol(dtype))


def test_pools_more_threads_than_the_grid(be, rng):
    """1.3M threads (8 rows each) where the GPU grid stops at 32 blocks of 256 an SM
    (1.08M on an H200): the grid-stride loop covers the rest. A 1x1 window keeps it
    cheap; the loop does not depend on the window."""
    x = rand(rng, (1, 2048, 64, 80), np.float32)
    y, arg = nn.max_pool(hf.asarray(x), 1)
    np.testing.assert_array_equal(host(y), x)
    np.testing.assert_array_equal(host(arg), np.broadcast_to(np.arange(64 * 80).reshape(64, 80), x.shape))
    np.testing.assert_array_equal(host(nn.max_unpool(y, arg, x.shape, 1)), x)
    np.testing.assert_array_equal(host(nn.avg_pool(hf.asarray(x), 1)), x)
    np.testing.assert_array_equal(host(nn.avg_pool_backward(hf.asarray(x), x.shape, 1)), x)


def test_bad_argmax_in_any_window(be, rng):
    """Each argmax is checked once, at its window's first input tap (the top row and the
    left column check the windows that start in the padding): one bad value in any
    window is an IndexError naming it, also one whose low 32 bits are a valid position
    (the GPU gather compares those)."""
    shape = (1, 2, 7, 9)
    x = rand(rng, shape, np.float64)
    y, arg = nn.max_pool(hf.asarray(x), 3, stride=2, padding=1)
    a = host(arg)
    for pos in range(a.size):
        b = a.copy()
        b.flat[pos] = (-1, 7 * 9, a.flat[pos] + 2 ** 32, a.flat[pos] + 3 * 9)[pos % 4]
        with pytest.raises(IndexError, match=f"argmax element {pos} "):
            nn.max_unpool(y, hf.asarray(b), shape, 3, stride=2, padding=1)


# ------------------------------------------------------------------------- conv2d
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("geom", CONV_GEOMS)
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d(be, rng, dtype, geom, bias):
    k, s, p, d = geom
    kh, kw = pair(k)
    x, w = rand(rng, (2, 3, 9, 8), dtype), rand(rng, (4, 3, kh, kw), dtype)
    b = rand(rng, (4,), dtype) if bias else None
    y = nn.conv2d(hf.asarray(x), hf.asarray(w), None if b is None else hf.asarray(b),
                  stride=s, padding=p, dilation=d)
    assert y.dtype == dtype
    ref = ref_conv2d(x.astype(np.float64), w.astype(np.float64), b, s, p, d)
    np.testing.assert_allclose(host(y), ref, **tol(dtype))


@pytest.fixture(params=["one GEMM", "batched"])
def conv_form(request, monkeypatch):
    """conv2d's two GEMM forms: one GEMM over all N*L columns ("knl" columns), or, where
    those would pass the GPU kernels' 32-bit offsets, N batched ones."""
    if request.param == "batched":
        monkeypatch.setattr(nn._conv, "KNL_LIMIT", 0)
    return request.param


@pytest.mark.parametrize("geom", CONV_GEOMS)
def test_conv2d_matches_torch(be, rng, geom, conv_form):
    torch = pytest.importorskip("torch")
    k, s, p, d = geom
    kh, kw = pair(k)
    x, w, b = rand(rng, (2, 3, 10, 9), np.float64), rand(rng, (5, 3, kh, kw), np.float64), rand(rng, (5,), np.float64)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = torch.nn.functional.conv2d(tx, tw, tb, stride=s, padding=p, dilation=d)
    y = nn.conv2d(hf.asarray(x), hf.asarray(w), hf.asarray(b), stride=s, padding=p, dilation=d)
    np.testing.assert_allclose(host(y), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = rand(rng, ty.shape, np.float64)
    ty.backward(torch.tensor(g))
    dx, dw, db = nn.conv2d_backward(hf.asarray(g), hf.asarray(x), hf.asarray(w), stride=s,
                                    padding=p, dilation=d)
    for mine, theirs in ((dx, tx), (dw, tw), (db, tb)):
        np.testing.assert_allclose(host(mine), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_conv2d_pointwise_strided_input(be, rng, conv_form):
    """A 1x1 kernel at stride 1 reads x as its own columns (no im2col): also when x is a
    strided view, and the backward's dx is then dcols itself."""
    full = rand(rng, (3, 4, 6, 10), np.float64)
    x = full[:, :, :, ::2]  # (3, 4, 6, 5), not contiguous
    w, b = rand(rng, (5, 4, 1, 1), np.float64), rand(rng, (5,), np.float64)
    X = hf.asarray(full)[:, :, :, ::2]
    y = nn.conv2d(X, hf.asarray(w), hf.asarray(b))
    np.testing.assert_allclose(host(y), ref_conv2d(x, w, b, 1, 0, 1), rtol=1e-12, atol=1e-12)
    g = rand(rng, y.shape, np.float64)
    dx, dw, db = nn.conv2d_backward(hf.asarray(g), X, hf.asarray(w))
    w2 = w.reshape(5, 4)
    np.testing.assert_allclose(host(dx), np.einsum("ck,nchw->nkhw", w2, g), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(host(dw).reshape(5, 4), np.einsum("nchw,nkhw->ck", g, x),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(host(db), g.sum(axis=(0, 2, 3)), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------ finite differences (float64)
@pytest.mark.parametrize("geom", [CONV_GEOMS[0], CONV_GEOMS[1], CONV_GEOMS[3]])
def test_conv2d_backward_finite_differences(be, rng, geom, conv_form):
    k, s, p, d = geom
    kh, kw = pair(k)
    x, w, b = rand(rng, (2, 3, 6, 7), np.float64), rand(rng, (4, 3, kh, kw), np.float64), rand(rng, (4,), np.float64)
    args = dict(stride=s, padding=p, dilation=d)
    y = nn.conv2d(hf.asarray(x), hf.asarray(w), hf.asarray(b), **args)
    r = rand(rng, y.shape, np.float64)

    def loss(x_, w_, b_):
        return float(np.vdot(host(nn.conv2d(hf.asarray(x_), hf.asarray(w_), hf.asarray(b_), **args)), r))
    dx, dw, db = nn.conv2d_backward(hf.asarray(r), hf.asarray(x), hf.asarray(w), **args)
    fd_check(lambda v: loss(v, w, b), x, host(dx), rng)
    fd_check(lambda v: loss(x, v, b), w, host(dw), rng)
    fd_check(lambda v: loss(x, w, v), b, host(db), rng)


@pytest.mark.parametrize("geom", POOL_GEOMS[:3])
def test_pool_backwards_finite_differences(be, rng, geom):
    k, s, p = geom
    x = rand(rng, (2, 2, 7, 6), np.float64)
    y, arg = nn.max_pool(hf.asarray(x), k, stride=s, padding=p)
    r = rand(rng, y.shape, np.float64)
    dx = nn.max_unpool(hf.asarray(r), arg, x.shape, k, stride=s, padding=p)
    fd_check(lambda v: float(np.vdot(host(nn.max_pool(hf.asarray(v), k, stride=s, padding=p)[0]), r)),
             x, host(dx), rng)
    for include_pad in (True, False):
        kw = dict(stride=s, padding=p, count_include_pad=include_pad)
        dx = nn.avg_pool_backward(hf.asarray(r), x.shape, k, **kw)
        fd_check(lambda v: float(np.vdot(host(nn.avg_pool(hf.asarray(v), k, **kw)), r)),
                 x, host(dx), rng)


# ------------------------------------------------------- sizes 1 and 0, determinism
def test_size_one_and_empty(be, rng):
    x1 = rand(rng, (1, 1, 1, 1), np.float32)
    X1 = hf.asarray(x1)
    np.testing.assert_array_equal(host(nn.im2col(X1, 1)), x1.reshape(1, 1, 1))
    np.testing.assert_array_equal(host(nn.max_pool(X1, 1)[0]), x1)
    np.testing.assert_array_equal(host(nn.avg_pool(X1, 1)), x1)
    np.testing.assert_array_equal(host(nn.conv2d(X1, X1)), x1 * x1)
    for shape in [(0, 3, 5, 5), (2, 0, 5, 5)]:
        x = hf.asarray(np.ones(shape, np.float32))
        n, c = shape[:2]
        cols = nn.im2col(x, 3, padding=1)
        assert cols.shape == (n, c * 9, 25)
        assert nn.col2im_add(cols, shape, 3, padding=1).shape == shape
        y, arg = nn.max_pool(x, 2)
        assert y.shape == arg.shape == (n, c, 2, 2)
        assert nn.max_unpool(y, arg, shape, 2).shape == shape
        assert nn.avg_pool(x, 2).shape == (n, c, 2, 2)
        assert nn.avg_pool_backward(nn.avg_pool(x, 2), shape, 2).shape == shape
    x0 = hf.asarray(np.ones((0, 3, 5, 5), np.float32))
    w = hf.asarray(np.ones((4, 3, 3, 3), np.float32))
    y = nn.conv2d(x0, w, padding=1)
    assert y.shape == (0, 4, 5, 5)
    dx, dw, db = nn.conv2d_backward(y, x0, w, padding=1)
    assert dx.shape == (0, 3, 5, 5) and dw.shape == (4, 3, 3, 3) and db.shape == (4,)
    assert not host(dw).any() and not host(db).any()


@pytest.mark.parametrize("dtype", FLOATS)
def test_deterministic(be, rng, dtype):
    """Every op twice on the same input: the same bits (no atomics, fixed orders)."""
    x = hf.asarray(rand(rng, (4, 8, 33, 35), dtype))
    w = hf.asarray(rand(rng, (6, 8, 3, 3), dtype))
    cols = nn.im2col(x, 3, stride=1, padding=1)
    y, arg = nn.max_pool(x, 3, stride=1, padding=1)
    g = hf.asarray(rand(rng, (4, 6, 17, 18), dtype))
    runs = [
        lambda: nn.im2col(x, 3, stride=2, padding=1, dilation=2),
        lambda: nn.col2im_add(cols, x.shape, 3, stride=1, padding=1),
        lambda: nn.max_pool(x, 3, stride=2, padding=1),
        lambda: nn.max_unpool(y, arg, x.shape, 3, stride=1, padding=1),
        lambda: nn.avg_pool(x, 3, stride=1, padding=1, count_include_pad=False),
        lambda: nn.avg_pool_backward(y, x.shape, 3, stride=1, padding=1),
        lambda: nn.conv2d(x, w, stride=2, padding=1),
        lambda: nn.conv2d_backward(g, x, w, stride=2, padding=1),
    ]
    for f in runs:
        a, b = f(), f()
        a, b = (a, b) if isinstance(a, tuple) else ((a,), (b,))
        for u, v in zip(a, b):
            assert host(u).tobytes() == host(v).tobytes()


# --------------------------------------------------------------------- bad input
def test_bad_input(be):
    x = hf.asarray(np.ones((2, 3, 6, 6)))
    with pytest.raises(ValueError, match="4-d"):
        nn.im2col(hf.asarray(np.ones((3, 6, 6))), 3)
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.im2col(hf.asarray(np.ones((2, 3, 6, 6), np.int32)), 3)
    with pytest.raises(TypeError, match="hipfer Tensor"):
        nn.max_pool(np.ones((2, 3, 6, 6)), 2)
    with pytest.raises(TypeError, match="kernel_size"):
        nn.im2col(x, "3")
    with pytest.raises(ValueError, match="kernel must be >= 1"):
        nn.im2col(x, 0)
    with pytest.raises(ValueError, match="stride must be >= 1"):
        nn.avg_pool(x, 2, stride=0)
    with pytest.raises(ValueError, match="padding must be >= 0"):
        nn.im2col(x, 3, padding=-1)
    with pytest.raises(ValueError, match="dilation must be >= 1"):
        nn.im2col(x, 3, dilation=0)
    with pytest.raises(ValueError, match="does not fit"):
        nn.im2col(x, 7)
    with pytest.raises(ValueError, match="does not fit"):
        nn.conv2d(x, hf.asarray(np.ones((4, 3, 4, 4))), dilation=2)
    with pytest.raises(ValueError, match="at most half"):
        nn.max_pool(x, 3, padding=2)
    # col2im_add: columns that do not fit the kernel / window count, x_shape disagreeing
    with pytest.raises(ValueError, match="does not fit"):
        nn.col2im_add(hf.asarray(np.ones((2, 26, 16))), (2, 3, 6, 6), 3)
    with pytest.raises(ValueError, match="does not fit"):
        nn.col2im_add(hf.asarray(np.ones((2, 27, 15))), (2, 3, 6, 6), 3)
    with pytest.raises(ValueError, match=r"x_shape .* \(N, C\)"):
        nn.col2im_add(hf.asarray(np.ones((2, 27, 16))), (2, 4, 6, 6), 3)
    with pytest.raises(ValueError, match="x_shape must be"):
        nn.col2im_add(hf.asarray(np.ones((2, 27, 16))), (3, 6, 6), 3)
    with pytest.raises(ValueError, match="layout must be one of"):
        nn.im2col(x, 3, layout="nlk")
    with pytest.raises(ValueError, match=r"\(C\*9, N, 16\)"):
        nn.col2im_add(hf.asarray(np.ones((2, 27, 16))), (2, 3, 6, 6), 3, layout="knl")
    # pooling backwards
    y, arg = nn.max_pool(x, 2)
    with pytest.raises(TypeError, match="int64"):
        nn.max_unpool(y, hf.astype(arg, hf.int32), x.shape, 2)
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.max_unpool(hf.astype(y, hf.int64), arg, x.shape, 2)
    with pytest.raises(ValueError, match="shapes differ"):
        nn.max_unpool(y, arg[:, :, :2], x.shape, 2)
    with pytest.raises(ValueError, match="do not fit"):
        nn.max_unpool(y, arg, (2, 3, 9, 9), 2)
    with pytest.raises(ValueError, match="do not fit"):
        nn.avg_pool_backward(y, (2, 3, 6, 6), 3)
    # conv2d
    w = hf.asarray(np.ones((4, 3, 3, 3)))
    with pytest.raises(ValueError, match="channels"):
        nn.conv2d(x, hf.asarray(np.ones((4, 2, 3, 3))))
    with pytest.raises(ValueError, match="w must be 4-d"):
        nn.conv2d(x, hf.asarray(np.ones((4, 3, 3))))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.conv2d(x, hf.asarray(np.ones((4, 3, 3, 3), np.float32)))
    with pytest.raises(ValueError, match="b must have shape"):
        nn.conv2d(x, w, hf.asarray(np.ones(3)))
    with pytest.raises(ValueError, match="grad has shape"):
        nn.conv2d_backward(hf.asarray(np.ones((2, 4, 5, 5))), x, w)
    with pytest.raises(ValueError, match="x must be 4-d"):
        nn.conv2d(hf.asarray(np.ones((3, 7, 7))), w)
    for k in (1, 3):  # a 1x1 kernel skips im2col: the dtype is checked all the same
        xi, wi = hf.asarray(np.ones((2, 3, 7, 7), np.int64)), hf.asarray(np.ones((4, 3, k, k), np.int64))
        with pytest.raises(TypeError, match="float32 or float64"):
            nn.conv2d(xi, wi)
        with pytest.raises(TypeError, match="float32 or float64"):
            nn.conv2d_backward(hf.asarray(np.ones((2, 4, 7, 7), np.int64)), xi, wi, padding=k // 2)


def test_bad_argmax_is_an_index_error(be):
    x = hf.asarray(np.arange(2 * 3 * 6 * 6, dtype=np.float64).reshape(2, 3, 6, 6))
    y, arg = nn.max_pool(x, 2)
    a = host(arg).copy()
    for bad, pos in ((36, 5), (-1, 0), (0, 7)):  # out of the plane; in it, outside the window
        b = a.copy()
        b.flat[pos] = bad
        with pytest.raises(IndexError, match=f"argmax element {pos} "):
            nn.max_unpool(y, hf.asarray(b), x.shape, 2)
    dx = nn.max_unpool(y, arg, x.shape, 2)  # the flag was cleared
    np.testing.assert_array_equal(host(dx), ref_max_unpool(host(y), a, x.shape))


# --------------------------------------------------------------------- the example
def test_train_cnn_example():
    spec = importlib.util.spec_from_file_location("train_cnn", ROOT / "examples" / "train_cnn.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with hf.default_device("cpu"):
        losses, acc = mod.train(steps=60)
    assert np.mean(losses[-10:]) < 0.5 * losses[0]
    assert acc > 0.8
