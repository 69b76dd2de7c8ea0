"""Run moto's server (the same app ``moto_server`` serves) one request at a time.

``moto_server`` answers each request on its own thread, and moto evaluates a
conditional write as "read the item, test the condition, write the item" without a
lock, so two racing requests can both pass a condition that real DynamoDB would let
only one of them pass. The Store relies on DynamoDB's guarantee, and its contention
cases race on purpose, so this launcher wraps moto's WSGI application in a lock:
requests still arrive concurrently over keep-alive connections, but are processed one
after another, as atomically as the real service processes them.

Usage: ``python moto_serial.py -H 127.0.0.1 -p PORT`` (the options ``moto_server``
takes for host and port).
"""

import argparse
import threading
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication
from moto.moto_server.werkzeug_app import MotoRequestHandler
from moto.moto_server.werkzeug_app import create_backend_app
from werkzeug.serving import run_simple

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def serialised(app: WsgiApp) -> WsgiApp:
    """``app``, with every request handled (body included) under one lock."""
    lock = threading.Lock()

    def handle(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with lock:
            result = app(environ, start_response)
            try:
                return [bytes(chunk) for chunk in result]
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()

    return handle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, required=True)
    args = parser.parse_args()
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(
        args.host,
        args.port,
        serialised(app),
        threaded=True,
        request_handler=MotoRequestHandler,
    )


if __name__ == "__main__":
    main()
