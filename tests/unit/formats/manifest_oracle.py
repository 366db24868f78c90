#!/usr/bin/env python3
"""Oracle test: ferry's manifest against an independent reader and writer.

Both directions, with Debian's python3-protobuf (classes generated from
formats/manifest/manifest.proto by protoc), python3-zstandard and
python3-xxhash:
  * manifest_tool hash-dir hashes a tree of files (sizes around the part
    size, nested dirs, non-ASCII names) and writes its manifest; Python
    decompresses and parses it and checks the magic, the frame's checksum
    flag, every File (sorted, size, mode, XXH3-128 and each part's XXH3-64
    recomputed from the files themselves), the end-of-files marker, the
    Footer (counts, total, records_xxh3_64) and the id (XXH3-128 of the
    bytes);
  * Python writes its own manifest of the same tree (another zstd level, so
    other compressed bytes) and manifest_tool read accepts it and reports the
    same counts; a Python manifest with a '..' path is refused (exit 3).

usage: manifest_oracle.py MANIFEST_TOOL PROTO
Exit 0 all agree, 1 a mismatch, 77 a Python module is missing.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

try:
    import xxhash
    import zstandard
    import google.protobuf  # noqa: F401
except ImportError as e:
    print(f"{e.name} is missing (python3-xxhash, python3-zstandard, "
          "python3-protobuf: tools/dev/install-deps.sh)")
    sys.exit(77)

MAGIC = b"FERRYMF1"
PART = 1000


def fail(msg):
    print("MISMATCH:", msg)
    sys.exit(1)


def load_proto(proto, tmp):
    subprocess.run(["protoc", f"--python_out={tmp}",
                    f"-I{os.path.dirname(proto)}", proto], check=True)
    sys.path.insert(0, tmp)
    import manifest_pb2
    return manifest_pb2


def varint(data, pos):
    shift = value = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def encode_varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def make_tree(root):
    rng = random.Random(12)
    sizes = [0, 1, PART - 1, PART, PART + 1, 3 * PART + PART // 2, 7 * PART]
    names = ["a.txt", "b/c.bin", "b/d/e.bin", "b/d/f g.bin", "ü/ñ.dat",
             "z-last", "Zcap"]
    for name, size in zip(names, sizes):
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(bytes(rng.getrandbits(8) for _ in range(size)))
        os.chmod(path, 0o755 if size % 2 else 0o644)
    return sorted(n.encode() for n in names)


def check_ferry_manifest(pb, data, root, paths, tool_out):
    if not data.startswith(MAGIC):
        fail("magic")
    if xxhash.xxh3_128_hexdigest(data) != tool_out["id"]:
        fail("id is not the XXH3-128 of the bytes")
    frame = data[len(MAGIC):]
    if not zstandard.get_frame_parameters(frame).has_checksum:
        fail("zstd frame without checksum flag")
    plain = zstandard.ZstdDecompressor().decompressobj().decompress(frame)
    pos = 0
    n, pos = varint(plain, pos)
    header = pb.Header.FromString(plain[pos:pos + n])
    pos += n
    if header.format_version != 1 or header.part_size != PART:
        fail(f"header {header}")
    files = []
    while True:
        n, pos = varint(plain, pos)
        if n == 0:
            break
        files.append(pb.File.FromString(plain[pos:pos + n]))
        pos += n
    records_hash = xxhash.xxh3_64_intdigest(plain[:pos])
    n, pos = varint(plain, pos)
    footer = pb.Footer.FromString(plain[pos:pos + n])
    if pos + n != len(plain):
        fail("bytes after the footer")
    if [f.path for f in files] != paths:
        fail(f"paths {[f.path for f in files]} != {paths}")
    total = 0
    for f in files:
        full = os.path.join(root, f.path.decode())
        content = open(full, "rb").read()
        total += len(content)
        if f.size != len(content):
            fail(f"{f.path}: size {f.size} != {len(content)}")
        if f.xxh3_128 != xxhash.xxh3_128_digest(content):
            fail(f"{f.path}: xxh3_128")
        want = [xxhash.xxh3_64_intdigest(content[i:i + PART])
                for i in range(0, len(content), PART)]
        if list(f.part_xxh3_64) != want:
            fail(f"{f.path}: parts {list(f.part_xxh3_64)} != {want}")
        if f.mode != os.stat(full).st_mode & 0o777:
            fail(f"{f.path}: mode {oct(f.mode)}")
    if (footer.file_count, footer.total_bytes) != (len(files), total):
        fail(f"footer {footer}")
    if footer.records_xxh3_64 != records_hash:
        fail("footer records_xxh3_64")
    return files, total


def python_manifest(pb, files, extra_path=None):
    header = pb.Header(format_version=1, part_size=PART, message=b"python")
    plain = bytearray()
    for rec in [header] + files:
        b = rec.SerializeToString()
        plain += encode_varint(len(b)) + b
    if extra_path is not None:
        bad = pb.File(path=extra_path, size=0, xxh3_128=b"\0" * 16)
        b = bad.SerializeToString()
        plain += encode_varint(len(b)) + b
    plain += b"\0"
    footer = pb.Footer(
        file_count=len(files) + (extra_path is not None),
        total_bytes=sum(f.size for f in files),
        records_xxh3_64=xxhash.xxh3_64_intdigest(bytes(plain)))
    b = footer.SerializeToString()
    plain += encode_varint(len(b)) + b
    cctx = zstandard.ZstdCompressor(level=3, write_checksum=True)
    return MAGIC + cctx.compress(bytes(plain))


def main():
    tool, proto = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        pb = load_proto(proto, tmp)
        root = os.path.join(tmp, "tree")
        paths = make_tree(root)
        out = os.path.join(tmp, "m.ferry")
        res = subprocess.run([tool, "hash-dir", root, out, str(PART)],
                             capture_output=True, check=True, text=True)
        tool_out = json.loads(res.stdout)
        data = open(out, "rb").read()
        files, total = check_ferry_manifest(pb, data, root, paths, tool_out)
        print(f"ferry -> python: {len(files)} files, {total} bytes, "
              f"id {tool_out['id']} agree")

        mine = os.path.join(tmp, "py.ferry")
        data = python_manifest(pb, files)
        open(mine, "wb").write(data)
        res = subprocess.run([tool, "read", mine,
                              xxhash.xxh3_128_hexdigest(data)],
                             capture_output=True, text=True)
        if res.returncode != 0:
            fail(f"ferry refused python's manifest: {res.stderr}")
        got = json.loads(res.stdout)
        if (got["files"], got["total_bytes"], got["id"]) != (
                len(files), total, xxhash.xxh3_128_hexdigest(data)):
            fail(f"ferry read {got}")
        open(mine, "wb").write(python_manifest(pb, files, b"zz/../../x"))
        res = subprocess.run([tool, "read", mine], capture_output=True,
                             text=True)
        if res.returncode != 3 or "'..' part" not in res.stderr:
            fail(f"'..' not refused: {res.returncode} {res.stderr}")
        print("python -> ferry: accepted with equal counts; '..' refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
