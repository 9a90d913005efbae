#include "app-dashboard/core/forwardersclient.h"

#include "common/api/devicetest.h"
#include "common/api/hubeventname.h"
#include "common/device/usb/usbiddatabase.h"

#include "app-dashboard/core/eventsubscription.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QPointer>

namespace cloop::dashboard {

QJsonObject BindingFields::toJson() const
{
    QJsonObject body { { QStringLiteral("project"), project } };
    const auto put = [&body](const char *key, const QString &value) {
        if (!value.trimmed().isEmpty())
            body.insert(QLatin1String(key), value.trimmed());
    };
    put("ttl", ttl);
    put("virtual_executor", virtualExecutor);
    put("target", target);
    put("address", address);
    return body;
}

ForwardersClient::ForwardersClient(HubApi *api, EventSubscription *events, QObject *parent)
    : QObject(parent)
    , m_api(api)
{
    if (!events)
        return;
    connect(events, &EventSubscription::subscribed, this, &ForwardersClient::refresh);
    connect(events, &EventSubscription::eventReceived, this,
        [this](const QString &event, const QJsonObject &data) {
            if (!m_model.applyEvent(event, data) || event == api::hubeventname::kForwarderEnrolled)
                refresh();
        });
}

void ForwardersClient::refresh()
{
    load<api::Forwarder>(QStringLiteral("/api/forwarders"), QLatin1StringView("forwarders"),
        [this](const QList<api::Forwarder> &list) { m_model.setForwarderRecords(list); });
    load<api::Binding>(QStringLiteral("/api/bindings"), QLatin1StringView("bindings"),
        [this](const QList<api::Binding> &list) { m_model.setBindingRecords(list); });
}

template <typename Record>
void ForwardersClient::load(const QString &path, QLatin1StringView key,
    const std::function<void(const QList<Record> &)> &apply)
{
    if (m_loading++ == 0)
        Q_EMIT loadingChanged(true);
    m_api->get(path, this, [this, key, apply](const Result<QJsonObject> &answer) {
        auto records
            = answer ? api::listOf<Record>(*answer, key) : Result<QList<Record>>(answer.error());
        if (records) {
            apply(*records);
            setError({});
        } else {
            setError(records.error().message);
        }
        if (--m_loading == 0)
            Q_EMIT loadingChanged(false);
    });
}

void ForwardersClient::setError(const QString &error)
{
    if (m_lastError == error)
        return;
    m_lastError = error;
    Q_EMIT errorChanged(error);
}

HubApi::Callback ForwardersClient::thenRefresh(HubApi::Callback done)
{
    return [this, done = std::move(done)](const Result<QJsonObject> &answer) {
        done(answer);
        if (answer)
            refresh();
    };
}

void ForwardersClient::enroll(const QString &name, const QString &usb, const QString &interface,
    QObject *context, HubApi::Callback done)
{
    QJsonObject body { { QStringLiteral("name"), name.trimmed() } };
    if (!usb.trimmed().isEmpty())
        body.insert(QStringLiteral("usb"), usb.trimmed());
    if (!interface.trimmed().isEmpty())
        body.insert(QStringLiteral("interface"), interface.trimmed());
    m_api->post(QStringLiteral("/api/forwarders"), body, context, thenRefresh(std::move(done)));
}

void ForwardersClient::bind(
    qint64 forwarderId, const BindingFields &terms, QObject *context, HubApi::Callback done)
{
    m_api->post(QStringLiteral("/api/forwarders/%1/bind").arg(forwarderId), terms.toJson(), context,
        thenRefresh(std::move(done)));
}

void ForwardersClient::unbind(
    qint64 bindingId, const QString &reason, QObject *context, HubApi::Callback done)
{
    m_api->post(QStringLiteral("/api/bindings/%1/unbind").arg(bindingId),
        QJsonObject { { QStringLiteral("reason"), reason.trimmed() } }, context,
        thenRefresh(std::move(done)));
}

void ForwardersClient::revoke(
    qint64 forwarderId, const QString &reason, QObject *context, HubApi::Callback done)
{
    QJsonObject body;
    if (!reason.trimmed().isEmpty())
        body.insert(QStringLiteral("reason"), reason.trimmed());
    m_api->post(QStringLiteral("/api/forwarders/%1/revoke").arg(forwarderId), body, context,
        thenRefresh(std::move(done)));
}

void ForwardersClient::test(qint64 forwarderId, QObject *context, HubApi::Callback done)
{
    m_model.setTestRunning(forwarderId, true);
    m_model.setTestSummary(forwarderId, {});
    m_api->post(QStringLiteral("/api/forwarders/%1/test").arg(forwarderId), {}, this,
        [this, forwarderId, guard = QPointer<QObject>(context), done = std::move(done)](
            const Result<QJsonObject> &answer) {
            m_model.setTestRunning(forwarderId, false);
            const auto tested = answer ? api::DeviceTest::fromJson(*answer)
                                       : Result<api::DeviceTest>(answer.error());
            m_model.setTestSummary(forwarderId,
                tested ? describeTestReport(tested->report)
                       : QCoreApplication::translate("ForwardersClient", "Test failed: %1")
                             .arg(tested.error().message));
            if (guard)
                done(answer);
        });
}

void ForwardersClient::request(qint64 forwarderId, const BindingFields &terms,
    const QString &reason, QObject *context, HubApi::Callback done)
{
    QJsonObject body = terms.toJson();
    body.insert(QStringLiteral("reason"), reason.trimmed());
    m_api->post(QStringLiteral("/api/forwarders/%1/request").arg(forwarderId), body, context,
        std::move(done));
}

void ForwardersClient::approve(qint64 requestId, const QString &ttl, const QString &executor,
    QObject *context, HubApi::Callback done)
{
    QJsonObject body;
    if (!ttl.trimmed().isEmpty())
        body.insert(QStringLiteral("ttl"), ttl.trimmed());
    if (!executor.trimmed().isEmpty())
        body.insert(QStringLiteral("virtual_executor"), executor.trimmed());
    m_api->post(QStringLiteral("/api/requests/%1/approve").arg(requestId), body, context,
        thenRefresh(std::move(done)));
}

void ForwardersClient::deny(
    qint64 requestId, const QString &reason, QObject *context, HubApi::Callback done)
{
    m_api->post(QStringLiteral("/api/requests/%1/deny").arg(requestId),
        QJsonObject { { QStringLiteral("reason"), reason.trimmed() } }, context, std::move(done));
}

QString describeTestReport(const QJsonObject &report)
{
    auto read = api::DeviceTestReport::fromJson(report);
    if (!read)
        return QCoreApplication::translate("ForwardersClient", "Test failed: %1")
            .arg(read.error().message);
    return describeTestReport(*read);
}

QString describeTestReport(const api::DeviceTestReport &report)
{
    if (!report.ok) {
        return ForwardersClient::tr("Problem on the forwarder: %1")
            .arg(report.problem.isEmpty() ? ForwardersClient::tr("no details") : report.problem);
    }
    if (report.isSegment()) {
        const api::DeviceTestReport::Link link
            = report.link.value_or(api::DeviceTestReport::Link {});
        const QString state = link.up ? (link.carrier ? ForwardersClient::tr("link up")
                                                      : ForwardersClient::tr("up, no carrier"))
                                      : ForwardersClient::tr("link down");
        QString summary = ForwardersClient::tr("%1 · %2, MTU %3 · %4 frames in %5 s")
                              .arg(report.interfaceName, state)
                              .arg(link.mtu)
                              .arg(report.framesSeen)
                              .arg(double(report.listenedMs.value_or(0)) / 1000.0, 0, 'f', 1);
        if (!report.frames.isEmpty())
            summary += QStringLiteral("\n") + report.frames.first().summary;
        return summary;
    }
    if (report.isUsb()) {
        // The USB/IP device list, as a consumer would read it.
        const auto &names = device::usb::UsbIdDatabase::system();
        QStringList lines;
        for (const api::DeviceTestReport::UsbExport &device : report.devices) {
            const quint16 vendor = quint16(device.vendorId.toUInt(nullptr, 16));
            const QString name
                = names.productName(vendor, quint16(device.productId.toUInt(nullptr, 16)));
            const int interfaces = int(device.interfaces.size());
            lines.append(
                ForwardersClient::tr(
                    "Exports %1 · %2:%3%4 · %5 · %n interface(s)", nullptr, interfaces)
                    .arg(device.busId, device.vendorId, device.productId,
                        name.isEmpty() ? QString() : QStringLiteral(" ") + name, device.speed));
        }
        return lines.join(QLatin1Char('\n'));
    }
    // Other kinds report in their own shape; until a card knows it, the
    // verdict is what matters.
    return ForwardersClient::tr("%1 device answered").arg(report.unknownKind);
}

} // namespace cloop::dashboard
