#!/usr/bin/python3
"""A tiny S3 stand-in for tests that need listings no real server makes:
keys with '..', '//', a leading '/', folder markers, keys that clash.

  fake_s3.py OBJECTS.json PORTFILE

OBJECTS.json maps each key to its content (a string). Any bucket answers
ListObjectsV2 (?list-type=2&prefix=...) with those keys and GET/HEAD of a key
with its bytes (Range honoured). The port it listens on is written to
PORTFILE; it serves until killed. Standard library only.
"""
import hashlib
import http.server
import json
import os
import socketserver
import sys
import urllib.parse
from xml.sax.saxutils import escape

objs = {k: v.encode() for k, v in json.load(open(sys.argv[1])).items()}


def etag(data):
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
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)

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
        headers = [('ETag', etag(data))]
        rng = self.headers.get('Range')
        if rng and data:
            first, last = rng[len('bytes='):].split('-')
            first = int(first)
            last = min(int(last), len(data) - 1) if last else len(data) - 1
            headers.append(('Content-Range',
                            'bytes %d-%d/%d' % (first, last, len(data))))
            return self.send(206, data[first:last + 1], headers)
        return self.send(200, data, headers)

    do_HEAD = do_GET


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


server = Server(('127.0.0.1', 0), Handler)
with open(sys.argv[2] + '.tmp', 'w') as f:
    f.write(str(server.server_address[1]))
os.rename(sys.argv[2] + '.tmp', sys.argv[2])
server.serve_forever()
