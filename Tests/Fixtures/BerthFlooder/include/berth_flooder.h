/* A plugin that floods the host with what it may send: state, log lines, a sibling's handle
 * (Tests/BerthRuntimeTests/HostBoundsTests.swift, GroupConsentTests.swift). */
#ifndef BERTH_FLOODER_H
#define BERTH_FLOODER_H
#include <berth.h>

const berth_plugin_v1 *berth_flooder_entry_v1(const berth_host_v1 *host, berth_plugin_handle *plugin);
int32_t flooder_forged_member(void);

#endif
