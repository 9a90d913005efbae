#include "common/net/tlsstream.h"

#include "common/crypto/opensslptr.h"
#include "common/logging.h"

#include <QPointer>
#include <QSocketNotifier>
#include <QTimer>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace cloop::net {

namespace {

// What OpenSSL's error queue says, or errno's text, for a person.
QString openSslReason(const char *what)
{
    const unsigned long code = ERR_get_error();
    ERR_clear_error();
    if (code != 0) {
        char text[256];
        ERR_error_string_n(code, text, sizeof text);
        return QStringLiteral("%1: %2").arg(QLatin1StringView(what), QString::fromLatin1(text));
    }
    if (errno != 0)
        return QStringLiteral("%1: %2").arg(
            QLatin1StringView(what), QString::fromLocal8Bit(std::strerror(errno)));
    return QStringLiteral("%1 failed").arg(QLatin1StringView(what));
}

crypto::BioPtr memoryOf(const QByteArray &pem)
{
    return crypto::BioPtr(BIO_new_mem_buf(pem.constData(), int(pem.size())));
}

// OpenSSL's socket BIO writes with write(), which raises SIGPIPE when the
// peer has gone and would end the whole process: this one is the same but
// sends with MSG_NOSIGNAL, so a vanished peer is an error like any other.
int sendWithoutSignal(BIO *bio, const char *data, int size)
{
    const int fd = static_cast<int>(BIO_get_fd(bio, nullptr));
    errno = 0;
    const ssize_t sent = ::send(fd, data, static_cast<size_t>(size), MSG_NOSIGNAL);
    BIO_clear_retry_flags(bio);
    if (sent < 0 && BIO_sock_should_retry(-1))
        BIO_set_retry_write(bio);
    return static_cast<int>(sent);
}

const BIO_METHOD *socketWithoutSignal()
{
    static BIO_METHOD *const method = [] {
        const BIO_METHOD *plain = BIO_s_socket();
        BIO_METHOD *own = BIO_meth_new(BIO_TYPE_SOCKET, "socket without SIGPIPE");
        BIO_meth_set_write(own, sendWithoutSignal);
        BIO_meth_set_read(own, BIO_meth_get_read(plain));
        BIO_meth_set_puts(own, BIO_meth_get_puts(plain));
        BIO_meth_set_ctrl(own, BIO_meth_get_ctrl(plain));
        BIO_meth_set_create(own, BIO_meth_get_create(plain));
        BIO_meth_set_destroy(own, BIO_meth_get_destroy(plain));
        return own;
    }();
    return method;
}

// Not readable beyond this in one call: a TLS record's worth.
constexpr qsizetype kReadChunk = 16 * 1024;

// Where the verify callback finds the stream a handshake belongs to.
int streamIndex()
{
    static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    return index;
}

bool lacksTrustedIssuer(int code)
{
    switch (code) {
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_UNTRUSTED:
        return true;
    default:
        return false;
    }
}

} // namespace

