"""Preset dictionaries for compressing stored record batches.

One append is compressed on its own, and an append is small: two or three records,
a few hundred bytes. Deflate finds little to reuse in so short an input, so most of
what a batch repeats from every other batch (field names, record types, the JSON
around them) used to be stored again in full in every row. A preset dictionary gives
the compressor that shared text up front: both sides prime their window with it, and
a batch then refers back into the dictionary instead of spelling the text out.

The text below is a sample of the stored line format (``type<TAB>json`` with the
envelope cut, see ``_rows``): every record type with the fields it usually carries,
generic values only. Deflate codes a reference more cheaply the closer its target is,
so the most common record types sit at the end.

A dictionary can never change once rows were written with it: zlib names the
dictionary a stream needs by its Adler-32 checksum in the stream's header, and reading
looks the dictionary up by that checksum. A better dictionary is added beside this one
under its own checksum (and new batches written with it); rows written without any
dictionary, before these existed, have no dictionary flag and read as before.
"""

import zlib

_FRAGMENTS = (
    # Rarer records first: questions, approvals, queues, subagents, tasks, components.
    'component_shown\t{"component":{"kind":"card","title":"","data":{}}}',
    'task_list_updated\t{"tasks":[{"title":"","status":"pending","note":""}]}',
    'subagent_messaged\t{"child_run_id":"run_","name":"","call_id":"call_",'
    '"entry_id":"","message":""}',
    'subagent_spawned\t{"child_run_id":"run_","name":"","call_id":"call_",'
    '"child_version_hash":"sha256:","purpose":"","task":"","deliverable":"",'
    '"tools":[],"model":"","delegation_depth":1,"background":false}',
    'subagent_finished\t{"child_run_id":"run_","name":"","state":"completed",'
    '"output":{"text":""},"usage":{},"unreported_usage_calls":0,"unpriced_model_calls":0,'
    '"runs":1,"run_seconds":0.0}',
    'compaction_applied\t{"reason":"threshold","replaced_from_seq":1,"replaced_to_seq":1,'
    '"summary":"","model":""}',
    'queue_cancelled\t{"entry_id":""}',
    'queue_consumed\t{"entry_id":""}',
    'queue_enqueued\t{"queue":"steer","entry_id":"","payload":{"message":""}}',
    'abort_requested\t{"reason":"","requested_by":""}',
    'resumed\t{"payload":{},"approved":true,"resumed_by":""}',
    'suspended\t{"reason":"approval","payload_schema":{"type":"object","properties":{}},'
    '"expires_at":"","pending_call_id":"call_","question":"","questions":[{"question":"",'
    '"header":"","options":[{"label":"","description":""}],"multi_select":false}]}',
    'step_completed\t{"step_id":"","output":{},"child_run_id":"run_","skipped":false,'
    '"will_retry":false,"retry_at":null}',
    'step_started\t{"step_id":"","name":"","kind":"tool","attempt_number":1,"input":{},'
    '"path":[],"parent_step_id":"","iteration":0,"replayed_from":"run_"}',
    'model_call_failed\t{"turn":1,"model":"","failure":{"kind":"","message":"",'
    '"traceback":null,"transient":true},"will_retry":true}',
    'run_settled\t{"state":"failed","failure":{"kind":"","message":"","traceback":null,'
    '"transient":false,"traceback_is_for_the_model":false},"orphaned_attempt_id":"att_"}',
    # The records of every Run, the most common last.
    'run_admitted\t{"at":"2026-01-01T00:00:00.000000Z","scope":{"tenant":"default"},'
    '"version_hash":"sha256:","input":{"message":""},"idempotency_key":"",'
    '"deadline_at":"2026-01-01T00:00:00.000000Z","parent_run_id":"run_",'
    '"delegation_depth":1,"continues_run_id":"run_","trace_context":{"traceparent":"00-"}}',
    'attempt_started\t{"at":"2026-01-01T00:00:00.000000Z","scope":{"tenant":"default"},'
    '"attempt_id":"att_","worker_id":"wrk_","attempt_number":1,'
    '"reclaimed_expired_lease":true}',
    'run_settled\t{"at":"2026-01-01T00:00:00.000000Z","scope":{"tenant":"default"},'
    '"attempt_id":"att_","state":"completed","output":{"text":""}}',
    'tool_call_finished\t{"at":"2026-01-01T00:00:00.000000Z","scope":{"tenant":"default"},'
    '"attempt_id":"att_","call_id":"call_","outcome":"error","failure":{"kind":"",'
    '"message":""},"duration_seconds":0.0,"result_bytes":0,"preview":""}',
    'model_call_finished\t{"at":"2026-01-01T00:00:00.000000Z","scope":{"tenant":"default"},'
    '"attempt_id":"att_","turn":1,"model":"","usage":{"input":0,"output":0,"cache_read":0,'
    '"cache_write":0,"reasoning":0},"usage_reported":true,"cost":{"amount":"0.0",'
    '"currency":"USD","model":"","source":"price_table"},"timings":{"queue_wait_seconds":0.0,'
    '"time_to_first_token_seconds":0.0,"stream_duration_seconds":0.0},'
    '"finish_reason":"stop","text":""}',
    'model_call_finished\t{"at":"2026-01-01T00:00:00.000000Z","scope":{"tenant":"default"},'
    '"attempt_id":"att_","turn":1,"model":"","usage":{},"usage_reported":false,"cost":null,'
    '"timings":{"queue_wait_seconds":0.0,"time_to_first_token_seconds":0.0,'
    '"stream_duration_seconds":0.0},"finish_reason":"tool_calls","tool_calls":["call_"]}',
    'tool_call_started\t{"at":"2026-01-01T00:00:00.000000Z","scope":{"tenant":"default"},'
    '"attempt_id":"att_","call_id":"call_","tool":"","arguments":{},"turn":1}',
    'tool_call_finished\t{"at":"2026-01-01T00:00:00.000000Z","scope":{"tenant":"default"},'
    '"attempt_id":"att_","call_id":"call_","outcome":"ok","result":{},"duration_seconds":0.0',
    'turn_started\t{"at":"2026-01-01T00:00:00.000000Z","scope":{"tenant":"default"},'
    '"attempt_id":"att_","turn":1}',
    'model_call_started\t{"at":"2026-01-01T00:00:00.000000Z","scope":{"tenant":"default"},'
    '"attempt_id":"att_","turn":1,"model":"","tool_names":[],"system_prompt":""}',
)

RECORDS_V1 = "\n".join(_FRAGMENTS).encode()
"""The first preset dictionary (its Adler-32 is pinned by a test: never edit it)."""

CURRENT = RECORDS_V1
"""The dictionary new batches are written with."""

BY_ID: dict[int, bytes] = {zlib.adler32(RECORDS_V1): RECORDS_V1}
"""Every dictionary a stored batch may name, by the Adler-32 zlib records for it."""

__all__ = ["BY_ID", "CURRENT", "RECORDS_V1"]
