"""The public surface: each namespace exports exactly the names pinned in a snapshot.

Adding, removing or moving a public name is a promise to users, so it shows up as a
change to ``public_surface.json`` (beside this file) in review.
"""

import importlib
import inspect
import json
import re
import subprocess
import sys
import typing
from pathlib import Path
from types import ModuleType

import pytest

import psych_runtime

REPOSITORY = Path(__file__).resolve().parents[4]
# The front page and the page that lists the public names.
DOCUMENTS = (REPOSITORY / "README.md", REPOSITORY / "docs" / "public-api.md")
NAMESPACES = ("spec", "records", "models", "adapters", "testing")

# One list of names for each public namespace; a name added or removed without an edit
# to the snapshot fails the first test below.
SNAPSHOT = Path(__file__).with_name("public_surface.json")
PINNED: dict[str, tuple[str, ...]] = {
    namespace: tuple(names) for namespace, names in json.loads(SNAPSHOT.read_text()).items()
}


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


@pytest.mark.parametrize("namespace", sorted(PINNED))
def test_a_namespace_exports_exactly_its_pinned_names(namespace: str) -> None:
    exported = list(_module(namespace).__all__)
    expected = list(PINNED[namespace])
    assert len(exported) == len(set(exported)), "a name is listed twice in __all__"
    assert sorted(exported) == sorted(expected)


@pytest.mark.parametrize("namespace", sorted(PINNED))
def test_every_exported_name_resolves(namespace: str) -> None:
    module = _module(namespace)
    assert [name for name in module.__all__ if not hasattr(module, name)] == []


def test_a_name_exported_twice_is_the_same_object_everywhere() -> None:
    homes: dict[str, object] = {}
    for namespace, names in PINNED.items():
        module = _module(namespace)
        for name in names:
            value = getattr(module, name)
            assert homes.setdefault(name, value) is value, f"{name} differs in {namespace}"


def test_the_namespaces_are_attributes_of_the_package() -> None:
    for namespace in NAMESPACES:
        assert getattr(psych_runtime, namespace) is _module(f"psych_runtime.{namespace}")
        assert namespace in dir(psych_runtime)


def test_a_moved_name_says_where_it_lives() -> None:
    with pytest.raises(AttributeError, match=r"psych_runtime\.records\.RunSettled"):
        _ = psych_runtime.RunSettled  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match=r"no attribute 'NoSuchName'$"):
        _ = psych_runtime.NoSuchName  # type: ignore[attr-defined]


def _readme_references() -> set[tuple[str, str]]:
    found = set()
    namespaces = "|".join(NAMESPACES)
    pattern = rf"psych_runtime(?:\.({namespaces}))?\.([A-Za-z_][A-Za-z0-9_]*)"
    text = "\n".join(document.read_text() for document in DOCUMENTS)
    for namespace, name in re.findall(pattern, text):
        if not namespace and name in NAMESPACES:
            continue
        found.add((f"psych_runtime.{namespace}" if namespace else "psych_runtime", name))
    return found


def test_every_public_name_in_the_readme_is_exported() -> None:
    references = _readme_references()
    assert len(references) > 20
    missing = sorted(
        f"{namespace}.{name}"
        for namespace, name in references
        if name not in _module(namespace).__all__
    )
    assert missing == []


def _classes_in(annotation: object) -> set[type]:
    found: set[type] = set()
    origin = typing.get_origin(annotation)
    if origin is not None:
        for arg in typing.get_args(annotation):
            found |= _classes_in(arg)
        return found
    if isinstance(annotation, type) and annotation.__module__.startswith("psych_runtime"):
        found.add(annotation)
    return found


def _public_callables() -> list[tuple[str, str]]:
    return [
        (namespace, name)
        for namespace, names in sorted(PINNED.items())
        for name in names
        if inspect.isfunction(getattr(_module(namespace), name))
    ]


@pytest.mark.parametrize(("namespace", "name"), _public_callables())
def test_types_returned_by_public_functions_are_public(namespace: str, name: str) -> None:
    hints = typing.get_type_hints(getattr(_module(namespace), name))
    public = {id(getattr(_module(ns), n)) for ns, names in PINNED.items() for n in names}
    hidden = sorted(c.__name__ for c in _classes_in(hints.get("return")) if id(c) not in public)
    assert hidden == [], f"{namespace}.{name} returns types no namespace exports: {hidden}"


def test_importing_the_package_loads_no_submodule_eagerly() -> None:
    code = (
        "import sys, psych_runtime; "
        "print(sorted(m for m in sys.modules if m.startswith('psych_runtime.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['psych_runtime._version']"


def test_the_package_docstring_example_runs() -> None:
    import doctest

    failures, tried = doctest.testmod(psych_runtime, verbose=False, report=False)[:2]
    assert tried > 0 and failures == 0


def test_a_first_program_does_not_import_the_http_client() -> None:
    # httpx (with its optional command-line extras) costs a few hundred milliseconds to
    # import; a program that never calls out over HTTP should not pay for it.
    code = (
        "import sys, asyncio, psych_runtime\n"
        "from psych_runtime.testing import FakeModel\n"
        "from psych_runtime.tools import ToolRegistry\n"
        "async def main():\n"
        "    store = await psych_runtime.open_store('memory://')\n"
        "    psych_runtime.Runtime(store, FakeModel(), ToolRegistry())\n"
        "    psych_runtime.AgentSpec(name='a', instructions='b', model='m')\n"
        "asyncio.run(main())\n"
        "print('httpx' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    "namespace", ["psych_runtime", *(f"psych_runtime.{n}" for n in NAMESPACES)]
)
def test_dir_lists_every_public_name_once(namespace: str) -> None:
    import psych_runtime.testing  # noqa: F401  (a loaded namespace must not appear twice)

    listed = dir(_module(namespace))
    assert len(listed) == len(set(listed))
    assert set(_module(namespace).__all__) <= set(listed)


def test_the_type_checking_imports_mirror_the_table_of_exports() -> None:
    """Editors and mypy see exactly the names ``__getattr__`` resolves, from the same homes."""
    import ast

    source = Path(psych_runtime.__file__).read_text()
    tree = ast.parse(source)
    table = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "_EXPORTS"
    )
    guarded = next(node for node in tree.body if isinstance(node, ast.If))
    imported: dict[str, set[str]] = {}
    for node in guarded.body:
        assert isinstance(node, ast.ImportFrom)
        if node.module == "psych_runtime":
            continue
        assert node.module is not None
        imported.setdefault(node.module, set()).update(a.name for a in node.names)
    assert imported == {module: set(names) for module, names in table.items()}


def test_a_name_from_an_adapter_says_which_package_to_install() -> None:
    """``psych_runtime.McpPool`` and friends live in adapter wheels; a missing one is named."""
    code = (
        "import sys; sys.modules['psych_mcp'] = None\n"
        "import psych_runtime\n"
        "try:\n"
        "    from psych_runtime import McpPool\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install psych-mcp" in out.stdout, out


def test_the_adapters_namespace_is_the_union_of_its_port_modules() -> None:
    """Every adapter name has one home, a port module; the namespace only gathers them."""
    adapters = _module("psych_runtime.adapters")
    homes: dict[str, str] = {}
    for port in adapters.PORTS:
        for name in _module(f"psych_runtime.adapters.{port}").__all__:
            homes.setdefault(name, port)
            assert getattr(adapters, name) is getattr(
                _module(f"psych_runtime.adapters.{port}"), name
            ), name
    assert set(homes) == set(adapters.__all__)