Result<std::shared_ptr<const TlsContext>> TlsContext::create(bool server)
{
    ERR_clear_error();
    SSL_CTX *raw = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (!raw)
        return Error::make(QStringLiteral("tls_setup"), openSslReason("SSL_CTX_new"));
    std::shared_ptr<const TlsContext> context(new TlsContext(raw, server));
    SSL_CTX_set_min_proto_version(raw, TLS1_2_VERSION);
    // Renegotiation is an old way to make a peer work for nothing. A peer
    // that closes without a close_notify has ended (as most do): what it
    // sent is framed by HTTP or WebSocket, which tell a cut-off message.
    SSL_CTX_set_options(raw, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
    // Record buffers only while a record is under way; writes in pieces.
    SSL_CTX_set_mode(raw,
        SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE
            | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    // Neither side resumes sessions: nothing is cached.
    SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_OFF);
    return context;
}

Result<std::shared_ptr<const TlsContext>> TlsContext::forServer(
    const QList<QSslCertificate> &chain, const QSslKey &key)
{
    if (chain.isEmpty() || key.isNull())
        return Error::make(
            QStringLiteral("tls_setup"), QStringLiteral("no certificate or key to serve TLS with"));
    auto made = create(true);
    if (!made)
        return made.error();
    std::shared_ptr<const TlsContext> context = std::move(*made);
    SSL_CTX *raw = context->handle();
    SSL_CTX_set_options(raw, SSL_OP_CIPHER_SERVER_PREFERENCE);
    // The clients do not resume sessions: tickets would be work and bytes
    // spent on every handshake for nothing.
    SSL_CTX_set_num_tickets(raw, 0);
    SSL_CTX_set_verify(raw, SSL_VERIFY_NONE, nullptr);

    bool first = true;
    for (const QSslCertificate &certificate : chain) {
        const auto bio = memoryOf(certificate.toPem());
        crypto::X509Ptr x509(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
        if (!x509)
            return Error::make(
                QStringLiteral("tls_setup"), openSslReason("reading the certificate"));
        const int added = first ? SSL_CTX_use_certificate(raw, x509.get())
                                : int(SSL_CTX_add1_chain_cert(raw, x509.get()));
        if (added != 1)
            return Error::make(QStringLiteral("tls_setup"), openSslReason("using the certificate"));
        first = false;
    }
    const auto keyBio = memoryOf(key.toPem());
    crypto::PkeyPtr pkey(PEM_read_bio_PrivateKey(keyBio.get(), nullptr, nullptr, nullptr));
    if (!pkey)
        return Error::make(QStringLiteral("tls_setup"), openSslReason("reading the private key"));
    if (SSL_CTX_use_PrivateKey(raw, pkey.get()) != 1 || SSL_CTX_check_private_key(raw) != 1)
        return Error::make(QStringLiteral("tls_setup"), openSslReason("using the private key"));
    return context;
}

Result<std::shared_ptr<const TlsContext>> TlsContext::forClient(
    const QList<QSslCertificate> &extraAuthorities)
{
    auto made = create(false);
    if (!made)
        return made.error();
    std::shared_ptr<const TlsContext> context = std::move(*made);
    SSL_CTX *raw = context->handle();
    // Every problem is recorded and the handshake goes on: whether one is
    // fatal depends on the pins, which the owner of the stream holds.
    SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, &TlsStream::recordProblem);
    // The system's CAs as OpenSSL's defaults name them (SSL_CERT_FILE and
    // SSL_CERT_DIR override): the bundle read once, here, and the hashed
    // directory for what it lacks. Not SSL_CTX_set_default_verify_paths():
    // on OpenSSL 3 it adds a store loader that reads the whole directory
    // and decodes every certificate in it at each verification.
    X509_STORE *store = SSL_CTX_get_cert_store(raw);
    const auto fromEnvironment = [](const char *variable, const char *fallback) {
        const char *value = std::getenv(variable);
        return QByteArray(value && *value ? value : fallback);
    };
    const QByteArray caFile
        = fromEnvironment(X509_get_default_cert_file_env(), X509_get_default_cert_file());
    const QByteArray caDirectory
        = fromEnvironment(X509_get_default_cert_dir_env(), X509_get_default_cert_dir());
    // Either may be missing on a given system; what is there is used.
    if (::access(caFile.constData(), R_OK) == 0
        && X509_STORE_load_file(store, caFile.constData()) != 1)
        return Error::make(QStringLiteral("tls_setup"),
            openSslReason(QByteArray("reading the CAs in " + caFile).constData()));
    ERR_clear_error();
    if (X509_LOOKUP *directory = X509_STORE_add_lookup(store, X509_LOOKUP_hash_dir()))
        X509_LOOKUP_ctrl(
            directory, X509_L_ADD_DIR, caDirectory.constData(), X509_FILETYPE_PEM, nullptr);
    ERR_clear_error();
    for (const QSslCertificate &authority : extraAuthorities) {
        const auto bio = memoryOf(authority.toPem());
        crypto::X509Ptr x509(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
        if (!x509 || X509_STORE_add_cert(store, x509.get()) != 1)
            return Error::make(QStringLiteral("tls_setup"), openSslReason("adding a CA"));
    }
    return context;
}

TlsContext::~TlsContext()
{
    SSL_CTX_free(m_context);
}

TlsStream::TlsStream(
    util::Fd descriptor, std::shared_ptr<const TlsContext> context, QObject *parent)
    : QObject(parent)
    , m_descriptor(std::move(descriptor))
    , m_context(std::move(context))
{
    const int fd = m_descriptor.get();
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    // Device data rides these connections: small frames must not wait.
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    sockaddr_storage peer {};
    socklen_t length = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &length) == 0) {
        m_peerAddress = QHostAddress(reinterpret_cast<const sockaddr *>(&peer));
        m_peerPort = peer.ss_family == AF_INET6
            ? ntohs(reinterpret_cast<const sockaddr_in6 *>(&peer)->sin6_port)
            : ntohs(reinterpret_cast<const sockaddr_in *>(&peer)->sin_port);
    }
    if (m_context)
        m_ssl = SSL_new(m_context->handle());
    if (m_ssl) {
        BIO *bio = BIO_new(socketWithoutSignal());
        BIO_set_fd(bio, fd, BIO_NOCLOSE);
        SSL_set_bio(m_ssl, bio, bio);
        SSL_set_ex_data(m_ssl, streamIndex(), this);
    }
    m_readNotifier = new QSocketNotifier(fd, QSocketNotifier::Read, this);
    m_writeNotifier = new QSocketNotifier(fd, QSocketNotifier::Write, this);
    m_writeNotifier->setEnabled(false);
    connect(m_readNotifier, &QSocketNotifier::activated, this, &TlsStream::onReadable);
    connect(m_writeNotifier, &QSocketNotifier::activated, this, &TlsStream::onWritable);
}

