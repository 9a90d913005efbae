#pragma once

#include "common/result.h"

#include <QObject>
#include <QPointer>
#include <QSslSocket>
#include <QTimer>
#include <QUrl>

#include <functional>

namespace cloop::net {

// The first sign-in to a hub whose key nobody has pinned yet (the
// dashboard's, `cloop login`'s): completes a TLS handshake with it, reads
// the key it presents and hangs up without sending a byte, so the person can
// compare the pin with what the hub's administrator reads from `cloop hub
// pin` before any token is sent.
class KeyProbe final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(KeyProbe)

public:
    using Callback = std::function<void(const Result<QString> &pin)>;

    explicit KeyProbe(QObject *parent = nullptr);

    // One probe at a time; `done` runs once, unless `context` is gone.
    void probe(const QUrl &hub, QObject *context, Callback done);

private:
    void finish(const Result<QString> &pin);

    QSslSocket m_socket;
    QTimer m_deadline;
    QPointer<QObject> m_context;
    Callback m_done;
};

} // namespace cloop::net
