#include "support/testrig.h"

#include <QDebug>
#include <QDir>

namespace cloop::testing {

TestRig::TestRig()
    : m_scratch(QDir::tempPath() + QLatin1String("/cloop-integ-XXXXXX"))
    , m_hub(std::make_unique<HubProcess>())
{ }

TestRig::~TestRig()
{
    // Forwarders first, so none of them is still reconnecting while the hub goes.
    m_forwarders.clear();
    m_hub.reset();
}

bool TestRig::startHub()
{
    if (!m_scratch.isValid()) {
        m_lastError
            = QStringLiteral("cannot create a scratch folder: %1").arg(m_scratch.errorString());
        return false;
    }
    if (!m_hub->initialise() || !m_hub->start()) {
        m_lastError = m_hub->lastError();
        return false;
    }
    return true;
}

QString TestRig::newHome()
{
    const QString home = m_scratch.filePath(QStringLiteral("home%1").arg(++m_homes));
    QDir().mkpath(home);
    return home;
}

QString TestRig::path(const QString &name) const
{
    return m_scratch.filePath(name);
}

ForwarderProcess &TestRig::addForwarder(
    const QStringList &arguments, const QString &home, ForwarderProcess::Program program)
{
    m_forwarders.push_back(
        std::make_unique<ForwarderProcess>(arguments, home.isEmpty() ? newHome() : home, program));
    return *m_forwarders.back();
}

bool TestRig::startAndAwaitConnection(ForwarderProcess &forwarder, qint64 id)
{
    if (!forwarder.start()) {
        m_lastError = QStringLiteral("cannot start ") + forwarder.describe();
        return false;
    }
    // Both sides: the hub lists the session, and the daemon has taken the
    // welcome (so a credential it was enrolled with is saved by now).
    const bool connected = waitUntil([&] {
        return !forwarder.isRunning() || m_hub->forwarderConnected(id);
    }) && forwarder.waitForStderr(QStringLiteral("connected to the hub as forwarder"));
    if (!connected || !forwarder.isRunning()) {
        m_lastError = QStringLiteral("forwarder %1 did not connect within %2 ms:\n%3")
                          .arg(id)
                          .arg(kLongWaitMs)
                          .arg(forwarder.describe());
        return false;
    }
    return true;
}

bool TestRig::enrollAndConnect(const QString &name, ConnectedForwarder &out)
{
    out.enrollment = m_hub->enroll(name);
    if (!out.enrollment.ok) {
        m_lastError = out.enrollment.error;
        return false;
    }
    out.credentialFile = path(name + QLatin1String("-credential.json"));
    out.process = &addForwarder({ QStringLiteral("--bundle"), out.enrollment.bundle,
        QStringLiteral("--credential-file"), out.credentialFile });
    return startAndAwaitConnection(*out.process, out.enrollment.id);
}

CliResult TestRig::runForwarder(const QStringList &arguments, const QString &home)
{
    return runProgram(
        binaryPath(QStringLiteral("cloop-forward")), arguments, childEnvironment(home));
}

QStringList TestRig::crossThreadComplaints() const
{
    QStringList lines = testing::crossThreadComplaints(m_hub->log());
    for (const auto &forwarder : m_forwarders)
        lines += testing::crossThreadComplaints(forwarder->stderrText());
    return lines;
}

void TestRig::printDiagnostics() const
{
    qInfo().noquote() << "===== hub log (" << m_hub->dataDir() << ") =====\n" << m_hub->log();
    qInfo().noquote() << "===== CLI transcript =====\n" << m_hub->transcript();
    for (const auto &forwarder : m_forwarders)
        qInfo().noquote() << "===== forwarder =====\n" << forwarder->describe();
}

} // namespace cloop::testing
