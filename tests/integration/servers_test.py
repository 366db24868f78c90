#!/usr/bin/python3
"""Proves the test servers do what servers.sh claims, with real clients
(curl, Debian's awscli) and botocore: HTTPS with the test CA, the token
location, the access log, the signature proxy (passes awscli, rejects a wrong
secret, a skewed clock, a wrong payload hash) and every fault proxy mode.
Run by ctest (integration.servers_test) with FERRY_TEST_SERVERS_ENV set."""
import concurrent.futures
import datetime
import hashlib
import http.client
import json
import os
import re
import subprocess
import tempfile
import threading
import unittest
import urllib.parse
import urllib.request

import botocore.session
from botocore.auth import S3SigV4Auth
from botocore.config import Config
from botocore.exceptions import ClientError
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

AWS = '/usr/bin/aws'  # Debian's awscli (not a pip one that may be on PATH)


def load_env():
    env = {}
    with open(os.environ['FERRY_TEST_SERVERS_ENV']) as f:
        for line in f:
            k, _, v = line.rstrip('\n').partition('=')
            env[k] = v
    return env


E = load_env()
ROOT = E['FERRY_TEST_HTTP_ROOT']
BUCKET = E['FERRY_TEST_S3_BUCKET']


def curl(*args, data=None):
    """Runs curl; returns (exit code, status, headers text, body bytes)."""
    with tempfile.NamedTemporaryFile() as h, tempfile.NamedTemporaryFile() as b:
        p = subprocess.run(
            ['curl', '-sS', '--noproxy', '*', '-m', '20', '-D', h.name,
             '-o', b.name, '-w', '%{http_code}', *args],
            input=data, capture_output=True, timeout=60)
        return (p.returncode, int(p.stdout or 0), h.read().decode('latin-1'),
                b.read())


def header(headers, name):
    m = re.search(r'^%s:\s*(.*?)\r?$' % name, headers, re.I | re.M)
    return m.group(1) if m else None


