/* creds.h — act as the FUSE caller while connecting to a device.
 *
 * chorus-fuse opens one device connection per open file, and the service
 * decides what the caller may do from the connection's SO_PEERCRED (its
 * write policy, docs/protocol.md "Credentials and permissions") and the
 * kernel from the socket file's mode.  So the connection must be made with
 * the caller's credentials, not chorus-fuse's: when chorus-fuse runs as
 * root, the connecting thread takes the caller's uid, gid and supplementary
 * groups for the connect() and returns to root afterwards.  The switch is
 * made with the raw system calls, which change only the calling thread
 * (glibc's wrappers would change every thread of the process, and the FUSE
 * loop serves requests on several).
 */
#ifndef CHORUS_FUSE_CREDS_H
#define CHORUS_FUSE_CREDS_H

#include <stddef.h>
#include <sys/types.h>

/* Who asked: the FUSE request's uid, gid, pid and supplementary groups. */
typedef struct {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	int ngroups;      /* -1: unknown (chorus-fuse could not read them) */
	gid_t groups[64]; /* the first 64 */
} fuse_caller;

/* Fill *c from the current FUSE request (fuse_get_context, fuse_getgroups).
 * Call from a FUSE operation. */
void fuse_caller_get(fuse_caller *c);

/* Note whether chorus-fuse can take other credentials (it runs as root)
 * and its own supplementary groups.  Call once from main(), before any
 * thread. */
void fuse_creds_init(void);

/* True when chorus-fuse can take other credentials (fuse_creds_init found
 * it running as root). */
int fuse_creds_can_switch(void);

/* Take c's credentials on this thread: 0, or a negative errno (the switch
 * failed; the thread is back at its own).  A no-op returning 0 when
 * fuse_creds_can_switch() is false. */
int fuse_creds_enter(const fuse_caller *c);

/* Back to chorus-fuse's own credentials on this thread.  Aborts if that
 * fails (the thread would serve the next request as somebody else). */
void fuse_creds_leave(void);

#endif
