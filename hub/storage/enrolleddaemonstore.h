#pragma once

#include "common/result.h"
#include "hub/storage/credentialledger.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QSet>
#include <QString>
#include <QVariant>

#include <chrono>
#include <utility>

namespace cloop::hub {

class Database;
class Rows;

// What every enrolled daemon's record holds, forwarder or executor agent.
struct EnrolledDaemonRecord
{
    qint64 id = 0;
    QString name;
    QDateTime createdAt;
    QString createdBy;
    QDateTime enrolledAt; // invalid until the token was redeemed
    QDateTime revokedAt; // invalid while active
    QString revokedBy;
    QDateTime lastSeenAt;
    // What the daemon last said about itself in its hello: its build's
    // version, protocol and the update channel its device follows.
    QString software;
    int protocol = 0;
    QString channel;

    bool isRevoked() const { return revokedAt.isValid(); }
};

// Forwarders and executor agents are enrolled the same way: a named row, a
// one-time token redeemed for a long-lived credential, a revocation that
// voids both, a time last seen. This is that shared part, over the tables
// `DaemonTables` names; each store adds only what is its own (a forwarder's
// device, an executor's report about itself) by reading its own columns.
// Secrets are stored as SHA-256 hashes only.
template <typename Record> class EnrolledDaemonStore
{
public:
    virtual ~EnrolledDaemonStore() = default;

    // A live credential of a daemon that is not revoked.
    Result<Record> authenticate(const QString &credential);
    Result<Record> find(qint64 id);
    Result<QList<Record>> list(bool includeRevoked = true);
    // Every revoked daemon of the kind, by id: few, since a revoked daemon
    // never connects again; what a member checks its sessions against.
    Result<QSet<qint64>> revokedIds();
    // Voids the daemon's credentials and unredeemed tokens with it.
    Result<Record> revoke(qint64 id, const QString &actor, const QString &reason);
    Status touchLastSeen(qint64 id);
    Status recordHello(qint64 id, const QString &software, int protocol, const QString &channel);

    struct Enrolled
    {
        Record record;
        CredentialLedger::IssuedToken token;
    };
    // A new one-time token for a daemon that has not redeemed its first
    // (the bundle was lost, leaked or expired); every earlier unredeemed
    // token stops working in the same transaction.
    Result<Enrolled> reissueToken(qint64 id, const QString &actor, std::chrono::seconds tokenTtl);

protected:
    // `ownColumns`: the columns the kind adds to the shared ones, as
    // readOwnColumns() reads them ("device_spec").
    EnrolledDaemonStore(Database &db, const DaemonTables &tables, QLatin1StringView ownColumns)
        : m_db(db)
        , m_tables(tables)
        , m_ownColumns(ownColumns)
    { }

    // Reads the kind's own columns, which start at `first`.
    virtual Status readOwnColumns(const Rows &row, int first, Record &record) const = 0;

    // A new daemon of a name no active one has, with the kind's own columns
    // (name -> value) and audit details, and its one-time token.
    Result<Enrolled> enroll(const QString &name, const QString &actor,
        std::chrono::seconds tokenTtl, const QList<std::pair<QString, QVariant>> &ownValues,
        const QJsonObject &auditDetails);
    // Single use: of two concurrent redemptions exactly one succeeds. The
    // record and the plaintext credential, sent once to the daemon.
    Result<std::pair<Record, QString>> redeemToken(const QString &token);
    // The records matching `where` (SQL over the daemon's table), by id.
    Result<QList<Record>> select(const QString &where, const QVariantList &binds);

    Database &m_db;

private:
    Result<Record> read(const Rows &row) const;
    // The daemon's row, under a name no active daemon of the kind has.
    Result<qint64> insert(const QString &name, const QString &actor,
        const QList<std::pair<QString, QVariant>> &ownValues);
    CredentialLedger ledger() const { return CredentialLedger(m_db, m_tables); }

    const DaemonTables &m_tables;
    QLatin1StringView m_ownColumns;
};

} // namespace cloop::hub
