"""sfx's Python binding on sfx's virtual card: run by Tests/SFXCAPITests/PythonBindingTests.swift,
which installs the library (SFX_LIBRARY), makes a card (SFX_TEST_CARD: its directory; ALSA_CONFIG_PATH
points at it) and a settings file whose haptics backend appends each pattern to
SFX_TEST_VIBRATIONS."""
import os
import pathlib
import re
import threading

import pytest

import sfx

CARD = pathlib.Path(os.environ["SFX_TEST_CARD"])
README = pathlib.Path(os.environ["SFX_TEST_README"])


def onsets():
    log = CARD / "events.log"
    return [line for line in log.read_text().splitlines() if " onset " in line] if log.exists() else []


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
