#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <memory>
#include <optional>

// A client's side of the WebSocket upgrade (RFC 6455 4.1): the request it
// sends, and a bounded reader of the server's answer.
namespace cloop::net::websocket {

// 16 random bytes, base64: the Sec-WebSocket-Key of one upgrade.
QByteArray newClientKey();

// The GET that asks `host` (as the Host header names it, with its port
// when not the scheme's) to upgrade `path` to a WebSocket.
QByteArray upgradeRequest(QByteArrayView host, QByteArrayView path, QByteArrayView clientKey);

// Reads the server's answer to an upgrade request, over Debian's
// http-parser: a 101 with the headers RFC 6455 asks for and the accept key
// that answers ours, or the status and words of a refusal. Bounded: a head
// over 8 KiB or a refusal's body past 2 KiB is not buffered further.
class UpgradeResponseReader final
{
public:
    enum class Step
    {
        NeedMore,
        // The WebSocket is open; bytes after `consumed` are its first.
        Upgraded,
        // The server answered with something else: status() and problem().
        Refused,
        // Not an answer to an upgrade: problem() says why.
        Malformed,
    };

    struct Progress
    {
        Step step = Step::NeedMore;
        qsizetype consumed = 0; // of the bytes given to this feed()
    };

    explicit UpgradeResponseReader(QByteArray clientKey);
    ~UpgradeResponseReader();
    UpgradeResponseReader(const UpgradeResponseReader &) = delete;
    UpgradeResponseReader &operator=(const UpgradeResponseReader &) = delete;

    Progress feed(QByteArrayView bytes);
    // The connection ended: a refusal read so far is whole; anything else
    // was cut short.
    Progress finish();

    int status() const { return m_status; }
    // For a person: why the upgrade did not happen.
    const QString &problem() const { return m_problem; }

private:
    struct Parser;
    Progress done(Step step, qsizetype consumed);
    Progress malformed(const QString &why, qsizetype consumed);
    Step checkUpgrade();
    QString refusal() const;

    std::unique_ptr<Parser> m_parser;
    QByteArray m_expectedAccept;
    int m_status = 0;
    QByteArray m_statusText;
    QByteArray m_upgrade;
    QByteArray m_connection;
    QByteArray m_accept;
    QByteArray m_retryAfter;
    QByteArray m_field; // the header field whose value is arriving (lower case)
    bool m_inValue = false;
    int m_headers = 0;
    qsizetype m_headBytes = 0;
    QByteArray m_headTail; // the last bytes of the head so far, to see how it ends
    QByteArray m_body; // a refusal's, cut at its limit
    bool m_headDone = false;
    bool m_messageDone = false;
    std::optional<Step> m_outcome;
    QString m_problem;
};

} // namespace cloop::net::websocket
