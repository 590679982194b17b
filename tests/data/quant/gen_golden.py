#!/usr/bin/env python3
"""Generates the golden portable quantization payloads in this directory.

An independent, stdlib-only implementation of the self-contained raw_data
layout (wire-facts section 3.5): reserved byte, permutation, forward/inverse,
outliers, then per block scale, zero point, offset, codebook and packed codes.
tests/c/test_quant_errors.c encodes the same inputs with the C codec and
compares bytes, then decodes these files. The *.encoded.pb files hold whole
serialized EncodedValueProto messages (inline StructTypeProto descriptor,
logical type, raw_data, name) written by the small proto2 writer below;
tests/c/test_quant_wire.c compares them with ol_quant_encode_proto. Run from anywhere:

    python3 tests/data/quant/gen_golden.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
NF4 = [-1, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
       -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0,
       0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
       0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1]
TERNARY = [-1, 0, 1]


def pack_bits(codes, bits):
    out, buf, avail = bytearray(), 0, 0
    for c in codes:
        buf |= c << avail
        avail += bits
        while avail >= 8:
            out.append(buf & 255)
            buf >>= 8
            avail -= 8
    if avail:
        out.append(buf)
    return bytes(out)


def pack_base3(codes):
    out = bytearray()
    for i in range(0, len(codes), 5):
        out.append(sum(c * 3 ** k for k, c in enumerate(codes[i:i + 5])))
    return bytes(out)


def affine_codes(values, bits, signed, scale, zp, offset):
    lo = -(1 << (bits - 1)) if signed else 0
    hi = lo + (1 << bits) - 1
    codes = []
    for v in values:
        x = min(max((v - offset) / scale + zp, lo), hi)
        codes.append(round(x) & ((1 << bits) - 1))  # round() is half-to-even
    return codes


def nearest(values, table, scale):
    codes = []
    for v in values:
        r = v / scale
        best = min(range(len(table)), key=lambda e: ((r - table[e]) ** 2, e))
        codes.append(best)
    return codes


def header(perm=(), n=0, fwd=(), inv=(), outliers=(), exceptions=()):
    out = b"\0"
    out += b"".join(struct.pack("<q", i) for i in perm)
    out += b"".join(struct.pack("<d", v) for v in list(fwd) + list(inv))
    out += b"".join(struct.pack("<q", i) for i in outliers)
    out += b"".join(struct.pack("<d", v) for v in exceptions)
    return out


def block(scale, zp=0.0, offset=0.0, table=()):
    return struct.pack("<3d", scale, zp, offset) + b"".join(struct.pack("<d", v) for v in table)


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    print(name, len(data), "bytes")


# ---- minimal proto2 writer (fields in field-number order, as protobuf does)

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 127
        n >>= 7
        out.append(b | (128 if n else 0))
        if not n:
            return bytes(out)


def vfield(number, value):
    return varint(number << 3) + varint(value)


def lfield(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def tensor_type(dtype, dims):
    shape = b"".join(lfield(1, vfield(1, d)) for d in dims)
    return lfield(1, vfield(1, dtype) + lfield(2, shape))  # TypeProto.tensor_type


def int64_constant(values, dims):
    return (b"".join(vfield(1, d) for d in dims) + vfield(2, 7) +
            lfield(7, b"".join(varint(v) for v in values)))


def field(name, type_proto=None, constant=None):
    out = lfield(1, name.encode())
    if type_proto is not None:
        out += lfield(2, type_proto)
    if constant is not None:
        out += lfield(4, constant)
    return out


def structure(fields, name=None):
    out = lfield(2, b"".join(lfield(1, f) for f in fields))
    if name is not None:
        out += lfield(7, name.encode())
    return out


def struct_type(st):
    return lfield(1000, st)  # TypeProto.struct_type


UINT8, INT64, DOUBLE, FLOAT16, FLOAT = 2, 7, 11, 10, 1


def portable_descriptor(profile, runs, perm=0, n=0, outliers=0):
    """runs: list of (dimension, header[9], table_size, code_bytes)."""
    blocks = [field("count", constant=int64_constant([sum(r[0] for r in runs)], []))]
    first = 0
    for dimension, header, table, codes in runs:
        item = structure([
            field("parameters", constant=int64_constant(header, [9])),
            field("scale", tensor_type(DOUBLE, [])),
            field("zero_point", tensor_type(DOUBLE, [])),
            field("offset", tensor_type(DOUBLE, [])),
            field("codebook", tensor_type(DOUBLE, [table])),
            field("codes", tensor_type(UINT8, [codes])),
        ])
        array = lfield(1, lfield(1, struct_type(item)) + vfield(2, dimension))
        blocks.append(field("run_%d" % first, struct_type(array)))
        first += dimension
    return structure([
        field("reserved", tensor_type(UINT8, [1])),
        field("permutation", tensor_type(INT64, [perm])),
        field("forward", tensor_type(DOUBLE, [n, n])),
        field("inverse", tensor_type(DOUBLE, [n, n])),
        field("outlier_indices", tensor_type(INT64, [outliers])),
        field("outlier_values", tensor_type(DOUBLE, [outliers])),
        field("blocks", struct_type(structure(blocks))),
    ], "onnx_light.quantization.v1/" + profile)


def encoded_value(descriptor, dtype, dims, raw, name):
    return (lfield(2, descriptor) + lfield(3, tensor_type(dtype, dims)) + lfield(4, raw) +
            lfield(7, name.encode()))


def main():
    # int4: 7 values, blocks of 4 (a full run and a tail run), scales 0.5 and 1.
    v = [-4, 0, 3.5, -1.25, 7, -8, 2.5]
    data = header()
    for part, scale in ((v[:4], 0.5), (v[4:], 1.0)):
        data += block(scale) + pack_bits(affine_codes(part, 4, True, scale, 0, 0), 4)
    write("int4_two_runs.bin", data)
    # The whole EncodedValueProto for the same value (name "weights", FLOAT [7]).
    descriptor = portable_descriptor("int4", [(1, [4, 0, 4, 1, 1, 0, 1, 0, FLOAT16], 0, 2),
                                               (1, [3, 0, 4, 1, 1, 0, 1, 0, FLOAT16], 0, 2)])
    write("int4_two_runs.encoded.pb", encoded_value(descriptor, FLOAT, [7], data, "weights"))

    # q4_k: 6 values in one block, scale 0.25, offset 0.125 (signed 4-bit).
    v = [-2, -0.5, 0.125, 0.3, 1.9, 5]
    write("q4_k_offset.bin",
          header() + block(0.25, 0, 0.125) + pack_bits(affine_codes(v, 4, True, 0.25, 0, 0.125), 4))

    # gptq: unsigned 4-bit, zero point 8, scale 0.1, 5 values.
    v = [-0.8, -0.05, 0, 0.25, 0.9]
    write("gptq_zero_point.bin",
          header() + block(0.1, 8) + pack_bits(affine_codes(v, 4, False, 0.1, 8, 0), 4))

    # nf4: 8 values, scale 2, the fixed table stored in the block.
    v = [-2, -1.3, -0.2, 0, 0.1, 0.5, 1.5, 2]
    data = header() + block(2.0, table=NF4) + pack_bits(nearest(v, NF4, 2.0), 4)
    write("nf4.bin", data)
    descriptor = portable_descriptor("nf4", [(1, [8, 1, 4, 0, 1, 16, 1, 0, FLOAT16], 16, 4)])
    write("nf4.encoded.pb", encoded_value(descriptor, FLOAT, [2, 4], data, "nf4_weights"))

    # ternary: 7 values, base-3 packing (5 per byte), scale 0.75.
    v = [-1, 0.2, 0.5, -0.3, 0.9, -0.8, 0.1]
    write("ternary_base3.bin",
          header() + block(0.75, table=TERNARY) + pack_base3(nearest(v, TERNARY, 0.75)))

    # tiled_float with FLOAT16 casts, a permutation and one outlier.
    v = [1.5, 1000.0, -2.25, 0.1]
    perm = [3, 2, 1, 0]
    work = list(v)
    work[1] = 0.0
    work = [work[p] for p in perm]
    data = header(perm=perm, outliers=[1], exceptions=[1000.0]) + block(1.0)
    data += b"".join(struct.pack("<e", struct.unpack("<f", struct.pack("<f", x))[0]) for x in work)
    write("tiled_float_f16_perm_outlier.bin", data)
    descriptor = portable_descriptor("tiled_float", [(1, [4, 2, 4, 1, 1, 0, 1, 0, FLOAT16], 0, 8)],
                                     perm=4, outliers=1)
    write("tiled_float_f16_perm_outlier.encoded.pb",
          encoded_value(descriptor, FLOAT, [2, 2], data, "tiles"))


if __name__ == "__main__":
    main()
