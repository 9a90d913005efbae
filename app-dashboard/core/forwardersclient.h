#pragma once

#include "common/api/devicetestreport.h"

#include "app-dashboard/core/forwarderlistmodel.h"
#include "app-dashboard/core/hubapi.h"

#include <QObject>
#include <QTimer>

namespace cloop::dashboard {

class EventSubscription;

// What a binding asks for, as typed into the Bind… and Request dialogs and
// sent as the body of a bind or a request; the hub checks and reads it into
// its own terms.
struct BindingFields
{
    QString project;
    QString ttl; // "8h"; empty for the hub's default (24 h)
    QString virtualExecutor; // empty: any executor
    QString target; // segments only
    QString address; // segments only, CIDR
    QJsonObject toJson() const;
};

// The dashboard's client of the admin API's forwarders, bindings and
// binding requests, the forwarders screen's logic: keeps a
// ForwarderListModel filled from the admin API and live from the event
// subscription, and carries out the card's actions. Widgets call these and show the answer; none of
// them talks to the hub itself.
class ForwardersClient final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ForwardersClient)

public:
    ForwardersClient(HubApi *api, EventSubscription *events, QObject *parent = nullptr);

    ForwarderListModel *model() { return &m_model; }

    void refresh();
    // What each forwarder's streams carried lately, into the model's
    // TrafficRole; asked for again every step while watched (the page is
    // on screen), not at all otherwise.
    void refreshTraffic();
    void setTrafficWatched(bool watched);
    bool isTrafficWatched() const { return m_trafficTimer.isActive(); }
    bool isLoading() const { return m_loading > 0; }
    QString lastError() const { return m_lastError; }

    // A device is "usb VID:PID[:SERIAL]" or an interface name.
    void enroll(const QString &name, const QString &usb, const QString &interface, QObject *context,
        HubApi::Callback done);
    void bind(
        qint64 forwarderId, const BindingFields &terms, QObject *context, HubApi::Callback done);
    void unbind(qint64 bindingId, const QString &reason, QObject *context, HubApi::Callback done);
    void revoke(qint64 forwarderId, const QString &reason, QObject *context, HubApi::Callback done);
    // The outcome lands in the model's Test roles as well.
    void test(qint64 forwarderId, QObject *context, HubApi::Callback done);
    // A new one-time enrollment bundle for a forwarder that never redeemed
    // its first; empty tokenTtl for the hub's default (24 h).
    void reenroll(
        qint64 forwarderId, const QString &tokenTtl, QObject *context, HubApi::Callback done);
    // A maintainer's request for a binding, and an administrator's decision.
    void request(qint64 forwarderId, const BindingFields &terms, const QString &reason,
        QObject *context, HubApi::Callback done);
    // Empty ttl or executor: as requested.
    void approve(qint64 requestId, const QString &ttl, const QString &executor, QObject *context,
        HubApi::Callback done);
    void deny(qint64 requestId, const QString &reason, QObject *context, HubApi::Callback done);

Q_SIGNALS:
    void loadingChanged(bool loading);
    // A refresh failed: what the screen shows above the cards.
    void errorChanged(const QString &error);
    // A traffic answer landed in the model (tests wait for it).
    void trafficRefreshed();

private:
    // GET `path` and hand the list under `key` on as records.
    template <typename Record>
    void load(const QString &path, QLatin1StringView key,
        const std::function<void(const QList<Record> &)> &apply);
    void setError(const QString &error);
    // After an action succeeds: the answer, then a refresh for whatever
    // else it changed.
    HubApi::Callback thenRefresh(HubApi::Callback done);

    HubApi *m_api;
    ForwarderListModel m_model;
    QTimer m_trafficTimer;
    bool m_trafficAsked = false;
    // Said once: a hub that does not sample traffic is not asked again and again.
    bool m_trafficUnavailable = false;
    int m_loading = 0;
    QString m_lastError;
};

// A Test report (POST /api/forwarders/{id}/test) for a card: a segment's
// pre-flight (link, MTU, VLANs seen, traffic, the hub's round trip to the
// forwarder), a USB device list with names from usb.ids. A segment passes
// with its link up and carrier; a USB forwarder when it exports a device.
TestOutcome describeTestReport(
    const api::DeviceTestReport &report, std::optional<qint64> roundTripUs = std::nullopt);
// The same for the report as the hub sends it.
TestOutcome describeTestReport(const QJsonObject &report);

} // namespace cloop::dashboard
