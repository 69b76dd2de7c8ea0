"""The guide and this adapter say the same thing: its code compiles, its entry point is ours."""

import re
import tomllib
from pathlib import Path

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
