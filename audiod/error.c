/* error.c — audiod's GError domain (see error.h). */
#include "audiod/error.h"

G_DEFINE_QUARK(chorus - audiod - error - quark, audiod_error)
