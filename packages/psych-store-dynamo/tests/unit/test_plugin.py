"""The entry point, both registered backends, and a plugin import that stays cheap."""

import subprocess
import sys
import textwrap
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator

import pytest

import psych_runtime
import psych_store_dynamo
from psych_contract.lifecycle import closing
from psych_contract.memory import check_bad_input_refused_offline
from psych_contract.plugin import check_entry_point
from psych_contract.plugin import check_memory_backend_beside_store
from psych_contract.plugin import modules_loaded_by
from psych_contract.plugin import plugin_alone
from psych_runtime.adapters import blob_store_backends
from psych_runtime.adapters import store_backends
from psych_store_dynamo import DynamoMemoryStore
from psych_store_dynamo import DynamoStore
from psych_store_dynamo import S3BlobStore
from psych_store_dynamo import plugin
from psych_store_dynamo._database import DynamoDatabase

DRIVER_MODULES = ("aioboto3", "aiobotocore", "botocore", "boto3", "aiohttp")


@pytest.fixture
def dynamo_plugin_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A plugin manager with autoload off and only this plugin, from its entry point.

    Autoload stays off so that a half-installed sibling adapter in the same environment
    cannot break these tests.
    """
    with plugin_alone(monkeypatch, "dynamo"):
        yield


def test_the_distribution_declares_the_entry_point() -> None:
    check_entry_point("dynamo", plugin, distribution="psych-store-dynamo")


@pytest.mark.usefixtures("dynamo_plugin_only")
def test_the_backends_claim_dynamodb_and_s3() -> None:
    store = store_backends()["dynamodb"]
    assert store.package == "psych-store-dynamo"
    assert store.schemes == ("dynamodb",)
    blobs = blob_store_backends()["s3"]
    assert blobs.package == "psych-store-dynamo"
    assert blobs.schemes == ("s3",)
    check_memory_backend_beside_store(
        "dynamodb", package="psych-store-dynamo", open=plugin.open_dynamo_memory_store
    )


@pytest.mark.usefixtures("dynamo_plugin_only")
@pytest.mark.parametrize(
    ("open_backend", "kind"),
    [
        pytest.param(psych_runtime.open_store, DynamoStore, id="store"),
        pytest.param(psych_runtime.open_memory_store, DynamoMemoryStore, id="memory"),
    ],
)
async def test_open_returns_a_dynamo_backend_without_any_request(
    open_backend: Callable[..., Awaitable[object]], kind: type[DynamoDatabase]
) -> None:
    # Nothing listens on the endpoint: opening must not talk to it unless asked to.
    opened = await open_backend(
        "dynamodb://psych-runs?region=eu-west-1&endpoint_url=http://127.0.0.1:9",
        read_timeout=3,
    )
    assert isinstance(opened, kind)
    async with closing(opened):
        assert opened.table_name == "psych-runs"
        assert opened.settings.aws.region == "eu-west-1"
        assert opened.settings.aws.read_timeout == 3.0


@pytest.mark.usefixtures("dynamo_plugin_only")
async def test_open_memory_store_refuses_bad_options_and_urls() -> None:
    with pytest.raises(TypeError, match="no option 'pool_size'"):
        await psych_runtime.open_memory_store("dynamodb://psych", pool_size=3)
    with pytest.raises(psych_runtime.adapters.InvalidStoreUrl):
        await psych_runtime.open_memory_store("dynamodb://x")


async def test_bad_input_is_refused_before_any_request() -> None:
    # Nothing listens on the endpoint: a check that reached it would fail otherwise.
    memory = DynamoMemoryStore(
        "dynamodb://psych?region=us-east-1&endpoint_url=http://127.0.0.1:9", max_attempts=1
    )
    await check_bad_input_refused_offline(memory, ("", "bad \ud800 id"))


async def test_a_closed_memory_store_refuses_further_use() -> None:
    memory = DynamoMemoryStore("dynamodb://psych?region=us-east-1")
    await memory.close()
    await memory.close()  # idempotent
    with pytest.raises(psych_runtime.StoreError, match=r"memory store .* is closed"):
        await memory.recall(psych_runtime.adapters.MemoryKey(tenant="t", end_user_id="u"))


@pytest.mark.usefixtures("dynamo_plugin_only")
async def test_open_blob_store_returns_an_s3_blob_store() -> None:
    async with closing(
        await psych_runtime.open_blob_store("s3://my-bucket/psych?region=eu-west-1", max_attempts=2)
    ) as blobs:
        assert isinstance(blobs, S3BlobStore)
        assert blobs.settings.bucket == "my-bucket"
        assert blobs.settings.prefix == "psych"
        assert blobs.settings.aws.max_attempts == 2


@pytest.mark.usefixtures("dynamo_plugin_only")
async def test_open_store_refuses_bad_options_and_urls() -> None:
    with pytest.raises(TypeError, match="no option 'pool_size'"):
        await psych_runtime.open_store("dynamodb://psych", pool_size=3)
    with pytest.raises(TypeError, match="migrate"):
        await psych_runtime.open_store("dynamodb://psych", migrate="yes")
    with pytest.raises(psych_runtime.adapters.InvalidStoreUrl):
        await psych_runtime.open_store("dynamodb://x")
    with pytest.raises(psych_runtime.adapters.InvalidStoreUrl):
        await psych_runtime.open_blob_store("s3://Not_A_Bucket")


@pytest.mark.usefixtures("dynamo_plugin_only")
async def test_open_store_with_migrate_reports_an_unreachable_server() -> None:
    from ..conftest import free_port

    url = f"dynamodb://psych?region=us-east-1&endpoint_url=http://127.0.0.1:{free_port()}"
    with pytest.raises(psych_runtime.StoreUnavailable):
        await psych_runtime.open_store(url, migrate=True, max_attempts=1, connect_timeout=0.5)


def test_the_doctor_check_reports_the_driver() -> None:
    found: list[psych_runtime.adapters.DoctorCheck] = []
    plugin.psych_doctor_checks(found.append)
    (check,) = found
    result = check.run()
    assert result.ok
    assert "aioboto3" in result.detail


@pytest.mark.parametrize("module", ["psych_store_dynamo", "psych_store_dynamo.plugin"])
def test_importing_the_plugin_does_not_import_the_driver(module: str) -> None:
    watched = [*DRIVER_MODULES, *(f"psych_store_dynamo.{m}" for m in ("store", "memory", "blob"))]
    assert modules_loaded_by(f"import {module}", watched) == []


def test_the_driver_is_loaded_on_first_use() -> None:
    # Guards the test above: the same probe does see aioboto3 once a request is made.
    probe = textwrap.dedent(
        """
        import asyncio, sys
        from psych_store_dynamo import plugin

        async def main():
            store = await plugin.open_dynamo_store(
                "dynamodb://psych?region=us-east-1&endpoint_url=http://127.0.0.1:9",
                max_attempts=1, connect_timeout=0.2,
            )
            before = "aioboto3" in sys.modules
            try:
                await store.connect()
            except Exception as exc:
                print(type(exc).__name__)
            finally:
                await store.close()
            print(before, "aioboto3" in sys.modules)

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["StoreUnavailable", "False", "True"]


def test_the_public_names_are_exported_lazily() -> None:
    assert psych_store_dynamo.DynamoStore is DynamoStore
    assert psych_store_dynamo.S3BlobStore is S3BlobStore
    assert psych_store_dynamo.DynamoMemoryStore is DynamoMemoryStore
    for name in (
        "DynamoStore",
        "DynamoMemoryStore",
        "S3BlobStore",
        "BatchTooLarge",
        "create_table",
        "drop_table",
    ):
        assert name in psych_store_dynamo.__all__
        assert getattr(psych_store_dynamo, name) is not None
    with pytest.raises(AttributeError):
        _ = psych_store_dynamo.NoSuchThing
