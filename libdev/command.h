/* command.h — Command device, server half: a short text command in, an
 * integer status and a message out; a read without a command gets usage.
 * Commands are writes: the device's write policy applies to them.
 */
#ifndef CHORUS_DEV_COMMAND_H
#define CHORUS_DEV_COMMAND_H

#include "libdev/common.h"

typedef struct dev_command dev_command;

/* Run command `cmd` (NUL-terminated, valid UTF-8, no NUL inside) from `who`;
 * append the message to `reply`; return the status (0 = ok; by convention a
 * negative errno for failures; chorus-ctl turns it into its exit code). */
typedef int (*dev_command_fn)(void *user, const dev_creds *who, const char *cmd, GString *reply);
/* Append the usage text to `out`. */
typedef void (*dev_usage_fn)(void *user, GString *out);

/* Create command device `name`; `usage` may be NULL.  NULL + *error on
 * failure (see dev_status_new). */
dev_command *dev_command_new(const char *name, const dev_options *opt, GMainContext *ctx,
			     dev_command_fn run, dev_usage_fn usage, void *user, GError **error);

/* Close every connection, remove the socket file, free.  NULL is fine. */
void dev_command_free(dev_command *d);

#endif
