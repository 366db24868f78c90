#!/usr/bin/python3
"""Independent reader of a `ferry pack` output (ctest, python3-protobuf + PIL).
Shares no code with ferry: the tf.train.Example schema is rebuilt here from
TensorFlow's field numbers, CRC32C is computed in Python, and tar files are
read with the standard library.
    check_shards.py OUT_DIR     (exits non-zero with a message on any problem)
"""
import gzip
import hashlib
import io
import json
import os
import struct
import sys
import tarfile

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from PIL import Image


def example_class():
    fdp = descriptor_pb2.FileDescriptorProto(name="tf_example_check.proto", package="tensorflow",
                                             syntax="proto3")
    F = descriptor_pb2.FieldDescriptorProto

    def msg(name, fields, nested=None, oneof=None):
        m = fdp.message_type.add(name=name)
        for fname, num, typ, label, tname, index in fields:
            f = m.field.add(name=fname, number=num, type=typ, label=label)
            if tname:
                f.type_name = tname
            if index is not None:
                f.oneof_index = index
        if oneof:
            m.oneof_decl.add(name=oneof)
        for n in nested or []:
            m.nested_type.add().CopyFrom(n)
        return m

    rep, opt = F.LABEL_REPEATED, F.LABEL_OPTIONAL
    msg("BytesList", [("value", 1, F.TYPE_BYTES, rep, None, None)])
    msg("FloatList", [("value", 1, F.TYPE_FLOAT, rep, None, None)])
    msg("Int64List", [("value", 1, F.TYPE_INT64, rep, None, None)])
    msg("Feature", [("bytes_list", 1, F.TYPE_MESSAGE, opt, ".tensorflow.BytesList", 0),
                    ("float_list", 2, F.TYPE_MESSAGE, opt, ".tensorflow.FloatList", 0),
                    ("int64_list", 3, F.TYPE_MESSAGE, opt, ".tensorflow.Int64List", 0)], oneof="kind")
    entry = descriptor_pb2.DescriptorProto(name="FeatureEntry")
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=opt)
    entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=opt, type_name=".tensorflow.Feature")
    entry.options.map_entry = True
    msg("Features", [("feature", 1, F.TYPE_MESSAGE, rep, ".tensorflow.Features.FeatureEntry", None)],
        nested=[entry])
    msg("Example", [("features", 1, F.TYPE_MESSAGE, opt, ".tensorflow.Features", None)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName("tensorflow.Example"))


def crc32c_table():
    t = []
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        t.append(c)
    return t


TABLE = crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = (c >> 8) ^ TABLE[(c ^ b) & 0xFF]
    return c ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def fail(msg):
    sys.exit("check_shards: " + msg)


def check_image(jpeg, height, width, where):
    im = Image.open(io.BytesIO(jpeg))
    im.load()
    if im.size != (width, height):
        fail(f"{where}: JPEG is {im.size}, features say {(width, height)}")


def check_tfrecord(path, Example, labels, expect_records):
    data = open(path, "rb").read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    else:
        idx = [tuple(map(int, l.split())) for l in open(path + ".idx")]
    pos, n, offsets = 0, 0, []
    while pos < len(data):
        length, = struct.unpack_from("<Q", data, pos)
        if struct.unpack_from("<I", data, pos + 8)[0] != masked(data[pos:pos + 8]):
            fail(f"{path}: record {n}: length CRC")
        payload = data[pos + 12:pos + 12 + length]
        if struct.unpack_from("<I", data, pos + 12 + length)[0] != masked(payload):
            fail(f"{path}: record {n}: data CRC")
        offsets.append((pos, 16 + length))
        ex = Example()
        ex.ParseFromString(payload)
        f = ex.features.feature
        keys = sorted(f.keys())
        want = sorted(["image/encoded", "image/format", "image/height", "image/width", "image/channels",
                       "image/filename", "image/key/xxh3", "image/class/label", "image/class/text"])
        if keys != want:
            fail(f"{path}: record {n}: features {keys}")
        name = f["image/filename"].bytes_list.value[0].decode()
        label = f["image/class/label"].int64_list.value[0]
        text = f["image/class/text"].bytes_list.value[0].decode()
        if labels[label] != text or not name.startswith(text + "/"):
            fail(f"{path}: record {n}: label {label}/{text} for {name}")
        if f["image/format"].bytes_list.value[0] != b"jpeg" or len(f["image/key/xxh3"].bytes_list.value[0]) != 32:
            fail(f"{path}: record {n}: format or key")
        check_image(f["image/encoded"].bytes_list.value[0], f["image/height"].int64_list.value[0],
                    f["image/width"].int64_list.value[0], f"{path} record {n}")
        pos += 16 + length
        n += 1
    if not path.endswith(".gz") and idx != offsets:
        fail(f"{path}: .idx does not match the records")
    if n != expect_records:
        fail(f"{path}: {n} records, dataset.json says {expect_records}")
    return n


def check_tar(path, labels, expect_records):
    with tarfile.open(path) as tf:
        members = tf.getmembers()
        samples, order = {}, []
        for m in members:
            if not m.isreg() or m.mode != 0o444 or m.mtime != 0 or m.uid != 0:
                fail(f"{path}: {m.name}: not a fixed-metadata regular file")
            key, ext = m.name.split(".", 1)
            if key not in samples:
                if order and key in order:
                    fail(f"{path}: sample {key} not contiguous")
                samples[key] = {}
                order.append(key)
            samples[key][ext] = (m.offset_data, m.size, tf.extractfile(m).read())
    lines = open(path + ".idx").read().splitlines()
    if lines[0] != f"v1.2 {len(order)}":
        fail(f"{path}: wds index header {lines[0]!r}")
    for key, line in zip(order, lines[1:]):
        parts = line.split()
        comps = sorted(samples[key])
        if comps != ["cls", "jpg", "json"] or [p for p in parts[0::4]] != comps:
            fail(f"{path}: sample {key}: components {comps} / index {parts}")
        for ext, off, size, name in zip(parts[0::4], parts[1::4], parts[2::4], parts[3::4]):
            o, s, _ = samples[key][ext]
            if int(off) != o or int(size) != s or name != f"{key}.{ext}" or o % 512:
                fail(f"{path}: index entry {name} {off} {size} vs {o} {s}")
        meta = json.loads(samples[key]["json"][2])
        cls = int(samples[key]["cls"][2])
        if labels[cls] != meta["text"] or not meta["filename"].startswith(meta["text"] + "/"):
            fail(f"{path}: {key}: label mismatch")
        check_image(samples[key]["jpg"][2], meta["height"], meta["width"], f"{path} {key}")
    if len(order) != expect_records:
        fail(f"{path}: {len(order)} samples, dataset.json says {expect_records}")
    return len(order)


def main():
    out = sys.argv[1]
    ds = json.load(open(os.path.join(out, "dataset.json")))
    labels = open(os.path.join(out, "labels.txt")).read().splitlines()
    if labels != ds["labels"]:
        fail("labels.txt and dataset.json disagree")
    Example = example_class()
    listed, total = set(), 0
    for split, info in ds["splits"].items():
        n_split = 0
        for sh in info["shards"]:
            path = os.path.join(out, sh["name"])
            listed.add(sh["name"])
            if os.path.getsize(path) != sh["bytes"]:
                fail(f"{path}: size differs from dataset.json")
            if ds["shard_format"] == "tfrecord":
                n_split += check_tfrecord(path, Example, labels, sh["records"])
            else:
                n_split += check_tar(path, labels, sh["records"])
        if n_split != info["records"]:
            fail(f"split {split}: {n_split} records, dataset.json says {info['records']}")
        if ds["shard_format"] == "webdataset":
            wids = json.load(open(os.path.join(out, split + ".wids.json")))
            if wids["__kind__"] != "wids-shard-index-v1" or len(wids["shardlist"]) != len(info["shards"]):
                fail(f"{split}.wids.json: bad header or shard count")
            for entry in wids["shardlist"]:
                data = open(os.path.join(out, entry["url"]), "rb").read()
                if hashlib.md5(data).hexdigest() != entry["md5sum"] or len(data) != entry["filesize"]:
                    fail(f"{split}.wids.json: {entry['url']} md5 or size")
        total += n_split
    for name in os.listdir(out):
        if (name.endswith((".tfrecord", ".tar", ".gz")) and name not in listed) or ".tmp-" in name:
            fail(f"stray file {name}")
    print(f"check_shards: {total} records in {len(listed)} shards OK")


if __name__ == "__main__":
    main()
