#include "daemon-agent/workroot/workroot.h"

#include "common/util/fd.h"
#include "daemon-agent/agentlogging.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <utility>
#include <vector>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cloop::agent {

namespace {

// A symlink chain longer than this is refused, like the kernel's ELOOP.
constexpr int kMaxSymlinks = 40;

using util::Fd;

struct RunUserIds
{
    uid_t uid = 0;
    gid_t gid = 0;
};

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

Error escapeError(const QString &requested, const QString &root, const QString &detail)
{
    return Error::make(QStringLiteral("workdir_outside_root"),
        QStringLiteral("work directory \"%1\" resolves outside the work root %2: %3")
            .arg(requested, root, detail),
        true);
}

Error invalidError(const QString &requested, const QString &why)
{
    return Error::make(QStringLiteral("workdir_invalid"),
        QStringLiteral("work directory \"%1\" refused: %2").arg(requested, why), true);
}

Error ioError(const QString &what, const QString &path, int error)
{
    return Error::make(QStringLiteral("workroot_io"),
        QStringLiteral("%1 %2: %3").arg(what, path, errnoText(error)));
}

Result<RunUserIds> lookUpRunUser(const QString &name)
{
    const QByteArray encoded = name.toLocal8Bit();
    long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
    std::vector<char> buffer(size > 0 ? std::size_t(size) : 16384);
    passwd entry {};
    passwd *found = nullptr;
    int rc = 0;
    while ((rc = ::getpwnam_r(encoded.constData(), &entry, buffer.data(), buffer.size(), &found))
        == ERANGE) {
        buffer.resize(buffer.size() * 2);
    }
    if (rc != 0) {
        return Error::make(QStringLiteral("run_user_lookup"),
            QStringLiteral("cannot look up the run user \"%1\": %2").arg(name, errnoText(rc)));
    }
    if (!found) {
        // Permanent until an administrator acts: the install script creates
        // the user; the agent only names it.
        return Error::make(QStringLiteral("run_user_missing"),
            QStringLiteral("the run user \"%1\" does not exist on this host; "
                           "workloads of a root agent run as that unprivileged "
                           "user (create it, e.g. useradd --system "
                           "--no-create-home --shell /usr/sbin/nologin %1, or "
                           "configure another run user)")
                .arg(name),
            true);
    }
    if (found->pw_uid == 0) {
        return Error::make(QStringLiteral("run_user_privileged"),
            QStringLiteral("the run user \"%1\" has uid 0; it must be an "
                           "unprivileged user")
                .arg(name),
            true);
    }
    return RunUserIds { found->pw_uid, found->pw_gid };
}

// Whether a name directly in the root is one of the agent's own records or
// the temporary file one is written through (writeFileAtomically's
// "<name>.tmp-XXXXXX").
bool isAgentRecordName(const QByteArray &name)
{
    for (const QLatin1StringView record : { WorkRoot::kRunsFile, WorkRoot::kAttachmentsFile }) {
        const QByteArray bytes(record.data(), record.size());
        if (name == bytes || name.startsWith(bytes + '.'))
            return true;
    }
    return false;
}

// Splits a path into components, dropping empty and "." ones, which name
// the directory they are in and so cannot move the walk anywhere.
void prependComponents(std::deque<QByteArray> &pending, const QByteArray &path)
{
    const QList<QByteArray> parts = path.split('/');
    for (auto it = parts.crbegin(); it != parts.crend(); ++it) {
        if (!it->isEmpty() && *it != ".")
            pending.push_front(*it);
    }
}

// The absolute path with symlinks resolved in the part that exists.
QString resolvedPath(const QString &path)
{
    QString existing = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    QString rest;
    while (!QFileInfo::exists(existing) && existing != QLatin1String("/")) {
        rest = QLatin1Char('/') + QFileInfo(existing).fileName() + rest;
        existing = QFileInfo(existing).absolutePath();
    }
    return QDir::cleanPath(QFileInfo(existing).canonicalFilePath() + rest);
}

} // namespace

