"""The schema, as a forward-only list of numbered migrations.

Each migration is SQL text with ``{s}`` standing for the quoted schema name, applied in
one transaction by ``PostgresStore.migrate``. Applied versions are recorded in
``psych_schema_version``; a migration is never edited once released, only followed by
a new one.

Layout decisions worth knowing before reading the SQL:

* ``psych_runs`` holds one mutable header row per Run. An append locks it (``FOR NO
  KEY UPDATE``) to serialise writers and to check the fence (holder + attempt count),
  but does not update it: the head is read from the newest batch row, which the
  primary key of ``psych_records`` finds with one index descent. Keeping a
  ``head_seq`` column instead would write a new version of the header row on every
  append (a K=10 Run left about 7 KB of dead header versions behind per Run until
  vacuum).
* ``psych_records`` is append-only and holds one row per *append*, not per record:
  ``(run_ref, first_seq, last_seq, body)``, where ``body`` is the batch's records
  compressed together (see ``rows.encode_batch``). The Journal writes a whole durable
  point at once, so a tool turn is two rows instead of five, and the repeated keys and
  ids inside a batch compress well: a K=10 Run stores under 10 KB. ``run_ref`` is the
  header's 8-byte surrogate id rather than the 30-odd byte run id. There is
  deliberately no foreign key: the append function already locks the header row.
* Hot-path writes are plpgsql functions, so each one is a single round trip that
  checks, writes and queues its NOTIFY in one transaction.
* ``psych_runs`` is created with ``fillfactor = 80`` and with no index on the column
  renew changes, so heartbeats stay HOT updates (no index maintenance).
* ``psych_memories`` (version 4) holds the facts a ``PostgresMemoryStore`` keeps, one
  row per fact. Tenant and end user are two columns, never joined into one key, and
  compare with the ``"C"`` collation, byte for byte, so ``Alice`` and ``alice`` stay
  two people whatever the database's default collation. ``position`` is an identity
  that grows with every insert and orders facts remembered in the same microsecond.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of the schema's history.

    Attributes:
        version: its position; versions start at 1 and have no gaps.
        name: a few words for the version table and for humans.
        sql: the statements, with ``{s}`` for the quoted schema name.
    """

    version: int
    name: str
    sql: str

    def render(self, schema: str) -> str:
        """The SQL with the schema filled in (the name was validated beforehand)."""
        return self.sql.replace("{s}", quote_ident(schema))


def quote_ident(name: str) -> str:
    """Quote an identifier for splicing into SQL."""
    return '"' + name.replace('"', '""') + '"'


