#include "cloop/buildinfo.h"
#include "common/logging.h"
#include "common/util/eventdispatcher.h"
#include "common/util/relayallocator.h"
#include "hub/serve/hubcommand.h"

#include <QCoreApplication>

int main(int argc, char *argv[])
{
    cloop::util::keepRelayBuffersResident();
    cloop::util::installScalableEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("cloop-hub"));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(cloop::buildinfo::kVersion));
    cloop::logging::installMessagePattern();
    return cloop::hub::runHubCommand(QStringLiteral("cloop-hub"), QCoreApplication::arguments());
}
