#include "common/util/atomicfile.h"

#include <QDir>
#include <QFileInfo>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cloop::util {

namespace {

Error ioError(const QString &what, const QString &path, int err)
{
    return Error::make(QStringLiteral("io_error"),
        QStringLiteral("%1 %2: %3").arg(what, path, QString::fromLocal8Bit(std::strerror(err))));
}

// Closes the descriptor and removes the temporary file unless released.
class TemporaryFile
{
public:
    TemporaryFile(int fd, QByteArray path)
        : m_fd(fd)
        , m_path(std::move(path))
    { }
    ~TemporaryFile()
    {
        if (m_fd >= 0)
            ::close(m_fd);
        if (!m_path.isEmpty())
            ::unlink(m_path.constData());
    }
    TemporaryFile(const TemporaryFile &) = delete;
    TemporaryFile &operator=(const TemporaryFile &) = delete;

    int fd() const { return m_fd; }
    int closeFd()
    {
        const int rc = ::close(m_fd);
        m_fd = -1;
        return rc;
    }
    void release() { m_path.clear(); }

private:
    int m_fd;
    QByteArray m_path;
};

Status ensureFolder(const QString &dirPath)
{
    if (!QDir().exists(dirPath)) {
        // Create each missing level 0700: these folders hold secrets.
        QStringList missing;
        for (QString level = QDir::cleanPath(dirPath); !QFileInfo::exists(level);
             level = QFileInfo(level).path()) {
            missing.prepend(level);
            if (level == QFileInfo(level).path())
                break;
        }
        for (const QString &level : std::as_const(missing)) {
            if (::mkdir(QFile::encodeName(level).constData(), 0700) != 0 && errno != EEXIST)
                return ioError(QStringLiteral("cannot create folder"), level, errno);
        }
    }
    return {};
}

} // namespace

Status probeWritableFolder(const QString &folder)
{
    if (Status created = ensureFolder(folder); !created)
        return created;
    QByteArray templ = QFile::encodeName(folder + QLatin1String("/.cloop-probe-XXXXXX"));
    const int fd = ::mkostemp(templ.data(), O_CLOEXEC);
    if (fd < 0)
        return ioError(QStringLiteral("cannot create a file in"), folder, errno);
    ::close(fd);
    ::unlink(templ.constData());
    return {};
}

Status writeFileAtomically(const QString &path, const QByteArray &contents, int mode)
{
    const QFileInfo info(path);
    const QString dirPath = info.absolutePath();
    if (Status created = ensureFolder(dirPath); !created)
        return created;

    QByteArray templ = QFile::encodeName(
        dirPath + QLatin1String("/.") + info.fileName() + QLatin1String(".tmp-XXXXXX"));
    // mkostemp creates the file 0600 from the start: no window in which a
    // secret sits in a world-readable file.
    const int fd = ::mkostemp(templ.data(), O_CLOEXEC);
    if (fd < 0)
        return ioError(QStringLiteral("cannot create a temporary file beside"), path, errno);
    TemporaryFile temp(fd, templ);
    if (::fchmod(fd, static_cast<mode_t>(mode & 0777)) != 0)
        return ioError(
            QStringLiteral("cannot set the mode of"), QString::fromLocal8Bit(templ), errno);

    qsizetype written = 0;
    while (written < contents.size()) {
        const ssize_t n = ::write(
            fd, contents.constData() + written, static_cast<size_t>(contents.size() - written));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return ioError(QStringLiteral("cannot write"), QString::fromLocal8Bit(templ), errno);
        }
        written += n;
    }
    if (::fsync(fd) != 0)
        return ioError(QStringLiteral("cannot flush"), QString::fromLocal8Bit(templ), errno);
    if (temp.closeFd() != 0)
        return ioError(QStringLiteral("cannot close"), QString::fromLocal8Bit(templ), errno);
    if (::rename(templ.constData(), QFile::encodeName(info.absoluteFilePath()).constData()) != 0)
        return ioError(QStringLiteral("cannot replace"), path, errno);
    temp.release();

    const int dirFd
        = ::open(QFile::encodeName(dirPath).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd >= 0) {
        ::fsync(dirFd);
        ::close(dirFd);
    }
    return {};
}

int fileMode(const QString &path)
{
    struct stat st
    {
    };
    if (::stat(QFile::encodeName(path).constData(), &st) != 0)
        return -1;
    return static_cast<int>(st.st_mode & 07777);
}

} // namespace cloop::util
