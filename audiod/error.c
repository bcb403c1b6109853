/* error.c — audiod's GError domain (see error.h). */
#include "audiod/error.h"

/* The quark's name is stringified as written: keep clang-format off it. */
/* clang-format off */
G_DEFINE_QUARK(chorus-audiod-error-quark, audiod_error)
/* clang-format on */
