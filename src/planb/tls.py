"""A locally generated CA and a serving certificate for 127.0.0.1 (what envtest does).

Keys are created with mode 0600 (never readable by others, not even for a moment) in a directory
of mode 0700. The pair is renewed when either certificate expires within ``RENEW_BEFORE`` (or
cannot be read): `planb local up` calls `ensure_serving_cert`, so a stack that is brought up at
least once a month never runs on an expired certificate.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from planb.statefile import write_atomic

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
        try:
            key = serialization.load_pem_private_key(self.tls_key.read_bytes(), password=None)
            leaf = x509.load_pem_x509_certificate(self.tls_crt.read_bytes())
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


def ensure_serving_cert(
    directory: Path, common_name: str = "planb-local", now: datetime.datetime | None = None
) -> ServingCert:
    """A CA and a certificate for 127.0.0.1/localhost signed by it: created once, renewed near expiry."""
    cert = ServingCert(directory)
    if not cert.needs_renewal(now):
        return cert
    private_dir(directory)
    now = now or datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{common_name}-ca")])
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
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    write_private(cert.tls_key, _key_pem(key))
    cert.tls_crt.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    cert.ca_crt.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return cert
