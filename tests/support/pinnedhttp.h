#pragma once

// An HTTPS GET that trusts the hub's self-signed development certificate
// the way a daemon does: only when its key matches the SPKI pin, checked
// with cloop::net::PinSet::verify before any header (and token) is sent.

#include "support/processutil.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QUrl>

namespace cloop::testing {

struct HttpResult
{
    int status = 0; // 0: no HTTP answer (refused, unreachable, timed out)
    QByteArray body;
    QString error; // why there is no answer, or the network error text

    QJsonObject json() const; // the body as a JSON object, empty if it is not one
    QString errorCode() const; // error.code of a JSON error body
    QString describe() const;
};

// GET url with "Authorization: Bearer <bearer>" when bearer is not empty.
// The certificate errors ignored are only the "no trusted issuer" family, and
// only after the presented key matched `pin` ("sha256:<base64>").
HttpResult pinnedGet(
    const QUrl &url, const QString &pin, const QString &bearer = {}, int timeoutMs = kLongWaitMs);

} // namespace cloop::testing
