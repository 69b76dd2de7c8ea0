"""The web app: it publishes, dispatches and reads Runs, and never executes one.

Run it with ``uvicorn app:app``, and the Worker beside it with ``python worker.py``.

Routes:
    POST /runs                 start a Run: ``{"message": "..."}`` -> ``{"run_id": ...}``
    GET  /runs/{run_id}        where the Run stands
    GET  /runs/{run_id}/events the Run's records as server-sent events, until it settles
"""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psych_runtime
from fastapi import FastAPI, Header, HTTPException, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from agent import STORE_URL, TENANT, spec


class StartRun(BaseModel):
    """The body of ``POST /runs``."""

    message: str = Field(min_length=1, max_length=10_000)


def create_app(store: psych_runtime.Store | None = None) -> FastAPI:
    """Build the app on ``store``, or (None) on the store at ``STORE_URL``.

    A store passed in stays the caller's to close; one opened from the URL is opened
    and migrated when the app starts and closed when it stops.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if store is not None:
            app.state.store = store
            yield
            return
        opened = await psych_runtime.open_store(STORE_URL, migrate=True)
        app.state.store = opened
        try:
            yield
        finally:
            await opened.close()

    app = FastAPI(title="{{project_name}}", lifespan=lifespan)
    if store is not None:
        app.state.store = store  # usable before the lifespan runs, as in tests

    @app.post("/runs", status_code=202)
    async def start_run(body: StartRun, request: Request) -> dict[str, str]:
        runs: psych_runtime.Store = request.app.state.store
        version = await psych_runtime.publish(runs, spec, scope=TENANT)
        dispatched = await psych_runtime.dispatch(runs, version, body.message, scope=TENANT)
        return {"run_id": dispatched.run_id}

    @app.get("/runs/{run_id}")
    async def run_status(run_id: str, request: Request) -> dict[str, Any]:
        runs: psych_runtime.Store = request.app.state.store
        try:
            found = await psych_runtime.status(runs, psych_runtime.RunId(run_id), scope=TENANT)
        except (psych_runtime.RunNotFound, psych_runtime.AccessDenied):
            raise HTTPException(status_code=404, detail="no such run") from None
        return found.model_dump(mode="json")

    @app.get("/runs/{run_id}/events")
    async def run_events(
        run_id: str,
        request: Request,
        last_event_id: int = Header(default=0, alias="Last-Event-ID"),
    ) -> StreamingResponse:
        runs: psych_runtime.Store = request.app.state.store
        target = psych_runtime.RunId(run_id)
        try:
            await psych_runtime.status(runs, target, scope=TENANT)
        except (psych_runtime.RunNotFound, psych_runtime.AccessDenied):
            raise HTTPException(status_code=404, detail="no such run") from None

        async def events() -> AsyncIterator[str]:
            # A browser that reconnects sends the last id it saw; the log resumes there.
            async for record in psych_runtime.stream(
                runs, target, after=last_event_id, scope=TENANT
            ):
                data = json.dumps(record.model_dump(mode="json"))
                yield f"id: {record.seq}\nevent: {record.type}\ndata: {data}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return app


app = create_app()
