"""Install the published MCP servers the end-to-end tests run, once, outside the repository.

The tests run real third-party servers from both package registries:

* npm: the reference "everything" server (``@modelcontextprotocol/server-everything``),
  over Streamable HTTP and over stdio, installed under ``~/.cache/psych-npm`` (or
  ``$PSYCH_NPM_PREFIX``);
* PyPI: the reference time server (``mcp-server-time``), over stdio, installed in a
  virtual environment of its own under ``~/.cache/psych-pypi`` (or
  ``$PSYCH_PYPI_PREFIX``), because its dependencies are its own business, not the
  workspace's.

Versions are pinned, a clean clone stays clean, and a second run installs nothing.
Without npm, or without uv, the step says so and the tests that need the server skip
(CI makes them fail instead, with ``PSYCH_REQUIRE_MCP_SERVERS=1``).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

NPM_PACKAGES = {"@modelcontextprotocol/server-everything": "2026.8.31"}
PYPI_PACKAGES = {"mcp-server-time": "2026.10.19"}


def npm_prefix() -> Path:
    """Where the npm packages go."""
    return Path(os.environ.get("PSYCH_NPM_PREFIX", Path.home() / ".cache" / "psych-npm"))


def pypi_prefix() -> Path:
    """Where each PyPI server's virtual environment goes."""
    return Path(os.environ.get("PSYCH_PYPI_PREFIX", Path.home() / ".cache" / "psych-pypi"))


def npm_installed(root: Path, name: str, version: str) -> bool:
    """Whether ``name`` at ``version`` is already under ``root``."""
    manifest = root / "node_modules" / name / "package.json"
    return manifest.exists() and f'"version": "{version}"' in manifest.read_text()


def pypi_program(name: str) -> Path:
    """The console script of the PyPI server ``name`` in its own environment."""
    return pypi_prefix() / name / "bin" / name


def pypi_installed(name: str, version: str) -> bool:
    """Whether ``name`` at ``version`` is installed in its environment."""
    marker = pypi_prefix() / name / "installed-version"
    return pypi_program(name).exists() and marker.exists() and marker.read_text() == version


def install_npm() -> None:
    npm = shutil.which("npm")
    if npm is None:
        print("mcp-servers: npm not found; the cases that need an npm MCP server skip")
        return
    root = npm_prefix()
    root.mkdir(parents=True, exist_ok=True)
    missing = [f"{n}@{v}" for n, v in NPM_PACKAGES.items() if not npm_installed(root, n, v)]
    if missing:
        subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--silent",
                "--prefix",
                str(root),
                *missing,
            ],
            check=True,
        )
    print(f"mcp-servers: {', '.join(NPM_PACKAGES)} ready under {root}")


def install_pypi() -> None:
    uv = shutil.which("uv")
    if uv is None:
        print("mcp-servers: uv not found; the cases that need a PyPI MCP server skip")
        return
    for name, version in PYPI_PACKAGES.items():
        if pypi_installed(name, version):
            continue
        home = pypi_prefix() / name
        shutil.rmtree(home, ignore_errors=True)
        subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(home)], check=True)
        python = home / "bin" / "python"
        subprocess.run(
            [uv, "pip", "install", "--quiet", "--python", str(python), f"{name}=={version}"],
            check=True,
        )
        (home / "installed-version").write_text(version)
    print(f"mcp-servers: {', '.join(PYPI_PACKAGES)} ready under {pypi_prefix()}")


def main() -> int:
    install_npm()
    install_pypi()
    return 0


if __name__ == "__main__":
    sys.exit(main())
