#include "app-dashboard/core/forwardersclient.h"

#include "common/api/devicetest.h"
#include "common/api/hubeventname.h"
#include "common/device/usb/usbiddatabase.h"

#include "app-dashboard/core/eventsubscription.h"
#include "app-dashboard/core/logging.h"

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
    m_trafficTimer.setInterval(std::chrono::seconds(5));
    connect(&m_trafficTimer, &QTimer::timeout, this, &ForwardersClient::refreshTraffic);
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

void ForwardersClient::refreshTraffic()
{
    // One question at a time: a slow hub is not asked again before it answered.
    if (m_trafficAsked || m_trafficUnavailable)
        return;
    m_trafficAsked = true;
    m_api->poll(
        QStringLiteral("/api/forwarders/traffic"), this, [this](const Result<QJsonObject> &answer) {
            m_trafficAsked = false;
            auto traffic = answer ? api::ForwarderTraffic::fromJson(*answer)
                                  : Result<api::ForwarderTraffic>(answer.error());
            if (!traffic) {
                // The cards go on without graphs; the rest of the screen is fine.
                qCWarning(lcDashboardApi).noquote()
                    << "traffic not shown:" << traffic.error().message;
                if (!answer
                    && (answer.error().code == u"not_found"
                        || answer.error().code == u"unavailable")) {
                    m_trafficUnavailable = true;
                    m_trafficTimer.stop();
                }
                return;
            }
            m_model.setTraffic(*traffic);
            // Asked once a step: the graph moves as the hub's steps do.
            m_trafficTimer.setInterval(
                std::chrono::seconds(std::max<qint64>(traffic->stepSeconds, 1)));
            Q_EMIT trafficRefreshed();
        });
}

void ForwardersClient::setTrafficWatched(bool watched)
{
    if (watched == m_trafficTimer.isActive() || (watched && m_trafficUnavailable))
        return;
    if (!watched) {
        m_trafficTimer.stop();
        return;
    }
    m_trafficTimer.start();
    refreshTraffic();
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
    m_api->post(QStringLiteral("/api/forwarders/%1/test").arg(forwarderId), {}, this,
        [this, forwarderId, guard = QPointer<QObject>(context), done = std::move(done)](
            const Result<QJsonObject> &answer) {
            const auto tested = answer ? api::DeviceTest::fromJson(*answer)
                                       : Result<api::DeviceTest>(answer.error());
            TestOutcome outcome;
            if (tested) {
                outcome = describeTestReport(tested->report, tested->roundTripUs);
            } else {
                outcome.summary = tr("Test failed: %1").arg(tested.error().message);
                outcome.details = outcome.summary;
            }
            outcome.finishedAt = QDateTime::currentDateTimeUtc();
            m_model.setTestOutcome(forwarderId, outcome);
            m_model.setTestRunning(forwarderId, false);
            if (guard)
                done(answer);
        });
}

