#pragma once

#include "common/result.h"
#include "hub/cluster/peerdirectory.h"

#include <QHostAddress>
#include <QObject>
#include <QPointer>
#include <QSslConfiguration>
#include <QSslError>
#include <QTimer>

#include <chrono>
#include <optional>

class QSslSocket;

namespace cloop::hub {

// One connection to the peer port until it has proved to be another live
// member and asked for the peer endpoint's WebSocket: TLS with this
// member's certificate, a client certificate required and judged by its
// pin alone, then the upgrade request's head, read without taking it from
// the socket. One deadline bounds all of it, the upgrade included.
class PeerHandshake final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PeerHandshake)

public:
    // Takes the socket (a child from now on).
    PeerHandshake(
        QSslSocket *socket, PeerDirectory &directory, qint64 selfId, QObject *parent = nullptr);
    ~PeerHandshake() override;

    void start(const QSslConfiguration &tls, std::chrono::milliseconds deadline);

    const QHostAddress &peerAddress() const { return m_peerAddress; }
    quint16 peerPort() const { return m_peerPort; }
    // Known once readyToUpgrade() came.
    const PeerMember &member() const { return *m_member; }
    QSslSocket *socket() const { return m_socket; }
    // Hands the socket, the upgrade request still unread in it, to whoever
    // completes the upgrade; the deadline no longer applies.
    QSslSocket *releaseSocket();

Q_SIGNALS:
    // The client is a live member and asked for the peer endpoint's
    // WebSocket: upgrade the socket within the deadline.
    void readyToUpgrade();
    // Once: the connection is gone, and why it did not become a peer's.
    void failed(const QString &reason);

private:
    enum class Stage
    {
        Tls,
        Head,
        Upgrading,
        Refusing,
        Done
    };

    void onSslErrors(const QList<QSslError> &errors);
    void onEncrypted();
    void readHead();
    // Answers an HTTP refusal, then closes once it is out (or the deadline).
    void answer(int status, const QString &reason);
    Result<PeerMember> identify();
    void onDeadline();
    void onGone();
    void noteRefusal(const QString &reason);

    QPointer<QSslSocket> m_socket;
    PeerDirectory &m_directory;
    qint64 m_selfId;
    QHostAddress m_peerAddress;
    quint16 m_peerPort = 0;
    Stage m_stage = Stage::Tls;
    std::optional<PeerMember> m_member;
    std::optional<QString> m_refusal;
    QTimer m_deadline;
};

} // namespace cloop::hub
