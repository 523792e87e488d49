"""Atomic file output: a write is the old file or the complete new one, never a piece — under
exceptions and under real signals (SIGKILL, SIGTERM, SIGINT) sent to a process saving a large
model over an existing one, or writing ``bicrit predict`` output over an existing file."""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import bicrit
from bicrit._atomic import atomic_write, check_output_folder, check_writable

# ---------------------------------------------------------------------------- in process


def _leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


def test_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "t.txt"
    target.write_text("old\n")
    with atomic_write(target) as f:
        f.write("new ")
        assert target.read_text() == "old\n"  # nothing visible before the end
        f.write("content\n")
    assert target.read_text() == "new content\n"
    assert _leftovers(tmp_path, {"t.txt"}) == []


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_an_exception_keeps_the_old_file_and_removes_the_temporary(
    tmp_path: Path, error: type[BaseException]
) -> None:
    target = tmp_path / "t.bin"
    target.write_bytes(b"old")
    with pytest.raises(error), atomic_write(target, "wb") as f:
        f.write(b"half of the new")
        raise error
    assert target.read_bytes() == b"old"
    assert _leftovers(tmp_path, {"t.bin"}) == []


def test_permission_bits_kept_and_new_files_like_open(tmp_path: Path) -> None:
    target = tmp_path / "t.txt"
    target.write_text("x")
    target.chmod(0o640)
    with atomic_write(target) as f:
        f.write("y")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    plain, new = tmp_path / "plain.txt", tmp_path / "new.txt"
    plain.write_text("x")
    with atomic_write(new) as f:
        f.write("x")
    assert stat.S_IMODE(new.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)


def test_a_symlink_is_written_through(tmp_path: Path) -> None:
    real, link = tmp_path / "real.txt", tmp_path / "link.txt"
    real.write_text("old")
    link.symlink_to(real)
    with atomic_write(link) as f:
        f.write("new")
    assert link.is_symlink() and real.read_text() == "new"


def test_check_writable_says_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"folder .*missing does not exist"):
        check_writable(tmp_path / "missing" / "m.bicrit")
    with pytest.raises(IsADirectoryError, match="it is a folder"):
        check_writable(tmp_path)
    with pytest.raises(FileNotFoundError), atomic_write(tmp_path / "missing" / "x"):
        pass
    with pytest.raises(ValueError, match="whole files"), atomic_write(tmp_path / "x", "a"):
        pass
    assert check_writable(tmp_path / "new.txt") == tmp_path / "new.txt"


def test_check_output_folder(tmp_path: Path) -> None:
    assert check_output_folder(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError, match="it is a file, not a folder"):
        check_output_folder(tmp_path / "f")
    with pytest.raises(NotADirectoryError, match=r"f is a file, not a folder"):
        check_output_folder(tmp_path / "f" / "sub")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_check_writable_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(PermissionError, match="not writable"):
            check_writable(folder / "m.bicrit")
    finally:
        folder.chmod(0o700)


# ---------------------------------------------------------------------------- real signals

#: A child process that loads the big model, changes its weights and saves it over TARGET,
#: pausing (a marker on stdout, then a long sleep) at POINT: after the manifest went into the
#: temporary zip, before its fsync, or before the rename — or, for POINT "none", saving at
#: full speed while the parent kills it after a delay.
SAVER = """
import os, sys, time, signal, zipfile
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C even in a background job
import bicrit
base, target, point = sys.argv[1:4]
est = bicrit.load(base)
est._set_coef(est._w + 1.0)

def pause(name, original):
    def paused(*args, **kwargs):
        if name == point:
            print(point, flush=True)
            time.sleep(60)
        return original(*args, **kwargs)
    return paused

if point == "manifest":  # pause at the second entry: the temporary zip holds a part
    original = zipfile.ZipFile.writestr
    def writestr(self, name, *args, **kwargs):
        if name != "manifest.json":
            print("manifest", flush=True)
            time.sleep(60)
        return original(self, name, *args, **kwargs)
    zipfile.ZipFile.writestr = writestr
os.fsync = pause("fsync", os.fsync)
os.replace = pause("replace", os.replace)
print("saving", flush=True)
est.save(target)
print("saved", flush=True)
"""


