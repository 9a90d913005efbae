#pragma once

// A real `cloop hub serve` on 127.0.0.1, in a data folder and HOME of its
// own, plus the `cloop` command line pointed at it through CLOOP_HUB_DATA.

#include "support/processutil.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>
#include <QUrl>

#include <memory>

namespace cloop::testing {

// What `cloop forward enroll --json` answered.
struct Enrollment
{
    bool ok = false;
    QString error;
    qint64 id = 0;
    QString name;
    QString bundle;
    QString command;
    QJsonObject answer;
};

class HubProcess
{
public:
    HubProcess();
    ~HubProcess(); // kills the hub it started, by PID
    HubProcess(const HubProcess &) = delete;
    HubProcess &operator=(const HubProcess &) = delete;

    // `cloop hub tls-init --data DIR`; once, before the first start().
    bool initialise();
    // More options for `cloop hub serve`, for every later start.
    void setServeArguments(const QStringList &arguments) { m_serveArguments = arguments; }
    // Later starts run under this open-files limit, soft and hard (0: as inherited).
    void setOpenFilesLimit(int limit) { m_openFilesLimit = limit; }
    // First start listens on port 0 and learns the port from DIR/cli.json;
    // later starts reuse that port. Returns once /api/health answers.
    bool start();
    // Starts a hub that ran before again on its port, without waiting for
    // /api/health (a benchmark times that itself); false when it could not
    // be launched.
    bool relaunch();
    // SIGKILL by PID, then reaps it.
    void kill();
    // SIGTERM by PID and waits; the exit code, or -1 if it had to be killed.
    int stop();
    bool isRunning() const;
    qint64 pid() const;

    QString dataDir() const { return m_dataDir; }
    QString homeDir() const { return m_homeDir; }
    QString databasePath() const { return m_dataDir + QLatin1String("/hub.db"); }
    quint16 port() const { return m_port; }
    // What tls-init printed as the key pin.
    QString tlsInitPin() const { return m_tlsInitPin; }
    // DIR/cli.json: {url, pin, token}.
    QJsonObject localAccess() const;
    QString pin() const { return localAccess().value(QLatin1String("pin")).toString(); }
    // Where it serves GET /metrics (plain HTTP on loopback).
    QUrl metricsUrl() const
    {
        return QUrl(localAccess().value(QLatin1String("metrics")).toString());
    }
    QString adminToken() const { return localAccess().value(QLatin1String("token")).toString(); }
    QUrl apiUrl(const QString &path) const;

    // `cloop ARGS` with CLOOP_HUB_DATA=DIR and the isolated HOME.
    CliResult cli(const QStringList &arguments, int timeoutMs = kLongWaitMs);
    // That environment, for commands a test runs itself (many at once).
    QProcessEnvironment cliEnvironment() const;
    // The same as whoever holds `token` ($CLOOP_TOKEN).
    CliResult cliAs(const QString &token, const QStringList &arguments);
    // Adds `user` with `role` in `project` and returns a token of theirs;
    // empty when a step failed (the transcript says which).
    QString tokenOfNewUser(const QString &user, const QString &project, const QString &role);
    // The same for a user with no role in any project.
    QString tokenOfNewUser(const QString &user);
    // A new API token of an existing user.
    QString newToken(const QString &user);
    // Same, parsing stdout as JSON; undefined (and noted in the transcript)
    // when the command failed or printed something else.
    QJsonValue cliJson(const QStringList &arguments);
    // A listing's --json: the array under "items"; empty (and noted in the
    // transcript) when the command failed or printed no such envelope.
    QJsonArray cliItems(const QStringList &arguments);

    // `cloop forward bind ID --project PROJECT --ttl TTL [EXTRA...] --json`:
    // the binding's id, 0 when it failed (the transcript says why).
    qint64 bind(qint64 forwarderId, const QString &project,
        const QString &ttl = QStringLiteral("1h"), const QStringList &extra = {});

    // `cloop forward enroll --name NAME DEVICE... --json`.
    Enrollment enroll(const QString &name,
        const QStringList &device = { QStringLiteral("--usb"), QStringLiteral("1050:0407") },
        const QStringList &extra = {});
    // One record of `cloop forward list --json --all`, empty when absent.
    QJsonObject forwarder(qint64 id);
    bool forwarderConnected(qint64 id);
    // GET /api/forwarders/traffic: the forwarder's `series` ("to_agent_bytes",
    // "to_agent_frames", …) added up over the window; 0 when the forwarder is
    // not listed (nothing moved), -1 when it is listed without that series.
    qint64 trafficTotal(qint64 forwarderId, QLatin1StringView series);
    // The forwarder's item of that answer; empty when it is not listed.
    QJsonObject trafficOf(qint64 forwarderId);

    QString lastError() const { return m_lastError; }
    // The hub's stdout+stderr over all its starts.
    QString log() const { return QString::fromUtf8(m_log); }
    // The latest CLI commands and what they printed.
    QString transcript() const { return m_transcript.join(QLatin1Char('\n')); }

private:
    CliResult runCli(const QStringList &arguments, const QString &token, int timeoutMs);
    bool launch();
    quint16 portFromLocalAccess() const;
    bool answersHealth(quint16 port) const;
    void fail(const QString &message);

    QTemporaryDir m_root;
    QString m_dataDir;
    QString m_homeDir;
    QString m_tlsInitPin;
    quint16 m_port = 0;
    int m_starts = 0;
    qsizetype m_logMarkOfThisStart = 0;
    QByteArray m_log;
    QStringList m_transcript;
    QString m_lastError;
    std::unique_ptr<QProcess> m_process;
    QStringList m_serveArguments;
    int m_openFilesLimit = 0;
};

} // namespace cloop::testing
