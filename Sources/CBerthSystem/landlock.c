/*
 * Landlock and no_new_privs for the berth-worker sandbox (Docs/security.md). The kernel
 * headers of the build machine may predate the newer access bits, so the ones used here
 * are spelled out; the ruleset only ever handles the bits the running kernel's ABI knows.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "berth_system.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

/* Layouts from linux/landlock.h (ABI 1 … 7); the kernel accepts a shorter attr from an older writer. */
struct berth_landlock_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct berth_landlock_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

struct berth_landlock_net_port_attr {
    uint64_t allowed_access;
    uint64_t port;
};

enum {
    BERTH_LANDLOCK_RULE_PATH_BENEATH = 1,
    BERTH_LANDLOCK_CREATE_RULESET_VERSION = 1,
};

#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_REMOVE_DIR (1ULL << 4)
#define FS_REMOVE_FILE (1ULL << 5)
#define FS_MAKE_CHAR (1ULL << 6)
#define FS_MAKE_DIR (1ULL << 7)
#define FS_MAKE_REG (1ULL << 8)
#define FS_MAKE_SOCK (1ULL << 9)
#define FS_MAKE_FIFO (1ULL << 10)
#define FS_MAKE_BLOCK (1ULL << 11)
#define FS_MAKE_SYM (1ULL << 12)
#define FS_REFER (1ULL << 13)     /* ABI 2 */
#define FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define NET_BIND_TCP (1ULL << 0)  /* ABI 4 */
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define SCOPE_SIGNAL (1ULL << 1)

/* What a rule may allow on a regular file (the kernel refuses directory-only bits there). */
#define FS_FILE_ACCESS (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)

static uint64_t handled_fs(int abi) {
    uint64_t access = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR | FS_REMOVE_FILE |
                      FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM;
    if (abi >= 2) access |= FS_REFER;
    if (abi >= 3) access |= FS_TRUNCATE;
    if (abi >= 5) access |= FS_IOCTL_DEV;
    return access;
}

int berth_landlock_abi(void) {
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, BERTH_LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? -errno : (int)abi;
}

int berth_landlock_create(int abi, int confine_network) {
    struct berth_landlock_ruleset_attr attr = {0};
    size_t size = sizeof attr.handled_access_fs;
    attr.handled_access_fs = handled_fs(abi);
    if (abi >= 4) {
        size = offsetof(struct berth_landlock_ruleset_attr, scoped);
        if (confine_network) attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
    }
    if (abi >= 6) {
        size = sizeof attr;
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
    }
    long fd = syscall(__NR_landlock_create_ruleset, &attr, size, 0);
    return fd < 0 ? -errno : (int)fd;
}

int berth_landlock_allow(int ruleset, int abi, const char *path, int kind) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return errno;
    struct stat info;
    if (fstat(fd, &info) != 0) {
        int failure = errno;
        close(fd);
        return failure;
    }
    /* Never FS_EXECUTE: a worker runs no program, and mapping a library needs no execute
     * right. Never a device: no character or block node is made (a node for a disk would
     * be the disk), and no ioctl reaches a device through a granted path. */
    uint64_t never = FS_EXECUTE | FS_MAKE_CHAR | FS_MAKE_BLOCK | FS_IOCTL_DEV;
    uint64_t access = kind == BERTH_SANDBOX_READ_WRITE ? handled_fs(abi) & ~never : FS_READ_FILE | FS_READ_DIR;
    if (!S_ISDIR(info.st_mode)) access &= FS_FILE_ACCESS;
    struct berth_landlock_path_beneath_attr rule = {.allowed_access = access & handled_fs(abi), .parent_fd = fd};
    long status = syscall(__NR_landlock_add_rule, ruleset, BERTH_LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    int failure = status == 0 ? 0 : errno;
    close(fd);
    return failure;
}

int berth_set_no_new_privs(void) {
    return prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) == 0 ? 0 : errno;
}

int berth_landlock_enforce(int ruleset) {
    long status = syscall(__NR_landlock_restrict_self, ruleset, 0);
    int failure = status == 0 ? 0 : errno;
    close(ruleset);
    return failure;
}

struct image_search {
    uintptr_t address;
    const char *path;
};

static int find_image(struct dl_phdr_info *image, size_t size, void *argument) {
    (void)size;
    struct image_search *search = argument;
    for (int index = 0; index < image->dlpi_phnum; index++) {
        const ElfW(Phdr) *segment = &image->dlpi_phdr[index];
        if (segment->p_type != PT_LOAD) continue;
        uintptr_t start = image->dlpi_addr + segment->p_vaddr;
        if (search->address >= start && search->address < start + segment->p_memsz) {
            search->path = image->dlpi_name;
            return 1;
        }
    }
    return 0;
}

const char *berth_image_path_of_symbol(const char *symbol) {
    void *address = dlsym(RTLD_DEFAULT, symbol);
    if (address == NULL) return NULL;
    /* The image whose segments hold the address (dladdr would also look for the nearest
     * symbol, a scan of the image's whole symbol table: about 0.15 ms for libswiftCore). */
    struct image_search search = {(uintptr_t)address, NULL};
    dl_iterate_phdr(find_image, &search);
    return search.path != NULL && search.path[0] != '\0' ? search.path : NULL;
}

int berth_thread_count(void) {
    struct stat info;
    if (stat("/proc/self/task", &info) != 0) return -errno;
    /* A directory's link count is 2 + its sub-directories: one per thread. */
    return (int)info.st_nlink - 2;
}
