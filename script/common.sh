# Shared by script/play and script/test: make sure the Debian packages and the Swift toolchain
# that sfx needs are here, installing what is missing when run as root.
set -euo pipefail

SFX_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$SFX_ROOT"

# Build: alsa-lib, libsndfile, libsoxr, libebur128 (loudness), libgpiod (haptics), pkg-config.
# Run and test: alsa-utils (aplay/arecord/amixer against the virtual card),
# sound-theme-freedesktop (the theme sfx's own inherits), sox (test fixtures).
# The C API's tests: gcc and g++ (C programs built against an install, the header as C99 and
# C++17), binutils (readelf, nm: the library's SONAME and exports), man-db (man -l of sfx.1);
# zsh (the generated zsh completion is checked as zsh parses it).
# Sound servers: libpulse-dev (sfx reads mute and volume through libpulse's introspection);
# for the tests' private PipeWire: pipewire, pipewire-bin, wireplumber, pipewire-pulse,
# dbus (dbus-run-session), pulseaudio-utils (pactl, parecord), pipewire-alsa (the `pipewire`
# ALSA PCM) and libasound2-plugins (the `pulse` ALSA PCM). pipewire-alsa also installs
# /etc/alsa/conf.d/99-pipewire-default.conf, which points ALSA's `default` at PipeWire, as on a
# desktop; it is left alone: the virtual card's configuration does not load conf.d, and the
# server tests use configurations of their own.
# The filter tests: python3-numpy and python3-scipy (Tests/Support/filters/FilterReference.py
# runs the RBJ cookbook's biquads through scipy.signal.lfilter, under /usr/bin/python3).
# HRTF: libmysofa-dev (mysofa.h, which Sources/CSFXMySofa is compiled against; libmysofa itself
# is loaded on first use, like libpulse, so libmysofa1 is not in SFX_RUN_PACKAGES; it also
# brings /usr/share/libmysofa/default.sofa, which the tests render); python3-h5py, python3-numpy
# and python3-scipy for the tests' reference (Tests/Support/hrtf/reference.py reads the SOFA
# file's raw measurements without libmysofa and resamples them).
# Following sound cards: libudev-dev (libudev.h, which Sources/CSFXUdev is compiled against;
# libudev1 itself is loaded on first use by CardWatcher, and every Debian system has it).
# The Python binding's tests: python3-venv (pip installs bindings/python into a fresh virtual
# environment, offline, with the system's setuptools) and python3-pytest (its suite).
# The Debian packages' tests (DebianPackageTests): lintian (script/deb's packages must have no
# lintian error), strace (the installed library's sounds come from /usr/share/sfx/sounds: the
# files it opens); dpkg-dev (dpkg-shlibdeps, which script/deb computes Depends with; not a
# build dependency of programs that use sfx, so `--build` leaves it out).
# Tests only: libopenal-dev (OpenAL Soft; OpenALReferenceTests builds Tests/Support/OpenALReference/
# render.c against it and renders the same scenes through its loopback device, the reference that
# sfx's positional audio is compared with). Nothing of sfx links it, so `--build` leaves it out.
# Voice processing (RecorderSettings.voiceProcessing): libspeexdsp-dev (speex_preprocess.h, which
# Sources/CSFXVoice is compiled against; libspeexdsp1 itself is loaded on first use, by a recording
# with voice processing). Its tests: espeak-ng (the speech that VoiceProcessingTests mixes with noise).
# The M4A tests: python3-mutagen (Tests/SFXRecordingTests/MP4Boxes.swift runs it under /usr/bin/python3
# to read a recording's length as tag readers and servers do, from its moov).
# The VoiceMessage example's test: espeak-ng (the speech it records) and ffmpeg (ffprobe's
# duration and ffmpeg's level of the uploaded M4A, readers independent of sfx's).
SFX_PACKAGES=(pkg-config libasound2-dev libsndfile1-dev libmpg123-dev libsoxr-dev libebur128-dev libgpiod-dev
              libavformat-dev libavcodec-dev libavutil-dev libswresample-dev
              alsa-utils sound-theme-freedesktop sox gcc g++ binutils man-db zsh
              libpulse-dev pipewire pipewire-bin wireplumber pipewire-pulse dbus pulseaudio-utils
              pipewire-alsa libasound2-plugins systemd util-linux python3 libcurl4-openssl-dev
              libmysofa-dev python3-h5py python3-numpy python3-scipy libudev-dev libopenal-dev
              python3-venv python3-pytest python3-mutagen lintian strace dpkg-dev
              libspeexdsp-dev espeak-ng ffmpeg)

# What a program that depends on sfx needs to build (`script/packages --build` prints it; the
# README quotes it): pkg-config and the -dev packages above but the tests' libopenal-dev. What its
# binary needs where it runs (`script/packages --run`; docs/library.md quotes it): the libraries
# sfx links or loads, FFmpeg's only for the formats libsndfile cannot read.
sfx_build_packages() {
    local p
    for p in "${SFX_PACKAGES[@]}"; do
        case "$p" in libopenal-dev|dpkg-dev) ;; pkg-config|*-dev) printf '%s\n' "$p" ;; esac
    done
}
SFX_RUN_PACKAGES=(libasound2 libsndfile1 libsoxr0 libebur128-1 libgpiod2 libpulse0 libcurl4 libspeexdsp1)
SFX_RUN_FFMPEG_PACKAGES=(libavformat59 libavcodec59 libswresample4 libavutil57)

sfx_require_packages() {
    local missing=()
    for p in "${SFX_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "sfx needs these Debian packages; install them with:" >&2
        echo "  sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
    echo "==> installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

sfx_require_swift() {
    if ! command -v swift >/dev/null 2>&1; then
        if [ -x /opt/swift/usr/bin/swift ]; then
            export PATH="$PATH:/opt/swift/usr/bin"
        else
            echo "sfx needs Swift 6 (swift not found on PATH); install a toolchain from swift.org and put its usr/bin on PATH" >&2
            exit 1
        fi
    fi
}

# script/packages only reads the lists.
if [ "${SFX_LISTS_ONLY:-}" != 1 ]; then
    sfx_require_packages
    sfx_require_swift
fi
