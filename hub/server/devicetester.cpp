#include "hub/server/devicetester.h"

#include "common/logging.h"
#include "common/tunnel/channelmultiplexer.h"
#include "hub/server/daemongateway.h"
#include "hub/storage/forwarderstore.h"

#include <QJsonDocument>
#include <QPointer>
#include <QTimer>

namespace cloop::hub {

DeviceTester::DeviceTester(DaemonGateway &forwarders, std::chrono::milliseconds timeout, QObject *parent)
    : QObject(parent), m_forwarders(forwarders), m_timeout(timeout)
{
}

ApiResponse DeviceTester::test(const ForwarderRecord &forwarder, const QJsonObject &forwarderJson)
{
    if (forwarder.isRevoked())
        return ApiResponse::fromError(Error::make(QStringLiteral("forwarder_revoked"),
                                                  QStringLiteral("forwarder %1 (%2) was revoked")
                                                          .arg(forwarder.id)
                                                          .arg(forwarder.name)));
    tunnel::TunnelConnection *session = m_forwarders.session(forwarder.id);
    if (!session)
        return ApiResponse::fromError(Error::make(QStringLiteral("forwarder_offline"),
                                                  QStringLiteral("forwarder %1 (%2) is not connected; its device "
                                                                 "cannot be tested")
                                                          .arg(forwarder.id)
                                                          .arg(forwarder.name)));
    auto opened = session->channels()->openChannel(QJsonObject{{QStringLiteral("kind"), QStringLiteral("device-test")}});
    if (!opened)
        return ApiResponse::fromError(Error::make(QStringLiteral("forwarder_busy"), opened.error().message));
    QPointer<tunnel::Channel> channel(*opened);

    // The deferred answer and what gathers it live until the channel ends
    // or the time is up, whichever comes first.
    auto deferred = std::make_shared<DeferredResponse>();
    auto report = std::make_shared<QByteArray>();
    auto *timer = new QTimer(this);
    timer->setSingleShot(true);
    const qint64 id = forwarder.id;
    const auto finish = [deferred, timer, channel](ApiResponse response) {
        deferred->finish(std::move(response));
        timer->deleteLater();
        if (channel)
            channel->disconnect(timer);
    };
    connect(timer, &QTimer::timeout, this, [finish, channel, id, timeout = m_timeout] {
        if (channel)
            channel->close(protocol::CloseCode::Refused, QStringLiteral("the test took too long"));
        finish(ApiResponse::error(504, QStringLiteral("test_timeout"),
                                  QStringLiteral("forwarder %1 did not report within %2 s")
                                          .arg(id)
                                          .arg(timeout.count() / 1000.0)));
    });
    connect(*opened, &tunnel::Channel::readyRead, timer, [channel, report, finish] {
        if (!channel)
            return;
        *report += channel->readAll();
        if (report->size() > kMaxReportBytes) {
            channel->close(protocol::CloseCode::Overflow, QStringLiteral("the test report is too large"));
            finish(ApiResponse::error(502, QStringLiteral("bad_test_report"),
                                      QStringLiteral("the forwarder's test report exceeds %1 bytes").arg(kMaxReportBytes)));
        }
    });
    connect(*opened, &tunnel::Channel::closed, timer,
            [report, finish, forwarderJson](protocol::CloseCode code, const QString &reason) {
                if (code != protocol::CloseCode::Normal) {
                    finish(ApiResponse::error(502, QStringLiteral("test_failed"),
                                              reason.isEmpty() ? QStringLiteral("the forwarder ended the test") : reason));
                    return;
                }
                QJsonParseError parseError{};
                const QJsonDocument document = QJsonDocument::fromJson(*report, &parseError);
                if (!document.isObject()) {
                    finish(ApiResponse::error(502, QStringLiteral("bad_test_report"),
                                              QStringLiteral("the forwarder's test report is not a JSON object: %1")
                                                      .arg(parseError.errorString())));
                    return;
                }
                finish(ApiResponse::ok(QJsonObject{{QStringLiteral("forwarder"), forwarderJson},
                                                   {QStringLiteral("report"), document.object()}}));
            });
    timer->start(m_timeout);
    qCInfo(lcHub).noquote() << "testing the device of forwarder" << forwarder.id << forwarder.name;
    ApiResponse pending;
    pending.deferred = deferred;
    return pending;
}

} // namespace cloop::hub
