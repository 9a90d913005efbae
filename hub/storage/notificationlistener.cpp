#include "hub/storage/notificationlistener.h"

#include <QSqlDatabase>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>

using namespace Qt::StringLiterals;

namespace cloop::hub {

NotificationListener::NotificationListener(
    std::unique_ptr<Database::SideConnection> connection, QString channel, QObject *parent)
    : QObject(parent)
    , m_connection(std::move(connection))
    , m_channel(std::move(channel))
{ }

NotificationListener::~NotificationListener()
{
    close();
}

Result<std::unique_ptr<NotificationListener>> NotificationListener::open(
    const Database &database, const QString &channel, QObject *parent)
{
    auto side = database.addSideConnection(u"listen"_s);
    if (!side)
        return side.error();
    std::unique_ptr<NotificationListener> listener(
        new NotificationListener(std::move(*side), channel, parent));
    if (Status opened = listener->reopen(); !opened)
        return opened.error();
    return listener;
}

Status NotificationListener::reopen()
{
    close();
    QSqlDatabase db = QSqlDatabase::database(m_connection->connectionName, false);
    if (!db.open())
        return Error::make(QString(kDatabaseUnreachable),
            u"cannot open the connection that listens for the cluster's events: %1"_s.arg(
                db.lastError().databaseText().simplified()));
    return subscribe();
}

Status NotificationListener::subscribe()
{
    QSqlDatabase db = QSqlDatabase::database(m_connection->connectionName, false);
    QSqlDriver *driver = db.driver();
    if (!driver->subscribeToNotification(m_channel))
        return Error::make(QString(kDatabaseUnreachable),
            u"cannot listen for the cluster's events: %1"_s.arg(
                driver->lastError().databaseText().simplified()));
    connect(driver, &QSqlDriver::notification, this,
        [this](const QString &name, QSqlDriver::NotificationSource, const QVariant &) {
            if (name == m_channel)
                Q_EMIT notified();
        });
    m_listening = true;
    return {};
}

Status NotificationListener::check()
{
    QSqlDatabase db = QSqlDatabase::database(m_connection->connectionName, false);
    QSqlQuery q(db);
    if (!m_listening || !q.exec(u"SELECT 1"_s)) {
        const QString why
            = m_listening ? q.lastError().databaseText().simplified() : u"it is not listening"_s;
        q.finish();
        close();
        return Error::make(QString(kDatabaseUnreachable),
            u"the connection that listens for the cluster's events failed: %1"_s.arg(why));
    }
    q.finish();
    return {};
}

void NotificationListener::close()
{
    QSqlDatabase db = QSqlDatabase::database(m_connection->connectionName, false);
    if (QSqlDriver *driver = db.driver()) {
        driver->disconnect(this);
        if (db.isOpen() && m_listening)
            driver->unsubscribeFromNotification(m_channel);
    }
    if (db.isOpen())
        db.close();
    m_listening = false;
}

} // namespace cloop::hub
