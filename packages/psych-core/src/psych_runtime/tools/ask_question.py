"""The built-in ``ask_question``: the model asks a person, and the Run waits for the answer.

Offered only when the Spec's ``SuspensionPolicy.may_ask_questions`` is set. A call
carries one to four structured questions (a short header, up to four options each);
the Run suspends with them, ``status()`` shows them, and ``resume(payload=...)``
delivers the answer, which becomes the call's result. The answer is read from the log
after a reclaim, so a question is never put twice.
"""

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import JsonValue
from pydantic import ValidationError

from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.records import AskedQuestion
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import QuestionOption

ASK_QUESTION = "ask_question"
"""The built-in's name (reserved: no registered tool may take it)."""

MAX_QUESTIONS = 4
MAX_OPTIONS = 4

NO_ANSWER = "The person resumed the run without answering; carry on with your best judgement."
"""The call's result when the resume carried no answer."""

ASK_QUESTION_DEFINITION = ToolDefinition(
    name=ASK_QUESTION,
    description=(
        "Ask the user one to four questions and wait for the answers before going on. "
        "Use it when you cannot proceed without a decision or a fact only the user has. "
        "Give each question a short header and, when the choices are known, up to four "
        "options."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_QUESTIONS,
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "description": "The full question."},
                        "header": {
                            "type": "string",
                            "maxLength": 64,
                            "description": "A label of a few words.",
                        },
                        "options": {
                            "type": "array",
                            "maxItems": MAX_OPTIONS,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "label": {"type": "string"},
                                    "description": {"type": "string"},
                                },
                                "required": ["label"],
                                "additionalProperties": False,
                            },
                        },
                        "multi_select": {
                            "type": "boolean",
                            "description": "Whether several options may be picked.",
                        },
                    },
                    "required": ["question"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["questions"],
        "additionalProperties": False,
    },
    annotations=frozenset({"read-only"}),
)
"""What the model is offered when the Spec lets it ask questions."""


class _Questions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    questions: list[AskedQuestion] = Field(min_length=1, max_length=MAX_QUESTIONS)


def read_questions(arguments: JsonObject) -> tuple[AskedQuestion, ...] | str:
    """The questions a call asks, or why its arguments are not a valid request."""
    try:
        checked = _Questions.model_validate(arguments)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
            for e in error.errors(include_url=False)
        )
        return f"ask_question needs one to four questions, each with options: {problems}"
    return tuple(checked.questions)


def one_line(questions: tuple[AskedQuestion, ...]) -> str:
    """The questions on one line, for a status view or a notification."""
    parts = []
    for asked in questions:
        text = " ".join(asked.question.split())
        parts.append(f"{asked.header}: {text}" if asked.header else text)
    return " | ".join(parts)[:8192]


def answer_from(payload: JsonObject) -> JsonValue:
    """The call's result from a resume payload: ``answer``, ``answers``, or a sentence."""
    for key in ("answer", "answers"):
        value = payload.get(key)
        if value not in (None, "", {}, []):
            return {key: value}
    return NO_ANSWER


__all__ = [
    "ASK_QUESTION",
    "ASK_QUESTION_DEFINITION",
    "MAX_OPTIONS",
    "MAX_QUESTIONS",
    "NO_ANSWER",
    "QuestionOption",
    "answer_from",
    "one_line",
    "read_questions",
]
