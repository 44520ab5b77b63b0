"""Memory another process shares by path, read from Python: a regular file,
or a BPF array map pinned on a bpffs (BPF_F_MMAPABLE, values end to end in
one region), as ipnumad and ipnuma-emu take the same paths
(common/mapped_region.h). The tests read BAR0 and the pool through it,
whichever they are.

  with open_region(path) as r:      # the whole file or map, mapped read-only
      r.read(off, n)
  read_bytes(path, off, n)          # the same, for one read
  is_bpffs(path)                    # a pin there, or a file?
"""
import ctypes
import mmap
import os
import platform
import struct

BPF_FS_MAGIC = 0xCAFE4A11
BPF_OBJ_GET, BPF_OBJ_GET_INFO_BY_FD = 7, 15
NR_BPF = {"x86_64": 321, "aarch64": 280}

_libc = ctypes.CDLL(None, use_errno=True)


def _bpf(cmd, attr):
    nr = NR_BPF.get(platform.machine())
    if nr is None:
        raise OSError(f"the bpf system call's number on {platform.machine()} is not known here")
    r = _libc.syscall(ctypes.c_long(nr), ctypes.c_int(cmd), attr, ctypes.c_uint(len(attr)))
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def is_bpffs(path):
    """True when path (or, when it does not exist, its directory) is on a bpffs."""
    if not os.path.exists(path):
        path = os.path.dirname(os.path.abspath(path))
    buf = ctypes.create_string_buffer(256)  # struct statfs; f_type first
    if _libc.statfs(os.fsencode(path), buf) != 0:
        return False
    return struct.unpack_from("l", buf)[0] & 0xFFFFFFFF == BPF_FS_MAGIC


def open_pin(path):
    """(fd, size) of the map pinned at path: BPF_OBJ_GET, then its value_size
    x max_entries from BPF_OBJ_GET_INFO_BY_FD. The caller closes fd."""
    name = ctypes.create_string_buffer(os.fsencode(path))
    attr = ctypes.create_string_buffer(struct.pack("=QII", ctypes.addressof(name), 0, 0), 16)
    try:
        fd = _bpf(BPF_OBJ_GET, attr)
    except OSError as e:
        raise OSError(e.errno, f"cannot open the BPF map pinned at {path}: {e.strerror}") from None
    try:
        info = ctypes.create_string_buffer(128)  # struct bpf_map_info's start
        q = ctypes.create_string_buffer(struct.pack("=IIQ", fd, len(info), ctypes.addressof(info)), 16)
        _bpf(BPF_OBJ_GET_INFO_BY_FD, q)
        # type, id, key_size, value_size, max_entries, map_flags
        _, _, _, value_size, max_entries, _ = struct.unpack_from("=6I", info)
        return fd, value_size * max_entries
    except BaseException:
        os.close(fd)
        raise


class Region:
    """The whole of what path names, mapped shared and read-only."""

    def __init__(self, path):
        if is_bpffs(path):
            fd, size = open_pin(path)
        else:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            size = os.fstat(fd).st_size
        try:
            self.map = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
        finally:
            os.close(fd)  # the mapping keeps the file or map

    def read(self, off, n):
        return self.map[off:off + n]

    def __len__(self):
        return len(self.map)

    def close(self):
        self.map.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()


def open_region(path):
    return Region(path)


def read_bytes(path, off, n):
    """n bytes at off of the file or pinned map at path (fewer past its end)."""
    with Region(path) as r:
        return r.read(off, n)
