"""Whether the Hugging Face Hub can be reached at all, found out in seconds.

On a network that cannot reach the Hub, huggingface_hub retries a failed connection for
about 25 s (1 + 2 + 4 + 8 + 8 s of back-off) before it gives up; :func:`hub_reachable`
looks the address up and opens one connection, within :data:`HUB_CONNECT_TIMEOUT_S`,
before any download (``model.hub_folder``). A Hub that answers, however slowly, keeps the
client's own read timeouts. Standard library and huggingface_hub's settings only.
"""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
from urllib.parse import urlsplit

__all__ = ["HUB_CONNECT_TIMEOUT_S", "hub_reachable"]

#: Seconds a look-up of the Hub's address plus a connection to it may take before the
#: Hub counts as unreachable (a working Hub's slow answers keep huggingface_hub's own
#: read timeouts).
HUB_CONNECT_TIMEOUT_S = 2.0


def hub_reachable(timeout_s: float = HUB_CONNECT_TIMEOUT_S) -> None:
    """Check that a TCP connection to the Hub opens within ``timeout_s``.

    The Hub is huggingface_hub's endpoint (``HF_ENDPOINT``, default huggingface.co), or
    the proxy the environment names for it (``HTTPS_PROXY`` and the like, as the client
    uses them). The address look-up runs in a thread of its own, since ``getaddrinfo``
    has no timeout; nothing is sent over the connection.

    Raises
    ------
    OSError
        If the address cannot be found or no connection opens within ``timeout_s``.
    """
    from huggingface_hub import constants

    url = urlsplit(constants.ENDPOINT)
    host, port = url.hostname or "", url.port or (443 if url.scheme == "https" else 80)
    proxy = urllib.request.getproxies().get(url.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        via = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        host, port = via.hostname or "", via.port or 80
    deadline = time.monotonic() + timeout_s
    found: dict[str, object] = {}

    def look_up() -> None:
        try:
            found["addresses"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            found["error"] = exc

    lookup = threading.Thread(target=look_up, daemon=True)
    lookup.start()
    lookup.join(timeout_s)
    if "addresses" not in found:
        why = found.get("error") or f"no address within {timeout_s:g} s"
        raise OSError(f"the Hub ({host}) could not be reached: {why}")
    error: object = f"no connection within {timeout_s:g} s"
    for family, kind, proto, _, address in found["addresses"]:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.settimeout(left)
                sock.connect(address)
            return
        except OSError as exc:
            error = exc
    raise OSError(f"the Hub ({host}:{port}) could not be reached: {error}")
