"""Shared plumbing of the test proxies (sig_proxy.py, fault_proxy.py).

A threaded HTTP/1.1 keep-alive reverse proxy that streams both ways: request
bodies (Content-Length only) are copied to the upstream in 1 MiB pieces and
responses are copied back the same way, so a 1 GiB object never sits in
memory. Subclasses decide per request what to do (check, refuse, mangle)
by overriding handle_request(). Python standard library only.
"""
import http.client
import http.server
import select
import socket
import sys
import traceback
import urllib.parse

CHUNK = 1 << 20

# Headers that describe one connection, not the message (RFC 9110 7.6.1),
# plus Expect: the proxy answers 100-continue itself.
HOP_BY_HOP = {
    'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer',
    'transfer-encoding', 'upgrade', 'expect',
}


class ClientGone(Exception):
    """The client closed its connection (or we reset it on purpose)."""


def s3_error_xml(code, message, request_id, extra=()):
    """An S3 error document; extra is (name, value) pairs added verbatim."""
    def esc(s):
        return (str(s).replace('&', '&amp;').replace('<', '&lt;')
                .replace('>', '&gt;'))
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<Error>',
             f'<Code>{esc(code)}</Code><Message>{esc(message)}</Message>']
    parts += [f'<{k}>{esc(v)}</{k}>' for k, v in extra]
    parts.append(f'<RequestId>{esc(request_id)}</RequestId>'
                 f'<HostId>ferry-test</HostId></Error>\n')
    return ''.join(parts).encode()


