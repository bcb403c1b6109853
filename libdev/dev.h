/* dev.h — libdev: services exposed as devices over AF_UNIX SOCK_SEQPACKET
 * sockets (docs/architecture.md §3, docs/protocol.md).  Include this for everything.
 *
 * Server halves: status.h command.h query.h packet.h sensor.h
 * Client halves (GLib main loop, crashproof): status_reader.h caller.h
 *   packet_sub.h sensor_reader.h
 * Blocking helpers: link.h.  Paths: path.h.  Wire format: wire.h.
 * No threads: every object lives on the GMainContext it was given, and its
 * callbacks run there.  Link with build/libdev.a and glib-2.0.
 */
#ifndef CHORUS_DEV_H
#define CHORUS_DEV_H

#include "libdev/caller.h"
#include "libdev/command.h"
#include "libdev/common.h"
#include "libdev/link.h"
#include "libdev/packet.h"
#include "libdev/packet_sub.h"
#include "libdev/path.h"
#include "libdev/query.h"
#include "libdev/remote.h"
#include "libdev/sensor.h"
#include "libdev/sensor_reader.h"
#include "libdev/status.h"
#include "libdev/status_reader.h"
#include "libdev/wire.h"

#endif
