"""Which provider a model call reaches, as ``gen_ai.provider.name`` reports it.

The value comes from the model client in use, in this order:

1. a client that routes by model id (``ModelsByName``) answers ``provider_for(model)``;
2. any other client may say ``provider_name`` (``OpenAICompatibleClient`` derives it
   from its ``base_url``, ``AnthropicClient`` says ``anthropic``, and either takes an
   explicit ``provider_name=``);
3. a client that says nothing, or something that is not a short non-empty text, is
   reported as ``_OTHER``, the conventions' value for "none of the known ones".

``provider_for_url`` maps the API hosts of the providers the GenAI semantic
conventions name to their well-known values.
"""

from collections.abc import Callable
from urllib.parse import urlsplit

from psych_runtime.core.errors import PsychError
from psych_runtime.telemetry.schema import OTHER_PROVIDER

_HOSTS: tuple[tuple[str, str], ...] = (
    ("api.openai.com", "openai"),
    (".openai.azure.com", "azure.ai.openai"),
    (".services.ai.azure.com", "azure.ai.inference"),
    ("models.inference.ai.azure.com", "azure.ai.inference"),
    ("api.anthropic.com", "anthropic"),
    ("api.groq.com", "groq"),
    ("api.deepseek.com", "deepseek"),
    ("api.mistral.ai", "mistral_ai"),
    ("api.x.ai", "x_ai"),
    ("api.perplexity.ai", "perplexity"),
    ("api.cohere.ai", "cohere"),
    ("api.cohere.com", "cohere"),
    ("generativelanguage.googleapis.com", "gcp.gemini"),
    ("aiplatform.googleapis.com", "gcp.vertex_ai"),
    ("-aiplatform.googleapis.com", "gcp.vertex_ai"),
)
"""API host (or, starting with a dot or a dash, host suffix) to ``gen_ai.provider.name``."""

_MAX_NAME = 64


def provider_for_url(url: str, default: str = OTHER_PROVIDER) -> str:
    """The provider whose API ``url`` points at, or ``default`` for any other host.

    Args:
        url: an API root such as ``https://api.openai.com/v1``.
        default: what an unknown host (a gateway, a local server) is reported as.
    """
    host = (urlsplit(url).hostname or "").lower()
    for known, name in _HOSTS:
        if host == known or (known[0] in ".-" and host.endswith(known)):
            return name
    if host.startswith("bedrock") and host.endswith(".amazonaws.com"):
        return "aws.bedrock"
    return default


class InvalidProviderName(PsychError, ValueError):
    """A ``provider_name`` that is not a short, non-empty, printable text."""


def _valid(name: object) -> str | None:
    if (
        isinstance(name, str)
        and 0 < len(name) <= _MAX_NAME
        and name.isprintable()
        and name.strip() == name
    ):
        return name
    return None


def check_provider_name(name: object) -> str:
    """``name`` as a ``gen_ai.provider.name`` value a client may declare.

    Raises:
        InvalidProviderName: it is not text, empty, longer than 64 characters,
            holds a control character, or starts or ends with a space.
    """
    found = _valid(name)
    if found is None:
        raise InvalidProviderName(
            f"provider_name must be a printable text of 1 to {_MAX_NAME} characters with "
            f"no space at either end (such as 'openai'), got {name!r}"
        )
    return found


def provider_of(client: object, model: str) -> str:
    """``gen_ai.provider.name`` for a call of ``model`` through ``client``.

    Never raises: a client whose answer cannot be read is reported as ``_OTHER``.
    """
    try:
        route = getattr(client, "provider_for", None)
        if callable(route):
            found = _valid(route(model))
            if found is not None:
                return found
        found = _valid(getattr(client, "provider_name", None))
    except Exception:
        return OTHER_PROVIDER
    return found if found is not None else OTHER_PROVIDER


def provider_resolver(client: object) -> Callable[[str], str]:
    """``provider_of`` bound to ``client``, remembering each model's answer."""
    known: dict[str, str] = {}

    def resolve(model: str) -> str:
        found = known.get(model)
        if found is None:
            found = known[model] = provider_of(client, model)
        return found

    return resolve


__all__ = [
    "InvalidProviderName",
    "check_provider_name",
    "provider_for_url",
    "provider_of",
    "provider_resolver",
]
