#include <alsa/asoundlib.h>
#include <alsa/mixer.h>
