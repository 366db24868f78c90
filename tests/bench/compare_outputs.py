#!/usr/bin/python3
"""Mean absolute pixel difference between two directories of JPEGs with the
same names (bench_convert.sh): both decoded by Pillow to RGB.
    compare_outputs.py REF_DIR OTHER_DIR  -> prints "mad N size_mismatch M compared K"
"""
import os
import sys

import numpy as np
from PIL import Image


def main():
    ref, other = sys.argv[1], sys.argv[2]
    total, n, mismatch = 0.0, 0, 0
    for name in sorted(os.listdir(ref)):
        p = os.path.join(other, name)
        if not name.endswith(".jpg") or not os.path.exists(p):
            continue
        a = Image.open(os.path.join(ref, name)).convert("RGB")
        b = Image.open(p).convert("RGB")
        if a.size != b.size:
            mismatch += 1
            continue
        total += np.abs(np.asarray(a, np.int16) - np.asarray(b, np.int16)).mean()
        n += 1
    print(f"mad {total / max(n, 1):.3f} size_mismatch {mismatch} compared {n}")


if __name__ == "__main__":
    main()