QString WorkRoot::defaultPath()
{
    return QDir::homePath() + QStringLiteral("/.cloop/work");
}

QString WorkRoot::defaultRunUser()
{
    return QStringLiteral("cloop-run");
}

WorkRoot::WorkRoot(QString rootPath, QString runUser)
    : m_rootPath(std::move(rootPath))
    , m_runUser(std::move(runUser))
{ }

QString WorkRoot::sandboxTag() const
{
    const QByteArray path
        = QFile::encodeName(QDir::cleanPath(QFileInfo(m_rootPath).absoluteFilePath()));
    return QString::fromLatin1(
        QCryptographicHash::hash(path, QCryptographicHash::Sha256).toHex().left(8));
}

bool WorkRoot::contains(const QString &path) const
{
    const QString root = resolvedPath(m_rootPath);
    const QString candidate = resolvedPath(path);
    return candidate == root
        || candidate.startsWith(root == QLatin1String("/") ? root : root + QLatin1Char('/'));
}

Status WorkRoot::ensureRoot() const
{
    if (m_rootPath.isEmpty() || !QDir::isAbsolutePath(m_rootPath)) {
        return Error::make(QStringLiteral("workroot_invalid"),
            QStringLiteral("the work root must be an absolute path, not \"%1\"").arg(m_rootPath),
            true);
    }
    // mkdir -p, but every folder it creates is 0700 from the start rather
    // than narrowed afterwards.
    const QString clean = QDir::cleanPath(m_rootPath);
    QString prefix;
    const QStringList parts = clean.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    for (const QString &part : parts) {
        prefix += QLatin1Char('/') + part;
        const QByteArray encoded = QFile::encodeName(prefix);
        if (::mkdir(encoded.constData(), 0700) != 0 && errno != EEXIST)
            return ioError(QStringLiteral("cannot create"), prefix, errno);
    }

    const QByteArray encoded = QFile::encodeName(clean);
    struct stat st
    {
    };
    if (::stat(encoded.constData(), &st) != 0)
        return ioError(QStringLiteral("cannot inspect the work root"), clean, errno);
    if (!S_ISDIR(st.st_mode)) {
        return Error::make(QStringLiteral("workroot_invalid"),
            QStringLiteral("the work root %1 is not a directory").arg(clean), true);
    }
    if (st.st_uid != ::geteuid()) {
        return Error::make(QStringLiteral("workroot_invalid"),
            QStringLiteral("the work root %1 belongs to uid %2, not to the agent "
                           "(uid %3)")
                .arg(clean)
                .arg(st.st_uid)
                .arg(::geteuid()),
            true);
    }
    if ((st.st_mode & 07777) != 0700) {
        qCInfo(lcAgent) << "narrowing the work root" << clean << "to mode 0700";
        if (::chmod(encoded.constData(), 0700) != 0)
            return ioError(QStringLiteral("cannot set mode 0700 on"), clean, errno);
    }
    return {};
}

Result<QString> WorkRoot::workloadUser() const
{
    if (::geteuid() != 0)
        return QString();
    Result<RunUserIds> ids = lookUpRunUser(m_runUser);
    if (!ids)
        return ids.error();
    return QStringLiteral("%1:%2").arg(ids->uid).arg(ids->gid);
}

