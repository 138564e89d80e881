"""hipfer.nn LRP passes (epsilon rule) against Python-loop references on each backend;
conservation, finite differences (gradient x input), GPU vs CPU, determinism, bad input."""
import numpy as np
import pytest

import hipfer as hf
import hipfer.nn as nn

from test_tensor import host, rand

FLOATS = [np.float32, np.float64]


def bits(t):
    return host(t).tobytes()


def close(got, ref, dtype):
    """got against a float64 reference: relative to the largest reference value (the
    quotients amplify rounding of the operands by the same factor everywhere)."""
    ref = np.asarray(ref, np.float64)
    assert got.shape == ref.shape and got.dtype == np.dtype(dtype)
    scale = np.max(np.abs(ref), initial=1.0)
    t = 2e-4 if np.dtype(dtype) == np.float32 else 1e-11
    np.testing.assert_allclose(got, ref, rtol=t, atol=t * scale)


def on_cpu(f, *arrays):
    """f on the CPU backend (the NumPy reference) for host arrays; host results."""
    with hf.default_device("cpu"):
        r = f(*(hf.asarray(a) for a in arrays))
    return tuple(host(t) for t in r) if isinstance(r, tuple) else host(r)


def T(*arrays):
    return tuple(hf.asarray(a) for a in arrays)


# ------------------------------------------------------------- Python-loop references
def stab(z, eps):
    return z + eps if z >= 0 else z - eps


def loop_divide(r, den, eps, gate="none"):
    out = np.zeros(r.shape)
    for i in np.ndindex(r.shape):
        d = float(den[i])
        if gate == "none" or (d > 0 if gate == "positive" else d < 0):
            out[i] = r[i] / stab(d, eps)
    return out


def loop_residual(a, b, r, eps):
    ra, rb = np.zeros(a.shape), np.zeros(a.shape)
    for i in np.ndindex(a.shape):
        y = float(a[i]) + float(b[i])
        ra[i] = a[i] / stab(y, eps) * r[i]
        rb[i] = b[i] / stab(y, eps) * r[i]
    return ra, rb


def loop_bilinear_elementwise(a, b, r, eps):
    out = np.zeros(a.shape)
    for i in np.ndindex(a.shape):
        c = float(a[i]) * float(b[i])
        out[i] = c / (2 * c + (eps if c >= 0 else -eps)) * r[i]
    return out


def loop_linear(x, w, z, r, eps):
    (n, ni), nj = x.shape, w.shape[1]
    out = np.zeros(x.shape)
    for a in range(n):
        for i in range(ni):
            out[a, i] = sum(x[a, i] * w[i, j] / stab(z[a, j], eps) * r[a, j] for j in range(nj))
    return out


def loop_bilinear_matmul(A, B, O, R, eps, trans_b):
    """B stored (K, N), or (N, K) with trans_b; batch axes flattened."""
    m, k = A.shape[-2:]
    n = O.shape[-1]
    nb = int(np.prod(A.shape[:-2]))
    a3, b3 = A.reshape(nb, m, k), B.reshape((nb,) + B.shape[-2:])
    o3, r3 = O.reshape(nb, m, n), R.reshape(nb, m, n)
    ra, rb = np.zeros(a3.shape), np.zeros(b3.shape)
    for t in range(a3.shape[0]):
        for i in range(m):
            for kk in range(k):
                for j in range(n):
                    bv = b3[t, j, kk] if trans_b else b3[t, kk, j]
                    v = a3[t, i, kk] * bv / (2 * stab(o3[t, i, j], eps)) * r3[t, i, j]
                    ra[t, i, kk] += v
                    rb[(t, j, kk) if trans_b else (t, kk, j)] += v
    return ra.reshape(A.shape), rb.reshape(B.shape)


def loop_softmax_rows(x, y, r):
    out = np.zeros(x.shape)
    for row in np.ndindex(x.shape[:-1]):
        s = sum(float(v) for v in r[row])
        for j in range(x.shape[-1]):
            out[row + (j,)] = x[row + (j,)] * (r[row + (j,)] - y[row + (j,)] * s)
    return out


