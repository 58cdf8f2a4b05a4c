#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>

#include "berth_system.h"

int berth_sealable_memory_file(const char *name) {
    return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

int berth_seal_memory_file(int descriptor) {
    return fcntl(descriptor, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
}
