#pragma once

#include "common/util/fd.h"
#include "hub/edge/edgelimits.h"
#include "hub/edge/httprequestparser.h"
#include "hub/edge/httpservice.h"
#include "hub/edge/preauthpool.h"

#include <QHostAddress>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <deque>
#include <optional>

class QSocketNotifier;

namespace cloop::net {
class TlsStream;
}

namespace cloop::hub::edge {

class HttpFront;

// One TLS connection of the front, from its handshake to its last answer
// or its upgrade: reads one request at a time within the limits and
// deadlines, asks the service about each head before reading its body,
// after a final answer closes without losing it to a reset, and answers a
// WebSocket upgrade itself, handing the service a socket of the hub's own.
class HttpConnection final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(HttpConnection)

public:
    // Takes the stream (not yet started) and the place.
    HttpConnection(net::TlsStream *stream, PreAuthPool::Place place, HttpFront &front,
        HttpService &service, const EdgeLimits &limits);
    ~HttpConnection() override;

    void start();
    const QHostAddress &peer() const { return m_peer; }

Q_SIGNALS:
    void finished();

private:
    enum class State
    {
        Handshaking,
        Idle, // between requests
        Head,
        Body,
        Serving, // waiting for the service's answer
        Lingering, // answered for the last time; draining input
        Done,
    };

    void onEncrypted();
    void onReadyRead();
    void process();
    bool fillPending();
    void onHeadComplete();
    void onMessageComplete();
    void handOver();
    // What an upgrade request lacks to be answered, if anything.
    std::optional<QString> upgradeFault() const;
    void respond(quint64 request, const HttpAnswer &answer);
    void send(const HttpAnswer &answer, bool closeAfter);
    // A refused request ends its connection; one log line (throttled)
    // tells of refusals to callers who have not proved who they are.
    void refuse(const HttpAnswer &answer, bool authenticated);
    // Answers leave in order through the outbox, a large one in pieces.
    void enqueue(const QByteArray &bytes);
    void writeFromOutbox();
    void onDrained();
    void discardReadable();
    void linger();
    void drainWhenFlushed();
    void onDrainReadable();
    void arm(std::chrono::milliseconds deadline);
    void onDeadline();
    void finish();
    QString describe() const;

    net::TlsStream *m_stream;
    PreAuthPool::Place m_place;
    HttpFront &m_front;
    HttpService &m_service;
    const EdgeLimits &m_limits;
    QHostAddress m_peer;
    HttpRequestParser m_parser;
    QTimer m_deadline;
    State m_state = State::Handshaking;
    QByteArray m_pending;
    qsizetype m_pendingOffset = 0;
    std::deque<QByteArray> m_outbox;
    qsizetype m_outboxOffset = 0; // into m_outbox.front()
    HeadDecision m_decision;
    quint64 m_requestSerial = 0;
    qsizetype m_discarded = 0;
    bool m_firstRequest = true;
    bool m_authenticated = false;
    // After the last answer: the connection, TLS abandoned, being drained.
    util::Fd m_drain;
    QSocketNotifier *m_drainNotifier = nullptr;
};

} // namespace cloop::hub::edge
