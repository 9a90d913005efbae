#include "cloop/buildinfo.h"
#include "common/logging.h"
#include "daemon-forward/forwardcommand.h"

#include <QCoreApplication>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("cloop-forward"));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(cloop::buildinfo::kVersion));
    cloop::logging::installMessagePattern();
    return cloop::forward::runForwarderCommand(QCoreApplication::arguments());
}