def loop_rope(x, cos, sin, r, eps):
    """The epsilon rule on each 2x2 rotation: inputs x0, x1 -> outputs z0, z1 with
    z0 = x0 c - x1 s, z1 = x0 s + x1 c; input i gets sum_o x_i w_io / stab(z_o) r_o."""
    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape[:-1]):
        l = idx[-1]
        for k in range(x.shape[-1] // 2):
            c, s = float(cos[l, k]), float(sin[l, k])
            x0, x1 = float(x[idx + (2 * k,)]), float(x[idx + (2 * k + 1,)])
            w = ((c, s), (-s, c))  # w[in][out]
            z = (x0 * c - x1 * s, x0 * s + x1 * c)
            rr = (r[idx + (2 * k,)], r[idx + (2 * k + 1,)])
            for i, xi in enumerate((x0, x1)):
                out[idx + (2 * k + i,)] = sum(xi * w[i][o] / stab(z[o], eps) * rr[o] for o in range(2))
    return out


def loop_conv(x, w, z, r, s, p, d, eps):
    """Relevance of x through conv2d (stride s, padding p, dilation d; ints)."""
    n, c, h, wd = x.shape
    co, _, kh, kw = w.shape
    oh, ow = z.shape[2:]
    out = np.zeros(x.shape)
    for b in range(n):
        for o in range(co):
            for oy in range(oh):
                for ox in range(ow):
                    q = r[b, o, oy, ox] / stab(z[b, o, oy, ox], eps)
                    for ch in range(c):
                        for i in range(kh):
                            for j in range(kw):
                                iy, ix = oy * s - p + i * d, ox * s - p + j * d
                                if 0 <= iy < h and 0 <= ix < wd:
                                    out[b, ch, iy, ix] += x[b, ch, iy, ix] * w[o, ch, i, j] * q
    return out


def loop_avg_pool(x, r, k, s, p, eps):
    n, c, h, w = x.shape
    oh, ow = r.shape[2:]
    out = np.zeros(x.shape)
    for b, ch, oy, ox in np.ndindex(n, c, oh, ow):
        taps = [(oy * s - p + i, ox * s - p + j) for i in range(k) for j in range(k)]
        taps = [(iy, ix) for iy, ix in taps if 0 <= iy < h and 0 <= ix < w]
        total = sum(float(x[b, ch, iy, ix]) for iy, ix in taps)
        for iy, ix in taps:
            out[b, ch, iy, ix] += x[b, ch, iy, ix] / stab(total, eps) * r[b, ch, oy, ox]
    return out


def conv_z(x, w, s, p, d):
    """conv2d in float64 (the forward pre-activation) by loops over taps."""
    n, c, h, wd = x.shape
    co, _, kh, kw = w.shape
    oh, ow = (h + 2 * p - d * (kh - 1) - 1) // s + 1, (wd + 2 * p - d * (kw - 1) - 1) // s + 1
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    z = np.zeros((n, co, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * d:i * d + s * (oh - 1) + 1:s, j * d:j * d + s * (ow - 1) + 1:s]
            z += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype(np.float64))
    return z


# ------------------------------------------------------------- ops vs loops
EPSES = [0.0, 0.05]
SHAPES_1D = [(1,), (7,), (33, 5), (0,), (2, 3, 65)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES_1D)
@pytest.mark.parametrize("gate", ["none", "positive", "negative"])
def test_stabilized_divide(be, rng, dtype, shape, gate):
    r, den = rand(rng, shape, dtype), rand(rng, shape, dtype)
    if den.size:
        den.flat[0] = 0  # sign(0) = +1: stab(0) = eps, and 0 passes neither gate
    got = host(nn.lrp_stabilized_divide(*T(r, den), eps=0.05, gate=gate))
    close(got, loop_divide(r, den, np.float64(dtype(0.05)), gate), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES_1D)
@pytest.mark.parametrize("eps", [0.05, 1.0])
def test_residual_split(be, rng, dtype, shape, eps):
    a, b, r = (rand(rng, shape, dtype) for _ in range(3))
    ra, rb = nn.lrp_residual_split(*T(a, b, r), eps=eps)
    e = np.float64(dtype(eps))
    for g, ref in zip((ra, rb), loop_residual(a, b, r, e)):
        close(host(g), ref, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES_1D)
def test_bilinear_elementwise(be, rng, dtype, shape):
    a, b, r = (rand(rng, shape, dtype) for _ in range(3))
    got = host(nn.lrp_bilinear_elementwise(*T(a, b, r), eps=0.05))
    close(got, loop_bilinear_elementwise(a, b, r, np.float64(dtype(0.05))), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n,i,j", [(1, 1, 1), (7, 5, 3), (33, 17, 9), (0, 3, 2), (4, 3, 0), (3, 0, 4)])
@pytest.mark.parametrize("given_z", [True, False])
def test_linear(be, rng, dtype, n, i, j, given_z):
    x, w, r = rand(rng, (n, i), dtype), rand(rng, (i, j), dtype), rand(rng, (n, j), dtype)
    z = (x.astype(np.float64) @ w + 0.3).astype(dtype)  # with a bias
    if given_z:
        got = nn.lrp_linear(*T(x, w, r), z=hf.asarray(z), eps=0.05)
        close(host(got), loop_linear(x, w, z, r, np.float64(dtype(0.05))), dtype)
    else:
        got = nn.lrp_linear(*T(x, w, r), eps=0.05)
        zz = (x.astype(np.float64) @ w).astype(dtype) if n * j else np.zeros((n, j))
        close(host(got), loop_linear(x, w, zz, r, np.float64(dtype(0.05))), dtype)


def test_linear_leading_axes(be, rng):
    x, w, r = rand(rng, (2, 3, 5), np.float64), rand(rng, (5, 4), np.float64), rand(rng, (2, 3, 4), np.float64)
    got = host(nn.lrp_linear(*T(x, w, r), eps=0.1))
    ref = loop_linear(x.reshape(6, 5), w, x.reshape(6, 5) @ w, r.reshape(6, 4), 0.1)
    close(got, ref.reshape(x.shape), np.float64)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch,m,k,n", [((), 1, 1, 1), ((), 5, 3, 7), ((2,), 9, 4, 6), ((2, 3), 3, 5, 2),
                                         ((2,), 0, 3, 4), ((1,), 3, 0, 2)])
