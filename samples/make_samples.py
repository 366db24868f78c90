#!/usr/bin/python3
"""Regenerates samples/ deterministically from photos shipped in Debian's
python3-skimage (public-domain and CC0 images; see samples/README.md).

Needs: python3-pil python3-numpy python3-skimage (apt). Run from anywhere:
    /usr/bin/python3 samples/make_samples.py
PNGs are written by the small encoder below (Pillow cannot write 16-bit RGB,
low bit depths with tRNS, or Adam7), so every color type, bit depth, filter
type and interlacing is covered byte-for-byte reproducibly. JPEGs come from
Pillow (libjpeg-turbo).
"""
import io
import os
import random
import struct
import zlib

import numpy as np
from PIL import Image, ImageOps

SRC = "/usr/lib/python3/dist-packages/skimage/data"
OUT = os.path.dirname(os.path.abspath(__file__))

SOURCES = {  # name -> (file, license)
    "astronaut": ("astronaut.png", "public domain (NASA)"),
    "chelsea": ("chelsea.png", "CC0 (Stefan van der Walt)"),
    "coffee": ("coffee.png", "CC0 (Rachel Michetti)"),
    "hubble": ("hubble_deep_field.jpg", "public domain (NASA)"),
    "rocket": ("rocket.jpg", "public domain (SpaceX)"),
    "camera": ("camera.png", "CC0 (Lav Varshney)"),
    "coins": ("coins.png", "no known copyright restrictions"),
}


def load(name):
    return Image.open(os.path.join(SRC, SOURCES[name][0])).convert("RGB")


