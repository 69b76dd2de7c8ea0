"""Every package has an API reference page, and the site's navigation lists it."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _packages() -> list[str]:
    sources = [*ROOT.glob("packages/*/src"), ROOT / "contract" / "src"]
    return sorted(p.name for src in sources for p in src.iterdir() if (p / "__init__.py").exists())


def test_every_package_has_a_reference_page_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for package in _packages():
        page = ROOT / "docs" / "api" / f"{package}.md"
        assert f"<!-- api: {package} -->" in page.read_text(), package
        assert f"api/{package}.md" in nav, package


def test_the_core_namespaces_have_reference_pages() -> None:
    surface = (ROOT / "packages/psych-core/tests/unit/test_public_surface.py").read_text()
    namespaces = re.search(r"NAMESPACES = \((.*?)\)", surface)
    assert namespaces is not None
    for name in re.findall(r'"(\w+)"', namespaces[1]):
        page = ROOT / "docs" / "api" / f"psych_runtime.{name}.md"
        assert f"<!-- api: psych_runtime.{name} -->" in page.read_text(), name


def test_the_hook_the_site_names_exists() -> None:
    hooks = re.search(r"^hooks:\n((?:  - .*\n)+)", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert hooks is not None
    for hook in re.findall(r"  - (.*)", hooks[1]):
        assert (ROOT / hook.strip()).is_file(), hook
