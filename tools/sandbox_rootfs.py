"""Make the OCI sandbox runnable on this machine, with no image registry involved.

Each step is skipped when it is done already, so a second run takes a second or two:

1. ``podman``, ``crun``, ``catatonit`` (podman's ``--init``) and ``debootstrap`` from
   the distribution's packages (apt, as root), when one is missing;
2. on a host that mounts cgroup v1 controllers beside a v2 hierarchy that still holds
   controllers (``hugetlb`` here), crun refuses every container ("cgroups in hybrid
   mode not supported, drop all controllers from cgroupv2"): those controllers are
   bound to v1 hierarchies of their own, which leaves the v2 hierarchy empty;
3. a Debian root filesystem with Python (``debootstrap --variant=minbase
   --include=python3``, from the mirror the machine's apt sources name) under
   ``~/.cache/psych-sandbox-rootfs/<recipe>`` (or ``$PSYCH_SANDBOX_ROOTFS``), built in a
   scratch directory and renamed into place only when complete;
4. one container started from it, to show the whole chain works.

A step the machine refuses is printed with its error and the script exits 0: the OCI
cases then skip with the reason, or fail where ``PSYCH_REQUIRE_OCI=1`` (CI).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RECIPE = "bookworm-minbase-python3-1"
"""Names the root filesystem; change it when the recipe below changes."""
SUITE = "bookworm"
PACKAGES = ("podman", "crun", "catatonit", "debootstrap")
CATATONIT = Path("/usr/libexec/podman/catatonit")  # podman's --init


def rootfs_path() -> Path:
    """Where the root filesystem lives (``$PSYCH_SANDBOX_ROOTFS`` overrides)."""
    override = os.environ.get("PSYCH_SANDBOX_ROOTFS")
    if override:
        return Path(override)
    return Path.home() / ".cache" / "psych-sandbox-rootfs" / RECIPE


def say(message: str) -> None:
    print(f"sandbox-rootfs: {message}", flush=True)


def install_packages() -> str | None:
    """Install what is missing; None when all is there, else why not."""
    missing = [
        name
        for name in PACKAGES
        if (not CATATONIT.exists() if name == "catatonit" else shutil.which(name) is None)
    ]
    if not missing:
        return None
    if os.geteuid() != 0:
        return f"{', '.join(missing)} missing and not root: apt-get install {' '.join(missing)}"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = ["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, check=False)
        result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        return f"{' '.join(command)} exited {result.returncode}: {result.stderr.strip()[-500:]}"
    say(f"installed {', '.join(missing)}")
    return None


def free_cgroup_v2_controllers() -> str | None:
    """Bind controllers a hybrid host left on cgroup v2 to v1 hierarchies of their own."""
    unified = Path("/sys/fs/cgroup/unified/cgroup.controllers")
    if not unified.exists():
        return None  # pure v1 or pure v2: crun is content
    controllers = unified.read_text().split()
    for controller in controllers:
        target = Path("/sys/fs/cgroup") / controller
        try:
            target.mkdir(exist_ok=True)
        except OSError as error:
            return f"mkdir {target}: {error}"
        result = subprocess.run(
            ["mount", "-t", "cgroup", "-o", controller, "cgroup", str(target)],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            return f"mount -t cgroup -o {controller}: {result.stderr.strip()}"
        say(f"bound the {controller} controller to a cgroup v1 hierarchy at {target}")
    return None


def apt_mirror() -> str | None:
    """The mirror the machine's apt sources use for the main suite."""
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    if sources.exists():
        for stanza in sources.read_text().split("\n\n"):
            uris = re.search(r"^URIs:\s*(\S+)", stanza, re.MULTILINE)
            suites = re.search(r"^Suites:\s*(.+)$", stanza, re.MULTILINE)
            if uris and suites and SUITE in suites.group(1).split():
                return uris.group(1)
    listing = Path("/etc/apt/sources.list")
    if listing.exists():
        for line in listing.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "deb" and parts[2] == SUITE:
                return parts[1]
    return None


def build_rootfs(target: Path) -> str | None:
    """Debootstrap the root filesystem into ``target`` unless it is there."""
    if (target / "usr" / "bin" / "python3").exists():
        return None
    mirror = apt_mirror()
    if mirror is None:
        return f"no apt source names a mirror for {SUITE}"
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    started = time.monotonic()
    result = subprocess.run(
        [
            "debootstrap",
            "--variant=minbase",
            "--include=python3",
            SUITE,
            str(scratch),
            mirror,
        ],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        return f"debootstrap exited {result.returncode}: {result.stdout.strip()[-500:]}"
    # What only building needed: the downloaded packages and the package lists.
    for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for entry in (scratch / leftover).glob("*"):
            if entry.is_file():
                entry.unlink()
    scratch.chmod(0o755)
    scratch.rename(target)
    say(f"built {target} in {time.monotonic() - started:.0f}s")
    return None


def smoke_test(target: Path) -> str | None:
    """Start one container from the root filesystem."""
    started = time.monotonic()
    result = subprocess.run(
        [
            "podman",
            "run",
            "--rm",
            "--network",
            "none",
            "--read-only",
            "--ulimit",
            "nofile=1024:1024",
            "--ulimit",
            "nproc=64:64",
            "--user",
            "65534:65534",
            "--rootfs",
            str(target),
            "python3",
            "-I",
            "-S",
            "-c",
            "print(6 * 7)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0 or result.stdout.strip() != "42":
        return f"podman run --rootfs exited {result.returncode}: {result.stderr.strip()[-500:]}"
    say(f"podman ran a program from {target} in {time.monotonic() - started:.2f}s")
    return None


def main() -> int:
    target = rootfs_path()
    steps = (
        ("install podman, crun, catatonit, debootstrap", install_packages),
        ("free the cgroup v2 controllers for crun", free_cgroup_v2_controllers),
        ("build the root filesystem", lambda: build_rootfs(target)),
        ("run a container from it", lambda: smoke_test(target)),
    )
    for name, step in steps:
        problem = step()
        if problem is not None:
            say(f"refused at '{name}': {problem}; the OCI sandbox cases skip (or fail in CI)")
            return 0
    say(f"ready: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
