#!/usr/bin/python3
"""Fault-injecting HTTP/1.1 proxy (Python standard library only).

Sits in front of nginx or of the S3 signature proxy and forwards everything,
streaming, until told to misbehave. Rules are posted as JSON to a separate
control port:

  POST /rule    {"action": ..., match fields..., action fields...} -> {"id": N}
  GET  /rules   the rules with how often each matched and fired
  GET  /__stats {"requests": N, "faults": N, "connections": N (accepted),
                 "paths": {path: {"requests": N,
                 "bytes_sent": N}}}  (body bytes sent to clients, per path)
  POST /__reset clears rules and counters and wakes stalled transfers

Match fields (all optional): "method" ("GET"), "path" (substring of the
request path, query included), "range_only" (true: only requests with a
Range header), "multi_range_only" (true: only those whose Range asks for
several ranges), "range_start" (N: only requests whose Range starts at
byte N, "bytes=N-..." (of several ranges, the first): a part picked by its
place in the object, not by the order requests come in), "nth" (fire from
the Nth matching request on, 1-based, default 1), "times" (how many times
to fire, default 1; 0 = always).
The first rule that fires decides; a request fires at most one rule.

Actions:
  reset       forward; after "bytes" (default 0) body bytes, reset the
              connection (TCP RST): curl reports error 56 (or 18)
  stall       forward; after "bytes", send nothing for "seconds" (default
              10), then "then": "continue" (default) or "close"
  status      do not forward; answer "status" (default 503) with an S3-style
              error body (code from "code", or by status: 503 SlowDown, 500
              InternalError, ...) and "Retry-After: <retry_after>" if given
  ignore_range forward without Range/If-Range (to --direct, as the request
              changed and its signature would not hold): 200 + whole object
  throttle    forward the body at "rate" bytes a second (in pieces of at
              most 4 KiB; a reset sends the rest at once): a slow
              connection, as one of many to a busy server
  short_body  forward; keep upstream's Content-Length but close the
              connection cleanly after "bytes" body bytes: curl error 18
  wrong_content_range  forward; rewrite Content-Range to another range of
              the same length (or use "content_range" verbatim); in a
              multipart/byteranges answer, the first part's (same width;
              "star_total": its total becomes "*")
  first_range forward a GET of several ranges ("bytes=A-B,C-D") as a GET of
              its first range: a server that serves only one ("total_delta":
              the total its Content-Range tells moved by that many)
  short_part  forward; in a multipart/byteranges answer drop the first
              part's first byte (a part a byte short of its Content-Range)
              and add one after the body's end (the length is kept)
  flip        forward; invert the answer's body byte number "bytes"
              (default 0; nothing if the body is shorter): a server or
              network byte error the length and headers do not show
  mutate      forward; change the object before the answer's last byte (so
              the client's next request sees it): run "command"
              (sh -c), or overwrite "file" (with "content" if given, else
              with its first byte inverted; mtime moves on by >= 1 s so
              nginx's ETag changes), or PUT "content" to "put_url"

Usage: fault_proxy.py --port P --control-port C --upstream URL [--direct URL]
"""
import argparse
import http.client
import http.server
import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.parse

import proxy_base

S3_CODES = {500: 'InternalError', 503: 'SlowDown', 403: 'AccessDenied',
            404: 'NoSuchKey', 412: 'PreconditionFailed', 400: 'BadRequest',
            416: 'InvalidRange'}


