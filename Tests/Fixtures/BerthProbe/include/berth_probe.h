/* A plugin that tries host services and OS resources, for the capability and sandbox tests. */
#ifndef BERTH_PROBE_H
#define BERTH_PROBE_H
#include <berth.h>

const berth_plugin_v1 *berth_probe_entry_v1(const berth_host_v1 *host, berth_plugin_handle *plugin);
const berth_plugin_v1 *berth_probe_other_entry_v1(const berth_host_v1 *host, berth_plugin_handle *plugin);
int32_t probe_read(const char *path);
int32_t probe_write(const char *path);
int32_t probe_write_data(const char *name);
int32_t probe_connect(int32_t port);
int32_t probe_recalled_length(void);
int32_t probe_last_status(void);
int32_t probe_exec(const char *path);
int32_t probe_signal(int32_t pid);

#endif
