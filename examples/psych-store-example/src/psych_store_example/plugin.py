"""The entry point: registers ``example://`` with Psych Runtime's plugin manager.

Psych Runtime imports this module when it first looks for backends, so it stays cheap:
it describes the backend and imports the store only inside ``open_example_store``.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import DoctorCheck
from psych_runtime.adapters.plugins import DoctorResult
from psych_runtime.adapters.plugins import StoreBackend
from psych_runtime.adapters.plugins import offer_doctor_checks
from psych_runtime.adapters.plugins import offer_stores

if TYPE_CHECKING:
    from psych_store_example.store import ExampleStore

PSYCH_PLUGIN_API = 1
"""The plugin API this package was written for; a mismatch sets the plugin aside."""


async def open_example_store(url: str, **options: object) -> "ExampleStore":
    """Build the store for ``url``; ``open_store`` calls this with the user's options.

    ``migrate=True`` never reaches a factory: ``open_store`` calls ``migrate()`` itself
    on a store that has one.
    """
    from psych_store_example.store import ExampleStore

    return ExampleStore(url, **options)


def _always_fine() -> DoctorResult:
    return DoctorResult(True, "nothing to check: the example store needs no driver")


psych_register_stores = offer_stores(
    StoreBackend(
        name="example",
        schemes=("example",),
        open=open_example_store,
        package="psych-store-example",
        description="Named in-process databases; an example of a third-party adapter.",
    )
)

psych_doctor_checks = offer_doctor_checks(DoctorCheck("example store", _always_fine))
