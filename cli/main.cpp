#include "cli/cli.h"
#include "cloop/buildinfo.h"
#include "common/logging.h"

#include <QCoreApplication>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("cloop"));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(cloop::buildinfo::kVersion));
    cloop::logging::installMessagePattern();
    // This machine's own kernel, for the daemons it runs.
    return cloop::cli::run(QCoreApplication::arguments(), cloop::device::SysfsRoot());
}
