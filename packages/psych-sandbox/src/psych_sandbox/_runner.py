"""The program's side of a sandbox: runs one program and reports it as JSON lines.

The host starts a fresh interpreter as ``python -I -S -c <this file's text> IN OUT``,
with ``IN`` and ``OUT`` the descriptors of two pipes. Nothing here writes to stdout or
stderr: those belong to the program. The protocol, one JSON object per line:

- host to program, first: ``{"source": ..., "bindings": [...]}``;
- program to host, a tool call: ``{"call": name, "id": n, "arguments": {...}}``, answered
  ``{"id": n, "ok": true, "value": ...}`` or ``{"id": n, "ok": false, "kind": ...,
  "message": ...}``;
- program to host, last: ``{"done": true, "status": "ok", "value": ...}`` or
  ``{"done": true, "status": "error", "exception": ..., "errno": ..., "traceback": ...,
  "message": ...}``.

It uses the standard library only and stays valid Python 3.8, because the sandbox may
run an interpreter other than the host's (one the unprivileged user can read).
This module is never imported by the host; it is read as text.
"""

from __future__ import annotations

import os
import sys


def _main() -> None:
    import ast
    import builtins
    import contextlib
    import json
    import linecache
    import signal
    import traceback

    me = os.getpid()
    read_fd, write_fd = int(sys.argv[1]), int(sys.argv[2])
    os.set_inheritable(read_fd, False)
    os.set_inheritable(write_fd, False)
    # A file grown past RLIMIT_FSIZE raises EFBIG instead of killing the process.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    inbox = os.fdopen(read_fd, "r", encoding="utf-8")
    outbox = os.fdopen(write_fd, "w", encoding="utf-8")

    def send(message: dict[str, object]) -> None:
        outbox.write(json.dumps(message, allow_nan=False) + "\n")
        outbox.flush()

    def finish(message: dict[str, object]) -> None:
        if os.getpid() != me:  # a forked child of the program: say nothing
            os._exit(0)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # the program may have closed it
                stream.flush()
        send(message)
        os._exit(0)

    class ToolError(Exception):
        """A tool call the host refused; ``kind`` says why."""

        def __init__(self, kind: str, message: str) -> None:
            super().__init__(message)
            self.kind = kind
            self.message = message

        def __str__(self) -> str:
            return f"{self.kind}: {self.message}"

    counter = [0]

    def call(name: str, arguments: dict[str, object]) -> object:
        if os.getpid() != me:
            raise RuntimeError("tools can be called only from the program's own process")
        counter[0] += 1
        try:
            line = json.dumps(
                {"call": name, "id": counter[0], "arguments": arguments}, allow_nan=False
            )
        except (TypeError, ValueError) as error:
            raise TypeError(f"tool arguments must be JSON: {error}") from None
        outbox.write(line + "\n")
        outbox.flush()
        reply = inbox.readline()
        if not reply:
            raise RuntimeError("the host closed the tool channel")
        answer = json.loads(reply)
        if answer.get("ok"):
            return answer.get("value")
        raise ToolError(str(answer.get("kind", "refused")), str(answer.get("message", "")))

    class Tools:
        """The host's tools: ``tools.<name>(**arguments)`` or ``tools.call(name, ...)``."""

        def __init__(self, names: list[str]) -> None:
            self._names = tuple(names)
            self.ToolError = ToolError

        def call(self, name: str, **arguments: object) -> object:
            return call(name, arguments)

        def __getattr__(self, name: str) -> object:
            if name.startswith("_") or name not in self._names:
                raise AttributeError(
                    "no tool named {!r}; available: {}".format(
                        name, ", ".join(self._names) or "none"
                    )
                )

            def bound(**arguments: object) -> object:
                return call(name, arguments)

            bound.__name__ = name
            return bound

        def __dir__(self) -> list[str]:
            return [*sorted(self._names), "ToolError", "call"]

    first = json.loads(inbox.readline())
    source = first["source"]
    linecache.cache["<program>"] = (len(source), None, source.splitlines(True), "<program>")

    def failure(error: BaseException) -> dict[str, object]:
        tb = error.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "<program>":
            tb = tb.tb_next
        try:
            if isinstance(error, SyntaxError):
                text = "".join(traceback.format_exception_only(type(error), error))
            else:
                text = "".join(traceback.format_exception(type(error), error, tb))
        except Exception:
            text = f"{type(error).__name__}: {error}\n"
        return {
            "done": True,
            "status": "error",
            "exception": type(error).__name__,
            "errno": getattr(error, "errno", None),
            "traceback": text,
            "message": f"{type(error).__name__}: {error}",
        }

    namespace = {
        "__name__": "__main__",
        "__builtins__": builtins,
        "tools": Tools(first.get("bindings", [])),
    }
    try:
        tree = ast.parse(source, "<program>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = compile(ast.Expression(tree.body.pop().value), "<program>", "eval")
        exec(compile(tree, "<program>", "exec"), namespace)
        value = eval(last, namespace) if last is not None else None
        if "result" in namespace:
            value = namespace["result"]
    except SystemExit as stop:
        if stop.code in (None, 0):
            finish({"done": True, "status": "ok", "value": None})
        finish(
            {
                "done": True,
                "status": "error",
                "exception": "SystemExit",
                "errno": None,
                "traceback": None,
                "message": f"the program exited with status {stop.code!r}",
            }
        )
    except BaseException as error:
        finish(failure(error))
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as error:
        finish(
            {
                "done": True,
                "status": "error",
                "exception": "NotJson",
                "errno": None,
                "traceback": None,
                "message": f"the program's value is not JSON ({type(error).__name__}: "
                f"{error}); return dicts, lists, strings, numbers, booleans or None",
            }
        )
    finish({"done": True, "status": "ok", "value": value})


if __name__ == "__main__":
    _main()
