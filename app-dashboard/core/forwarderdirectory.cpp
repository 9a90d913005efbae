#include "app-dashboard/core/forwarderdirectory.h"

#include "common/device/usb/usbiddatabase.h"

#include "app-dashboard/core/eventstream.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QPointer>

namespace cloop::dashboard {

QJsonObject BindingTerms::toJson() const
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

ForwarderDirectory::ForwarderDirectory(HubApi *api, EventStream *events, QObject *parent)
    : QObject(parent)
    , m_api(api)
{
    if (!events)
        return;
    connect(events, &EventStream::subscribed, this, &ForwarderDirectory::refresh);
    connect(events, &EventStream::eventReceived, this,
        [this](const QString &event, const QJsonObject &data) {
            if (!m_model.applyEvent(event, data) || event == QLatin1String("forwarder.enrolled"))
                refresh();
        });
}

void ForwarderDirectory::refresh()
{
    load(QStringLiteral("/api/forwarders"), QStringLiteral("forwarders"),
        [this](const QJsonArray &list) { m_model.setForwarders(list); });
    load(QStringLiteral("/api/bindings"), QStringLiteral("bindings"),
        [this](const QJsonArray &list) { m_model.setBindings(list); });
}

void ForwarderDirectory::load(
    const QString &path, const QString &key, const std::function<void(const QJsonArray &)> &apply)
{
    if (m_loading++ == 0)
        Q_EMIT loadingChanged(true);
    m_api->get(path, this, [this, key, apply](const Result<QJsonObject> &answer) {
        if (answer) {
            apply(answer->value(key).toArray());
            setError({});
        } else {
            setError(answer.error().message);
        }
        if (--m_loading == 0)
            Q_EMIT loadingChanged(false);
    });
}

void ForwarderDirectory::setError(const QString &error)
{
    if (m_lastError == error)
        return;
    m_lastError = error;
    Q_EMIT errorChanged(error);
}

HubApi::Callback ForwarderDirectory::thenRefresh(HubApi::Callback done)
{
    return [this, done = std::move(done)](const Result<QJsonObject> &answer) {
        done(answer);
        if (answer)
            refresh();
    };
}

void ForwarderDirectory::enroll(const QString &name, const QString &usb, const QString &interface,
    QObject *context, HubApi::Callback done)
{
    QJsonObject body { { QStringLiteral("name"), name.trimmed() } };
    if (!usb.trimmed().isEmpty())
        body.insert(QStringLiteral("usb"), usb.trimmed());
    if (!interface.trimmed().isEmpty())
        body.insert(QStringLiteral("interface"), interface.trimmed());
    m_api->post(QStringLiteral("/api/forwarders"), body, context, thenRefresh(std::move(done)));
}

void ForwarderDirectory::bind(
    qint64 forwarderId, const BindingTerms &terms, QObject *context, HubApi::Callback done)
{
    m_api->post(QStringLiteral("/api/forwarders/%1/bind").arg(forwarderId), terms.toJson(), context,
        thenRefresh(std::move(done)));
}

void ForwarderDirectory::unbind(
    qint64 bindingId, const QString &reason, QObject *context, HubApi::Callback done)
{
    m_api->post(QStringLiteral("/api/bindings/%1/unbind").arg(bindingId),
        QJsonObject { { QStringLiteral("reason"), reason.trimmed() } }, context,
        thenRefresh(std::move(done)));
}

void ForwarderDirectory::revoke(
    qint64 forwarderId, const QString &reason, QObject *context, HubApi::Callback done)
{
    QJsonObject body;
    if (!reason.trimmed().isEmpty())
        body.insert(QStringLiteral("reason"), reason.trimmed());
    m_api->post(QStringLiteral("/api/forwarders/%1/revoke").arg(forwarderId), body, context,
        thenRefresh(std::move(done)));
}

void ForwarderDirectory::test(qint64 forwarderId, QObject *context, HubApi::Callback done)
{
    m_model.setTestRunning(forwarderId, true);
    m_model.setTestSummary(forwarderId, {});
    m_api->post(QStringLiteral("/api/forwarders/%1/test").arg(forwarderId), {}, this,
        [this, forwarderId, guard = QPointer<QObject>(context), done = std::move(done)](
            const Result<QJsonObject> &answer) {
            m_model.setTestRunning(forwarderId, false);
            m_model.setTestSummary(forwarderId,
                answer ? describeTestReport(answer->value(QLatin1String("report")).toObject())
                       : QCoreApplication::translate("ForwarderDirectory", "Test failed: %1")
                             .arg(answer.error().message));
            if (guard)
                done(answer);
        });
}

void ForwarderDirectory::request(qint64 forwarderId, const BindingTerms &terms,
    const QString &reason, QObject *context, HubApi::Callback done)
{
    QJsonObject body = terms.toJson();
    body.insert(QStringLiteral("reason"), reason.trimmed());
    m_api->post(QStringLiteral("/api/forwarders/%1/request").arg(forwarderId), body, context,
        std::move(done));
}

void ForwarderDirectory::approve(qint64 requestId, const QString &ttl, const QString &executor,
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

void ForwarderDirectory::deny(
    qint64 requestId, const QString &reason, QObject *context, HubApi::Callback done)
{
    m_api->post(QStringLiteral("/api/requests/%1/deny").arg(requestId),
        QJsonObject { { QStringLiteral("reason"), reason.trimmed() } }, context, std::move(done));
}

QString describeTestReport(const QJsonObject &report)
{
    if (!report.value(QLatin1String("ok")).toBool(false)) {
        const QString problem = report.value(QLatin1String("problem")).toString();
        return ForwarderDirectory::tr("Problem on the forwarder: %1")
            .arg(problem.isEmpty() ? ForwarderDirectory::tr("no details") : problem);
    }
    if (report.value(QLatin1String("kind")).toString() == QLatin1String("l2")) {
        const QJsonObject link = report.value(QLatin1String("link")).toObject();
        const QString state = link.value(QLatin1String("up")).toBool()
            ? (link.value(QLatin1String("carrier")).toBool()
                    ? ForwarderDirectory::tr("link up")
                    : ForwarderDirectory::tr("up, no carrier"))
            : ForwarderDirectory::tr("link down");
        QString summary
            = ForwarderDirectory::tr("%1 · %2, MTU %3 · %4 frames in %5 s")
                  .arg(report.value(QLatin1String("interface")).toString(), state)
                  .arg(link.value(QLatin1String("mtu")).toInt())
                  .arg(report.value(QLatin1String("frames_seen")).toInt())
                  .arg(report.value(QLatin1String("listened_ms")).toInt() / 1000.0, 0, 'f', 1);
        const QJsonArray frames = report.value(QLatin1String("frames")).toArray();
        if (!frames.isEmpty())
            summary += QStringLiteral("\n")
                + frames.first().toObject().value(QLatin1String("summary")).toString();
        return summary;
    }
    if (report.value(QLatin1String("kind")).toString() == QLatin1String("usb")) {
        // The USB/IP device list, as a consumer would read it.
        const auto &names = device::usb::UsbIdDatabase::system();
        QStringList lines;
        for (const QJsonValue &value : report.value(QLatin1String("devices")).toArray()) {
            const QJsonObject device = value.toObject();
            const QString vendorId = device.value(QLatin1String("vendor_id")).toString();
            const QString productId = device.value(QLatin1String("product_id")).toString();
            const quint16 vendor = quint16(vendorId.toUInt(nullptr, 16));
            const QString name = names.productName(vendor, quint16(productId.toUInt(nullptr, 16)));
            const int interfaces = int(device.value(QLatin1String("interfaces")).toArray().size());
            lines.append(ForwarderDirectory::tr(
                "Exports %1 · %2:%3%4 · %5 · %n interface(s)", nullptr, interfaces)
                             .arg(device.value(QLatin1String("busid")).toString(), vendorId,
                                 productId, name.isEmpty() ? QString() : QStringLiteral(" ") + name,
                                 device.value(QLatin1String("speed")).toString()));
        }
        return lines.join(QLatin1Char('\n'));
    }
    // Other kinds report in their own shape; until a card knows it, the
    // verdict is what matters.
    return ForwarderDirectory::tr("%1 device answered")
        .arg(report.value(QLatin1String("kind")).toString());
}

} // namespace cloop::dashboard
