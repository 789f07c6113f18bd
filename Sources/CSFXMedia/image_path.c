// Where sfx's code was loaded from, so that an installed libsfx.so finds the sounds installed
// beside it (<prefix>/lib/libsfx.so.0 → <prefix>/share/sfx/sounds) whatever program loaded it.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include "csfxmedia.h"

/* Whether `address` lies in the program's own image, from the program headers the kernel
 * passed (AT_PHDR): no lock and no symbol search, where dladdr takes the dynamic loader's lock
 * (held while another thread loads a library) and searches the image's symbols. -1 when the
 * headers cannot tell. */
static int in_program(const void *address)
{
    const ElfW(Phdr) *headers = (const ElfW(Phdr) *)getauxval(AT_PHDR);
    unsigned long count = getauxval(AT_PHNUM);
    if (headers == NULL || count == 0)
        return -1;
    uintptr_t bias = 0;
    int found = 0;
    for (unsigned long i = 0; i < count; i++) {
        if (headers[i].p_type == PT_PHDR) {
            bias = (uintptr_t)headers - headers[i].p_vaddr;
            found = 1;
        }
    }
    if (!found)
        return -1;
    for (unsigned long i = 0; i < count; i++) {
        if (headers[i].p_type != PT_LOAD)
            continue;
        uintptr_t start = bias + headers[i].p_vaddr;
        if ((uintptr_t)address >= start && (uintptr_t)address - start < headers[i].p_memsz)
            return 1;
    }
    return 0;
}

char *sfx_media_library_path(void) {
    // sfx linked into the program (the sfx command, a Swift game): the executable is the image.
    int inside = in_program((const void *)sfx_media_library_path);
    if (inside == 1)
        return NULL;
    Dl_info image, program;
    if (dladdr((void *)sfx_media_library_path, &image) == 0 || image.dli_fname == NULL || image.dli_fname[0] == '\0') {
        return NULL;
    }
    // When the headers could not tell: the image that holds them is the program's.
    const void *headers = (const void *)getauxval(AT_PHDR);
    if (inside == -1 && headers != NULL && dladdr(headers, &program) != 0 && program.dli_fbase == image.dli_fbase) {
        return NULL;
    }
    return realpath(image.dli_fname, NULL);
}
