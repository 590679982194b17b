// The package version; equals OL_VERSION in c/include/onnxlight.h and the
// "version" in package.json (tests/js checks all three).
export const version = '0.1.0';
