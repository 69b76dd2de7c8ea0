"""A TCP proxy on 127.0.0.1 that cuts the first event stream it relays, after its first event.

It stands between a client and a live peer: every byte is relayed both ways until a
response with ``Content-Type: text/event-stream`` has carried one whole event; then
that connection is dropped on both sides (the peer stays up), ``cut`` is set, and
``on_cut`` runs. Later connections, and later streams, are relayed untouched, unless
``die_on_cut`` makes the proxy stop listening then, as a peer that died would.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from collections.abc import Callable

_EVENT_END = (b"\r\n\r\n", b"\n\n")


class CuttingProxy:
    """Relays ``127.0.0.1:<port>`` to the upstream port; see the module docstring."""

    def __init__(
        self,
        upstream_port: int,
        on_cut: Callable[[], None] = lambda: None,
        *,
        die_on_cut: bool = False,
    ) -> None:
        self.upstream_port = upstream_port
        self.on_cut = on_cut
        self.die_on_cut = die_on_cut
        self.cut = asyncio.Event()
        self.connections = 0
        self._server: asyncio.Server | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, watch: bool
    ) -> None:
        streaming, body = False, b""
        try:
            while chunk := await reader.read(65536):
                if watch and not self.cut.is_set():
                    if not streaming and b"text/event-stream" in chunk.lower():
                        streaming = True
                        chunk_body = chunk.split(b"\r\n\r\n", 1)
                        body = chunk_body[1] if len(chunk_body) == 2 else b""
                    elif streaming:
                        body += chunk
                    if streaming and b"data:" in body:
                        after = body[body.index(b"data:") :]
                        if any(end in after for end in _EVENT_END):
                            writer.write(chunk)  # the first event reaches the client
                            await writer.drain()
                            self.cut.set()
                            self.on_cut()
                            if self.die_on_cut and self._server is not None:
                                self._server.close()  # from now on, connections are refused
                            raise ConnectionAbortedError("cut")
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.transport.abort()

    async def _relay(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            client_w.transport.abort()
            return
        upward = asyncio.create_task(self._pipe(client_r, up_w, watch=False))
        downward = asyncio.create_task(self._pipe(up_r, client_w, watch=True))
        await asyncio.wait({upward, downward}, return_when=asyncio.FIRST_COMPLETED)
        for task in (upward, downward):
            task.cancel()
        client_w.transport.abort()
        up_w.transport.abort()
        await asyncio.gather(upward, downward, return_exceptions=True)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator["CuttingProxy"]:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        try:
            yield self
        finally:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
