/* jsonl.h — a detection as one JSON object (json-glib), for detect's
 * JSON-lines file: the keys of the event text (event.h), numbers as
 * numbers, global_ns "none" when the onset has no global time. */
#ifndef CHORUS_DETECT_JSONL_H
#define CHORUS_DETECT_JSONL_H

#include <glib.h>

#include "apps/detect/event.h"

/* The event as a JSON object on one line, without a newline (g_free it). */
gchar *det_event_json(const det_event *e);

#endif
