#pragma once

// Clients that behave as an attacker's would, for the tests of the hub's
// port: raw TCP and TLS from a chosen loopback source address, HTTP written
// by hand, WebSocket upgrades that never say hello, and frames built byte
// by byte. They trust any certificate: what they test is the hub's edge,
// not its identity.

#include "common/util/fd.h"

#include <QByteArray>
#include <QHostAddress>
#include <QSslSocket>

#include <memory>

namespace cloop::testing {

// A non-blocking TCP connect from `source` (any 127.0.0.0/8 address works
// on loopback) to 127.0.0.1:port; invalid when even the connect failed.
util::Fd rawConnect(
    quint16 port, const QHostAddress &source = QHostAddress(QHostAddress::LocalHost));
// Whether a raw connection is established, and whether the peer ended it.
bool rawIsConnected(const util::Fd &socket);
bool rawClosedByPeer(const util::Fd &socket);
// Ends it with a reset rather than a FIN.
void rawReset(util::Fd &socket);

class EdgeClient
{
public:
    explicit EdgeClient(const QHostAddress &source = QHostAddress(QHostAddress::LocalHost));

    // TLS to 127.0.0.1:port; false when the handshake did not finish in time.
    bool connectTls(quint16 port, int timeoutMs = 10'000);
    bool isOpen() const;
    // Sends everything (waits while the socket is writable), false on error.
    bool send(const QByteArray &bytes, int timeoutMs = 10'000);
    // Bytes until the end of an HTTP head (and its body by Content-Length),
    // or until the peer closes, within timeoutMs.
    QByteArray readHttpAnswer(int timeoutMs = 10'000);
    // The status of an HTTP answer ("HTTP/1.1 431 ..."), 0 if none.
    static int statusOf(const QByteArray &answer);
    // An upgrade to `path`; true once the hub answered 101.
    bool upgradeWebSocket(const QString &path, int timeoutMs = 10'000);
    // The same in two steps, for many clients at once: the request is
    // written as soon as TLS is up (now, or once it is).
    void beginUpgrade(const QString &path);
    bool upgradeAccepted(int timeoutMs = 10'000);
    // A masked client frame (opcode 1 text, 2 binary).
    bool sendFrame(int opcode, const QByteArray &payload);
    // The server's frames (opcode, payload), read until the hub closes or
    // timeoutMs pass.
    QList<std::pair<int, QByteArray>> readFrames(int timeoutMs);
    // True once the peer closed within timeoutMs.
    bool waitClosed(int timeoutMs);
    QSslSocket &socket() { return *m_socket; }

private:
    std::unique_ptr<QSslSocket> m_socket;
    QHostAddress m_source;
    QByteArray m_pending;
};

} // namespace cloop::testing
