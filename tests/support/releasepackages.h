#pragma once

// Packages as whoever makes releases builds them, for the tests of release
// signatures and upgrades: dpkg-deb over a control of a name and version,
// with a payload file that tells two builds apart.

#include <QByteArray>
#include <QString>

namespace cloop::testing {

// `<folder>/<name>_<version>_amd64.deb`; empty when dpkg-deb failed.
QString makeDebianPackage(
    const QString &folder, const QString &name, const QString &version, const QByteArray &payload);

} // namespace cloop::testing