namespace {

// The components of a workdir the hub names, refused for what the name
// alone gets wrong; the filesystem is not touched.
Result<std::deque<QByteArray>> requestedComponents(const QString &relativeFromHub)
{
    if (relativeFromHub.isEmpty())
        return invalidError(relativeFromHub, QStringLiteral("the name is empty"));
    if (relativeFromHub.contains(QChar(u'\0')))
        return invalidError(relativeFromHub, QStringLiteral("the name contains a NUL byte"));
    if (relativeFromHub.startsWith(QLatin1Char('/')))
        return invalidError(relativeFromHub, QStringLiteral("absolute paths are not accepted"));
    std::deque<QByteArray> pending;
    prependComponents(pending, QFile::encodeName(relativeFromHub));
    const auto climbs = [](const QByteArray &component) { return component == ".."; };
    if (std::any_of(pending.cbegin(), pending.cend(), climbs))
        return invalidError(relativeFromHub, QStringLiteral("\"..\" components are not accepted"));
    if (pending.empty())
        return invalidError(relativeFromHub, QStringLiteral("the name has no components"));
    return pending;
}

// The walk from the work root to a workspace. It holds an open directory
// per level and opens each next name relative to it without following
// symlinks, so nothing can be swapped between a check and a use: a symlink
// is read and its target walked the same way, `..` pops a level, and
// popping the root is an escape.
class ConfinedWalk
{
public:
    ConfinedWalk(QString requested, QByteArray rootReal, std::deque<QByteArray> pending)
        : m_requested(std::move(requested))
        , m_rootReal(std::move(rootReal))
        , m_rootShown(QFile::decodeName(m_rootReal))
        , m_pending(std::move(pending))
    { }

    // Walks every component; the innermost level is then the workspace.
    Status walk()
    {
        if (Status opened = openRoot(); !opened)
            return opened;
        while (!m_pending.empty()) {
            const QByteArray name = m_pending.front();
            m_pending.pop_front();
            if (Status stepped = step(name); !stepped)
                return stepped;
        }
        if (m_levels.size() == 1) {
            return escapeError(
                m_requested, m_rootShown, QStringLiteral("it resolves to the work root itself"));
        }
        return {};
    }