@pytest.mark.parametrize("trans_b", [False, True])
def test_bilinear_matmul(be, rng, dtype, batch, m, k, n, trans_b):
    a = rand(rng, batch + (m, k), dtype)
    b = rand(rng, batch + ((n, k) if trans_b else (k, n)), dtype)
    bb = np.swapaxes(b, -1, -2) if trans_b else b
    o = (a.astype(np.float64) @ bb).astype(dtype)
    r = rand(rng, o.shape, dtype)
    ra, rb = nn.lrp_bilinear_matmul(*T(a, b, r), trans_b=trans_b, eps=0.05)
    ref_a, ref_b = loop_bilinear_matmul(a, b, o, r, np.float64(dtype(0.05)), trans_b)
    close(host(ra), ref_a, dtype)
    close(host(rb), ref_b, dtype)
    ra2, rb2 = nn.lrp_bilinear_matmul(*T(a, b, r), o=hf.asarray(o), trans_b=trans_b, eps=0.05)
    close(host(ra2), ref_a, dtype)
    close(host(rb2), ref_b, dtype)


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (7,), (5, 33), (3, 2, 65), (2, 1100), (0, 5), (4, 0)])
def test_softmax_rows(be, rng, dtype, shape):
    x, r = rand(rng, shape, dtype), rand(rng, shape, dtype)
    y = softmax(x.astype(np.float64)).astype(dtype) if x.size else x.copy()
    got = host(nn.lrp_softmax_rows(*T(x, y, r)))
    close(got, loop_softmax_rows(x, y, r), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1, 2), (3, 6), (2, 5, 8), (2, 3, 7, 4), (0, 3, 4)])
