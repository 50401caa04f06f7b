"""gpucloud.checkpoint with real signals: SIGUSR1 to this process, and to the documented example run as a worker."""
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gpucloud import CheckpointError, checkpoint

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "train.py"
DOCS = Path(__file__).resolve().parents[3] / "docs" / "python.md"


@pytest.fixture
def agent_env(tmp_path, monkeypatch):
    """The variables the node agent's process runner gives a worker."""
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    monkeypatch.setenv("GPUCLOUD_CHECKPOINT_DIR", str(folder))
    monkeypatch.setenv("GPUCLOUD_CHECKPOINT_MARKER", str(folder / ".gpucloud-checkpoint"))
    monkeypatch.delenv("GPUCLOUD_RESUME_FROM", raising=False)
    return folder


def wait_until(condition, what, limit=30.0):
    """Polls; the limit is only there so a broken test ends (nothing is asserted about time)."""
    end = time.monotonic() + limit
    while not condition():
        if time.monotonic() > end:
            pytest.fail("gave up waiting for " + what)
        time.sleep(0.01)


def test_sigusr1_makes_a_checkpoint_due_until_it_is_saved(agent_env):
    with checkpoint.CheckpointSignal() as ckpt:
        assert not ckpt.due()
        os.kill(os.getpid(), signal.SIGUSR1)
        wait_until(ckpt.due, "the handler")
        assert ckpt.due()
        marker = ckpt.saved("step-10.pt")
        assert not ckpt.due()
    assert Path(marker).read_text() == "step-10.pt\n"
    assert marker == str(agent_env / ".gpucloud-checkpoint")
    assert sorted(p.name for p in agent_env.iterdir()) == [".gpucloud-checkpoint"]  # no partial file is left


def test_the_module_functions_and_the_previous_handler_back_on_exit(agent_env):
    seen = []
    previous = signal.signal(signal.SIGUSR1, lambda s, f: seen.append(s))
    try:
        with checkpoint.requested():
            os.kill(os.getpid(), signal.SIGUSR1)
            wait_until(checkpoint.due, "the handler")
            assert seen == [signal.SIGUSR1]  # the handler that was there runs too
            checkpoint.saved(agent_env / "ckpt-1")
            assert not checkpoint.due()
        os.kill(os.getpid(), signal.SIGUSR1)
        wait_until(lambda: len(seen) == 2, "the restored handler")
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert (agent_env / ".gpucloud-checkpoint").read_text() == str(agent_env / "ckpt-1") + "\n"


def test_a_new_marker_replaces_the_one_the_agent_has_not_read(agent_env):
    checkpoint.write_marker("s3://ckpt/job/1")
    checkpoint.write_marker("s3://ckpt/job/2")
    assert (agent_env / ".gpucloud-checkpoint").read_text() == "s3://ckpt/job/2\n"


def test_the_marker_in_the_directory_when_only_it_is_set(agent_env, monkeypatch):
    monkeypatch.delenv("GPUCLOUD_CHECKPOINT_MARKER")
    assert checkpoint.write_marker("x") == str(agent_env / ".gpucloud-checkpoint")


def test_outside_gpucloud_nothing_is_written(monkeypatch):
    monkeypatch.delenv("GPUCLOUD_CHECKPOINT_DIR", raising=False)
    monkeypatch.delenv("GPUCLOUD_CHECKPOINT_MARKER", raising=False)
    assert checkpoint.write_marker("/tmp/x") is None
    assert checkpoint.directory() is None


def test_resume_from(monkeypatch):
    monkeypatch.delenv("GPUCLOUD_RESUME_FROM", raising=False)
    assert checkpoint.resume_from() is None
    monkeypatch.setenv("GPUCLOUD_RESUME_FROM", "/ckpt/step-40.json")
    assert checkpoint.resume_from() == "/ckpt/step-40.json"


@pytest.mark.parametrize("bad, message", [
    ("", "path is where the checkpoint was written"),
    ("   ", "path is where the checkpoint was written"),
    (None, "path is where the checkpoint was written"),
    (42, "path is where the checkpoint was written"),
    ("a\nb", "without NUL or line breaks"),
    ("a\0b", "without NUL or line breaks"),
    ("x" * 5000, "the agent reads at most 4096 bytes"),
])
def test_a_bad_path(agent_env, bad, message):
    with pytest.raises(CheckpointError, match=message):
        checkpoint.write_marker(bad)


def test_a_checkpoint_directory_that_is_not_there(agent_env, monkeypatch):
    monkeypatch.setenv("GPUCLOUD_CHECKPOINT_MARKER", str(agent_env / "gone" / ".gpucloud-checkpoint"))
    with pytest.raises(CheckpointError, match="the checkpoint directory .*gone does not exist"):
        checkpoint.write_marker("x")


def test_due_before_install_says_to_install():
    with pytest.raises(CheckpointError, match=r"call gpucloud.checkpoint.install\(\)"):
        checkpoint.CheckpointSignal().due()


def test_install_outside_the_main_thread_says_why():
    raised = []
    thread = threading.Thread(target=lambda: raised.append(_try_install()))
    thread.start()
    thread.join()
    assert "must run in the main thread" in raised[0]


def _try_install():
    try:
        checkpoint.CheckpointSignal().install()
    except CheckpointError as e:
        return str(e)
    return "installed"


def run_example(env, folder):
    return subprocess.Popen([sys.executable, str(EXAMPLE)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def test_the_documented_example_checkpoints_on_sigusr1_and_resumes_from_it(agent_env):
    """docs/python.md's training loop, run as the agent runs a worker: SIGUSR1, the marker, then a resumed run."""
    env = dict(os.environ, STEPS="100000", STEP_SECONDS="0.001")
    env.pop("GPUCLOUD_RESUME_FROM", None)
    worker = run_example(env, agent_env)
    try:
        assert worker.stdout.readline().startswith("training from step 0")
        worker.send_signal(signal.SIGUSR1)
        saved = worker.stdout.readline().strip()
        assert saved.startswith("checkpoint saved at " + str(agent_env))
    finally:
        worker.kill()
        worker.wait()
    path = (agent_env / ".gpucloud-checkpoint").read_text().strip()
    assert saved.endswith(path) and Path(path).exists()
    step = int(Path(path).stem.split("-")[1])
    resumed = subprocess.run([sys.executable, str(EXAMPLE)], env=dict(env, GPUCLOUD_RESUME_FROM=path,
                                                                      STEPS=str(step + 5)),
                             capture_output=True, text=True, check=True)
    assert resumed.stdout.splitlines()[0] == "training from step %d" % step
    assert resumed.stdout.splitlines()[-1].startswith("done at step %d" % (step + 5))


def test_the_example_in_the_docs_is_the_one_tested():
    if not DOCS.exists():
        pytest.skip("docs/python.md is not next to this checkout")
    assert EXAMPLE.read_text() in DOCS.read_text()
