// Where sfx's code was loaded from, so that an installed libsfx.so finds the sounds installed
// beside it (<prefix>/lib/libsfx.so.0 → <prefix>/share/sfx/sounds) whatever program loaded it.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include "csfxmedia.h"

char *sfx_media_library_path(void) {
    Dl_info image, program;
    if (dladdr((void *)sfx_media_library_path, &image) == 0 || image.dli_fname == NULL || image.dli_fname[0] == '\0') {
        return NULL;
    }
    // The program's own image holds its program headers: then sfx is linked into the program.
    const void *headers = (const void *)getauxval(AT_PHDR);
    if (headers != NULL && dladdr(headers, &program) != 0 && program.dli_fbase == image.dli_fbase) {
        return NULL;
    }
    return realpath(image.dli_fname, NULL);
}
