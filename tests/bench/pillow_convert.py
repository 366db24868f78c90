#!/usr/bin/python3
"""The Pillow anchor for bench_convert.sh: what users write today.
open -> convert (alpha composited over white) -> thumbnail LANCZOS -> save q90.
    pillow_convert.py SRC DST SIZE PROCESSES
"""
import os
import sys
from multiprocessing import Pool

from PIL import Image

SIZE = int(sys.argv[3])


def convert(job):
    src, dst = job
    im = Image.open(src)
    if im.mode in ("RGBA", "LA", "P", "PA"):
        im = im.convert("RGBA")
        bg = Image.new("RGBA", im.size, (255, 255, 255, 255))
        im = Image.alpha_composite(bg, im).convert("RGB")
    elif im.mode.startswith("I"):
        im = im.point(lambda v: v * (1 / 256)).convert("L")  # I->L would clip
    elif im.mode not in ("RGB", "L"):
        im = im.convert("RGB")
    im.thumbnail((SIZE, SIZE), Image.Resampling.LANCZOS)
    im.save(dst, "JPEG", quality=90)


def main():
    src, dst, procs = sys.argv[1], sys.argv[2], int(sys.argv[4])
    os.makedirs(dst, exist_ok=True)
    jobs = [(os.path.join(src, n), os.path.join(dst, os.path.splitext(n)[0] + ".jpg"))
            for n in sorted(os.listdir(src))]
    with Pool(procs) as pool:
        pool.map(convert, jobs, chunksize=4)


if __name__ == "__main__":
    main()
