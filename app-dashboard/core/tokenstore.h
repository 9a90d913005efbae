#pragma once

#include "common/result.h"

#include <QObject>
#include <QPointer>

#include <functional>

namespace cloop::dashboard {

// API tokens in the desktop's keyring (QtKeychain), one per hub address,
// never anywhere else: where no keyring is reachable, saving fails with a
// reason the person is shown, and they sign in again next time.
class TokenStore final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TokenStore)

public:
    explicit TokenStore(
        QString service = QStringLiteral("cloop-dashboard"), QObject *parent = nullptr);

    void load(
        const QString &hub, QObject *context, std::function<void(const Result<QString> &)> done);
    void save(const QString &hub, const QString &token, QObject *context,
        std::function<void(const Status &)> done);
    // Forgetting what is not there succeeds.
    void forget(const QString &hub, QObject *context, std::function<void(const Status &)> done);

private:
    QString m_service;
};

} // namespace cloop::dashboard
