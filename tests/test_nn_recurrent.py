"""hipfer.nn recurrent ops: NumPy references against plain Python loops, float64 central
finite differences for every backward, GPU against CPU, bitwise repeatability, bad input."""
import math

import numpy as np
import pytest

import hipfer as hf
import hipfer.nn as nn

from test_tensor import host

FLOATS = [np.float32, np.float64]


def tol(dt):
    return dict(rtol=2e-4, atol=2e-5) if np.dtype(dt) == np.float32 else dict(rtol=1e-10, atol=1e-12)


def rnd(rng, shape, dt, lo=-1.0, hi=1.0):
    """Uniform in [lo, hi), never exactly zero."""
    a = rng.uniform(lo, hi, shape)
    a[a == 0] = 0.5
    return a.astype(dt)


def sig(x):
    return 1 / (1 + math.exp(-x))


def bits(ts):
    return [host(t).tobytes() for t in (ts if isinstance(ts, tuple) else (ts,)) if t is not None]


# ------------------------------------------------------------------- inputs per op
def lstm_in(rng, dt, n, h):
    return [rnd(rng, (n, 4 * h), dt, -2, 2), rnd(rng, (n, h), dt)]


def gru_in(rng, dt, n, h):
    return [rnd(rng, (n, 3 * h), dt, -2, 2), rnd(rng, (n, 3 * h), dt, -2, 2), rnd(rng, (n, h), dt)]


def scan_in(rng, dt, b, l, d, n):
    return [rnd(rng, (b, l, d), dt), rnd(rng, (b, l, d), dt, 0.05, 0.8), rnd(rng, (d, n), dt, -1.5, -0.1),
            rnd(rng, (b, l, n), dt), rnd(rng, (b, l, n), dt), rnd(rng, (d,), dt)]


def wkv_in(rng, dt, b, l, c):
    return [rnd(rng, (c,), dt, -1, 1), rnd(rng, (c,), dt, -1, 1), rnd(rng, (b, l, c), dt, -2, 2),
            rnd(rng, (b, l, c), dt)]


def ret_in(rng, dt, b, l, dk, dv):
    return [rnd(rng, (b, l, dk), dt), rnd(rng, (b, l, dk), dt), rnd(rng, (b, l, dv), dt),
            rnd(rng, (b,), dt, 0.5, 0.99)]


def on(arrays, device=None):
    return [hf.asarray(a) if device is None else hf.asarray(a, device=device) for a in arrays]


# ------------------------------------------------------- references: plain Python loops
def loop_lstm(gates, c_prev):
    n, h = c_prev.shape
    H, C = np.zeros((n, h)), np.zeros((n, h))
    for r in range(n):
        for j in range(h):
            i, f, g, o = (gates[r, k * h + j] for k in range(4))
            C[r, j] = sig(f) * c_prev[r, j] + sig(i) * math.tanh(g)
            H[r, j] = sig(o) * math.tanh(C[r, j])
    return H, C


def loop_gru(x_pre, h_pre, h_prev):
    n, h = h_prev.shape
    out = np.zeros((n, h))
    for a in range(n):
        for j in range(h):
            r = sig(x_pre[a, j] + h_pre[a, j])
            z = sig(x_pre[a, h + j] + h_pre[a, h + j])
            nn_ = math.tanh(x_pre[a, 2 * h + j] + r * h_pre[a, 2 * h + j])
            out[a, j] = (1 - z) * nn_ + z * h_prev[a, j]
    return out


def loop_scan(x, delta, A, Bm, C, D):
    b_, l_, d_ = x.shape
    y = np.zeros(x.shape)
    for b in range(b_):
        for d in range(d_):
            h = [0.0] * A.shape[1]
            for t in range(l_):
                acc = 0.0
                for n in range(A.shape[1]):
                    h[n] = math.exp(delta[b, t, d] * A[d, n]) * h[n] + delta[b, t, d] * x[b, t, d] * Bm[b, t, n]
                    acc += C[b, t, n] * h[n]
                y[b, t, d] = acc + D[d] * x[b, t, d]
    return y


def loop_wkv(w, u, k, v):
    """The textbook recurrence, no max trick (fine for small exponents)."""
    y = np.zeros(k.shape)
    for b in range(k.shape[0]):
        for c in range(k.shape[2]):
            a = bb = 0.0
            decay = math.exp(-math.exp(w[c]))
            for t in range(k.shape[1]):
                e = math.exp(u[c] + k[b, t, c])
                y[b, t, c] = (a + e * v[b, t, c]) / (bb + e)
                a = decay * a + math.exp(k[b, t, c]) * v[b, t, c]
                bb = decay * bb + math.exp(k[b, t, c])
    return y


