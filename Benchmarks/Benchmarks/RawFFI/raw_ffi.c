#include "raw_ffi.h"

#include <ffi.h>
#include <stdlib.h>

struct bench_raw_ffi_site {
    ffi_cif cif;
    ffi_type *types[2];
    void *function;
};

bench_raw_ffi_site *bench_raw_ffi_prepare(void *function) {
    bench_raw_ffi_site *site = calloc(1, sizeof *site);
    if (site == NULL) return NULL;
    site->types[0] = &ffi_type_sint32;
    site->types[1] = &ffi_type_sint32;
    site->function = function;
    if (ffi_prep_cif(&site->cif, FFI_DEFAULT_ABI, 2, &ffi_type_sint32, site->types) != FFI_OK) {
        free(site);
        return NULL;
    }
    return site;
}

int32_t bench_raw_ffi_call(bench_raw_ffi_site *site, int32_t left, int32_t right) {
    void *values[2] = {&left, &right};
    ffi_arg result = 0;
    ffi_call(&site->cif, FFI_FN(site->function), &result, values);
    return (int32_t)result;
}

void bench_raw_ffi_free(bench_raw_ffi_site *site) { free(site); }
