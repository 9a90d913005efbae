#include "cli/cli.h"
#include "cloop/buildinfo.h"
#include "common/logging.h"
#include "common/util/eventdispatcher.h"
#include "common/util/relayallocator.h"

#include <QCoreApplication>

#include <cstdio>
#include <cstdlib>

int main(int argc, char *argv[])
{
    int exitCode = 0;
    cloop::util::keepRelayBuffersResident();
    // `cloop hub serve` is the hub.
    cloop::util::installScalableEventDispatcher();
    {
        QCoreApplication app(argc, argv);
        QCoreApplication::setApplicationName(QStringLiteral("cloop"));
        QCoreApplication::setApplicationVersion(QString::fromLatin1(cloop::buildinfo::kVersion));
        cloop::logging::installMessagePattern();
        // This machine's own kernel, for the daemons it runs.
        exitCode = cloop::cli::run(QCoreApplication::arguments(), cloop::device::SysfsRoot());
    }
    // Everything of ours is gone by now. A QNetworkAccessManager's thread can
    // still be freeing its thread-local data when main returns, and exit()'s
    // library finalizers race it ("double free" in __nptl_deallocate_tsd
    // under _dl_fini, seen in the emulated guest); nothing is left for them
    // to do, so the process ends without them.
    std::fflush(nullptr);
    std::_Exit(exitCode);
}
