"""Run SciPy functions (SCIPY_ARRAY_API=1) on hipfer tensors and compare with SciPy on
NumPy arrays; prints one JSON object {name: "ok" | error text}. Run as a script (the
environment variable must be set before SciPy is imported):

    SCIPY_ARRAY_API=1 HIPFER_DEVICE=gpu python tests/scipy_consumer.py
"""
import json
import os
import sys

import numpy as np

assert os.environ.get("SCIPY_ARRAY_API") == "1", "set SCIPY_ARRAY_API=1 before running"

import scipy.fft as sfft  # noqa: E402
import scipy.signal as sig  # noqa: E402
import scipy.special as sp  # noqa: E402
import scipy.stats as st  # noqa: E402

import hipfer as hf  # noqa: E402

rng = np.random.default_rng(11)
a = rng.random(64) + 0.1
b = rng.standard_normal(64)
m = rng.standard_normal((8, 16))

CASES = {
    "special.logsumexp": (sp.logsumexp, (b,)),
    "special.softmax": (sp.softmax, (m,)),
    "special.log_softmax": (sp.log_softmax, (m,)),
    "special.entr": (sp.entr, (a,)),
    "special.xlogy": (sp.xlogy, (a, a[::-1])),
    "special.erf": (sp.erf, (b,)),
    "special.expit": (sp.expit, (b,)),
    "special.gammaln": (sp.gammaln, (a,)),
    "signal.convolve": (sig.convolve, (b, a[:7])),
    "signal.fftconvolve": (sig.fftconvolve, (b, a[:7])),
    "signal.correlate": (sig.correlate, (b, a[:7])),
    "signal.detrend": (sig.detrend, (b,)),
    "stats.zscore": (st.zscore, (m,)),
    "stats.skew": (st.skew, (b,)),
    "stats.kurtosis": (st.kurtosis, (b,)),
    "stats.moment": (lambda x: st.moment(x, order=3), (b,)),
    "stats.variation": (st.variation, (a,)),
    "stats.sem": (st.sem, (b,)),
    "stats.pearsonr": (lambda x, y: st.pearsonr(x, y).statistic, (a, b)),
    "stats.ttest_1samp": (lambda x: st.ttest_1samp(x, 0.0).statistic, (b,)),
    "stats.gmean": (st.gmean, (a,)),
    "stats.hmean": (st.hmean, (a,)),
    "fft.fft": (sfft.fft, (b,)),
    "fft.ifft": (sfft.ifft, (b,)),
    "fft.rfft": (sfft.rfft, (b,)),
    "fft.irfft": (sfft.irfft, (b,)),
    "fft.fftn": (sfft.fftn, (m,)),
    "fft.fftshift": (sfft.fftshift, (b,)),
    "fft.fftfreq": (lambda: sfft.fftfreq(16, xp=hf), ()),
    "fft.dct": (sfft.dct, (b,)),
}


def _host(r):
    if isinstance(r, hf.Tensor):
        return np.asarray(r.to_device("cpu"))
    return np.asarray(r)


def main():
    dev = hf.get_default_device()
    report = {"device": str(dev)}
    for name, (fn, args) in CASES.items():
        try:
            want = fn(*args) if args else np.fft.fftfreq(16)
            got = fn(*(hf.asarray(x) for x in args))
            if isinstance(got, hf.Tensor) and got.device != dev:
                raise AssertionError(f"result on {got.device}, expected {dev}")
            if not isinstance(got, hf.Tensor):
                raise AssertionError(f"result is {type(got).__name__}, not a hipfer Tensor")
            np.testing.assert_allclose(_host(got), np.asarray(want), rtol=1e-10, atol=1e-12)
            report[name] = "ok"
        except Exception as e:  # the report says what failed and why
            report[name] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
