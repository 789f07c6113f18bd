#!/usr/bin/python3
"""Reference biquads for Tests/SFXCoreTests/BiquadTests.swift.

    /usr/bin/python3 Tests/Support/filters/FilterReference.py DIRECTORY

DIRECTORY/cases.json lists the cases: objects with kind (lowPass, highPass, bandPass, highShelf),
cutoff (Hz), q (Q, or the shelf slope S), gain (linear), sampleRate, channels, frames, input and
output (file names in DIRECTORY). Each input is interleaved float32 (native byte order). For every
case this computes the coefficients from the RBJ Audio EQ Cookbook, written out here from the
cookbook's text (not read from sfx), filters each channel with scipy.signal.lfilter in float64,
and writes the output as interleaved float64. DIRECTORY/coefficients.json receives, per case,
[b0, b1, b2, a1, a2] normalised by a0.

Conventions sfx documents on top of the cookbook: for the pass filters the gain scales b (the
filtered path's overall gain); for the high shelf the gain is the linear gain of the shelf above
the cutoff, so the cookbook's A = 10^(dBgain/40) = sqrt(gain), with gain at least 1e-6.
"""
import json
import math
import os
import sys

import numpy as np
from scipy.signal import lfilter


def cookbook(kind, f0, q, gain, fs):
    """(b, a) of the cookbook's LPF, HPF, BPF (constant 0 dB peak gain) and highShelf, a0 = 1."""
    w0 = 2 * math.pi * f0 / fs
    cos_w0 = math.cos(w0)
    sin_w0 = math.sin(w0)
    if kind == "highShelf":
        A = math.sqrt(max(gain, 1e-6))
        S = q
        alpha = sin_w0 / 2 * math.sqrt((A + 1 / A) * (1 / S - 1) + 2)
        two_sqrt_a_alpha = 2 * math.sqrt(A) * alpha
        b = [A * ((A + 1) + (A - 1) * cos_w0 + two_sqrt_a_alpha),
             -2 * A * ((A - 1) + (A + 1) * cos_w0),
             A * ((A + 1) + (A - 1) * cos_w0 - two_sqrt_a_alpha)]
        a = [(A + 1) - (A - 1) * cos_w0 + two_sqrt_a_alpha,
             2 * ((A - 1) - (A + 1) * cos_w0),
             (A + 1) - (A - 1) * cos_w0 - two_sqrt_a_alpha]
    else:
        alpha = sin_w0 / (2 * q)
        if kind == "lowPass":
            b = [(1 - cos_w0) / 2, 1 - cos_w0, (1 - cos_w0) / 2]
        elif kind == "highPass":
            b = [(1 + cos_w0) / 2, -(1 + cos_w0), (1 + cos_w0) / 2]
        elif kind == "bandPass":
            b = [alpha, 0.0, -alpha]
        else:
            raise ValueError("unknown kind " + kind)
        b = [gain * x for x in b]
        a = [1 + alpha, -2 * cos_w0, 1 - alpha]
    return np.array(b) / a[0], np.array(a) / a[0]


def main():
    directory = sys.argv[1]
    with open(os.path.join(directory, "cases.json")) as f:
        cases = json.load(f)
    coefficients = []
    for case in cases:
        b, a = cookbook(case["kind"], case["cutoff"], case["q"], case["gain"], case["sampleRate"])
        coefficients.append([b[0], b[1], b[2], a[1], a[2]])
        channels = case["channels"]
        x = np.fromfile(os.path.join(directory, case["input"]), dtype=np.float32).astype(np.float64)
        x = x.reshape(-1, channels)
        y = np.empty_like(x)
        for c in range(channels):
            y[:, c] = lfilter(b, a, x[:, c])
        y.reshape(-1).astype(np.float64).tofile(os.path.join(directory, case["output"]))
    with open(os.path.join(directory, "coefficients.json"), "w") as f:
        json.dump(coefficients, f)


if __name__ == "__main__":
    main()
