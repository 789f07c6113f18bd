/* What libsfx's Swift side needs from its C side, beyond sfx.h; not installed. */
#ifndef SFX_INTERNAL_H
#define SFX_INTERNAL_H

#include "sfx.h"

/* Sets the calling thread's sfx_last_error() to a copy of `message` (NULL: ""). */
__attribute__((visibility("hidden"))) void sfx_internal_set_last_error(const char *message);

/* An anonymous memory file (memfd_create, close-on-exec) named `name`, or -1 with errno. */
__attribute__((visibility("hidden"))) int sfx_internal_memory_file(const char *name);

#endif