# ---------------------------------------------------------------- PNG writer
def _chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def _pack_row(samples, bit_depth):
    if bit_depth == 16:
        return samples.astype(">u2").tobytes()
    if bit_depth == 8:
        return samples.astype(np.uint8).tobytes()
    per_byte = 8 // bit_depth
    out = bytearray((len(samples) + per_byte - 1) // per_byte)
    for i, v in enumerate(samples):
        out[i // per_byte] |= int(v) << (8 - bit_depth * (i % per_byte + 1))
    return bytes(out)


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _filter(ftype, row, prev, bpp):
    out = bytearray(len(row))
    for i, x in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prev[i] if prev is not None else 0
        c = prev[i - bpp] if (prev is not None and i >= bpp) else 0
        pred = (0, a, b, (a + b) // 2, _paeth(a, b, c))[ftype]
        out[i] = (x - pred) & 0xFF
    return bytes([ftype]) + bytes(out)


def _image_data(arr, bit_depth, channels):
    """Filtered scanlines of one (sub)image; the filter type cycles 0..4."""
    bpp = max(1, channels * bit_depth // 8)
    h = arr.shape[0]
    raw, prev = bytearray(), None
    for y in range(h):
        row = _pack_row(arr[y].reshape(-1), bit_depth)
        raw += _filter(y % 5, row, prev, bpp)
        prev = row
    return raw


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
         (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(path, arr, color_type, bit_depth, palette=None, trns=None,
              interlace=False, extra_chunks=()):
    """arr: HxW or HxWxC array of samples (palette indices for type 3)."""
    if arr.ndim == 2:
        arr = arr[:, :, None]
    h, w, channels = arr.shape
    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0,
                       1 if interlace else 0)
    if interlace:
        raw = bytearray()
        for x0, y0, dx, dy in ADAM7:
            sub = arr[y0::dy, x0::dx]
            if sub.shape[0] and sub.shape[1]:
                raw += _image_data(sub, bit_depth, channels)
    else:
        raw = _image_data(arr, bit_depth, channels)
    z = zlib.compress(bytes(raw), 9)
    body = _chunk(b"IHDR", ihdr)
    for kind, data in extra_chunks:
        body += _chunk(kind, data)
    if palette is not None:
        body += _chunk(b"PLTE", bytes(np.asarray(palette, np.uint8).reshape(-1)))
    if trns is not None:
        body += _chunk(b"tRNS", trns)
    for i in range(0, len(z), 8192):  # several IDAT chunks
        body += _chunk(b"IDAT", z[i:i + 8192])
    body += _chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + body)


# ----------------------------------------------------------------- kinds
def alpha_ramp(h, w):
    """A radial alpha: opaque centre, transparent corners."""
    yy, xx = np.mgrid[0:h, 0:w]
    d = np.hypot((yy - h / 2) / (h / 2), (xx - w / 2) / (w / 2))
    return np.clip(255 * (1.3 - d), 0, 255).astype(np.uint16)


def quantize(img, colors):
    q = img.quantize(colors=colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    pal = np.array(q.getpalette()[:3 * colors], np.uint8).reshape(-1, 3)
    if len(pal) < colors:
        pal = np.vstack([pal, np.zeros((colors - len(pal), 3), np.uint8)])
    return np.array(q), pal


def write_png_kind(path, img, kind):
    """Writes img (RGB PIL image) as one PNG kind. Returns a description."""
    rgb = np.array(img).astype(np.uint16)
    h, w = rgb.shape[:2]
    gray = np.array(img.convert("L")).astype(np.uint16)
    if kind == "rgb8":
        write_png(path, rgb, 2, 8)
    elif kind == "rgba8":
        write_png(path, np.dstack([rgb, alpha_ramp(h, w)]), 6, 8)
    elif kind == "gray8":
        write_png(path, gray, 0, 8)
    elif kind == "gray_alpha8":
        write_png(path, np.dstack([gray, alpha_ramp(h, w)]), 4, 8)
    elif kind in ("gray1", "gray2", "gray4"):
        bd = int(kind[-1])
        write_png(path, gray >> (8 - bd), 0, bd)
    elif kind == "palette8":
        idx, pal = quantize(img, 256)
        write_png(path, idx, 3, 8, palette=pal)
    elif kind == "palette4":
        idx, pal = quantize(img, 16)
        write_png(path, idx, 3, 4, palette=pal)
    elif kind == "palette8_trns":
        idx, pal = quantize(img, 256)
        # Transparency rises with the index: a real partial-alpha palette.
        trns = bytes(min(255, 40 + i) for i in range(200))
        write_png(path, idx, 3, 8, palette=pal, trns=trns)
    elif kind == "gray8_trns":
        write_png(path, gray, 0, 8, trns=struct.pack(">H", int(gray[0, 0])))
    elif kind == "rgb16":
        # Real 16-bit content: upsample then add sub-8-bit detail.
        noise = np.random.default_rng(16).integers(0, 256, rgb.shape)
        write_png(path, rgb * 257 ^ noise, 2, 16)
    elif kind == "rgba16":
        a = alpha_ramp(h, w) * 257
        write_png(path, np.dstack([rgb * 257, a]), 6, 16)
    elif kind == "gray16":
        noise = np.random.default_rng(17).integers(0, 256, gray.shape)
        write_png(path, gray * 257 ^ noise, 0, 16)
    elif kind == "rgb8_adam7":
        write_png(path, rgb, 2, 8, interlace=True)
    elif kind == "palette8_trns_adam7":
        idx, pal = quantize(img, 256)
        write_png(path, idx, 3, 8, palette=pal,
                  trns=bytes(min(255, 60 + i) for i in range(128)), interlace=True)
    elif kind == "gray16_adam7":
        write_png(path, gray * 257, 0, 16, interlace=True)
    elif kind == "rgb8_gamma":
        write_png(path, rgb, 2, 8, extra_chunks=[(b"gAMA", struct.pack(">I", 45455))])
    else:
        raise ValueError(kind)


def write_jpeg_kind(path, img, kind):
    if kind == "baseline":
        img.save(path, "JPEG", quality=90)
    elif kind == "progressive":
        img.save(path, "JPEG", quality=90, progressive=True)
    elif kind == "gray":
        img.convert("L").save(path, "JPEG", quality=90)
    elif kind == "cmyk":
        img.convert("CMYK").save(path, "JPEG", quality=90)  # Adobe APP14, inverted
    elif kind == "q75_444":
        img.save(path, "JPEG", quality=75, subsampling=0)
    else:
        raise ValueError(kind)


# Pillow's exif_transpose op for each orientation, and the op that undoes it.
EXIF_OPS = {1: None, 2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180,
            4: Image.Transpose.FLIP_TOP_BOTTOM, 5: Image.Transpose.TRANSPOSE,
            6: Image.Transpose.ROTATE_90, 7: Image.Transpose.TRANSVERSE,
            8: Image.Transpose.ROTATE_270}


def write_exif_jpeg(path, upright, orientation):
    """Stores pixels so that applying `orientation` shows `upright`."""
    op = EXIF_OPS[orientation]
    stored = upright if op is None else upright.transpose(op)
    exif = Image.Exif()
    exif[0x0112] = orientation
    stored.save(path, "JPEG", quality=92, exif=exif.tobytes())
    shown = ImageOps.exif_transpose(Image.open(path))
    assert shown.size == upright.size, (orientation, shown.size)
    # The red marker must come back to the top-left corner.
    r, g, b = shown.convert("RGB").getpixel((4, 4))
    assert r > 180 and g < 80 and b < 80, (orientation, (r, g, b))


PNG_KINDS = ["rgb8", "rgba8", "gray8", "gray_alpha8", "gray1", "gray2", "gray4",
             "palette8", "palette4", "palette8_trns", "gray8_trns", "rgb16",
             "rgba16", "gray16", "rgb8_adam7", "palette8_trns_adam7",
             "gray16_adam7", "rgb8_gamma"]
JPEG_KINDS = ["baseline", "progressive", "gray", "cmyk", "q75_444"]


def main():
    rows = []
    # One image of each kind, 256x192 (odd sizes for Adam7 edge passes).
    base = load("astronaut").crop((96, 16, 96 + 256, 16 + 192))
    os.makedirs(os.path.join(OUT, "images/png"), exist_ok=True)
    os.makedirs(os.path.join(OUT, "images/jpeg"), exist_ok=True)
    for kind in PNG_KINDS:
        img = base if "adam7" not in kind else base.crop((0, 0, 253, 187))
        write_png_kind(os.path.join(OUT, f"images/png/{kind}.png"), img, kind)
        rows.append((f"images/png/{kind}.png", "astronaut"))
    jbase = load("coffee").crop((100, 40, 100 + 320, 40 + 240))
    for kind in JPEG_KINDS:
        write_jpeg_kind(os.path.join(OUT, f"images/jpeg/{kind}.jpg"), jbase, kind)
        rows.append((f"images/jpeg/{kind}.jpg", "coffee"))
    upright = load("chelsea").crop((100, 40, 100 + 240, 40 + 160))
    upright.paste((255, 0, 0), (0, 0, 24, 24))  # marks the top-left corner
    for o in range(1, 9):
        write_exif_jpeg(os.path.join(OUT, f"images/jpeg/exif_orientation_{o}.jpg"),
                        upright, o)
        rows.append((f"images/jpeg/exif_orientation_{o}.jpg", "chelsea"))

    # A tiny labelled dataset: three classes, 20 images each, every kind.
    rng = random.Random(20261129)
    classes = {"cat": ["chelsea"], "coffee": ["coffee"],
               "space": ["astronaut", "hubble", "rocket"]}
    all_kinds = [("png", k) for k in PNG_KINDS] + [("jpg", k) for k in JPEG_KINDS]
    for label, names in classes.items():
        d = os.path.join(OUT, "dataset", label)
        os.makedirs(d, exist_ok=True)
        for i in range(20):
            name = names[i % len(names)]
            src = load(name)
            w = rng.randint(72, 180)
            h = rng.randint(64, 160)
            x = rng.randint(0, src.width - w)
            y = rng.randint(0, src.height - h)
            crop = src.crop((x, y, x + w, y + h))
            ext, kind = all_kinds[(i * 7 + len(label)) % len(all_kinds)]
            path = os.path.join(d, f"{label}_{i:03d}.{ext}")
            if ext == "png":
                write_png_kind(path, crop, kind)
            else:
                write_jpeg_kind(path, crop, kind)
            rows.append((f"dataset/{label}/{label}_{i:03d}.{ext}", name))

    with open(os.path.join(OUT, "SOURCES.tsv"), "w") as f:
        f.write("file\tsource image (python3-skimage)\tlicense\n")
        for path, name in rows:
            f.write(f"{path}\t{SOURCES[name][0]}\t{SOURCES[name][1]}\n")


if __name__ == "__main__":
    main()
