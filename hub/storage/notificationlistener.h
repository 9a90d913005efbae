#pragma once

#include "common/result.h"
#include "hub/storage/database.h"

#include <QObject>

#include <memory>

namespace cloop::hub {

// A connection of its own that LISTENs on one PostgreSQL channel and says
// when a notification came. A wake-up only: what it announces is read from
// a table, and a notification missed while the connection was down is made
// up by that read, never replayed. Qt's driver neither reconnects nor
// notices a dropped connection by itself, so the owner checks it now and
// then and reopens it.
class NotificationListener final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(NotificationListener)

public:
    static Result<std::unique_ptr<NotificationListener>> open(
        const Database &database, const QString &channel, QObject *parent = nullptr);
    ~NotificationListener() override;

    bool isListening() const { return m_listening; }
    // A cheap statement on the connection; on failure it is closed, so the
    // next reopen() starts afresh.
    Status check();
    // Opens the connection again and subscribes.
    Status reopen();

Q_SIGNALS:
    void notified();

private:
    NotificationListener(
        std::unique_ptr<Database::SideConnection> connection, QString channel, QObject *parent);
    Status subscribe();
    void close();

    std::unique_ptr<Database::SideConnection> m_connection;
    QString m_channel;
    bool m_listening = false;
};

} // namespace cloop::hub
