// QuantizationFormat: the catalogue's profiles as enum members (seed 003:
// "Pass a QuantizationFormat enum ... The factory and plan.format do not
// accept strings or integers"). Members are frozen objects read from the C
// catalogue (ol_quant_format_get_info) when the wasm module loads; a plain
// number or string is rejected wherever a format is expected.
import { OnnxLightError, invalidArgument } from './errors.js';
import { currentRuntime, onLoad } from './runtime.js';

/** One profile: name 'INT4' (the enum name), value 2 (its catalogue position). */
class QuantizationFormatMember {
  constructor(name, value) {
    this.name = name;
    this.value = value;
    Object.freeze(this);
  }

  toString() {
    return `QuantizationFormat.${this.name}`;
  }
}

// Upper-case profile name -> member, filled when the wasm module loads, then frozen.
const formatTable = {};

const notLoaded = () =>
  new OnnxLightError('OL_FAILED_PRECONDITION', 'QuantizationFormat comes from the onnx-light wasm module: await init() first');

/**
 * Upper-case profile name -> member (QuantizationFormat.INT4.value === 2),
 * read from the C catalogue once the wasm module is loaded; reading a profile
 * before that throws (instead of giving undefined).
 */
export const QuantizationFormat = new Proxy(formatTable, {
  get(target, key, receiver) {
    if (typeof key === 'string' && !Object.isFrozen(target)) throw notLoaded();
    return Reflect.get(target, key, receiver);
  },
  ownKeys(target) {
    if (!Object.isFrozen(target)) throw notLoaded();
    return Reflect.ownKeys(target);
  },
});

/** The C catalogue, one row per format: { member, name, enumName, method, bits, matmulNBits }. */
let profiles = [];
/** Method names by wire value ('affine', 'codebook', 'cast'). */
export let methods = [];

onLoad((runtime) => {
  const m = runtime.m;
  methods = [];
  for (let i = 0; m._olw_quant_method_name(i); i++) methods.push(runtime.string(m._olw_quant_method_name(i)));
  profiles = runtime.scratch(20, (out) =>
    Array.from({ length: m._olw_quant_format_count() }, (_, format) => {
      runtime.check(m._olw_quant_format_info(format, out, out + 8));
      const [name, enumName] = [runtime.string(runtime.u32(out)), runtime.string(runtime.u32(out + 4))];
      const [method, bits, matmulNBits] = [0, 1, 2].map((i) => runtime.i32(out + 8 + 4 * i));
      const member = new QuantizationFormatMember(enumName, format);
      return Object.freeze({ member, name, enumName, method: methods[method], bits, matmulNBits: matmulNBits !== 0 });
    }),
  );
  profiles.forEach((row) => (formatTable[row.enumName] = row.member));
  Object.freeze(formatTable);
});

/** What a non-member is, for the error message. */
function describe(value) {
  if (typeof value === 'number') return `the number ${value} (formats are enum members such as QuantizationFormat.INT4, not integers)`;
  if (typeof value === 'string') return `the string '${value}' (convert wire names with parseQuantizationFormat)`;
  return value === null ? 'null' : typeof value;
}

/** Internal: the catalogue position of a QuantizationFormat member (throws for anything else). */
export function formatCode(format, what = 'quantization format') {
  currentRuntime(); // the catalogue comes from the loaded module
  if (!(format instanceof QuantizationFormatMember) || profiles[format.value]?.member !== format) {
    throw invalidArgument(`${what}: expected a QuantizationFormat member, got ${describe(format)}`);
  }
  return format.value;
}

/** Internal: the member at a catalogue position the C library reported. */
export function formatOfCode(code) {
  return profiles[code].member;
}

/** Internal: the C catalogue row of a format (throws for anything but a member). */
export function formatInfo(format, what = 'quantization format') {
  return profiles[formatCode(format, what)];
}

/** All formats in catalogue order. */
export function quantizationFormats() {
  currentRuntime();
  return profiles.map((row) => row.member);
}

/** The stable wire name of a format ('int4', 'ort_matmulnbits_int4'). */
export function quantizationFormatName(format) {
  return formatInfo(format, 'quantizationFormatName').name;
}

/** The format of a wire name; case-sensitive, throws OnnxLightError for unknown names. */
export function parseQuantizationFormat(name) {
  if (typeof name !== 'string') throw invalidArgument(`parseQuantizationFormat: expected a string, got ${typeof name}`);
  const runtime = currentRuntime();
  const text = runtime.cstring(name);
  try {
    return runtime.scratch(4, (out) => {
      runtime.check(runtime.m._olw_quant_format_parse(text, out));
      return formatOfCode(runtime.i32(out));
    });
  } finally {
    runtime.free(text);
  }
}