def aws_start(endpoint, *args, secret=None, key=None):
    env = dict(os.environ, AWS_ACCESS_KEY_ID=key or E['FERRY_TEST_S3_ACCESS_KEY'],
               AWS_SECRET_ACCESS_KEY=secret or E['FERRY_TEST_S3_SECRET_KEY'],
               AWS_DEFAULT_REGION='us-east-1', AWS_CONFIG_FILE='/dev/null',
               AWS_SHARED_CREDENTIALS_FILE='/dev/null', AWS_PAGER='',
               AWS_MAX_ATTEMPTS='1', NO_PROXY='*')
    return subprocess.Popen([AWS, '--endpoint-url', endpoint, *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def aws_wait(proc):
    proc.stdout_text, proc.stderr = proc.communicate(timeout=120)
    return proc


def s3_client(endpoint, secret=None, token=None):
    """A botocore S3 client (what awscli runs on), path-style, in-process."""
    return botocore.session.get_session().create_client(
        's3', endpoint_url=endpoint, region_name='us-east-1',
        aws_access_key_id=E['FERRY_TEST_S3_ACCESS_KEY'],
        aws_secret_access_key=secret or E['FERRY_TEST_S3_SECRET_KEY'],
        aws_session_token=token,
        config=Config(s3={'addressing_style': 'path'},
                      retries={'max_attempts': 3, 'mode': 'standard'},
                      proxies={}))


def write(rel, data):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        f.write(data)
    return path


def data(n, seed=1):
    return bytes((i * 131 + seed) & 0xff for i in range(n))


def signed_request(url, method='GET', body=b'', when=None, payload=None,
                   secret=None, tamper_path=None, barrier=None, headers=()):
    """Sends a request signed by botocore (at `when`, default now); returns
    (status, body). tamper_path is sent instead of the signed path. The
    connection goes to 127.0.0.1 whatever the URL's host (the Host header
    keeps it: virtual-hosted style). With a barrier, the request is sent
    once all parties are connected and ready. headers: extra (name, value)
    pairs, signed too."""
    when = when or datetime.datetime.utcnow()
    req = AWSRequest(method=method, url=url, data=body)
    for name, value in headers:
        req.headers[name] = value
    req.context['timestamp'] = when.strftime('%Y%m%dT%H%M%SZ')
    req.headers['X-Amz-Date'] = req.context['timestamp']
    req.headers['X-Amz-Content-SHA256'] = (
        payload or hashlib.sha256(body).hexdigest())
    signer = S3SigV4Auth(Credentials(E['FERRY_TEST_S3_ACCESS_KEY'],
                                     secret or E['FERRY_TEST_S3_SECRET_KEY']),
                         's3', 'us-east-1')
    canonical = signer.canonical_request(req)
    signer._inject_signature_to_request(
        req, signer.signature(signer.string_to_sign(req, canonical), req))
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection('127.0.0.1', u.port, timeout=20)
    target = tamper_path or (u.path + ('?' + u.query if u.query else ''))
    if barrier is not None:
        conn.connect()
        barrier.wait()
    conn.request(method, target, body=body or None,
                 headers=dict(req.headers, Host=u.netloc))
    resp = conn.getresponse()
    out = resp.status, resp.read()
    conn.close()
    return out


class Control:
    """A fault proxy's control endpoint."""

    def __init__(self, url):
        self.url = url

    def call(self, path, body=None):
        req = urllib.request.Request(
            self.url + path, method='POST' if body is not None else 'GET',
            data=json.dumps(body).encode() if body is not None else None)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(req, timeout=20) as r:
            return json.loads(r.read())

    def add(self, **rule):
        return self.call('/rule', rule)['id']

    def reset(self):
        self.call('/__reset', {})

    def stats(self):
        return self.call('/__stats')


class NginxTest(unittest.TestCase):
    def test_https_verifies_with_the_test_ca_and_fails_without_it(self):
        body = data(3000)
        write('tls.bin', body)
        rc, status, _, got = curl('--cacert', E['FERRY_TEST_CA_BUNDLE'],
                                  E['FERRY_TEST_HTTPS_URL'] + '/tls.bin')
        self.assertEqual((rc, status, got), (0, 200, body))
        port = urllib.parse.urlsplit(E['FERRY_TEST_HTTPS_URL']).port
        rc, status, _, _ = curl('--cacert', E['FERRY_TEST_CA_BUNDLE'],
                                f'https://localhost:{port}/tls.bin')
        self.assertEqual((rc, status), (0, 200))
        rc, _, _, _ = curl(E['FERRY_TEST_HTTPS_URL'] + '/tls.bin')
        self.assertEqual(rc, 60)  # CURLE_PEER_FAILED_VERIFICATION

    def test_private_location_needs_the_bearer_token(self):
        write('private/p.txt', b'secret\n')
        url = E['FERRY_TEST_HTTP_URL'] + E['FERRY_TEST_HTTP_PRIVATE_PATH'] + \
            'p.txt'
        self.assertEqual(curl(url)[1], 401)
        self.assertEqual(curl('-H', 'Authorization: Bearer nope', url)[1], 401)
        rc, status, _, got = curl(
            '-H', 'Authorization: Bearer ' + E['FERRY_TEST_HTTP_TOKEN'], url)
        self.assertEqual((status, got), (200, b'secret\n'))
        https = E['FERRY_TEST_HTTPS_URL'] + '/private/p.txt'
        self.assertEqual(curl('--cacert', E['FERRY_TEST_CA_BUNDLE'],
                              https)[1], 401)

    def test_access_log_has_range_status_bytes_and_conditions(self):
        write('logged.bin', data(5000))
        curl('-r', '100-199', '-H', 'If-Range: "abc"', '-H', 'If-Match: *',
             E['FERRY_TEST_HTTP_URL'] + '/logged.bin?x=1')
        with open(E['FERRY_TEST_HTTP_ACCESS_LOG']) as f:
            line = [l for l in f if 'logged.bin?x=1' in l][-1]
        fields = line.rstrip('\n').split('\t')
        # If-Range does not match the ETag: nginx sends the whole file.
        self.assertEqual(fields[:6], [
            'GET /logged.bin?x=1 HTTP/1.1', 'bytes=100-199', '200', '5000',
            '\\x22abc\\x22', '*'])


class SigProxyTest(unittest.TestCase):
    S3 = E['FERRY_TEST_S3_URL']

    def test_awscli_passes_and_a_wrong_secret_or_key_fails(self):
        # The refused ones run alongside (awscli takes seconds to start);
        # botocore_client_operations checks more requests in-process.
        bad = [aws_start(self.S3, 's3', 'ls', f's3://{BUCKET}/',
                         secret='wrong'),
               aws_start(self.S3, 's3', 'cp', '/etc/hostname',
                         f's3://{BUCKET}/denied', key='NOBODY')]
        with tempfile.TemporaryDirectory() as tmp:
            up, down = os.path.join(tmp, 'up'), os.path.join(tmp, 'down')
            os.mkdir(up)
            files = {'big.bin': data(9 << 20),  # above 8 MiB: multipart
                     'odd key+%~=(\u00fc).bin': data(1000, 3),
                     'dir/small.txt': b'small'}
            for name, body in files.items():
                os.makedirs(os.path.dirname(os.path.join(up, name)),
                            exist_ok=True)
                with open(os.path.join(up, name), 'wb') as f:
                    f.write(body)
            prefix = f's3://{BUCKET}/awscli/'
            # sync lists, uploads, downloads; rm lists and deletes.
            for args in (['s3', 'sync', up, prefix],
                         ['s3', 'sync', prefix, down],
                         ['s3', 'rm', '--recursive', prefix]):
                p = aws_wait(aws_start(self.S3, *args))
                self.assertEqual(p.returncode, 0, (args, p.stderr))
            for name, body in files.items():
                with open(os.path.join(down, name), 'rb') as f:
                    self.assertEqual(f.read(), body, name)
        wrong_secret, wrong_key = map(aws_wait, bad)
        self.assertNotEqual(wrong_secret.returncode, 0)
        self.assertIn('SignatureDoesNotMatch', wrong_secret.stderr)
        self.assertNotEqual(wrong_key.returncode, 0)
        self.assertIn('InvalidAccessKeyId', wrong_key.stderr)

    def test_botocore_client_operations_pass_and_fail_with_a_wrong_secret(self):
        c = s3_client(self.S3)
        keys = ['bc/plain', 'bc/sp ace', 'bc/plus+eq=', 'bc/pct%25~',
                'bc/\u00fc\u00f1\u00ee', 'bc/(paren)!*\'']
        # (not 'a//b': s3rver 3.7.1 itself answers 404 to such keys)
        for k in keys:
            c.put_object(Bucket=BUCKET, Key=k, Body=k.encode())
        listed, token = [], None
        while True:  # pages of 2: continuation-token in the query
            kw = {'ContinuationToken': token} if token else {}
            page = c.list_objects_v2(Bucket=BUCKET, Prefix='bc/', MaxKeys=2,
                                     **kw)
            listed += [o['Key'] for o in page.get('Contents', [])]
            token = page.get('NextContinuationToken')
            if not token:
                break
        self.assertEqual(sorted(listed), sorted(keys))
        for k in keys:
            got = c.get_object(Bucket=BUCKET, Key=k, Range='bytes=1-3')
            self.assertEqual(got['Body'].read(), k.encode()[1:4])
            c.head_object(Bucket=BUCKET, Key=k)
        up = c.create_multipart_upload(Bucket=BUCKET, Key='bc/multi')
        part = c.upload_part(Bucket=BUCKET, Key='bc/multi', PartNumber=1,
                             UploadId=up['UploadId'], Body=b'm' * 100)
        c.complete_multipart_upload(
            Bucket=BUCKET, Key='bc/multi', UploadId=up['UploadId'],
            MultipartUpload={'Parts': [{'PartNumber': 1,
                                        'ETag': part['ETag']}]})
        c.delete_objects(Bucket=BUCKET, Delete={
            'Objects': [{'Key': k} for k in keys]})
        c.delete_object(Bucket=BUCKET, Key='bc/multi')
        bad = s3_client(self.S3, secret='wrong')
        # s3rver itself takes a wrong secret (hence the proxy).
        s3_client(E['FERRY_TEST_S3RVER_URL'], secret='wrong').list_objects_v2(
            Bucket=BUCKET)
        for call in (lambda: bad.list_objects_v2(Bucket=BUCKET),
                     lambda: bad.put_object(Bucket=BUCKET, Key='x', Body=b'x'),
                     lambda: bad.get_object(Bucket=BUCKET, Key='bc/plain')):
            with self.assertRaises(ClientError) as e:
                call()
            self.assertEqual(
                e.exception.response['ResponseMetadata']['HTTPStatusCode'],
                403)

    def test_botocore_signed_requests_pass_and_tampering_fails(self):
        url = f'{self.S3}/{BUCKET}/sig/direct.txt'
        self.assertEqual(signed_request(url, 'PUT', b'hello')[0], 200)
        self.assertEqual(signed_request(url), (200, b'hello'))
        status, body = signed_request(url, tamper_path=f'/{BUCKET}/sig/x')
        self.assertEqual(status, 403)
        self.assertIn(b'<Code>SignatureDoesNotMatch</Code>', body)
        self.assertIn(b'<CanonicalRequest>', body)
        old = datetime.datetime.utcnow() - datetime.timedelta(minutes=20)
        status, body = signed_request(url, when=old)
        self.assertEqual(status, 403)
        self.assertIn(b'<Code>RequestTimeTooSkewed</Code>', body)
        status, body = signed_request(url, 'PUT', b'hello',
                                      payload=hashlib.sha256(b'x').hexdigest())
        self.assertEqual(status, 400)
        self.assertIn(b'XAmzContentSHA256Mismatch', body)
        self.assertEqual(signed_request(url), (200, b'hello'))

    def test_virtual_hosted_style_through_the_proxy(self):
        # s3rver takes the bucket from Host "<bucket>.s3[.<region>].
        # amazonaws.com"; the proxy checks the Host as signed and passes it.
        port = urllib.parse.urlsplit(self.S3).port
        for i, host in enumerate((f'{BUCKET}.s3.amazonaws.com:{port}',
                                  f'{BUCKET}.s3.us-east-1.amazonaws.com:'
                                  f'{port}')):
            url = f'http://{host}/vhost/{i}.txt'
            self.assertEqual(signed_request(url, 'PUT', b'vh')[0], 200)
            self.assertEqual(signed_request(url), (200, b'vh'))
            path = f'{self.S3}/{BUCKET}/vhost/{i}.txt'
            self.assertEqual(signed_request(path), (200, b'vh'))

    def test_concurrent_deletes_emptying_a_folder_all_succeed(self):
        # s3rver alone answers some of these with 500 (its folder cleanup
        # races); the proxy turns a DELETE whose key is gone into 204.
        for r in range(5):
            urls = [f'{self.S3}/{BUCKET}/race{r}/o{i}' for i in range(6)]
            for u in urls:
                self.assertEqual(signed_request(u, 'PUT', b'x')[0], 200)
            barrier = threading.Barrier(len(urls))
            with concurrent.futures.ThreadPoolExecutor(len(urls)) as pool:
                got = list(pool.map(lambda u: signed_request(
                    u, 'DELETE', barrier=barrier)[0], urls))
            self.assertEqual(got, [204] * len(urls))

    def test_conditional_puts_are_enforced_as_s3_does(self):
        # s3rver ignores If-Match / If-None-Match on PUT; the proxy checks
        # them (ferry publish swaps its HEAD ref with them).
        url = f'{self.S3}/{BUCKET}/cond/ref'
        self.assertEqual(signed_request(
            url, 'PUT', b'1', headers=[('If-None-Match', '*')])[0], 200)
        self.assertEqual(signed_request(
            url, 'PUT', b'2', headers=[('If-None-Match', '*')])[0], 412)
        etag = s3_client(self.S3).head_object(
            Bucket=BUCKET, Key='cond/ref')['ETag']
        self.assertEqual(signed_request(
            url, 'PUT', b'3', headers=[('If-Match', '"0000"')])[0], 412)
        self.assertEqual(signed_request(url), (200, b'1'))
        self.assertEqual(signed_request(
            url, 'PUT', b'4', headers=[('If-Match', etag)])[0], 200)
        self.assertEqual(signed_request(url), (200, b'4'))
        self.assertEqual(signed_request(
            url + '-absent', 'PUT', b'5', headers=[('If-Match', etag)])[0],
            404)

    def test_session_token_must_be_the_known_one(self):
        ok = s3_client(self.S3, token=E['FERRY_TEST_S3_SESSION_TOKEN'])
        ok.list_objects_v2(Bucket=BUCKET, MaxKeys=1)
        with self.assertRaises(ClientError) as e:
            s3_client(self.S3, token='stolen').list_objects_v2(Bucket=BUCKET)
        self.assertEqual(e.exception.response['Error']['Code'], 'InvalidToken')

    def test_unsigned_requests_need_the_public_proxy(self):
        url = f'/{BUCKET}/sig/public.txt'
        self.assertEqual(signed_request(self.S3 + url, 'PUT', b'pub')[0], 200)
        rc, status, _, body = curl(self.S3 + url)
        self.assertEqual(status, 403)
        self.assertIn(b'<Code>AccessDenied</Code>', body)
        rc, status, _, body = curl(E['FERRY_TEST_S3_PUBLIC_URL'] + url)
        self.assertEqual((status, body), (200, b'pub'))


class FaultProxyTest(unittest.TestCase):
    URL = E['FERRY_TEST_FAULT_HTTP_URL']
    BODY = data(1 << 20, seed=7)

    @classmethod
    def setUpClass(cls):
        write('fault/obj.bin', cls.BODY)

    def setUp(self):
        self.ctl = Control(E['FERRY_TEST_FAULT_HTTP_CONTROL'])
        self.ctl.reset()
        self.addCleanup(self.ctl.reset)

    def get(self, *args, path='/fault/obj.bin'):
        return curl(*args, self.URL + path)

    def test_passes_through_untouched_and_counts(self):
        rc, status, h, body = self.get('-r', '10-19')
        self.assertEqual((rc, status, body), (0, 206, self.BODY[10:20]))
        self.assertEqual(header(h, 'Content-Range'), 'bytes 10-19/1048576')
        self.assertEqual(self.get()[3], self.BODY)
        s = self.ctl.stats()
        self.assertEqual(s['requests'], 2)
        self.assertEqual(s['paths']['/fault/obj.bin'],
                         {'requests': 2, 'bytes_sent': 10 + len(self.BODY)})

    def test_reset_after_k_bytes(self):
        self.ctl.add(action='reset', bytes=100000)
        rc, status, _, body = self.get()
        self.assertIn(rc, (56, 18))  # recv failure / partial file
        self.assertLessEqual(len(body), 100000)
        self.assertEqual(self.get()[3], self.BODY)  # fired once only

    def test_short_body_closes_after_k_bytes(self):
        self.ctl.add(action='short_body', bytes=1234, range_only=True)
        rc, status, h, body = self.get('-r', '0-99999')
        self.assertEqual((rc, status, len(body)), (18, 206, 1234))
        self.assertEqual(header(h, 'Content-Length'), '100000')

    def test_stall_then_continue_or_close(self):
        self.ctl.add(action='stall', bytes=5000, seconds=0.3)
        rc, status, _, body = self.get()
        self.assertEqual((rc, body), (0, self.BODY))
        self.ctl.add(action='stall', bytes=5000, seconds=0.3, then='close')
        rc, _, _, body = self.get()
        self.assertEqual((rc, len(body)), (18, 5000))
        # A long stall trips curl's low-speed limit; the reset frees it.
        self.ctl.add(action='stall', bytes=0, seconds=60)
        rc, _, _, _ = self.get('-y', '1', '-Y', '1000')
        self.assertEqual(rc, 28)

    def test_status_503_with_retry_after_then_500_on_the_nth(self):
        self.ctl.add(action='status', status=503, retry_after=2)
        rc, status, h, body = self.get()
        self.assertEqual(status, 503)
        self.assertEqual(header(h, 'Retry-After'), '2')
        self.assertIn(b'<Code>SlowDown</Code>', body)
        self.ctl.add(action='status', status=500, nth=2, path='obj')
        codes = [self.get()[1] for _ in range(3)]
        self.assertEqual(codes, [200, 500, 200])

    def test_range_start_picks_a_part_by_its_offset(self):
        self.ctl.add(action='status', status=500, range_start=1000, times=0)
        codes = [self.get(*a)[1] for a in (
            ('-r', '0-999'), ('-r', '100-1999'), ('-r', '1000-1999'),
            ('-r', '1000-'), ('-r', '1000-1099,2000-2099'), ())]
        self.assertEqual(codes, [206, 206, 500, 500, 500, 200])

    def test_ignore_range_gives_200_and_the_whole_object(self):
        self.ctl.add(action='ignore_range', range_only=True)
        rc, status, _, body = self.get('-r', '0-9')
        self.assertEqual((status, body), (200, self.BODY))

    def test_wrong_content_range_keeps_the_length(self):
        self.ctl.add(action='wrong_content_range')
        rc, status, h, body = self.get('-r', '100-199')
        self.assertEqual((status, body), (206, self.BODY[100:200]))
        m = re.match(r'bytes (\d+)-(\d+)/(\d+)', header(h, 'Content-Range'))
        self.assertNotEqual(int(m[1]), 100)
        self.assertEqual(int(m[2]) - int(m[1]), 99)

    def test_mutate_file_changes_the_etag_after_the_answer(self):
        path = write('fault/mut.bin', data(1000))
        self.ctl.add(action='mutate', file=path)
        _, _, h1, b1 = self.get(path='/fault/mut.bin')
        _, _, h2, b2 = self.get(path='/fault/mut.bin')
        self.assertEqual(b1, data(1000))
        self.assertEqual(len(b2), 1000)
        self.assertNotEqual(b1, b2)
        self.assertNotEqual(header(h1, 'ETag'), header(h2, 'ETag'))

    def test_s3_instance_signs_through_and_mutates_by_put(self):
        ctl = Control(E['FERRY_TEST_FAULT_S3_CONTROL'])
        ctl.reset()
        self.addCleanup(ctl.reset)
        s3 = E['FERRY_TEST_FAULT_S3_URL']
        url = f'{s3}/{BUCKET}/fault/s3.txt'
        self.assertEqual(signed_request(url, 'PUT', b'one')[0], 200)
        # botocore retries a 503 and gets through the signature proxy.
        ctl.add(action='status', status=503, retry_after=0, method='GET')
        page = s3_client(s3).list_objects_v2(Bucket=BUCKET, Prefix='fault/')
        self.assertEqual([o['Key'] for o in page['Contents']],
                         ['fault/s3.txt'])
        ctl.add(action='mutate', content='two!',
                put_url=f'{E["FERRY_TEST_S3RVER_URL"]}/{BUCKET}/fault/s3.txt')
        self.assertEqual(signed_request(url), (200, b'one'))
        self.assertEqual(signed_request(url), (200, b'two!'))
        self.assertEqual(ctl.stats()['faults'], 2)


if __name__ == '__main__':
    unittest.main(verbosity=2)
