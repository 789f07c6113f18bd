"""sfx for Python: low-latency sound effects and alerts on Linux, over libsfx (sfx.h).

Every call goes to the C API; its one-line errors arrive as SfxError. Completion and alert
callbacks are called on a Python thread of the binding's own ("sfx-callbacks"), one at a time, in
order: the engine's completion thread only hands them over, and never the real-time thread.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import enum
import os
import queue
import re
import threading
import time
from typing import Callable, Optional, Sequence

__all__ = [
    "Engine", "Voice", "Bank", "Recorder", "SfxError", "AlertReached", "GROUP_EFFECTS", "GROUP_UI", "GROUP_ALERTS",
    "GROUP_MUSIC", "PRIORITY_LOW", "PRIORITY_NORMAL", "PRIORITY_HIGH", "PRIORITY_CRITICAL", "ALERT_PLAYED",
    "ALERT_VIBRATED", "ALERT_FLASHED", "ALERT_QUIET_HOURS", "frames_late", "library_version",
]

GROUP_EFFECTS, GROUP_UI, GROUP_ALERTS, GROUP_MUSIC = 0, 1, 2, 3
PRIORITY_LOW, PRIORITY_NORMAL, PRIORITY_HIGH, PRIORITY_CRITICAL = 64, 128, 192, 255
OUTCOMES = {0: "finished", 1: "stopped", 2: "stolen", 3: "rejected"}
_NO_DEVICE = {"mix": 0, "queue": 1, "fail": 2}
_STATUS_NAMES = {-1: "null", -2: "closed", -3: "range", -4: "device", -5: "sound", -6: "rejected",
                 -7: "haptics", -8: "failed"}


class AlertReached(enum.IntFlag):
    """How an alert reached the person (sfx.h's SFX_ALERT_* bits); none (0, false): show its caption."""
    PLAYED = 1
    VIBRATED = 2
    FLASHED = 4        # a flash backend was asked to flash
    QUIET_HOURS = 8    # held back by the do-not-disturb window: captioned only


ALERT_PLAYED, ALERT_VIBRATED = AlertReached.PLAYED, AlertReached.VIBRATED
ALERT_FLASHED, ALERT_QUIET_HOURS = AlertReached.FLASHED, AlertReached.QUIET_HOURS

_LATE = re.compile(r"started (\d+) frames late")


def frames_late(detail: Optional[str]) -> int:
    """How many frames late a play at a frame already past started (its completion's `detail`
    says "started N frames late: …"); 0 for any other detail or None."""
    found = _LATE.match(detail) if detail else None
    return int(found.group(1)) if found else 0


class SfxError(Exception):
    """An sfx call failed: `status` is sfx.h's code (negative), the message its one line."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.kind = _STATUS_NAMES.get(status, "failed")


def _load_library() -> ctypes.CDLL:
    path = os.environ.get("SFX_LIBRARY") or ctypes.util.find_library("sfx") or "libsfx.so.0"
    try:
        return ctypes.CDLL(path)
    except OSError as error:
        raise ImportError(f"libsfx cannot be loaded ({error}); install sfx's C library "
                          "(script/install, or the libsfx0 package) or set SFX_LIBRARY to libsfx.so.0's path") from error


_lib = _load_library()

_sfx_voice = ctypes.c_uint64
_sfx_sound = ctypes.c_uint32
_COMPLETION = ctypes.CFUNCTYPE(None, _sfx_voice, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
_ALERT_FN = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint, ctypes.c_void_p)


class _Config(ctypes.Structure):
    _fields_ = [("device", ctypes.c_char_p), ("sample_rate", ctypes.c_uint32), ("period_frames", ctypes.c_uint32),
                ("periods", ctypes.c_uint32), ("max_voices", ctypes.c_uint32), ("hrtf", ctypes.c_char_p),
                ("while_no_device", ctypes.c_int32), ("queue_limit", ctypes.c_uint32)]


class _PlayOptions(ctypes.Structure):
    _fields_ = [("volume", ctypes.c_float), ("pan", ctypes.c_float), ("loops", ctypes.c_int32),
                ("group", ctypes.c_uint32), ("priority", ctypes.c_uint32), ("max_instances", ctypes.c_uint32),
                ("completion", _COMPLETION), ("user_data", ctypes.c_void_p)]


def _declare(name, restype, *argtypes):
    function = getattr(_lib, name)
    function.restype = restype
    function.argtypes = list(argtypes)
    return function


_engine_p = ctypes.c_void_p
_version = _declare("sfx_version", ctypes.c_char_p)
_last_error = _declare("sfx_last_error", ctypes.c_char_p)
_config_init = _declare("sfx_config_init", None, ctypes.POINTER(_Config))
_options_init = _declare("sfx_play_options_init", None, ctypes.POINTER(_PlayOptions))
_open = _declare("sfx_open", ctypes.c_int, ctypes.POINTER(_Config), ctypes.POINTER(_engine_p))
_close = _declare("sfx_close", ctypes.c_int, _engine_p)
_wait_idle = _declare("sfx_wait_idle", ctypes.c_int, _engine_p, ctypes.c_uint32)
_device_status = _declare("sfx_device_status", ctypes.c_int, _engine_p, ctypes.c_char_p, ctypes.c_size_t)
_system_sound = _declare("sfx_system_sound", ctypes.c_int, _engine_p, ctypes.c_char_p, ctypes.POINTER(_sfx_sound))
_load_file = _declare("sfx_load_file", ctypes.c_int, _engine_p, ctypes.c_char_p, ctypes.POINTER(_sfx_sound))
_load_pcm = _declare("sfx_load_pcm", ctypes.c_int, _engine_p, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t,
                     ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(_sfx_sound))
_dispose = _declare("sfx_dispose", ctypes.c_int, _engine_p, _sfx_sound)
_play = _declare("sfx_play", ctypes.c_int, _engine_p, _sfx_sound, ctypes.POINTER(_PlayOptions), ctypes.POINTER(_sfx_voice))
_voice_stop = _declare("sfx_voice_stop", ctypes.c_int, _engine_p, _sfx_voice, ctypes.c_uint32)
_voice_set_volume = _declare("sfx_voice_set_volume", ctypes.c_int, _engine_p, _sfx_voice, ctypes.c_float)
_voice_set_pan = _declare("sfx_voice_set_pan", ctypes.c_int, _engine_p, _sfx_voice, ctypes.c_float)
_stop_all = _declare("sfx_stop_all", ctypes.c_int, _engine_p, ctypes.c_uint32)
_alert = _declare("sfx_alert", ctypes.c_int, _engine_p, _sfx_sound, ctypes.c_float, _COMPLETION, ctypes.c_void_p,
                  ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(_sfx_voice))
_vibrate = _declare("sfx_vibrate", ctypes.c_int, _engine_p, ctypes.POINTER(ctypes.c_uint32), ctypes.c_size_t)
_vibrate_cancel = _declare("sfx_vibrate_cancel", ctypes.c_int, _engine_p)
_set_alert_callback = _declare("sfx_set_alert_callback", ctypes.c_int, _engine_p, _ALERT_FN, ctypes.c_void_p)
_clock_now = _declare("sfx_clock_now", ctypes.c_int, _engine_p, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64))
_clock_monotonic = _declare("sfx_clock_monotonic", ctypes.c_int, _engine_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64))
_play_at_time = _declare("sfx_play_at_time", ctypes.c_int, _engine_p, _sfx_sound, ctypes.c_int64,
                         ctypes.POINTER(_PlayOptions), ctypes.POINTER(_sfx_voice))
_bank_p = ctypes.c_void_p
_bank_load = _declare("sfx_bank_load", ctypes.c_int, _engine_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_bank_p))
_event_play = _declare("sfx_event_play", ctypes.c_int, _engine_p, _bank_p, ctypes.c_char_p, ctypes.c_float,
                       _COMPLETION, ctypes.c_void_p, ctypes.POINTER(_sfx_voice))
_bank_close = _declare("sfx_bank_close", ctypes.c_int, _bank_p)
_bank_status = _declare("sfx_bank_status", ctypes.c_int, _bank_p, ctypes.POINTER(ctypes.c_uint), ctypes.c_char_p, ctypes.c_size_t)


class _RecordOptions(ctypes.Structure):
    _fields_ = [("path", ctypes.c_char_p), ("format", ctypes.c_char_p), ("device", ctypes.c_char_p),
                ("sample_rate", ctypes.c_uint32), ("channels", ctypes.c_uint32), ("max_seconds", ctypes.c_float),
                ("min_seconds", ctypes.c_float), ("prompt", _sfx_sound), ("fragmented", ctypes.c_uint32),
                ("voice_processing", ctypes.c_uint32), ("trim_silence", ctypes.c_uint32)]


_record_start = _declare("sfx_record_start", ctypes.c_int, _engine_p, ctypes.POINTER(_RecordOptions), ctypes.POINTER(ctypes.c_void_p))
_record_level = _declare("sfx_record_level", ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float))
_record_elapsed = _declare("sfx_record_elapsed", ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int))
_record_stop = _declare("sfx_record_stop", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_double))
_record_cancel = _declare("sfx_record_cancel", ctypes.c_int, ctypes.c_void_p)


def library_version() -> str:
    """libsfx's version ("0.1.0")."""
    return _version().decode()


def _check(status: int) -> int:
    if status < 0:
        message = _last_error()
        raise SfxError(status, message.decode(errors="replace") if message else f"sfx error {status}")
    return status


class _Callbacks:
    """Completions and alert captions handed from the engine's completion thread to a Python
    thread of our own: the C side only queues them (and takes the GIL for that alone), so a slow
    Python callback never holds up sfx."""

    def __init__(self):
        # key → (callable, once): a completion is called once, an alert callback until forgotten.
        self._waiting: dict[int, "tuple[Callable, bool]"] = {}
        self._lock = threading.Lock()
        self._next = 1
        self._queue: "queue.SimpleQueue" = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="sfx-callbacks", daemon=True)
        self._thread.start()
        # One C function for every completion and one for alerts; user_data is the Python callable's key.
        self.trampoline = _COMPLETION(self._arrived)
        self.alert_trampoline = _ALERT_FN(self._alerted)

    def register(self, callback: Optional[Callable], once: bool = True) -> int:
        if callback is None:
            return 0
        with self._lock:
            key = self._next
            self._next += 1
            self._waiting[key] = (callback, once)
        return key

    def forget(self, key: int) -> None:
        with self._lock:
            self._waiting.pop(key, None)

    def _arrived(self, voice, outcome, detail, user_data):
        # On the engine's completion thread (ctypes holds the GIL here): hand over, return at once.
        self._queue.put((user_data or 0, (int(voice), OUTCOMES.get(outcome, str(outcome)),
                                          detail.decode(errors="replace") if detail else None)))

    def _alerted(self, caption, sound, reached, user_data):
        # As _arrived: the strings are valid only during this call, so they are copied here.
        self._queue.put((user_data or 0, (caption.decode(errors="replace") if caption else "",
                                          sound.decode(errors="replace") if sound else "", AlertReached(reached))))

    def _run(self):
        while True:
            item = self._queue.get()
            if item is None:
                return
            key, arguments = item
            with self._lock:
                entry = self._waiting.get(key)
                if entry is not None and entry[1]:
                    del self._waiting[key]
            if entry is not None:
                try:
                    entry[0](*arguments)
                except Exception:  # a callback's error must not end the thread
                    import traceback
                    traceback.print_exc()

    def drain(self, timeout: float = 5.0) -> bool:
        """Waits until every callback handed over so far has been called: False when `timeout`
        passed first. On the callback thread itself (which would wait for itself) True at once."""
        if threading.current_thread() is self._thread:
            return True
        done = threading.Event()
        self._queue.put((self.register(lambda: done.set()), ()))
        return done.wait(timeout)