    // The workspace, owned by `owner` (when the agent is root) and 0700: a
    // real descriptor (O_PATH cannot chown/chmod) opened through the level
    // already proven to be inside.
    Result<QString> finish(bool asRoot, uid_t uid, gid_t gid) const
    {
        Fd workspace(::openat(m_levels.back().fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        const QString resultPath
            = m_rootShown + QLatin1Char('/') + shownPath(QByteArray()).chopped(1);
        if (!workspace.valid())
            return ioError(QStringLiteral("cannot open"), resultPath, errno);
        if (asRoot && ::fchown(workspace.get(), uid, gid) != 0)
            return ioError(QStringLiteral("cannot hand over to the run user"), resultPath, errno);
        if (::fchmod(workspace.get(), 0700) != 0)
            return ioError(QStringLiteral("cannot set mode 0700 on"), resultPath, errno);
        return resultPath;
    }

private:
    struct Level
    {
        Fd fd;
        QByteArray name;
    };

    Status openRoot()
    {
        m_levels.clear();
        Fd fd(::open(m_rootReal.constData(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!fd.valid())
            return ioError(QStringLiteral("cannot open the work root"), m_rootShown, errno);
        m_levels.push_back(Level { std::move(fd), QByteArray() });
        return {};
    }

    QString shownPath(const QByteArray &last) const
    {
        QByteArray path;
        for (std::size_t i = 1; i < m_levels.size(); ++i)
            path += m_levels[i].name + '/';
        return QFile::decodeName(path + last);
    }

    Status step(const QByteArray &name)
    {
        if (name == "..") {
            // Only a symlink's target can bring ".." here.
            if (m_levels.size() == 1) {
                return escapeError(m_requested, m_rootShown,
                    QStringLiteral("a symlink's \"..\" climbs above the root"));
            }
            m_levels.pop_back();
            return {};
        }
        if (name.size() > NAME_MAX) {
            return invalidError(
                m_requested, QStringLiteral("a component is longer than %1 bytes").arg(NAME_MAX));
        }
        // Checked at every step at the root, so a symlink a workload planted
        // cannot lead there either.
        if (m_levels.size() == 1 && isAgentRecordName(name)) {
            return invalidError(m_requested,
                QStringLiteral("%1 in the work root is where the agent keeps its "
                               "own records")
                    .arg(QFile::decodeName(name)));
        }
        const int parent = m_levels.back().fd.get();
        Fd fd(::openat(parent, name.constData(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (!fd.valid() && errno == ENOENT) {
            if (::mkdirat(parent, name.constData(), 0700) != 0 && errno != EEXIST)
                return ioError(QStringLiteral("cannot create"), shownPath(name), errno);
            fd = Fd(::openat(parent, name.constData(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        }
        if (!fd.valid())
            return ioError(QStringLiteral("cannot open"), shownPath(name), errno);
        struct stat st
        {
        };
        if (::fstat(fd.get(), &st) != 0)
            return ioError(QStringLiteral("cannot inspect"), shownPath(name), errno);
        if (S_ISLNK(st.st_mode))
            return followSymlink(fd, name);
        if (!S_ISDIR(st.st_mode)) {
            return invalidError(m_requested,
                QStringLiteral("%1 exists and is not a directory").arg(shownPath(name)));
        }
        m_levels.push_back(Level { std::move(fd), name });
        return {};
    }

    Status followSymlink(const Fd &link, const QByteArray &name)
    {
        if (++m_symlinksFollowed > kMaxSymlinks) {
            return invalidError(
                m_requested, QStringLiteral("more than %1 symlinks").arg(kMaxSymlinks));
        }
        char target[PATH_MAX];
        // An O_PATH descriptor of the link itself, read with an empty name:
        // the link that was checked is the link that is read.
        const ssize_t length = ::readlinkat(link.get(), "", target, sizeof target);
        if (length < 0)
            return ioError(QStringLiteral("cannot read the symlink"), shownPath(name), errno);
        const QByteArray targetPath(target, int(length));
        const QString linkShown = shownPath(name);
        if (targetPath.startsWith('/')) {
            // An absolute target is a host path: acceptable only when it
            // names something beneath the root; the walk restarts there.
            if (targetPath != m_rootReal && !targetPath.startsWith(m_rootReal + '/')) {
                return escapeError(m_requested, m_rootShown,
                    QStringLiteral("the symlink %1 points to %2")
                        .arg(linkShown, QFile::decodeName(targetPath)));
            }
            if (Status reopened = openRoot(); !reopened)
                return reopened;
            prependComponents(m_pending, targetPath.mid(m_rootReal.size()));
        } else {
            prependComponents(m_pending, targetPath);
        }
        qCDebug(lcAgent) << "workdir" << m_requested << "follows symlink" << linkShown << "->"
                         << QFile::decodeName(targetPath);
        return {};
    }

    QString m_requested;
    QByteArray m_rootReal;
    QString m_rootShown;
    std::deque<QByteArray> m_pending;
    std::vector<Level> m_levels;
    int m_symlinksFollowed = 0;
};

} // namespace

Result<QString> WorkRoot::runDirectory(const QString &relativeFromHub) const
{
    auto pending = requestedComponents(relativeFromHub);
    if (!pending)
        return pending.error();

    // Look the run user up before touching the disk, so a missing user
    // leaves no half-made workspace behind.
    const bool asRoot = ::geteuid() == 0;
    RunUserIds owner { ::geteuid(), ::getegid() };
    if (asRoot) {
        Result<RunUserIds> ids = lookUpRunUser(m_runUser);
        if (!ids)
            return ids.error();
        owner = *ids;
    }

    if (Status made = ensureRoot(); !made)
        return made.error();
    char resolvedRoot[PATH_MAX];
    if (!::realpath(QFile::encodeName(m_rootPath).constData(), resolvedRoot))
        return ioError(QStringLiteral("cannot resolve the work root"), m_rootPath, errno);

    ConfinedWalk walk(relativeFromHub, QByteArray(resolvedRoot), std::move(*pending));
    if (Status walked = walk.walk(); !walked)
        return walked.error();
    auto workspace = walk.finish(asRoot, owner.uid, owner.gid);
    if (!workspace)
        return workspace.error();
    qCDebug(lcAgent) << "workdir" << relativeFromHub << "is" << *workspace;
    return *workspace;
}

} // namespace cloop::agent
