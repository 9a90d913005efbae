#include "support/hubprocess.h"

#include "support/pinnedhttp.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include <csignal>

namespace cloop::testing {

namespace {
constexpr qsizetype kTranscriptEntries = 30;
constexpr int kHealthProbeMs = 2'000;
} // namespace

HubProcess::HubProcess()
    : m_root(QDir::tempPath() + QLatin1String("/cloop-integ-hub-XXXXXX"))
{
    m_dataDir = m_root.filePath(QStringLiteral("data"));
    m_homeDir = m_root.filePath(QStringLiteral("home"));
    QDir().mkpath(m_homeDir);
}

HubProcess::~HubProcess()
{
    if (m_process && m_process->state() != QProcess::NotRunning) {
        signalProcess(*m_process, SIGKILL);
        m_process->waitForFinished(kLongWaitMs);
    }
}

void HubProcess::fail(const QString &message)
{
    m_lastError = message;
}

bool HubProcess::isRunning() const
{
    return m_process && m_process->state() != QProcess::NotRunning;
}

bool HubProcess::initialise()
{
    if (!m_root.isValid()) {
        fail(QStringLiteral("cannot create a temporary folder: %1").arg(m_root.errorString()));
        return false;
    }
    const CliResult result = cli(
        { QStringLiteral("hub"), QStringLiteral("tls-init"), QStringLiteral("--data"), m_dataDir });
    if (result.exitCode != 0) {
        fail(result.describe());
        return false;
    }
    static const QRegularExpression pinLine(
        QStringLiteral("^pin: (\\S+)$"), QRegularExpression::MultilineOption);
    m_tlsInitPin = pinLine.match(result.stdoutText()).captured(1);
    if (m_tlsInitPin.isEmpty()) {
        fail(QStringLiteral("tls-init printed no \"pin: …\" line; ") + result.describe());
        return false;
    }
    return true;
}

bool HubProcess::launch()
{
    m_process = makeDaemonProcess();
    const QStringList serve
        = QStringList { QStringLiteral("hub"), QStringLiteral("serve"), QStringLiteral("--data"),
              m_dataDir, QStringLiteral("--listen"), QStringLiteral("127.0.0.1:%1").arg(m_port),
              // Hubs side by side: each its own metrics port (cli.json names it).
              QStringLiteral("--metrics-listen"), QStringLiteral("127.0.0.1:0"),
              // A member of a cluster (--database) takes its peers on a port
              // of its own: any free one, never a fixed one tests would share.
              QStringLiteral("--peer-listen"), QStringLiteral("127.0.0.1:0") }
        + m_serveArguments;
    if (m_openFilesLimit > 0) {
        // prlimit execs the hub, so the PID stays the hub's.
        m_process->setProgram(QStringLiteral("prlimit"));
        m_process->setArguments(
            QStringList { QStringLiteral("--nofile=%1:%1").arg(m_openFilesLimit),
                QStringLiteral("--"), binaryPath(QStringLiteral("cloop")) }
            + serve);
    } else {
        m_process->setProgram(binaryPath(QStringLiteral("cloop")));
        m_process->setArguments(serve);
    }
    QProcessEnvironment environment = childEnvironment(m_homeDir);
    environment.insert(QStringLiteral("CLOOP_HUB_DATA"), m_dataDir);
    m_process->setProcessEnvironment(environment);
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    m_process->setStandardInputFile(QProcess::nullDevice());
    QProcess *process = m_process.get();
    QObject::connect(process, &QProcess::readyReadStandardOutput, process,
        [this, process] { m_log += process->readAllStandardOutput(); });
    QObject::connect(process, &QProcess::finished, process,
        [this, process](int code, QProcess::ExitStatus status) {
            m_log += process->readAllStandardOutput();
            m_log
                += QStringLiteral("=== hub exited: %1 %2 ===\n")
                       .arg(status == QProcess::NormalExit ? QStringLiteral("code")
                                                           : QStringLiteral("crashed, signal/code"))
                       .arg(code)
                       .toUtf8();
        });
    ++m_starts;
    m_log += QStringLiteral("=== start %1: cloop %2 ===\n")
                 .arg(m_starts)
                 .arg(m_process->arguments().join(QLatin1Char(' ')))
                 .toUtf8();
    m_logMarkOfThisStart = m_log.size();
    m_process->start();
    if (!m_process->waitForStarted(kLongWaitMs)) {
        fail(QStringLiteral("cannot start cloop hub serve: %1").arg(m_process->errorString()));
        return false;
    }
    return true;
}

QJsonObject HubProcess::localAccess() const
{
    QFile file(m_dataDir + QLatin1String("/cli.json"));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

quint16 HubProcess::portFromLocalAccess() const
{
    const QUrl url(localAccess().value(QLatin1String("url")).toString());
    const int port = url.port(0);
    return port > 0 && port <= 65535 ? static_cast<quint16>(port) : 0;
}

QUrl HubProcess::apiUrl(const QString &path) const
{
    QUrl url;
    url.setScheme(QStringLiteral("https"));
    url.setHost(QStringLiteral("127.0.0.1"));
    url.setPort(m_port);
    url.setPath(path);
    return url;
}

bool HubProcess::answersHealth(quint16 port) const
{
    QUrl url;
    url.setScheme(QStringLiteral("https"));
    url.setHost(QStringLiteral("127.0.0.1"));
    url.setPort(port);
    url.setPath(QStringLiteral("/api/health"));
    const HttpResult answer = pinnedGet(url, pin(), {}, kHealthProbeMs);
    return answer.status == 200
        && answer.json().value(QLatin1String("status")).toString() == QLatin1String("ok");
}

qint64 HubProcess::pid() const
{
    return m_process ? m_process->processId() : 0;
}

bool HubProcess::start()
{
    if (isRunning()) {
        fail(QStringLiteral("the hub is already running"));
        return false;
    }
    if (m_tlsInitPin.isEmpty() && !initialise())
        return false;
    const bool restart = m_port != 0;
    const QDeadlineTimer deadline(kLongWaitMs);
    for (;;) {
        if (!launch())
            return false;
        quint16 port = 0;
        waitUntil(
            [&] {
                if (!isRunning())
                    return true;
                port = portFromLocalAccess();
                if (port == 0 || (restart && port != m_port))
                    return false;
                return answersHealth(port);
            },
            static_cast<int>(std::max<qint64>(0, deadline.remainingTime())));
        if (isRunning() && port != 0 && (!restart || port == m_port) && answersHealth(port)) {
            m_port = port;
            return true;
        }
        if (isRunning()) {
            fail(
                QStringLiteral("the hub did not answer /api/health within %1 ms").arg(kLongWaitMs));
            kill();
            return false;
        }
        // The old port can be held for a moment by somebody else (a client
        // socket that happened to get it); keep trying until the deadline.
        const QByteArray thisStart = m_log.mid(m_logMarkOfThisStart);
        if (restart && thisStart.contains("cannot listen") && !deadline.hasExpired()) {
            waitUntil([] { return false; }, 200);
            continue;
        }
        fail(QStringLiteral("the hub exited while starting:\n") + QString::fromUtf8(thisStart));
        return false;
    }
}

bool HubProcess::relaunch()
{
    if (isRunning() || m_port == 0)
        return false;
    return launch();
}

void HubProcess::kill()
{
    if (!isRunning())
        return;
    signalProcess(*m_process, SIGKILL);
    m_process->waitForFinished(kLongWaitMs);
}

int HubProcess::stop()
{
    if (!isRunning())
        return m_process && m_process->exitStatus() == QProcess::NormalExit ? m_process->exitCode()
                                                                            : -1;
    signalProcess(*m_process, SIGTERM);
    if (!m_process->waitForFinished(kLongWaitMs)) {
        fail(QStringLiteral("the hub did not stop within %1 ms of SIGTERM").arg(kLongWaitMs));
        kill();
        return -1;
    }
    return m_process->exitStatus() == QProcess::NormalExit ? m_process->exitCode() : -1;
}

CliResult HubProcess::cli(const QStringList &arguments, int timeoutMs)
{
    return runCli(arguments, {}, timeoutMs);
}

CliResult HubProcess::cliAs(const QString &token, const QStringList &arguments)
{
    return runCli(arguments, token, kLongWaitMs);
}

QProcessEnvironment HubProcess::cliEnvironment() const
{
    QProcessEnvironment environment = childEnvironment(m_homeDir);
    environment.insert(QStringLiteral("CLOOP_HUB_DATA"), m_dataDir);
    return environment;
}

CliResult HubProcess::runCli(const QStringList &arguments, const QString &token, int timeoutMs)
{
    QProcessEnvironment environment = cliEnvironment();
    if (!token.isEmpty())
        environment.insert(QStringLiteral("CLOOP_TOKEN"), token);
    CliResult result
        = runProgram(binaryPath(QStringLiteral("cloop")), arguments, environment, timeoutMs);
    m_transcript.append(result.describe());
    while (m_transcript.size() > kTranscriptEntries)
        m_transcript.removeFirst();
    return result;
}

QString HubProcess::tokenOfNewUser(const QString &user, const QString &project, const QString &role)
{
    if (cli({ QStringLiteral("user"), QStringLiteral("add"), user }).exitCode != 0
        || cli({ QStringLiteral("project"), QStringLiteral("grant"), project,
                   QStringLiteral("--user"), user, QStringLiteral("--role"), role })
                .exitCode
            != 0)
        return {};
    return newToken(user);
}

QString HubProcess::tokenOfNewUser(const QString &user)
{
    if (cli({ QStringLiteral("user"), QStringLiteral("add"), user }).exitCode != 0)
        return {};
    return newToken(user);
}

QString HubProcess::newToken(const QString &user)
{
    return cliJson({ QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--user"),
                       user, QStringLiteral("--json") })
        .toObject()
        .value(QLatin1String("token"))
        .toString();
}

QJsonArray HubProcess::cliItems(const QStringList &arguments)
{
    const QJsonValue listed = cliJson(arguments);
    const QJsonValue items = listed.toObject().value(QLatin1String("items"));
    if (!listed.isUndefined() && !items.isArray())
        fail(QStringLiteral("no \"items\" array in the answer of cloop %1")
                 .arg(arguments.join(QLatin1Char(' '))));
    return items.toArray();
}

QJsonValue HubProcess::cliJson(const QStringList &arguments)
{
    const CliResult result = cli(arguments);
    if (result.exitCode != 0) {
        fail(result.describe());
        return QJsonValue(QJsonValue::Undefined);
    }
    QJsonParseError error {};
    const QJsonDocument document = QJsonDocument::fromJson(result.out, &error);
    if (error.error != QJsonParseError::NoError) {
        fail(QStringLiteral("not JSON (%1): ").arg(error.errorString()) + result.describe());
        return QJsonValue(QJsonValue::Undefined);
    }
    if (document.isArray())
        return document.array();
    return document.object();
}

qint64 HubProcess::bind(
    qint64 forwarderId, const QString &project, const QString &ttl, const QStringList &extra)
{
    const QJsonValue binding
        = cliJson(QStringList { QStringLiteral("forward"), QStringLiteral("bind"),
                      QString::number(forwarderId), QStringLiteral("--project"), project,
                      QStringLiteral("--ttl"), ttl }
            + extra + QStringList { QStringLiteral("--json") });
    return binding.toObject().value(QLatin1String("id")).toInteger();
}

Enrollment HubProcess::enroll(
    const QString &name, const QStringList &device, const QStringList &extra)
{
    Enrollment enrollment;
    enrollment.name = name;
    const QJsonValue answer = cliJson(QStringList { QStringLiteral("forward"),
                                          QStringLiteral("enroll"), QStringLiteral("--name"), name }
        + device + extra + QStringList { QStringLiteral("--json") });
    if (!answer.isObject()) {
        enrollment.error = m_lastError;
        return enrollment;
    }
    enrollment.answer = answer.toObject();
    enrollment.bundle = enrollment.answer.value(QLatin1String("bundle")).toString();
    enrollment.command = enrollment.answer.value(QLatin1String("command")).toString();
    enrollment.id = enrollment.answer.value(QLatin1String("forwarder"))
                        .toObject()
                        .value(QLatin1String("id"))
                        .toInteger();
    enrollment.ok = enrollment.id > 0 && !enrollment.bundle.isEmpty();
    if (!enrollment.ok)
        enrollment.error = QStringLiteral("enroll answered without id or bundle: %1")
                               .arg(QString::fromUtf8(QJsonDocument(enrollment.answer).toJson()));
    return enrollment;
}

QJsonObject HubProcess::forwarder(qint64 id)
{
    const QJsonArray list = cliItems({ QStringLiteral("forward"), QStringLiteral("list"),
        QStringLiteral("--json"), QStringLiteral("--all") });
    for (const QJsonValue &entry : list) {
        if (entry.toObject().value(QLatin1String("id")).toInteger() == id)
            return entry.toObject();
    }
    return {};
}

QJsonObject HubProcess::trafficOf(qint64 forwarderId)
{
    const HttpResult answer
        = pinnedGet(apiUrl(QStringLiteral("/api/forwarders/traffic")), pin(), adminToken());
    for (const QJsonValue &item : answer.json().value(QLatin1String("items")).toArray()) {
        if (item.toObject().value(QLatin1String("forwarder_id")).toInteger() == forwarderId)
            return item.toObject();
    }
    return {};
}

qint64 HubProcess::trafficTotal(qint64 forwarderId, QLatin1StringView series)
{
    const QJsonObject traffic = trafficOf(forwarderId);
    if (traffic.isEmpty())
        return 0;
    if (!traffic.contains(series))
        return -1;
    qint64 total = 0;
    for (const QJsonValue &step : traffic.value(series).toArray())
        total += step.toInteger();
    return total;
}

bool HubProcess::forwarderConnected(qint64 id)
{
    return forwarder(id).value(QLatin1String("connected")).toBool();
}

} // namespace cloop::testing
