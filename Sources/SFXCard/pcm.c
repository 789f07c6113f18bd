#include "sfxcard.h"