class Upstream:
    """One keep-alive connection to the upstream server, per client
    connection (handler), reopened when the server closed it."""

    def __init__(self, url):
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname, u.port or 80
        self.conn = None

    def _usable(self):
        if self.conn is None or self.conn.sock is None:
            return False
        # An idle keep-alive socket that is readable was closed by the server.
        readable, _, _ = select.select([self.conn.sock], [], [], 0)
        return not readable

    def request(self, method, target, headers, body_len=0, body=None):
        """Sends the request; body is an iterable of bytes (body_len in
        total) or None. Returns the http.client.HTTPResponse (unread)."""
        sent_body = False
        for attempt in (0, 1):
            if not self._usable():
                self.close()
                self.conn = http.client.HTTPConnection(
                    self.host, self.port, timeout=300)
            try:
                self.conn.putrequest(method, target, skip_host=True,
                                     skip_accept_encoding=True)
                for name, value in headers:
                    self.conn.putheader(name, value)
                if body_len or method in ('PUT', 'POST'):
                    self.conn.putheader('Content-Length', str(body_len))
                self.conn.endheaders()
                if body is not None:
                    sent_body = True
                    for piece in body:
                        self.conn.send(piece)
                return self.conn.getresponse()
            except (ConnectionError, http.client.RemoteDisconnected):
                self.close()
                # Retry once on a fresh connection, unless the body (read
                # from the client) is gone already.
                if attempt or sent_body:
                    raise

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    server_version = 'ferry-test-proxy'

    # --- per-connection setup -------------------------------------------
    def setup(self):
        super().setup()
        self.upstream = Upstream(self.server.upstream_url)

    def finish(self):
        try:
            super().finish()
        finally:
            self.upstream.close()

    def log_message(self, fmt, *args):  # quiet unless --verbose
        if getattr(self.server, 'verbose', False):
            sys.stderr.write('%s %s\n' % (self.address_string(), fmt % args))

    def handle_expect_100(self):
        # Decide later (a refused request gets its error instead of 100).
        return True

    # --- dispatch -------------------------------------------------------
    def _dispatch(self):
        self.expect_continue = (
            self.headers.get('Expect', '').lower() == '100-continue')
        if 'chunked' in self.headers.get('Transfer-Encoding', '').lower():
            self.send_error_body(411, 'MissingContentLength',
                                 'chunked request bodies are not supported')
            return
        self.response_started = False
        try:
            self.handle_request()
        except (ClientGone, ConnectionError, socket.timeout, TimeoutError):
            self.close_connection = True
        except Exception:  # a bug or an upstream failure: say so, loudly
            traceback.print_exc()
            self.close_connection = True
            if not self.response_started:
                self.send_error_body(502, 'InternalError',
                                     'test proxy: ' + traceback.format_exc(
                                         limit=1).splitlines()[-1],
                                     drain=False)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_OPTIONS = \
        do_PATCH = _dispatch

    def handle_request(self):
        self.forward()

    # --- request side ---------------------------------------------------
    def body_length(self):
        return int(self.headers.get('Content-Length') or 0)

    def continue_body(self):
        """Tells a client that waits on Expect: 100-continue to send."""
        if self.expect_continue:
            self.expect_continue = False
            self.wfile.write(b'HTTP/1.1 100 Continue\r\n\r\n')

    def read_body(self):
        """Yields the request body in pieces, straight from the socket."""
        self.continue_body()
        left = self.body_length()
        while left > 0:
            piece = self.rfile.read(min(CHUNK, left))
            if not piece:
                raise ClientGone()
            left -= len(piece)
            yield piece

    def discard_body(self):
        """Drops an unread request body. A client that waits for 100-continue
        has not sent it: close after the answer. Otherwise read it all, as
        closing with unread data makes the kernel send an RST, which can
        destroy our answer before the client reads it."""
        if self.expect_continue:
            self.close_connection = True
        else:
            for _ in self.read_body():
                pass

    def forward_headers(self, drop=()):
        drop = set(drop) | HOP_BY_HOP | {'content-length'}
        return [(k, v) for k, v in self.headers.items()
                if k.lower() not in drop]

    def forward(self, drop_headers=(), body=None, body_len=None,
                upstream=None, extra_headers=()):
        """Sends this request upstream (streaming the client's body unless
        body is given; extra_headers added) and relays the answer. Returns
        the bytes of body sent to the client."""
        if body_len is None:
            body_len = self.body_length()
        if body is None and body_len:
            body = self.read_body()
        upstream = upstream or self.upstream
        resp = upstream.request(self.command, self.path,
                                self.forward_headers(drop_headers) +
                                list(extra_headers),
                                body_len, body)
        return self.relay(resp, upstream)

    # --- response side --------------------------------------------------
    def relay(self, resp, upstream):
        """Copies an upstream response to the client. Hooks for subclasses:
        edit_headers(status, headers) -> headers, and send_piece(sent, piece,
        chunked) (may sleep, or raise ClientGone)."""
        headers = [(k, v) for k, v in resp.getheaders()
                   if k.lower() not in HOP_BY_HOP]
        headers = self.edit_headers(resp.status, headers)
        has_body = not (self.command == 'HEAD' or resp.status in (204, 304)
                        or 100 <= resp.status < 200)
        length = resp.getheader('Content-Length')
        chunked = has_body and length is None
        self.response_started = True
        self.send_response_only(resp.status, resp.reason)
        for k, v in headers:
            self.send_header(k, v)
        if chunked:
            self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()
        sent = 0
        if has_body:
            while True:
                piece = resp.read(CHUNK) if length is not None else \
                    resp.read1(CHUNK)
                if not piece:
                    break
                self.send_piece(sent, piece, chunked)
                sent += len(piece)
            if chunked:
                self.wfile.write(b'0\r\n\r\n')
        else:
            resp.read()
        if resp.will_close:
            upstream.close()
        return sent

    def write_out(self, piece, chunked=False):
        try:
            if chunked:
                self.wfile.write(b'%x\r\n' % len(piece) + piece + b'\r\n')
            else:
                self.wfile.write(piece)
        except (ConnectionError, OSError) as e:
            raise ClientGone() from e

    def edit_headers(self, status, headers):
        return headers

    def send_piece(self, sent, piece, chunked):
        """Sends one piece of a relayed body; sent = bytes before it."""
        self.write_out(piece, chunked)

    def send_error_body(self, status, code, message, extra_headers=(),
                        xml_extra=(), request_id='FERRYTEST', drain=True):
        """Answers with an S3-style error (no body for HEAD); the request
        body, if any, is dropped."""
        if drain:
            self.discard_body()
        body = s3_error_xml(code, message, request_id, xml_extra)
        self.send_response_only(status)
        self.send_header('Content-Type', 'application/xml')
        self.send_header('x-amz-request-id', request_id)
        for k, v in extra_headers:
            self.send_header(k, v)
        self.send_header('Content-Length', str(len(body)))
        if self.close_connection:
            self.send_header('Connection', 'close')
        self.end_headers()
        if self.command != 'HEAD':
            self.write_out(body)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def serve(handler_class, port, **attrs):
    """Runs handler_class on 127.0.0.1:port forever; attrs are set on the
    server object (handlers see them as self.server.NAME)."""
    server = Server(('127.0.0.1', port), handler_class)
    for k, v in attrs.items():
        setattr(server, k, v)
    return server