def loop_retention(q, k, v, gamma):
    b_, l_, dk = q.shape
    o = np.zeros(v.shape)
    for b in range(b_):
        S = [[0.0] * v.shape[2] for _ in range(dk)]
        for t in range(l_):
            for i in range(dk):
                for j in range(v.shape[2]):
                    S[i][j] = gamma[b] * S[i][j] + k[b, t, i] * v[b, t, j]
            for j in range(v.shape[2]):
                o[b, t, j] = sum(q[b, t, i] * S[i][j] for i in range(dk))
    return o


def test_cells_against_loops(rng):
    x = lstm_in(rng, np.float64, 3, 5)
    h, c, acts = nn.lstm_cell(*on(x))
    H, C = loop_lstm(*x)
    np.testing.assert_allclose(host(h), H, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(host(c), C, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(host(acts)[:, 10:15], np.tanh(x[0][:, 10:15]), rtol=1e-14)
    g = gru_in(rng, np.float64, 3, 5)
    h, acts = nn.gru_cell(*on(g))
    np.testing.assert_allclose(host(h), loop_gru(*g), rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(host(acts)[:, 15:], g[1][:, 10:])  # hn saved as given


def test_scans_against_loops(rng):
    s = scan_in(rng, np.float64, 2, 6, 3, 4)
    np.testing.assert_allclose(host(nn.selective_scan(*on(s))), loop_scan(*s), rtol=1e-12, atol=1e-14)
    s[5][:] = 0
    np.testing.assert_allclose(host(nn.selective_scan(*on(s[:5]))), loop_scan(*s), rtol=1e-12, atol=1e-14)
    w = wkv_in(rng, np.float64, 2, 7, 3)
    np.testing.assert_allclose(host(nn.wkv(*on(w))), loop_wkv(*w), rtol=1e-12, atol=1e-14)
    r = ret_in(rng, np.float64, 2, 5, 3, 4)
    np.testing.assert_allclose(host(nn.retention(*on(r))), loop_retention(*r), rtol=1e-12, atol=1e-14)


def test_wkv_stable_for_large_exponents(be, rng):
    """k = 200 overflows exp in the textbook form; the running max keeps it finite and
    equal to the shifted computation."""
    w, u, k, v = wkv_in(rng, np.float64, 1, 9, 4)
    y_small = host(nn.wkv(*on([w, u, k, v])))
    y_big = host(nn.wkv(*on([w, u, k + 200.0, v])))  # every exponent shifted: the ratio holds
    assert np.isfinite(y_big).all()
    np.testing.assert_allclose(y_big, y_small, rtol=1e-10)


def test_gru_lrp_prev(be, rng):
    x_pre, h_pre, h_prev = gru_in(rng, np.float64, 4, 6)
    rel = rnd(rng, (4, 6), np.float64)
    h, acts = nn.gru_cell(*on([x_pre, h_pre, h_prev]))
    a, H = host(acts), host(h)
    z = a[:, 6:12]
    for eps in (1e-6, 0.1):
        r = host(nn.gru_lrp_prev(acts, hf.asarray(h_prev), hf.asarray(rel), eps=eps))
        want = z * h_prev / (H + eps * np.where(H >= 0, 1, -1)) * rel
        np.testing.assert_allclose(r, want, rtol=1e-11)
    # eps = 0 and no other path: the z * h_prev share of h carries that share of R_h
    r = host(nn.gru_lrp_prev(acts, hf.asarray(h_prev), hf.asarray(rel), eps=0.0))
    np.testing.assert_allclose(r, z * h_prev / H * rel, rtol=1e-11)


# ----------------------------------------------------- finite differences (float64)
def fd_grad(f, arrays, i, h=1e-6):
    """d sum(f(arrays)) / d arrays[i] by central differences (f returns a weighted sum)."""
    a = arrays[i]
    g = np.zeros(a.shape)
    for idx in np.ndindex(a.shape):
        old = a[idx]
        a[idx] = old + h
        fp = f(arrays)
        a[idx] = old - h
        fm = f(arrays)
        a[idx] = old
        g[idx] = (fp - fm) / (2 * h)
    return g


def check_fd(f, arrays, grads, rtol=1e-6, atol=1e-8):
    for i, g in enumerate(grads):
        if g is None:
            continue
        np.testing.assert_allclose(host(g) if not isinstance(g, np.ndarray) else g,
                                   fd_grad(f, arrays, i), rtol=rtol, atol=atol, err_msg=f"operand {i}")


def test_lstm_backward_fd(be, rng):
    x = lstm_in(rng, np.float64, 3, 4)
    rh, rc = rnd(rng, (3, 4), np.float64), rnd(rng, (3, 4), np.float64)

    def loss(a):
        h, c, _ = nn.lstm_cell(*on(a))
        return float(np.sum(host(h) * rh) + np.sum(host(c) * rc))
    _, _, acts = nn.lstm_cell(*on(x))
    dg, dcp = nn.lstm_cell_backward(acts, hf.asarray(x[1]), hf.asarray(rh), hf.asarray(rc))
    check_fd(loss, x, [dg, dcp])


def test_gru_backward_fd(be, rng):
    x = gru_in(rng, np.float64, 3, 4)
    rh = rnd(rng, (3, 4), np.float64)

    def loss(a):
        return float(np.sum(host(nn.gru_cell(*on(a))[0]) * rh))
    _, acts = nn.gru_cell(*on(x))
    check_fd(loss, x, nn.gru_cell_backward(acts, hf.asarray(x[2]), hf.asarray(rh)))


@pytest.mark.parametrize("with_d", [True, False])
def test_selective_scan_backward_fd(be, rng, with_d):
    s = scan_in(rng, np.float64, 2, 5, 3, 2)
    if not with_d:
        s = s[:5] + [None]
    ry = rnd(rng, (2, 5, 3), np.float64)

    def loss(a):
        return float(np.sum(host(nn.selective_scan(*on(a[:5]), None if a[5] is None else hf.asarray(a[5]))) * ry))
    grads = nn.selective_scan_backward(*on(s[:5]), None if s[5] is None else hf.asarray(s[5]), hf.asarray(ry))
    assert (grads[5] is None) == (not with_d)
    check_fd(loss, s, grads)


def test_wkv_backward_fd(be, rng):
    w = wkv_in(rng, np.float64, 2, 6, 3)
    ry = rnd(rng, (2, 6, 3), np.float64)

    def loss(a):
        return float(np.sum(host(nn.wkv(*on(a))) * ry))
    check_fd(loss, w, nn.wkv_backward(*on(w), hf.asarray(ry)))


def test_retention_backward_fd(be, rng):
    r = ret_in(rng, np.float64, 2, 5, 3, 4)
    ro = rnd(rng, (2, 5, 4), np.float64)

    def loss(a):
        return float(np.sum(host(nn.retention(*on(a))) * ro))
    check_fd(loss, r, nn.retention_backward(*on(r), hf.asarray(ro)))


# ---------------------------------------- every backend against the CPU, repeatability
CELL_SIZES = [(1, 1), (3, 33), (7, 65), (0, 4), (129, 257)]
# N (Dk, Dv) of 1..16, 17..64 and over 64 reach each lane-state variant of the GPU kernels
SCAN_SIZES = [(1, 1, 1, 1), (2, 7, 33, 5), (3, 65, 17, 16), (1, 300, 2, 3), (0, 4, 3, 2), (2, 0, 3, 2),
              (2, 3, 257, 1), (2, 5, 3, 17), (1, 4, 2, 65)]


def run_both(be, f, arrays, grad_shapes, rng, dt):
    """f on be and on the CPU (the NumPy reference); be's twice, compared bit for bit."""
    dy = [rnd(rng, s, dt) for s in grad_shapes]
    dev = on(arrays) + on(dy)
    got, again = f(*dev), f(*dev)
    assert bits(got) == bits(again)
    ref = f(*(on(arrays, "cpu") + on(dy, "cpu")))
    got, ref = (got, ref) if isinstance(got, tuple) else ((got,), (ref,))
    for g, r in zip(got, ref):
        assert g.shape == r.shape and g.dtype == dt
        np.testing.assert_allclose(host(g), host(r), **tol(dt))
    return got


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n,h", CELL_SIZES)
def test_cells_match_cpu(be, rng, dtype, n, h):
    x = lstm_in(rng, dtype, n, h)
    _, _, acts = run_both(be, nn.lstm_cell, x, [], rng, dtype)
    run_both(be, nn.lstm_cell_backward, [host(acts), x[1]], [(n, h), (n, h)], rng, dtype)
    g = gru_in(rng, dtype, n, h)
    _, acts = run_both(be, nn.gru_cell, g, [], rng, dtype)
    run_both(be, nn.gru_cell_backward, [host(acts), g[2]], [(n, h)], rng, dtype)
    run_both(be, lambda a, p, r: nn.gru_lrp_prev(a, p, r, eps=1e-3), [host(acts), g[2]], [(n, h)], rng, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("b,l,d,n", SCAN_SIZES)
def test_selective_scan_matches_cpu(be, rng, dtype, b, l, d, n):
    s = scan_in(rng, dtype, b, l, d, n)
    run_both(be, nn.selective_scan, s, [], rng, dtype)
    run_both(be, nn.selective_scan_backward, s, [(b, l, d)], rng, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("b,l,c", [(1, 1, 1), (2, 7, 33), (3, 129, 65), (0, 3, 2), (2, 0, 3), (1, 1000, 3)])
def test_wkv_matches_cpu(be, rng, dtype, b, l, c):
    w = wkv_in(rng, dtype, b, l, c)
    run_both(be, nn.wkv, w, [], rng, dtype)
    run_both(be, nn.wkv_backward, w, [(b, l, c)], rng, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("b,l,dk,dv", [(1, 1, 1, 1), (2, 7, 5, 33), (3, 65, 16, 17), (0, 3, 2, 2),
                                       (2, 0, 3, 2), (1, 300, 3, 2), (2, 3, 65, 1),
                                       (2, 4, 70, 66)])
def test_retention_matches_cpu(be, rng, dtype, b, l, dk, dv):
    r = ret_in(rng, dtype, b, l, dk, dv)
    run_both(be, nn.retention, r, [], rng, dtype)
    run_both(be, nn.retention_backward, r, [(b, l, dv)], rng, dtype)


# ----------------------------------------------------------------------- bad input
def test_bad_input(be):
    def t(*shape, dt=np.float64):
        return hf.asarray(np.ones(shape, dt))
    with pytest.raises(ValueError, match=r"\(N, 4H\)"):
        nn.lstm_cell(t(2, 6), t(2, 1))
    with pytest.raises(ValueError, match="c_prev"):
        nn.lstm_cell(t(2, 8), t(2, 3))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.lstm_cell(t(2, 8), t(2, 2, dt=np.float32))
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.gru_cell(t(2, 6, dt=np.int64), t(2, 6, dt=np.int64), t(2, 2, dt=np.int64))
    with pytest.raises(ValueError, match="x_pre and h_pre"):
        nn.gru_cell(t(2, 6), t(2, 9), t(2, 2))
    with pytest.raises(ValueError, match="dh"):
        nn.gru_cell_backward(t(2, 8), t(2, 2), t(3, 2))
    with pytest.raises(ValueError, match="eps="):
        nn.gru_lrp_prev(t(2, 8), t(2, 2), t(2, 2), eps=-1.0)
    with pytest.raises(ValueError, match="3-d"):
        nn.selective_scan(t(2, 3), t(2, 3), t(3, 2), t(2, 3, 2), t(2, 3, 2))
    with pytest.raises(ValueError, match=r"A must be \(D, N\)"):
        nn.selective_scan(t(1, 2, 3), t(1, 2, 3), t(4, 2), t(1, 2, 2), t(1, 2, 2))
    with pytest.raises(ValueError, match="Bm"):
        nn.selective_scan(t(1, 2, 3), t(1, 2, 3), t(3, 2), t(1, 2, 3), t(1, 2, 2))
    with pytest.raises(ValueError, match="D_skip"):
        nn.selective_scan(t(1, 2, 3), t(1, 2, 3), t(3, 2), t(1, 2, 2), t(1, 2, 2), t(2))
    with pytest.raises(ValueError, match="dy"):
        nn.selective_scan_backward(t(1, 2, 3), t(1, 2, 3), t(3, 2), t(1, 2, 2), t(1, 2, 2), None, t(1, 2, 4))
    with pytest.raises(ValueError, match="k and v"):
        nn.wkv(t(3), t(3), t(1, 2, 3), t(1, 3, 3))
    with pytest.raises(ValueError, match="and w"):
        nn.wkv(t(2), t(3), t(1, 2, 3), t(1, 2, 3))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.wkv_backward(t(3), t(3), t(1, 2, 3), t(1, 2, 3), t(1, 2, 3, dt=np.float32))
    with pytest.raises(ValueError, match="gamma"):
        nn.retention(t(2, 3, 4), t(2, 3, 4), t(2, 3, 5), t(3))
    with pytest.raises(ValueError, match="q and k"):
        nn.retention(t(2, 3, 4), t(2, 3, 5), t(2, 3, 5), t(2))
    with pytest.raises(ValueError, match="v and do"):
        nn.retention_backward(t(2, 3, 4), t(2, 3, 4), t(2, 3, 5), t(2), t(2, 3, 4))
    with pytest.raises(TypeError, match="hipfer Tensor"):
        nn.wkv(np.ones(3), t(3), t(1, 2, 3), t(1, 2, 3))
