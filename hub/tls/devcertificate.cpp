#include "hub/tls/devcertificate.h"

#include "common/crypto/opensslptr.h"
#include "common/net/spkipin.h"
#include "common/util/atomicfile.h"

#include <QFile>
#include <QHostAddress>
#include <QHostInfo>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace cloop::hub {

namespace {

using crypto::BioPtr;
using crypto::PkeyPtr;
using crypto::X509Ptr;
using ExtPtr = crypto::OpenSslPtr<X509_EXTENSION, X509_EXTENSION_free>;

Error tlsError(const QString &what)
{
    return Error::make(QStringLiteral("tls_error"), what, true);
}

QByteArray bioContents(BIO *bio)
{
    char *data = nullptr;
    const long length = BIO_get_mem_data(bio, &data);
    return QByteArray(data, static_cast<qsizetype>(length));
}

bool addExtension(X509 *certificate, int nid, const QByteArray &value)
{
    X509V3_CTX context;
    X509V3_set_ctx_nodb(&context);
    X509V3_set_ctx(&context, certificate, certificate, nullptr, nullptr, 0);
    ExtPtr extension(X509V3_EXT_conf_nid(nullptr, &context, nid, value.constData()));
    return extension && X509_add_ext(certificate, extension.get(), -1) == 1;
}

// A mismatched pair would only show up as failing handshakes; say it at start.
bool keyMatchesCertificate(const QByteArray &keyPem, const QSslCertificate &certificate)
{
    const QByteArray der = certificate.toDer();
    const auto *cursor = reinterpret_cast<const unsigned char *>(der.constData());
    X509Ptr x509(d2i_X509(nullptr, &cursor, der.size()));
    BioPtr bio(BIO_new_mem_buf(keyPem.constData(), static_cast<int>(keyPem.size())));
    PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    return x509 && key && X509_check_private_key(x509.get(), key.get()) == 1;
}

} // namespace

QStringList defaultDevHostNames()
{
    QStringList names { QStringLiteral("localhost"), QStringLiteral("127.0.0.1"),
        QStringLiteral("::1") };
    const QString host = QHostInfo::localHostName();
    if (!host.isEmpty() && !names.contains(host))
        names.append(host);
    return names;
}

Status generateDevCertificate(
    const DevCertificateRequest &request, const QString &certificatePath, const QString &keyPath)
{
    if (request.hostNames.isEmpty())
        return tlsError(QStringLiteral("a certificate needs at least one host name"));
    PkeyPtr key(EVP_EC_gen("P-256"));
    if (!key)
        return tlsError(QStringLiteral("cannot generate an EC P-256 key"));

    X509Ptr certificate(X509_new());
    X509_set_version(certificate.get(), 2);
    unsigned char serial[16];
    RAND_bytes(serial, sizeof serial);
    serial[0] &= 0x7f; // a positive serial number
    crypto::OpenSslPtr<BIGNUM, BN_free> serialNumber(BN_bin2bn(serial, sizeof serial, nullptr));
    BN_to_ASN1_INTEGER(serialNumber.get(), X509_get_serialNumber(certificate.get()));
    X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -300);
    X509_gmtime_adj(
        X509_getm_notAfter(certificate.get()), static_cast<long>(request.validDays) * 86400);
    X509_set_pubkey(certificate.get(), key.get());

    X509_NAME *name = X509_get_subject_name(certificate.get());
    const QByteArray commonName
        = QStringLiteral("cloop hub %1").arg(request.hostNames.first()).toUtf8();
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
        reinterpret_cast<const unsigned char *>("cloop development"), -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
        reinterpret_cast<const unsigned char *>(commonName.constData()), -1, -1, 0);
    X509_set_issuer_name(certificate.get(), name);

    QStringList altNames;
    for (const QString &host : request.hostNames) {
        const bool isAddress = !QHostAddress(host).isNull();
        altNames.append((isAddress ? QStringLiteral("IP:") : QStringLiteral("DNS:")) + host);
    }
    if (!addExtension(
            certificate.get(), NID_subject_alt_name, altNames.join(QLatin1Char(',')).toUtf8())
        || !addExtension(certificate.get(), NID_basic_constraints, "critical,CA:FALSE")
        || !addExtension(certificate.get(), NID_key_usage, "critical,digitalSignature")
        || !addExtension(certificate.get(), NID_ext_key_usage, "serverAuth")
        || !addExtension(certificate.get(), NID_subject_key_identifier, "hash"))
        return tlsError(QStringLiteral("cannot build the certificate's extensions (host names: %1)")
                            .arg(request.hostNames.join(QStringLiteral(", "))));
    if (X509_sign(certificate.get(), key.get(), EVP_sha256()) <= 0)
        return tlsError(QStringLiteral("cannot sign the certificate"));

    BioPtr keyBio(BIO_new(BIO_s_mem()));
    BioPtr certBio(BIO_new(BIO_s_mem()));
    if (PEM_write_bio_PrivateKey(keyBio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr)
            != 1
        || PEM_write_bio_X509(certBio.get(), certificate.get()) != 1)
        return tlsError(QStringLiteral("cannot encode the key or certificate"));

    // Key first: a certificate without its key would be useless, the reverse harmless.
    if (Status written = util::writeFileAtomically(keyPath, bioContents(keyBio.get()), 0600);
        !written)
        return written;
    return util::writeFileAtomically(certificatePath, bioContents(certBio.get()), 0644);
}

Result<TlsIdentity> TlsIdentity::load(const QString &certificatePath, const QString &keyPath)
{
    QFile certificateFile(certificatePath);
    if (!certificateFile.open(QIODevice::ReadOnly))
        return tlsError(
            QStringLiteral("cannot read the TLS certificate %1: %2 (run `cloop hub tls-init` "
                           "for a development certificate, or pass --cert and --key)")
                .arg(certificatePath, certificateFile.errorString()));
    TlsIdentity identity;
    identity.chain = QSslCertificate::fromData(certificateFile.readAll(), QSsl::Pem);
    if (identity.chain.isEmpty())
        return tlsError(QStringLiteral("%1 holds no PEM certificate").arg(certificatePath));
    QFile keyFile(keyPath);
    if (!keyFile.open(QIODevice::ReadOnly))
        return tlsError(
            QStringLiteral("cannot read the TLS key %1: %2").arg(keyPath, keyFile.errorString()));
    const QByteArray keyPem = keyFile.readAll();
    for (const auto algorithm : { QSsl::Ec, QSsl::Rsa }) {
        QSslKey key(keyPem, algorithm, QSsl::Pem, QSsl::PrivateKey);
        if (!key.isNull()) {
            identity.key = key;
            break;
        }
    }
    if (identity.key.isNull())
        return tlsError(QStringLiteral("%1 holds no EC or RSA private key").arg(keyPath));
    if (!keyMatchesCertificate(keyPem, identity.chain.first()))
        return tlsError(QStringLiteral("the key %1 does not belong to the certificate %2")
                            .arg(keyPath, certificatePath));
    identity.pin = net::PinSet::pinOf(identity.chain.first());
    return identity;
}

} // namespace cloop::hub
