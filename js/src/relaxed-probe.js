// Known-answer probe for relaxed SIMD: whether this engine runs the 8-bit
// dot products with the standard semantics: i16x8.relaxed_dot_i8x16_i7x16_s,
// the one the relaxed module (onnx_light_relaxed.wasm) uses, and
// i32x4.relaxed_dot_i8x16_i7x16_add_s, which tells a pre-standard
// implementation apart. Validation alone is not enough: Node 20 behind
// --experimental-wasm-relaxed-simd accepts both and returns another result
// for the second. So a small module computes both into its memory and the
// results are compared with the sums computed here; any failure means "no".

// a: signed bytes (both signs, -128 included), b: 0..127 (the range the
// kernels use, where the instruction is deterministic), c: the addend
const A = [1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -128];
const B = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 127];
const C = [1000, 2000, 3000, 4000];

const bytes16 = (values) => values.map((v) => v & 0xff);
const bytes32 = (values) => values.flatMap((v) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >>> 24) & 0xff]);

/**
 * (module (memory (export "m") 1)
 *   (func (export "p")
 *     (v128.store (i32.const 0)
 *       (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.const A) (v128.const B) (v128.const C)))
 *     (v128.store (i32.const 16) (i16x8.relaxed_dot_i8x16_i7x16_s (v128.const A) (v128.const B)))))
 */
function probeBytes() {
  const v128 = (bytes) => [0xfd, 0x0c, ...bytes];
  const body = [
    0x00, // no locals
    0x41, 0x00, // i32.const 0
    ...v128(bytes16(A)),
    ...v128(bytes16(B)),
    ...v128(bytes32(C)),
    0xfd, 0x93, 0x02, // i32x4.relaxed_dot_i8x16_i7x16_add_s (0xfd 275)
    0xfd, 0x0b, 0x04, 0x00, // v128.store align=16 offset=0
    0x41, 0x10, // i32.const 16
    ...v128(bytes16(A)),
    ...v128(bytes16(B)),
    0xfd, 0x92, 0x02, // i16x8.relaxed_dot_i8x16_i7x16_s (0xfd 274)
    0xfd, 0x0b, 0x04, 0x00, // v128.store align=16 offset=0
    0x0b, // end
  ];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
    0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type section: () -> ()
    0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
    0x05, 0x03, 0x01, 0x00, 0x01, // memory section: one memory, 1 page
    0x07, 0x09, 0x02, 0x01, 0x6d, 0x02, 0x00, 0x01, 0x70, 0x00, 0x00, // exports "m" (memory 0), "p" (func 0)
    0x0a, body.length + 2, 0x01, body.length, ...body, // code section: one body (sizes < 128: one LEB byte)
  ]);
}

/**
 * The standard results: the four i32 lanes C[i] + the sum of A[4i + k] *
 * B[4i + k] (k < 4), then the eight i16 lanes A[2j] * B[2j] + A[2j + 1] * B[2j + 1].
 */
export function expectedDot() {
  const i32 = C.map((c, i) => c + A.slice(4 * i, 4 * i + 4).reduce((sum, a, k) => sum + a * B[4 * i + k], 0));
  const i16 = Array.from({ length: 8 }, (_, j) => A[2 * j] * B[2 * j] + A[2 * j + 1] * B[2 * j + 1]);
  return [...i32, ...i16];
}

/** Runs the probe: the lanes it computed (as expectedDot), or null when the engine rejects it. */
export function probeDot() {
  try {
    const bytes = probeBytes();
    if (!WebAssembly.validate(bytes)) return null;
    const { exports } = new WebAssembly.Instance(new WebAssembly.Module(bytes));
    exports.p();
    return [...new Int32Array(exports.m.buffer, 0, 4), ...new Int16Array(exports.m.buffer, 16, 8)];
  } catch {
    return null;
  }
}

let supported;
/** True when this engine runs the relaxed dot product with the standard result (probed once). */
export function relaxedSimdSupported() {
  if (supported === undefined) {
    const got = probeDot();
    const want = expectedDot();
    supported = got !== null && got.every((v, i) => v === want[i]);
  }
  return supported;
}
