// libffi for Swift. Swift 6 rejects direct use of libffi's mutable `ffi_type_*` globals,
// so each one is reached through a static inline accessor.
#ifndef BERTH_CFFI_SHIM_H
#define BERTH_CFFI_SHIM_H

#include <ffi.h>

static inline ffi_type *berth_ffi_type_void(void) { return &ffi_type_void; }
static inline ffi_type *berth_ffi_type_uint8(void) { return &ffi_type_uint8; }
static inline ffi_type *berth_ffi_type_sint8(void) { return &ffi_type_sint8; }
static inline ffi_type *berth_ffi_type_uint16(void) { return &ffi_type_uint16; }
static inline ffi_type *berth_ffi_type_sint16(void) { return &ffi_type_sint16; }
static inline ffi_type *berth_ffi_type_uint32(void) { return &ffi_type_uint32; }
static inline ffi_type *berth_ffi_type_sint32(void) { return &ffi_type_sint32; }
static inline ffi_type *berth_ffi_type_uint64(void) { return &ffi_type_uint64; }
static inline ffi_type *berth_ffi_type_sint64(void) { return &ffi_type_sint64; }
static inline ffi_type *berth_ffi_type_float(void) { return &ffi_type_float; }
static inline ffi_type *berth_ffi_type_double(void) { return &ffi_type_double; }
static inline ffi_type *berth_ffi_type_pointer(void) { return &ffi_type_pointer; }

/// The ABI libffi uses for ordinary C calls on this platform.
static inline ffi_abi berth_ffi_default_abi(void) { return FFI_DEFAULT_ABI; }

#endif