_INITIAL = """
CREATE TABLE {s}.psych_runs (
    id bigint GENERATED ALWAYS AS IDENTITY,
    created_at timestamptz NOT NULL,
    deadline_at timestamptz NOT NULL,
    lease_expires_at timestamptz,
    runnable_at timestamptz,
    holder_lock bigint,
    attempt_count integer NOT NULL,
    delegation_depth integer NOT NULL,
    run_id text NOT NULL,
    state text NOT NULL,
    tenant text NOT NULL,
    scope json NOT NULL,
    version_hash text NOT NULL,
    lease_holder text,
    idempotency_key text,
    parent_run_id text,
    continues_run_id text,
    CONSTRAINT psych_runs_pkey PRIMARY KEY (run_id),
    CONSTRAINT psych_runs_id_key UNIQUE (id),
    CONSTRAINT psych_runs_admission_key UNIQUE (tenant, idempotency_key),
    CONSTRAINT psych_runs_state_check
        CHECK (state IN ('runnable', 'running', 'suspended', 'nested', 'settled'))
) WITH (fillfactor = 80);

COMMENT ON COLUMN {s}.psych_runs.holder_lock IS
    'Advisory-lock key held by the claiming process for as long as it lives; when no '
    'session holds it any more, the Run is claimable before its lease expires.';

CREATE INDEX psych_runs_claim_idx ON {s}.psych_runs
    ((coalesce(runnable_at, created_at)), created_at, run_id)
    WHERE state IN ('runnable', 'running');

CREATE INDEX psych_runs_deadline_idx ON {s}.psych_runs (deadline_at, run_id)
    WHERE state <> 'settled';

CREATE TABLE {s}.psych_records (
    run_ref bigint NOT NULL,
    first_seq integer NOT NULL,
    last_seq integer NOT NULL,
    body bytea NOT NULL,
    CONSTRAINT psych_records_pkey PRIMARY KEY (run_ref, first_seq),
    CONSTRAINT psych_records_range_check CHECK (last_seq >= first_seq)
);

COMMENT ON COLUMN {s}.psych_records.body IS
    'The records first_seq..last_seq of one append, zlib-compressed, one record per line '
    'as "type<TAB>json" with type, run_id and seq cut from the JSON (see rows.py).';

CREATE TABLE {s}.psych_versions (
    hash text NOT NULL,
    published_at timestamptz NOT NULL,
    document json NOT NULL,
    CONSTRAINT psych_versions_pkey PRIMARY KEY (hash)
);

CREATE VIEW {s}.psych_held_locks AS
    SELECT (l.classid::bigint << 32) | l.objid::bigint AS lock_key
    FROM pg_catalog.pg_locks AS l
    WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted;

CREATE FUNCTION {s}.psych_append(
    p_run_id text, p_first_seq integer, p_last_seq integer, p_body bytea,
    p_holder text, p_attempt integer, p_channel text
) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
    v_ref bigint;
    v_head integer;
    v_holder text;
    v_attempt integer;
BEGIN
    -- The row lock serialises appends to one Run without writing a new row version.
    SELECT id, lease_holder, attempt_count
        INTO v_ref, v_holder, v_attempt
        FROM {s}.psych_runs WHERE run_id = p_run_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN 1;
    END IF;
    IF p_holder IS NOT NULL
            AND (v_holder IS DISTINCT FROM p_holder OR v_attempt <> p_attempt) THEN
        RETURN 2;
    END IF;
    -- One descent of the primary-key index, to the newest batch of this Run.
    SELECT last_seq INTO v_head FROM {s}.psych_records
        WHERE run_ref = v_ref ORDER BY first_seq DESC LIMIT 1;
    IF coalesce(v_head, 0) <> p_first_seq - 1 THEN
        RETURN 3;
    END IF;
    INSERT INTO {s}.psych_records (run_ref, first_seq, last_seq, body)
        VALUES (v_ref, p_first_seq, p_last_seq, p_body);
    IF p_channel IS NOT NULL THEN
        PERFORM pg_notify(p_channel, p_run_id);
    END IF;
    RETURN 0;
END
$fn$;

CREATE FUNCTION {s}.psych_create_run(
    p_run_id text, p_tenant text, p_scope json, p_version_hash text, p_state text,
    p_created_at timestamptz, p_deadline_at timestamptz, p_lease_holder text,
    p_lease_expires_at timestamptz, p_idempotency_key text, p_attempt_count integer,
    p_runnable_at timestamptz, p_parent_run_id text, p_delegation_depth integer,
    p_continues_run_id text, p_body bytea, p_channel text, p_work text
) RETURNS SETOF {s}.psych_runs LANGUAGE plpgsql AS $fn$
DECLARE
    v_ref bigint;
BEGIN
    INSERT INTO {s}.psych_runs (
        created_at, deadline_at, lease_expires_at, runnable_at, attempt_count,
        delegation_depth, run_id, state, tenant, scope, version_hash,
        lease_holder, idempotency_key, parent_run_id, continues_run_id
    ) VALUES (
        p_created_at, p_deadline_at, p_lease_expires_at, p_runnable_at, p_attempt_count,
        p_delegation_depth, p_run_id, p_state, p_tenant, p_scope, p_version_hash,
        p_lease_holder, p_idempotency_key, p_parent_run_id, p_continues_run_id
    ) ON CONFLICT DO NOTHING
    RETURNING id INTO v_ref;
    IF v_ref IS NULL THEN
        -- A duplicate: the idempotency key wins over the run id, as in every store.
        IF p_idempotency_key IS NOT NULL THEN
            RETURN QUERY SELECT * FROM {s}.psych_runs
                WHERE tenant = p_tenant AND idempotency_key = p_idempotency_key;
            IF FOUND THEN
                RETURN;
            END IF;
        END IF;
        RETURN QUERY SELECT * FROM {s}.psych_runs WHERE run_id = p_run_id;
        RETURN;
    END IF;
    INSERT INTO {s}.psych_records (run_ref, first_seq, last_seq, body)
        VALUES (v_ref, 1, 1, p_body);
    IF p_channel IS NOT NULL THEN
        PERFORM pg_notify(p_channel, p_run_id);
        IF p_state = 'runnable' THEN
            PERFORM pg_notify(p_channel, p_work);
        END IF;
    END IF;
    RETURN;
END
$fn$;

CREATE FUNCTION {s}.psych_release(
    p_run_id text, p_worker text, p_state text, p_runnable_at timestamptz,
    p_deadline_at timestamptz, p_channel text, p_work text
) RETURNS boolean LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE {s}.psych_runs SET
        state = p_state,
        lease_holder = NULL,
        lease_expires_at = NULL,
        holder_lock = NULL,
        runnable_at = p_runnable_at,
        deadline_at = coalesce(p_deadline_at, deadline_at)
    WHERE run_id = p_run_id AND lease_holder = p_worker;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF p_channel IS NOT NULL THEN
        PERFORM pg_notify(p_channel, p_run_id);
        IF p_state = 'runnable' THEN
            PERFORM pg_notify(p_channel, p_work);
        END IF;
    END IF;
    RETURN true;
END
$fn$;

CREATE FUNCTION {s}.psych_settle_inline(p_run_id text, p_channel text)
RETURNS boolean LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE {s}.psych_runs SET state = 'settled'
        WHERE run_id = p_run_id AND state = 'nested' AND lease_holder IS NULL;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF p_channel IS NOT NULL THEN
        PERFORM pg_notify(p_channel, p_run_id);
    END IF;
    RETURN true;
END
$fn$;

CREATE FUNCTION {s}.psych_set_runnable_at(
    p_run_id text, p_runnable_at timestamptz, p_channel text, p_work text
) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
    v_state text;
BEGIN
    UPDATE {s}.psych_runs SET
        runnable_at = p_runnable_at,
        state = CASE WHEN p_runnable_at IS NULL AND state = 'suspended'
                     THEN 'runnable' ELSE state END
    WHERE run_id = p_run_id AND state <> 'settled'
    RETURNING state INTO v_state;
    IF NOT FOUND THEN
        -- Unknown (1: the caller raises) or settled (0: left exactly as it is).
        IF EXISTS (SELECT 1 FROM {s}.psych_runs WHERE run_id = p_run_id) THEN
            RETURN 0;
        END IF;
        RETURN 1;
    END IF;
    IF v_state = 'runnable' AND p_runnable_at IS NULL THEN
        IF p_channel IS NOT NULL THEN
            PERFORM pg_notify(p_channel, p_work);
        END IF;
        RETURN 2;
    END IF;
    RETURN 0;
END
$fn$;
"""

