#pragma once

#include "common/result.h"
#include "common/util/commandrunner.h"

#include <QString>

namespace cloop::release {

// What a Debian package says it is, as dpkg-deb reads its control file.
struct DebianControl
{
    QString package;
    QString version; // upstream: the Debian revision taken off (0.2.0-1 -> 0.2.0)
};

// Refuses a file dpkg-deb does not read as a package, saying why.
Result<DebianControl> readDebianControl(const QString &path, util::CommandRunner &runner);

} // namespace cloop::release
