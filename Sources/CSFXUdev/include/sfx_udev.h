// The kernel's `sound` devices as libudev reports them, through a netlink monitor. libudev
// (libudev.so.1) is loaded on first use, as libpulse is (sfx_on_demand.h): nothing links it, and
// a machine without it still runs (sfx_udev_open fails with its one line).
#pragma once
#include <stddef.h>

typedef struct sfx_udev_monitor sfx_udev_monitor;

/// One event of the `sound` subsystem. Strings are "" when the device has no such value.
typedef struct {
    char action[16];     /* "add", "remove", "change", "bind", … */
    char subsystem[16];
    char sysname[64];    /* "card1", "pcmC1D0p", "controlC1" */
    char devpath[256];   /* "/devices/…/sound/card1" */
    char devnode[128];   /* "/dev/snd/pcmC1D0p"; "" for the card itself */
    char id[64];         /* the card's `id` attribute (its stable name), read at the event */
    unsigned long long seqnum;
} sfx_udev_event;

/// A monitor on netlink group `group` ("udev": events after udevd has handled them; "kernel":
/// the kernel's own, for machines without udevd) filtered to `subsystem` ("sound"), receiving.
/// NULL on failure with one line in `error` (libudev missing, netlink refused: errno named).
sfx_udev_monitor *sfx_udev_open(const char *group, const char *subsystem, char *error, size_t error_size);

/// The monitor's descriptor: readable when an event is there (nonblocking).
int sfx_udev_fd(sfx_udev_monitor *monitor);

/// Reads one event: 1 with `out` filled, 0 when none is waiting.
int sfx_udev_receive(sfx_udev_monitor *monitor, sfx_udev_event *out);

void sfx_udev_close(sfx_udev_monitor *monitor);
