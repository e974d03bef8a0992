"""`workstation doctor`: the pre-flight of an OpenAI-compatible server, through the CLI, with the real
openai SDK over HTTP against the fake provider acting plain, vLLM-like and llama.cpp-like."""

from __future__ import annotations

import pytest

from tests.fake_provider import ServerShape, closed_port, llamacpp_like, vllm_like
from workstation.cli import main
from workstation.engine.promptpack import load_pack
from workstation.game.games import get_game
from workstation.game.protocol import Protocol
from workstation.studies.doctor.checks import png_frame, protocol_needs


@pytest.fixture(autouse=True)
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def doctor(capsys, *args: str) -> tuple[int, list[str], str]:
    code = main(["doctor", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def line(lines: list[str], name: str) -> str:
    found = [x for x in lines if x.split(None, 1)[1].startswith(name + ":")]
    assert len(found) == 1, lines
    return found[0]


def test_plain_stand_in_can_go_and_says_images(fake, capsys):
    code, lines, err = doctor(capsys, "--base-url", fake.url("compat"), "--model", "qwen2.5-vl-7b")
    assert code == 0, (lines, err)
    assert line(lines, "reachable").startswith("ok")
    assert line(lines, "model").startswith("warn")  # no /v1/models on a plain stand-in
    assert line(lines, "image").startswith("ok")
    images = line(lines, "images per request")
    assert images.startswith("ok") and "67 images" in images  # (3 + 3) x (1 + 10) + 1
    assert line(lines, "streaming").startswith("ok")
    assert line(lines, "usage").startswith("ok")
    assert line(lines, "timings").startswith("ok") and "reports no inference time" in line(lines, "timings")
    assert lines[-1].startswith("doctor: a run can go")
    bodies = [s.body for s in fake.seen]
    assert all(b["model"] == "qwen2.5-vl-7b" for b in bodies)
    assert max(sum(1 for m in b["messages"] if isinstance(m["content"], list) for c in m["content"]
                   if c["type"] == "image_url") for b in bodies) == 67


def test_closed_port_is_one_line_at_once(capsys):
    port = closed_port()
    code, lines, err = doctor(capsys, "--base-url", f"http://127.0.0.1:{port}/v1")
    assert code == 2
    assert lines == []
    assert len(err.splitlines()) == 1
    assert f"nothing answers at http://127.0.0.1:{port}/v1" in err and "--base-url" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("url", ["localhost:8000/v1", "ftp://x/v1", ""])
def test_bad_url_is_one_line(capsys, url):
    code, lines, err = doctor(capsys, "--base-url", url)
    assert code == 2 and lines == [] and len(err.splitlines()) == 1


def test_bad_protocol_setting_is_one_line_before_any_request(fake, capsys):
    code, lines, err = doctor(capsys, "--base-url", fake.url("compat"), "--history", "99")
    assert code == 2 and lines == [] and "--history" in err and len(err.splitlines()) == 1
    assert fake.seen == []


def test_vllm_image_limit_fails_with_the_flag_to_change(fake, capsys):
    fake.shape = vllm_like(image_limit=1)
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"))
    assert code == 2
    assert "checking 'Qwen/Qwen2.5-VL-3B-Instruct'" in line(lines, "model")
    assert line(lines, "image").startswith("ok")
    images = line(lines, "images per request")
    assert images.startswith("FAIL") and "at most 1 image in one request" in images and "67" in images
    assert "--limit-mm-per-prompt" in images and "--history" in images
    assert lines[-1].startswith("doctor: a run cannot go")


def test_the_per_frame_cost_is_measured_not_guessed_when_the_server_counts_tokens(fake, capsys):
    # the stand-in counts 120 tokens a frame: 67 x 120 + the text fits vLLM's 32,768 (576 a frame would not)
    fake.shape = vllm_like(image_limit=1)
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"))
    assert "120 for the frame" in line(lines, "image")
    window = line(lines, "context window")
    assert window.startswith("warn") and "67 frames x 120 tokens as measured" in window, window
    assert "9,356" in window and "39,908" not in window
    assert code == 2 and line(lines, "images per request").startswith("FAIL")  # only the image limit stops it


def test_the_advice_never_names_the_setting_in_use(fake, capsys):
    fake.shape = vllm_like(image_limit=1000, max_model_len=4000)
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"))
    window = line(lines, "context window")
    assert code == 2 and window.startswith("FAIL") and "--memory structured" not in window and "--history" in window
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"), "--memory", "append", "--frames", "300")
    window = line(lines, "context window")
    assert code == 2 and window.startswith("FAIL") and "--memory structured" in window and "--history" not in window
    fake.shape = vllm_like(image_limit=1)
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"), "--memory", "append", "--frames", "300")
    images = line(lines, "images per request")
    assert images.startswith("FAIL") and "--memory structured" in images and "--history" not in images


def test_one_image_is_said_in_the_singular(fake, capsys):
    fake.shape = vllm_like(image_limit=1)
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"), "--history", "0", "--reward-history", "0")
    assert code == 0, lines
    assert "a request may carry 1 image, the most a turn needs" in line(lines, "images per request")
    assert "image(s)" not in "\n".join(lines) and "1 images" not in "\n".join(lines)


def test_vllm_with_room_reports_window_and_reasoning(fake, capsys):
    fake.shape = vllm_like(image_limit=100)
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"), "--history", "1", "--reward-history", "1")
    assert code == 0, lines
    assert "23 images" in line(lines, "images per request")  # (1 + 1) x 11 + 1
    window = line(lines, "context window")
    assert window.startswith("ok") and "32,768 tokens (max_model_len)" in window
    assert "reasoning_content" in line(lines, "reasoning")


def test_vllm_context_too_small(fake, capsys):
    fake.shape = vllm_like(image_limit=100, max_model_len=4000)
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"))
    assert code == 2
    window = line(lines, "context window")
    assert window.startswith("FAIL") and "--max-model-len" in window and "--ctx-size" in window


def test_context_measured_leaves_no_room_for_the_reply(fake, capsys):
    # 67 images x 120 tokens fit in 9,000 but leave less than a 2,000-token reply needs
    fake.shape = vllm_like(image_limit=100, max_model_len=10_000)
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"), "--max-output-tokens", "2000")
    assert code == 2
    window = line(lines, "context window")
    assert window.startswith("FAIL") and "a reply needs 2,000 more" in window


def test_model_not_served(fake, capsys):
    fake.shape = vllm_like()
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"), "--model", "llava")
    assert code == 2
    assert line(lines, "model").startswith("FAIL") and "Qwen/Qwen2.5-VL-3B-Instruct" in line(lines, "model")
    assert len(fake.seen) == 0  # nothing sent to a model it does not serve


def test_llamacpp_timings_and_usage(fake, capsys):
    fake.shape = llamacpp_like()
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"), "--clock", "latency:server")
    assert code == 0, lines
    assert "0.501 s" in line(lines, "timings") and "latency:server" in line(lines, "timings")
    assert "context window" in "\n".join(lines)


def test_no_usage_in_streams_and_no_timings_under_the_server_clock(fake, capsys):
    fake.shape = ServerShape(models=["m"], stream_usage=False)
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"), "--clock", "latency:server")
    assert code == 0
    assert line(lines, "usage").startswith("warn") and "stream" in line(lines, "usage")
    assert line(lines, "timings").startswith("warn") and "wall time" in line(lines, "timings")


def test_think_tag_rule_is_named(fake, capsys):
    fake.shape = ServerShape(models=["Qwen/Qwen3-VL-8B-Thinking"])
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"))
    assert code == 0
    assert "think tags (qwen3)" in line(lines, "reasoning")


def test_needs_follow_the_settings():
    game, pack = get_game("breakout"), load_pack(None)
    assert protocol_needs(game, Protocol(), pack).images == 67
    assert protocol_needs(game, Protocol(history=0, reward_history=0), pack).images == 1
    assert protocol_needs(game, Protocol(max_actions=1, history=2, reward_history=1), pack).images == 7
    append = protocol_needs(game, Protocol(memory="append", frames=90), pack)
    assert append.images == 1 + 2 * 10  # the first frame, then every action of the two earlier turns
    assert png_frame(210).startswith(b"\x89PNG")


def test_the_key_is_sent_never_shown(fake, capsys, monkeypatch):
    secret = "sk-local-SECRET-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    fake.shape = vllm_like(image_limit=1)
    code, lines, err = doctor(capsys, "--base-url", fake.url("compat"))
    assert code == 2 and secret not in "\n".join(lines) + err
    assert all(s.headers.get("authorization") == f"Bearer {secret}" for s in fake.seen)
    port = closed_port()
    code, lines, err = doctor(capsys, "--base-url", f"http://127.0.0.1:{port}/v1")
    assert code == 2 and secret not in err


def test_a_server_without_vision_fails_the_image_check(fake, capsys):
    fake.shape = llamacpp_like(vision=False)
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"))
    assert code == 2
    image = line(lines, "image")
    assert image.startswith("FAIL") and "--mmproj" in image and "image input is not supported" in image
    assert lines[-1].startswith("doctor: a run cannot go")


def test_llamacpp_context_from_props(fake, capsys):
    fake.shape = llamacpp_like(n_ctx=16384)
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"))
    assert code == 0, lines
    assert "16,384 tokens (n_ctx in /props)" in line(lines, "context window")
    fake.shape = llamacpp_like(n_ctx=4096)  # llama-server's usual default: 67 frames of 100 tokens do not fit
    code, lines, _ = doctor(capsys, "--base-url", fake.url("compat"))
    assert code == 2
    window = line(lines, "context window")
    assert window.startswith("FAIL") and "exceeds the available context size" in window and "--ctx-size" in window


def test_a_run_stopped_by_the_image_limit_points_to_doctor(fake, capsys, tmp_path):
    fake.shape = vllm_like(image_limit=1)  # the first turn carries one frame; the next ones more
    code = main(["run", "--game", "breakout", "--agent", "compat:Qwen/Qwen2.5-VL-3B-Instruct", "--base-url",
                 fake.url("compat"), "--frames", "120", "--out", str(tmp_path), "--quiet"])
    _, err = capsys.readouterr()
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "takes at most 1 image in one request" in err and "workstation doctor" in err
    assert "--limit-mm-per-prompt" in err and "check the options for this model" not in err
