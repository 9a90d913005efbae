#pragma once

#include "common/util/fd.h"

#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QString>

class QSocketNotifier;

namespace cloop::net {

// Opens one TCP connection to host:port without blocking: a name is looked
// up first (on Qt's resolver threads), then each of its addresses is tried
// in turn until one accepts. What it hands over is a connected descriptor.
class TcpDial final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TcpDial)

public:
    TcpDial(QString host, quint16 port, QObject *parent = nullptr);
    ~TcpDial() override;

    // connected() or failed() follows, never within this call.
    void start();
    // After connected(): the descriptor, non-blocking.
    util::Fd takeDescriptor() { return std::move(m_descriptor); }

Q_SIGNALS:
    void connected();
    void failed(const QString &reason);

private:
    void tryNextAddress();
    void onWritable();
    void giveUp(const QString &reason);

    QString m_host;
    quint16 m_port;
    QList<QHostAddress> m_addresses;
    qsizetype m_next = 0;
    int m_lookupId = -1;
    util::Fd m_descriptor;
    QSocketNotifier *m_notifier = nullptr;
    QString m_lastError;
};

} // namespace cloop::net