void ForwardersClient::reenroll(
    qint64 forwarderId, const QString &tokenTtl, QObject *context, HubApi::Callback done)
{
    QJsonObject body;
    if (!tokenTtl.trimmed().isEmpty())
        body.insert(QStringLiteral("token_ttl"), tokenTtl.trimmed());
    m_api->post(QStringLiteral("/api/forwarders/%1/enrollment").arg(forwarderId), body, context,
        thenRefresh(std::move(done)));
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

TestOutcome describeTestReport(const QJsonObject &report)
{
    auto read = api::DeviceTestReport::fromJson(report);
    if (!read) {
        const QString words = ForwardersClient::tr("Test failed: %1").arg(read.error().message);
        return TestOutcome { false, {}, words, words };
    }
    return describeTestReport(*read);
}

namespace {

QString frameCount(qint64 frames, std::optional<qint64> listenedMs)
{
    return ForwardersClient::tr("%n frame(s) in %1 s", nullptr, int(frames))
        .arg(double(listenedMs.value_or(0)) / 1000.0, 0, 'f', 1);
}

QString roundTripWords(std::optional<qint64> roundTripUs)
{
    if (!roundTripUs)
        return {};
    return *roundTripUs < 10'000
        ? ForwardersClient::tr("hub round trip %1 ms").arg(double(*roundTripUs) / 1000.0, 0, 'f', 1)
        : ForwardersClient::tr("hub round trip %1 ms").arg(*roundTripUs / 1000);
}

// A segment's pre-flight report: is the link usable, at what MTU, which
// VLANs ride on it, and does traffic flow.
TestOutcome segmentOutcome(const api::DeviceTestReport &report, std::optional<qint64> roundTripUs)
{
    const api::DeviceTestReport::Link link = report.link.value_or(api::DeviceTestReport::Link {});
    const QString state = !report.link ? ForwardersClient::tr("link state unknown")
        : link.up
        ? (link.carrier ? ForwardersClient::tr("link up") : ForwardersClient::tr("up, no carrier"))
        : ForwardersClient::tr("link down");
    QList<int> vlans;
    for (const api::DeviceTestReport::Frame &frame : report.frames) {
        if (frame.vlan && !vlans.contains(*frame.vlan))
            vlans.append(*frame.vlan);
    }
    std::sort(vlans.begin(), vlans.end());
    QStringList vlanNames;
    for (int vlan : std::as_const(vlans))
        vlanNames.append(QString::number(vlan));
    QStringList parts { report.interfaceName, state };
    if (link.mtu > 0)
        parts.append(ForwardersClient::tr("MTU %1").arg(link.mtu));
    parts.append(vlanNames.isEmpty()
            ? ForwardersClient::tr("untagged")
            : ForwardersClient::tr("VLAN %1").arg(vlanNames.join(QStringLiteral(", "))));
    parts.append(frameCount(report.framesSeen, report.listenedMs));
    if (const QString rtt = roundTripWords(roundTripUs); !rtt.isEmpty())
        parts.append(rtt);

    QStringList lines { parts.join(QStringLiteral(" · ")) };
    if (!link.mac.isEmpty())
        lines.append(ForwardersClient::tr("MAC address %1").arg(link.mac));
    if (report.counters) {
        const api::DeviceTestReport::Counters &c = *report.counters;
        lines.append(ForwardersClient::tr("received %1 packets, %2 bytes, %3 dropped")
                         .arg(c.rxPackets)
                         .arg(c.rxBytes)
                         .arg(c.rxDropped));
        lines.append(ForwardersClient::tr("sent %1 packets, %2 bytes, %3 dropped")
                         .arg(c.txPackets)
                         .arg(c.txBytes)
                         .arg(c.txDropped));
    }
    for (const api::DeviceTestReport::Frame &frame : report.frames) {
        const QString vlan = frame.vlan ? QStringLiteral(" VLAN %1").arg(*frame.vlan) : QString();
        lines.append(QStringLiteral("%1 → %2%3  %4")
                         .arg(frame.source, frame.destination, vlan,
                             frame.summary.isEmpty()
                                 ? ForwardersClient::tr("ethertype %1").arg(frame.ethertype)
                                 : frame.summary));
    }
    return TestOutcome { report.link && link.up && link.carrier, {}, lines.first(),
        lines.join(QLatin1Char('\n')) };
}

// A USB forwarder's report is the USB/IP device list, as a consumer reads it.
TestOutcome usbOutcome(const api::DeviceTestReport &report, std::optional<qint64> roundTripUs)
{
    const auto &names = device::usb::UsbIdDatabase::system();
    QStringList lines;
    for (const api::DeviceTestReport::UsbExport &device : report.devices) {
        const quint16 vendor = quint16(device.vendorId.toUInt(nullptr, 16));
        const quint16 product = quint16(device.productId.toUInt(nullptr, 16));
        QStringList named;
        for (const QString &name : { names.vendorName(vendor), names.productName(vendor, product) })
            if (!name.isEmpty())
                named.append(name);
        const int interfaces = int(device.interfaces.size());
        lines.append(
            ForwardersClient::tr("Exports %1 · %2:%3%4 · %5 · %n interface(s)", nullptr, interfaces)
                .arg(device.busId, device.vendorId, device.productId,
                    named.isEmpty() ? QString()
                                    : QStringLiteral(" ") + named.join(QStringLiteral(" · ")),
                    device.speed));
    }
    if (lines.isEmpty())
        lines.append(ForwardersClient::tr("Exports no device"));
    if (const QString rtt = roundTripWords(roundTripUs); !rtt.isEmpty())
        lines.first() += QStringLiteral(" · ") + rtt;
    return TestOutcome { !report.devices.isEmpty(), {}, lines.first(),
        lines.join(QLatin1Char('\n')) };
}

} // namespace

TestOutcome describeTestReport(
    const api::DeviceTestReport &report, std::optional<qint64> roundTripUs)
{
    if (!report.ok) {
        const QString words = ForwardersClient::tr("Problem on the forwarder: %1")
                                  .arg(report.problem.isEmpty() ? ForwardersClient::tr("no details")
                                                                : report.problem);
        return TestOutcome { false, {}, words, words };
    }
    if (report.isSegment())
        return segmentOutcome(report, roundTripUs);
    if (report.isUsb())
        return usbOutcome(report, roundTripUs);
    // Other kinds report in their own shape; until a card knows it, the
    // verdict is what matters.
    const QString words = ForwardersClient::tr("%1 device answered").arg(report.unknownKind);
    return TestOutcome { true, {}, words, words };
}

} // namespace cloop::dashboard
