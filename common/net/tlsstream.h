#pragma once

#include "common/result.h"
#include "common/util/fd.h"

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QSslCertificate>
#include <QSslKey>

#include <memory>

class QSocketNotifier;
class QTimer;

using SSL_CTX = struct ssl_ctx_st;
using SSL = struct ssl_st;

namespace cloop::net {

// One TLS server context for every connection a listener accepts: made
// once from the certificate chain and key, then only referenced. Qt makes
// a context per socket, which at thousands of connections costs more than
// their handshakes.
class TlsServerContext final
{
public:
    static Result<std::shared_ptr<const TlsServerContext>> create(
        const QList<QSslCertificate> &chain, const QSslKey &key);
    ~TlsServerContext();
    TlsServerContext(const TlsServerContext &) = delete;
    TlsServerContext &operator=(const TlsServerContext &) = delete;

    SSL_CTX *handle() const { return m_context; }

private:
    explicit TlsServerContext(SSL_CTX *context)
        : m_context(context)
    { }
    SSL_CTX *m_context;
};

// The server side of one TLS connection over a connected, non-blocking TCP
// descriptor it owns. It holds no buffer while it has nothing to send:
// OpenSSL releases its record buffers between records, decrypted bytes go
// straight to whoever reads them, and what cannot be sent at once waits in
// one buffer that is freed once it drains. Writes made in one turn of the
// event loop leave together at its end, in as few records as fit them.
class TlsStream final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TlsStream)

public:
    enum class State
    {
        Handshaking,
        Encrypted,
        Closing, // our close_notify is out (or going); waiting for the peer's end
        Closed,
    };

    TlsStream(util::Fd descriptor, std::shared_ptr<const TlsServerContext> context,
        QObject *parent = nullptr);
    ~TlsStream() override;

    // Begins the handshake; encrypted() or failed() follows.
    void startServerHandshake();

    State state() const { return m_state; }
    const QHostAddress &peerAddress() const { return m_peerAddress; }
    quint16 peerPort() const { return m_peerPort; }
    int descriptor() const { return m_descriptor.get(); }

    // Reads up to `size` decrypted bytes into `data`: how many, 0 when none
    // are here yet (readyRead() will say), -1 once the stream ended.
    qsizetype read(char *data, qsizetype size);
    // While paused nothing is read from the socket and readyRead() stays
    // quiet, so a slow consumer holds the sender back through TCP.
    void setReadPaused(bool paused);

    // Queues bytes to send; they leave at the end of this turn of the
    // event loop. Ignored once closing.
    void write(QByteArrayView bytes);
    // Bytes not yet taken by the kernel (queued or held in a record).
    qsizetype bytesToWrite() const { return m_outgoing.size() - m_sent; }
    // Memory held for this stream beyond OpenSSL's own state.
    qsizetype bufferedBytes() const { return m_outgoing.capacity(); }

    // Sends what is queued and a close_notify, then ends once the peer has
    // closed too or `lingerMs` have passed.
    void close(int lingerMs = 2000);
    // Ends now: queued bytes are dropped.
    void abort();
    // Hands the TCP connection over, encryption abandoned (to drain what a
    // peer still sends after a final answer without decrypting it).
    util::Fd takeDescriptor();

Q_SIGNALS:
    void encrypted();
    // The handshake failed or the connection broke: why. ended() follows.
    void failed(const QString &reason);
    void readyRead();
    // Everything queued so far is with the kernel.
    void drained();
    // Once, however the stream ends.
    void ended();

private:
    void onReadable();
    void onWritable();
    void continueHandshake();
    void flush();
    void scheduleFlush();
    // Interprets an OpenSSL result: true when the call may be retried once
    // the socket is ready (the notifiers are armed for it).
    bool retryable(int result, const char *operation);
    void updateNotifiers();
    // A fatal error met inside read() or write(): failed() comes a turn later.
    void breakWith(const QString &reason);
    void fail(const QString &reason);
    void finish();
    void stopWatching();
    void shutdownTls();

    util::Fd m_descriptor;
    std::shared_ptr<const TlsServerContext> m_context;
    SSL *m_ssl = nullptr;
    QSocketNotifier *m_readNotifier = nullptr;
    QSocketNotifier *m_writeNotifier = nullptr;
    QTimer *m_lingerTimer = nullptr;
    QHostAddress m_peerAddress;
    quint16 m_peerPort = 0;
    State m_state = State::Handshaking;
    QByteArray m_outgoing;
    qsizetype m_sent = 0; // of m_outgoing
    bool m_flushScheduled = false;
    bool m_readPaused = false;
    bool m_wantReadForWrite = false; // OpenSSL must read before it can write
    bool m_wantWriteForRead = false; // and the other way round
    bool m_peerEnded = false;
    bool m_broken = false;
    bool m_ended = false;
};

} // namespace cloop::net
