#!/usr/bin/python3
"""Pillow reference outputs for the resampler tests (resize_test.cc).

Run once with Debian's python3-pil; the outputs are committed:
    /usr/bin/python3 tests/unit/image/make_goldens.py
Each golden is Pillow's Image.resize(size, filter[, box]) of a sample, saved
as binary PPM (RGB) or PGM (gray), named <input>_<filter>_<w>x<h>[_box].ppm,
or ImageOps.fit(image, size, filter) (`--mode cover`), named
<input>_<filter>_<w>x<h>_cover.ppm: non-square crops whose box is fractional.
"""
import os

import PIL
from PIL import Image, ImageOps

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "..", "..", "samples", "images", "png")
OUT = os.path.join(HERE, "goldens")
FILTERS = {"lanczos3": Image.Resampling.LANCZOS, "bicubic": Image.Resampling.BICUBIC,
           "bilinear": Image.Resampling.BILINEAR, "box": Image.Resampling.BOX}
# Output sizes for cover: wider and taller than the 256x192 sample's 4:3.
COVER_SIZES = [(100, 37), (45, 70), (96, 50)]


def main():
    os.makedirs(OUT, exist_ok=True)
    rgb = Image.open(os.path.join(SAMPLES, "rgb8.png")).convert("RGB")
    gray = Image.open(os.path.join(SAMPLES, "gray8.png")).convert("L")
    for name, f in FILTERS.items():
        for w, h in [(97, 73), (40, 30), (283, 97)]:
            rgb.resize((w, h), f).save(os.path.join(OUT, f"rgb8_{name}_{w}x{h}.ppm"))
        gray.resize((97, 73), f).save(os.path.join(OUT, f"gray8_{name}_97x73.pgm"))
        box = (30.5, 10.25, 200.75, 180.0)
        rgb.resize((64, 64), f, box=box).save(os.path.join(OUT, f"rgb8_{name}_64x64_box.ppm"))
        for w, h in COVER_SIZES:
            ImageOps.fit(rgb, (w, h), f).save(os.path.join(OUT, f"rgb8_{name}_{w}x{h}_cover.ppm"))
    with open(os.path.join(OUT, "PILLOW_VERSION"), "w") as fh:
        fh.write(PIL.__version__ + "\n")


if __name__ == "__main__":
    main()
