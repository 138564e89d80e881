"""Shrink a cuTENSOR library to one GPU architecture, so it can travel to a test machine.

    python3 tools/slim_cutensor.py libcutensor.so.2 libcutensor_sm90.so.2 [--keep 90]
    xz -9e libcutensor_sm90.so.2          # 323 MB -> ~30 MiB for cuTENSOR 2.8.1

libcutensor.so.2 (PyPI: cutensor-cu13) carries device code for every SM architecture in
fatbin containers (sections .nv_fatbin and .cask_resource). This zeroes the payload of
every entry for another architecture, keeping all headers and sizes, so the library
still loads and the CUDA runtime still finds the kept entries; the zeros compress to
nothing. PTX for older architectures in .nv_fatbin is kept (the driver may JIT it).
Used to test hipfer's cuTENSOR bindings on the device (see docs/einsum.md).
"""
import argparse
import collections
import re
import struct

MAGIC = 0xBA55ED50


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--keep", type=int, action="append", help="SM architecture to keep (90)")
    args = ap.parse_args()
    keep_arch = set(args.keep or [90])
    f = bytearray(open(args.src, "rb").read())
    e_shoff = struct.unpack_from("<Q", f, 0x28)[0]
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", f, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQ", f, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    stroff = hdrs[e_shstrndx][4]
    secs = {}
    for name, _typ, _flags, _addr, off, size in hdrs:
        secs[f[stroff + name:f.index(b"\0", stroff + name)].decode()] = (off, size)

    def parse_container(pos, end):
        """Entries (kind, arch, payload offset, payload size) of the container at pos,
        or None when the magic number there is not the start of one."""
        magic, ver, hsz, fsz = struct.unpack_from("<IHHQ", f, pos)
        if magic != MAGIC or ver != 1 or hsz != 16 or pos + hsz + fsz > end:
            return None
        p, cend, ents = pos + hsz, pos + hsz + fsz, []
        while p < cend:
            kind, _ever, ehsz, psz = struct.unpack_from("<HHIQ", f, p)
            if kind not in (1, 2) or ehsz < 32 or p + ehsz + psz > cend:
                return None
            ents.append((kind, struct.unpack_from("<I", f, p + 28)[0], p + ehsz, psz))
            p += ehsz + psz
        return ents if p == cend else None

    stats = collections.Counter()
    for sec in (".nv_fatbin", ".cask_resource"):
        if sec not in secs:
            continue
        off, size = secs[sec]
        for m in re.finditer(re.escape(struct.pack("<I", MAGIC)), bytes(f[off:off + size])):
            ents = parse_container(off + m.start(), off + size)
            if ents is None:
                continue
            for kind, arch, p, psz in ents:  # kind 1: PTX, 2: ELF (SASS)
                if arch in keep_arch or (kind == 1 and arch < min(keep_arch) and sec == ".nv_fatbin"):
                    stats["kept"] += psz
                else:
                    f[p:p + psz] = bytes(psz)
                    stats["zeroed"] += psz
    open(args.dst, "wb").write(f)
    print(f"kept {stats['kept']} payload bytes, zeroed {stats['zeroed']}")


if __name__ == "__main__":
    main()
