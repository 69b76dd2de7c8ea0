"""Install the npm MCP servers the end-to-end tests run, once, outside the repository.

The tests run the reference "everything" MCP server from the npm registry as a real,
published third-party server. It is installed (pinned) under ``~/.cache/psych-npm``
(or ``$PSYCH_NPM_PREFIX``), so a clean clone stays clean and a second run installs
nothing. Without Node.js the step says so and the tests that need it skip (CI makes
them fail instead, with ``PSYCH_REQUIRE_MCP_EVERYTHING=1``).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGES = {"@modelcontextprotocol/server-everything": "2026.8.31"}


def prefix() -> Path:
    """Where the packages go."""
    return Path(os.environ.get("PSYCH_NPM_PREFIX", Path.home() / ".cache" / "psych-npm"))


def installed(root: Path, name: str, version: str) -> bool:
    """Whether ``name`` at ``version`` is already under ``root``."""
    manifest = root / "node_modules" / name / "package.json"
    return manifest.exists() and f'"version": "{version}"' in manifest.read_text()


def main() -> int:
    npm = shutil.which("npm")
    if npm is None:
        print("npm-servers: npm not found; MCP cases that need a published server skip")
        return 0
    root = prefix()
    root.mkdir(parents=True, exist_ok=True)
    missing = [f"{n}@{v}" for n, v in PACKAGES.items() if not installed(root, n, v)]
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
    print(f"npm-servers: {', '.join(PACKAGES)} ready under {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
