// The floor of an export call: what a C host does with libffi when it prepares the call
// interface once and keeps it (the P3 baseline in Docs/benchmarks.md).
#ifndef BERTH_BENCH_RAW_FFI_H
#define BERTH_BENCH_RAW_FFI_H

#include <stdint.h>

/// A prepared `int32_t f(int32_t, int32_t)` call site: the cif, its argument types and
/// the argument slots, made once.
typedef struct bench_raw_ffi_site bench_raw_ffi_site;

/// Prepares a site for `function`; NULL when libffi refuses the signature.
bench_raw_ffi_site *bench_raw_ffi_prepare(void *function);

/// One `ffi_call` through the prepared site.
int32_t bench_raw_ffi_call(bench_raw_ffi_site *site, int32_t left, int32_t right);

void bench_raw_ffi_free(bench_raw_ffi_site *site);

#endif