def test_rope(be, rng, dtype, shape):
    length, dim = shape[-2:]
    ang = rng.uniform(0, 6.3, (length, dim // 2))
    cos, sin = np.cos(ang).astype(dtype), np.sin(ang).astype(dtype)
    x, r = rand(rng, shape, dtype), rand(rng, shape, dtype)
    got = host(nn.lrp_rope(*T(x, cos, sin, r), eps=0.05))
    close(got, loop_rope(x, cos, sin, r, np.float64(dtype(0.05))), dtype)


CONV_CASES = [((1, 1, 1, 1), (1, 1, 1, 1), 1, 0, 1), ((2, 3, 7, 6), (4, 3, 3, 3), 1, 1, 1),
              ((1, 2, 9, 8), (3, 2, 2, 3), 2, 1, 1), ((2, 2, 8, 7), (2, 2, 3, 2), 1, 0, 2)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("xs,ws,s,p,d", CONV_CASES)
def test_conv(be, rng, dtype, xs, ws, s, p, d):
    x, w = rand(rng, xs, dtype), rand(rng, ws, dtype)
    z = (conv_z(x, w, s, p, d) - 0.2).astype(dtype)  # with a bias
    r = rand(rng, z.shape, dtype)
    X, W = T(x, w)
    patches = nn.im2col(X, ws[2:], stride=s, padding=p, dilation=d)
    got = nn.lrp_conv(patches, W, *T(z, r), x.shape, ws[2:], stride=s, padding=p, dilation=d, eps=0.05)
    close(host(got), loop_conv(x, w, z, r, s, p, d, np.float64(dtype(0.05))), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("xs,k,s,p", [((1, 1, 1, 1), 1, 1, 0), ((2, 3, 7, 6), 3, 2, 1),
                                      ((1, 2, 9, 8), 2, 2, 0), ((2, 1, 5, 7), 3, 1, 1),
                                      ((0, 2, 4, 4), 2, 2, 0)])
def test_avg_pool(be, rng, dtype, xs, k, s, p):
    x = rand(rng, xs, dtype)
    oh, ow = ((n + 2 * p - k) // s + 1 for n in xs[2:])
    r = rand(rng, xs[:2] + (oh, ow), dtype)
    got = host(nn.lrp_avg_pool(*T(x, r), k, stride=s, padding=p, eps=0.05))
    close(got, loop_avg_pool(x, r, k, s, p, np.float64(dtype(0.05))), dtype)


# ------------------------------------------------------------- conservation
def layers(rng, dtype=np.float64):
    """name -> (relevance in (the tensors' sum), relevance out, forward denominators):
    every op on one random layer, at a given eps."""
    x, w = rand(rng, (6, 9), dtype), rand(rng, (9, 5), dtype)
    a, b = rand(rng, (4, 7), dtype), rand(rng, (4, 7), dtype)
    A, B = rand(rng, (2, 5, 3), dtype), rand(rng, (2, 4, 3), dtype)
    xr, ang = rand(rng, (2, 3, 8), dtype), rng.uniform(0, 6.3, (3, 4))
    xc, wc = rand(rng, (2, 3, 7, 6), dtype), rand(rng, (4, 3, 3, 3), dtype)
    xp = rand(rng, (2, 3, 7, 6), dtype) + 3.0  # positive windows (away from 0)

    def run(eps):
        out = {}
        r = rand(rng, (6, 5), dtype)
        z = x @ w
        out["linear"] = (host(nn.lrp_linear(*T(x, w, r), eps=eps)).sum(), r, z)
        r = rand(rng, a.shape, dtype)
        out["residual_split"] = (sum(host(t).sum() for t in nn.lrp_residual_split(*T(a, b, r), eps=eps)),
                                 r, a + b)
        r = rand(rng, a.shape, dtype)
        out["bilinear_elementwise"] = (2 * host(nn.lrp_bilinear_elementwise(*T(a, b, r), eps=eps)).sum(),
                                       r, 2 * a * b)
        o = A @ np.swapaxes(B, -1, -2)
        r = rand(rng, o.shape, dtype)
        out["bilinear_matmul"] = (sum(host(t).sum() for t in nn.lrp_bilinear_matmul(*T(A, B, r), trans_b=True,
                                                                                     eps=eps)), r, o)
        r = rand(rng, xr.shape, dtype)
        c, s = np.cos(ang), np.sin(ang)
        zr = np.empty_like(xr)
        zr[..., 0::2] = xr[..., 0::2] * c - xr[..., 1::2] * s
        zr[..., 1::2] = xr[..., 0::2] * s + xr[..., 1::2] * c
        out["rope"] = (host(nn.lrp_rope(*T(xr, c, s, r), eps=eps)).sum(), r, zr)
        zc = conv_z(xc, wc, 1, 1, 1)
        r = rand(rng, zc.shape, dtype)
        P = nn.im2col(hf.asarray(xc), 3, padding=1)
        out["conv"] = (host(nn.lrp_conv(P, *T(wc, zc, r), xc.shape, 3, padding=1, eps=eps)).sum(), r, zc)
        zp = host(nn.avg_pool(hf.asarray(xp), 3, stride=2, padding=1)) * 9
        r = rand(rng, zp.shape, dtype)
        out["avg_pool"] = (host(nn.lrp_avg_pool(*T(xp, r), 3, stride=2, padding=1, eps=eps)).sum(), r, zp)
        return out
    return run


def test_conservation_exact_at_eps_0(be, rng):
    for name, (r_in, r, _) in layers(rng)(0.0).items():
        assert abs(r_in - r.sum()) <= 1e-10 * np.abs(r).sum(), name
    x, r = rand(rng, (3, 11), np.float64), rand(rng, (3, 11), np.float64)
    # softmax: sum(r_in) = sum(x r) - sum(x y) sum(r), conserved when the logits are
    # shifted to sum(x * y) = 0... check the identity itself
    y = softmax(x)
    got = host(nn.lrp_softmax_rows(*T(x, y, r))).sum(axis=-1)
    np.testing.assert_allclose(got, (x * r).sum(-1) - (x * y).sum(-1) * r.sum(-1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0])
def test_conservation_eps_absorbs(be, rng, eps):
    """With eps > 0 every output o keeps r_o * eps / (|z_o| + eps) of its relevance
    (z_o its denominator): the gap is exactly that sum, and at most eps/|z| of it."""
    for name, (r_in, r, z) in layers(rng)(eps).items():
        absorbed = np.sum(r * eps / (np.abs(z) + eps))
        assert abs(r.sum() - r_in - absorbed) <= 1e-10 * np.abs(r).sum(), name
        assert abs(r.sum() - r_in) <= np.sum(np.abs(r) * eps / (np.abs(z) + eps)) + 1e-12, name


# ------------------------------------------------- finite differences: gradient x input
def fd_grad(f, x, h=1e-6):
    """Central differences of the scalar f at x (float64)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (f(xp) - f(xm)) / (2 * h)
    return g


def fd_close(got, ref):
    np.testing.assert_allclose(got, ref, rtol=1e-7, atol=1e-7 * np.max(np.abs(ref), initial=1.0))


def test_finite_differences(be, rng):
    """Each pass is input * d/d(input) of sum(s * forward(input)) with the quotients s
    held fixed (the epsilon rule as gradient x input): checked by central differences
    of the forward ops through the public API, in float64."""
    f64 = np.float64
    eps = 0.1

    def s_of(r, z, scale=1.0):
        return r / (scale * np.where(z >= 0, z + eps, z - eps))

    # linear
    x, w, r = rand(rng, (3, 5), f64), rand(rng, (5, 4), f64), rand(rng, (3, 4), f64)
    s = s_of(r, x @ w)
    g = fd_grad(lambda v: np.sum(s * host(hf.matmul(*T(v, w)))), x)
    fd_close(host(nn.lrp_linear(*T(x, w, r), eps=eps)), x * g)
    # residual split
    a, b, r = (rand(rng, (4, 3), f64) for _ in range(3))
    s = s_of(r, a + b)
    ra, rb = nn.lrp_residual_split(*T(a, b, r), eps=eps)
    fd_close(host(ra), a * fd_grad(lambda v: np.sum(s * host(hf.add(*T(v, b)))), a))
    fd_close(host(rb), b * fd_grad(lambda v: np.sum(s * host(hf.add(*T(a, v)))), b))
    # bilinear elementwise (s = r / (2c + eps sign c))
    c = a * b
    s = r / np.where(c >= 0, 2 * c + eps, 2 * c - eps)
    got = host(nn.lrp_bilinear_elementwise(*T(a, b, r), eps=eps))
    fd_close(got, a * fd_grad(lambda v: np.sum(s * host(hf.multiply(*T(v, b)))), a))
    fd_close(got, b * fd_grad(lambda v: np.sum(s * host(hf.multiply(*T(a, v)))), b))
    # bilinear matmul, B stored transposed
    A, B = rand(rng, (2, 3, 4), f64), rand(rng, (2, 5, 4), f64)
    o = A @ np.swapaxes(B, -1, -2)
    r = rand(rng, o.shape, f64)
    s = s_of(r, o, 2.0)
    ra, rb = nn.lrp_bilinear_matmul(*T(A, B, r), trans_b=True, eps=eps)
    fd_close(host(ra), A * fd_grad(lambda v: np.sum(s * host(hf.matmul(hf.asarray(v), hf.asarray(B).mT))), A))
    fd_close(host(rb), B * fd_grad(lambda v: np.sum(s * host(hf.matmul(hf.asarray(A), hf.asarray(v).mT))), B))
    # softmax rows: x * d/dx sum(r * log softmax(x))
    x, r = rand(rng, (3, 7), f64), rand(rng, (3, 7), f64)
    y = softmax(x)
    g = fd_grad(lambda v: np.sum(r * np.log(host(nn.softmax_rows(hf.asarray(v))))), x)
    fd_close(host(nn.lrp_softmax_rows(*T(x, y, r))), x * g)
    # rope
    x, r = rand(rng, (2, 3, 6), f64), rand(rng, (2, 3, 6), f64)
    ang = rng.uniform(0, 6.3, (3, 3))
    cs = np.cos(ang), np.sin(ang)
    s = s_of(r, host(nn.rope(*T(x, *cs))))
    g = fd_grad(lambda v: np.sum(s * host(nn.rope(*T(v, *cs)))), x)
    fd_close(host(nn.lrp_rope(*T(x, cs[0], cs[1], r), eps=eps)), x * g)
    # conv (stride 2, padding 1)
    x, w = rand(rng, (1, 2, 5, 4), f64), rand(rng, (3, 2, 3, 2), f64)
    z = host(nn.conv2d(*T(x, w), stride=2, padding=1))
    r = rand(rng, z.shape, f64)
    s = s_of(r, z)
    g = fd_grad(lambda v: np.sum(s * host(nn.conv2d(*T(v, w), stride=2, padding=1))), x)
    P = nn.im2col(hf.asarray(x), (3, 2), stride=2, padding=1)
    got = nn.lrp_conv(P, *T(w, z, r), x.shape, (3, 2), stride=2, padding=1, eps=eps)
    fd_close(host(got), x * g)
    # avg pool: the window sums are avg_pool * 9 (count_include_pad)
    x = rand(rng, (1, 2, 5, 6), f64)
    z = host(nn.avg_pool(hf.asarray(x), 3, stride=2, padding=1)) * 9
    r = rand(rng, z.shape, f64)
    s = s_of(r, z)
    g = fd_grad(lambda v: np.sum(s * 9 * host(nn.avg_pool(hf.asarray(v), 3, stride=2, padding=1))), x)
    fd_close(host(nn.lrp_avg_pool(*T(x, r), 3, stride=2, padding=1, eps=eps)), x * g)


# ------------------------------------------------------------- GPU vs CPU, determinism
def cases(rng, dtype):
    """(name, f, host operands) at sizes that are not multiples of a block or a warp."""
    R = lambda *s: rand(rng, s, dtype)  # noqa: E731
    xs = R(37, 1100)
    ang = rng.uniform(0, 6.3, (129, 32))
    return [
        ("stabilized_divide", lambda r, d: nn.lrp_stabilized_divide(r, d, eps=1e-3, gate="positive"),
         (R(1000, 37), R(1000, 37))),
        ("residual_split", lambda a, b, r: nn.lrp_residual_split(a, b, r, eps=1e-3),
         (R(70001), R(70001), R(70001))),
        ("bilinear_elementwise", lambda a, b, r: nn.lrp_bilinear_elementwise(a, b, r, eps=1e-3),
         (R(333, 65), R(333, 65), R(333, 65))),
        ("linear", lambda x, w, r: nn.lrp_linear(x, w, r, eps=1e-2), (R(129, 257), R(257, 65), R(129, 65))),
        ("bilinear_matmul", lambda a, b, r: nn.lrp_bilinear_matmul(a, b, r, trans_b=True, eps=1e-2),
         (R(3, 65, 33), R(3, 47, 33), R(3, 65, 47))),
        ("softmax_rows_short", lambda x, y, r: nn.lrp_softmax_rows(x, y, r),
         (R(1001, 33), softmax(R(1001, 33)).astype(dtype), R(1001, 33))),
        ("softmax_rows_long", lambda x, y, r: nn.lrp_softmax_rows(x, y, r),
         (xs, softmax(xs).astype(dtype), R(37, 1100))),
        ("rope", lambda x, c, s, r: nn.lrp_rope(x, c, s, r, eps=1e-2),
         (R(3, 129, 64), np.cos(ang).astype(dtype), np.sin(ang).astype(dtype), R(3, 129, 64))),
        ("conv", lambda x, w, r: nn.lrp_conv(nn.im2col(x, 3, padding=1), w, nn.conv2d(x, w, padding=1), r,
                                             x.shape, 3, padding=1, eps=1e-2),
         (R(2, 5, 33, 35), R(7, 5, 3, 3), R(2, 7, 33, 35))),
        ("avg_pool", lambda x, r: nn.lrp_avg_pool(x, r, 3, stride=2, padding=1, eps=1e-2),
         (R(3, 5, 33, 35), R(3, 5, 17, 18))),
    ]


@pytest.mark.parametrize("dtype", FLOATS)
def test_gpu_matches_cpu(be, rng, dtype):
    """Every op on the test's backend against the CPU backend (the NumPy reference)."""
    for name, f, args in cases(rng, dtype):
        got = f(*T(*args))
        ref = on_cpu(f, *args)
        for g, rf in zip(got if isinstance(got, tuple) else (got,), ref if isinstance(ref, tuple) else (ref,)):
            t = 1e-3 if np.dtype(dtype) == np.float32 else 1e-9
            scale = np.max(np.abs(rf), initial=1.0)
            np.testing.assert_allclose(host(g), rf, rtol=t, atol=t * scale, err_msg=name)


@pytest.mark.parametrize("dtype", FLOATS)
def test_deterministic(be, rng, dtype):
    """Every op twice on the same inputs: the same bits (fixed orders, no atomics)."""
    for name, f, args in cases(rng, dtype):
        ts = T(*args)
        first, second = f(*ts), f(*ts)
        first = first if isinstance(first, tuple) else (first,)
        second = second if isinstance(second, tuple) else (second,)
        assert [bits(t) for t in first] == [bits(t) for t in second], name


def test_pool_gather_order_matches_reference(be, rng):
    """lrp_avg_pool sums window sums and shares in the reference's tap order."""
    x, r = rand(rng, (2, 3, 11, 9), np.float64), rand(rng, (2, 3, 6, 5), np.float64)
    f = lambda a, b: nn.lrp_avg_pool(a, b, 3, stride=2, padding=1)  # noqa: E731
    np.testing.assert_allclose(host(f(*T(x, r))), on_cpu(f, x, r), rtol=1e-13, atol=1e-13)


def test_eps_reuses_plan_and_changes_result(be, rng):
    r, d = T(rand(rng, (9,), np.float64), rand(rng, (9,), np.float64))
    a = host(nn.lrp_stabilized_divide(r, d, eps=0.0))
    b = host(nn.lrp_stabilized_divide(r, d, eps=10.0))
    assert not np.allclose(a, b)


# ------------------------------------------------------------- bad input
def test_bad_input(be):
    o = lambda *s, dt=np.float64: hf.asarray(np.ones(s, dt))  # noqa: E731
    with pytest.raises(ValueError, match="shapes differ"):
        nn.lrp_stabilized_divide(o(3), o(4))
    with pytest.raises(ValueError, match="gate must be one of"):
        nn.lrp_stabilized_divide(o(3), o(3), gate="both")
    with pytest.raises(ValueError, match="eps"):
        nn.lrp_stabilized_divide(o(3), o(3), eps=-1.0)
    with pytest.raises(ValueError, match="eps"):
        nn.lrp_residual_split(o(3), o(3), o(3), eps=float("nan"))
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.lrp_residual_split(o(3, dt=np.int64), o(3, dt=np.int64), o(3, dt=np.int64))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.lrp_bilinear_elementwise(o(3), o(3, dt=np.float32), o(3))
    with pytest.raises(ValueError, match="shapes differ"):
        nn.lrp_bilinear_elementwise(o(3), o(3), o(2))
    with pytest.raises(ValueError, match="features"):
        nn.lrp_linear(o(2, 3), o(4, 5), o(2, 5))
    with pytest.raises(ValueError, match="z and r"):
        nn.lrp_linear(o(2, 3), o(3, 5), o(2, 5), z=o(2, 4))
    with pytest.raises(ValueError, match="leading axes"):
        nn.lrp_linear(o(2, 3), o(3, 5), o(3, 5))
    with pytest.raises(ValueError, match="inner sizes differ"):
        nn.lrp_bilinear_matmul(o(2, 3), o(4, 5), o(2, 5))
    with pytest.raises(ValueError, match="batch"):
        nn.lrp_bilinear_matmul(o(2, 2, 3), o(3, 3, 5), o(2, 2, 5), o=o(2, 2, 5))
    with pytest.raises(ValueError, match="O and R"):
        nn.lrp_bilinear_matmul(o(2, 3), o(3, 5), o(2, 4), o=o(2, 5))
    with pytest.raises(ValueError, match="trans_b"):
        from hipfer.nn._common import fused
        from hipfer.nn._lrp import ops as lrp_ops
        fused(lrp_ops.LRP_BILINEAR_MATMUL, [o(2, 3), o(3, 5), o(2, 5), o(2, 5)], {"trans_b": 1})
    with pytest.raises(ValueError, match="shapes differ"):
        nn.lrp_softmax_rows(o(2, 3), o(2, 3), o(2, 4))
    with pytest.raises(ValueError, match="head_dim must be even"):
        nn.lrp_rope(o(2, 3), o(2, 1), o(2, 1), o(2, 3))
    with pytest.raises(ValueError, match="cos must have shape"):
        nn.lrp_rope(o(2, 4), o(3, 2), o(2, 2), o(2, 4))
    with pytest.raises(ValueError, match="x and r"):
        nn.lrp_rope(o(2, 4), o(2, 2), o(2, 2), o(1, 2, 4))
    with pytest.raises(ValueError, match="columns"):
        nn.lrp_conv(o(1, 9, 4), o(2, 8), o(1, 2, 4), o(1, 2, 4), (1, 1, 4, 4), 3)
    with pytest.raises(ValueError, match="z and r"):
        nn.lrp_conv(o(1, 9, 4), o(2, 9), o(1, 2, 4), o(1, 2, 3), (1, 1, 4, 4), 3)
    with pytest.raises(ValueError, match="pooled output and r"):
        nn.lrp_avg_pool(o(1, 1, 4, 4), o(1, 1, 3, 3), 2)
    with pytest.raises(ValueError, match="padding"):
        nn.lrp_avg_pool(o(1, 1, 4, 4), o(1, 1, 4, 4), 2, stride=1, padding=2)
    with pytest.raises(TypeError, match="hipfer Tensor"):
        nn.lrp_softmax_rows(np.ones(3), o(3), o(3))
