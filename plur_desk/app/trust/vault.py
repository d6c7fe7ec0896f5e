"""Where the reviewer's private key lives: the OS keyring when one works, else a 0600 file in the user's data folder.

Never in the store, where agents read and write. The key is PLUR's format (Ed25519 PKCS#8 DER); in the keyring it
is kept base64-encoded under the service name below and the signing identity as user name.
"""

from __future__ import annotations

import base64
import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from plur_desk.infra.errors import KeyUnavailable, Outcome
from plur_desk.store.keys.signatures import load_private_key, private_key_der

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

# keyring is imported where the key is first needed, never at launch: importing it (and what it imports) costs
# about a tenth of a second that the window would otherwise wait for.

SERVICE = "plur-desk reviewer key"
KEYRING_PROTECTS = (
    "kept in the system keyring: other user accounts and programs without access to your unlocked keyring cannot "
    "read it; agents writing to the store never see it"
)
FILE_PROTECTS = (
    "no system keyring was available, so it is a file readable only by your user account (mode 0600): it is out "
    "of the store agents write to, but any program running as you can read it"
)


class KeyLocked(Exception):
    """The keyring exists but is locked (or refused access)."""


@dataclass(frozen=True)
class KeyLocation:
    """Where the reviewer's private key is kept (keyring or file), in words for the reviewer."""

    kind: str  # "keyring" or "file"
    where: str
    protects: str

    def sentence(self) -> str:
        return f"{self.where}; {self.protects}"


def safe_name(identity: str) -> str:
    """PLUR's private-key file name rule: every character outside [A-Za-z0-9._:-] becomes `_`."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "._:-") else "_" for c in identity)


class KeyVault:
    def __init__(self, data_dir: Path) -> None:
        self.dir = data_dir / "keys"

    def _file(self, identity: str) -> Path:
        return self.dir / f"{safe_name(identity)}.key"

    def location(self, identity: str) -> KeyLocation:
        if self._file(identity).exists():
            return KeyLocation("file", f"file {self._file(identity)}", FILE_PROTECTS)
        import keyring

        backend = type(keyring.get_keyring()).__name__
        return KeyLocation("keyring", f"system keyring ({backend}, service {SERVICE!r})", KEYRING_PROTECTS)

    def load(self, identity: str) -> Ed25519PrivateKey | None:
        """The stored key, None when there is none. Raises KeyLocked when the keyring would not open."""
        import keyring
        import keyring.errors

        try:
            secret = keyring.get_password(SERVICE, identity)
        except keyring.errors.KeyringLocked as exc:
            raise KeyLocked(str(exc)) from exc
        except keyring.errors.KeyringError:
            secret = None  # no usable keyring: the file is where the key would be
        if secret:
            try:
                return load_private_key(base64.b64decode(secret))
            except ValueError:
                raise KeyUnavailable(
                    f"the keyring entry {SERVICE!r} for {identity} is not an Ed25519 key",
                    outcome=Outcome.NOTHING_WRITTEN,
                ) from None
        return self._load_file(identity)

    def _load_file(self, identity: str) -> Ed25519PrivateKey | None:
        path = self._file(identity)
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            return None
        if mode != 0o600:
            raise KeyUnavailable(f"the reviewer key {path} has mode {mode:04o}, not 0600; refusing to use it")
        try:
            return load_private_key(path.read_bytes())
        except ValueError:
            raise KeyUnavailable(
                f"the reviewer key {path} is not an Ed25519 key", outcome=Outcome.NOTHING_WRITTEN
            ) from None

    def save(self, identity: str, key: Ed25519PrivateKey) -> KeyLocation:
        """Keep `key`: in the keyring when it accepts and returns it, else in the 0600 file."""
        import keyring
        import keyring.errors

        secret = base64.b64encode(private_key_der(key)).decode("ascii")
        try:
            keyring.set_password(SERVICE, identity, secret)
            if keyring.get_password(SERVICE, identity) == secret:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self._file(identity))  # a rotated key leaves no older copy behind
                return self.location(identity)
        except keyring.errors.KeyringLocked as exc:
            raise KeyLocked(str(exc)) from exc
        except keyring.errors.KeyringError:
            pass
        self._save_file(identity, key)
        return self.location(identity)

    def _save_file(self, identity: str, key: Ed25519PrivateKey) -> None:
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.dir, 0o700)
        path = self._file(identity)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, private_key_der(key))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
