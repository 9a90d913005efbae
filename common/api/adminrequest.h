#pragma once

#include <functional>
#include <memory>

#include "common/net/hubtls.h"
#include "common/result.h"

#include <QJsonObject>
#include <QList>
#include <QNetworkRequest>
#include <QUrl>

#include <optional>
#include <utility>

class QNetworkReply;

namespace cloop::api {

// Where the admin API is and how to prove who we are to it.
struct AdminEndpoint
{
    QUrl url; // wss:// or https:// base
    QString token;
    net::HubTrust trust;
    QString source; // where the token came from, for `cloop whoami`
};

// Query parameters of a GET, percent-encoded by the client.
using QueryItems = QList<std::pair<QString, QString>>;

// wss:// (or https://) anywhere, plaintext only to a loopback hub: API
// tokens never cross a network in the clear, and no flag says otherwise.
Status checkAdminUrl(const QUrl &url);

// The HTTP request for one admin API call, the token in its header; an
// error for a URL that `checkAdminUrl` refuses.
Result<QNetworkRequest> adminRequest(
    const AdminEndpoint &endpoint, const QString &path, const QueryItems &query = {});

// The body an admin API call sends: nothing for a GET without one.
QByteArray adminPayload(const QByteArray &method, const QJsonObject &body);

// Holds a reply to the endpoint's trust: certificate errors only a pin may
// excuse are excused, and once encrypted the pin is checked again before
// the request (and its token) leaves. What went wrong lands in `failure`,
// which must outlive the reply.
void guardTrust(QNetworkReply *reply, const net::HubTrust &trust, std::optional<Error> *failure);

// One request, sent by `send` on `network`, guarded as guardTrust does and
// waited for in a local event loop; `watch` may connect to the reply first
// (a download read in pieces). The finished reply, or the trust failure.
// `network` outlives the reply.
Result<std::unique_ptr<QNetworkReply>> runGuarded(const net::HubTrust &trust,
    const std::function<QNetworkReply *()> &send,
    const std::function<void(QNetworkReply *)> &watch = {});

// The answer of a finished reply: the JSON object, or the hub's error
// (code and message from its body), or why the hub could not be reached.
Result<QJsonObject> readAdminAnswer(QNetworkReply *reply);
// The same, with a successful answer's body left as text for a reader of
// its own (a long listing, read entry by entry).
Result<QByteArray> readAdminAnswerText(QNetworkReply *reply);

} // namespace cloop::api