TlsStream::~TlsStream()
{
    // The notifiers go before the descriptor they watch.
    delete m_readNotifier;
    delete m_writeNotifier;
    if (m_ssl)
        SSL_free(m_ssl);
}

void TlsStream::startServerHandshake()
{
    if (!m_ssl || !m_context->isServer()) {
        QMetaObject::invokeMethod(
            this, [this] { fail(QStringLiteral("cannot make a TLS connection")); },
            Qt::QueuedConnection);
        return;
    }
    SSL_set_accept_state(m_ssl);
    continueHandshake();
}

void TlsStream::startClientHandshake(const QString &serverName)
{
    if (!m_context) {
        QMetaObject::invokeMethod(
            this,
            [this] {
                if (m_state != State::Handshaking)
                    return;
                m_state = State::Encrypted;
                updateNotifiers();
                Q_EMIT encrypted();
            },
            Qt::QueuedConnection);
        return;
    }
    const QByteArray name = serverName.toUtf8();
    bool named = m_ssl && !m_context->isServer();
    if (named) {
        if (QHostAddress(serverName).isNull()) {
            // SSL_set_tlsext_host_name() without its macro's C cast.
            named = SSL_ctrl(m_ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                        const_cast<char *>(name.constData()))
                    == 1
                && SSL_set1_host(m_ssl, name.constData()) == 1;
        } else {
            named = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(m_ssl), name.constData()) == 1;
        }
    }
    if (!named) {
        QMetaObject::invokeMethod(
            this,
            [this, serverName] {
                fail(QStringLiteral("cannot make a TLS connection to %1").arg(serverName));
            },
            Qt::QueuedConnection);
        return;
    }
    SSL_set_connect_state(m_ssl);
    continueHandshake();
}