_RELEASE_BY_ATTEMPT = """
DROP FUNCTION {s}.psych_release(text, text, text, timestamptz, timestamptz, text, text);

CREATE FUNCTION {s}.psych_release(
    p_run_id text, p_worker text, p_state text, p_runnable_at timestamptz,
    p_deadline_at timestamptz, p_channel text, p_work text, p_attempt integer
) RETURNS boolean LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE {s}.psych_runs SET
        state = p_state,
        lease_holder = NULL,
        lease_expires_at = NULL,
        holder_lock = NULL,
        runnable_at = p_runnable_at,
        deadline_at = coalesce(p_deadline_at, deadline_at)
    WHERE run_id = p_run_id AND lease_holder = p_worker
        AND (p_attempt IS NULL OR attempt_count = p_attempt);
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF p_channel IS NOT NULL THEN
        PERFORM pg_notify(p_channel, p_run_id);
        IF p_state = 'runnable' THEN
            PERFORM pg_notify(p_channel, p_work);
        END IF;
    END IF;
    RETURN true;
END
$fn$;
"""

_VERSION_GRANTS = """
CREATE TABLE {s}.psych_version_grants (
    hash text NOT NULL,
    grantee text NOT NULL,
    published_at timestamptz NOT NULL,
    CONSTRAINT psych_version_grants_pkey PRIMARY KEY (hash, grantee)
);

COMMENT ON TABLE {s}.psych_version_grants IS
    'Who may see each Version: its owning tenants, and the empty grantee for a Version '
    'shared with every tenant. published_at is that grantee''s first publication.';

-- Versions published before grants existed belonged to nobody in particular: share
-- them, as they effectively were, so older Runs and dispatches keep working.
INSERT INTO {s}.psych_version_grants (hash, grantee, published_at)
    SELECT hash, '', published_at FROM {s}.psych_versions
    ON CONFLICT DO NOTHING;
"""

_MEMORIES = """
CREATE TABLE {s}.psych_memories (
    position bigint GENERATED ALWAYS AS IDENTITY,
    created_at timestamptz NOT NULL,
    tenant text COLLATE "C" NOT NULL,
    end_user_id text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    content text NOT NULL,
    CONSTRAINT psych_memories_pkey PRIMARY KEY (id)
);

COMMENT ON TABLE {s}.psych_memories IS
    'Facts kept about one end user of one tenant (MemoryStore); erase deletes the rows.';

-- Recall reads one person's facts in time order, newest first when limited.
CREATE INDEX psych_memories_key_idx ON {s}.psych_memories
    (tenant, end_user_id, created_at, position);
"""

_SETTLED_INDEX = """
-- Retention lists one tenant's settled Runs oldest first, page by page.
CREATE INDEX psych_runs_settled_idx ON {s}.psych_runs
    (tenant, created_at, run_id COLLATE "C") WHERE state = 'settled';
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial schema", _INITIAL),
    Migration(2, "release fenced by attempt count", _RELEASE_BY_ATTEMPT),
    Migration(3, "versions granted to tenants", _VERSION_GRANTS),
    Migration(4, "memories of end users", _MEMORIES),
    Migration(5, "settled Runs listed for retention", _SETTLED_INDEX),
)
"""Every migration this release knows, in order."""

LATEST_VERSION = MIGRATIONS[-1].version
"""The schema version this release reads and writes."""

VERSION_TABLE = "psych_schema_version"
"""Where applied migrations are recorded, inside the store's schema."""


def version_table_sql(schema: str) -> str:
    """DDL for the version table itself, which must exist before any migration runs."""
    return (
        f"CREATE TABLE IF NOT EXISTS {quote_ident(schema)}.{VERSION_TABLE} ("
        " version integer PRIMARY KEY,"
        " name text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now())"
    )


__all__ = [
    "LATEST_VERSION",
    "MIGRATIONS",
    "VERSION_TABLE",
    "Migration",
    "quote_ident",
    "version_table_sql",
]
