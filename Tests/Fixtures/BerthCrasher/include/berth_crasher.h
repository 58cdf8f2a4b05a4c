/* A plugin that crashes on purpose, for the isolation tests. */
#ifndef BERTH_CRASHER_H
#define BERTH_CRASHER_H
#include <berth.h>

const berth_plugin_v1 *berth_crasher_entry_v1(const berth_host_v1 *host, berth_plugin_handle *plugin);
const berth_plugin_v1 *berth_crasher_entry_segv(const berth_host_v1 *host, berth_plugin_handle *plugin);
const berth_plugin_v1 *berth_crasher_entry_gate(const berth_host_v1 *host, berth_plugin_handle *plugin);
int32_t crasher_add(int32_t a, int32_t b);
int32_t crasher_segv(void);
int32_t crasher_abort(void);
int32_t crasher_exit(void);
int32_t crasher_hang(void);
int32_t crasher_queue_on_main(void);
int32_t crasher_main_queue_runs(void);

#endif
