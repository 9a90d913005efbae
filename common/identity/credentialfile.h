#pragma once

#include "common/net/spkipin.h"
#include "common/protocol/devicespec.h"
#include "common/result.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

#include <optional>

namespace cloop::identity {

// What an enrolled daemon keeps: ~/.cloop/forwarder.json or ~/.cloop/agent.json.
// The hub URLs are "servers", in the order they are tried, and "server", the
// first of them, which is all a file held before hubs formed clusters.
struct DaemonCredential
{
    QUrl server; // the first hub URL
    QList<QUrl> moreServers; // further members of the hub's cluster, tried after `server`
    qint64 id = 0;
    QString name;
    QString credential;
    QString pin; // "sha256:...,sha256:..." or empty
    QDateTime enrolledAt;
    QString caFile; // optional private CA, kept so reconnects trust the same way
    // A forwarder's: the one device it was enrolled for. Absent in files
    // written before forwarders recorded it (and in an agent's).
    std::optional<protocol::DeviceSpec> device;
    QJsonObject extra; // role-specific settings (an agent's work root)

    // Every hub URL in the order the daemon tries them: `server`, then `moreServers`.
    QList<QUrl> servers() const;
    void setServers(const QList<QUrl> &urls);

    QJsonObject toJson() const;
};

struct LoadedCredential
{
    // Empty when the daemon has not been enrolled yet (no file).
    std::optional<DaemonCredential> credential;
    // Problems that do not stop the daemon, such as a mode wider than 0600.
    QStringList warnings;
};

class CredentialFile
{
public:
    explicit CredentialFile(QString path)
        : m_path(std::move(path))
    { }

    static QString defaultPath(const QString &fileName); // ~/.cloop/<fileName>

    const QString &path() const { return m_path; }
    // "Not enrolled yet" is a value, a broken file is an error naming the
    // problem. An empty pin is such a problem ("credential_unpinned") unless
    // the daemon's operator chose CA-only trust.
    Result<LoadedCredential> load(net::PinRequirement pin = net::PinRequirement::Required) const;
    Status save(const DaemonCredential &credential) const;
    // For a daemon whose workloads share its machine: the file, if there is
    // one, must belong to this process's user ("credential_file_foreign"),
    // and a mode wider than 0600 is narrowed (logged).
    Status keepPrivate() const;

private:
    QString m_path;
};

} // namespace cloop::identity
