#include "support/labnetwork.h"

#include <QProcessEnvironment>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <sched.h>
#include <unistd.h>

namespace cloop::testing {

namespace {
CliResult runIp(const QStringList &arguments)
{
    return runProgram(
        QStringLiteral("ip"), arguments, QProcessEnvironment::systemEnvironment(), 10'000);
}
} // namespace

QString enterPrivateNetwork()
{
    if (::geteuid() != 0)
        return QStringLiteral("needs root: network namespaces, veth pairs and AF_PACKET sockets");
    if (::unshare(CLONE_NEWNET) != 0)
        return QStringLiteral("unshare(CLONE_NEWNET): %1")
            .arg(QString::fromLocal8Bit(std::strerror(errno)));
    const CliResult up = runIp({ QStringLiteral("link"), QStringLiteral("set"),
        QStringLiteral("lo"), QStringLiteral("up") });
    if (up.exitCode != 0)
        return QStringLiteral("cannot bring loopback up: ") + up.describe();
    return {};
}

LabNetwork::LabNetwork(QString localEnd, QString labEnd, QString labAddress)
    : m_localEnd(std::move(localEnd))
    , m_labEnd(std::move(labEnd))
    , m_labAddress(std::move(labAddress))
{
    static std::atomic<int> counter { 0 };
    m_name = QStringLiteral("cloop-lab-%1-%2").arg(::getpid()).arg(++counter);
}

LabNetwork::~LabNetwork()
{
    if (!m_created)
        return;
    // A namespace is torn down in the background after its last user; the
    // pair goes now, so the next lab can reuse its names at once.
    runIp({ QStringLiteral("link"), QStringLiteral("delete"), m_localEnd });
    runIp({ QStringLiteral("netns"), QStringLiteral("delete"), m_name });
}

bool LabNetwork::create()
{
    const QList<QStringList> steps {
        { QStringLiteral("netns"), QStringLiteral("add"), m_name },
        { QStringLiteral("link"), QStringLiteral("add"), m_localEnd, QStringLiteral("type"),
            QStringLiteral("veth"), QStringLiteral("peer"), QStringLiteral("name"), m_labEnd },
        { QStringLiteral("link"), QStringLiteral("set"), m_labEnd, QStringLiteral("netns"),
            m_name },
        { QStringLiteral("link"), QStringLiteral("set"), m_localEnd, QStringLiteral("up") },
        { QStringLiteral("-n"), m_name, QStringLiteral("link"), QStringLiteral("set"),
            QStringLiteral("lo"), QStringLiteral("up") },
        { QStringLiteral("-n"), m_name, QStringLiteral("addr"), QStringLiteral("add"), m_labAddress,
            QStringLiteral("dev"), m_labEnd },
        { QStringLiteral("-n"), m_name, QStringLiteral("link"), QStringLiteral("set"), m_labEnd,
            QStringLiteral("up") },
    };
    for (const QStringList &step : steps) {
        const CliResult ran = runIp(step);
        if (ran.exitCode != 0) {
            m_lastError = ran.describe();
            return false;
        }
        m_created = true;
    }
    return true;
}

QStringList LabNetwork::labCommand(const QStringList &command) const
{
    return QStringList { QStringLiteral("ip"), QStringLiteral("netns"), QStringLiteral("exec"),
        m_name }
    + command;
}

CliResult LabNetwork::inLab(const QStringList &command, int timeoutMs) const
{
    const QStringList full = labCommand(command);
    return runProgram(
        full.first(), full.mid(1), QProcessEnvironment::systemEnvironment(), timeoutMs);
}

} // namespace cloop::testing
