#!/usr/bin/env python3
"""Oracle test: ferry's SigV4 signer against Debian's python3-botocore.

Generates random S3 requests (keys with UTF-8, invalid UTF-8 and reserved
bytes; ListObjectsV2 and random queries; random header sets; random times;
with and without a session token; signed and unsigned payloads), signs each
with sigv4_sign (ferry) and with botocore.auth.S3SigV4Auth, and compares:
  * the URL path with Python's own quote(key, safe='/~'),
  * the URL query with botocore's canonical query of the same pairs,
  * the Authorization, x-amz-date, x-amz-content-sha256 and
    x-amz-security-token headers.
botocore is given the request with the *independently* encoded path and the
*decoded* query pairs (it encodes and sorts them itself).

usage: sigv4_botocore_oracle.py SIGV4_SIGN [--count N] [--seed S]
Exit 0 all equal, 1 a mismatch (the first few are printed), 77 no botocore.
"""
import argparse
import datetime
import hashlib
import json
import random
import subprocess
import sys
import types
import urllib.parse

try:
    import botocore
    import botocore.auth
    import botocore.awsrequest
    import botocore.credentials
except ImportError:
    print("python3-botocore is not installed (tools/dev/install-deps.sh)")
    sys.exit(77)

# Bytes a key may hold: every class the encoder treats differently.
KEY_PIECES = [
    "a", "Z", "0", "-", ".", "_", "~", " ", "+", "%", "=", "&", "?", "#",
    "/", "//", "*", "!", "'", "(", ")", "$", ",", ";", ":", "@", "[", "]",
    "\\", "^", "`", "{", "}", "|", "<", ">", '"', "\t", "\x01", "\x7f",
    "é", "日本", "🙂", "ß", "data", "train", "img-0001.jpg", "%20", "%2F",
]
BAD_UTF8 = [b"\xff", b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xfe\xfe"]

LIST_V2 = ["list-type", "prefix", "continuation-token", "start-after",
           "delimiter", "max-keys", "encoding-type", "fetch-owner"]
QUERY_KEYS = LIST_V2 + ["uploads", "uploadId", "partNumber", "versionId",
                        "a", "a-b", "a.b", "a_b", "A", "ab", "x-id",
                        "response-content-type", "key with space", "k+ey",
                        "é", "k=ey", "k&ey", "~t"]
HEADER_NAMES = ["Range", "If-Match", "If-None-Match", "Content-Type",
                "Content-Length", "Cache-Control", "x-amz-storage-class",
                "x-amz-acl", "X-Amz-Meta-Name", "x-amz-meta-name",
                "X-AMZ-META-Other", "x-amz-copy-source", "Content-Encoding",
                "x-amz-date", "Authorization", "x-amz-meta-a", "x-amz-meta-b"]
REGIONS = ["us-east-1", "eu-west-1", "ap-southeast-2", "us-gov-west-1",
           "local"]
HOSTS = ["127.0.0.1:9000", "examplebucket.s3.amazonaws.com", "localhost",
         "s3.eu-west-1.amazonaws.com", "minio.internal:9000", "[::1]:9000"]
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


def rand_text(rng, pieces, n_max):
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, n_max)))


def rand_key(rng):
    key = rand_text(rng, KEY_PIECES, 8).encode()
    if rng.random() < 0.2:
        pos = rng.randint(0, len(key))
        key = key[:pos] + rng.choice(BAD_UTF8) + key[pos:]
    return key


def rand_value(rng):
    r = rng.random()
    if r < 0.15:
        return ""
    if r < 0.4:
        return "".join(rng.choice(B64) for _ in range(rng.randint(1, 60)))
    return rand_text(rng, KEY_PIECES, 6)


def rand_query(rng):
    if rng.random() < 0.3:
        return []
    pairs = []
    if rng.random() < 0.5:  # a ListObjectsV2 page
        pairs = [("list-type", "2"), ("encoding-type", "url")]
        for k in ("prefix", "continuation-token", "start-after",
                  "delimiter", "max-keys"):
            if rng.random() < 0.5:
                pairs.append((k, rand_value(rng)))
    for _ in range(rng.randint(0, 5)):
        pairs.append((rng.choice(QUERY_KEYS), rand_value(rng)))
    rng.shuffle(pairs)
    return pairs


def rand_header_value(rng):
    chars = [chr(c) for c in range(0x21, 0x7f)] + [" ", "  ", "\t", "   "]
    v = "".join(rng.choice(chars) for _ in range(rng.randint(0, 30)))
    if rng.random() < 0.3:
        v = " " * rng.randint(1, 3) + v + "\t" * rng.randint(0, 2)
    return v


def rand_headers(rng):
    return [(rng.choice(HEADER_NAMES), rand_header_value(rng))
            for _ in range(rng.randint(0, 6))]


def rand_secret(rng):
    chars = B64 + "-_~!"
    return "".join(rng.choice(chars) for _ in range(rng.randint(1, 40)))


