#!/usr/bin/python3
"""Signature-checking proxy in front of s3rver (which accepts any signature).

For every request it recomputes the AWS SigV4 signature with Debian's
python3-botocore (an oracle that is not ferry's signer) from the request as
received, and compares it with the one in the Authorization header:

  - canonical URI and query: what the request decodes to, re-encoded the
    AWS way (a strict server canonicalises what it decodes, not the bytes
    sent); the query pairs are sorted by botocore;
  - the headers listed in SignedHeaders, with their received values;
  - x-amz-content-sha256 as sent (UNSIGNED-PAYLOAD or the body's SHA-256,
    which is then checked against the body too);
  - the key scope (date, region, service) from the Credential field.

Refusals are S3 error documents: no Authorization -> 403 AccessDenied (unless
--public), unknown key -> 403 InvalidAccessKeyId, a session token other than
--session-token -> 403 InvalidToken, wrong signature -> 403
SignatureDoesNotMatch (with CanonicalRequest and StringToSign, as S3 does),
x-amz-date more than 15 min off -> 403 RequestTimeTooSkewed. Accepted
requests go to s3rver unchanged and its answer streams back. A PUT with
If-None-Match / If-Match is checked here first, as S3 does and s3rver does
not: 412 PreconditionFailed (404 NoSuchKey for If-Match on a missing key).

Usage: sig_proxy.py --port P --upstream http://127.0.0.1:S3RVER_PORT
       [--access-key S3RVER] [--secret-key S3RVER] [--region R] [--public]
       [--session-token T]  (requests without a token pass too)
Run with /usr/bin/python3 (Debian's botocore).
"""
import argparse
import datetime
import email.utils
import hashlib
import hmac
import re
import tempfile
import threading
import uuid
from urllib.parse import quote, unquote_to_bytes

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

import proxy_base

MAX_SKEW = datetime.timedelta(minutes=15)
SHA256_RE = re.compile(r'^[0-9a-f]{64}$')


class Refused(Exception):
    def __init__(self, status, code, message, xml_extra=()):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.xml_extra = xml_extra


def canonical_path(raw_path):
    """The URI path decoded, then encoded as SigV4 wants (/ kept)."""
    return quote(unquote_to_bytes(raw_path), safe='/~')


def canonical_query(raw_query):
    """Each key and value decoded and re-encoded ('key' becomes 'key=')."""
    pairs = []
    for pair in raw_query.split('&') if raw_query else []:
        key, _, value = pair.partition('=')
        pairs.append(quote(unquote_to_bytes(key), safe='~') + '=' +
                     quote(unquote_to_bytes(value), safe='~'))
    return '&'.join(pairs)


def parse_authorization(value):
    """'AWS4-HMAC-SHA256 Credential=AK/DATE/REGION/s3/aws4_request,
    SignedHeaders=a;b, Signature=HEX' -> dict, or Refused."""
    scheme, _, rest = value.strip().partition(' ')
    if scheme != 'AWS4-HMAC-SHA256':
        raise Refused(400, 'InvalidArgument',
                      f'unsupported authorization type {scheme!r}')
    fields = {}
    for part in rest.split(','):
        k, _, v = part.strip().partition('=')
        fields[k] = v
    try:
        access_key, date, region, service, term = \
            fields['Credential'].split('/')
        signed = fields['SignedHeaders'].split(';')
        signature = fields['Signature']
    except (KeyError, ValueError):
        raise Refused(400, 'AuthorizationHeaderMalformed',
                      'the authorization header is malformed')
    if term != 'aws4_request' or service != 's3':
        raise Refused(400, 'AuthorizationHeaderMalformed',
                      f'bad credential scope {fields["Credential"]!r}')
    return dict(access_key=access_key, date=date, region=region,
                signed=signed, signature=signature)


