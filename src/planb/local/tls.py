"""Locally generated CAs: a serving certificate for 127.0.0.1 (what envtest does), and etcd's PKI.

Keys are created with mode 0600 (never readable by others, not even for a moment) in a directory
of mode 0700. A CA's own key is never written: it signs its certificates once and is dropped, so
nobody can mint another certificate it vouches for. A set is renewed whole when any certificate
expires within ``RENEW_BEFORE`` (or cannot be read, or a key is not its certificate's): `planb local
up` calls `ensure_serving_cert` and the control plane `ensure_etcd_pki`, so a stack that is brought
up at least once a month never runs on an expired certificate.

`ensure_etcd_pki` is the local etcd's (kubeadm's layout and uses): a CA of its own, etcd's certificate
for 127.0.0.1 (serving clients and peers, and a peer's client side), and the API server's client
certificate. etcd runs with ``--client-cert-auth`` and trusts only that CA, so only a process that can
read the API server's key, in the stack's 0700 state directory, talks to etcd.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from planb.local.statefile import write_atomic

_VALIDITY = datetime.timedelta(days=365)
#: Renew when a certificate has less than this left.
RENEW_BEFORE = datetime.timedelta(days=30)


@dataclass(frozen=True)
class ServingCert:
    """Paths of the CA certificate and the serving pair, in the layout controller-runtime expects."""

    directory: Path

    @property
    def ca_crt(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def tls_crt(self) -> Path:
        return self.directory / "tls.crt"

    @property
    def tls_key(self) -> Path:
        return self.directory / "tls.key"

    def exists(self) -> bool:
        return self.ca_crt.is_file() and self.tls_crt.is_file() and self.tls_key.is_file()

    def expires(self) -> datetime.datetime | None:
        """When the first of the two certificates expires; None if either cannot be read."""
        try:
            ends = [
                x509.load_pem_x509_certificate(path.read_bytes()).not_valid_after_utc
                for path in (self.ca_crt, self.tls_crt)
            ]
        except (OSError, ValueError):
            return None
        return min(ends)

    def needs_renewal(self, now: datetime.datetime | None = None) -> bool:
        """True if the pair is missing, unreadable or expires within RENEW_BEFORE."""
        if not self.exists():
            return True
        expires = self.expires()
        now = now or datetime.datetime.now(datetime.UTC)
        return expires is None or expires - now < RENEW_BEFORE or not self._key_matches()

    def _key_matches(self) -> bool:
        """The key is the serving certificate's (a start that stopped half-way can leave them apart)."""
        return _key_matches(self.tls_crt, self.tls_key)


def _key_matches(crt: Path, key_file: Path) -> bool:
    """The key in `key_file` is the one `crt` certifies."""
    try:
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        leaf = x509.load_pem_x509_certificate(crt.read_bytes())
    except (OSError, ValueError, TypeError):
        return False
    raw = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    return bool(key.public_key().public_bytes(*raw) == leaf.public_key().public_bytes(*raw))


def write_private(path: Path, data: bytes) -> None:
    """Write a secret: created 0600 under a temporary name, then renamed over `path`.

    The file never exists with a wider mode, whatever the umask, and a reader never sees half of it.
    """
    write_atomic(path, data, private=True)


def private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) with mode 0700; tighten it if it exists."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _ca(common_name: str, now: datetime.datetime) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A self-signed CA that may sign leaves only (path length 0)."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    return ca_key, ca


