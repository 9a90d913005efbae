#include "support/connectionreset.h"

#include "support/processutil.h"

#include <QCoreApplication>
#include <QProcessEnvironment>

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

ConnectionReset::ConnectionReset(quint16 port)
    : m_table(u"cloop_test_reset_%1_%2"_s.arg(QCoreApplication::applicationPid()).arg(port))
{
    m_error = run({ u"add"_s, u"table"_s, u"inet"_s, m_table });
    if (m_error.isEmpty())
        m_error = run({ u"add"_s, u"chain"_s, u"inet"_s, m_table, u"out"_s,
            u"{ type filter hook output priority 0 ; }"_s });
    if (m_error.isEmpty())
        m_error = run({ u"add"_s, u"rule"_s, u"inet"_s, m_table, u"out"_s, u"tcp"_s, u"dport"_s,
            QString::number(port), u"tcp"_s, u"flags"_s, u"&"_s, u"(syn|ack)"_s, u"=="_s, u"syn"_s,
            u"reject"_s, u"with"_s, u"tcp"_s, u"reset"_s });
}

ConnectionReset::~ConnectionReset()
{
    run({ u"delete"_s, u"table"_s, u"inet"_s, m_table });
}

} // namespace cloop::testing
