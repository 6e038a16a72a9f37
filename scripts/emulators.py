#!/usr/bin/env python3
"""Real S3 and Azure servers for the tests, on 127.0.0.1 only:

    scripts/emulators.py run CMD [ARGS...]
    scripts/emulators.py install            (only install, e.g. to warm a CI cache)

(scripts/emulators.sh, which the README, CI and the tests name, runs this.)

Installs (once, cached in git-ignored folders) moto 5.2.5 (S3; run by scripts/moto_server.py,
which makes its conditional PUTs atomic as on S3 and serves it with waitress 3.0.2, which keeps
connections alive as S3 does) in .venv-moto and Azurite 3.35.0 (Azure
Blob, sped up by scripts/azurite_preload.js: no periodic extent collection, which stalls it
for minutes under the fleet test, and blob lookups through the name index) in .cache/azurite;
starts both on free loopback ports; creates the bucket and the container `memfs-test`; runs
CMD with

    MEMFS_TEST_S3_ENDPOINT, MEMFS_TEST_S3_BUCKET          (moto)
    MEMFS_TEST_AZURE_ENDPOINT, AZURITE_BLOB_STORAGE_URL,  (Azurite; object_store's emulator
    MEMFS_TEST_AZURE_CONTAINER                             mode reads AZURITE_BLOB_STORAGE_URL)
    MEMFS_TEST_CLOUD=required                             (a test missing these fails, never skips)
    AWS_EC2_METADATA_DISABLED=true

and stops both servers when CMD ends, whatever happens (each in its own process group, which
only it and what it started are in: TERM, then KILL after 10 s), exiting with CMD's status
(128 + N if a signal N ended it). SIGINT or SIGTERM to this program is passed on to CMD, which
gets 10 s to end, before the servers are stopped. If CMD fails or a server died while it ran,
the servers' logs are kept and, for a server that died, their tails printed. Needs python3 (with
venv), Node.js 18 or newer and npm; standard library only. See docs/ARCHITECTURE.md ("Tests")
for why these two servers. No GCS emulator: fake-gcs-server 1.54.0 refuses the XML-API PUTs of
object_store's GCS client (400 invalid uploadType), and the one PUT it takes at that URL ignores
x-goog-if-generation-match; the GCS tests use a loopback stub of their own (docs/CLOUD.md,
"Google Cloud Storage", has the requests and answers).
"""

import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

MOTO_VERSION = "5.2.5"
WAITRESS_VERSION = "3.0.2"
AZURITE_VERSION = "3.35.0"
ROOT = Path(__file__).resolve().parent.parent
MOTO_VENV = ROOT / ".venv-moto"
AZURITE_DIR = ROOT / ".cache" / "azurite"
BUCKET = "memfs-test"
# How long a server may take to answer, and a process to end after SIGTERM.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0


class Failed(Exception):
    """A set-up step failed; its message is printed and the program exits with 1."""


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def say(message: str) -> None:
    print(f"emulators: {message}", file=sys.stderr, flush=True)


def tail(log: Path, lines: int = 30) -> None:
    try:
        text = log.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return
    sys.stderr.write("".join(f"{line}\n" for line in text))


