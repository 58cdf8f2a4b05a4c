/* A hostile plugin for the sandbox's attack suite (Tests/BerthRuntimeTests/AttackTests.swift). */
#ifndef BERTH_ATTACKER_H
#define BERTH_ATTACKER_H
#include <berth.h>

const berth_plugin_v1 *berth_attacker_entry_v1(const berth_host_v1 *host, berth_plugin_handle *plugin);
int32_t attack_unix_connect(const char *path);
int32_t attack_tiocsti(void);
int32_t attack_own_session(void);
int32_t attack_getenv(const char *name);
int32_t attack_effective_capabilities(void);
int32_t attack_bounding_capabilities(void);
int32_t attack_mknod(void);
int32_t attack_fork(void);
int32_t attack_clone3(void);
int32_t attack_thread(void);
int32_t attack_socket(int32_t domain, int32_t type);
int32_t attack_udp(int32_t port);
int32_t attack_execve(const char *path);
int32_t attack_memfd_exec(void);
int32_t attack_allocate(int32_t mebibytes);
int32_t attack_descriptor_open(const char *marker);
int32_t attack_oom_score_adj(void);
int32_t attack_sigsys_handler(void);
int32_t attack_spin(int32_t milliseconds);
int32_t attack_prlimit(int32_t pid, int32_t resource);
int32_t attack_kill(int32_t pid, int32_t signal);
int32_t attack_io_uring(void);
int32_t attack_socketpair_sendto(const char *path);
int32_t attack_socket_protocol(int32_t domain, int32_t type, int32_t protocol);
int32_t attack_list_unix_sockets(const char *marker);
int32_t attack_chmod(const char *path);
int32_t attack_fchmod(const char *path);
int32_t attack_utimensat(const char *path);
int32_t attack_setxattr(const char *path);
int32_t attack_keyring(void);
int32_t attack_threads(int32_t count);
int32_t attack_shared_memory(int32_t mebibytes);
int32_t attack_fallocate(int32_t mebibytes);
int32_t attack_read(const char *path);
int32_t attack_own_pid(void);
int32_t attack_parent_pid(void);
int32_t attack_process_exists(int32_t pid);

#endif