class State:
    """Rules and counters, shared by all threads (under self.lock)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.rules = []
            self.next_id = 1
            self.requests = 0
            self.faults = 0
            self.connections = 0  # client connections accepted
            self.paths = {}
            # Stalled transfers wait on this; a reset wakes them.
            old = getattr(self, 'wake', None)
            self.wake = threading.Event()
        if old is not None:
            old.set()

    def add(self, rule):
        with self.lock:
            rule = dict(rule, id=self.next_id, seen=0, fired=0)
            self.next_id += 1
            self.rules.append(rule)
            return rule['id']

    def pick(self, method, path, range_header):
        """Counts the request and returns the rule it fires, or None."""
        has_range = range_header is not None
        multi_range = ',' in (range_header or '')
        m = re.match(r'\s*bytes\s*=\s*(\d+)-', range_header or '')
        range_start = int(m[1]) if m else None
        with self.lock:
            self.requests += 1
            self.path_stats(path)['requests'] += 1
            chosen = None
            for r in self.rules:
                if r.get('method') and r['method'].upper() != method:
                    continue
                if r.get('path') and r['path'] not in path:
                    continue
                if r.get('range_only') and not has_range:
                    continue
                if r.get('multi_range_only') and not multi_range:
                    continue
                if ('range_start' in r and
                        r['range_start'] != range_start):
                    continue
                r['seen'] += 1
                times = r.get('times', 1)
                if (chosen is None and r['seen'] >= r.get('nth', 1) and
                        (times == 0 or r['fired'] < times)):
                    r['fired'] += 1
                    chosen = r
            if chosen is not None:
                self.faults += 1
            return chosen

    def connected(self):
        with self.lock:
            self.connections += 1

    def path_stats(self, path):
        return self.paths.setdefault(path.partition('?')[0],
                                     {'requests': 0, 'bytes_sent': 0})

    def sent(self, path, n):
        with self.lock:
            self.path_stats(path)['bytes_sent'] += n

    def stats(self):
        with self.lock:
            return {'requests': self.requests, 'faults': self.faults,
                    'connections': self.connections,
                    'paths': json.loads(json.dumps(self.paths))}


def shift_range(value, n_bytes):
    """'bytes A-B/T' -> another range of the same length."""
    m = re.match(r'bytes (\d+)-(\d+)/(\d+|\*)', value or '')
    if not m:
        return 'bytes 0-%d/*' % max(n_bytes - 1, 0)
    a, b, total = int(m[1]), int(m[2]), m[3]
    length = b - a + 1
    if a >= length:
        a -= length
    elif total == '*' or b + length < int(total):
        a += length
    else:  # the range is more than half the object: change the total
        return 'bytes %d-%d/%d' % (a, b, int(total) + 1)
    return 'bytes %d-%d/%s' % (a, a + length - 1, total)


def move_total(value, delta):
    """'bytes A-B/T' -> 'bytes A-B/(T+delta)'."""
    m = re.match(r'bytes (\d+)-(\d+)/(\d+)$', value or '')
    if not m:
        return value
    return 'bytes %s-%s/%d' % (m[1], m[2], int(m[3]) + delta)


def shift_part_range(body, star_total=False):
    """The first part's Content-Range in a multipart/byteranges body moved
    by one byte (or its total made "*"), its text as long as before (the
    body keeps its length)."""
    if star_total:
        m = re.search(rb'Content-Range: bytes \d+-\d+/(\d+)', body, re.I)
        if not m:
            return body
        star = b'*' + b' ' * (m.end(1) - m.start(1) - 1)
        return body[:m.start(1)] + star + body[m.end(1):]
    m = re.search(rb'Content-Range: bytes (\d+)-(\d+)/', body, re.I)
    if not m:
        return body
    a, b = int(m[1]), int(m[2])
    for d in (1, -1):
        new = b'%d-%d' % (a + d, b + d)
        if a + d >= 0 and len(new) == m.end(2) - m.start(1):
            return body[:m.start(1)] + new + body[m.end(2):]
    return body


def mutate(rule):
    if rule.get('command'):
        subprocess.run(['sh', '-c', rule['command']], timeout=120,
                       check=False)
    if rule.get('file'):
        path = rule['file']
        before = os.stat(path).st_mtime
        if 'content' in rule:
            data = rule['content'].encode()
        else:
            with open(path, 'rb') as f:
                data = bytearray(f.read())
            if data:
                data[0] ^= 0xff
        tmp = path + '.fault-tmp'
        with open(tmp, 'wb') as f:
            f.write(data)
        os.replace(tmp, path)
        when = max(time.time(), before + 1)
        os.utime(path, (when, when))
    if rule.get('put_url'):
        u = urllib.parse.urlsplit(rule['put_url'])
        conn = http.client.HTTPConnection(u.hostname, u.port or 80,
                                          timeout=60)
        conn.request('PUT', u.path, body=rule.get('content', '').encode())
        conn.getresponse().read()
        conn.close()


class FaultHandler(proxy_base.ProxyHandler):
    def handle_request(self):
        state = self.server.state
        rule = state.pick(self.command, self.path, self.headers.get('Range'))
        self.rule = rule
        action = rule['action'] if rule else None
        if action == 'status':
            status = int(rule.get('status', 503))
            extra = []
            if 'retry_after' in rule:
                extra.append(('Retry-After', str(rule['retry_after'])))
            self.send_error_body(
                status, rule.get('code', S3_CODES.get(status, 'InjectedFault')),
                f'injected by the fault proxy (rule {rule["id"]})',
                extra_headers=extra)
            return
        self.mutated = False
        if action == 'first_range':
            first = self.headers.get('Range', '').split(',')[0]
            self.forward(drop_headers=('range',),
                         extra_headers=[('Range', first)])
        elif action == 'ignore_range':
            self.forward(drop_headers=('range', 'if-range'),
                         upstream=self.direct)
        else:
            self.forward()
        if action == 'mutate' and not self.mutated:
            mutate(rule)  # no body, or one of unknown length

    def setup(self):
        super().setup()
        self.server.state.connected()
        self.direct = proxy_base.Upstream(self.server.direct_url)

    def finish(self):
        try:
            super().finish()
        finally:
            self.direct.close()

    def forward(self, **kw):
        # A client that expects 100-continue gets it here; upstream sees a
        # plain request.
        self.continue_body()
        return super().forward(**kw)

    def edit_headers(self, status, headers):
        self.length = int(dict((k.lower(), v) for k, v in headers)
                          .get('content-length', -1))
        self.multipart = any(
            k.lower() == 'content-type' and 'multipart/byteranges' in v
            for k, v in headers)
        rule = self.rule
        if rule and rule['action'] == 'first_range' and rule.get('total_delta'):
            headers = [(k, move_total(v, int(rule['total_delta'])))
                       if k.lower() == 'content-range' else (k, v)
                       for k, v in headers]
        if rule and rule['action'] == 'wrong_content_range' and status == 206:
            headers = [(k, rule.get('content_range') or shift_range(v, 0))
                       if k.lower() == 'content-range' else (k, v)
                       for k, v in headers]
        return headers

    def write_out(self, piece, chunked=False):
        # Counted before it goes out: a client that has the bytes and then
        # asks for the stats must find them counted (counted after, the
        # stats could lag the client: servers_smoke_test flaked so).
        self.server.state.sent(self.path, len(piece))
        super().write_out(piece, chunked)

    def send_piece(self, sent, piece, chunked):
        rule = self.rule
        if (rule and rule['action'] == 'mutate' and
                sent + len(piece) == self.length):
            # Change the object before the answer's last bytes go out: a
            # client that has the whole answer sees the change next time.
            mutate(rule)
            self.mutated = True
        if (rule and rule['action'] == 'wrong_content_range' and
                self.multipart and sent == 0):
            piece = shift_part_range(piece, rule.get('star_total'))
        if rule and rule['action'] == 'short_part' and self.multipart:
            if sent == 0:  # the first part's first byte goes
                at = piece.find(b'\r\n\r\n') + 4
                piece = piece[:at] + piece[at + 1:]
            if sent + len(piece) + (1 if sent == 0 else 0) == self.length:
                piece += b'\n'  # after the closing boundary
        if rule and rule['action'] == 'throttle':
            rate = max(1, int(rule.get('rate', 65536)))
            for at in range(0, len(piece), 4096):
                chunk = piece[at:at + 4096]
                self.write_out(chunk, chunked)
                self.server.state.wake.wait(len(chunk) / rate)
            return
        limit = int(rule.get('bytes', 0)) if rule else 0
        if (rule and rule['action'] == 'flip' and
                sent <= limit < sent + len(piece)):
            piece = bytearray(piece)
            piece[limit - sent] ^= 0xff
            piece = bytes(piece)
        if (not rule or rule['action'] not in ('reset', 'stall', 'short_body')
                or not sent <= limit < sent + len(piece)):
            self.write_out(piece, chunked)
            return
        # This piece crosses the limit: send up to it, then misbehave.
        head, tail = piece[:limit - sent], piece[limit - sent:]
        if head:
            self.write_out(head, chunked)
        if rule['action'] == 'stall':
            self.server.state.wake.wait(float(rule.get('seconds', 10)))
            if rule.get('then', 'continue') == 'continue':
                self.write_out(tail, chunked)
                return
        self.abort(rst=rule['action'] == 'reset')

    def abort(self, rst):
        """Ends the connection now: with an RST, or a clean FIN."""
        self.wfile.flush()
        if rst:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack('ii', 1, 0))
        else:
            self.connection.shutdown(socket.SHUT_RDWR)
        self.rfile.close()
        self.wfile.close()
        self.connection.close()
        raise proxy_base.ClientGone()


class ControlHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, obj):
        body = (json.dumps(obj, indent=1) + '\n').encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        state = self.server.state
        if self.path == '/__stats':
            self.reply(200, state.stats())
        elif self.path == '/rules':
            with state.lock:
                self.reply(200, list(state.rules))
        else:
            self.reply(404, {'error': 'unknown path'})

    def do_POST(self):
        state = self.server.state
        n = int(self.headers.get('Content-Length') or 0)
        text = self.rfile.read(n) if n else b''
        if self.path == '/__reset':
            state.reset()
            self.reply(200, {'ok': True})
        elif self.path == '/rule':
            try:
                rule = json.loads(text)
                if rule.get('action') not in ACTIONS:
                    raise ValueError(f'unknown action {rule.get("action")!r}')
            except ValueError as e:
                self.reply(400, {'error': str(e)})
                return
            self.reply(200, {'id': state.add(rule)})
        else:
            self.reply(404, {'error': 'unknown path'})


ACTIONS = {'reset', 'stall', 'throttle', 'status', 'ignore_range', 'first_range',
           'short_body', 'short_part', 'wrong_content_range', 'mutate',
           'flip'}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--port', type=int, required=True)
    p.add_argument('--control-port', type=int, required=True)
    p.add_argument('--upstream', required=True)
    p.add_argument('--direct', help='upstream for rewritten requests '
                   '(default: --upstream)')
    p.add_argument('--verbose', action='store_true')
    args = p.parse_args()
    state = State()
    proxy = proxy_base.serve(FaultHandler, args.port,
                             upstream_url=args.upstream,
                             direct_url=args.direct or args.upstream,
                             state=state, verbose=args.verbose)
    control = proxy_base.Server(('127.0.0.1', args.control_port),
                                ControlHandler)
    control.state = state
    threading.Thread(target=control.serve_forever, daemon=True).start()
    proxy.serve_forever()


if __name__ == '__main__':
    sys.exit(main())
