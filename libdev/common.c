/* common.c — options defaults and the error domain (see common.h). */
#include "libdev/common.h"

#include <string.h>

/* The quark's name is stringified as written: keep clang-format off it. */
/* clang-format off */
G_DEFINE_QUARK(chorus-dev-error-quark, dev_error)
/* clang-format on */

void dev_options_init(dev_options *o)
{
	memset(o, 0, sizeof *o);
	o->mode = 0660; /* owner and group: the services' users (issue 15) */
	o->queue_limit = 64;
	o->chunk_bytes = 16384;
	o->out_limit = 1 << 20;
	o->overflow = DEV_OVERFLOW_DROP_OLDEST;
}
