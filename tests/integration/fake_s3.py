#!/usr/bin/python3
"""A tiny S3 stand-in for tests that need listings no real server makes:
keys with '..', '//', a leading '/', folder markers, keys that clash.

  fake_s3.py OBJECTS.json PORTFILE [MODE]

OBJECTS.json maps each key to its content (a string). Any bucket answers
ListObjectsV2 (?list-type=2&prefix=...) with those keys and GET/HEAD of a key
with its bytes (Range honoured; a range past the end: 416). Served as plain
HTTP too: http://127.0.0.1:PORT/BUCKET/KEY. The port it listens on is written
to PORTFILE, each GET's Range header (or "-") appended to PORTFILE.log; it
serves until killed. Standard library only. MODE (comma-separated modes)
misbehaves:
  ignore_range  answer every GET 200 with the whole object (python3 -m
                http.server does)
  endless       answer a Range with a correct 206 header, then a chunked body
                that goes on past the range until the client hangs up
  fail_from=N   answer 503 to a Range that starts at byte N or later
  bad_md5=KEY   KEY's ETag is the MD5 of other bytes (a plain single-part ETag
                that its body does not match)
  etag=E        every object's ETag is E, whatever its bytes (a server whose
                ETag does not follow the content)
  change_after=N  from a key's Nth GET on, the object is its bytes reversed
                (another ETag): it changes during a download
  exit_after=N  exit once N requests are answered: the server goes away and
                its port refuses connections (a publish whose uploads find
                no server)
"""
import hashlib
import http.server
import json
import os
import socket
import socketserver
import sys
import urllib.parse
from xml.sax.saxutils import escape

objs = {k: v.encode() for k, v in json.load(open(sys.argv[1])).items()}
modes = dict(m.partition('=')[::2] for m in
             (sys.argv[3] if len(sys.argv) > 3 else '').split(',') if m)
gets = {}  # key -> GETs so far
answered = [0]  # requests answered (exit_after)
connections = set()  # open connections (exit_after shuts them)


def etag(data):
    if 'bad_md5' in modes and data == objs.get(modes['bad_md5']):
        data += b'!'
    if 'etag' in modes:
        return modes['etag']
    return '"%s"' % hashlib.md5(data).hexdigest()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def send(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(body)))
        last = False
        if 'exit_after' in modes:
            answered[0] += 1
            last = answered[0] >= int(modes['exit_after'])
        if last:
            # No connection is taken from here on, and the kept-alive ones
            # are shut, before the client has the answer: its next request
            # finds no server. A close alone left the port listening while
            # serve_forever's poll held the socket: under load, requests
            # sent before the exit connected and were then reset, so the
            # client had reached a server and never said it unreachable
            # (cli.unreachable failed 2 runs in 8 with 3 busy loops).
            server.socket.shutdown(socket.SHUT_RDWR)
            server.socket.close()
            for conn in list(connections):
                if conn is not self.connection:
                    try:
                        conn.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
            self.send_header('Connection', 'close')
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)
        if last:
            self.wfile.flush()
            os._exit(0)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        parts = url.path.split('/', 2)  # '', bucket, key
        if 'list-type' in query:
            prefix = query.get('prefix', [''])[0]
            keys = sorted(k for k in objs if k.startswith(prefix))
            xml = ['<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>'
                   '<Name>b</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount>'
                   '<MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>'
                   % (escape(prefix), len(keys))]
            for k in keys:
                xml.append('<Contents><Key>%s</Key><LastModified>'
                           '2026-01-01T00:00:00.000Z</LastModified><ETag>%s'
                           '</ETag><Size>%d</Size></Contents>'
                           % (escape(k), escape(etag(objs[k])), len(objs[k])))
            xml.append('</ListBucketResult>')
            return self.send(200, ''.join(xml).encode(),
                             [('Content-Type', 'application/xml')])
        key = urllib.parse.unquote(parts[2] if len(parts) > 2 else '')
        if key not in objs:
            return self.send(404, b'<Error><Code>NoSuchKey</Code>'
                             b'<Message>no</Message></Error>')
        data = objs[key]
        if self.command == 'GET':
            gets[key] = gets.get(key, 0) + 1
        if 'change_after' in modes and \
                gets.get(key, 0) >= int(modes['change_after']):
            data = data[::-1]
        headers = [('ETag', etag(data))]
        rng = self.headers.get('Range')
        with open(sys.argv[2] + '.log', 'a') as log:
            log.write('%s %s\n' % (key, rng or '-'))
        if rng and data and 'ignore_range' not in modes:
            first, last = rng[len('bytes='):].split('-')
            first = int(first)
            if first >= len(data):
                return self.send(416, b'', [('Content-Range',
                                             'bytes */%d' % len(data))])
            if 'fail_from' in modes and first >= int(modes['fail_from']):
                return self.send(503, b'<Error><Code>SlowDown</Code>'
                                 b'<Message>later</Message></Error>')
            last = min(int(last), len(data) - 1) if last else len(data) - 1
            headers.append(('Content-Range',
                            'bytes %d-%d/%d' % (first, last, len(data))))
            if 'endless' in modes:
                return self.endless(headers, data[first:last + 1])
            return self.send(206, data[first:last + 1], headers)
        return self.send(200, data, headers)

    def endless(self, headers, body):
        self.send_response(206)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()
        try:
            self.wfile.write(b'%x\r\n%s\r\n' % (len(body), body))
            while True:
                self.wfile.write(b'10000\r\n' + b'x' * 0x10000 + b'\r\n')
        except OSError:
            pass
        self.close_connection = True

    do_HEAD = do_GET


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

    def process_request(self, request, client_address):
        connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request, client_address):
        pass  # clients that hang up (on purpose) are no news


server = Server(('127.0.0.1', 0), Handler)
with open(sys.argv[2] + '.tmp', 'w') as f:
    f.write(str(server.server_address[1]))
os.rename(sys.argv[2] + '.tmp', sys.argv[2])
server.serve_forever()
