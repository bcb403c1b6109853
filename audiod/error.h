/* error.h — audiod's GError domain.
 *
 * audiod's functions at the GLib and I/O edges (opening the PCM, the ring,
 * the stream, parsing a client's request) report failures as a GError in
 * AUDIOD_ERROR whose code is the positive errno value the function also
 * returns negated, and whose message names what failed (PCM, device, path,
 * request parameter) and why.  Pure allocation-free code reports a static
 * string through `const char **why` instead.
 */
#ifndef CHORUS_AUDIOD_ERROR_H
#define CHORUS_AUDIOD_ERROR_H

#include <glib.h>

#define AUDIOD_ERROR (audiod_error_quark())

/* The domain's quark (never fails). */
GQuark audiod_error_quark(void);

#endif