def _leaf(
    ca_key: ec.EllipticCurvePrivateKey,
    ca: x509.Certificate,
    common_name: str,
    now: datetime.datetime,
    *,
    usages: Sequence[x509.ObjectIdentifier],
    loopback: bool,
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A key and its certificate signed by `ca`, for `usages`; with `loopback`, named 127.0.0.1 and localhost."""
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
    )
    if loopback:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
    leaf = builder.add_extension(x509.ExtendedKeyUsage(list(usages)), critical=False).sign(ca_key, hashes.SHA256())
    return key, leaf


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def ensure_serving_cert(
    directory: Path, common_name: str = "planb-local", now: datetime.datetime | None = None
) -> ServingCert:
    """A CA and a certificate for 127.0.0.1/localhost signed by it: created once, renewed near expiry."""
    cert = ServingCert(directory)
    if not cert.needs_renewal(now):
        return cert
    private_dir(directory)
    now = now or datetime.datetime.now(datetime.UTC)
    ca_key, ca = _ca(f"{common_name}-ca", now)
    key, leaf = _leaf(ca_key, ca, common_name, now, usages=[ExtendedKeyUsageOID.SERVER_AUTH], loopback=True)
    write_private(cert.tls_key, _key_pem(key))
    cert.tls_crt.write_bytes(_pem(leaf))
    cert.ca_crt.write_bytes(_pem(ca))
    return cert


#: The common names of etcd's certificates: its own (serving clients and peers) and the API server's (a client).
ETCD_NAME = "planb-etcd"
ETCD_CLIENT_NAME = "planb-kube-apiserver-etcd-client"


@dataclass(frozen=True)
class EtcdPKI:
    """The local etcd's CA and certificates, by kubeadm's names (etcd/ca.crt, etcd/server.*,
    apiserver-etcd-client.*), all in one 0700 directory."""

    directory: Path

    @property
    def ca_crt(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def server_crt(self) -> Path:
        """etcd's certificate: 127.0.0.1 and localhost, for serving (clients and peers) and a peer's client side."""
        return self.directory / "server.crt"

    @property
    def server_key(self) -> Path:
        return self.directory / "server.key"

    @property
    def client_crt(self) -> Path:
        """The API server's client certificate (etcd's only client)."""
        return self.directory / "apiserver-etcd-client.crt"

    @property
    def client_key(self) -> Path:
        return self.directory / "apiserver-etcd-client.key"

    def _pairs(self) -> tuple[tuple[Path, Path], ...]:
        return ((self.server_crt, self.server_key), (self.client_crt, self.client_key))

    def exists(self) -> bool:
        return self.ca_crt.is_file() and all(crt.is_file() and key.is_file() for crt, key in self._pairs())

    def expires(self) -> datetime.datetime | None:
        """When the first of the three certificates expires; None if any cannot be read."""
        try:
            ends = [
                x509.load_pem_x509_certificate(path.read_bytes()).not_valid_after_utc
                for path in (self.ca_crt, self.server_crt, self.client_crt)
            ]
        except (OSError, ValueError):
            return None
        return min(ends)

    def needs_renewal(self, now: datetime.datetime | None = None) -> bool:
        """True if a file is missing or unreadable, a key is not its certificate's, a certificate is not the CA's,
        or one expires within RENEW_BEFORE."""
        if not self.exists():
            return True
        expires = self.expires()
        now = now or datetime.datetime.now(datetime.UTC)
        if expires is None or expires - now < RENEW_BEFORE:
            return True
        return not all(_key_matches(crt, key) for crt, key in self._pairs()) or not self._signed_by_ca()

    def _signed_by_ca(self) -> bool:
        """Both certificates are the CA's (a renewal that stopped half-way can leave a CA that signed neither)."""
        try:
            ca = x509.load_pem_x509_certificate(self.ca_crt.read_bytes())
            for path in (self.server_crt, self.client_crt):
                x509.load_pem_x509_certificate(path.read_bytes()).verify_directly_issued_by(ca)
        except (OSError, ValueError, TypeError, InvalidSignature):
            return False
        return True


def ensure_etcd_pki(directory: Path, now: datetime.datetime | None = None) -> EtcdPKI:
    """etcd's CA, etcd's certificate and the API server's client certificate: created once, renewed (all three, and a
    new CA) near expiry. The CA's key signs the two and is dropped."""
    pki = EtcdPKI(directory)
    if not pki.needs_renewal(now):
        return pki
    private_dir(directory)
    now = now or datetime.datetime.now(datetime.UTC)
    ca_key, ca = _ca(f"{ETCD_NAME}-ca", now)
    server_key, server = _leaf(
        ca_key,
        ca,
        ETCD_NAME,
        now,
        usages=[ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH],
        loopback=True,
    )
    client_key, client = _leaf(
        ca_key, ca, ETCD_CLIENT_NAME, now, usages=[ExtendedKeyUsageOID.CLIENT_AUTH], loopback=False
    )
    # Keys first, the CA last: until it is written, needs_renewal sees a set whose certificates are not its CA's.
    write_private(pki.server_key, _key_pem(server_key))
    write_private(pki.client_key, _key_pem(client_key))
    write_private(pki.server_crt, _pem(server))
    write_private(pki.client_crt, _pem(client))
    write_private(pki.ca_crt, _pem(ca))
    return pki
