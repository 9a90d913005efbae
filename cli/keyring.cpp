#include "cli/keyring.h"

#include "common/util/duration.h"

#include <QEventLoop>
#include <QTimer>

#include <qt6keychain/keychain.h>

namespace cloop::cli {

namespace {

struct JobOutcome
{
    bool finished = false;
    QKeychain::Error error = QKeychain::NoError;
    QString errorString;
    QString text;
};

// Starts the job and waits for it. The job deletes itself when it finishes;
// one that times out is left to finish (and delete itself) on its own, so
// that a late answer from the keyring never touches freed memory. The
// connection dies with the loop, so a late answer writes nothing either.
JobOutcome runJob(QKeychain::Job *job, std::chrono::milliseconds timeout)
{
    job->setAutoDelete(true);
    job->setInsecureFallback(false);
    JobOutcome outcome;
    QEventLoop loop;
    QObject::connect(job, &QKeychain::Job::finished, &loop, [&](QKeychain::Job *done) {
        outcome.finished = true;
        outcome.error = done->error();
        outcome.errorString = done->errorString();
        if (auto *reader = qobject_cast<QKeychain::ReadPasswordJob *>(done))
            outcome.text = reader->textData();
        loop.quit();
    });
    QTimer::singleShot(timeout, &loop, &QEventLoop::quit);
    job->start();
    if (!outcome.finished)
        loop.exec();
    return outcome;
}

Error keyringError(const JobOutcome &outcome, std::chrono::milliseconds timeout)
{
    if (!outcome.finished)
        return Error::make(QStringLiteral("keyring_timeout"),
            QStringLiteral("the keyring did not answer within %1")
                .arg(util::formatMilliseconds(timeout.count())));
    if (outcome.error == QKeychain::EntryNotFound)
        return Error::make(
            QStringLiteral("keyring_not_found"), QStringLiteral("the keyring has no such entry"));
    if (outcome.error == QKeychain::NoBackendAvailable)
        return Error::make(QStringLiteral("keyring_unavailable"),
            QStringLiteral("no keyring is reachable (%1)").arg(outcome.errorString));
    return Error::make(QStringLiteral("keyring_error"),
        QStringLiteral("the keyring is not usable: %1").arg(outcome.errorString));
}

} // namespace

Status Keyring::write(const QString &key, const QString &secret) const
{
    auto *job = new QKeychain::WritePasswordJob(m_service);
    job->setKey(key);
    job->setTextData(secret);
    const JobOutcome outcome = runJob(job, m_timeout);
    if (!outcome.finished || outcome.error != QKeychain::NoError)
        return keyringError(outcome, m_timeout);
    return {};
}

Result<QString> Keyring::read(const QString &key) const
{
    auto *job = new QKeychain::ReadPasswordJob(m_service);
    job->setKey(key);
    const JobOutcome outcome = runJob(job, m_timeout);
    if (!outcome.finished || outcome.error != QKeychain::NoError)
        return keyringError(outcome, m_timeout);
    return outcome.text;
}

Status Keyring::remove(const QString &key) const
{
    auto *job = new QKeychain::DeletePasswordJob(m_service);
    job->setKey(key);
    const JobOutcome outcome = runJob(job, m_timeout);
    if (outcome.finished && outcome.error == QKeychain::EntryNotFound)
        return {};
    if (!outcome.finished || outcome.error != QKeychain::NoError)
        return keyringError(outcome, m_timeout);
    return {};
}

} // namespace cloop::cli
