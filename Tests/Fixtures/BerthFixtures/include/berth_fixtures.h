/* Test fixture library: odd entry points for handshake tests, one echo export per type. */
#ifndef BERTH_FIXTURES_H
#define BERTH_FIXTURES_H
#include "berth.h"
#endif
