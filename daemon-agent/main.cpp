#include "cloop/buildinfo.h"
#include "common/logging.h"
#include "common/util/eventdispatcher.h"
#include "common/util/relayallocator.h"
#include "daemon-agent/agentcommand.h"

#include <QCoreApplication>

int main(int argc, char *argv[])
{
    cloop::util::keepRelayBuffersResident();
    cloop::util::installScalableEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("cloop-agent"));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(cloop::buildinfo::kVersion));
    cloop::logging::installMessagePattern();
    // This machine's own kernel: nothing else is ever read or written.
    return cloop::agent::runAgentCommand(QCoreApplication::arguments(), cloop::device::SysfsRoot());
}