def output(*cmd: str) -> str:
    """What `cmd` prints, or "" if it fails."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


# --- installing ----------------------------------------------------------------------------


def check_tools() -> None:
    for tool, why in [("node", "Azurite runs on Node.js 18 or newer"), ("npm", "Azurite is installed with npm")]:
        if shutil.which(tool) is None:
            raise Failed(f"{tool} is not installed ({why})")
    major = output("node", "-p", 'process.versions.node.split(".")[0]')
    if not major.isdigit() or int(major) < 18:
        raise Failed(f"Azurite {AZURITE_VERSION} needs Node.js 18 or newer; node is {output('node', '--version')}")


def moto_installed() -> bool:
    python = MOTO_VENV / "bin" / "python"
    versions = 'import importlib.metadata as m; print(m.version("moto"), m.version("waitress"))'
    return (MOTO_VENV / "bin" / "moto_server").exists() and output(
        str(python), "-c", versions
    ) == f"{MOTO_VERSION} {WAITRESS_VERSION}"


def azurite_installed() -> bool:
    package = AZURITE_DIR / "node_modules" / "azurite" / "package.json"
    return (AZURITE_DIR / "node_modules" / ".bin" / "azurite-blob").exists() and output(
        "node", "-p", f"require({str(package)!r}).version"
    ) == AZURITE_VERSION


def install() -> None:
    check_tools()
    (ROOT / ".cache").mkdir(exist_ok=True)
    # One installer at a time: two runs started together on a fresh clone must not both
    # write the same virtualenv.
    with open(ROOT / ".cache" / "emulators.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not moto_installed():
            say(f"installing moto[server]=={MOTO_VERSION} and waitress=={WAITRESS_VERSION} into {MOTO_VENV}")
            subprocess.run([sys.executable, "-m", "venv", str(MOTO_VENV)], check=True)
            pip = [str(MOTO_VENV / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check"]
            packages = [f"moto[server]=={MOTO_VERSION}", f"waitress=={WAITRESS_VERSION}"]
            subprocess.run([*pip, *packages], check=True, stdout=sys.stderr)
            if not moto_installed():
                raise Failed(f"moto {MOTO_VERSION} and waitress {WAITRESS_VERSION} are not in {MOTO_VENV} after installing them")
        if not azurite_installed():
            say(f"installing azurite@{AZURITE_VERSION} into {AZURITE_DIR}")
            AZURITE_DIR.mkdir(parents=True, exist_ok=True)
            npm = ["npm", "install", "--prefix", str(AZURITE_DIR), "--no-audit", "--no-fund", "--loglevel=error"]
            subprocess.run([*npm, f"azurite@{AZURITE_VERSION}"], check=True, stdout=sys.stderr)
            if not azurite_installed():
                raise Failed(f"azurite {AZURITE_VERSION} is not in {AZURITE_DIR} after installing it")


# --- the servers ---------------------------------------------------------------------------


def free_ports(n: int) -> list[int]:
    """`n` distinct free ports on 127.0.0.1 (every socket is held until all are known)."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class Server:
    """A server started in its own process group, its output in `logs/NAME.log`."""

    def __init__(self, name: str, cmd: list[str], logs: Path, env: dict[str, str] | None = None):
        self.name = name
        self.log = logs / f"{name.lower()}.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )

    def wait_for(self, url: str) -> None:
        """Until `url` answers (any HTTP status), the server exits, or 60 s pass."""
        start = time.monotonic()
        while time.monotonic() - start < START_TIMEOUT:
            try:
                urllib.request.urlopen(url, timeout=2).close()
                answered = True
            except urllib.error.HTTPError:
                answered = True
            except (OSError, ValueError):
                answered = False
            if answered:
                say(f"{self.name} is up after {int(time.monotonic() - start)} s")
                return
            if self.process.poll() is not None:
                say(f"{self.name} exited before answering; the end of its log:")
                tail(self.log)
                raise Failed(f"{self.name} did not start")
            time.sleep(0.2)
        say(f"{self.name} did not answer on {url} within {int(START_TIMEOUT)} s; the end of its log:")
        tail(self.log)
        raise Failed(f"{self.name} did not start")

    def stop(self) -> None:
        stop_group(self.process)


