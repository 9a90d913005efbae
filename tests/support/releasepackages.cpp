#include "support/releasepackages.h"

#include <QDir>
#include <QFile>
#include <QProcess>

namespace cloop::testing {

using namespace Qt::StringLiterals;

QString makeDebianPackage(
    const QString &folder, const QString &name, const QString &version, const QByteArray &payload)
{
    const QString tree = folder + u"/tree-"_s + name + version;
    QDir().mkpath(tree + u"/DEBIAN"_s);
    QDir().mkpath(tree + u"/usr/share/doc/"_s + name);
    QFile control(tree + u"/DEBIAN/control"_s);
    if (!control.open(QIODevice::WriteOnly))
        return {};
    control.write(u"Package: %1\nVersion: %2\nArchitecture: amd64\nMaintainer: t <t@example.org>\n"
                  "Description: a test package\n"_s.arg(name, version)
                      .toUtf8());
    control.close();
    QFile content(tree + u"/usr/share/doc/"_s + name + u"/payload"_s);
    if (!content.open(QIODevice::WriteOnly))
        return {};
    content.write(payload);
    content.close();
    const QString deb = folder + u'/' + name + u"_"_s + version + u"_amd64.deb"_s;
    QProcess build;
    build.start(u"dpkg-deb"_s, { u"--root-owner-group"_s, u"-b"_s, tree, deb });
    return build.waitForFinished(30000) && build.exitCode() == 0 ? deb : QString();
}

} // namespace cloop::testing
