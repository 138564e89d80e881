"""hipfer.nn logic ops on the GPU: against the memory-bandwidth floor and against PyTorch
(composed from its ops) on the same device and the same data.

    python3 benchmarks/bench_nn_logic.py [--quick] [--json FILE]

These ops are bandwidth-bound. The floor of each case is bytes moved (every operand read
once, every output written once; int64 actions 8 bytes each) / the device-to-device copy
bandwidth measured in the same run; "of floor" is floor time / hipfer time (goal >= 0.8).
Comparators: torch.prod / torch.mean(x**p)**(1/p) over axis 0, the tanh-Gaussian
log-prob of SAC-style code, torch.log_softmax + gather for the policy-gradient loss, and
max + fused arithmetic for the Q-learning target.
"""
from __future__ import annotations

import math

import numpy as np

from _timing import run_cases  # noqa: E402 (benchmarks/ is on sys.path when run as a script)


def cases(cupy, torch, hf, nn, rng, quick: bool):
    """(name, n, dtype, bytes moved, hipfer fn, {other: fn})."""
    T = torch
    out = []
    for dt in (np.float32, np.float64):
        it = np.dtype(dt).itemsize
        n = (1 << (22 if quick else 24)) // (it // 4)  # elements of one operand
        k = 4
        x = cupy.asarray(rng.uniform(0.05, 0.95, (k, n)).astype(dt))
        X, tx = hf.asarray(x), None if T is None else T.from_dlpack(x)
        g = cupy.asarray(rng.standard_normal(n).astype(dt))
        G = hf.asarray(g)
        out.append(("logic AND product k=4", k * n, dt, (k + 1) * n * it,
                    lambda X=X: nn.logic_pointwise(X),
                    {"torch.prod": None if T is None else (lambda t=tx: T.prod(t, 0))}))
        out.append(("logic AND product backward k=4", k * n, dt, (2 * k + 1) * n * it,
                    lambda X=X, G=G: nn.logic_pointwise_backward(X, G), {}))
        out.append(("logic OR lukasiewicz lrp k=4", k * n, dt, (2 * k + 1) * n * it,
                    lambda X=X, G=G: nn.logic_pointwise_lrp(X, G, kind="or", norm="lukasiewicz"), {}))
        out.append(("aggregator p=2.5 k=4", k * n, dt, (k + 1) * n * it,
                    lambda X=X: nn.aggregator(X, p=2.5),
                    {"torch mean(x**p)**(1/p)": None if T is None else (
                        lambda t=tx: T.mean(t ** 2.5, 0) ** (1 / 2.5))}))
        out.append(("aggregator backward p=2.5 k=4", k * n, dt, (2 * k + 1) * n * it,
                    lambda X=X, G=G: nn.aggregator_backward(X, G, p=2.5), {}))

        rows, d = n // 8, 8  # a policy of 8 action dimensions
        m, s, e = (cupy.asarray(rng.standard_normal((rows, d)).astype(dt)) for _ in range(3))
        M, S, E = hf.asarray(m), hf.asarray(s), hf.asarray(e)

        def torch_tanh_gaussian(m=m, s=s, e=e):
            tm, ts, te = T.from_dlpack(m), T.from_dlpack(s), T.from_dlpack(e)
            u = tm + T.exp(ts) * te
            a = T.tanh(u)
            lp = (-0.5 * te * te - ts - 0.5 * math.log(2 * math.pi)
                  - 2 * (math.log(2) - u - T.nn.functional.softplus(-2 * u))).sum(1)
            return a, lp
        out.append(("tanh_gaussian D=8", rows * d, dt, 4 * rows * d * it + rows * it,
                    lambda M=M, S=S, E=E: nn.tanh_gaussian(M, S, E),
                    {"torch (composed)": None if T is None else torch_tanh_gaussian}))
        ga = cupy.asarray(rng.standard_normal((rows, d)).astype(dt))
        gl = cupy.asarray(rng.standard_normal(rows).astype(dt))
        GA, GL = hf.asarray(ga), hf.asarray(gl)
        out.append(("tanh_gaussian backward D=8", rows * d, dt, 6 * rows * d * it + rows * it,
                    lambda M=M, S=S, E=E, GA=GA, GL=GL: nn.tanh_gaussian_backward(M, S, E, GA, GL), {}))

        for a in (18, 1024):
            rows = n // a
            z = cupy.asarray(rng.standard_normal((rows, a)).astype(dt))
            act = cupy.asarray(rng.integers(0, a, rows))
            adv = cupy.asarray(rng.standard_normal(rows).astype(dt))
            Z, A, ADV = hf.asarray(z), hf.asarray(act), hf.asarray(adv)

            def torch_pg(z=z, act=act, adv=adv):
                lp = T.log_softmax(T.from_dlpack(z), 1)
                return -T.from_dlpack(adv) * lp.gather(1, T.from_dlpack(act)[:, None])[:, 0]
            out.append((f"policy_gradient A={a}", rows * a, dt, rows * a * it + rows * (8 + 2 * it),
                        lambda Z=Z, A=A, ADV=ADV: nn.policy_gradient_loss(Z, A, ADV),
                        {"torch log_softmax+gather": None if T is None else torch_pg}))
            out.append((f"policy_gradient backward A={a} entropy", rows * a, dt,
                        2 * rows * a * it + rows * (8 + 2 * it),
                        lambda Z=Z, A=A, ADV=ADV: nn.policy_gradient_backward(Z, A, ADV, ADV, entropy_coef=0.01),
                        {}))

        rows, a = n // 6, 6
        q = cupy.asarray(rng.standard_normal((rows, a)).astype(dt))
        r = cupy.asarray(rng.standard_normal(rows).astype(dt))
        dn = cupy.asarray((rng.random(rows) < 0.1).astype(dt))
        Q, R, D = hf.asarray(q), hf.asarray(r), hf.asarray(dn)

        def torch_td(q=q, r=r, dn=dn):
            return T.from_dlpack(r) + 0.99 * (1 - T.from_dlpack(dn)) * T.from_dlpack(q).max(1).values
        out.append(("td_target Q A=6", rows * a, dt, rows * a * it + 3 * rows * it,
                    lambda Q=Q, R=R, D=D: nn.td_target(R, D, Q, gamma=0.99),
                    {"torch (composed)": None if T is None else torch_td}))
        on = cupy.asarray(rng.standard_normal(n).astype(dt))
        tgt = hf.asarray(cupy.asarray(rng.standard_normal(n).astype(dt)))
        ON = hf.asarray(on)
        out.append(("polyak_update", n, dt, 3 * n * it,
                    lambda tgt=tgt, ON=ON: nn.polyak_update(tgt, ON, tau=0.005), {}))
    return out


def main():
    run_cases(__doc__, cases)


if __name__ == "__main__":
    main()