def stop_group(process: subprocess.Popen) -> None:
    """SIGTERM to the process group `process` leads, up to 10 s to end, then SIGKILL; reaps it."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=STOP_TIMEOUT)
            return
        except subprocess.TimeoutExpired:
            say(f"process {process.pid} ignored SIGTERM for {int(STOP_TIMEOUT)} s; killing it")


def terminate(process: subprocess.Popen) -> None:
    """SIGTERM to `process` (CMD, in this program's group), up to 10 s to end, then SIGKILL."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        say(f"process {process.pid} ignored SIGTERM for {int(STOP_TIMEOUT)} s; killing it")
        process.kill()
        process.wait()


def start(logs: Path) -> tuple[list[Server], dict[str, str]]:
    """moto and Azurite on free ports, answering, with the bucket and the container made; the
    variables CMD gets."""
    s3_port, az_port = free_ports(2)
    # moto's server with its conditional PUTs made atomic, as on S3 (see scripts/moto_server.py).
    moto = [str(MOTO_VENV / "bin" / "python"), str(ROOT / "scripts" / "moto_server.py")]
    moto += ["-H", "127.0.0.1", "-p", str(s3_port)]
    # Keep-alive 300 s, as Azure's own idle timeout is minutes: Azurite's default of 5 s closes
    # connections the client still pools (reqwest keeps them 90 s), and a request sent on one
    # as it closes is lost, which real Azure does not do to an active client.
    # Without its periodic extent garbage collection, whose pass over every extent blocks
    # Azurite's one thread for minutes once the fleet test has made many blobs, and with blob
    # lookups that do not walk every blob (see scripts/azurite_preload.js). --silent: no access
    # log, a line per request on its only thread (as with moto's, see scripts/moto_server.py).
    azurite = [str(AZURITE_DIR / "node_modules" / ".bin" / "azurite-blob"), "--blobHost", "127.0.0.1"]
    azurite += ["--blobPort", str(az_port), "--blobKeepAliveTimeout", "300", "--silent", "--inMemoryPersistence"]
    azurite += ["--disableTelemetry", "--skipApiVersionCheck", "--loose"]
    preload = {"MEMFS_AZURITE_DIR": str(AZURITE_DIR), "NODE_OPTIONS": f"--require {ROOT}/scripts/azurite_preload.js"}
    servers: list[Server] = []
    try:
        servers.append(Server("moto", moto, logs))
        servers.append(Server("Azurite", azurite, logs, env={**os.environ, **preload}))
        servers[0].wait_for(f"http://127.0.0.1:{s3_port}/")
        servers[1].wait_for(f"http://127.0.0.1:{az_port}/devstoreaccount1?comp=list")
        s3 = f"http://127.0.0.1:{s3_port}"
        azure = f"http://127.0.0.1:{az_port}"
        try:
            urllib.request.urlopen(urllib.request.Request(f"{s3}/{BUCKET}", method="PUT"), timeout=10).close()
        except (OSError, ValueError) as e:
            raise Failed(f"could not create the bucket {BUCKET} on moto: {e}") from None
        mkcontainer = [sys.executable, str(ROOT / "scripts" / "az_mkcontainer.py"), azure, BUCKET]
        if subprocess.run(mkcontainer, stdin=subprocess.DEVNULL).returncode != 0:
            raise Failed(f"could not create the container {BUCKET} on Azurite")
    except BaseException:
        for server in servers:
            server.stop()
        raise
    env = {
        "MEMFS_TEST_S3_ENDPOINT": s3,
        "MEMFS_TEST_S3_BUCKET": BUCKET,
        "MEMFS_TEST_AZURE_ENDPOINT": azure,
        "AZURITE_BLOB_STORAGE_URL": azure,
        "MEMFS_TEST_AZURE_CONTAINER": BUCKET,
        "MEMFS_TEST_CLOUD": "required",
        # The AWS client must never wander off to an instance metadata service.
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    return servers, env


# --- running CMD ---------------------------------------------------------------------------


def on_signal(signum: int, _frame) -> None:
    raise Interrupted(signum)


def run(cmd: list[str]) -> int:
    install()
    logs = Path(tempfile.mkdtemp(prefix="memfs-emulators."))
    servers: list[Server] = []
    status, child = 1, None
    try:
        servers, env = start(logs)
        s3, azure = env["MEMFS_TEST_S3_ENDPOINT"], env["MEMFS_TEST_AZURE_ENDPOINT"]
        say(f"moto on {s3}, Azurite on {azure}; running: {' '.join(cmd)}")
        try:
            # In this program's process group, with its stdin: a Ctrl-C on the terminal
            # reaches CMD as it would without this program.
            child = subprocess.Popen(cmd, env={**os.environ, **env})
        except OSError as e:
            raise Failed(f"cannot run {cmd[0]}: {e}") from None
        returncode = child.wait()
        status = 128 - returncode if returncode < 0 else returncode
    except Interrupted as e:
        # Pass it on to CMD and let it end; then the servers are stopped below.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        status = 128 + e.signum
        if child is not None and child.poll() is None:
            child.send_signal(e.signum)
            terminate(child)
    except Failed as e:
        say(str(e))
        status = 1
    finally:
        # No signal may cut the clean-up short: it ends within 10 s per process.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        keep = status != 0
        for server in servers:
            if child is not None and server.process.poll() is not None:
                say(f"{server.name} had exited before the end; the end of its log:")
                tail(server.log)
                keep = True
            server.stop()
        if keep:
            say(f"servers' logs kept in {logs}")
        else:
            shutil.rmtree(logs, ignore_errors=True)
    return status


def main(argv: list[str]) -> int:
    usage = "usage: scripts/emulators.sh run CMD [ARGS...] | install"
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        if argv[:1] == ["run"]:
            if len(argv) < 2:
                say("usage: scripts/emulators.sh run CMD [ARGS...]")
                return 2
            return run(argv[1:])
        if argv == ["install"]:
            install()
            return 0
    except Failed as e:
        say(str(e))
        return 1
    except subprocess.CalledProcessError as e:
        say(f"{' '.join(map(str, e.cmd))} failed with status {e.returncode}")
        return 1
    except Interrupted as e:
        return 128 + e.signum
    say(usage)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
