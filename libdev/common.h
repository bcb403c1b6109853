/* common.h — what every libdev device shares: peer credentials, creation
 * options (socket mode, owner group, write policy, queue and chunk sizes),
 * the client state callback and the error domain.
 */
#ifndef CHORUS_DEV_COMMON_H
#define CHORUS_DEV_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "libdev/wire.h"

/* Credentials of a client, from SO_PEERCRED at accept. */
typedef struct {
	pid_t pid;
	uid_t uid;
	gid_t gid;
} dev_creds;

/* Room for the reason a service gives when it refuses a client (a write
 * policy, a sensor request), bytes with the NUL; longer reasons are cut. */
#define DEV_WHY_MAX 256

/* Write policy hook: return 0 to allow, or a negative errno (-EPERM) to deny
 * with the reason in why[len] (len is DEV_WHY_MAX). */
typedef int (*dev_write_check_fn)(void *user, const dev_creds *who, char *why, size_t len);

/* Packet overflow policy. */
typedef enum {
	DEV_OVERFLOW_DROP_OLDEST = 0,  /* drop the oldest queued message, count it for the client */
	DEV_OVERFLOW_BACKPRESSURE = 1, /* dev_packet_send() returns -EAGAIN, nothing is queued */
} dev_overflow;

/* Device creation options; all-zero (or dev_options_init) gives the defaults. */
typedef struct {
	unsigned mode;     /* socket file mode; 0 = 0660 (owner and group: add users to the services' group) */
	const char *group; /* owner group: name or decimal gid; NULL = leave it */
	/* Writers (command, query, packet send) allowed: a uid in write_uids OR a
	 * gid in write_gids (if either list is non-empty), AND write_check (if
	 * set) returns 0.  Readers are governed by the socket mode alone. */
	const uid_t *write_uids;
	size_t n_write_uids;
	const gid_t *write_gids;
	size_t n_write_gids;
	dev_write_check_fn write_check;
	void *write_check_user;
	size_t queue_limit;    /* packet: per-client queue, messages; 0 = 64 */
	dev_overflow overflow; /* packet: what a full queue does */
	size_t history;        /* packet: messages kept for clients that resume (PKT_SUB_FROM); 0 = none */
	size_t chunk_bytes;    /* sensor: max bytes of items per chunk; 0 = 16384 */
	size_t out_limit;      /* bytes queued to one client before its input is paused; 0 = 1 MiB */
} dev_options;

/* Client halves: the connection to the service went up (connected=TRUE,
 * err=0) or down (connected=FALSE, err = negative errno why: -ENOENT,
 * -ECONNREFUSED, -ECONNRESET, -EPROTOTYPE for a device of another pattern). */
typedef void (*dev_state_fn)(void *user, gboolean connected, int err);

/* Error domain for GError at the GLib edge; codes are positive errno values. */
#define DEV_ERROR (dev_error_quark())
GQuark dev_error_quark(void);

/* Fill *o with the defaults.  Never fails. */
void dev_options_init(dev_options *o);

#endif