def make_case(rng):
    key = rand_key(rng)
    bucket = rng.choice([b"bucket", b"my.dotted.bucket", b"b-1", b""])
    path = b"/" + bucket + (b"/" + key if bucket or rng.random() < 0.5 else b"")
    body = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64)))
    return {
        "method": rng.choice(["GET", "PUT", "HEAD", "DELETE", "POST"]),
        "host": rng.choice(HOSTS),
        "path": path,
        "query": rand_query(rng),
        "headers": rand_headers(rng),
        "body": body,
        "signed_payload": rng.random() < 0.5,
        "access_key": "AK" + "".join(rng.choice("ABCDEFGHIJKLMNOP0123456789")
                                     for _ in range(18)),
        "secret": rand_secret(rng),
        "token": rand_secret(rng) * 3 if rng.random() < 0.4 else "",
        "region": rng.choice(REGIONS),
        "service": "s3",
        "time": rng.randint(0, 4102444800),
    }


def to_json_line(case):
    payload = (hashlib.sha256(case["body"]).hexdigest()
               if case["signed_payload"] else "UNSIGNED-PAYLOAD")
    return json.dumps({
        "method": case["method"], "host": case["host"],
        # Bytes that are not UTF-8 travel as lone surrogates (sigv4_sign's
        # JSON reader turns \udc80..\udcff back into the bytes).
        "path": case["path"].decode("utf-8", "surrogateescape"),
        "query": case["query"], "headers": case["headers"],
        "payload": payload, "access_key": case["access_key"],
        "secret": case["secret"], "token": case["token"],
        "region": case["region"], "service": case["service"],
        "time": case["time"],
    })


class _Clock:
    now = None


class _FakeDateTime(datetime.datetime):
    @classmethod
    def utcnow(cls):
        return _Clock.now


# botocore.auth reads the time with datetime.datetime.utcnow().
botocore.auth.datetime = types.SimpleNamespace(datetime=_FakeDateTime)


def botocore_sign(case, path_enc):
    _Clock.now = datetime.datetime(1970, 1, 1) + datetime.timedelta(
        seconds=case["time"])
    req = botocore.awsrequest.AWSRequest(
        method=case["method"], url="http://" + case["host"] + path_enc,
        data=case["body"], params=list(case["query"]))
    req.headers["Host"] = case["host"]
    for name, value in case["headers"]:
        req.headers[name] = value  # appends: repeated names stay repeated
    if not case["signed_payload"]:
        req.context["client_config"] = types.SimpleNamespace(
            s3={"payload_signing_enabled": False})
    creds = botocore.credentials.Credentials(
        case["access_key"], case["secret"], case["token"] or None)
    auth = botocore.auth.S3SigV4Auth(creds, case["service"], case["region"])
    auth.add_auth(req)
    return auth, req


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sigv4_sign")
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=20130524)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    cases = [make_case(rng) for _ in range(args.count)]
    out = subprocess.run(
        [args.sigv4_sign], input="\n".join(map(to_json_line, cases)) + "\n",
        capture_output=True, text=True, check=True).stdout.splitlines()
    if len(out) != len(cases):
        print(f"sigv4_sign answered {len(out)} lines for {len(cases)}")
        return 1
    bad = 0
    checked = {"auth": 0, "token": 0, "unsigned": 0, "bad_utf8": 0,
               "list_v2": 0}
    for case, line in zip(cases, out):
        ours = json.loads(line)
        ours_h = {}
        for n, v in ours["headers"]:
            ours_h.setdefault(n.lower(), []).append(v)
        path_enc = urllib.parse.quote(case["path"], safe="/~") or "/"
        auth, req = botocore_sign(case, path_enc)
        query = auth.canonical_query_string(req)
        want_url = path_enc + ("?" + query if query else "")
        problems = []
        if ours["url"] != want_url:
            problems.append(f"url {ours['url']!r} != {want_url!r}")
        for name in ("authorization", "x-amz-date", "x-amz-content-sha256",
                     "x-amz-security-token"):
            want = req.headers.get(name)
            got = ours_h.get(name)
            if (got or None) != ([want] if want is not None else None):
                problems.append(f"{name}: ours {got} botocore {want!r}")
        if problems:
            bad += 1
            if bad <= 5:
                print("MISMATCH for", {k: v for k, v in case.items()
                                       if k != "body"})
                for p in problems:
                    print("   ", p)
                print("    botocore canonical request:\n      " +
                      auth.canonical_request(req).replace("\n", "\n      "))
            continue
        checked["auth"] += 1
        checked["token"] += bool(case["token"])
        checked["unsigned"] += not case["signed_payload"]
        checked["list_v2"] += ("list-type", "2") in case["query"]
        try:
            case["path"].decode("utf-8")
        except UnicodeDecodeError:
            checked["bad_utf8"] += 1
    print(f"botocore {botocore.__version__}: {len(cases)} requests, "
          f"{bad} mismatches; equal: {checked}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