int TlsStream::recordProblem(int preverified, X509_STORE_CTX *store)
{
    if (preverified == 1)
        return 1;
    auto *ssl = static_cast<SSL *>(
        X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
    auto *stream = ssl ? static_cast<TlsStream *>(SSL_get_ex_data(ssl, streamIndex())) : nullptr;
    if (!stream)
        return 0;
    const int code = X509_STORE_CTX_get_error(store);
    stream->m_problems.append({ code, X509_STORE_CTX_get_error_depth(store),
        QString::fromLatin1(X509_verify_cert_error_string(code)), lacksTrustedIssuer(code) });
    return 1;
}

QSslCertificate TlsStream::peerCertificate() const
{
    if (!m_ssl || m_state == State::Handshaking)
        return QSslCertificate();
    X509 *peer = SSL_get0_peer_certificate(m_ssl);
    if (!peer)
        return QSslCertificate();
    unsigned char *der = nullptr;
    const int size = i2d_X509(peer, &der);
    if (size <= 0)
        return QSslCertificate();
    QSslCertificate certificate(QByteArray(reinterpret_cast<const char *>(der), size), QSsl::Der);
    OPENSSL_free(der);
    return certificate;
}

QByteArray TlsStream::peerKeyDigest() const
{
    if (!m_ssl || m_state == State::Handshaking)
        return {};
    X509 *peer = SSL_get0_peer_certificate(m_ssl);
    if (!peer)
        return {};
    unsigned char *der = nullptr;
    const int size = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(peer), &der);
    if (size <= 0)
        return {};
    QByteArray digest(SHA256_DIGEST_LENGTH, Qt::Uninitialized);
    SHA256(der, static_cast<size_t>(size), reinterpret_cast<unsigned char *>(digest.data()));
    OPENSSL_free(der);
    return digest;
}

void TlsStream::continueHandshake()
{
    if (!m_ssl)
        return;
    ERR_clear_error();
    errno = 0;
    const int result = SSL_do_handshake(m_ssl);
    if (result != 1) {
        if (retryable(result, "TLS handshake"))
            updateNotifiers();
        return;
    }
    m_state = State::Encrypted;
    updateNotifiers();
    QPointer<TlsStream> self(this);
    Q_EMIT encrypted();
    if (!self || m_state != State::Encrypted)
        return;
    // A client may send its first request with its last handshake record.
    if (SSL_has_pending(m_ssl))
        Q_EMIT readyRead();
    if (self && m_sent < m_outgoing.size())
        scheduleFlush();
}

bool TlsStream::retryable(int result, const char *operation)
{
    const int error = SSL_get_error(m_ssl, result);
    switch (error) {
    case SSL_ERROR_WANT_READ:
        return true;
    case SSL_ERROR_WANT_WRITE:
        m_writeNotifier->setEnabled(true);
        return true;
    case SSL_ERROR_ZERO_RETURN:
        m_peerEnded = true;
        return false;
    case SSL_ERROR_SYSCALL:
        if (ERR_peek_error() == 0 && errno == 0) {
            // The peer closed the connection without a close_notify.
            m_peerEnded = true;
            return false;
        }
        [[fallthrough]];
    default:
        breakWith(openSslReason(operation));
        return false;
    }
}

void TlsStream::breakWith(const QString &reason)
{
    if (m_broken || m_ended)
        return;
    // Said a turn later: whoever called read() or write() is not re-entered.
    m_broken = true;
    QMetaObject::invokeMethod(
        this, [this, reason] { fail(reason); }, Qt::QueuedConnection);
}

void TlsStream::updateNotifiers()
{
    if (m_ended)
        return;
    const bool reading = !m_readPaused || m_state != State::Encrypted;
    m_readNotifier->setEnabled(reading);
}

void TlsStream::onReadable()
{
    switch (m_state) {
    case State::Handshaking:
        continueHandshake();
        if (m_peerEnded)
            fail(QStringLiteral("the peer closed the connection during the TLS handshake"));
        return;
    case State::Encrypted: {
        if (m_wantReadForWrite) {
            m_wantReadForWrite = false;
            flush();
        }
        Q_EMIT readyRead();
        return;
    }
    case State::Closing: {
        // Whatever the peer still sends is read and dropped until it ends.
        char discard[kReadChunk];
        while (!m_ended && read(discard, sizeof discard) > 0) { }
        if (m_peerEnded)
            finish();
        return;
    }
    case State::Closed:
        return;
    }
}

