#pragma once

#include "common/api/adminrequest.h"
#include "common/result.h"

#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QObject>

#include <functional>

namespace cloop::dashboard {

// The admin API, asynchronously: every call returns at once and its answer
// arrives in a callback on this thread, so the window never waits on the
// network. The hub's key pin is checked on every call, as the CLI does.
class HubApi final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(HubApi)

public:
    using Callback = std::function<void(const Result<QJsonObject> &)>;

    explicit HubApi(QObject *parent = nullptr);

    void setEndpoint(api::AdminEndpoint endpoint);
    const api::AdminEndpoint &endpoint() const { return m_endpoint; }

    // `done` runs once with the answer, unless `context` is gone by then.
    void get(
        const QString &path, QObject *context, Callback done, const api::QueryItems &query = {});
    void post(const QString &path, const QJsonObject &body, QObject *context, Callback done);
    // A GET repeated in the background (a graph's next step): it does not
    // count as pending, so the busy indicator does not blink with it.
    void poll(const QString &path, QObject *context, Callback done);

    // Calls sent and not yet answered: for a busy indicator.
    int pendingCalls() const { return m_pending; }

Q_SIGNALS:
    void busyChanged(bool busy);

private:
    enum class Shown
    {
        AsBusy,
        Quietly
    };
    void call(const QByteArray &method, const QString &path, const QJsonObject &body,
        const api::QueryItems &query, QObject *context, Callback done, Shown shown = Shown::AsBusy);
    void adjustPending(int delta);

    QNetworkAccessManager m_network;
    api::AdminEndpoint m_endpoint;
    int m_pending = 0;
};

} // namespace cloop::dashboard
