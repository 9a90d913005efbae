#pragma once

#include "common/result.h"
#include "common/util/fd.h"

#include <QHostAddress>
#include <QObject>
#include <QTimer>

#include <functional>
#include <memory>

class QSocketNotifier;

namespace cloop::util {
class LogThrottle;
}

namespace cloop::hub::edge {

// The hub's listening socket, accepted by hand rather than through
// QTcpServer: the backlog is sized for a reconnect storm, nothing counts
// connections in progress against the accept loop, and running out of
// file descriptors refuses the newcomer (through a reserve descriptor)
// instead of leaving the socket readable forever or the server paused.
class TcpListener final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TcpListener)

public:
    struct Options
    {
        QHostAddress address = QHostAddress::Any;
        quint16 port = 0;
        // Capped by the kernel's net.core.somaxconn.
        int backlog = 4096;
        // Connections accepted per wake-up before the event loop gets a turn.
        int acceptBatch = 128;
    };

    // Receives each accepted connection; owns the descriptor from then on.
    using Handler
        = std::function<void(util::Fd socket, const QHostAddress &peer, quint16 peerPort)>;

    static Result<std::unique_ptr<TcpListener>> listen(
        const Options &options, Handler handler, QObject *parent = nullptr);
    ~TcpListener() override;

    quint16 port() const { return m_port; }
    int backlog() const { return m_backlog; }
    // Connections refused because the process had no descriptor to spare.
    quint64 refusedForDescriptors() const { return m_refusedForDescriptors; }

private:
    TcpListener(util::Fd socket, quint16 port, int backlog, const Options &options, Handler handler,
        QObject *parent);
    void acceptPending();
    // Accepts and closes one waiting connection; false when none was waiting.
    bool refuseOneWithReserve();
    void pauseAccepting();

    util::Fd m_socket;
    // Held open so that, out of descriptors, one can be freed to accept
    // and close a connection the kernel would otherwise keep queued.
    util::Fd m_reserve;
    QSocketNotifier *m_notifier;
    QTimer m_resume;
    quint16 m_port;
    int m_backlog;
    int m_acceptBatch;
    Handler m_handler;
    quint64 m_refusedForDescriptors = 0;
    std::unique_ptr<util::LogThrottle> m_exhaustionLog;
    std::unique_ptr<util::LogThrottle> m_errorLog;
};

// The kernel's cap on a listen backlog (net.core.somaxconn); 4096 if unknown.
int kernelListenBacklogCap();

} // namespace cloop::hub::edge
