#!/usr/bin/python3
"""What a SOFA file itself says about one direction, without libmysofa: the reference for
Tests/SFXMediaTests/SOFAFileTests.swift.

    /usr/bin/python3 reference.py FILE.sofa AZIMUTH ELEVATION RATE

AZIMUTH and ELEVATION are SOFA's (degrees; azimuth counter-clockwise from ahead: 90 is the left,
270 the right). Reads Data.IR, Data.SamplingRate, Data.Delay and SourcePosition with h5py, picks
the measurement nearest the direction (largest cosine between unit vectors), resamples it to RATE
with scipy's polyphase resampler when the file's rate differs, and prints one JSON object:

    measurement  [azimuth, elevation] of the measurement picked
    ild_db       10·log10(Σ right² / Σ left²): broadband energy ratio (positive: right louder)
    itd_onset    onset(left) − onset(right) in frames at RATE (positive: right ear first), the
                 onset of an ear being Data.Delay plus its first tap at or above a tenth of its
                 peak (the same threshold as HRTFTable.trimAtOnset)
    itd_xcorr    the lag (frames) of the largest interaural cross-correlation, same sign
"""
import json
import sys
from fractions import Fraction

import h5py
import numpy as np
from scipy.signal import resample_poly


def unit(azimuth, elevation):
    a, e = np.radians(azimuth), np.radians(elevation)
    return np.stack([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)], axis=-1)


def onset(h, threshold=0.1):
    peak = np.abs(h).max()
    return int(np.argmax(np.abs(h) >= threshold * peak)) if peak > 0 else 0


def main():
    path, azimuth, elevation, rate = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    with h5py.File(path, "r") as f:
        ir = np.asarray(f["Data.IR"], dtype=np.float64)            # M × R × N
        positions = np.asarray(f["SourcePosition"], dtype=np.float64)
        kind = f["SourcePosition"].attrs.get("Type", b"spherical")
        file_rate = float(np.asarray(f["Data.SamplingRate"]).ravel()[0])
        delay = np.asarray(f["Data.Delay"], dtype=np.float64) if "Data.Delay" in f else np.zeros((1, 2))
    if (kind.decode() if isinstance(kind, bytes) else str(kind)) == "cartesian":
        xyz = positions / np.linalg.norm(positions, axis=1, keepdims=True)
        spherical = np.stack([np.degrees(np.arctan2(xyz[:, 1], xyz[:, 0])) % 360,
                              np.degrees(np.arcsin(xyz[:, 2])), np.ones(len(xyz))], axis=1)
    else:
        xyz = unit(positions[:, 0], positions[:, 1])
        spherical = positions
    m = int(np.argmax(xyz @ unit(azimuth, elevation)))
    left, right = ir[m, 0], ir[m, 1]
    delays = delay[m] if delay.shape[0] > 1 else delay[0]
    scale = 1.0
    if int(round(file_rate)) != rate:
        ratio = Fraction(rate, int(round(file_rate))).limit_denominator(1000)
        left = resample_poly(left, ratio.numerator, ratio.denominator)
        right = resample_poly(right, ratio.numerator, ratio.denominator)
        scale = rate / file_rate
    ild = 10 * np.log10(np.sum(right ** 2) / np.sum(left ** 2))
    itd_onset = (onset(left) + delays[0] * scale) - (onset(right) + delays[1] * scale)
    correlation = np.correlate(left, right, mode="full")
    itd_xcorr = int(np.argmax(correlation)) - (len(right) - 1)
    print(json.dumps({"measurement": [float(spherical[m, 0]), float(spherical[m, 1])], "ild_db": float(ild),
                      "itd_onset": float(itd_onset), "itd_xcorr": itd_xcorr}))


if __name__ == "__main__":
    main()
