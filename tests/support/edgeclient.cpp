#include "support/edgeclient.h"

#include "support/processutil.h"

#include <QDeadlineTimer>
#include <QRandomGenerator>
#include <QSslConfiguration>

#include <arpa/inet.h>
#include <cerrno>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace cloop::testing {

namespace {

sockaddr_in loopback(const QHostAddress &address, quint16 port)
{
    sockaddr_in in {};
    in.sin_family = AF_INET;
    in.sin_port = htons(port);
    in.sin_addr.s_addr = htonl(address.toIPv4Address());
    return in;
}

} // namespace

util::Fd rawConnect(quint16 port, const QHostAddress &source)
{
    util::Fd socket(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!socket.valid())
        return {};
    const sockaddr_in from = loopback(source, 0);
    if (::bind(socket.get(), reinterpret_cast<const sockaddr *>(&from), sizeof(from)) != 0)
        return {};
    const sockaddr_in to = loopback(QHostAddress(QHostAddress::LocalHost), port);
    if (::connect(socket.get(), reinterpret_cast<const sockaddr *>(&to), sizeof(to)) != 0
        && errno != EINPROGRESS)
        return {};
    return socket;
}

bool rawIsConnected(const util::Fd &socket)
{
    tcp_info info {};
    socklen_t length = sizeof(info);
    if (::getsockopt(socket.get(), IPPROTO_TCP, TCP_INFO, &info, &length) != 0)
        return false;
    return info.tcpi_state == TCP_ESTABLISHED || info.tcpi_state == TCP_CLOSE_WAIT;
}

