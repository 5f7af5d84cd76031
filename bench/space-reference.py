#!/usr/bin/env python3
"""bench/space-reference.py: the space scan's compression figures against the C libraries.

    bench/space-reference.py DIR [BLOCK [KEEP_BELOW]]     # defaults 4096 and 0.5

Reads every regular file under DIR as `tierbench space --target DIR` does (blocks of BLOCK bytes, the last one
of a file padded with zeros; zero blocks skipped, duplicates by hash counted once) and compresses each unique
block with the C reference libraries that the lz4 and zstd tools use, through ctypes (liblz4.so.1,
libzstd.so.1; no -dev package needed): LZ4_compress_default (LZ4_compress_fast at acceleration 1) and
ZSTD_compress at level 1 (a frame without checksum, as the scan counts it). Each block is kept compressed when
its compressed size is at most floor(KEEP_BELOW x BLOCK), else stored whole: the scan's rule. It prints, per
algorithm, the blocks kept compressed, the bytes stored and the ratio, to set beside
`tierbench space --target DIR --block BLOCK --keep-below KEEP_BELOW --zstd-sample 1 --json` (every unique
block through zstd, so that both figures are exact). docs/space.md has the figures measured with it.
"""
import ctypes
import hashlib
import os
import sys

if len(sys.argv) < 2:
    sys.exit(__doc__)
root = sys.argv[1]
bs = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
keep_max = int(float(sys.argv[3]) * bs) if len(sys.argv) > 3 else bs // 2

lz4 = ctypes.CDLL("liblz4.so.1")
lz4.LZ4_compress_default.restype = ctypes.c_int
lz4.LZ4_compress_default.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
lz4.LZ4_versionString.restype = ctypes.c_char_p
zstd = ctypes.CDLL("libzstd.so.1")
zstd.ZSTD_compress.restype = ctypes.c_size_t
zstd.ZSTD_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
zstd.ZSTD_versionString.restype = ctypes.c_char_p

dst = ctypes.create_string_buffer(2 * bs + 1024)
zero = bytes(bs)
seen = set()
blocks = zeros = 0
stored = {"lz4": [0, 0], "zstd": [0, 0]}  # bytes stored, blocks kept compressed
for d, _, files in os.walk(root):
    for name in files:
        path = os.path.join(d, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            while b := f.read(bs):
                b = b.ljust(bs, b"\0")
                blocks += 1
                if b == zero:
                    zeros += 1
                    continue
                h = hashlib.blake2b(b, digest_size=16).digest()
                if h in seen:
                    continue
                seen.add(h)
                for algo, n in (("lz4", lz4.LZ4_compress_default(b, dst, bs, len(dst))),
                                ("zstd", zstd.ZSTD_compress(dst, len(dst), b, bs, 1))):
                    if 0 < n <= keep_max:
                        stored[algo][0] += n
                        stored[algo][1] += 1
                    else:
                        stored[algo][0] += bs
unique = len(seen)
print(f"liblz4 {lz4.LZ4_versionString().decode()}, libzstd {zstd.ZSTD_versionString().decode()}; "
      f"{blocks} blocks of {bs} bytes: {zeros} zero, {unique} unique; kept compressed at most {keep_max} bytes")
for algo, (n, kept) in stored.items():
    print(f"{algo:5} compressed_blocks {kept:9d}  stored_bytes {n:12d}  ratio {unique * bs / n if n else 1:.4f}")
