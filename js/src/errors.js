// Errors raised by the package: the C status name in `.code` (e.g.
// 'OL_INVALID_ARGUMENT') and the C library's message (or the JS layer's own,
// phrased the same way).

export class OnnxLightError extends Error {
  /**
   * @param {string} code C status name ('OL_INVALID_MODEL', ...)
   * @param {string} message what went wrong, naming the offending value
   */
  constructor(code, message) {
    super(message || code);
    this.name = 'OnnxLightError';
    this.code = code;
  }
}

/** An OL_INVALID_ARGUMENT error raised by the JS layer. */
export function invalidArgument(message) {
  return new OnnxLightError('OL_INVALID_ARGUMENT', message);
}
