#!/usr/bin/python3
"""Benchmark corpora for `ferry convert` (bench_convert.sh): random crops of
photos from Debian packages, saved as PNG with Pillow's default compression.
Deterministic for a given mix, count and package set (each mix has its seed).

    make_corpus.py OUT_DIR [COUNT] [MIX]     (needs python3-pil, and for more
                                              than skimage's photos
                                              plasma-workspace-wallpapers)
MIX (default `photos`):
  photos   crops 480-1280 px, 80 % RGB, 5 % each RGBA, gray, palette, 16-bit
  small    crops 200-500 px, all RGB (bench: fit 224)
  nonrgb   crops 480-1280 px, 70 % RGB, 7.5 % each RGBA, gray, palette, 16-bit
"""
import glob
import os
import random
import sys

import numpy as np
from PIL import Image

SOURCES = sorted(glob.glob("/usr/share/wallpapers/*/contents/images/2560x1600.jpg")) + [
    "/usr/lib/python3/dist-packages/skimage/data/" + n
    for n in ("astronaut.png", "chelsea.png", "coffee.png", "hubble_deep_field.jpg", "rocket.jpg")]

# seed, crop size range, share of RGB (the rest split evenly over 4 kinds)
MIXES = {
    "photos": (1234, (480, 1280), 0.80),
    "small": (2024, (200, 500), 1.00),
    "nonrgb": (3030, (480, 1280), 0.70),
}


def save(img, kind, path, w, h):
    """kind in [0, 4): RGBA, gray, palette, 16-bit gray."""
    if kind == 0:
        a = np.linspace(40, 255, w, dtype=np.uint8)[None, :].repeat(h, 0)
        rgba = img.convert("RGBA")
        rgba.putalpha(Image.fromarray(a))
        rgba.save(path)
    elif kind == 1:
        img.convert("L").save(path)
    elif kind == 2:
        img.quantize(256).save(path)
    else:
        g = np.asarray(img.convert("L"), dtype=np.uint16) * 257
        Image.fromarray(g).save(path)  # 16-bit gray PNG


def main():
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    mix = sys.argv[3] if len(sys.argv) > 3 else "photos"
    if mix not in MIXES:
        sys.exit(f"unknown mix {mix!r} (one of {', '.join(MIXES)})")
    seed, (lo, hi), rgb_share = MIXES[mix]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(seed)
    photos = [Image.open(p).convert("RGB") for p in SOURCES if os.path.exists(p)]
    if not photos:
        sys.exit("no source photos found (apt-get install python3-skimage plasma-workspace-wallpapers)")
    other = (1 - rgb_share) / 4
    for i in range(count):
        src = photos[i % len(photos)]
        w = min(rng.randint(lo, hi), src.width)
        h = min(rng.randint(lo, hi), src.height)
        x, y = rng.randint(0, src.width - w), rng.randint(0, src.height - h)
        img = src.crop((x, y, x + w, y + h))
        img.info.clear()  # no ICC profile carried over from the source JPEG
        kind = rng.random()
        path = os.path.join(out, f"img_{i:05d}.png")
        if kind < rgb_share:
            img.save(path)
        else:
            save(img, min(int((kind - rgb_share) / other), 3), path, w, h)
    print(f"{count} images ({mix}) from {len(photos)} photos in {out}")


if __name__ == "__main__":
    main()
