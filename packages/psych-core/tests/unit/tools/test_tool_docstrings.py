"""Splitting a docstring into the description and the per-parameter texts."""

import inspect

from psych_runtime.tools.docstrings import parse_docstring


def _doc(text: str) -> str:
    return inspect.cleandoc(text)


def test_no_sections_keeps_everything() -> None:
    parsed = parse_docstring(
        _doc("""Summary line.

        More detail on a second paragraph.
        """)
    )
    assert parsed.description == "Summary line.\n\nMore detail on a second paragraph."
    assert parsed.parameters == {}


def test_args_section_is_lifted_out() -> None:
    parsed = parse_docstring(
        _doc("""Summary.

        Args:
            first: one.
            second (int): two,
                continued here.
            *rest: star args.

        Raises:
            ValueError: when bad.
        """)
    )
    assert parsed.parameters == {
        "first": "one.",
        "second": "two, continued here.",
        "rest": "star args.",
    }
    assert parsed.description == "Summary.\n\nRaises:\n    ValueError: when bad."


def test_other_header_spellings_and_section_at_the_end() -> None:
    for header in ("Arguments:", "Parameters:", "Keyword Args:"):
        parsed = parse_docstring(
            _doc(f"""Summary.

            {header}
                x: the x.
            """)
        )
        assert parsed.parameters == {"x": "the x."}, header
        assert parsed.description == "Summary."


def test_blank_line_inside_the_section_does_not_end_it() -> None:
    parsed = parse_docstring(
        _doc("""Summary.

        Args:
            a: first.

            b: second.

        Trailing paragraph.
        """)
    )
    assert parsed.parameters == {"a": "first.", "b": "second."}
    assert parsed.description == "Summary.\n\nTrailing paragraph."


def test_text_that_merely_mentions_args_is_kept() -> None:
    parsed = parse_docstring("Summary.\n\nThe Args: list below is prose, not a section.")
    assert parsed.parameters == {}
    assert "prose" in parsed.description
