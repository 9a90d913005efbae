#include "support/packetfilter.h"

#include "support/processutil.h"

#include <QCoreApplication>
#include <QProcessEnvironment>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace cloop::testing {

namespace {

QString run(const QStringList &arguments)
{
    const CliResult result
        = runProgram(u"nft"_s, arguments, QProcessEnvironment::systemEnvironment(), 10'000);
    return result.exitCode == 0 ? QString() : result.describe();
}

} // namespace

PacketFilter PacketFilter::resetNewConnections(quint16 port)
{
    return PacketFilter(u"reset"_s, port,
        { { u"tcp"_s, u"dport"_s, QString::number(port), u"tcp"_s, u"flags"_s, u"&"_s,
            u"(syn|ack)"_s, u"=="_s, u"syn"_s, u"reject"_s, u"with"_s, u"tcp"_s, u"reset"_s } });
}

PacketFilter PacketFilter::dropSilently(quint16 clientPort)
{
    const QString port = QString::number(clientPort);
    // On loopback both directions leave through the output hook.
    return PacketFilter(u"drop"_s, clientPort,
        { { u"tcp"_s, u"sport"_s, port, u"drop"_s }, { u"tcp"_s, u"dport"_s, port, u"drop"_s } });
}

PacketFilter PacketFilter::loseOneIn(quint16 clientPort, int every)
{
    const QString port = QString::number(clientPort);
    const QString period = QString::number(every);
    return PacketFilter(u"lose"_s, clientPort,
        { { u"tcp"_s, u"sport"_s, port, u"numgen"_s, u"inc"_s, u"mod"_s, period, u"0"_s,
              u"counter"_s, u"drop"_s },
            { u"tcp"_s, u"dport"_s, port, u"numgen"_s, u"inc"_s, u"mod"_s, period, u"0"_s,
                u"counter"_s, u"drop"_s } });
}

qint64 PacketFilter::dropped() const
{
    const CliResult listed = runProgram(u"nft"_s, { u"list"_s, u"table"_s, u"inet"_s, m_table },
        QProcessEnvironment::systemEnvironment(), 10'000);
    if (listed.exitCode != 0)
        return -1;
    static const QRegularExpression counter(u"counter packets (\\d+)"_s);
    qint64 total = 0;
    auto matches = counter.globalMatch(listed.stdoutText());
    while (matches.hasNext())
        total += matches.next().captured(1).toLongLong();
    return total;
}

PacketFilter::PacketFilter(const QString &purpose, quint16 port, const QList<QStringList> &rules)
    : m_table(
        u"cloop_test_%1_%2_%3"_s.arg(purpose).arg(QCoreApplication::applicationPid()).arg(port))
{
    m_error = run({ u"add"_s, u"table"_s, u"inet"_s, m_table });
    if (m_error.isEmpty())
        m_error = run({ u"add"_s, u"chain"_s, u"inet"_s, m_table, u"out"_s,
            u"{ type filter hook output priority 0 ; }"_s });
    for (const QStringList &rule : rules) {
        if (m_error.isEmpty())
            m_error = run(QStringList { u"add"_s, u"rule"_s, u"inet"_s, m_table, u"out"_s } + rule);
    }
}

PacketFilter::PacketFilter(PacketFilter &&other) noexcept
    : m_table(std::exchange(other.m_table, QString()))
    , m_error(std::move(other.m_error))
{ }

PacketFilter::~PacketFilter()
{
    if (!m_table.isEmpty())
        run({ u"delete"_s, u"table"_s, u"inet"_s, m_table });
}

} // namespace cloop::testing
