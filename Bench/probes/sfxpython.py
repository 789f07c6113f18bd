#!/usr/bin/env python3
"""sfxpython.py: sfx through its Python binding (bindings/python) as a kiosk script calls it,
beside sfxc.c, which makes the same calls from C. It takes the C clients' latency-mode options
(probe.h) and plays the same 96-frame click at random gaps, writing each trigger's
CLOCK_MONOTONIC time, taken just before `engine.play`, to --out, one nanosecond count a line.
The binding is found on PYTHONPATH and libsfx through SFX_LIBRARY, as sfx-bench sets them."""
import argparse
import math
import os
import random
import sys
import time

import sfx

RATE = 48_000
CLICK_FRAMES = 96


def click() -> list:
    # probe.c's click: a 1.5 kHz square wave at ±0.5, loud from its first sample.
    half = RATE / 1500 / 2
    return [0.5 if math.floor(i / half) % 2 == 0 else -0.5 for i in range(CLICK_FRAMES)]


def sleep_until(deadline_ns: int) -> None:
    while True:
        left = deadline_ns - time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        if left <= 0:
            return
        time.sleep(left / 1e9)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--device", default="sfxcard")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--min-gap-ms", type=float, default=40)
    parser.add_argument("--max-gap-ms", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=0)
    parser.add_argument("--period", type=int, default=0)
    parser.add_argument("--periods", type=int, default=0)
    parser.add_argument("--priority", type=int, default=70)
    o = parser.parse_args()
    if o.max_gap_ms < o.min_gap_ms:
        print("sfxpython: --max-gap-ms is below --min-gap-ms", file=sys.stderr)
        return 2
    try:
        engine = sfx.Engine(device=o.device, sample_rate=RATE, period_frames=o.period, periods=o.periods,
                            max_voices=4096, while_no_device="fail")
        sound = engine.load_pcm(click())
    except sfx.SfxError as error:
        print(f"sfxpython: {error}", file=sys.stderr)
        return 1
    generator = random.Random(o.seed)
    times = []
    begin = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    deadline = begin + 200_000_000  # let the stream settle, as probe.c does
    for _ in range(o.count):
        deadline += int(generator.uniform(o.min_gap_ms, o.max_gap_ms) * 1e6)
        if o.seconds > 0 and deadline - begin > o.seconds * 1e9:
            break
        sleep_until(deadline)
        times.append(time.clock_gettime_ns(time.CLOCK_MONOTONIC))
        engine.play(sound)
    sleep_until(time.clock_gettime_ns(time.CLOCK_MONOTONIC) + int(o.max_gap_ms * 1e6) + 100_000_000)
    engine.close()
    with open(o.out, "w") as file:
        file.writelines(f"{t}\n" for t in times)
    return 0


if __name__ == "__main__":
    sys.exit(main())
