#include "common/release/debianpackage.h"

namespace cloop::release {

Result<DebianControl> readDebianControl(const QString &path, util::CommandRunner &runner)
{
    const QString dpkgDeb = runner.findExecutable(QStringLiteral("dpkg-deb"));
    if (dpkgDeb.isEmpty())
        return Error::make(QStringLiteral("bad_package"),
            QStringLiteral("dpkg-deb is not installed: it reads what a package is"));
    const auto output = runner.run(dpkgDeb,
        { QStringLiteral("--showformat=${Package}\\n${Version}\\n"), QStringLiteral("--show"),
            path },
        std::chrono::seconds(30));
    if (!output || output->exitCode != 0)
        return Error::make(QStringLiteral("bad_package"),
            QStringLiteral("%1 is not a Debian package dpkg-deb reads: %2")
                .arg(path,
                    output ? QString::fromUtf8(output->standardError).trimmed()
                           : output.error().message));
    const QStringList lines = QString::fromUtf8(output->standardOutput).split(u'\n');
    DebianControl control { lines.value(0), lines.value(1) };
    const qsizetype revision = control.version.lastIndexOf(u'-');
    if (revision > 0)
        control.version.truncate(revision);
    return control;
}

} // namespace cloop::release
