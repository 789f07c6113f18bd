#include "sfx_udev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "sfx_on_demand.h"

#pragma GCC visibility push(hidden)
#include <libudev.h>
#pragma GCC visibility pop

/* libudev on demand (checked against Debian's libudev-dev header): only a program that follows
 * cards (the engine's output thread, when told to) loads it. */
#define SFX_UDEV_FUNCTIONS(X) \
    X(udev_new) X(udev_unref) X(udev_monitor_new_from_netlink) X(udev_monitor_filter_add_match_subsystem_devtype) \
    X(udev_monitor_enable_receiving) X(udev_monitor_get_fd) X(udev_monitor_receive_device) X(udev_monitor_unref) \
    X(udev_device_get_action) X(udev_device_get_subsystem) X(udev_device_get_sysname) X(udev_device_get_devpath) \
    X(udev_device_get_devnode) X(udev_device_get_sysattr_value) X(udev_device_get_seqnum) X(udev_device_unref)

static struct { SFX_UDEV_FUNCTIONS(SFX_ON_DEMAND_FIELD) } udev_table;
static sfx_on_demand udev_loader = {
    .sonames = {"libudev.so.1"}, .functions = {SFX_UDEV_FUNCTIONS(SFX_ON_DEMAND_NAME)}, SFX_ON_DEMAND_TABLE(udev_table),
    .purpose = " to follow sound cards", .install = "install Debian's libudev1", .upgrade = "install libudev1 from Debian 12 or later",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

struct sfx_udev_monitor {
    struct udev *udev;
    struct udev_monitor *monitor;
};

static void copy(char *to, size_t size, const char *from)
{
    snprintf(to, size, "%s", from ? from : "");
}

sfx_udev_monitor *sfx_udev_open(const char *group, const char *subsystem, char *error, size_t error_size)
{
    const char *missing = sfx_on_demand_error(&udev_loader);
    if (missing) {
        copy(error, error_size, missing);
        return NULL;
    }
    sfx_udev_monitor *m = calloc(1, sizeof *m);
    if (!m) {
        copy(error, error_size, "out of memory");
        return NULL;
    }
    errno = 0;
    m->udev = udev_table.udev_new();
    if (!m->udev) {
        snprintf(error, error_size, "libudev could not start (udev_new: %s)", strerror(errno ? errno : ENOMEM));
        free(m);
        return NULL;
    }
    errno = 0;
    m->monitor = udev_table.udev_monitor_new_from_netlink(m->udev, group);
    int err = errno;
    if (!m->monitor) {
        snprintf(error, error_size, "the kernel's netlink socket for %s events cannot be opened (%s)", group,
                 strerror(err ? err : EPERM));
        goto fail;
    }
    if ((err = udev_table.udev_monitor_filter_add_match_subsystem_devtype(m->monitor, subsystem, NULL)) < 0 ||
        (err = udev_table.udev_monitor_enable_receiving(m->monitor)) < 0) {
        snprintf(error, error_size, "the netlink monitor for %s events cannot receive (%s)", group, strerror(-err));
        goto fail;
    }
    int fd = udev_table.udev_monitor_get_fd(m->monitor);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return m;
fail:
    if (m->monitor)
        udev_table.udev_monitor_unref(m->monitor);
    udev_table.udev_unref(m->udev);
    free(m);
    return NULL;
}

int sfx_udev_fd(sfx_udev_monitor *m)
{
    return udev_table.udev_monitor_get_fd(m->monitor);
}

int sfx_udev_receive(sfx_udev_monitor *m, sfx_udev_event *out)
{
    struct udev_device *device = udev_table.udev_monitor_receive_device(m->monitor);
    if (!device)
        return 0;
    memset(out, 0, sizeof *out);
    copy(out->action, sizeof out->action, udev_table.udev_device_get_action(device));
    copy(out->subsystem, sizeof out->subsystem, udev_table.udev_device_get_subsystem(device));
    copy(out->sysname, sizeof out->sysname, udev_table.udev_device_get_sysname(device));
    copy(out->devpath, sizeof out->devpath, udev_table.udev_device_get_devpath(device));
    copy(out->devnode, sizeof out->devnode, udev_table.udev_device_get_devnode(device));
    /* A removed device's attributes are gone from sysfs: the id is then "". */
    if (strcmp(out->action, "remove"))
        copy(out->id, sizeof out->id, udev_table.udev_device_get_sysattr_value(device, "id"));
    out->seqnum = udev_table.udev_device_get_seqnum(device);
    udev_table.udev_device_unref(device);
    return 1;
}

void sfx_udev_close(sfx_udev_monitor *m)
{
    if (!m)
        return;
    udev_table.udev_monitor_unref(m->monitor);
    udev_table.udev_unref(m->udev);
    free(m);
}
