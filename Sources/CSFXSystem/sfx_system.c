#define _GNU_SOURCE
#include "sfx_system.h"
#include <unistd.h>

pid_t sfx_gettid(void) { return gettid(); }
