#pragma once

#include "common/result.h"

#include <QSslCertificate>
#include <QSslKey>
#include <QStringList>

namespace cloop::hub {

// The hub's own TLS identity, from the data folder (tls/cert.pem, tls/key.pem)
// or from files an operator supplies (a certificate from their CA).
struct TlsIdentity
{
    QList<QSslCertificate> chain; // leaf first
    QSslKey key;
    QString pin; // sha256:<base64> of the leaf's key

    static Result<TlsIdentity> load(const QString &certificatePath, const QString &keyPath);
};

// `cloop hub tls-init`: a self-signed development certificate with an
// ECDSA P-256 key, valid for the given DNS names and IP addresses. Clients
// trust it through its SPKI pin, which travels in every bundle.
struct DevCertificateRequest
{
    QStringList hostNames; // DNS names and IP literals for the subjectAltName
    int validDays = 825;
};

Status generateDevCertificate(
    const DevCertificateRequest &request, const QString &certificatePath, const QString &keyPath);

// localhost, 127.0.0.1, ::1 and this machine's host name.
QStringList defaultDevHostNames();

} // namespace cloop::hub
