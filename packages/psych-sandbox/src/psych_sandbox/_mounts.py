"""A program's private scratch space, set up in its process between fork and exec.

On a root host the child (still root, before it becomes the program's uid) can give
itself a mount namespace and an IPC namespace of its own:

- every mount it inherited is made read-only (``mount_setattr`` with
  ``AT_RECURSIVE``), so nothing of the host's is writable any more, world-writable
  directories such as ``/run/lock`` included;
- one size- and inode-capped tmpfs is mounted on ``/tmp`` and the same directory is
  bound on ``/var/tmp`` and ``/dev/shm``: the three share one cap, and the tmpfs is
  gone when the last process of the namespace ends;
- the workspace is cloned (``open_tree``) before anything covers it and moved back
  onto its own path, the only host directory left writable;
- System V shared memory, message queues and semaphores are switched off in the new
  IPC namespace (``kernel.shmall``, ``kernel.msgmni``, ``kernel.sem``), so nothing can
  be parked in a segment that outlives the program or escapes every cap.

Every function here runs in the forked child, so it only makes system calls through a
libc handle loaded beforehand, and raises ``OSError`` on the first refusal (the parent
sees the launch fail and says so).
"""

import ctypes
import ctypes.util
import os
from dataclasses import dataclass

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_libc.mount.argtypes = [
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_ulong,
    ctypes.c_char_p,
]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.syscall.restype = ctypes.c_long

_CLONE_NEWNS = 0x00020000
_CLONE_NEWIPC = 0x08000000
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MS_REC = 0x4000
_MS_PRIVATE = 0x40000
# These system calls have one number on every architecture Linux added them after 5.0.
_SYS_OPEN_TREE = 428
_SYS_MOVE_MOUNT = 429
_SYS_MOUNT_SETATTR = 442
_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_OPEN_TREE_CLONE = 0x1
_OPEN_TREE_CLOEXEC = os.O_CLOEXEC
_MOVE_MOUNT_F_EMPTY_PATH = 0x4
_MOUNT_ATTR_RDONLY = 0x1

INODE_CHARGE = 4096
"""Bytes every file, directory or link costs against ``disk_bytes`` beyond its blocks."""

SCRATCH_PATHS = ("/tmp", "/var/tmp", "/dev/shm")
"""Where a program finds its scratch space (one tmpfs, bound on each that exists)."""

# System V IPC switched off: no shared memory pages, no message queues, no semaphores.
_IPC_SYSCTLS = (
    ("/proc/sys/kernel/shmall", "0"),
    ("/proc/sys/kernel/msgmni", "0"),
    ("/proc/sys/kernel/sem", "0 0 0 0"),
)


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


@dataclass(frozen=True, slots=True)
class Scratch:
    """The private scratch space of one program.

    Attributes:
        size_bytes: the tmpfs's size.
        inodes: how many files, directories and links it may hold.
        workspace: the workspace's host path, kept writable (and visible where the
            scratch covers it, as a temporary workspace under ``/tmp`` is).
        mounts: cover the filesystem (mount namespace); False keeps only the IPC part.
    """

    size_bytes: int
    inodes: int
    workspace: str
    mounts: bool = True

    @classmethod
    def for_disk(cls, disk_bytes: int, workspace: str, *, mounts: bool = True) -> "Scratch":
        """A scratch space capped at ``disk_bytes``, in bytes and in inodes."""
        return cls(
            size_bytes=max(1024 * 1024, disk_bytes),
            inodes=max(64, disk_bytes // INODE_CHARGE),
            workspace=workspace,
            mounts=mounts,
        )


def _check(result: int, what: str) -> None:
    if result < 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str) -> None:
    _check(
        _libc.mount(
            source.encode() if source is not None else None,
            target.encode(),
            kind.encode() if kind is not None else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def private_ipc() -> None:
    """A new IPC namespace with System V IPC switched off (the child, as root)."""
    _check(_libc.unshare(_CLONE_NEWIPC), "unshare(CLONE_NEWIPC)")
    for path, value in _IPC_SYSCTLS:
        with open(path, "w", encoding="ascii") as sysctl:
            sysctl.write(value)


def private_scratch(scratch: Scratch) -> None:
    """A read-only view of the host with one capped tmpfs for scratch (the child, as root)."""
    _check(_libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE, "")
    workspace = os.path.realpath(scratch.workspace)
    tree = _libc.syscall(
        _SYS_OPEN_TREE,
        _AT_FDCWD,
        workspace.encode(),
        _OPEN_TREE_CLONE | _OPEN_TREE_CLOEXEC | _AT_RECURSIVE,
    )
    _check(tree, "open_tree(workspace)")
    attributes = _MountAttr(_MOUNT_ATTR_RDONLY, 0, 0, 0)
    _check(
        _libc.syscall(
            _SYS_MOUNT_SETATTR,
            _AT_FDCWD,
            b"/",
            _AT_RECURSIVE,
            ctypes.byref(attributes),
            ctypes.sizeof(attributes),
        ),
        "mount_setattr(/, read-only)",
    )
    first, *others = [path for path in SCRATCH_PATHS if os.path.isdir(path)]
    options = f"size={scratch.size_bytes},nr_inodes={scratch.inodes},mode=1777"
    _mount("tmpfs", first, "tmpfs", _MS_NOSUID | _MS_NODEV, options)
    for path in others:
        _mount(first, path, None, 0x1000 | _MS_NOSUID | _MS_NODEV, "")  # MS_BIND
    os.makedirs(workspace, exist_ok=True)  # a mount point inside the scratch, if covered
    _check(
        _libc.syscall(
            _SYS_MOVE_MOUNT, tree, b"", _AT_FDCWD, workspace.encode(), _MOVE_MOUNT_F_EMPTY_PATH
        ),
        "move_mount(workspace)",
    )
    os.close(tree)


__all__ = ["INODE_CHARGE", "SCRATCH_PATHS", "Scratch", "private_ipc", "private_scratch"]
