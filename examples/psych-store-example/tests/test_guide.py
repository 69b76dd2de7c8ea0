"""The guide and this adapter say the same thing: its code compiles, its entry point is ours."""

import re
import tomllib
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1]
GUIDE = HERE.parents[1] / "docs" / "writing-a-store-adapter.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(), re.DOTALL)


def test_every_python_block_of_the_guide_compiles() -> None:
    blocks = _blocks("python")
    assert len(blocks) >= 3
    for index, block in enumerate(blocks):
        compile(block, f"{GUIDE.name}[{index}]", "exec")


def test_the_guides_entry_point_is_the_example_adapters() -> None:
    [toml_block] = _blocks("toml")
    guide = tomllib.loads(toml_block)["project"]["entry-points"]["psych_runtime"]
    ours = tomllib.loads((HERE / "pyproject.toml").read_text())["project"]["entry-points"]
    assert guide == ours["psych_runtime"]


def test_the_guides_plugin_module_matches_the_example_adapters() -> None:
    plugin = (HERE / "src" / "psych_store_example" / "plugin.py").read_text()
    for line in ("PSYCH_PLUGIN_API = 1", "psych_register_stores = offer_stores("):
        assert line in plugin
        assert any(line in block for block in _blocks("python"))


def test_every_name_in_the_guides_import_table_lives_where_it_says() -> None:
    import importlib

    import psych_runtime

    section = GUIDE.read_text().split("| names | import from |")[1].split("\n\n")[0]
    rows = re.findall(r"^\| (.+?) \| `([a-z_.]+)` \|$", section, re.MULTILINE)
    assert len(rows) == 6, rows
    checked = 0
    for names, namespace in rows:
        module = importlib.import_module(namespace)
        for name in re.findall(r"`(\w+)`", names):
            assert hasattr(module, name), f"{namespace}.{name}"
            checked += 1
            if namespace == "psych_runtime":
                continue
            # Asked for at the top instead, the error names the right namespace.
            if not hasattr(psych_runtime, name):
                with pytest.raises(AttributeError, match=rf"it is {namespace}\.{name}\b"):
                    getattr(psych_runtime, name)
    assert checked >= 30
