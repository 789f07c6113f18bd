"""sfx's Python binding on sfx's virtual card: run by Tests/SFXCAPITests/PythonBindingTests.swift,
which installs the library (SFX_LIBRARY), makes a card (SFX_TEST_CARD: its directory; ALSA_CONFIG_PATH
points at it) and a settings file whose haptics backend appends each pattern to
SFX_TEST_VIBRATIONS. The card's events.log is complete once the engine that played has closed."""
import json
import math
import os
import pathlib
import re
import struct
import threading
import time
import wave

import pytest

import sfx

CARD = pathlib.Path(os.environ["SFX_TEST_CARD"])
README = pathlib.Path(os.environ["SFX_TEST_README"])


def log_lines():
    log = CARD / "events.log"
    return log.read_text().splitlines() if log.exists() else []


def onsets():
    return [line for line in log_lines() if " onset " in line]


def onset_frames(lines):
    """(frame, dac_ns) of each onset line: "<ns> onset stream=playback frame=F dac_ns=D file_frame=…"."""
    found = [re.search(r" onset stream=playback frame=(\d+) dac_ns=(\d+)", line) for line in lines]
    return [(int(match.group(1)), int(match.group(2))) for match in found if match]


def write_tone(path, hertz, seconds=0.1, silence=0.03, rate=48_000):
    """A 16-bit mono WAV: a sine at -8 dBFS, then `silence` seconds of silence (so the next sound
    after it ends is a new onset on the card)."""
    frames = [int(0.4 * 32767 * math.sin(2 * math.pi * hertz * i / rate)) for i in range(int(seconds * rate))]
    frames += [0] * int(silence * rate)
    with wave.open(str(path), "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(rate)
        file.writeframes(struct.pack(f"<{len(frames)}h", *frames))


def test_the_readmes_example_plays_tock_on_the_card(capsys):
    block = re.search(r"```python\n(.*?)\n```", README.read_text(), re.S)
    assert block, "the README has no ```python block"
    before = len(onsets())
    exec(compile(block.group(1), "README.md", "exec"), {})
    assert len(onsets()) == before + 1, "the example's tock reached the card's DAC"
    assert "finished" in capsys.readouterr().out


def test_completions_come_on_a_python_thread_once_each():
    seen = []
    done = threading.Event()

    def completed(voice, outcome, detail):
        seen.append((voice, outcome, detail, threading.current_thread().name))
        if len(seen) == 3:
            done.set()

    with sfx.Engine() as engine:
        tock = engine.system_sound("tock")
        voices = [engine.play(tock, volume=0.5, pan=p, group=sfx.GROUP_UI, priority=sfx.PRIORITY_HIGH,
                              on_complete=completed) for p in (-1.0, 0.0, 1.0)]
        assert done.wait(5)
    assert sorted(v for v, *_ in seen) == sorted(v.id for v in voices)
    assert {o for _, o, _, _ in seen} == {"finished"}
    assert {t for *_, t in seen} == {"sfx-callbacks"}


def test_a_voice_stops_and_changes_volume():
    outcome = []
    tone = [0.2] * 48_000
    with sfx.Engine() as engine:
        sound = engine.load_pcm(tone, channels=1, sample_rate=48_000)
        voice = engine.play(sound, loops=-1, on_complete=lambda v, o, d: outcome.append(o))
        voice.set_volume(0.5)
        voice.set_pan(-0.5)
        voice.stop(fade=0.02)
        assert engine.wait_idle(5)
    assert outcome == ["stopped"]


def test_errors_carry_sfxs_one_line():
    with sfx.Engine() as engine:
        with pytest.raises(sfx.SfxError) as unknown:
            engine.system_sound("no-such-sound-anywhere")
        assert unknown.value.kind == "sound" and "\n" not in str(unknown.value)
        assert "no-such-sound-anywhere" in str(unknown.value)
        tock = engine.system_sound("tock")
        with pytest.raises(sfx.SfxError) as loud:
            engine.play(tock, volume=99)
        assert loud.value.kind == "range" and "volume" in str(loud.value)
        with pytest.raises(sfx.SfxError) as missing:
            engine.load("/nonexistent/coin.ogg")
        assert "coin.ogg" in str(missing.value)
    with pytest.raises(ValueError):
        sfx.Engine(while_no_device="sometimes")


def test_alert_plays_and_vibrate_runs_the_backend():
    vibrations = pathlib.Path(os.environ["SFX_TEST_VIBRATIONS"])
    with sfx.Engine() as engine:
        before = len(onsets())
        result = engine.alert(engine.system_sound("bell"))
        assert result["played"] and result["voice"] is not None
        assert engine.wait_idle(10)
        assert len(onsets()) > before
        engine.vibrate([100, 50, 100])
    assert vibrations.read_text().split() == ["100,50,100"]


def test_an_engine_without_its_device_says_why_and_plays_on_the_clock():
    outcome = []
    with sfx.Engine(device="hw:CARD=NoSuchCard,DEV=0") as engine:
        playing, why = engine.device_status()
        assert not playing and "NoSuchCard" in why
        engine.play(engine.system_sound("tock"), on_complete=lambda v, o, d: outcome.append(o))
        assert engine.wait_idle(5)
    assert outcome == ["finished"]
    with pytest.raises(sfx.SfxError) as failed:
        sfx.Engine(device="hw:CARD=NoSuchCard,DEV=0", while_no_device="fail")
    assert failed.value.kind == "device"


def test_the_library_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", sfx.library_version())


def test_a_recording_with_a_prompt_a_meter_and_limits(tmp_path):
    with sfx.Engine() as engine:
        before = len(onsets())
        recorder = sfx.Recorder(tmp_path / "message.wav", engine=engine, prompt=engine.system_sound("tock"),
                                max_seconds=30, min_seconds=0.2)
        readings = []
        while recorder.elapsed < 0.5:
            readings.append(recorder.level())
            assert not recorder.finished
        path, seconds = recorder.stop()
    assert len(onsets()) == before + 1, "the prompt played (the card's log is complete once the engine closed)"
    assert path == str(tmp_path / "message.wav") and pathlib.Path(path).stat().st_size > 44
    assert 0.45 < seconds < 0.8
    assert readings and all(peak <= 0 for _, peak in readings)   # the card's capture side is silent here

    short = sfx.Recorder(tmp_path / "short.wav", min_seconds=5)
    with pytest.raises(sfx.SfxError) as rejected:
        short.stop()
    assert rejected.value.kind == "rejected" and "short.wav" in str(rejected.value)
    assert not (tmp_path / "short.wav").exists()

    gone = sfx.Recorder(tmp_path / "gone.flac")
    gone.cancel()
    assert not (tmp_path / "gone.flac").exists()
    with pytest.raises(sfx.SfxError) as unknown:
        sfx.Recorder(tmp_path / "x.aiff", format="aiff")
    assert unknown.value.kind == "range"


def test_a_banks_events_play_and_one_inside_its_cooldown_is_refused(tmp_path):
    write_tone(tmp_path / "hit.wav", 440)
    write_tone(tmp_path / "chime.wav", 880)
    (tmp_path / "game.json").write_text(json.dumps({"events": {
        "hit": {"sounds": ["hit.wav"], "cooldown": 60000},
        "chime": {"sounds": ["chime.wav"], "choose": "roundRobin", "volume": -3}}}))
    (tmp_path / "broken.json").write_text('{ "events": {\n  "hit": { "sounds": ["hit.wav"], "pich": [0, 1] } } }')
    completed = []
    before = len(onsets())
    with sfx.Engine() as engine:
        with pytest.raises(sfx.SfxError) as broken:
            engine.load_bank(tmp_path / "broken.json")
        assert broken.value.kind == "sound" and 'broken.json:2: event "hit": unknown key "pich"' in str(broken.value)
        with engine.load_bank(tmp_path / "game.json") as bank:
            hit = bank.play("hit", on_complete=lambda v, o, d: completed.append((v, o)))
            with pytest.raises(sfx.SfxError) as refused:
                bank.play("hit", on_complete=lambda v, o, d: completed.append((v, o)))
            assert refused.value.kind == "rejected" and "cooldown" in str(refused.value)
            assert "\n" not in str(refused.value)
            with pytest.raises(sfx.SfxError) as unknown:
                bank.play("nothing")
            assert unknown.value.kind == "sound" and '"nothing"' in str(unknown.value)
            assert engine.wait_idle(10)
            chime = bank.play("chime", volume=0.5, on_complete=lambda v, o, d: completed.append((v, o)))
            assert engine.wait_idle(10)
        with pytest.raises(sfx.SfxError) as closed:
            bank.play("chime")
        assert closed.value.kind == "closed"
        bank.close()                                  # a second close does nothing
    assert completed == [(hit.id, "finished"), (chime.id, "finished")], "the refused play is never completed"
    assert len(onsets()) == before + 2, "both events reached the card's DAC"


def save(path, text):
    """As an editor saves: a new file renamed over the old one."""
    temporary = path.with_name("." + path.name + ".saving")
    temporary.write_text(text)
    os.replace(temporary, path)


def test_a_watched_bank_reloads_an_edit_and_tells_why_it_refused_a_broken_one(tmp_path):
    write_tone(tmp_path / "hit.wav", 440)
    bank_file = tmp_path / "game.json"
    bank_file.write_text(json.dumps({"events": {"hit": {"sounds": ["hit.wav"]}}}))
    with sfx.Engine() as engine, engine.load_bank(bank_file) as bank:
        assert (bank.reloads, bank.problem) == (0, None)
        save(bank_file, json.dumps({"events": {"hit": {"sounds": ["hit.wav"], "volume": -6}}}))
        deadline = time.monotonic() + 10
        while bank.reloads == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (bank.reloads, bank.problem) == (1, None), "the edit reloaded"
        save(bank_file, '{ "events": {\n  "hit": { "sounds": ["hit.wav"], "pich": [0, 1] } } }')
        while bank.problem is None and time.monotonic() < deadline + 10:
            time.sleep(0.02)
        assert bank.problem == 'game.json:2: event "hit": unknown key "pich": use one of choose, cooldown, group, maxInstances, normalize, pitch, position, priority, seed, sounds, volume'
        assert bank.reloads == 1, "the broken edit is not reloaded"
        bank.play("hit")                               # the kept version plays on
        assert engine.wait_idle(10)


def test_an_alerts_caption_comes_on_a_python_thread():
    notices = []
    arrived = threading.Event()

    def alerted(caption, sound, reached):
        notices.append((caption, sound, reached, threading.current_thread().name))
        arrived.set()

    with sfx.Engine() as engine:
        bell = engine.system_sound("bell")
        assert engine.on_alert is None
        engine.on_alert = alerted
        assert engine.on_alert is alerted
        assert engine.alert(bell)["played"]           # the card's Master switch is on
        assert arrived.wait(10)
        engine.on_alert = None
        engine.alert(bell)
        assert engine.wait_idle(10)
        engine.set_alert_callback(alerted)
    assert engine.on_alert is None, "closing the engine stops the captions"
    with pytest.raises(sfx.SfxError) as closed:
        engine.on_alert = alerted
    assert closed.value.kind == "closed"
    assert notices == [("The generic alert", "bell", sfx.AlertReached.PLAYED, "sfx-callbacks")], notices
    reached = notices[0][2]
    assert reached & sfx.ALERT_PLAYED and not reached & (sfx.ALERT_VIBRATED | sfx.ALERT_QUIET_HOURS)


def test_a_slow_python_callback_never_holds_up_sfx():
    entered, release = threading.Event(), threading.Event()
    calls = []

    def slow(caption, sound, reached):
        calls.append("alert")
        entered.set()
        release.wait(30)

    with sfx.Engine() as engine:
        engine.on_alert = slow
        engine.alert(engine.system_sound("bell"))
        assert entered.wait(10)
        engine.play(engine.system_sound("tock"), on_complete=lambda v, o, d: calls.append(o))
        # sfx itself delivers every completion while the Python callback is still running: only
        # the binding's own thread waits for it (sfx_wait_idle, under Engine.wait_idle).
        assert sfx._wait_idle(engine._handle(), 10_000) == 0
        assert not engine.wait_idle(0.2), "the tock's completion is not called yet: the slow callback runs"
        assert calls == ["alert"]
        release.set()
        assert engine.wait_idle(10)
    assert calls == ["alert", "finished"], "in order, once each"


def test_a_play_at_a_frame_lands_on_it_and_one_past_says_how_late():
    start = len(log_lines())
    late_completions = []
    with sfx.Engine(period_frames=960, periods=4) as engine:    # a 20 ms period: a late timer never underruns
        blip = engine.load_pcm([0.5] * 480 + [0.0] * 960)         # 10 ms, then 20 ms of silence
        with pytest.raises(sfx.SfxError) as unknown:
            engine.play(999, at_frame=0)
        assert unknown.value.kind == "sound"
        with pytest.raises(ValueError):
            engine.play(blip, at_frame=0, max_instances=2)
        # No event says when the device has first said where its DAC is: ask, as clock_check.c does.
        for _ in range(500):
            try:
                engine.frame_to_monotonic(0)
                break
            except sfx.SfxError as error:
                assert error.kind == "device", error
                time.sleep(0.01)
        else:
            pytest.fail("the clock was not anchored within 5 s")
        now, schedulable = engine.clock_now()
        assert 0 <= now <= schedulable
        target = schedulable + 4801                               # 100 ms ahead, not on a period
        engine.play(blip, at_frame=target)
        dac_ns = engine.frame_to_monotonic(target)
        assert engine.wait_idle(5)
        now, _ = engine.clock_now()
        late = now - 2400                                         # 50 ms ago: it plays at once
        engine.play_at_time(blip, late, on_complete=lambda v, o, d: late_completions.append((o, d)))
        assert engine.wait_idle(5)
    heard = onset_frames(log_lines()[start:])
    assert len(heard) == 2, heard
    assert heard[0][0] == target, "on its frame (the engine opened its device once: its stream frame is the engine's)"
    assert abs(heard[0][1] - dac_ns) < 0.02e9, "when the clock said, within a 20 ms period"
    assert heard[1][0] > late
    [(outcome, detail)] = late_completions
    assert outcome == "finished" and detail.startswith("started "), detail
    assert sfx.frames_late(detail) == heard[1][0] - late, "the completion says how late, to the frame"
    assert sfx.frames_late(None) == 0 and sfx.frames_late("outranked") == 0


def test_the_packages_readme_examples_run_on_the_card(tmp_path, monkeypatch, capsys):
    readme = pathlib.Path(__file__).resolve().parent.parent / "README.md"
    blocks = re.findall(r"```python\n(.*?)\n```", readme.read_text(), re.S)
    assert len(blocks) == 4, "the README shows plays, banks, alert captions and plays at a frame"
    monkeypatch.chdir(tmp_path)                               # the bank example's footsteps.json
    write_tone(tmp_path / "step.wav", 330)
    (tmp_path / "footsteps.json").write_text(json.dumps({"events": {"step": {"sounds": ["step.wav"], "cooldown": 1000}}}))
    before = len(onsets())
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"README.md block {number}", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 8, out
    assert out[0] == "finished", "the tock: " + repr(out)
    refused, step = sorted(out[1:3])                          # the step's completion comes on the callback thread
    assert step == "finished", "the step: " + repr(out)
    assert refused.startswith('event "step" did not play:') and "cooldown" in refused, "the refused step: " + repr(out)
    # (the bell played: the caption example prints nothing)
    assert all(re.fullmatch(r"finished \d+", line) for line in out[3:7]), "the four ticks: " + repr(out)
    assert re.fullmatch(r"the first tick was heard at \d+ ns", out[7]), out
    assert len(onsets()) >= before + 7, "tock, step, bell and four ticks reached the card's DAC"
