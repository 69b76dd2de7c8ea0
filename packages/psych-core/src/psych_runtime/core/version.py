"""Canonical JSON for a Spec, its content hash, and the immutable Version around it.

The hash is the identity of a published agent or workflow, so every choice that could
make two equal Specs serialise differently is fixed here rather than left to library
defaults:

* the Spec is validated first, so defaults are filled in (leaving a field out and
  writing its default give the same bytes), floats are floats (``1`` and ``1.0`` in a
  float field agree), sets are sorted and line endings are LF;
* fields appear under their Python names, keys are sorted at every level, there is no
  insignificant whitespace, and non-ASCII text is written as itself in UTF-8;
* NaN and infinity are refused, since JSON has no spelling for them.

``published_at`` lives beside the hash, never inside it: publishing the same Spec twice
must name the same Version.
"""

import hashlib
import json
from datetime import datetime
from typing import Annotated
from typing import Self

from pydantic import AwareDatetime
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import JsonValue

from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.spec import SPEC_ADAPTER
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import Spec
from psych_runtime.core.spec import WorkflowSpec

HASH_PREFIX = "sha256:"
HASH_PATTERN = r"^sha256:[0-9a-f]{64}$"


class VersionHashMismatch(PsychError, ValueError):
    """An exported Version's stated hash is not the hash of the Spec it carries.

    Either the file was edited after export or it was produced by a different
    canonicalisation; both mean the Spec is not the one that was published.

    Attributes:
        stated: the hash written in the export.
        computed: the hash of the Spec as it stands.
    """

    def __init__(self, stated: str, computed: str) -> None:
        super().__init__(
            f"the export states hash {stated} but its spec hashes to {computed}; "
            "the spec was changed after it was published"
        )
        self.stated = stated
        self.computed = computed


def _canonical_dump(spec: AgentSpec | WorkflowSpec) -> dict[str, JsonValue]:
    dumped: dict[str, JsonValue] = spec.model_dump(mode="json", by_alias=False)
    return dumped


def _encode(data: JsonValue) -> bytes:
    return json.dumps(
        data,
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        allow_nan=False,
    ).encode("utf-8")


def canonical_json(spec: AgentSpec | WorkflowSpec) -> bytes:
    """The exact bytes a Spec's hash is computed over.

    Args:
        spec: a validated Spec model.

    Returns:
        Compact, key-sorted UTF-8 JSON with every field present.
    """
    return _encode(_canonical_dump(spec))


def spec_hash(spec: AgentSpec | WorkflowSpec) -> VersionHash:
    """The content hash that names a Spec's Version: ``sha256:`` and 64 hex digits."""
    return VersionHash(HASH_PREFIX + hashlib.sha256(canonical_json(spec)).hexdigest())


class Version(BaseModel):
    """A published Spec: immutable, named by its content hash.

    A Run stays on one Version from admission to settlement, so nothing about it may change once
    built. Constructing one does not check the hash (a store reading its own rows need
    not pay for rehashing); ``verify()`` does, and ``import_json`` always does.

    Attributes:
        hash: ``spec_hash(spec)`` at publication.
        spec: the validated Spec.
        published_at: when it was first published; supplied by the caller, since the
            core has no clock, and not part of the hash.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    hash: Annotated[VersionHash, Field(pattern=HASH_PATTERN)]
    spec: Spec
    published_at: AwareDatetime

    @classmethod
    def of(cls, spec: AgentSpec | WorkflowSpec, published_at: datetime) -> Self:
        """Wrap a Spec as a Version, hashing it.

        Args:
            spec: the validated Spec.
            published_at: a timezone-aware timestamp from the caller's clock.

        Returns:
            The Version.
        """
        return cls(hash=spec_hash(spec), spec=spec, published_at=published_at)

    def verify(self) -> bool:
        """Whether the stated hash is still the hash of the Spec held."""
        return spec_hash(self.spec) == self.hash

    def export_json(self) -> str:
        """A readable, key-sorted JSON document holding the hash, timestamp and Spec.

        The Spec inside is the canonical form, so the file can be reviewed, diffed and
        imported elsewhere, where ``import_json`` rehashes it.
        """
        document: dict[str, JsonValue] = {
            "hash": self.hash,
            "published_at": self.published_at.isoformat(),
            "spec": _canonical_dump(self.spec),
        }
        return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)

    @classmethod
    def import_json(cls, text: str) -> Self:
        """Read a document written by ``export_json``, trusting nothing it states.

        The Spec is validated and rehashed. A stated hash is optional, but when present
        it must match.

        Args:
            text: the exported JSON.

        Returns:
            The Version, carrying the recomputed hash.

        Raises:
            VersionHashMismatch: when the stated hash differs from the recomputed one.
            ValueError: when the document is not an export (pydantic's
                ``ValidationError`` for a malformed Spec or timestamp).
        """
        document = json.loads(text)
        if not isinstance(document, dict) or "spec" not in document:
            raise ValueError("not a Version export: expected an object with a 'spec' key")
        unknown = sorted(set(document) - {"hash", "published_at", "spec"})
        if unknown:
            raise ValueError(f"not a Version export: unexpected keys {', '.join(unknown)}")
        spec = SPEC_ADAPTER.validate_python(document["spec"])
        computed = spec_hash(spec)
        stated = document.get("hash")
        if stated is not None and stated != computed:
            raise VersionHashMismatch(str(stated), computed)
        return cls.model_validate(
            {"hash": computed, "spec": spec, "published_at": document.get("published_at")}
        )


__all__ = [
    "HASH_PREFIX",
    "Version",
    "VersionHashMismatch",
    "canonical_json",
    "spec_hash",
]
