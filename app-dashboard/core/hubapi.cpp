#include "app-dashboard/core/hubapi.h"

#include "app-dashboard/core/logging.h"

#include <QNetworkReply>
#include <QPointer>
#include <QTimer>

#include <memory>

namespace cloop::dashboard {

HubApi::HubApi(QObject *parent)
    : QObject(parent)
{
    m_network.setStrictTransportSecurityEnabled(false);
}

void HubApi::setEndpoint(api::AdminEndpoint endpoint)
{
    m_endpoint = std::move(endpoint);
    // A new hub or token must not reuse a TLS session or connection of the old.
    m_network.clearConnectionCache();
}

void HubApi::get(const QString &path, QObject *context, Callback done, const api::QueryItems &query)
{
    call("GET", path, {}, query, context, std::move(done));
}

void HubApi::post(const QString &path, const QJsonObject &body, QObject *context, Callback done)
{
    call("POST", path, body, {}, context, std::move(done));
}

void HubApi::poll(const QString &path, QObject *context, Callback done)
{
    call("GET", path, {}, {}, context, std::move(done), Shown::Quietly);
}

void HubApi::call(const QByteArray &method, const QString &path, const QJsonObject &body,
    const api::QueryItems &query, QObject *context, Callback done, Shown shown)
{
    const QPointer<QObject> guard(context);
    auto request = api::adminRequest(m_endpoint, path, query);
    if (!request) {
        // Still asynchronous, so callers see one order of events either way.
        QTimer::singleShot(0, this, [guard, done = std::move(done), error = request.error()] {
            if (guard)
                done(error);
        });
        return;
    }
    QNetworkReply *reply
        = m_network.sendCustomRequest(*request, method, api::adminPayload(method, body));
    auto trustFailure = std::make_shared<std::optional<Error>>();
    api::guardTrust(reply, m_endpoint.trust, trustFailure.get());
    const int busy = shown == Shown::AsBusy ? 1 : 0;
    adjustPending(+busy);
    qCDebug(lcDashboardApi) << method << path;
    connect(reply, &QNetworkReply::finished, this,
        [this, reply, trustFailure, guard, busy, done = std::move(done)] {
            reply->deleteLater();
            adjustPending(-busy);
            const Result<QJsonObject> answer
                = *trustFailure ? Result<QJsonObject>(**trustFailure) : api::readAdminAnswer(reply);
            if (!answer)
                qCInfo(lcDashboardApi).noquote()
                    << reply->url().path() << "failed:" << answer.error().message;
            if (guard)
                done(answer);
        });
}

void HubApi::adjustPending(int delta)
{
    const bool wasBusy = m_pending > 0;
    m_pending += delta;
    if (wasBusy != (m_pending > 0))
        Q_EMIT busyChanged(m_pending > 0);
}

} // namespace cloop::dashboard
