#include "hub/executor/ownexecutorcredential.h"

#include "common/api/hubeventname.h"

#include "common/identity/credentialfile.h"
#include "common/identity/enrollmentbundle.h"
#include "common/logging.h"
#include "hub/domain/eventbus.h"
#include "hub/executor/ownexecutor.h"
#include "hub/hubcore.h"
#include "hub/storage/executorstore.h"

namespace cloop::hub {

namespace {
// Long enough for a hub on a slow disk to reach its own port; the token is
// spent within a second in practice.
constexpr std::chrono::seconds kTokenLifetime { 600 };
constexpr QLatin1StringView kActor { "hub" };
} // namespace

Result<QString> OwnExecutorCredential::prepare(const QUrl &hub, const QString &pin)
{
    identity::CredentialFile file(m_path);
    auto loaded = file.load();
    if (!loaded)
        return Error::make(QStringLiteral("own_executor_credential"),
            QStringLiteral(
                "the hub's own executor cannot use %1 (%2); remove the file to enroll the "
                "executor anew")
                .arg(file.path(), loaded.error().message),
            true);
    ExecutorStore &store = m_core.stores().executors;
    if (loaded->credential) {
        auto record = store.authenticate(loaded->credential->credential);
        if (record) {
            // The hub may have moved to another port or key since: the saved
            // credential follows the hub as it is now.
            if (loaded->credential->servers() != QList<QUrl> { hub }
                || loaded->credential->pin != pin) {
                identity::DaemonCredential current = *loaded->credential;
                // It serves this hub alone: it ends with it.
                current.setServers({ hub });
                current.pin = pin;
                if (Status saved = file.save(current); !saved)
                    return saved.error();
            }
            return QString();
        }
        if (record.error().is(ErrorCode::Revoked))
            return Error::make(QStringLiteral("own_executor_revoked"),
                QStringLiteral(
                    "the hub's own executor %1 was revoked, so it stays off; to enroll it "
                    "anew, remove %2")
                    .arg(loaded->credential->id)
                    .arg(file.path()),
                true);
        if (!record.error().is(ErrorCode::UnknownCredential))
            return record.error();
        // A credential this database never issued (the database was replaced):
        // enrolled anew below, and the file replaced once that succeeds.
    }

    // Names are unique among active executors: an earlier "hub" whose
    // credential file is gone cannot connect any more and makes way.
    auto active = store.list(false);
    if (!active)
        return active.error();
    for (const ExecutorRecord &stale : std::as_const(*active)) {
        if (stale.name != OwnExecutor::kName)
            continue;
        const QString reason
            = QStringLiteral("the hub's own executor was enrolled anew: its credential file was "
                             "missing or unknown");
        auto revoked = store.revoke(stale.id, kActor, reason);
        if (!revoked)
            return revoked.error();
        qCWarning(lcHub).noquote() << "revoked executor" << stale.id << "-" << reason;
        m_core.events().publish(HubEvent { QString(api::hubeventname::kExecutorRevoked),
            { { QStringLiteral("id"), stale.id }, { QStringLiteral("name"), stale.name },
                { QStringLiteral("by"), kActor }, { QStringLiteral("reason"), reason } },
            std::nullopt });
    }
    auto enrollment = store.enroll(OwnExecutor::kName, kActor, kTokenLifetime);
    if (!enrollment)
        return enrollment.error();
    m_core.events().publish(HubEvent { QString(api::hubeventname::kExecutorEnrolled),
        { { QStringLiteral("id"), enrollment->executor.id },
            { QStringLiteral("name"), enrollment->executor.name } },
        std::nullopt });
    identity::EnrollmentBundle bundle;
    bundle.kind = identity::EnrollmentBundle::Kind::Executor;
    bundle.hub = hub;
    bundle.token = enrollment->token;
    bundle.pins = pin;
    return bundle.encode();
}

} // namespace cloop::hub
