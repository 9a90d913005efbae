#include "app-dashboard/core/tokenstore.h"

#include <qt6keychain/keychain.h>

namespace cloop::dashboard {

namespace {

Error keyringError(const QKeychain::Job *job)
{
    // What the backend says, when it says something: QtKeychain's own
    // fallback "Unknown error" and D-Bus's "Could not connect: Connection
    // refused" read as if the hub had refused, so the words always name the
    // keyring first.
    const QString detail = job->errorString().trimmed();
    const QString why = detail.isEmpty() || detail == QLatin1String("Unknown error")
        ? QString()
        : QStringLiteral(" (%1)").arg(detail);
    switch (job->error()) {
    case QKeychain::EntryNotFound:
        return Error::make(QStringLiteral("keyring_not_found"),
            TokenStore::tr("the keyring holds no token for this hub"));
    case QKeychain::NoBackendAvailable:
        return Error::make(QStringLiteral("keyring_unavailable"),
            TokenStore::tr("no keyring runs in this desktop session%1").arg(why));
    case QKeychain::AccessDeniedByUser:
    case QKeychain::AccessDenied:
        return Error::make(QStringLiteral("keyring_denied"),
            TokenStore::tr("the desktop's keyring refused access%1").arg(why));
    default:
        return Error::make(QStringLiteral("keyring_error"),
            TokenStore::tr("the desktop's keyring could not be reached%1").arg(why));
    }
}

// The job deletes itself once finished; a context that went away meanwhile
// is simply not told.
template <typename JobType, typename Callback>
void start(JobType *job, const QString &hub, QObject *context, Callback done)
{
    job->setAutoDelete(true);
    job->setInsecureFallback(false);
    job->setKey(hub);
    QObject::connect(job, &QKeychain::Job::finished, context, std::move(done));
    job->start();
}

} // namespace

TokenStore::TokenStore(QString service, QObject *parent)
    : QObject(parent)
    , m_service(std::move(service))
{ }

void TokenStore::load(
    const QString &hub, QObject *context, std::function<void(const Result<QString> &)> done)
{
    start(new QKeychain::ReadPasswordJob(m_service), hub, context,
        [done = std::move(done)](QKeychain::Job *job) {
            if (job->error() != QKeychain::NoError)
                done(keyringError(job));
            else
                done(static_cast<QKeychain::ReadPasswordJob *>(job)->textData());
        });
}

void TokenStore::save(const QString &hub, const QString &token, QObject *context,
    std::function<void(const Status &)> done)
{
    auto *job = new QKeychain::WritePasswordJob(m_service);
    job->setTextData(token);
    start(job, hub, context, [done = std::move(done)](QKeychain::Job *finished) {
        done(finished->error() == QKeychain::NoError ? Status() : Status(keyringError(finished)));
    });
}

void TokenStore::forget(
    const QString &hub, QObject *context, std::function<void(const Status &)> done)
{
    start(new QKeychain::DeletePasswordJob(m_service), hub, context,
        [done = std::move(done)](QKeychain::Job *job) {
            const bool gone
                = job->error() == QKeychain::NoError || job->error() == QKeychain::EntryNotFound;
            done(gone ? Status() : Status(keyringError(job)));
        });
}

} // namespace cloop::dashboard
