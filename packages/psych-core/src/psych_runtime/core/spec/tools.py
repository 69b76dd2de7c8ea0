"""Static tools: the ones a Spec names directly rather than discovering at run time.

A code tool is only a name; the function, its schema and its description live in the
process's tool registry, so the same Spec can be published from a machine that does
not have the code. An HTTP tool is complete data instead, which is what lets an end
user create one at run time without a deploy.
"""

import re
from typing import Annotated
from typing import Literal

from pydantic import AfterValidator
from pydantic import BeforeValidator
from pydantic import Field
from pydantic import JsonValue
from pydantic import field_validator

from psych_runtime.core.spec.base import SpecModel
from psych_runtime.core.spec.base import sorted_by_name
from psych_runtime.core.spec.names import RESERVED_TOOL_NAMES
from psych_runtime.core.spec.names import Text
from psych_runtime.core.spec.names import ToolName
from psych_runtime.core.spec.names import check_http_url

_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z\-]+$")
SECRET_HEADERS: frozenset[str] = frozenset({"authorization", "proxy-authorization", "cookie"})
"""Headers whose value is a secret; they come from a named credential, never Spec text."""


def _not_reserved(name: str) -> str:
    if name in RESERVED_TOOL_NAMES:
        raise ValueError(f"{name!r} is the name of a built-in tool; choose another name")
    return name


OwnToolName = Annotated[ToolName, AfterValidator(_not_reserved)]
"""The name of a tool the Spec defines itself, which may not be a built-in tool's."""


class CodeTool(SpecModel):
    """A Python function registered in the process, referred to by its name.

    Attributes:
        kind: always ``"code"``.
        name: the registered name.
        interruptible: whether an interrupt may cancel a call that is running; a call
            that must not stop halfway (a refund, say) sets this to False.
    """

    kind: Literal["code"] = "code"
    name: OwnToolName
    interruptible: bool = True


class HttpTool(SpecModel):
    """An HTTP endpoint described entirely as data.

    Attributes:
        kind: always ``"http"``.
        name: the model-facing name.
        description: what the model is told the tool does.
        url: the endpoint; ``{placeholders}`` may fill the path or query from arguments,
            never the host.
        method: the HTTP method.
        input_schema: JSON Schema of the arguments the model sends.
        headers: fixed, non-secret headers.
        credential: the name of a secret the runtime resolves and sends as
            authorization; the secret itself never enters the Spec.
        timeout_seconds: per call, at most ten minutes.
        interruptible: whether an interrupt may cancel a call that is running.
    """

    kind: Literal["http"] = "http"
    name: OwnToolName
    description: Annotated[Text, Field(min_length=1, max_length=4096)]
    url: Annotated[str, Field(min_length=1, max_length=2048)]
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    input_schema: dict[str, JsonValue] = Field(default_factory=dict)
    headers: dict[str, str] = Field(default_factory=dict)
    credential: Annotated[str | None, Field(min_length=1, max_length=256)] = None
    timeout_seconds: Annotated[float, Field(gt=0, le=600)] = 30.0
    interruptible: bool = True

    @field_validator("url")
    @classmethod
    def _fixed_host(cls, url: str) -> str:
        return check_http_url(url, placeholders_in_path=True)

    @field_validator("headers")
    @classmethod
    def _no_secret_headers(cls, headers: dict[str, str]) -> dict[str, str]:
        for header in headers:
            if not _HEADER_NAME.match(header):
                raise ValueError(f"{header!r} is not a valid HTTP header name")
            if header.lower() in SECRET_HEADERS:
                raise ValueError(
                    f"the {header!r} header carries a secret and may not be written into "
                    "a Spec; set `credential` to the name of a secret instead"
                )
        return headers


StaticTool = Annotated[CodeTool | HttpTool, Field(discriminator="kind")]
"""Either static tool kind, told apart by ``kind``."""


def tool_names_as_code_tools(value: object) -> object:
    """Read each plain name in a Spec's ``tools`` as the code tool of that name.

    A code tool is nothing but a name, so ``"lookup"`` says all ``CodeTool(name=
    "lookup")`` does; the long form is what is stored and hashed. Anything that is not
    a list or tuple passes through for pydantic to refuse in its own words.
    """
    if isinstance(value, list | tuple):
        return tuple(
            {"kind": "code", "name": item} if isinstance(item, str) else item for item in value
        )
    return value


def _tools_in_name_order(tools: tuple[StaticTool, ...]) -> tuple[StaticTool, ...]:
    return sorted_by_name(tools, "tool")


SpecTools = Annotated[
    tuple[StaticTool, ...],
    BeforeValidator(tool_names_as_code_tools),
    AfterValidator(_tools_in_name_order),
]
"""A Spec's ``tools``: plain names read as code tools, no name twice, held in name order."""


__all__ = [
    "SECRET_HEADERS",
    "CodeTool",
    "HttpTool",
    "SpecTools",
    "StaticTool",
    "tool_names_as_code_tools",
]