class SigCheckHandler(proxy_base.ProxyHandler):
    def handle_request(self):
        request_id = uuid.uuid4().hex[:16].upper()
        try:
            payload_hash = self.check()
        except Refused as r:
            self.send_error_body(r.status, r.code, r.message,
                                 xml_extra=r.xml_extra, request_id=request_id)
            return
        if self.command == 'DELETE' and '?' not in self.path:
            if 'If-Match' in self.headers:
                # s3rver ignores conditions on DELETE; S3 enforces If-Match
                # (since 2025): a key gone is 404 NoSuchKey, another ETag
                # 412. Checked and deleted under the lock of conditional
                # PUTs, so of two conditional deletes only one finds the key.
                with self.server.conditional_lock:
                    if self.condition_holds(request_id):
                        self.delete_object(request_id)
                return
            self.delete_object(request_id)
            return
        if self.command == 'PUT' and '?' not in self.path and (
                'If-Match' in self.headers or 'If-None-Match' in self.headers):
            # s3rver ignores conditions on PUT; S3 enforces them (since
            # 2024). Checked and written under one lock, so two conditional
            # writers of a key cannot both pass.
            with self.server.conditional_lock:
                if self.condition_holds(request_id):
                    self.pass_on(payload_hash, request_id)
            return
        self.pass_on(payload_hash, request_id)

    def condition_holds(self, request_id):
        """If-None-Match: * -> 412 when the key exists; If-Match: ETag ->
        404 NoSuchKey when it does not, 412 when its ETag differs (as S3).
        Sends the refusal and returns False, or returns True."""
        head = self.upstream.request(
            'HEAD', self.path,
            self.forward_headers(drop={'if-match', 'if-none-match'}))
        head.read()
        exists = head.status == 200
        etag = (head.getheader('ETag') or '').strip('"')
        if_none = self.headers.get('If-None-Match')
        if_match = self.headers.get('If-Match')
        failed = None
        if if_none is not None and if_none.strip() == '*' and exists:
            failed = 'If-None-Match'
        if if_match is not None:
            if not exists:
                self.send_error_body(404, 'NoSuchKey',
                                     'The specified key does not exist.',
                                     request_id=request_id)
                return False
            want = if_match.strip()
            if want != '*' and want.strip('"') != etag:
                failed = 'If-Match'
        if failed:
            self.send_error_body(
                412, 'PreconditionFailed',
                'At least one of the pre-conditions you specified did not '
                'hold', xml_extra=[('Condition', failed)],
                request_id=request_id)
            return False
        return True

    def pass_on(self, payload_hash, request_id):
        """Sends an accepted request to s3rver (a signed payload checked
        against its SHA-256 first) and relays the answer."""
        if payload_hash is None or not self.body_length():
            self.forward()
            return
        # A signed payload: spool it (memory up to 16 MiB, then a temporary
        # file), check its SHA-256, and only then send it on.
        with tempfile.SpooledTemporaryFile(16 << 20) as spool:
            digest = hashlib.sha256()
            for piece in self.read_body():
                digest.update(piece)
                spool.write(piece)
            if digest.hexdigest() != payload_hash:
                self.send_error_body(
                    400, 'XAmzContentSHA256Mismatch',
                    "The provided 'x-amz-content-sha256' header does not "
                    'match what was computed.', request_id=request_id, drain=False,
                    xml_extra=[('ClientComputedContentSHA256', payload_hash),
                               ('S3ComputedContentSHA256',
                                digest.hexdigest())])
                return
            spool.seek(0)
            self.forward(body=iter(lambda: spool.read(proxy_base.CHUNK), b''))

    def delete_object(self, request_id):
        """DELETE of a key, working around an s3rver race: when two DELETEs
        empty a directory at once, one of them fails (500, ENOENT on the
        directory it just lost). If the key is gone afterwards the delete
        did happen: answer 204 as S3 would."""
        headers = self.forward_headers()
        resp = self.upstream.request('DELETE', self.path, headers)
        if resp.status == 500:
            resp.read()
            head = self.upstream.request('HEAD', self.path, headers)
            head.read()
            if head.status == 404:
                self.response_started = True
                self.send_response_only(204)
                self.send_header('x-amz-request-id', request_id)
                self.end_headers()
                return
            resp = self.upstream.request('DELETE', self.path, headers)
        self.relay(resp, self.upstream)

    def check(self):
        """Raises Refused unless the request is signed right. Returns the
        payload SHA-256 to check, or None (UNSIGNED-PAYLOAD, public)."""
        auth = self.headers.get('Authorization')
        if auth is None:
            if self.server.public:
                return None
            if 'X-Amz-Signature' in self.path:
                raise Refused(403, 'AccessDenied',
                              'presigned URLs are not supported by the '
                              'test proxy')
            raise Refused(403, 'AccessDenied', 'Access Denied')
        a = parse_authorization(auth)
        if a['access_key'] != self.server.access_key:
            raise Refused(403, 'InvalidAccessKeyId',
                          'The AWS Access Key Id you provided does not '
                          'exist in our records.',
                          [('AWSAccessKeyId', a['access_key'])])
        if self.server.region and a['region'] != self.server.region:
            raise Refused(400, 'AuthorizationHeaderMalformed',
                          f"the region '{a['region']}' is wrong; expecting "
                          f"'{self.server.region}'",
                          [('Region', self.server.region)])
        timestamp = self.request_time()
        if a['date'] != timestamp[:8]:
            raise Refused(403, 'SignatureDoesNotMatch',
                          'the credential date does not match x-amz-date')
        payload = self.headers.get('x-amz-content-sha256')
        if payload is None:
            raise Refused(400, 'InvalidRequest',
                          'Missing required header for this request: '
                          'x-amz-content-sha256')
        if payload != 'UNSIGNED-PAYLOAD' and not SHA256_RE.match(payload):
            raise Refused(400, 'InvalidArgument',
                          f'x-amz-content-sha256 {payload!r} is not '
                          'supported by the test proxy')
        token = self.headers.get('x-amz-security-token')
        if token is not None and token != self.server.session_token:
            raise Refused(403, 'InvalidToken',
                          'The provided token is malformed or otherwise '
                          'invalid.')
        present = {k.lower() for k in self.headers.keys()}
        if 'host' not in a['signed']:
            raise Refused(403, 'AccessDenied', 'host must be signed')
        missing = [h for h in a['signed'] if h not in present]
        unsigned = sorted(h for h in present
                          if h.startswith('x-amz-') and h not in a['signed'])
        if missing or unsigned:
            raise Refused(403, 'AccessDenied',
                          'There were headers present in the request which '
                          'were not signed' if unsigned else
                          f'signed headers missing from the request: '
                          f'{missing}',
                          [('HeadersNotSigned', ','.join(unsigned))])

        # The oracle: botocore's S3 signer on the request as received.
        raw_path, _, raw_query = self.path.partition('?')
        url = 'http://signed.invalid' + canonical_path(raw_path)
        query = canonical_query(raw_query)
        if query:
            url += '?' + query
        headers = {h: ','.join(self.headers.get_all(h)) for h in a['signed']}
        req = AWSRequest(method=self.command, url=url, headers=headers)
        req.context['timestamp'] = timestamp
        signer = S3SigV4Auth(
            Credentials(self.server.access_key, self.server.secret_key),
            's3', a['region'])
        canonical = signer.canonical_request(req)
        string_to_sign = signer.string_to_sign(req, canonical)
        expected = signer.signature(string_to_sign, req)
        signed_list = signer.signed_headers(signer.headers_to_sign(req))
        if (signed_list != ';'.join(a['signed']) or
                not hmac.compare_digest(expected, a['signature'])):
            raise Refused(
                403, 'SignatureDoesNotMatch',
                'The request signature we calculated does not match the '
                'signature you provided. Check your key and signing method.',
                [('AWSAccessKeyId', a['access_key']),
                 ('StringToSign', string_to_sign),
                 ('SignatureProvided', a['signature']),
                 ('CanonicalRequest', canonical)])
        return None if payload == 'UNSIGNED-PAYLOAD' else payload

    def request_time(self):
        """x-amz-date (or Date) as YYYYMMDDTHHMMSSZ; refuses a missing one
        and one more than 15 minutes away from now."""
        value = self.headers.get('x-amz-date')
        try:
            if value is not None:
                when = datetime.datetime.strptime(value, '%Y%m%dT%H%M%SZ')
            else:
                when = email.utils.parsedate_to_datetime(
                    self.headers['Date']).replace(tzinfo=None)
        except (TypeError, ValueError, KeyError):
            raise Refused(403, 'AccessDenied',
                          'AWS authentication requires a valid Date or '
                          'x-amz-date header')
        now = datetime.datetime.utcnow()
        if abs(when - now) > MAX_SKEW:
            raise Refused(403, 'RequestTimeTooSkewed',
                          'The difference between the request time and the '
                          'current time is too large.',
                          [('RequestTime', when.strftime('%Y%m%dT%H%M%SZ')),
                           ('ServerTime', now.strftime('%Y%m%dT%H%M%SZ')),
                           ('MaxAllowedSkewMilliseconds', '900000')])
        return when.strftime('%Y%m%dT%H%M%SZ')


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--port', type=int, required=True)
    p.add_argument('--upstream', required=True, help='s3rver URL')
    p.add_argument('--access-key', default='S3RVER')
    p.add_argument('--secret-key', default='S3RVER')
    p.add_argument('--region', default='',
                   help='refuse other regions (default: accept any)')
    p.add_argument('--session-token',
                   default='FQoGZXIvYXdzE/token+with=chars',
                   help='the one x-amz-security-token accepted')
    p.add_argument('--public', action='store_true',
                   help='forward unsigned requests (--no-sign-request)')
    p.add_argument('--verbose', action='store_true')
    args = p.parse_args()
    server = proxy_base.serve(
        SigCheckHandler, args.port, upstream_url=args.upstream,
        access_key=args.access_key, secret_key=args.secret_key,
        region=args.region, public=args.public,
        session_token=args.session_token, verbose=args.verbose,
        conditional_lock=threading.Lock())
    server.serve_forever()


if __name__ == '__main__':
    main()
