#pragma once

// A hub that lies, for showing what a daemon does then: a QWebSocketServer
// in secure mode on 127.0.0.1 holding the real test hub's certificate and
// key (from its data folder's tls/), so it passes the daemon's pin. It
// speaks the tunnel protocol as a hub does: every hello is answered with a
// welcome naming whatever device the test chooses, and the test can then
// open channels to the daemon as a hub would.

#include "common/protocol/devicespec.h"
#include "common/tunnel/tunnelconnection.h"

#include <QObject>
#include <QPointer>
#include <QString>

#include <optional>

class QWebSocketServer;

namespace cloop::testing {

class ImpostorHub final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ImpostorHub)

public:
    explicit ImpostorHub(QObject *parent = nullptr);
    ~ImpostorHub() override;

    // `tlsDir` holds cert.pem and key.pem; `port` is usually the real hub's,
    // which is stopped, so a daemon's saved credential dials this one.
    bool listen(const QString &tlsDir, quint16 port);
    QString lastError() const { return m_lastError; }

    // What every welcome names (none: no device at all).
    void setWelcomeDevice(std::optional<protocol::DeviceSpec> device)
    {
        m_device = std::move(device);
    }

    // Daemons that said hello, and the latest one's tunnel while it lasts.
    int hellos() const { return m_hellos; }
    tunnel::TunnelConnection *session() const { return m_session; }
    // Opens a channel to the latest daemon, as the hub opens device
    // channels; null (lastError() says why) without one.
    tunnel::Channel *openChannel(const QJsonObject &metadata);

Q_SIGNALS:
    void welcomed();
    void sessionEnded(const QString &reason);

private:
    void onNewConnection();

    QWebSocketServer *m_server = nullptr;
    std::optional<protocol::DeviceSpec> m_device;
    QPointer<tunnel::TunnelConnection> m_session;
    int m_hellos = 0;
    QString m_lastError;
};

} // namespace cloop::testing
