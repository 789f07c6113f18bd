/*
 * libsfxcard.so, the virtual card's ALSA plugin as a library of its own: the card's code is
 * SFXCard's (pcm.c, ctl.c, card.c); this target exists for its link settings (Package.swift),
 * which keep the Swift runtime out of the library that every ALSA client opening the card loads.
 */
#include "sfxcard.h"