void TlsStream::onWritable()
{
    m_writeNotifier->setEnabled(false);
    switch (m_state) {
    case State::Handshaking:
        continueHandshake();
        return;
    case State::Encrypted:
    case State::Closing:
        if (m_wantWriteForRead) {
            m_wantWriteForRead = false;
            Q_EMIT readyRead();
        }
        flush();
        return;
    case State::Closed:
        return;
    }
}

qsizetype TlsStream::read(char *data, qsizetype size)
{
    if (m_ended || m_peerEnded || m_broken)
        return -1;
    if (m_state == State::Handshaking)
        return 0;
    if (!m_ssl)
        return readPlain(data, size);
    ERR_clear_error();
    errno = 0;
    const int result = SSL_read(m_ssl, data, int(std::min<qsizetype>(size, 4 * kReadChunk)));
    if (result > 0)
        return result;
    const int error = SSL_get_error(m_ssl, result);
    if (error == SSL_ERROR_WANT_WRITE)
        m_wantWriteForRead = true;
    if (retryable(result, "reading"))
        return 0;
    if (m_peerEnded && m_state == State::Encrypted) {
        // The peer is gone: there is nobody to send the rest to.
        QMetaObject::invokeMethod(this, &TlsStream::finish, Qt::QueuedConnection);
    }
    return -1;
}

