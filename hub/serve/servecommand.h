#pragma once

#include "common/util/commandline.h"
#include "hub/executor/ownexecutor.h"
#include "hub/hub.h"
#include "hub/serve/databaseoption.h"

#include <QCommandLineOption>
#include <QStringList>

#include <optional>

namespace cloop::util {
class CommandLine;
}

namespace cloop::hub {

// What `serve` was told: the hub's options, and whether the hub runs
// projects' runs itself too (its own executor, wired in here and not in
// the hub library, which knows nothing of sandboxes).
struct ServeSettings
{
    HubOptions hub;
    std::optional<OwnExecutor::Options> ownExecutor;
};

// `cloop-hub serve` / `cloop hub serve`.
class ServeCommand
{
public:
    explicit ServeCommand(QString name);

    int run(const QStringList &arguments);

private:
    void addOptions(util::CommandLine &commandLine) const;
    Result<ServeSettings> settings(const util::CommandLine &commandLine) const;
    Result<HubOptions> hubOptions(const util::CommandLine &commandLine) const;
    Status clusterOptions(const util::CommandLine &commandLine, HubOptions &options) const;
    Status edgeOptions(const util::CommandLine &commandLine, HubOptions &options) const;
    int serve(const ServeSettings &settings) const;

    QString m_name;
    QCommandLineOption m_data;
    DatabaseOptions m_database;
    QCommandLineOption m_listen;
    QCommandLineOption m_metricsListen;
    QCommandLineOption m_cert;
    QCommandLineOption m_key;
    QCommandLineOption m_publicUrl;
    QCommandLineOption m_requestTtl;
    QCommandLineOption m_lostAfter;
    QCommandLineOption m_trafficStep;
    QCommandLineOption m_memberLease;
    QCommandLineOption m_peerListen;
    QCommandLineOption m_peerUrl;
    QCommandLineOption m_clusterPoll;
    QCommandLineOption m_ownExecutor;
    QCommandLineOption m_ownExecutorMax;
    QCommandLineOption m_maxUnauthenticated;
    QCommandLineOption m_maxPerSource;
    QCommandLineOption m_connectionRate;
    QCommandLineOption m_preAuthTimeout;
    QCommandLineOption m_runLogCap;
    QCommandLineOption m_runLogBudget;
    QCommandLineOption m_relayThreads;
};

// The option every hub command takes, and the folder it names (the
// default one when it is not given).
QCommandLineOption dataDirOption();
QString dataDirOf(const util::CommandLine &commandLine, const QCommandLineOption &data);
// Files root writes into the hub's folder stay the hub's user's.
void giveToFolderOwner(const QString &dataDir, const QStringList &paths);

} // namespace cloop::hub