@pytest.fixture(scope="module")
def big_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 16 MB multiclass model (500 000 features × 4 classes, random weights: deflate is
    slow on them), saved once; every test copies it as the target that must survive."""
    import scipy.sparse as sp

    X = sp.random(20, 500_000, density=2e-5, format="csr", random_state=0)
    est = bicrit.StructuredSVM(structure="multiclass", max_epochs=1, random_state=0)
    est.fit(X, np.arange(20) % 4)
    est._set_coef(np.random.default_rng(0).standard_normal(est._w.shape[0]))
    path = tmp_path_factory.mktemp("big") / "base.bicrit"
    est.save(path)
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run_and_signal(script: str, args: list[str], marker: str, sig: int, delay: float):
    """Runs ``script``; once it prints ``marker``, waits ``delay`` s and sends ``sig``.
    Returns (return code, everything it printed)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.strip())
            if line.strip() == marker:
                break
        else:
            pytest.fail(f"the child never printed {marker!r}: {proc.stderr.read()[-2000:]}")
        time.sleep(delay)
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, lines + out.split()


@pytest.mark.parametrize(
    ("sig", "point", "delay"),
    [
        (signal.SIGKILL, "manifest", 0.0),
        (signal.SIGKILL, "fsync", 0.0),
        (signal.SIGKILL, "replace", 0.0),
        (signal.SIGKILL, "saving", 0.3),
        (signal.SIGTERM, "saving", 0.2),
        (signal.SIGINT, "manifest", 0.0),
        (signal.SIGINT, "saving", 0.2),
    ],
    ids=lambda v: getattr(v, "name", str(v)),
)
def test_killed_save_keeps_the_old_model_bit_identical(
    big_model: Path, tmp_path: Path, sig: int, point: str, delay: float
) -> None:
    target = tmp_path / "target.bicrit"
    target.write_bytes(big_model.read_bytes())
    before = _digest(target)
    old_w = bicrit.load(target)._w.copy()
    pause = point if point != "saving" else "none"
    code, printed = _run_and_signal(SAVER, [str(big_model), str(target), pause], point, sig, delay)
    finished = "saved" in printed or (point == "saving" and _digest(target) != before)
    if finished:  # a timed signal came after the rename: the new model, complete
        assert np.array_equal(bicrit.load(target)._w, old_w + 1.0)
        return
    assert code == -sig or (sig == signal.SIGINT and code == 1), code
    assert _digest(target) == before
    w = bicrit.load(target)._w
    assert w.dtype == old_w.dtype and w.tobytes() == old_w.tobytes()
    if sig == signal.SIGINT:  # KeyboardInterrupt: the temporary file is removed too
        assert _leftovers(tmp_path, {"target.bicrit"}) == []
    if sig == signal.SIGKILL and point == "manifest":  # the save was really cut short
        [tmp] = _leftovers(tmp_path, {"target.bicrit"})
        assert tmp.startswith(".target.bicrit.") and tmp.endswith(".tmp")
        with pytest.raises(bicrit.errors.ModelFormatError):
            bicrit.load(tmp_path / tmp)


PREDICTOR = """
import os, sys, time
import bicrit.cli

def replace(*args):
    print("replace", flush=True)
    time.sleep(60)

os.replace = replace
sys.exit(bicrit.cli.main(sys.argv[1:]))
"""


def test_killed_predict_keeps_the_old_output(tmp_path: Path) -> None:
    model = tmp_path / "m.bicrit"
    data = bicrit.datasets.load_bundled("train")
    bicrit.MultiLabelSVM(max_epochs=1, random_state=0).fit(data).save(model)
    out = tmp_path / "pred.jsonl"
    out.write_text("precious\n")
    argv = ["predict", str(model), "bundled", "-o", str(out)]
    code, _ = _run_and_signal(PREDICTOR, argv, "replace", signal.SIGKILL, 0.0)
    assert code == -signal.SIGKILL
    assert out.read_text() == "precious\n"
    [tmp] = _leftovers(tmp_path, {"m.bicrit", "pred.jsonl"})
    assert len(Path(tmp_path / tmp).read_text().splitlines()) == 202  # every prediction
