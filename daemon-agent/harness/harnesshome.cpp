#include "daemon-agent/harness/harnesshome.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace cloop::agent {

using namespace Qt::StringLiterals;

QString HarnessInstalls::defaultHome()
{
    return ::geteuid() == 0 ? u"/var/lib/cloop-agent/harnesses"_s : QDir::homePath();
}

namespace {
Error homeError(const QString &home, const QString &what)
{
    return Error::make(
        u"harness_home_unusable"_s, u"the harness home %1 cannot be used: %2"_s.arg(home, what));
}
} // namespace

Status ensureHarnessHome(const QString &home, const QString &owner)
{
    if (!home.startsWith(u'/'))
        return homeError(home, u"it is not an absolute path"_s);
    const QString parent = QFileInfo(home).absolutePath();
    if (!QDir().mkpath(parent))
        return homeError(home, u"its parent folder cannot be made"_s);
    const QByteArray encoded = QFile::encodeName(home);
    if (::mkdir(encoded.constData(), 0755) != 0 && errno != EEXIST)
        return homeError(home, QString::fromLocal8Bit(std::strerror(errno)));
    struct stat st
    {
    };
    if (::lstat(encoded.constData(), &st) != 0 || !S_ISDIR(st.st_mode))
        return homeError(home, u"it is not a folder"_s);
    if (owner.isEmpty())
        return st.st_uid == ::geteuid() ? Status() : homeError(home, u"another user owns it"_s);
    const QStringList ids = owner.split(u':');
    const auto uid = static_cast<uid_t>(ids.value(0).toUInt());
    const auto gid = static_cast<gid_t>(ids.value(1).toUInt());
    // Made by this root agent a moment ago, or the workload user's already.
    if (st.st_uid != uid && st.st_uid != 0)
        return homeError(home, u"uid %1 owns it, not the workload user"_s.arg(st.st_uid));
    if ((st.st_uid != uid || st.st_gid != gid) && ::lchown(encoded.constData(), uid, gid) != 0)
        return homeError(home, QString::fromLocal8Bit(std::strerror(errno)));
    if ((st.st_mode & 07777) != 0755 && ::chmod(encoded.constData(), 0755) != 0)
        return homeError(home, QString::fromLocal8Bit(std::strerror(errno)));
    return {};
}

} // namespace cloop::agent
