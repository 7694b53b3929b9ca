"""pytest plugin: sends the Midtrans Python client's gateway calls to the simulator.

Loaded with `-p paylink_simulator_redirect`; the simulator's base URL comes from
PAYLINK_SIMULATOR_URL. Every request the client makes through `requests` to a Midtrans API
host (sandbox or production) goes to that base URL with the same path and query; a request to
any other host is refused before it leaves the machine, so the suite never reaches the internet
with the keys written in its tests.
"""
import os
from urllib.parse import urlsplit, urlunsplit

import requests

GATEWAY_HOSTS = {
    'api.sandbox.midtrans.com',
    'app.sandbox.midtrans.com',
    'api.midtrans.com',
    'app.midtrans.com',
}

_base = urlsplit(os.environ['PAYLINK_SIMULATOR_URL'])
if _base.hostname not in ('127.0.0.1', 'localhost', '::1'):
    raise RuntimeError('PAYLINK_SIMULATOR_URL must be a loopback URL')

_original_request = requests.sessions.Session.request


def _redirected(url):
    parts = urlsplit(url)
    if parts.hostname in GATEWAY_HOSTS:
        return urlunsplit((_base.scheme, _base.netloc, parts.path, parts.query, parts.fragment))
    if parts.hostname == _base.hostname and parts.port == _base.port:
        return url
    raise requests.exceptions.ConnectionError(
        'refused by the simulator redirect: {0} is not a Midtrans API host'.format(parts.hostname))


def _request(self, method, url, *args, **kwargs):
    return _original_request(self, method, _redirected(url), *args, **kwargs)


requests.sessions.Session.request = _request
