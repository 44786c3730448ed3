"""Copies Bochs 2.7's emulator binary with its GF2P8AFFINEQB/GF2P8AFFINEINVQB handlers fixed.

Bochs 2.7 computes each result bit of those instructions from a 16-entry nibble parity
table held in a register as the constant 0x9669, which is the even-parity table (the
one the PF flag needs); the instructions need odd parity (0x6996), so every result byte
comes out complemented. This swaps the constant's two bytes in the four handlers, and
refuses to write anything unless it finds exactly those four constants.

    python3 patch-bochs.py /usr/bin/bochs-bin OUT
"""
import re, struct, subprocess, sys
src, dst = sys.argv[1], sys.argv[2]
data = bytearray(open(src, 'rb').read())
syms = {}
for line in subprocess.run(['nm', '-D', '--defined-only', src], capture_output=True, text=True).stdout.splitlines():
    parts = line.split()
    if len(parts) == 3 and parts[1] in 'Tt':
        syms[parts[2]] = int(parts[0], 16)
starts = sorted(set(syms.values()))
# Program headers: map virtual addresses to file offsets.
phoff, = struct.unpack_from('<Q', data, 0x20)
phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
loads = []
for i in range(phnum):
    p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from('<IIQQQQ', data, phoff + i * phentsize)
    if p_type == 1:
        loads.append((p_vaddr, p_offset, p_filesz))
def off(va):
    for v, o, n in loads:
        if v <= va < v + n:
            return va - v + o
    raise SystemExit('address outside the file')
patched = 0
for name, va in syms.items():
    if 'GF2P8AFFINE' not in name:
        continue
    end = next(s for s in starts if s > va)
    a, b = off(va), off(end)
    body = bytes(data[a:b])
    for m in re.finditer(rb'\x69\x96\x00\x00', body):
        data[a + m.start():a + m.start() + 2] = b'\x96\x69'
        patched += 1
if patched != 4:
    raise SystemExit(f'expected 4 parity constants in the GF2P8AFFINE handlers, found {patched}')
open(dst, 'wb').write(data)
