#!/usr/bin/python3
"""Benchmark corpus for `ferry convert` (bench_convert.sh): random crops
480-1280 px of photos from Debian packages, saved as PNG with Pillow's
default compression: ~80% RGB, the rest RGBA, gray, palette and 16-bit gray.
Deterministic for a given seed and package set.

    make_corpus.py OUT_DIR [COUNT]      (needs python3-pil, and for more than
                                         skimage's photos plasma-workspace-wallpapers)
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


def main():
    out, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300
    os.makedirs(out, exist_ok=True)
    rng = random.Random(1234)
    photos = [Image.open(p).convert("RGB") for p in SOURCES if os.path.exists(p)]
    if not photos:
        sys.exit("no source photos found (apt-get install python3-skimage plasma-workspace-wallpapers)")
    for i in range(count):
        src = photos[i % len(photos)]
        w = min(rng.randint(480, 1280), src.width)
        h = min(rng.randint(480, 1280), src.height)
        x, y = rng.randint(0, src.width - w), rng.randint(0, src.height - h)
        img = src.crop((x, y, x + w, y + h))
        img.info.clear()  # no ICC profile carried over from the source JPEG
        kind = rng.random()
        path = os.path.join(out, f"img_{i:05d}.png")
        if kind < 0.80:
            img.save(path)
        elif kind < 0.85:
            a = np.linspace(40, 255, w, dtype=np.uint8)[None, :].repeat(h, 0)
            rgba = img.convert("RGBA")
            rgba.putalpha(Image.fromarray(a))
            rgba.save(path)
        elif kind < 0.90:
            img.convert("L").save(path)
        elif kind < 0.95:
            img.quantize(256).save(path)
        else:
            g = np.asarray(img.convert("L"), dtype=np.uint16) * 257
            Image.fromarray(g).save(path)  # 16-bit gray PNG
    print(f"{count} images from {len(photos)} photos in {out}")


if __name__ == "__main__":
    main()