class Voice:
    """One play of a sound: stop it, or change its volume or pan while it sounds."""

    def __init__(self, engine: "Engine", voice_id: int):
        self._engine = engine
        self.id = voice_id

    def stop(self, fade: float = 0.005) -> None:
        """Fades it out over `fade` seconds (0…60); its completion says "stopped"."""
        _check(_voice_stop(self._engine._handle(), self.id, int(round(fade * 1000))))

    def set_volume(self, volume: float) -> None:
        """0…16, smoothed; a voice that has ended is left alone."""
        _check(_voice_set_volume(self._engine._handle(), self.id, volume))

    def set_pan(self, pan: float) -> None:
        """-1 (left) … 1 (right), smoothed."""
        _check(_voice_set_pan(self._engine._handle(), self.id, pan))

    def __repr__(self) -> str:
        return f"Voice({self.id})"


class Engine:
    """An open sfx engine: ALSA "default" (or `device`), its real-time thread, its sounds.

    `while_no_device`: "mix" (the default: without a device the engine opens all the same, plays
    on the clock and attaches once the device can be opened), "queue" (plays wait for it, at most
    `queue_limit`) or "fail" (SfxError now)."""

    def __init__(self, device: Optional[str] = None, sample_rate: int = 0, period_frames: int = 0, periods: int = 0,
                 max_voices: int = 0, while_no_device: str = "mix", queue_limit: int = 0):
        if while_no_device not in _NO_DEVICE:
            raise ValueError(f"while_no_device {while_no_device!r}: use 'mix', 'queue' or 'fail'")
        config = _Config()
        _config_init(ctypes.byref(config))
        self._device = device.encode() if device is not None else None
        config.device = self._device
        config.sample_rate, config.period_frames, config.periods = sample_rate, period_frames, periods
        config.max_voices = max_voices
        config.while_no_device, config.queue_limit = _NO_DEVICE[while_no_device], queue_limit
        handle = _engine_p()
        _check(_open(ctypes.byref(config), ctypes.byref(handle)))
        self._engine = handle
        self._callbacks = _Callbacks()
        self._alert: Optional[Callable[[str, str, AlertReached], None]] = None
        self._alert_key = 0
        self._alert_lock = threading.Lock()

    def _handle(self):
        return self._engine

    # Sounds

    def system_sound(self, name: str) -> int:
        """A named system sound ("tock", "bell", "message-new-instant", …): its sound id."""
        sound = _sfx_sound()
        _check(_system_sound(self._engine, name.encode(), ctypes.byref(sound)))
        return sound.value

    def load(self, path: "str | os.PathLike[str]") -> int:
        """Decodes a sound file (WAV, FLAC, Ogg, Opus, MP3, …; M4A through FFmpeg) into a new sound id."""
        sound = _sfx_sound()
        _check(_load_file(self._engine, os.fsencode(path), ctypes.byref(sound)))
        return sound.value

    def load_pcm(self, samples: Sequence[float], channels: int = 1, sample_rate: int = 48_000) -> int:
        """Interleaved float samples (-1…1) into a new sound id."""
        buffer = (ctypes.c_float * len(samples))(*samples)
        sound = _sfx_sound()
        _check(_load_pcm(self._engine, buffer, len(samples) // channels, channels, sample_rate, ctypes.byref(sound)))
        return sound.value

    def dispose(self, sound: int) -> None:
        """Forgets a loaded sound; its voices fade out."""
        _check(_dispose(self._engine, sound))

    # Playing

    def play(self, sound: int, volume: float = 1.0, pan: float = 0.0, loops: int = 0, group: int = GROUP_EFFECTS,
             priority: int = PRIORITY_NORMAL, max_instances: int = 0,
             on_complete: Optional[Callable[[int, str, Optional[str]], None]] = None,
             at_frame: Optional[int] = None) -> Voice:
        """Starts `sound` at once, from any thread; `on_complete(voice_id, outcome, detail)` is
        called once, on the binding's callback thread, with "finished", "stopped", "stolen" or
        "rejected" (and why).

        With `at_frame` the sound's first frame is that frame of the engine's clock (clock_now),
        to the sample: a frame ahead waits in the mixer (at most 64 plays wait; stopping the voice
        cancels it, "stopped"); a frame already past plays at once and its completion's `detail`
        says how late ("started N frames late: …", see frames_late). `max_instances` does not
        apply to a play at a frame."""
        if at_frame is not None and max_instances:
            raise ValueError("max_instances does not apply to a play at a frame (at_frame): leave it 0")
        options = _PlayOptions()
        _options_init(ctypes.byref(options))
        options.volume, options.pan, options.loops = volume, pan, loops
        options.group, options.priority, options.max_instances = group, priority, max_instances
        key = self._callbacks.register(on_complete)
        if key:
            options.completion = self._callbacks.trampoline
            options.user_data = key
        voice = _sfx_voice()
        try:
            if at_frame is None:
                _check(_play(self._engine, sound, ctypes.byref(options), ctypes.byref(voice)))
            else:
                _check(_play_at_time(self._engine, sound, at_frame, ctypes.byref(options), ctypes.byref(voice)))
        except SfxError:
            self._callbacks.forget(key)
            raise
        return Voice(self, voice.value)

    def play_at_time(self, sound: int, frame: int, volume: float = 1.0, pan: float = 0.0, loops: int = 0,
                     group: int = GROUP_EFFECTS, priority: int = PRIORITY_NORMAL,
                     on_complete: Optional[Callable[[int, str, Optional[str]], None]] = None) -> Voice:
        """play(sound, …, at_frame=frame): the sound's first frame on `frame` of the clock."""
        return self.play(sound, volume=volume, pan=pan, loops=loops, group=group, priority=priority,
                         on_complete=on_complete, at_frame=frame)

    def stop_all(self, fade: float = 0.005) -> None:
        _check(_stop_all(self._engine, int(round(fade * 1000))))

    def alert(self, sound: int, volume: float = 1.0,
              on_complete: Optional[Callable[[int, str, Optional[str]], None]] = None) -> dict:
        """Plays an alert, or vibrates when the output is muted (or there is no device):
        {"played": bool, "vibrated": bool, "voice": Voice or None}."""
        key = self._callbacks.register(on_complete)
        heard, voice = ctypes.c_uint(0), _sfx_voice(0)
        try:
            _check(_alert(self._engine, sound, volume, self._callbacks.trampoline if key else _COMPLETION(),
                          key or None, ctypes.byref(heard), ctypes.byref(voice)))
        except SfxError:
            self._callbacks.forget(key)
            raise
        if not heard.value & 1:
            self._callbacks.forget(key)
        return {"played": bool(heard.value & 1), "vibrated": bool(heard.value & 2),
                "voice": Voice(self, voice.value) if voice.value else None}

    @property
    def on_alert(self) -> Optional[Callable[[str, str, AlertReached], None]]:
        """Called with every alert's caption: `on_alert(caption, sound, reached)`, the words ("The
        generic alert", or the caption the settings give), the sound's name ("bell") and how it
        reached the person (an AlertReached; none: show the caption), on the binding's callback
        thread, after the completions before it, for each alert (whether it played, vibrated or
        neither) as sfx's alert policy says ([alert] caption in sfx.conf; always by default).
        None (the default) stops the calls; closing the engine stops them too."""
        return self._alert

    @on_alert.setter
    def on_alert(self, callback: Optional[Callable[[str, str, AlertReached], None]]) -> None:
        self.set_alert_callback(callback)

    def set_alert_callback(self, callback: Optional[Callable[[str, str, AlertReached], None]]) -> None:
        """Sets on_alert (see there); None stops the calls, and captions already handed over but not
        yet called are dropped."""
        with self._alert_lock:
            key = self._callbacks.register(callback, once=False)
            try:
                _check(_set_alert_callback(self._engine, self._callbacks.alert_trampoline if key else _ALERT_FN(),
                                           key or None))
            except SfxError:
                self._callbacks.forget(key)
                raise
            self._callbacks.forget(self._alert_key)
            self._alert, self._alert_key = callback, key

    def vibrate(self, pattern_ms: Optional[Sequence[int]] = None) -> None:
        """Vibrates: durations in ms alternating on and off, starting with on; None: one 400 ms buzz."""
        if not pattern_ms:
            _check(_vibrate(self._engine, None, 0))
        else:
            array = (ctypes.c_uint32 * len(pattern_ms))(*pattern_ms)
            _check(_vibrate(self._engine, array, len(pattern_ms)))

    def cancel_vibration(self) -> None:
        _check(_vibrate_cancel(self._engine))

    # Banks

    def load_bank(self, path: "str | os.PathLike[str]", watch: bool = True) -> "Bank":
        """Loads a sound bank (a JSON file of named events, docs/banks.md) and decodes its sounds.
        With `watch` it follows edits to the file and its sounds while the engine runs (a broken
        edit keeps the last good bank). A bank with problems raises SfxError (kind "sound") with
        sfx's line naming the file, line and key of the first."""
        handle = _bank_p()
        _check(_bank_load(self._engine, os.fsencode(path), 1 if watch else 0, ctypes.byref(handle)))
        return Bank(self, handle, os.fspath(path))

    # The clock

    def clock_now(self) -> "tuple[int, int]":
        """(frame, next_schedulable): the frame of the output heard at the DAC now, and the earliest
        frame play(…, at_frame=) can still start a sound on exactly. The clock counts frames at the
        device's rate from 0 when the engine opened."""
        frame, schedulable = ctypes.c_int64(), ctypes.c_int64()
        _check(_clock_now(self._engine, ctypes.byref(frame), ctypes.byref(schedulable)))
        return frame.value, schedulable.value

    def frame_to_monotonic(self, frame: int) -> int:
        """The CLOCK_MONOTONIC instant, in nanoseconds (time.monotonic_ns()'s clock), at which
        `frame` is (or was) heard at the DAC. SfxError (kind "device") until the device has first
        said where its DAC is."""
        nanoseconds = ctypes.c_int64()
        _check(_clock_monotonic(self._engine, frame, ctypes.byref(nanoseconds)))
        return nanoseconds.value

    # State

    def device_status(self) -> "tuple[bool, str]":
        """(True, "") while the device plays; (False, why) without one (it is tried again)."""
        buffer = ctypes.create_string_buffer(1024)
        status = _check(_device_status(self._engine, buffer, len(buffer)))
        return status == 1, buffer.value.decode(errors="replace")

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Waits until no voice sounds and every completion (and alert caption) has been called:
        True, or False when `timeout` passed first (a slow callback still running, say). From a
        callback it does not wait for the callbacks after it."""
        deadline = time.monotonic() + timeout
        status = _wait_idle(self._engine, int(timeout * 1000))
        if status < 0 and status != -8:
            _check(status)
        drained = self._callbacks.drain(max(0.0, deadline - time.monotonic()))
        return status == 0 and drained

    def close(self) -> None:
        """Stops every sound (completions say "stopped") and closes the device; later calls fail.
        Alert captions stop: those raised before are still called, then on_alert is None."""
        if self._engine:
            _check(_close(self._engine))
            self._callbacks.drain()
            with self._alert_lock:
                self._callbacks.forget(self._alert_key)
                self._alert, self._alert_key = None, 0

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.wait_idle(10)
        finally:
            self.close()


class Bank:
    """A sound bank loaded on an engine (Engine.load_bank): its events by name.

        with engine.load_bank("footsteps.json") as bank:
            bank.play("step")              # SfxError (kind "rejected") inside the event's cooldown
    """

    def __init__(self, engine: Engine, handle: ctypes.c_void_p, path: str):
        self._engine = engine
        self._bank = handle
        self._closed = False
        self.path = path

    def play(self, name: str, volume: float = 1.0,
             on_complete: Optional[Callable[[int, str, Optional[str]], None]] = None) -> Voice:
        """Triggers the event `name` as Engine.play does a sound: `volume` (0…16) multiplies the
        event's drawn volume; `on_complete(voice_id, outcome, detail)` as Engine.play's. SfxError:
        kind "sound" for a name the bank has not, "rejected" for a play the event refuses (inside
        its cooldown; the message says so; never completed then), "closed" once the bank is."""
        callbacks = self._engine._callbacks
        key = callbacks.register(on_complete)
        voice = _sfx_voice()
        try:
            _check(_event_play(self._engine._handle(), self._bank, name.encode(), volume,
                               callbacks.trampoline if key else _COMPLETION(), key or None, ctypes.byref(voice)))
        except SfxError:
            callbacks.forget(key)
            raise
        return Voice(self._engine, voice.value)

    @property
    def reloads(self) -> int:
        """How many edits of the bank (or its sounds) were reloaded since it was loaded."""
        count = ctypes.c_uint()
        _check(_bank_status(self._bank, ctypes.byref(count), None, 0))
        return count.value

    @property
    def problem(self) -> Optional[str]:
        """Why the last edit was refused (one line naming the file, line and key; the bank plays
        the version before it), or None when the last reload (or the load) went well."""
        buffer = ctypes.create_string_buffer(4096)
        _check(_bank_status(self._bank, None, buffer, len(buffer)))
        return buffer.value.decode() or None

    def close(self) -> None:
        """Stops following the bank's files; its voices play on, its events can no longer be
        played through it. A second close does nothing."""
        if not self._closed:
            self._closed = True
            _check(_bank_close(self._bank))

    def __enter__(self) -> "Bank":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Bank({self.path!r})"


class Recorder:
    """A recording, started at once: a voice message (M4A, AAC-LC, by default) with an optional
    prompt played first on `engine`, a level meter, a count-up, and limits.

        with sfx.Engine() as engine:
            recorder = sfx.Recorder(engine=engine, prompt=engine.system_sound("tock"), max_seconds=30, min_seconds=1)
            ...                                    # recorder.level(), recorder.elapsed
            path, seconds = recorder.stop()        # SfxError (kind "rejected") when under min_seconds
    """

    def __init__(self, path: "Optional[str | os.PathLike[str]]" = None, format: Optional[str] = None,
                 device: Optional[str] = None, sample_rate: int = 0, channels: int = 0, max_seconds: float = 0,
                 min_seconds: float = 0, prompt: int = 0, engine: Optional[Engine] = None, fragmented: bool = False,
                 voice_processing: bool = False, trim_silence: bool = False):
        options = _RecordOptions()
        self._path = os.fsencode(path) if path is not None else None
        self._format = format.encode() if format else None
        self._device = device.encode() if device else None
        options.path, options.format, options.device = self._path, self._format, self._device
        options.sample_rate, options.channels = sample_rate, channels
        options.max_seconds, options.min_seconds, options.prompt = max_seconds, min_seconds, prompt
        options.fragmented = 1 if fragmented else 0
        options.voice_processing = 1 if voice_processing else 0
        options.trim_silence = 1 if trim_silence else 0
        handle = ctypes.c_void_p()
        _check(_record_start(engine._handle() if engine else None, ctypes.byref(options), ctypes.byref(handle)))
        self._recorder = handle

    def level(self) -> "tuple[float, float]":
        """(average, peak) of channel 0 now, in dBFS (-160 for silence): for a meter."""
        average, peak = ctypes.c_float(), ctypes.c_float()
        _check(_record_level(self._recorder, ctypes.byref(average), ctypes.byref(peak)))
        return average.value, peak.value

    @property
    def elapsed(self) -> float:
        """Seconds recorded so far (the count-up)."""
        seconds = ctypes.c_double()
        _check(_record_elapsed(self._recorder, ctypes.byref(seconds), None))
        return seconds.value

    @property
    def finished(self) -> bool:
        """Whether it ended by itself (max_seconds, a full disk, a lost device): stop() says how."""
        done = ctypes.c_int()
        _check(_record_elapsed(self._recorder, None, ctypes.byref(done)))
        return bool(done.value)

    def stop(self) -> "tuple[str, float]":
        """Completes the file: (its path, its duration in seconds)."""
        buffer = ctypes.create_string_buffer(4096)
        seconds = ctypes.c_double()
        _check(_record_stop(self._recorder, buffer, len(buffer), ctypes.byref(seconds)))
        return os.fsdecode(buffer.value), seconds.value

    def cancel(self) -> None:
        """Stops and removes the file."""
        _check(_record_cancel(self._recorder))