bool rawClosedByPeer(const util::Fd &socket)
{
    char byte = 0;
    const ssize_t n = ::recv(socket.get(), &byte, 1, MSG_DONTWAIT | MSG_PEEK);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

void rawReset(util::Fd &socket)
{
    const linger hard { 1, 0 };
    ::setsockopt(socket.get(), SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
    socket.reset();
}

EdgeClient::EdgeClient(const QHostAddress &source)
    : m_socket(std::make_unique<QSslSocket>())
    , m_source(source)
{
    // No CA list either: loading the system's into every attacker's socket
    // would make the test measure itself.
    QSslConfiguration configuration = QSslConfiguration::defaultConfiguration();
    configuration.setPeerVerifyMode(QSslSocket::VerifyNone);
    configuration.setCaCertificates({});
    m_socket->setSslConfiguration(configuration);
}

bool EdgeClient::connectTls(quint16 port, int timeoutMs)
{
    if (m_source != QHostAddress(QHostAddress::LocalHost) && !m_socket->bind(m_source, 0))
        return false;
    m_socket->connectToHostEncrypted(QStringLiteral("127.0.0.1"), port);
    return waitUntil(
               [this] {
                   return m_socket->isEncrypted()
                       || m_socket->state() == QAbstractSocket::UnconnectedState;
               },
               timeoutMs)
        && m_socket->isEncrypted();
}

bool EdgeClient::isOpen() const
{
    return m_socket->state() == QAbstractSocket::ConnectedState;
}

bool EdgeClient::send(const QByteArray &bytes, int timeoutMs)
{
    if (m_socket->write(bytes) != bytes.size())
        return false;
    const auto flushed = [this] {
        return m_socket->bytesToWrite() == 0 && m_socket->encryptedBytesToWrite() == 0;
    };
    waitUntil([&] { return flushed() || !isOpen(); }, timeoutMs);
    return flushed();
}

QByteArray EdgeClient::readHttpAnswer(int timeoutMs)
{
    QByteArray answer;
    waitUntil(
        [&] {
            answer += m_socket->readAll();
            const qsizetype end = answer.indexOf("\r\n\r\n");
            if (end < 0)
                return !isOpen() && m_socket->bytesAvailable() == 0;
            const qsizetype lengthAt = answer.toLower().indexOf("content-length:");
            if (lengthAt < 0 || lengthAt > end)
                return true;
            const qsizetype lineEnd = answer.indexOf("\r\n", lengthAt);
            const qsizetype length
                = answer.mid(lengthAt + 15, lineEnd - lengthAt - 15).trimmed().toLongLong();
            return answer.size() >= end + 4 + length || !isOpen();
        },
        timeoutMs);
    return answer;
}

int EdgeClient::statusOf(const QByteArray &answer)
{
    if (!answer.startsWith("HTTP/1."))
        return 0;
    return answer.mid(9, 3).toInt();
}

void EdgeClient::beginUpgrade(const QString &path)
{
    QByteArray key(16, Qt::Uninitialized);
    QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(key.data()), 4);
    const QByteArray request = "GET " + path.toLatin1()
        + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
          "Connection: Upgrade\r\nSec-WebSocket-Key: "
        + key.toBase64() + "\r\nSec-WebSocket-Version: 13\r\n\r\n";
    if (m_socket->isEncrypted()) {
        m_socket->write(request);
        return;
    }
    QObject::connect(m_socket.get(), &QSslSocket::encrypted, m_socket.get(),
        [socket = m_socket.get(), request] { socket->write(request); });
}

bool EdgeClient::upgradeAccepted(int timeoutMs)
{
    waitUntil(
        [&] {
            m_pending += m_socket->readAll();
            return m_pending.contains("\r\n\r\n")
                || m_socket->state() == QAbstractSocket::UnconnectedState;
        },
        timeoutMs);
    const qsizetype end = m_pending.indexOf("\r\n\r\n");
    if (end < 0)
        return false;
    const int status = statusOf(m_pending);
    m_pending = m_pending.mid(end + 4);
    return status == 101;
}

bool EdgeClient::upgradeWebSocket(const QString &path, int timeoutMs)
{
    beginUpgrade(path);
    return upgradeAccepted(timeoutMs);
}

bool EdgeClient::sendFrame(int opcode, const QByteArray &payload)
{
    QByteArray frame;
    frame.append(static_cast<char>(0x80 | opcode));
    const quint32 mask = QRandomGenerator::global()->generate();
    if (payload.size() < 126) {
        frame.append(static_cast<char>(0x80 | payload.size()));
    } else if (payload.size() < 65536) {
        frame.append(static_cast<char>(0x80 | 126));
        frame.append(static_cast<char>(payload.size() >> 8));
        frame.append(static_cast<char>(payload.size() & 0xff));
    } else {
        frame.append(static_cast<char>(0x80 | 127));
        for (int shift = 56; shift >= 0; shift -= 8)
            frame.append(static_cast<char>((quint64(payload.size()) >> shift) & 0xff));
    }
    const char maskBytes[4] = { char(mask >> 24), char(mask >> 16), char(mask >> 8), char(mask) };
    frame.append(maskBytes, 4);
    for (qsizetype i = 0; i < payload.size(); ++i)
        frame.append(static_cast<char>(payload[i] ^ maskBytes[i % 4]));
    return m_socket->write(frame) == frame.size();
}

QList<std::pair<int, QByteArray>> EdgeClient::readFrames(int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    waitUntil([&] { return !isOpen(); }, timeoutMs);
    m_pending += m_socket->readAll();
    QList<std::pair<int, QByteArray>> frames;
    qsizetype at = 0;
    while (m_pending.size() - at >= 2) {
        const int opcode = static_cast<uchar>(m_pending[at]) & 0x0f;
        quint64 length = static_cast<uchar>(m_pending[at + 1]) & 0x7f;
        qsizetype header = 2;
        if (length == 126) {
            if (m_pending.size() - at < 4)
                break;
            length = (quint64(uchar(m_pending[at + 2])) << 8) | uchar(m_pending[at + 3]);
            header = 4;
        } else if (length == 127) {
            if (m_pending.size() - at < 10)
                break;
            length = 0;
            for (int i = 0; i < 8; ++i)
                length = (length << 8) | uchar(m_pending[at + 2 + i]);
            header = 10;
        }
        if (quint64(m_pending.size() - at - header) < length)
            break;
        frames.append({ opcode, m_pending.mid(at + header, static_cast<qsizetype>(length)) });
        at += header + static_cast<qsizetype>(length);
    }
    m_pending.remove(0, at);
    return frames;
}

bool EdgeClient::waitClosed(int timeoutMs)
{
    return waitUntil(
        [this] {
            m_pending += m_socket->readAll();
            return !isOpen();
        },
        timeoutMs);
}

} // namespace cloop::testing
