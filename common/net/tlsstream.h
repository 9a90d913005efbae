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
using X509_STORE_CTX = struct x509_store_ctx_st;

namespace cloop::net {

// What the verifier found wrong with a server's certificate: one chain
// or name error, in OpenSSL's words. Whether it is fatal is the caller's
// policy (a pinned key may stand in for a missing trusted issuer).
struct CertificateProblem
{
    int code = 0; // X509_V_ERR_*
    int depth = 0; // 0: the server's own certificate
    QString text;
    // The chain ends at no authority we trust: the only kind a pin may waive.
    bool noTrustedIssuer = false;
};

// One TLS context for every connection of one kind, made once and then only
// referenced: a server's from its certificate chain and key, a client's from
// the authorities it trusts. Qt makes a context per socket, which at
// thousands of connections costs more than their handshakes (a client's
// decodes the whole CA store each time).
class TlsContext final
{
public:
    static Result<std::shared_ptr<const TlsContext>> forServer(
        const QList<QSslCertificate> &chain, const QSslKey &key);
    // Verifies servers against the system's CAs and `extraAuthorities`; the
    // problems found are recorded, not fatal (TlsStream::certificateProblems()).
    static Result<std::shared_ptr<const TlsContext>> forClient(
        const QList<QSslCertificate> &extraAuthorities);
    ~TlsContext();
    TlsContext(const TlsContext &) = delete;
    TlsContext &operator=(const TlsContext &) = delete;

    SSL_CTX *handle() const { return m_context; }
    bool isServer() const { return m_server; }

private:
    // A context with what both sides set: TLS 1.2 or later, no
    // renegotiation, record buffers released between records.
    static Result<std::shared_ptr<const TlsContext>> create(bool server);
    TlsContext(SSL_CTX *context, bool server)
        : m_context(context)
        , m_server(server)
    { }
    SSL_CTX *m_context;
    bool m_server;
};

// One end of a TLS connection over a connected TCP descriptor it owns: the
// hub's for each connection its front accepts, a daemon's for each dial.
// Without a context it carries plaintext (a ws:// dial to a loopback hub,
// or one the operator allowed): the same stream, no encryption. It holds no buffer while it has
// nothing to send: OpenSSL releases its record buffers between records, decrypted bytes go straight
// to whoever reads them, and what cannot be sent at once waits in one buffer that is freed once it
// drains. Writes made in one turn of the event loop leave together at its end, in as few records as
// fit them.
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

    // `context` null: plaintext.
    TlsStream(
        util::Fd descriptor, std::shared_ptr<const TlsContext> context, QObject *parent = nullptr);
    ~TlsStream() override;

    // Begins the handshake; encrypted() or failed() follows.
    void startServerHandshake();
    // Begins a client's handshake with the server named `serverName`: a
    // host name is sent as SNI and must be one the certificate names; an
    // IP address must be one it lists. encrypted() or failed() follows
    // (a plaintext stream says encrypted() a turn later, having no
    // handshake to do).
    void startClientHandshake(const QString &serverName);

    bool isPlaintext() const { return !m_context; }
    // After encrypted(), on a client: the server's certificate, and what is
    // wrong with it (nothing when a trusted authority vouches for it and
    // it names the server).
    QSslCertificate peerCertificate() const;
    // SHA-256 over the server's SubjectPublicKeyInfo (what a pin names),
    // taken from the handshake's own certificate: nothing decoded again.
    QByteArray peerKeyDigest() const;
    const QList<CertificateProblem> &certificateProblems() const { return m_problems; }

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
    // Queues `size` bytes the caller writes in place (a frame masked as it
    // is copied): valid until the next call on this stream. Null once closing.
    char *appendSpace(qsizetype size);
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
    qsizetype readPlain(char *data, qsizetype size);
    // Sends from m_outgoing: false when the rest must wait.
    bool writePlain();
    // The client context's verify callback: notes each problem, goes on.
    static int recordProblem(int preverified, X509_STORE_CTX *store);
    friend class TlsContext;

    util::Fd m_descriptor;
    std::shared_ptr<const TlsContext> m_context;
    QList<CertificateProblem> m_problems;
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
