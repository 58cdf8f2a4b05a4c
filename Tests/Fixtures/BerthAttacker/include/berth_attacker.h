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

#endif
