"""The node agent's checkpoint protocol, for a training loop (docs/node-agent.md, "The process runner").

When the scheduler wants a checkpoint (its interval, a spot interruption, a drain), the agent sends the
worker SIGUSR1. The worker saves where it likes and says where by writing that path into the marker file
GPUCLOUD_CHECKPOINT_MARKER (inside GPUCLOUD_CHECKPOINT_DIR); the agent reads it, deletes it and reports the
checkpoint, and a resumed run finds it in GPUCLOUD_RESUME_FROM. ::

    from gpucloud import checkpoint
    checkpoint.install()                # early: SIGUSR1's default action ends the process
    start = checkpoint.resume_from()    # None on a first run
    for step in ...:
        train_one_step()
        if checkpoint.due():
            checkpoint.saved(save_to(checkpoint.directory()))
"""
import os
import signal
import threading

from .errors import CheckpointError

#: The marker's name in the checkpoint directory (node-agent ProcessRunner.CHECKPOINT_MARKER).
MARKER_NAME = ".gpucloud-checkpoint"
#: The most of the marker the agent reads.
MAX_MARKER_BYTES = 4096


class CheckpointSignal:
    """Learns from SIGUSR1 (or another signal) that a checkpoint is due; a context manager that restores the
    previous handler on exit. ``due()`` stays true until ``saved()`` reports the checkpoint."""

    def __init__(self, signum=signal.SIGUSR1):
        self.signum = signum
        self._requested = threading.Event()
        self._previous = None
        self._installed = False
        self.requests = 0

    def install(self):
        """Handles the signal from now on; the handler that was there still runs after ours, if it was one."""
        if self._installed:
            return self
        try:
            self._previous = signal.signal(self.signum, self._handle)
        except ValueError:
            raise CheckpointError("gpucloud.checkpoint.install() must run in the main thread (Python delivers"
                                  " signals there only); call it before starting other threads") from None
        self._installed = True
        return self

    def uninstall(self):
        """Puts the handler back that was there before install()."""
        if self._installed:
            signal.signal(self.signum, self._previous if self._previous is not None else signal.SIG_DFL)
            self._installed = False

    def __enter__(self):
        return self.install()

    def __exit__(self, *exc):
        self.uninstall()
        return False

    def _handle(self, signum, frame):
        self.requests += 1
        self._requested.set()
        if callable(self._previous) and self._previous is not self._handle:
            self._previous(signum, frame)

    def due(self):
        """Whether a checkpoint was asked for and not yet reported with saved()."""
        if not self._installed:
            raise CheckpointError("call gpucloud.checkpoint.install() (or use it as a context) before due():"
                                  " without the handler SIGUSR1 ends the process")
        return self._requested.is_set()

    def wait(self, timeout=None):
        """Blocks until a checkpoint is due (or timeout seconds pass); returns due()."""
        self._requested.wait(timeout)
        return self.due()

    def saved(self, path):
        """Reports the checkpoint at ``path`` to the agent; see :func:`saved`. Clears due()."""
        marker = write_marker(path)
        self._requested.clear()
        return marker


def directory():
    """GPUCLOUD_CHECKPOINT_DIR: where to save (a local folder the agent made), or None outside gpucloud."""
    return os.environ.get("GPUCLOUD_CHECKPOINT_DIR") or None


def resume_from():
    """GPUCLOUD_RESUME_FROM: the latest checkpoint of a resumed job, or None on a first run."""
    return os.environ.get("GPUCLOUD_RESUME_FROM") or None


def marker_path():
    """The marker file to write: GPUCLOUD_CHECKPOINT_MARKER, else .gpucloud-checkpoint in the directory."""
    marker = os.environ.get("GPUCLOUD_CHECKPOINT_MARKER")
    if marker:
        return marker
    folder = directory()
    return os.path.join(folder, MARKER_NAME) if folder else None


def write_marker(path):
    """Tells the agent a checkpoint is saved at ``path`` (absolute, a URI such as s3://..., or relative to the
    checkpoint directory): writes it to the marker file atomically (a file beside it, then a rename), so the
    agent never reads half a path. Returns the marker's path; None outside gpucloud (no marker to write)."""
    text = os.fspath(path) if isinstance(path, os.PathLike) else path
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    if not isinstance(text, str) or not text.strip():
        raise CheckpointError("saved(path): path is where the checkpoint was written (a file, folder or URI),"
                              " was %r" % (path,))
    if "\0" in text or "\n" in text or "\r" in text:
        raise CheckpointError("saved(path): a path without NUL or line breaks, was %r" % (path,))
    data = text.strip().encode("utf-8", "surrogateescape") + b"\n"
    if len(data) > MAX_MARKER_BYTES:
        raise CheckpointError("saved(path): the agent reads at most %d bytes of the marker; the path has %d"
                              % (MAX_MARKER_BYTES, len(data)))
    marker = marker_path()
    if marker is None:
        return None
    folder = os.path.dirname(marker) or "."
    if not os.path.isdir(folder):
        raise CheckpointError("the checkpoint directory %s does not exist (GPUCLOUD_CHECKPOINT_MARKER is %s)"
                              % (folder, marker))
    partial = os.path.join(folder, ".%s.%d.partial" % (os.path.basename(marker), os.getpid()))
    try:
        with open(partial, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, marker)
    except OSError as e:
        try:
            os.remove(partial)
        except OSError:
            pass
        raise CheckpointError("cannot write the checkpoint marker %s (%s)" % (marker, e.strerror or e)) from None
    return marker


_default = CheckpointSignal()


def install():
    """Handles SIGUSR1 from now on (main thread, early in the program). Returns the process's CheckpointSignal."""
    return _default.install()


def uninstall():
    _default.uninstall()


def due():
    """Whether a checkpoint was asked for (SIGUSR1) and not yet reported with saved()."""
    return _default.due()


def wait(timeout=None):
    return _default.wait(timeout)


def saved(path):
    """Reports the checkpoint at ``path`` (see write_marker) and clears due(). Returns the marker's path, or None
    outside gpucloud."""
    return _default.saved(path)


def requested():
    """The process's CheckpointSignal, as a context: ``with checkpoint.requested() as ckpt: ... ckpt.due()``."""
    return _default