qsizetype TlsStream::readPlain(char *data, qsizetype size)
{
    if (!m_context && m_descriptor.get() >= 0) {
        const ssize_t got = ::recv(m_descriptor.get(), data, static_cast<size_t>(size), 0);
        if (got > 0)
            return got;
        if (got < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        if (got < 0) {
            breakWith(openSslReason("reading"));
            return -1;
        }
        m_peerEnded = true;
        if (m_state == State::Encrypted)
            QMetaObject::invokeMethod(this, &TlsStream::finish, Qt::QueuedConnection);
    }
    return -1;
}

bool TlsStream::writePlain()
{
    while (m_sent < m_outgoing.size()) {
        const ssize_t sent = ::send(m_descriptor.get(), m_outgoing.constData() + m_sent,
            static_cast<size_t>(m_outgoing.size() - m_sent), MSG_NOSIGNAL);
        if (sent > 0) {
            m_sent += sent;
            continue;
        }
        if (sent < 0 && (errno == EAGAIN || errno == EINTR)) {
            m_writeNotifier->setEnabled(true);
            return false;
        }
        breakWith(openSslReason("writing"));
        return false;
    }
    return true;
}

void TlsStream::setReadPaused(bool paused)
{
    if (m_readPaused == paused)
        return;
    m_readPaused = paused;
    updateNotifiers();
    // Bytes OpenSSL decrypted before the pause wake nobody by themselves.
    if (!paused && m_state == State::Encrypted && m_ssl && SSL_has_pending(m_ssl))
        QMetaObject::invokeMethod(
            this,
            [this] {
                if (m_state == State::Encrypted && !m_readPaused)
                    Q_EMIT readyRead();
            },
            Qt::QueuedConnection);
}

void TlsStream::write(QByteArrayView bytes)
{
    if (bytes.isEmpty())
        return;
    if (char *space = appendSpace(bytes.size()))
        std::memcpy(space, bytes.data(), static_cast<size_t>(bytes.size()));
}

char *TlsStream::appendSpace(qsizetype size)
{
    if (m_state == State::Closing || m_state == State::Closed || size <= 0)
        return nullptr;
    if (m_sent > 0 && m_sent == m_outgoing.size()) {
        m_outgoing.resize(0);
        m_sent = 0;
    }
    const qsizetype at = m_outgoing.size();
    m_outgoing.resize(at + size);
    scheduleFlush();
    return m_outgoing.data() + at;
}

void TlsStream::scheduleFlush()
{
    if (m_flushScheduled || m_state == State::Handshaking)
        return;
    m_flushScheduled = true;
    QMetaObject::invokeMethod(this, &TlsStream::flush, Qt::QueuedConnection);
}

void TlsStream::flush()
{
    m_flushScheduled = false;
    if (m_ended || m_broken || m_state == State::Handshaking)
        return;
    if (!m_ssl && !writePlain())
        return;
    while (m_sent < m_outgoing.size()) {
        ERR_clear_error();
        errno = 0;
        const qsizetype left = m_outgoing.size() - m_sent;
        const int result = SSL_write(
            m_ssl, m_outgoing.constData() + m_sent, int(std::min<qsizetype>(left, INT_MAX)));
        if (result > 0) {
            m_sent += result;
            continue;
        }
        if (SSL_get_error(m_ssl, result) == SSL_ERROR_WANT_READ)
            m_wantReadForWrite = true;
        if (!retryable(result, "writing"))
            breakWith(QStringLiteral("the peer closed the connection"));
        return;
    }
    // Drained: the buffer goes, so an idle connection holds none.
    m_outgoing = QByteArray();
    m_sent = 0;
    if (m_state == State::Closing) {
        shutdownTls();
        return;
    }
    Q_EMIT drained();
}

void TlsStream::close(int lingerMs)
{
    if (m_state == State::Closing || m_state == State::Closed)
        return;
    if (m_state == State::Handshaking) {
        abort();
        return;
    }
    m_state = State::Closing;
    m_readPaused = false;
    updateNotifiers();
    m_lingerTimer = new QTimer(this);
    m_lingerTimer->setSingleShot(true);
    connect(m_lingerTimer, &QTimer::timeout, this, &TlsStream::finish);
    m_lingerTimer->start(lingerMs);
    if (m_sent < m_outgoing.size())
        flush();
    else
        shutdownTls();
}

void TlsStream::shutdownTls()
{
    if (m_broken) {
        // After a fatal error OpenSSL must not write again.
        finish();
        return;
    }
    if (!m_ssl) {
        ::shutdown(m_descriptor.get(), SHUT_WR);
        if (m_peerEnded)
            finish();
        return;
    }
    ERR_clear_error();
    errno = 0;
    const int result = SSL_shutdown(m_ssl);
    if (result < 0 && SSL_get_error(m_ssl, result) == SSL_ERROR_WANT_WRITE) {
        m_writeNotifier->setEnabled(true);
        return;
    }
    // Our side is done: the peer reads its end of the stream, and we wait
    // for its own (or the linger) before the descriptor goes.
    ::shutdown(m_descriptor.get(), SHUT_WR);
    if (result == 1 || m_peerEnded)
        finish();
}

void TlsStream::abort()
{
    finish();
}

util::Fd TlsStream::takeDescriptor()
{
    stopWatching();
    if (m_ssl)
        SSL_free(std::exchange(m_ssl, nullptr));
    m_state = State::Closed;
    m_ended = true;
    m_outgoing = QByteArray();
    m_sent = 0;
    return std::move(m_descriptor);
}

void TlsStream::stopWatching()
{
    // Disabled, not deleted: this may run inside their own activated().
    m_readNotifier->setEnabled(false);
    m_writeNotifier->setEnabled(false);
}

void TlsStream::fail(const QString &reason)
{
    if (m_ended)
        return;
    qCDebug(lcNet).noquote() << "TLS connection with" << m_peerAddress.toString()
                             << "failed:" << reason;
    QPointer<TlsStream> self(this);
    Q_EMIT failed(reason);
    if (self)
        finish();
}

void TlsStream::finish()
{
    if (m_ended)
        return;
    m_ended = true;
    m_state = State::Closed;
    if (m_lingerTimer)
        m_lingerTimer->stop();
    stopWatching();
    if (m_ssl)
        SSL_free(std::exchange(m_ssl, nullptr));
    m_descriptor.reset();
    m_outgoing = QByteArray();
    m_sent = 0;
    Q_EMIT ended();
}

} // namespace cloop::net
